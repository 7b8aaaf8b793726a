"""Table health from a table's own metadata and options: sorted runs, small files, snapshot retention.

Dagster-free: the asset checks (checks.py), the compaction sensor and the maintenance jobs read the same numbers.
Thresholds are the table's own options, with Paimon's defaults:

* ``num-sorted-run.compaction-trigger`` (5): a bucket with this many sorted runs is due for compaction;
* ``num-sorted-run.stop-trigger`` (trigger + 3): writers of a bucket with this many sorted runs stall;
* ``target-file-size`` (128 mb with a primary key, else 256 mb): a file below 0.7 of it is small
  (``compaction.small-file-ratio``); a bucket with ``compaction.min.file-num`` (5) small files is due;
* ``snapshot.num-retained.min/max`` and ``snapshot.time-retained``: what expiration would keep;
* consumers (``consumer/consumer-<id>``, e.g. incremental downstream assets): each one's ``nextSnapshot`` and how
  many snapshots were committed after it (expiration keeps them all until it advances or expires).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from table_format import Table, TableFormatError, parse_memory_size

SMALL_FILE_RATIO = 0.7


def _int_option(table: Table, key: str, default: int) -> int:
    raw = table.options.get(key)
    if raw is None:
        return default
    try:
        return int(raw)
    except ValueError:
        raise TableFormatError(f"table {table.identifier!r}: option {key!r}: {raw!r} is not an integer") from None


@dataclass(frozen=True, slots=True)
class CompactionThresholds:
    """When a bucket is due for compaction, and when its writers stall, by the table's options."""

    compaction_trigger: int
    stop_trigger: int
    target_file_size: int
    small_file_size: int  # files below this many bytes are small
    min_small_files: int  # compaction.min.file-num

    @staticmethod
    def of(table: Table) -> CompactionThresholds:
        trigger = _int_option(table, "num-sorted-run.compaction-trigger", 5)
        default_target = "128 mb" if table.primary_keys else "256 mb"
        target = parse_memory_size(table.options.get("target-file-size", default_target), option="target-file-size")
        return CompactionThresholds(
            compaction_trigger=trigger,
            stop_trigger=_int_option(table, "num-sorted-run.stop-trigger", trigger + 3),
            target_file_size=target,
            small_file_size=int(target * SMALL_FILE_RATIO),
            min_small_files=_int_option(table, "compaction.min.file-num", 5),
        )


@dataclass(frozen=True, slots=True)
class ConsumerLag:
    """One consumer of a table: its ``nextSnapshot``, and how many snapshots with row changes it has not read."""

    consumer_id: str
    next_snapshot: int
    behind: int  # Consumer.unread: APPEND/OVERWRITE snapshots not read yet (a compaction leaves it at 0)

    def as_metadata(self) -> dict[str, int]:
        return {"next_snapshot": self.next_snapshot, "snapshots_behind": self.behind}


@dataclass(frozen=True, slots=True)
class TableHealth:
    """One table's layout at its latest snapshot, and the thresholds it is judged by."""

    identifier: str
    snapshot_id: int | None
    snapshot_count: int
    file_count: int
    bucket_count: int  # non-empty (partition, bucket) pairs
    max_sorted_runs: int  # the most sorted runs of any bucket (0 for append tables: no LSM)
    max_small_files: int  # the most small files of any bucket
    small_file_count: int
    total_bytes: int
    thresholds: CompactionThresholds
    consumers: tuple[ConsumerLag, ...] = ()

    @property
    def compaction_due(self) -> bool:
        """A bucket has reached the compaction trigger, or holds enough small files to pack."""
        return (self.max_sorted_runs >= self.thresholds.compaction_trigger
                or self.max_small_files >= max(self.thresholds.min_small_files, 2))

    @property
    def writers_stalled(self) -> bool:
        return self.max_sorted_runs >= self.thresholds.stop_trigger

    def as_metadata(self) -> dict[str, int | bool | None]:
        return {
            "snapshot_id": self.snapshot_id,
            "snapshots": self.snapshot_count,
            "files": self.file_count,
            "small_files": self.small_file_count,
            "max_sorted_runs_per_bucket": self.max_sorted_runs,
            "max_small_files_per_bucket": self.max_small_files,
            "compaction_trigger": self.thresholds.compaction_trigger,
            "stop_trigger": self.thresholds.stop_trigger,
            "small_file_bytes": self.thresholds.small_file_size,
            "compaction_due": self.compaction_due,
        }

    def consumer_metadata(self) -> dict[str, dict[str, dict[str, int]] | int]:
        """``consumers`` ({id: {next_snapshot, snapshots_behind}}) and ``max_consumer_lag``, for a check's metadata."""
        return {"consumers": {c.consumer_id: c.as_metadata() for c in self.consumers},
                "max_consumer_lag": max((c.behind for c in self.consumers), default=0)}


