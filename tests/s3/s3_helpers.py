"""Helpers of the S3 suites: copy an s3:// table to a local directory (for Java Paimon and the disk-based checks)."""

from __future__ import annotations

import os

from table_format import Table
from table_format.io.file_io import FileIO


def download(table: Table, dest: str) -> str:
    """Copy every object of `table` to `dest/<db>.db/<table>` (a local warehouse `dest`); returns the table dir."""
    file_io = table.store.file_io
    root = table.path.rstrip("/")
    db_dir, name = root.rsplit("/", 2)[-2:]
    target = os.path.join(dest, db_dir, name)
    for st in file_io.list_recursive(root):
        local = os.path.join(target, st.path[len(root) + 1:])
        if st.is_dir:
            os.makedirs(local, exist_ok=True)
            continue
        os.makedirs(os.path.dirname(local), exist_ok=True)
        with open(local, "wb") as f:
            f.write(file_io.read_bytes(st.path))
    return target


def upload(local_dir: str, file_io: FileIO, target: str) -> None:
    """Copy a local directory tree (a table written by Java) to `target` (a path of `file_io`)."""
    for dirpath, _, names in os.walk(local_dir):
        for name in names:
            path = os.path.join(dirpath, name)
            with open(path, "rb") as f:
                file_io.write_bytes(f"{target}/{os.path.relpath(path, local_dir)}", f.read())
