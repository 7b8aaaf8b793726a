"""``spark.readStream.format("paimon")``: a table's changes as a Structured Streaming source.

Offsets are snapshot ids, as JSON: ``{"snapshot": n}`` = every change up to snapshot n has been read;
``{"snapshot": n, "full": true}`` = nothing read yet, the next batch is snapshot n whole (the ``-full`` scan
modes). A micro-batch reads the changes of one or more snapshots in parallel, one Spark partition per changed
(partition, bucket) (small ones packed together by size), as Java's streaming read does: every record of the
changed files with its own row kind, not merged across snapshots (``table.change_splits(merged=False)``): the
changelog files of tables with a changelog producer (``input``, ``lookup``, ``full-compaction``: the -U/+U pairs),
else the files of APPEND commits (what was written: +I upserts, -D deletes); compaction snapshots add nothing but
their changelog. A bucket's files are read in commit order, so a key's records keep their order.

An OVERWRITE snapshot is never skipped (Java's streaming read skips it unless ``streaming-read-overwrite``): it is a
micro-batch of its own, as the Dagster incremental inputs read it: the rows of the partitions it replaced are
retracted (-D, as of the snapshot before) and the new ones inserted (+I); the retractions and insertions of one
bucket (one partition, when its bucket count changed or buckets are dynamic) are in one Spark partition, in that
order. Micro-batches never mix an overwrite with other snapshots, so the order of changes between batches is
commit order. Tables with deletion vectors read one snapshot per batch (Paimon 0.9 cannot pair deletion files
over a range).

Spark asks a Python data source for its schema without saying whether a batch or a stream reads it, so the
``_row_kind`` column is asked for with ``read.changelog`` = true (Paimon Spark's option, which adds the row kind the
same way). Without it every change record is a row without its kind, as Paimon's Spark connector streams a
primary-key table (measured with paimon-spark-3.5 0.9.0: -U and -D records come as plain rows, nothing is dropped);
an overwrite, whose retractions would be indistinguishable from insertions, is refused by name.

Admission control (PySpark >= 4.2): ``max-snapshots-per-trigger`` caps the snapshots per batch; Spark passes only
its built-in read limits to Python sources, so the cap travels as ``ReadMaxFiles`` (counting snapshots).
``trigger(availableNow=True)`` reads up to the snapshot that was latest when the query started, in batches of
that size. ``commit(end)`` advances the ``consumer-id`` consumer, so snapshot expiration (ours and Java's) keeps
every snapshot the stream has not read; with the table option ``consumer.expiration-time`` a running stream
re-touches its consumer file at every trigger once it is half that old.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import (
    ReadAllAvailable,
    ReadLimit,
    ReadMaxFiles,
    SupportsTriggerAvailableNow,
)
from pyspark.sql.types import StructType

from jobs.spark.reader import pack_by_size
from jobs.spark.stream_options import CHANGELOG_OPTION, StreamOptions
from jobs.spark.threads import limit_to_task
from jobs.spark.types import exchange_schema, to_exchange
from table_format import (
    ChangeSplit,
    CommitKind,
    DataSplit,
    OptionError,
    SnapshotNotFoundError,
    Table,
    iter_split,
    open_table,
    read_changes_split,
    snapshot_summary,
)

ROW_KIND = "_row_kind"
BATCH_ROWS = 65536


@dataclass(frozen=True)
class ChangesPiece(InputPartition):
    """Change splits read one after the other (each one (partition, bucket) of a range of snapshots)."""

    splits: tuple[ChangeSplit, ...]


@dataclass(frozen=True)
class SnapshotPiece(InputPartition):
    """Rows of whole splits: ``retract`` as -D, then ``insert`` as +I (a full snapshot: insert only)."""

    retract: tuple[DataSplit, ...]
    insert: tuple[DataSplit, ...]


def offset(snapshot: int, *, full: bool = False) -> dict[str, Any]:
    return {"snapshot": snapshot, "full": True} if full else {"snapshot": snapshot}


class PaimonStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """Lives in one Python process per query on the driver (Spark's planner runner): state between calls holds."""

    def __init__(self, options: StreamOptions, schema: StructType) -> None:
        self.options = options
        self.schema = schema
        self.target: int | None = None  # availableNow: the latest snapshot when the query started
        self.changelog = ROW_KIND in schema.names

    def _table(self) -> Table:
        return open_table(self.options.path, options=self.options.catalog_options)

    # ---- offsets ----------------------------------------------------------------------------------------------
    def initialOffset(self) -> dict[str, Any]:  # noqa: N802 - pyspark's names
        opts = self.options
        table = self._table()
        latest = table.store.snapshots.latest_id() or 0
        consumer = table.consumer(opts.consumer_id) if opts.consumer_id and not opts.ignore_progress else None
        if consumer is not None:
            start = offset(consumer.next_snapshot - 1)
        elif opts.scan_mode == "latest-full":
            start = offset(latest, full=latest > 0)
        elif opts.scan_mode == "latest":
            start = offset(latest)
        else:
            assert opts.snapshot_id is not None
            if opts.scan_mode == "from-snapshot-full":
                table.scan(snapshot_id=opts.snapshot_id)  # SnapshotNotFoundError naming the table when absent
                start = offset(opts.snapshot_id, full=True)
            else:
                self._check_available(table, opts.snapshot_id - 1)
                start = offset(opts.snapshot_id - 1)
        self._register(table, start)
        return start

    def getDefaultReadLimit(self) -> ReadLimit:  # noqa: N802
        if self.options.max_snapshots is None:
            return ReadAllAvailable()
        return ReadMaxFiles(self.options.max_snapshots)  # counted in snapshots (see the module docstring)

    def prepareForTriggerAvailableNow(self) -> None:  # noqa: N802
        self.target = self._table().store.snapshots.latest_id() or 0

    def reportLatestOffset(self) -> dict[str, Any] | None:  # noqa: N802
        latest = self._table().store.snapshots.latest_id()
        return None if latest is None else offset(latest)

    def latestOffset(self, start: dict[str, Any], limit: ReadLimit) -> dict[str, Any]:  # noqa: N802
        table = self._table()
        self._keep_consumer_alive(table, start)
        if start.get("full"):
            return offset(start["snapshot"])  # the whole snapshot is a batch of its own
        begin = int(start["snapshot"])
        latest = table.store.snapshots.latest_id() or 0
        if self.target is not None:
            latest = min(latest, self.target)
        if latest <= begin:
            return start
        cap = None if isinstance(limit, ReadAllAvailable) else (
            limit.max_files if isinstance(limit, ReadMaxFiles) else self.options.max_snapshots)
        if table.primary_keys and table.store.options.deletion_vectors_enabled:
            cap = 1
        end = latest if cap is None else min(latest, begin + cap)
        self._check_available(table, begin)
        for sid in range(begin + 1, end + 1):
            if table.store.snapshots.snapshot(sid).commit_kind == CommitKind.OVERWRITE:
                end = sid if sid == begin + 1 else sid - 1
                break
        return offset(end)

    def commit(self, end: dict[str, Any]) -> None:
        if self.options.consumer_id:
            self._register(self._table(), end)

    # ---- consumer ---------------------------------------------------------------------------------------------
    def _register(self, table: Table, position: dict[str, Any]) -> None:
        """The consumer's next snapshot: the full snapshot still to read, else the one after the last read."""
        if not self.options.consumer_id:
            return
        snapshot = int(position["snapshot"])
        next_snapshot = snapshot if position.get("full") else snapshot + 1
        table.set_consumer(self.options.consumer_id, next_snapshot=max(1, next_snapshot))

    def _keep_consumer_alive(self, table: Table, start: dict[str, Any]) -> None:
        """With ``consumer.expiration-time``, re-touch the consumer file once it is half that old, so an idle but
        running stream keeps its consumer (a stopped one loses it after that time, as in Paimon)."""
        expiration = table.store.options.post_commit().consumer_expiration_time
        if not self.options.consumer_id or expiration is None:
            return
        consumer = table.consumer(self.options.consumer_id)
        age_ms = None if consumer is None or consumer.modified_ms is None else time.time() * 1000 - consumer.modified_ms
        if age_ms is None or age_ms > expiration.total_seconds() * 500:
            if consumer is not None:
                table.set_consumer(consumer.consumer_id, next_snapshot=consumer.next_snapshot)
            else:
                self._register(table, start)

    @staticmethod
    def _check_available(table: Table, begin: int) -> None:
        earliest = table.store.snapshots.earliest_id()
        if earliest is not None and begin + 1 < earliest:
            raise SnapshotNotFoundError(
                f"stream of table {table.identifier!r}: snapshot {begin + 1} (the next to read) has expired "
                f"(earliest: {earliest}); register the stream as a consumer (option 'consumer-id') or keep snapshots "
                "longer (snapshot.time-retained)")

    # ---- planning and reading ---------------------------------------------------------------------------------
    def partitions(self, start: dict[str, Any], end: dict[str, Any]) -> Sequence[InputPartition]:
        if start == end:
            return []
        table = self._table()
        last = int(end["snapshot"])
        if start.get("full"):
            return self._pack([SnapshotPiece((), (s,)) for s in table.scan(snapshot_id=last).plan()])
        begin = int(start["snapshot"])
        pieces: list[InputPartition] = []
        first = begin
        for sid in range(begin + 1, last + 1):
            if table.store.snapshots.snapshot(sid).commit_kind != CommitKind.OVERWRITE:
                continue
            if first < sid - 1:
                pieces.extend(self._changes(table, first, sid - 1))
            pieces.extend(self._replace(table, sid))
            first = sid
        if first < last:
            pieces.extend(self._changes(table, first, last))
        return self._pack(pieces)

    def _changes(self, table: Table, begin: int, end: int) -> list[InputPartition]:
        by_bucket: dict[tuple[bytes, int], list[ChangeSplit]] = defaultdict(list)
        for split in table.change_splits(begin, end, merged=False):
            by_bucket[(split.partition, split.bucket)].append(split)
        return [ChangesPiece(tuple(splits)) for splits in by_bucket.values()]

    def _replace(self, table: Table, sid: int) -> list[InputPartition]:
        """The overwrite of snapshot ``sid``: its partitions' rows at ``sid - 1`` as -D, at ``sid`` as +I."""
        if not self.changelog:
            raise OptionError(
                f"stream of table {table.identifier!r}: snapshot {sid} is an OVERWRITE; its rows replace others, "
                f"which the stream gives as -D and +I rows with .option({CHANGELOG_OPTION!r}, 'true')")
        summary = snapshot_summary(table, sid)
        specs = summary.delta_partitions if summary is not None and table.partition_keys else None
        if specs is not None and not specs:
            return []
        where = None if specs is None else [[(k, "=", v) for k, v in spec.items()] for spec in specs]
        old = table.scan(snapshot_id=sid - 1, filter=where).plan() if sid > 1 else []
        new = table.scan(snapshot_id=sid, filter=where).plan()
        buckets = {(s.partition, s.total_buckets) for s in (*old, *new)}
        same_buckets = len({p for p, _ in buckets}) == len(buckets)  # no partition changed its bucket count
        by_bucket = not table.primary_keys or (table.bucket_mode == "fixed" and same_buckets)
        groups: dict[tuple[bytes, int], tuple[list[DataSplit], list[DataSplit]]] = defaultdict(lambda: ([], []))
        for index, splits in enumerate((old, new)):
            for s in splits:
                groups[(s.partition, s.bucket if by_bucket else 0)][index].append(s)
        return [SnapshotPiece(tuple(r), tuple(i)) for r, i in groups.values()]

    def _pack(self, pieces: list[InputPartition]) -> list[InputPartition]:
        """Small pieces packed into Spark partitions of about ``source.split.target-size`` bytes."""
        opts = self.options
        weights = [max(_size(p), opts.open_file_cost) for p in pieces]
        groups = pack_by_size(pieces, weights, target_size=opts.target_split_size, open_file_cost=opts.open_file_cost,
                              min_partitions=opts.min_partitions)
        return [g[0] if len(g) == 1 else PieceGroup(tuple(g)) for g in groups]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        limit_to_task()
        table = self._table()
        target = exchange_schema(self.schema)
        pieces = partition.pieces if isinstance(partition, PieceGroup) else (partition,)
        for piece in pieces:
            for data in self._read_piece(table, piece):
                if data.num_rows:
                    yield from to_exchange(_conform(data, target), target).to_batches(max_chunksize=BATCH_ROWS)

    def _read_piece(self, table: Table, piece: InputPartition) -> Iterator[pa.Table]:
        columns = list(self.options.columns) if self.options.columns else None
        if isinstance(piece, ChangesPiece):
            for change in piece.splits:
                yield read_changes_split(table, change, columns=columns)
        elif isinstance(piece, SnapshotPiece):
            for kind, splits in (("-D", piece.retract), ("+I", piece.insert)):
                for split in splits:
                    for data in iter_split(table, split, columns=columns):
                        yield data.append_column(ROW_KIND, pa.array([kind] * data.num_rows, pa.string()))


@dataclass(frozen=True)
class PieceGroup(InputPartition):
    """Several small pieces in one Spark partition."""

    pieces: tuple[InputPartition, ...]


def _size(piece: InputPartition) -> int:
    if isinstance(piece, ChangesPiece):
        return sum(s.size_bytes for s in piece.splits)
    if isinstance(piece, SnapshotPiece):
        return sum(f.file_size for s in (*piece.retract, *piece.insert) for f in s.files)
    return 0


def _conform(data: pa.Table, target: pa.Schema) -> pa.Table:
    """The target's columns by name: a column added to the table after the snapshot read is null."""
    names = set(data.column_names)
    return pa.table([data.column(f.name) if f.name in names else pa.nulls(data.num_rows, f.type) for f in target],
                    names=target.names)
