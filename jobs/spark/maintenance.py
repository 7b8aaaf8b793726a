"""Distributed maintenance: compact, rescale, expire_snapshots, remove_orphan_files on a Spark cluster.

Each operation runs table_format's own plan / run / commit seam (``table.maintenance.plan_*``): the driver plans,
the executors run the same table_format code as a local run on picklable units ((partition, bucket) compaction
tasks, partitions to rescale, chunks of paths, directories to list), balanced by size, and the driver commits once.
The results (and the snapshots' commit kinds) are those of ``table.maintenance.<operation>``.

If any unit fails, nothing is committed, the files the other units wrote are deleted, and the unit's own error
is raised (with a note naming the unit). ``options``: catalog options of an s3:// table (``s3.endpoint``, ...);
the executors get them with the pickled table.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Mapping, Sequence
from typing import Any

from pyspark.sql import SparkSession

from jobs.spark.fan_out import FanOutResult, fan_out
from table_format import (
    CompactOutcome,
    CompactResult,
    CompactTask,
    ExpireResult,
    FileStatus,
    OrphanCleanPlan,
    OrphanCleanResult,
    RescaleOutcome,
    RescaleResult,
    RescaleTask,
    Table,
    open_table,
)

__all__ = ["compact", "expire_snapshots", "remove_orphan_files", "rescale"]

PATHS_PER_UNIT = 1000  # deletions: paths per unit (a unit is one round trip of pickled paths)


def _raise_first(result: FanOutResult[Any], names: Sequence[str]) -> None:
    if result.failures:
        index = min(result.failures)
        raise result.failures[index].exception(names[index])


def _chunks(items: Sequence[Any], size: int) -> list[list[Any]]:
    return [list(items[i:i + size]) for i in range(0, len(items), size)]


def _partition_name(table: Table, partition: bytes) -> str:
    values = table.store.decode_partition(partition)
    return ", ".join(f"{k}={v}" for k, v in zip(table.partition_keys, values, strict=True)) or "the table"


# ---------------------------------------------------------------------------------------------------- compaction


def _compact_unit(table: Table) -> Any:
    def run(task: CompactTask) -> CompactOutcome:
        return table.maintenance.run_compaction_task(task)
    return run


def compact(spark: SparkSession, table_path: str, *, full: bool = False,
            partitions: Sequence[Mapping[str, Any]] | None = None,
            options: Mapping[str, str] | None = None) -> CompactResult:
    """Compact the table (or some partitions) with one unit per (partition, bucket): universal compaction, or
    everything to the max level with ``full=True``. One COMPACT snapshot, as ``table.maintenance.compact``."""
    table = open_table(table_path, options=options)
    actions = table.maintenance
    tasks = actions.plan_compaction(full=full, partitions=partitions)
    result = fan_out(spark, tasks, _compact_unit(table),
                     weights=[sum(f.file_size for f in t.files) for t in tasks],
                     job=f"compact {table.identifier}")
    if result.failures:
        actions.abort_compaction(result.outcomes)
        _raise_first(result, [f"bucket {t.bucket} of {_partition_name(table, t.partition)}" for t in tasks])
    return actions.commit_compaction(result.outcomes)


# ------------------------------------------------------------------------------------------------------- rescale


def _rescale_unit(table: Table) -> Any:
    def run(task: RescaleTask) -> RescaleOutcome:
        return table.maintenance.run_rescale_task(task)
    return run


def rescale(spark: SparkSession, table_path: str, *, bucket: int,
            partitions: Sequence[Mapping[str, Any]] | None = None,
            options: Mapping[str, str] | None = None) -> RescaleResult:
    """Set the bucket count to `bucket` and rewrite the partitions (default all), one unit per partition.
    One OVERWRITE snapshot, as ``table.maintenance.rescale``."""
    table = open_table(table_path, options=options)
    actions = table.maintenance
    tasks = actions.plan_rescale(bucket=bucket, partitions=partitions)  # commits the new schema version
    result = fan_out(spark, tasks, _rescale_unit(table), weights=[t.size_bytes for t in tasks],
                     job=f"rescale {table.identifier}")
    if result.failures:
        actions.abort_rescale(result.outcomes)
        _raise_first(result, [_partition_name(table, t.partition) for t in tasks])
    return actions.commit_rescale(tasks, result.outcomes)


# ----------------------------------------------------------------------------------------- snapshot expiration


def _delete_unit(table: Table, dry_run: bool) -> Any:
    def run(paths: list[str]) -> list[str]:
        return table.maintenance.delete_paths(paths, dry_run=dry_run)
    return run


def expire_snapshots(spark: SparkSession, table_path: str, *, retain_min: int | None = None,
                     retain_max: int | None = None, older_than: _dt.datetime | _dt.timedelta | None = None,
                     max_deletes: int | None = None, dry_run: bool = True,
                     options: Mapping[str, str] | None = None) -> ExpireResult:
    """Expire snapshots by the retention rules (None: the table's options), as ``table.maintenance.
    expire_snapshots``: the driver plans and deletes the snapshot files first, the executors delete the data and
    metadata files only those snapshots used, in chunks of PATHS_PER_UNIT."""
    table = open_table(table_path, options=options)
    actions = table.maintenance
    plan = actions.plan_snapshot_expiration(retain_min=retain_min, retain_max=retain_max, older_than=older_than,
                                            max_deletes=max_deletes)
    if dry_run:
        deleted = actions.delete_paths(plan.snapshot_files, dry_run=True)
    else:
        deleted = actions.delete_expired_snapshot_files(plan)
    chunks = _chunks(plan.file_paths, PATHS_PER_UNIT)
    result = fan_out(spark, chunks, _delete_unit(table, dry_run), weights=[len(c) for c in chunks],
                     job=f"expire snapshots of {table.identifier}")
    _raise_first(result, [f"the deletion of {c[0]} and {len(c) - 1} more files" for c in chunks])
    for gone in result.outcomes:
        deleted.extend(gone)
    return actions.finish_snapshot_expiration(plan, deleted, dry_run=dry_run)


# --------------------------------------------------------------------------------------------- orphan cleaning


def _list_unit(table: Table, plan: OrphanCleanPlan) -> Any:
    def run(directories: list[str]) -> list[FileStatus]:
        return [st for d in directories for st in table.maintenance.list_orphan_candidates(plan, d)]
    return run


def _delete_orphans_unit(table: Table) -> Any:
    def run(files: list[FileStatus]) -> list[FileStatus]:
        return table.maintenance.delete_orphans(files, dry_run=False)
    return run


def remove_orphan_files(spark: SparkSession, table_path: str, *,
                        older_than: _dt.timedelta | _dt.datetime = _dt.timedelta(days=1),
                        dry_run: bool = True, options: Mapping[str, str] | None = None) -> OrphanCleanResult:
    """Delete files older than `older_than` that nothing references, as ``table.maintenance.remove_orphan_files``:
    the executors list the bucket and metadata directories and delete the orphans; the driver reads which files
    the snapshots, tags and changelogs reference (after the listing) and compares, and aborts the multipart uploads
    crashed writers left under the table (object stores)."""
    table = open_table(table_path, options=options)
    actions = table.maintenance
    plan = actions.plan_orphan_clean(older_than=older_than)
    dirs = list(plan.candidate_dirs)
    listed = fan_out(spark, [[d] for d in dirs], _list_unit(table, plan), job=f"list files of {table.identifier}")
    _raise_first(listed, [f"the listing of {d}" for d in dirs])
    candidates = [st for group in listed.outcomes for st in group]
    orphans = list(plan.metadata_orphans)
    if candidates:
        used = actions.used_file_names(plan)
        orphans.extend(st for st in candidates if st.name not in used)
    if dry_run:
        deleted = actions.delete_orphans(orphans, dry_run=True)
    else:
        chunks = _chunks(orphans, PATHS_PER_UNIT)
        gone = fan_out(spark, chunks, _delete_orphans_unit(table), weights=[len(c) for c in chunks],
                       job=f"delete orphan files of {table.identifier}")
        _raise_first(gone, [f"the deletion of {c[0].path} and {len(c) - 1} more files" for c in chunks])
        deleted = [st for group in gone.outcomes for st in group]
    return actions.finish_orphan_clean(plan, orphans, deleted, dry_run=dry_run)
