"""FileIO: the storage seam, over pyarrow.fs (local paths now; s3://, gs://, hdfs:// through the same class).

Mirrors org.apache.paimon.fs.FileIO. The one operation commits rely on is `try_create(path, data)`:
create-if-absent, never overwrite. On local disks it is a hard link of a fully written temp file
(link(2) fails atomically with EEXIST across processes); on other stores see `try_create`.
"""

from __future__ import annotations

import contextlib
import errno
import os
import uuid
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.fs as pafs

from table_format.errors import TableFormatError


@dataclass(frozen=True, slots=True)
class FileStatus:
    path: str
    size: int
    mtime_ns: int | None
    is_dir: bool

    @property
    def name(self) -> str:
        return self.path.rstrip("/").rsplit("/", 1)[-1]


class FileIO:
    """Byte-level file access for one filesystem; picklable (executors rebuild it from the URI)."""

    def __init__(self, fs: pafs.FileSystem, *, local: bool) -> None:
        self.fs = fs
        self.local = local

    @staticmethod
    def for_uri(uri: str) -> tuple[FileIO, str]:
        """(FileIO, path inside that filesystem) for a local path or a URI pyarrow.fs understands."""
        if "://" not in uri:
            return FileIO(pafs.LocalFileSystem(), local=True), os.path.abspath(uri)
        try:
            fs, path = pafs.FileSystem.from_uri(uri)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, OSError) as e:
            raise TableFormatError(f"cannot open warehouse {uri!r}: {e}") from None
        return FileIO(fs, local=isinstance(fs, pafs.LocalFileSystem)), path

    # ---- reads ---------------------------------------------------------------------------
    def read_bytes(self, path: str) -> bytes:
        with self.fs.open_input_stream(path) as f:
            return bytes(f.read())

    def exists(self, path: str) -> bool:
        return self.fs.get_file_info(path).type != pafs.FileType.NotFound

    def is_dir(self, path: str) -> bool:
        return self.fs.get_file_info(path).type == pafs.FileType.Directory

    def status(self, path: str) -> FileStatus | None:
        info = self.fs.get_file_info(path)
        if info.type == pafs.FileType.NotFound:
            return None
        return FileStatus(info.path, info.size or 0, info.mtime_ns, info.type == pafs.FileType.Directory)

    def list_dir(self, path: str) -> list[FileStatus]:
        """Direct children of a directory; empty when it does not exist."""
        try:
            infos = self.fs.get_file_info(pafs.FileSelector(path, allow_not_found=True))
        except (FileNotFoundError, NotADirectoryError):
            return []
        return [FileStatus(i.path, i.size or 0, i.mtime_ns, i.type == pafs.FileType.Directory) for i in infos]

    def list_recursive(self, path: str) -> list[FileStatus]:
        try:
            infos = self.fs.get_file_info(pafs.FileSelector(path, recursive=True, allow_not_found=True))
        except (FileNotFoundError, NotADirectoryError):
            return []
        return [FileStatus(i.path, i.size or 0, i.mtime_ns, i.type == pafs.FileType.Directory) for i in infos]

    def open_input_file(self, path: str) -> pa.NativeFile:
        return self.fs.open_input_file(path)

    # ---- writes --------------------------------------------------------------------------
    def mkdirs(self, path: str) -> None:
        self.fs.create_dir(path, recursive=True)

    def write_bytes(self, path: str, data: bytes) -> None:
        """Write a new file (data, manifest) whose name is unique; overwrites if it exists."""
        parent = path.rsplit("/", 1)[0]
        if self.local:
            os.makedirs(parent, exist_ok=True)
        with self.fs.open_output_stream(path) as f:
            f.write(data)

    def open_output_stream(self, path: str) -> pa.NativeFile:
        parent = path.rsplit("/", 1)[0]
        if self.local:
            os.makedirs(parent, exist_ok=True)
        return self.fs.open_output_stream(path)

    def overwrite_hint(self, path: str, data: bytes) -> None:
        """Replace a small hint file (LATEST/EARLIEST) atomically via temp + rename."""
        tmp = self._temp_path(path)
        self.write_bytes(tmp, data)
        try:
            self.fs.move(tmp, path)
        except OSError:
            self.delete_quietly(tmp)
            raise

    def try_create(self, path: str, data: bytes) -> bool:
        """Create `path` with `data` only if it does not exist; True if we created it.

        Local disk: the content is written and fsynced to a temp file, then hard-linked to the
        target (atomic, fails if the target exists, safe across processes). Other stores: an
        existence check followed by a write (safe only with a single committer per table or a
        commit lock; see docs/commit-protocol.md).
        """
        if self.local:
            parent = os.path.dirname(path)
            os.makedirs(parent, exist_ok=True)
            tmp = self._temp_path(path)
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            try:
                with os.fdopen(fd, "wb") as f:
                    f.write(data)
                    f.flush()
                    os.fsync(f.fileno())
                try:
                    os.link(tmp, path)
                except OSError as e:
                    if e.errno == errno.EEXIST:
                        return False
                    raise
                return True
            finally:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(tmp)
        if self.exists(path):
            return False
        self.write_bytes(path, data)
        return True

    def delete(self, path: str) -> None:
        self.fs.delete_file(path)

    def delete_quietly(self, path: str) -> bool:
        try:
            self.fs.delete_file(path)
            return True
        except (FileNotFoundError, OSError):
            return False

    def delete_dir(self, path: str) -> None:
        self.fs.delete_dir(path)

    @staticmethod
    def _temp_path(path: str) -> str:
        parent, name = path.rsplit("/", 1)
        return f"{parent}/.{name}.{uuid.uuid4()}.tmp"