def _max_per_bucket(rows: pa.Table) -> int:
    if rows.num_rows == 0:
        return 0
    counts = rows.group_by(["partition", "bucket"]).aggregate([([], "count_all")])
    return int(pc.max(counts["count_all"]).as_py())


def _sorted_runs(files: pa.Table) -> int:
    """Max sorted runs of one bucket: each level-0 file is a run, each non-empty higher level one run."""
    if files.num_rows == 0:
        return 0
    level0 = files.filter(pc.equal(files["level"], 0)).select(["partition", "bucket"])
    upper = files.filter(pc.greater(files["level"], 0)).group_by(["partition", "bucket", "level"]).aggregate([])
    runs = pa.concat_tables([level0, upper.select(["partition", "bucket"])])
    return _max_per_bucket(runs)


def table_health(table: Table) -> TableHealth:
    """Measure `table` at its latest snapshot (a few metadata reads, no data file is opened)."""
    thresholds = CompactionThresholds.of(table)
    snapshots = table.snapshots()
    files = table.system_table("files").select(["partition", "bucket", "level", "file_size_in_bytes"])
    small = files.filter(pc.less(files["file_size_in_bytes"], thresholds.small_file_size))
    pairs = files.group_by(["partition", "bucket"]).aggregate([]).num_rows if files.num_rows else 0
    consumers = tuple(ConsumerLag(c.consumer_id, c.next_snapshot, c.unread(snapshots)) for c in table.consumers())
    return TableHealth(
        identifier=table.identifier,
        snapshot_id=snapshots[-1].id if snapshots else None,
        snapshot_count=len(snapshots),
        file_count=files.num_rows,
        bucket_count=pairs,
        max_sorted_runs=_sorted_runs(files) if table.primary_keys else 0,
        max_small_files=_max_per_bucket(small),
        small_file_count=small.num_rows,
        total_bytes=int(pc.sum(files["file_size_in_bytes"]).as_py() or 0),
        thresholds=thresholds,
        consumers=consumers,
    )


@dataclass(frozen=True, slots=True)
class RetentionStatus:
    """Snapshots beyond the table's retention options: what `expire_snapshots` would remove now."""

    identifier: str
    snapshot_count: int
    expirable_snapshots: tuple[int, ...]
    oldest_snapshot_age: dt.timedelta | None

    @property
    def within_retention(self) -> bool:
        return not self.expirable_snapshots


def retention_status(table: Table) -> RetentionStatus:
    """A dry run of snapshot expiration by the table's own options."""
    snapshots = table.snapshots()
    result = table.maintenance.expire_snapshots(dry_run=True)
    now_ms = dt.datetime.now(dt.timezone.utc).timestamp() * 1000
    age = dt.timedelta(milliseconds=now_ms - snapshots[0].time_millis) if snapshots else None
    return RetentionStatus(identifier=table.identifier, snapshot_count=len(snapshots),
                           expirable_snapshots=tuple(result.expired_snapshots), oldest_snapshot_age=age)
