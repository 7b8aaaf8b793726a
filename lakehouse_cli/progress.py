"""Rich progress bars on stderr for long work: maintenance (files and bytes, from table_format's ProgressEvent),
Spark jobs (elapsed time) and reads (rows)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)

from lakehouse_cli.output import human_bytes
from table_format import ProgressEvent


def _stderr_console(setting: bool | None) -> Console | None:
    """The console to draw on, or None: ``--progress`` forces it, ``--no-progress`` hides it, by default it is
    drawn only when stderr is a terminal."""
    if setting is False:
        return None
    console = Console(stderr=True, force_terminal=True if setting else None)
    return console if console.is_terminal else None


class MaintenanceProgress:
    """A bar of files done (with bytes) fed by ProgressEvents; a spinner until the work is planned."""

    def __init__(self, progress: Progress | None, task: TaskID | None) -> None:
        self._progress = progress
        self._task = task

    def __call__(self, event: ProgressEvent) -> None:
        if self._progress is None or self._task is None:
            return
        total = human_bytes(event.bytes_total) if event.bytes_total is not None else "?"
        self._progress.update(self._task, total=event.files_total, completed=event.files_done,
                              bytes=f"{human_bytes(event.bytes_done)} / {total}")


@contextmanager
def maintenance_progress(description: str, *, enabled: bool | None) -> Iterator[MaintenanceProgress]:
    """Yields the callback to pass as ``progress=``; the bar is drawn on stderr and removed at the end."""
    console = _stderr_console(enabled)
    if console is None:
        yield MaintenanceProgress(None, None)
        return
    columns = (SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
               TextColumn("files"), TextColumn("{task.fields[bytes]}"), TimeElapsedColumn())
    with Progress(*columns, console=console, transient=True) as progress:
        task = progress.add_task(description, total=None, bytes="planning")
        yield MaintenanceProgress(progress, task)


class RowCounter:
    """Counts rows read (reads have no total known in advance)."""

    def __init__(self, progress: Progress | None, task: TaskID | None) -> None:
        self._progress = progress
        self._task = task
        self.rows = 0

    def add(self, rows: int) -> None:
        self.rows += rows
        if self._progress is not None and self._task is not None:
            self._progress.update(self._task, rows=f"{self.rows:,} rows")


@contextmanager
def row_progress(description: str, *, enabled: bool | None) -> Iterator[RowCounter]:
    console = _stderr_console(enabled)
    if console is None:
        yield RowCounter(None, None)
        return
    columns = (SpinnerColumn(), TextColumn("{task.description}"), TextColumn("{task.fields[rows]}"),
               TimeElapsedColumn())
    with Progress(*columns, console=console, transient=True) as progress:
        yield RowCounter(progress, progress.add_task(description, total=None, rows="0 rows"))


@contextmanager
def spinner(description: str, *, enabled: bool | None) -> Iterator[None]:
    """Elapsed time for work that reports no progress (a Spark job)."""
    console = _stderr_console(enabled)
    if console is None:
        yield
        return
    with Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(), console=console,
                  transient=True) as progress:
        progress.add_task(description, total=None)
        yield
