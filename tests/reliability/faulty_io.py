"""A FileIO that fails on purpose: the N-th call of chosen operations raises OSError, or "crashes".

    io = FaultyFileIO.on_local_disk(fail_at=3, ops=WRITE_OPS)  # the 3rd write-like call raises OSError
    io = FaultyFileIO.on_local_disk(fail_at=3, crash=True)  # the 3rd call of any op raises SimulatedCrash,
                                                             # and every later call too (a dead process)
    io = FaultyFileIO.on_local_disk(fail_at=3, when="after")  # the 3rd call happens, then raises (lost reply)
    catalog = FileSystemCatalog(warehouse, file_io=io)

`SimulatedCrash` derives from BaseException, so `except Exception` handlers do not swallow it, and because every
call after it raises again, cleanup code (`finally`, `except BaseException`) cannot delete anything either: what
is left on disk is what a SIGKILLed process would leave. `arm(n)` re-arms the same object; `calls` counts the
calls seen so far (after `arm`), `log` records them as (op, path).
"""

from __future__ import annotations

import errno
import os
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

import pyarrow.fs as pafs

from table_format.io.file_io import FileIO

READ_OPS = frozenset({"read_bytes", "exists", "is_dir", "status", "list_dir", "list_recursive", "open_input_file"})
WRITE_OPS = frozenset({"mkdirs", "write_bytes", "open_output_stream", "overwrite_hint", "try_create", "delete",
                       "delete_quietly", "delete_dir", "delete_empty_dir"})
ALL_OPS = READ_OPS | WRITE_OPS


class SimulatedCrash(BaseException):
    """The process "died" at this I/O call: nothing after it runs, not even cleanup."""


