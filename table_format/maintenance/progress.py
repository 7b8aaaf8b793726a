"""Progress of long maintenance operations, for command lines and UIs: an optional callback per operation.

The maintenance entry points take ``progress: Callable[[ProgressEvent], None] | None``. They call it once
when the work is planned (``files_done == 0``) and after each unit of work (a compacted bucket, a rewritten
partition, a deleted file). A callback that raises aborts the operation like any other failure.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ProgressEvent:
    """How far one maintenance operation is, in files and bytes of its input."""

    operation: str  # "compact", "rescale", "expire_snapshots", "remove_orphan_files"
    files_done: int
    files_total: int
    bytes_done: int
    bytes_total: int | None  # None when the sizes are not known (files deleted by path, never listed)


ProgressCallback = Callable[[ProgressEvent], None]


class ProgressTracker:
    """Counts done files and bytes of one operation and reports each step to the callback (if any)."""

    def __init__(self, callback: ProgressCallback | None, operation: str, *, files_total: int,
                 bytes_total: int | None) -> None:
        self._callback = callback
        self._operation = operation
        self._files_total = files_total
        self._bytes_total = bytes_total
        self._files_done = 0
        self._bytes_done = 0
        self._emit()

    def advance(self, files: int, nbytes: int = 0) -> None:
        self._files_done += files
        self._bytes_done += nbytes
        self._emit()

    def _emit(self) -> None:
        if self._callback is not None:
            self._callback(ProgressEvent(self._operation, self._files_done, self._files_total,
                                         self._bytes_done, self._bytes_total))
