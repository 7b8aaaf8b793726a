"""Commit locks: mutual exclusion of snapshot publication for stores without create-if-absent.

Publishing `snapshot/snapshot-<id>` must be create-if-absent (docs/commit-protocol.md). Local disks give it for
free (link(2) fails with EEXIST), S3 through S3FileIO's conditional PUT; stores without such a primitive (an S3
store without If-None-Match, gs:// and hdfs:// through pyarrow.fs) would let two committers both "create" the same
snapshot id, one commit silently lost, so FileIO refuses to commit there without a lock. A CommitLock closes
that gap: when one is configured, FileIO.try_create runs its existence check and its write under the lock of the
table, which makes check-then-write safe (Paimon's `lock.enabled` catalog lock plays the same role in Java).

A lock is any object with ``lock(key) -> context manager``; ``key`` is the table's root path. Implementations
must be picklable if the FileIO travels to executors (they only ever use it for reads and data files, never for
commits, so a lock that refuses to be used there is fine).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import time
from collections.abc import Iterator
from typing import Protocol, runtime_checkable

from table_format.errors import CommitFailedError

__all__ = ["CommitLock", "FileCommitLock"]


@runtime_checkable
class CommitLock(Protocol):
    """Exclusive lock per table, held while a snapshot (schema, tag) file is created if absent."""

    def lock(self, key: str) -> contextlib.AbstractContextManager[None]:
        """Acquire the lock of `key` (a table root path) on enter, release it on exit; raise when it cannot be
        had (the commit then fails with nothing published)."""
        ...


class FileCommitLock:
    """A CommitLock over POSIX advisory locks (flock) on files in a local directory shared by all committers.

    For tests and for single-host deployments that keep tables on an object store: every process that commits
    to the table must use the same `directory` (a local or NFSv4 path, never the object store itself). The lock
    is released by the kernel when its holder dies, so a crashed committer never blocks the others.
    """

    def __init__(self, directory: str, *, timeout: float = 60.0, poll: float = 0.005) -> None:
        self.directory = os.path.abspath(directory)
        self.timeout = timeout
        self.poll = poll

    def __repr__(self) -> str:
        return f"FileCommitLock({self.directory!r})"

    def _path(self, key: str) -> str:
        digest = hashlib.sha256(key.encode()).hexdigest()[:32]
        return os.path.join(self.directory, f"{digest}.lock")

    @contextlib.contextmanager
    def lock(self, key: str) -> Iterator[None]:
        os.makedirs(self.directory, exist_ok=True)
        fd = os.open(self._path(key), os.O_RDWR | os.O_CREAT, 0o644)
        try:
            deadline = time.monotonic() + self.timeout
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        raise CommitFailedError(
                            f"commit lock of {key!r} ({self._path(key)}) not acquired within {self.timeout} s"
                        ) from None
                    time.sleep(self.poll)
            try:
                yield
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)
