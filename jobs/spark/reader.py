"""The reading half of the ``paimon`` data source: plan on the driver, read splits on executors as Arrow batches.

``partitions()`` plans the scan once (table_format's planner prunes partitions, buckets and files with the pushed
filters) and packs the splits into Spark partitions by size, like Paimon's split generation: a split whose files
need no merge (append tables, primary-key splits without overlapping keys) is cut into single files, a merged
split stays whole. ``read()`` runs on an executor: ``iter_split`` per split (a large one in key ranges), converted
to Spark's Arrow types, yielded as ``pyarrow.RecordBatch`` (no per-row Python).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import pyarrow as pa
from pyspark.sql.datasource import DataSourceReader, Filter, InputPartition
from pyspark.sql.types import StructType

from jobs.spark.filters import Condition, split_filters
from jobs.spark.read_options import ReadOptions
from jobs.spark.threads import limit_to_task
from jobs.spark.types import exchange_schema, to_exchange
from table_format import DataSplit, Table, iter_split

if TYPE_CHECKING:
    from table_format import ChangeSplit

BATCH_ROWS = 65536
ROW_KIND_COLUMN = "_row_kind"
T = TypeVar("T")


@dataclasses.dataclass(frozen=True)
class SplitsPartition(InputPartition):
    """One Spark partition: splits of one snapshot, read one after the other."""

    splits: tuple[DataSplit, ...]


@dataclasses.dataclass(frozen=True)
class ChangesPartition(InputPartition):
    """Splits of an incremental read (``table.change_splits(start, end)``), read one after the other."""

    splits: tuple[ChangeSplit, ...]


class PaimonReader(DataSourceReader):
    """Reads without filter pushdown: Spark applies every filter (option ``pushdown`` = false, incremental reads)."""

    def __init__(self, options: ReadOptions, schema: StructType) -> None:
        self.options = options
        self.schema = schema
        self.conditions: list[Condition] = []

    def partitions(self) -> Sequence[InputPartition]:
        opts = self.options
        table = opts.open_table()
        if opts.incremental is not None:
            changes = table.change_splits(*opts.incremental)
            groups = pack_by_size(changes, [max(s.size_bytes, opts.open_file_cost) for s in changes],
                                  target_size=opts.target_split_size, open_file_cost=opts.open_file_cost,
                                  min_partitions=opts.min_partitions)
            return [ChangesPartition(tuple(g)) for g in groups]
        scan = table.scan(filter=self.conditions or None, columns=opts.columns, snapshot_id=opts.snapshot_id,
                          tag=opts.tag)
        splits = scan.plan()
        if opts.native_files_skipped:  # jobs.spark.read_table reads these files with Spark's Parquet reader
            from jobs.spark.native_read import native_plan, without_files  # noqa: PLC0415 - read_table's only

            whole = table.scan(columns=opts.columns, snapshot_id=opts.snapshot_id, tag=opts.tag)  # as read_table
            splits = without_files(splits, native_plan(whole.plan(), whole.store, whole.arrow_schema.names).keys)
        return pack_splits(splits, target_size=opts.target_split_size, open_file_cost=opts.open_file_cost,
                           min_partitions=opts.min_partitions)

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        limit_to_task()
        target = exchange_schema(self.schema)
        table = self.options.open_table()
        columns = list(self.options.columns) if self.options.columns else None
        if isinstance(partition, ChangesPartition):
            from table_format import read_changes_split  # noqa: PLC0415 - lazy: incremental reads only

            for change in partition.splits:
                yield from _batches(read_changes_split(table, change, columns=columns), target)
            return
        if not isinstance(partition, SplitsPartition):
            return  # Spark's single empty partition when the plan has no split
        for split in partition.splits:  # a large split in key ranges: bounded executor memory
            for data in iter_split(table, split, columns=columns, filter=self.conditions or None):
                yield from _batches(data, target)


class PushdownReader(PaimonReader):
    """Takes the filters table_format evaluates exactly; they prune the plan and filter the rows (jobs/spark/filters.py)."""

    def pushFilters(self, filters: list[Filter]) -> Iterable[Filter]:  # noqa: N802 - pyspark's name
        table = self.options.open_table()
        self.conditions, rejected = split_filters(filters, read_schema(table, self.options))
        return rejected


def pinned_snapshot(table: Table, options: ReadOptions) -> int | None:
    """The snapshot a read of the latest data pins at load(): the latest one, unless the table's schema changed
    after it (then reading that snapshot would time travel to its older schema, and the read is planned at its
    first action instead); None for time travel, incremental reads and empty tables."""
    if options.snapshot_id is not None or options.tag is not None or options.incremental is not None:
        return None
    latest = table.latest_snapshot()
    if latest is None or latest.schema_id != table.store.schema.id:
        return None
    return latest.id


def read_schema(table: Table, options: ReadOptions) -> pa.Schema:
    """Every column of the read, before the ``columns`` projection: time travel (``snapshot-id``, ``tag``) has the
    schema that snapshot was written with, as ``table.scan`` and Java do; the latest snapshot and
    ``incremental-between`` have the table's current schema, as ``table.changes`` (and Java's incremental scan)."""
    return table.scan(snapshot_id=options.snapshot_id, tag=options.tag).arrow_schema


def _batches(data: pa.Table, target: pa.Schema) -> Iterator[pa.RecordBatch]:
    if data.num_rows:
        if ROW_KIND_COLUMN in target.names and ROW_KIND_COLUMN not in data.column_names:  # read.changelog
            data = data.append_column(ROW_KIND_COLUMN, pa.array(["+I"] * data.num_rows, pa.string()))
        yield from to_exchange(data, target).to_batches(max_chunksize=BATCH_ROWS)


def pack_splits(splits: Sequence[DataSplit], *, target_size: int, open_file_cost: int,
                min_partitions: int) -> list[InputPartition]:
    """Spark partitions of about ``target_size`` bytes (each file weighs at least ``open_file_cost``), at least
    ``min_partitions`` of them when there are enough pieces."""
    pieces = [piece for split in splits for piece in _pieces(split)]
    groups = pack_by_size(pieces, [_weight(p, open_file_cost) for p in pieces], target_size=target_size,
                          open_file_cost=open_file_cost, min_partitions=min_partitions)
    return [SplitsPartition(tuple(g)) for g in groups]


def pack_by_size(items: Sequence[T], weights: Sequence[int], *, target_size: int, open_file_cost: int,
                 min_partitions: int) -> list[list[T]]:
    """Groups of about ``min(target_size, total / min_partitions)`` weight; biggest first, next-fit, as Spark
    packs files."""
    if not items:
        return []
    per_partition = max(open_file_cost, math.ceil(sum(weights) / max(1, min_partitions)))
    limit = min(target_size, per_partition)
    groups: list[list[T]] = []
    current: list[T] = []
    size = 0
    for index in sorted(range(len(items)), key=lambda i: -weights[i]):
        if current and size + weights[index] > limit:
            groups.append(current)
            current, size = [], 0
        current.append(items[index])
        size += weights[index]
    groups.append(current)
    return groups


def _pieces(split: DataSplit) -> list[DataSplit]:
    """A split that needs no merge reads file by file: one piece per file; a merged split is one piece."""
    if not split.raw_convertible or len(split.files) == 1:
        return [split]
    dvs: Sequence[Any] = split.deletion_files or [None] * len(split.files)
    return [
        dataclasses.replace(split, files=(f,), deletion_files=(dv,) if split.deletion_files else None)
        for f, dv in zip(split.files, dvs, strict=True)
    ]


def _weight(split: DataSplit, open_file_cost: int) -> int:
    return sum(max(f.file_size, open_file_cost) for f in split.files)