class FaultyFileIO(FileIO):
    def __init__(self, fs: pafs.FileSystem, *, local: bool, fail_at: int | None = None,
                 ops: Iterable[str] = ALL_OPS, crash: bool = False, when: str = "before",
                 match: Callable[[str, str], bool] | None = None) -> None:
        super().__init__(fs, local=local)
        self._guard = threading.Lock()
        self.log: list[tuple[str, str]] = []
        self.arm(fail_at, ops=ops, crash=crash, when=when, match=match)

    @classmethod
    def on_local_disk(cls, **kw: Any) -> FaultyFileIO:
        return cls(pafs.LocalFileSystem(), local=True, **kw)

    def arm(self, fail_at: int | None, *, ops: Iterable[str] = ALL_OPS, crash: bool = False, when: str = "before",
            match: Callable[[str, str], bool] | None = None) -> None:
        """Fail the `fail_at`-th (1-based) matching call from now on; None disarms."""
        if when not in ("before", "after"):
            raise ValueError(when)
        with self._guard:
            self.fail_at = fail_at
            self.ops = frozenset(ops)
            self.crash = crash
            self.when = when
            self.match = match
            self.calls = 0
            self.dead = False
            self.fired: tuple[str, str] | None = None
            self.log.clear()

    def disarm(self) -> None:
        self.arm(None)

    # ---- the hook ------------------------------------------------------------------------------------------------
    def _check(self, op: str, path: str) -> bool:
        """Count the call; raise now ("before"), or return True when it must raise after running ("after")."""
        with self._guard:
            if self.dead:
                raise SimulatedCrash(f"process already crashed; {op}({path}) not run")
            if op not in self.ops or (self.match is not None and not self.match(op, path)):
                return False
            self.calls += 1
            self.log.append((op, path))
            if self.fail_at is None or self.calls != self.fail_at:
                return False
            self.fired = (op, path)
            if self.crash:
                self.dead = True
        if self.when == "after":
            return True
        self._raise(op, path)
        return False  # pragma: no cover

    def _raise(self, op: str, path: str) -> None:
        if self.crash:
            raise SimulatedCrash(f"simulated crash at call {self.fail_at}: {op}({path})")
        raise OSError(errno.EIO, f"injected fault at call {self.fail_at} ({op})", path)

    def _call(self, op: str, path: str, fn: Callable[[], Any]) -> Any:
        after = self._check(op, path)
        result = fn()
        if after:
            self._raise(op, path)
        return result

    # ---- every public FileIO operation -----------------------------------------------------------------------------
    def read_bytes(self, path: str) -> bytes:
        return self._call("read_bytes", path, lambda: super(FaultyFileIO, self).read_bytes(path))

    def exists(self, path: str) -> bool:
        return self._call("exists", path, lambda: super(FaultyFileIO, self).exists(path))

    def is_dir(self, path: str) -> bool:
        return self._call("is_dir", path, lambda: super(FaultyFileIO, self).is_dir(path))

    def status(self, path: str) -> Any:
        return self._call("status", path, lambda: super(FaultyFileIO, self).status(path))

    def list_dir(self, path: str) -> Any:
        return self._call("list_dir", path, lambda: super(FaultyFileIO, self).list_dir(path))

    def list_recursive(self, path: str) -> Any:
        return self._call("list_recursive", path, lambda: super(FaultyFileIO, self).list_recursive(path))

    def open_input_file(self, path: str) -> Any:
        return self._call("open_input_file", path, lambda: super(FaultyFileIO, self).open_input_file(path))

    def mkdirs(self, path: str) -> None:
        self._call("mkdirs", path, lambda: super(FaultyFileIO, self).mkdirs(path))

    def write_bytes(self, path: str, data: bytes) -> None:
        self._call("write_bytes", path, lambda: super(FaultyFileIO, self).write_bytes(path, data))

    def open_output_stream(self, path: str) -> Any:
        return self._call("open_output_stream", path, lambda: super(FaultyFileIO, self).open_output_stream(path))

    def overwrite_hint(self, path: str, data: bytes) -> None:
        self._call("overwrite_hint", path, lambda: super(FaultyFileIO, self).overwrite_hint(path, data))

    def try_create(self, path: str, data: bytes) -> bool:
        return bool(self._call("try_create", path, lambda: super(FaultyFileIO, self).try_create(path, data)))

    def delete(self, path: str) -> None:
        self._call("delete", path, lambda: super(FaultyFileIO, self).delete(path))

    def delete_quietly(self, path: str) -> bool:
        try:
            return bool(self._call("delete_quietly", path, lambda: super(FaultyFileIO, self).delete_quietly(path)))
        except OSError:  # a quiet delete reports failure instead of raising, as the real one does
            return False

    def delete_dir(self, path: str) -> None:
        self._call("delete_dir", path, lambda: super(FaultyFileIO, self).delete_dir(path))

    def delete_empty_dir(self, path: str) -> bool:
        return bool(self._call("delete_empty_dir", path, lambda: super(FaultyFileIO, self).delete_empty_dir(path)))


class ObjectStoreLikeFileIO(FileIO):
    """Local disk behaving like S3 through pyarrow.fs: create-if-absent is an existence check, then a write.

    Without a commit lock two committers can both "create" snapshot-N (the later write wins, the earlier commit is
    lost without an error); `race_window` seconds between check and write make that likely. With a commit lock
    (FileSystemCatalog(..., commit_lock=...)) the check and the write run under the table's lock.
    """

    def __init__(self, *, race_window: float = 0.0) -> None:
        super().__init__(pafs.LocalFileSystem(), local=True)
        self.race_window = race_window

    @property
    def atomic_create(self) -> bool:
        return False

    def _create_if_absent(self, path: str, data: bytes) -> bool:
        if self.exists(path):
            return False
        if self.race_window:
            time.sleep(self.race_window)
        # a PUT: readers see the whole object or none (never a partial one); a second PUT replaces the first
        tmp = self._temp_path(path)
        self.write_bytes(tmp, data)
        os.replace(tmp, path)
        return True
