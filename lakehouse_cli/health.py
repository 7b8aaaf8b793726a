"""`lakehouse health`: how a table stands against its own compaction and retention options.

Four checks, each ``ok``, ``warn`` (maintenance is due), ``critical`` (writers stall) or ``error`` (the check
could not run; its message says why):

* sorted runs per bucket (primary-key tables): level-0 files count one run each, every other non-empty level one
  run; ``warn`` at ``num-sorted-run.compaction-trigger``, ``critical`` at ``num-sorted-run.stop-trigger``
  (default trigger + 3), where Paimon writers stop to wait for compaction;
* small files: files below 0.7 x ``target-file-size`` (what compaction treats as small); ``warn`` when a bucket
  holds ``compaction.min.file-num`` (default 5) or more;
* snapshots against retention: what an expiration with the table's options would do now (a dry run);
* orphan candidates: what ``remove-orphan-files`` would delete (a dry run with the same age limit), and the
  abandoned multipart uploads it would abort (object stores);
* consumers (``consumer/consumer-<id>``): how many snapshots with row changes each has not read (a compaction
  adds none); ``warn`` when one's next snapshot was expired (it cannot resume) or is one that retention would
  expire now were it not for the consumers (``Maintenance.expirable_without_consumers``).

``warehouse_health`` runs them over every table of the warehouse (or of one database).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from typing import Any

import polars as pl

from table_format import CoreOptions, FileSystemCatalog, Table, TableFormatError

SMALL_FILE_RATIO = 0.7  # compaction.small-file-ratio of table_format's compaction
_RANK = {"ok": 0, "warn": 1, "critical": 2, "error": 3}
CHECKS = ("sorted_runs", "small_files", "snapshots", "consumers", "orphans")


def _options(table: Table) -> tuple[CoreOptions, dict[str, str]]:
    raw = table.options
    return CoreOptions.parse(raw, has_primary_key=bool(table.primary_keys)), raw


def stop_trigger(options: CoreOptions, raw: dict[str, str]) -> int:
    """num-sorted-run.stop-trigger: default compaction trigger + 3, never below the trigger (CoreOptions)."""
    trigger = options.num_sorted_run_compaction_trigger
    configured = raw.get("num-sorted-run.stop-trigger")
    return max(trigger, int(configured) if configured is not None else trigger + 3)


def _per_bucket(table: Table, small_threshold: int) -> pl.DataFrame:
    files = pl.from_arrow(table.system_table("files").select(["partition", "bucket", "level", "file_size_in_bytes"]))
    assert isinstance(files, pl.DataFrame)
    return files.group_by(["partition", "bucket"]).agg(
        files=pl.len(),
        bytes=pl.col("file_size_in_bytes").sum(),
        sorted_runs=(pl.col("level") == 0).sum() + pl.col("level").filter(pl.col("level") > 0).n_unique(),
        small_files=(pl.col("file_size_in_bytes") < small_threshold).sum(),
        small_bytes=pl.col("file_size_in_bytes").filter(pl.col("file_size_in_bytes") < small_threshold).sum(),
    ).sort(["partition", "bucket"])


def _sorted_runs(table: Table, buckets: pl.DataFrame, options: CoreOptions, raw: dict[str, str]) -> dict[str, Any]:
    trigger = options.num_sorted_run_compaction_trigger
    stop = stop_trigger(options, raw)
    if not table.primary_keys:
        return {"status": "ok", "applies": False, "compaction_trigger": trigger, "stop_trigger": stop,
                "max_sorted_runs": 0, "buckets_over_trigger": 0, "buckets_at_stop_trigger": 0, "worst_buckets": []}
    over = buckets.filter(pl.col("sorted_runs") >= trigger)
    at_stop = buckets.filter(pl.col("sorted_runs") >= stop)
    worst = buckets.sort("sorted_runs", descending=True).head(10).filter(pl.col("sorted_runs") > 1)
    status = "critical" if at_stop.height else "warn" if over.height else "ok"
    return {
        "status": status, "applies": True, "compaction_trigger": trigger, "stop_trigger": stop,
        "max_sorted_runs": int(buckets.select(pl.col("sorted_runs").max()).item() or 0),
        "buckets_over_trigger": over.height, "buckets_at_stop_trigger": at_stop.height,
        "worst_buckets": worst.select(["partition", "bucket", "files", "sorted_runs"]).to_dicts(),
    }


def _small_files(buckets: pl.DataFrame, options: CoreOptions, raw: dict[str, str], threshold: int) -> dict[str, Any]:
    min_file_num = int(raw.get("compaction.min.file-num", "5"))
    crowded = buckets.filter(pl.col("small_files") >= min_file_num)
    return {
        "status": "warn" if crowded.height else "ok",
        "target_file_size": options.target_file_size, "threshold_bytes": threshold,
        "compaction_min_file_num": min_file_num,
        "files": int(buckets["files"].sum()) if buckets.height else 0,
        "small_files": int(buckets["small_files"].sum()) if buckets.height else 0,
        "small_bytes": int(buckets["small_bytes"].sum()) if buckets.height else 0,
        "crowded_buckets": crowded.sort("small_files", descending=True).head(10)
        .select(["partition", "bucket", "files", "small_files"]).to_dicts(),
    }


def _snapshots(table: Table, options: CoreOptions) -> dict[str, Any]:
    snapshots = table.snapshots()
    expire = table.maintenance.expire_snapshots(dry_run=True)
    return {
        "status": "warn" if expire.expired_snapshots else "ok",
        "count": len(snapshots),
        "earliest": snapshots[0].id if snapshots else None,
        "latest": snapshots[-1].id if snapshots else None,
        "retain_min": options.snapshot_num_retained_min, "retain_max": options.snapshot_num_retained_max,
        "time_retained_seconds": options.snapshot_time_retained.total_seconds(),
        "expire_limit": options.snapshot_expire_limit,
        "expirable_now": list(expire.expired_snapshots), "files_to_delete": len(expire.deleted_files),
    }


def _orphans(table: Table, older_than: dt.timedelta | dt.datetime) -> dict[str, Any]:
    orphans = table.maintenance.remove_orphan_files(older_than=older_than, dry_run=True)
    age = older_than.total_seconds() if isinstance(older_than, dt.timedelta) else None
    return {
        "status": "warn" if orphans.orphan_files or orphans.abandoned_uploads else "ok",
        "older_than_seconds": age, "count": len(orphans.orphan_files), "bytes": orphans.bytes_freed,
        "files": list(orphans.orphan_files), "abandoned_uploads": list(orphans.abandoned_uploads),
    }


def _consumers(table: Table) -> dict[str, Any]:
    snapshots = table.snapshots()
    earliest = snapshots[0].id if snapshots else None
    consumers = table.consumers()
    held = table.maintenance.expirable_without_consumers() if consumers else range(0)
    docs, problems = [], []
    for c in consumers:
        if earliest is not None and c.next_snapshot < earliest:
            problems.append(f"{c.consumer_id}: its next snapshot {c.next_snapshot} was expired (earliest {earliest})")
        elif c.next_snapshot in held:
            problems.append(f"{c.consumer_id}: keeps snapshot {c.next_snapshot} on, which retention "
                            "(snapshot.num-retained.*, snapshot.time-retained) would expire now")
        docs.append({"consumer_id": c.consumer_id, "next_snapshot": c.next_snapshot,
                     "pins_last_read": c.pins_last_read, "behind": c.unread(snapshots)})
    return {"status": "warn" if problems else "ok", "count": len(docs), "consumers": docs, "problems": problems}


def _guarded(check: Any, *args: Any) -> dict[str, Any]:
    """One check; a TableFormatError makes it ``error`` (with the message) rather than ending the report."""
    try:
        return check(*args)
    except TableFormatError as e:
        return {"status": "error", "message": str(e)}


def table_health(table: Table, *, small_file_size: int | None = None,
                 orphan_older_than: dt.timedelta | dt.datetime = dt.timedelta(days=1)) -> dict[str, Any]:
    """The health report of docs/cli.md ("health")."""
    options, raw = _options(table)
    threshold = small_file_size if small_file_size is not None else int(options.target_file_size * SMALL_FILE_RATIO)
    buckets = _per_bucket(table, threshold)
    report: dict[str, Any] = {
        "table": table.identifier,
        "status": "ok",
        "sorted_runs": _guarded(_sorted_runs, table, buckets, options, raw),
        "small_files": _guarded(_small_files, buckets, options, raw, threshold),
        "snapshots": _guarded(_snapshots, table, options),
        "consumers": _guarded(_consumers, table),
        "orphans": _guarded(_orphans, table, orphan_older_than),
    }
    report["status"] = worst(report[k]["status"] for k in CHECKS)
    return report


def worst(statuses: Iterable[str]) -> str:
    return max(statuses, key=_RANK.__getitem__, default="ok")


def warehouse_health(catalog: FileSystemCatalog, databases: Iterable[str], **options: Any) -> dict[str, Any]:
    """``table_health`` of every table of `databases`; a table that cannot be loaded is ``error`` with the reason."""
    reports: list[dict[str, Any]] = []
    for database in databases:
        for name in catalog.list_tables(database):
            identifier = f"{database}.{name}"
            try:
                reports.append(table_health(catalog.load_table(identifier), **options))
            except TableFormatError as e:
                reports.append({"table": identifier, "status": "error", "message": " ".join(str(e).split())})
    return {"status": worst(r["status"] for r in reports), "tables": reports}
