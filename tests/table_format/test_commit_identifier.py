"""Streaming commits: the commit identifier recorded in the snapshot and read back per commit user (Java's
filterCommitted), as jobs.spark's exactly-once sinks use them."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa

from table_format import FileSystemCatalog, commit_write, last_commit_identifier, write_table
from table_format.meta.snapshot import BATCH_COMMIT_IDENTIFIER

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string())])


def test_commit_identifier_is_recorded_and_read_back_per_user(warehouse: str) -> None:
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db")
    table = catalog.create_table("db.t", SCHEMA)
    assert last_commit_identifier(table, "stream-a") is None
    for batch_id, user in ((0, "stream-a"), (1, "stream-a"), (7, "stream-b")):
        writer = table.new_write()
        writer.write(pa.table({"id": [batch_id], "v": [user]}, schema=SCHEMA))
        commit_write(table, writer.prepare_commit(), commit_user=user,
                     commit_identifier=batch_id)
    write_table(table, pa.table({"id": [9], "v": ["batch"]}, schema=SCHEMA))  # another writer commits after
    assert last_commit_identifier(table, "stream-a") == 1
    assert last_commit_identifier(table, "stream-b") == 7
    latest = table.latest_snapshot()
    assert latest is not None and latest.commit_identifier == BATCH_COMMIT_IDENTIFIER  # batch writes: Long.MAX_VALUE
    on_disk = json.loads(Path(table.path, "snapshot", "snapshot-2").read_text())
    assert (on_disk["commitUser"], on_disk["commitIdentifier"]) == ("stream-a", 1)
