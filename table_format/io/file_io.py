"""FileIO: the storage seam, over pyarrow.fs (local paths; gs://, hdfs:// with a commit lock). s3:// has its own
subclass, S3FileIO (conditional PUT, batch deletes, request counts); `table_format.io.factory` picks one per URI.

Mirrors org.apache.paimon.fs.FileIO. The one operation commits rely on is `try_create(path, data)`:
create-if-absent, never overwrite. On local disks it is a hard link of a fully written temp file
(link(2) fails atomically with EEXIST across processes); on other stores see `try_create`.
"""

from __future__ import annotations

import contextlib
import errno
import os
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TypeVar

import pyarrow as pa
import pyarrow.fs as pafs

from table_format.errors import CommitFailedError, TableFormatError
from table_format.io.lock import CommitLock
from table_format.io.requests import RequestCounter

T = TypeVar("T")
R = TypeVar("R")


@dataclass(frozen=True, slots=True)
class FileStatus:
    path: str
    size: int
    mtime_ns: int | None
    is_dir: bool

    @property
    def name(self) -> str:
        return self.path.rstrip("/").rsplit("/", 1)[-1]


@dataclass(frozen=True, slots=True)
class PendingUpload:
    """A multipart upload started and neither completed nor aborted (object stores): the path it would create."""

    path: str
    upload_id: str
    initiated_ns: int  # when the upload was started (epoch nanoseconds)


class FileIO:
    """Byte-level file access for one filesystem; picklable (executors rebuild it from the URI)."""

    def __init__(self, fs: pafs.FileSystem, *, local: bool, commit_lock: CommitLock | None = None) -> None:
        self.fs = fs
        self.local = local
        self.commit_lock = commit_lock
        self.requests = RequestCounter()  # stores that count their requests add to it (S3FileIO)

    @property
    def atomic_create(self) -> bool:
        """True when try_create is create-if-absent by itself (local disk: link(2)); else it needs a lock."""
        return self.local

    @staticmethod
    def for_uri(uri: str, *, commit_lock: CommitLock | None = None) -> tuple[FileIO, str]:
        """(FileIO, path inside that filesystem) for a local path or a URI pyarrow.fs understands."""
        if "://" not in uri:
            return FileIO(pafs.LocalFileSystem(), local=True, commit_lock=commit_lock), os.path.abspath(uri)
        try:
            fs, path = pafs.FileSystem.from_uri(uri)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, OSError) as e:
            raise TableFormatError(f"cannot open warehouse {uri!r}: {e}") from None
        return FileIO(fs, local=isinstance(fs, pafs.LocalFileSystem), commit_lock=commit_lock), path

    @staticmethod
    def path_of(uri: str) -> str:
        """The path inside its filesystem of a local path or URI (what for_uri returns beside the FileIO)."""
        if "://" not in uri:
            return os.path.abspath(uri)
        return FileIO.for_uri(uri)[1]

    def parallel_map(self, fn: Callable[[T], R], items: Iterable[T]) -> list[R]:
        """`[fn(x) for x in items]`, in order; object stores run the calls concurrently (latency-bound reads)."""
        return [fn(x) for x in items]

    def uri(self, path: str) -> str:
        """The URI of a path of this FileIO (what open_table accepts)."""
        return path if self.local else f"{self.fs.type_name}://{path}"

    def catalog_options(self) -> dict[str, str]:
        """The catalog options that reopen this store in another process (`open_table(uri, options=...)`)."""
        return {}

    # ---- reads ---------------------------------------------------------------------------
    def read_bytes(self, path: str) -> bytes:
        with self.fs.open_input_stream(path) as f:
            return bytes(f.read())

    def exists(self, path: str) -> bool:
        return self.fs.get_file_info(path).type != pafs.FileType.NotFound

    def file_exists(self, path: str) -> bool:
        """Whether the file `path` exists; object stores answer it with one HEAD (`exists` also checks for a
        directory prefix there)."""
        return self.exists(path)

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
        target (atomic, fails if the target exists, safe across processes). Other pyarrow.fs stores:
        an existence check followed by a write under the commit lock, refused without one (S3 has
        its own FileIO with conditional PUT: S3FileIO). With a `commit_lock` the whole operation runs under the lock of the table
        (the directory two levels up: `<table>/snapshot/snapshot-N`, `<table>/schema/schema-N`,
        `<table>/tag/tag-X`); see docs/commit-protocol.md.
        """
        if self.commit_lock is not None:
            with self.commit_lock.lock(lock_key(path)):
                return self._create_if_absent(path, data)
        if not self.local:
            raise CommitFailedError(
                f"refusing to create {self.uri(path)} without a commit lock: {self.fs.type_name} offers no "
                "create-if-absent here, and check-then-write can lose a concurrent commit; pass commit_lock=... "
                "to the catalog (docs/commit-protocol.md)"
            )
        return self._create_if_absent(path, data)

    def _create_if_absent(self, path: str, data: bytes) -> bool:
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

    def delete_many(self, paths: Sequence[str]) -> list[str]:
        """Delete files in order (object stores: in batches); returns the paths deleted."""
        return [p for p in paths if self.delete_quietly(p)]

    def delete_dir(self, path: str) -> None:
        self.fs.delete_dir(path)

    def delete_empty_dir(self, path: str) -> bool:
        """Remove a directory only if it is empty (never recursively); True if it was removed."""
        if self.local:
            try:
                os.rmdir(path)
            except OSError:
                return False
            return True
        info = self.fs.get_file_info(path)
        if info.type != pafs.FileType.Directory or self.list_dir(path):
            return False
        self.fs.delete_dir(path)
        return True

    def pending_uploads(self, path: str) -> list[PendingUpload]:
        """Multipart uploads in progress below directory `path`: none outside object stores."""
        return []

    def abort_uploads(self, uploads: Sequence[PendingUpload]) -> list[PendingUpload]:
        """Abort multipart uploads; returns those gone afterwards."""
        return list(uploads)

    @staticmethod
    def _temp_path(path: str) -> str:
        parent, name = path.rsplit("/", 1)
        return f"{parent}/.{name}.{uuid.uuid4()}.tmp"


def lock_key(path: str) -> str:
    """The table a create-if-absent path belongs to: `<table>/<metadata dir>/<file>` -> `<table>`."""
    return path.rstrip("/").rsplit("/", 2)[0]
