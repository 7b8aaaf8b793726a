"""TableScan (an immutable read of one snapshot) and the per-split reads executors call."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator, Sequence
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from table_format.meta.snapshot import Snapshot
from table_format.predicate import Predicate, parse_filter
from table_format.scan.planner import plan_splits
from table_format.scan.reader import SplitReader
from table_format.scan.split import DataSplit
from table_format.store.file_store import FileStore
from table_format.workers import pool_size, worker_pool

if TYPE_CHECKING:
    import polars as pl

    from table_format.scan.changes import ChangeSplit
    from table_format.table import Table


class TableScan:
    """An immutable read of one snapshot: plan() for distributed readers, to_arrow() for local ones."""

    def __init__(self, table: Table, *, predicate: Predicate | None, columns: Sequence[str] | None,
                 snapshot: Snapshot | None, limit: int | None, store: FileStore | None = None) -> None:
        self.table = table
        self.store = store or table.store  # at the snapshot's schema for time travel
        self.predicate = predicate
        self.columns = list(columns) if columns is not None else None
        self.snapshot = snapshot
        self.limit = limit
        self._reader = SplitReader(self.store, columns=self.columns, predicate=predicate)

    @property
    def arrow_schema(self) -> pa.Schema:
        """The columns this scan returns."""
        return self._reader.output_schema

    def plan(self) -> list[DataSplit]:
        return plan_splits(self.store, self.snapshot, self.predicate)

    def to_batches(self) -> Iterator[pa.RecordBatch]:
        """The scan's rows as record batches, holding a bounded number of splits at a time: up to two splits per
        core read ahead (the process's read pool, table_format/workers.py) when they fit the memory budget
        (`sort-spill-buffer-size`); a larger split is streamed in key ranges when its turn comes
        (SplitReader.iter_read). Splits not yet started are cancelled when the caller stops early."""
        remaining = self.limit
        splits = iter(self.plan())
        reader = self._reader
        pool = worker_pool("read")
        ahead_max = pool_size("read")
        ahead: deque[tuple[DataSplit, Future[pa.Table] | None]] = deque()
        try:
            while True:
                while len(ahead) < ahead_max:
                    split = next(splits, None)
                    if split is None:
                        break
                    ahead.append((split, None if reader.is_large(split) else pool.submit(reader.read, split)))
                if not ahead:
                    return
                split, future = ahead.popleft()
                for table in ([future.result()] if future is not None else reader.iter_read(split)):
                    if remaining is not None:
                        if remaining <= 0:
                            return
                        table = table.slice(0, remaining)
                        remaining -= table.num_rows
                    yield from table.to_batches()
        finally:
            for _, f in ahead:
                if f is not None:
                    f.cancel()

    def to_arrow(self) -> pa.Table:
        batches = list(self.to_batches())
        return pa.Table.from_batches(batches, schema=self._reader.output_schema)

    def to_polars(self) -> pl.DataFrame:
        import polars as pl  # imported on first use (Spark's Python workers start faster without it)

        result = pl.from_arrow(self.to_arrow())
        assert isinstance(result, pl.DataFrame)
        return result


def read_changes_split(table: Table, split: ChangeSplit, *, columns: Sequence[str] | None = None) -> pa.Table:
    """Read one split of `table.change_splits(...)` (what an executor calls), with `_row_kind`."""
    from table_format.scan.changes import read_change_split  # noqa: PLC0415 - lazy: readers skip it
    return read_change_split(table.store, split, columns=columns)


def read_split(table: Table, split: DataSplit, *, columns: Sequence[str] | None = None,
               filter: Any = None) -> pa.Table:
    """Read one planned split (what an executor calls) with the schema its scan used; ``filter`` (the scan's
    DNF) drops the rows it rejects."""
    return _split_reader(table, split, columns, filter).read(split)


def iter_split(table: Table, split: DataSplit, *, columns: Sequence[str] | None = None,
               filter: Any = None) -> Iterator[pa.Table]:
    """`read_split` in slices: a split larger than `sort-spill-buffer-size` is merged key range by key range, so
    an executor holds a bounded part of a bucket at a time."""
    return _split_reader(table, split, columns, filter).iter_read(split)


def _split_reader(table: Table, split: DataSplit, columns: Sequence[str] | None, filter: Any) -> SplitReader:
    store = table.store
    if split.schema_id is not None and split.schema_id != store.schema.id:
        store = store.with_schema(store.schema_by_id(split.schema_id))
    predicate = parse_filter(filter, store.schema, table=table.identifier)
    return SplitReader(store, columns=columns, predicate=predicate)
