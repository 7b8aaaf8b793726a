"""Build the demo lakehouse end to end through Dagster, run each maintenance job once, print the tables.

    python -m lakehouse_definitions.build_demo        # what `bash scripts/demo.sh` runs

Every run is launched as the UI launches runs (`lakehouse_definitions.launch`): submitted to the instance and
executed by the code location of ``workspace.yaml``, so the UI shows them on the Overview timeline and under their
jobs. Each demo asset is materialized twice (batches 0 and 1, with its health checks); then ``shop.payments``
(write-audit-publish) gets batch 2 with planted bad rows, which its blocking check ``valid_payments`` catches (the
run fails, as intended: main keeps its snapshot, the audit branch is kept, ``payments_published`` and ``orders_wide``
do not run), then batch 2 corrected, which is published; then each maintenance job runs once, then the health checks
of the tables they touched run again (what the `checks_after_maintenance` sensor requests after each maintenance run
when a daemon runs, as under ``dagster dev``).

A real Dagster instance in ``DAGSTER_HOME`` (default ``.dagster_home/``, which `bash scripts/ui.sh` opens too), the
warehouse in ``LAKEHOUSE_WAREHOUSE`` (default ``./warehouse``), Spark on ``SPARK_MASTER`` (default ``local[2]``).
The demo touches only its own tables, by name (the maintenance jobs' ``tables``), and a rerun resets only what it
owns, and says so: it drops the demo's own tables (other tables of ``shop`` stay) and wipes those assets' history (so batches and incremental cursors start over); the
instance's runs are kept.
"""

import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import dagster as dg

from jobs.maintenance import (
    CompactConfig,
    ExpireSnapshotsConfig,
    RemoveOrphanFilesConfig,
    RescaleConfig,
    RetentionConfig,
)
from lakehouse_assets import PaimonCatalogResource, default_warehouse
from lakehouse_assets.audit import BRANCH
from lakehouse_assets.checks import build_table_health_checks
from lakehouse_assets.demo import AUDIT_ASSETS, AUDIT_CHECKS, DEMO_ASSETS
from lakehouse_assets.demo.assets import DATABASE, orders_wide, payments
from lakehouse_assets.health import table_health
from lakehouse_definitions.launch import ASSET_JOB, Launcher, LaunchError, ensure_run_coordinator, launched_runs
from schedules import checks_request
from schedules.checks_sensor import TABLE_HEALTH_CHECKS
from table_format import FileSystemCatalog

DEFAULT_HOME = ".dagster_home"
QUIET = {"console": {"config": {"log_level": "WARNING"}}}  # the runs' events stay in the instance

TABLE_KEYS = tuple(key for assets_def in DEMO_ASSETS for key in assets_def.keys)
DEMO_KEYS = (*TABLE_KEYS, *(key for assets_def in AUDIT_ASSETS for key in assets_def.keys))  # + payments_published
DEMO_TABLES = [".".join(key.path) for key in TABLE_KEYS]  # maintained by name: other tables of the warehouse untouched
MAINTENANCE_RUNS: tuple[tuple[str, str, dg.Config], ...] = (
    ("compact_tables", "compact_tables_op", CompactConfig(tables=DEMO_TABLES, full=True)),
    ("rescale_table", "rescale_table_op", RescaleConfig(table=f"{DATABASE}.user_events", bucket=4)),
    ("expire_snapshots", "expire_snapshots_op", ExpireSnapshotsConfig(
        tables=DEMO_TABLES, retention=RetentionConfig(retain_min=1, retain_max=2), dry_run=False)),
    ("remove_orphan_files", "remove_orphan_files_op",
     RemoveOrphanFilesConfig(tables=DEMO_TABLES, older_than="1 d", dry_run=False)),
)
DEMO_CHECKS = tuple(check_key for checks_def in build_table_health_checks(DEMO_ASSETS)
                    for check_key in checks_def.check_keys)  # the table health checks
AUDIT_CHECK_KEYS = tuple(check_key for checks_def in AUDIT_CHECKS for check_key in checks_def.check_keys)
AUDITED = ".".join(payments.key.path)
AUDIT_BATCH = 2  # written first with planted bad rows (caught), then corrected (published)
AUDIT_RUN_KEYS = (payments.key, *DEMO_KEYS[len(TABLE_KEYS):], orders_wide.key)  # the audited table and downstream


def _instance_home() -> Path:
    """DAGSTER_HOME, else the repository's .dagster_home (created when missing, never emptied)."""
    home = Path(os.environ.get("DAGSTER_HOME") or Path(DEFAULT_HOME).resolve())
    home.mkdir(parents=True, exist_ok=True)
    os.environ["DAGSTER_HOME"] = str(home)
    return home


def reset_demo(catalog: FileSystemCatalog, instance: dg.DagsterInstance) -> list[str]:
    """Drop the demo's own tables and wipe their assets' history; what was reset, as lines to print."""
    identifiers = DEMO_TABLES  # dropping a table drops its branches (a kept audit branch too)
    dropped = [name for name in identifiers if catalog.table_exists(name)]
    for name in dropped:
        catalog.drop_table(name)
    wiped = [key for key in DEMO_KEYS if instance.get_latest_materialization_event(key) is not None]
    if wiped:
        instance.wipe_assets(wiped)
    others = sorted({f"{DATABASE}.{t}" for t in catalog.list_tables(DATABASE)} - set(identifiers)) \
        if DATABASE in catalog.list_databases() else []
    lines = [f"dropped the demo's tables {', '.join(dropped)}" if dropped else "no demo table to drop",
             f"wiped the materialization history of {len(wiped)} demo assets (runs kept)" if wiped else
             "no demo asset history to wipe"]
    if others:
        lines.append(f"kept the other tables of {DATABASE}: {', '.join(others)}")
    return lines


def _checks(instance: dg.DagsterInstance, run_id: str) -> tuple[int, list[str]]:
    """How many checks the run evaluated as passed, and the failed ones."""
    passed, failed = 0, []
    for entry in instance.all_logs(run_id, of_type=dg.DagsterEventType.ASSET_CHECK_EVALUATION):
        evaluation = entry.dagster_event.event_specific_data
        if evaluation.passed:
            passed += 1
        else:
            failed.append(f"{evaluation.asset_key.to_user_string()}:{evaluation.check_name}")
    return passed, failed


def _checks_line(instance: dg.DagsterInstance, run_id: str) -> str:
    passed, failed = _checks(instance, run_id)
    return f"checks: {passed} passed, {len(failed)} failed{f' {failed}' if failed else ''}"


def _reports(instance: dg.DagsterInstance, run_id: str) -> list[str]:
    """The maintenance run's observation of each table it touched, as lines."""
    lines = []
    for entry in instance.all_logs(run_id, of_type=dg.DagsterEventType.ASSET_OBSERVATION):
        observation = entry.dagster_event.event_specific_data.asset_observation
        lines.append(f"    {observation.asset_key.to_user_string():24} {observation.description}")
    return lines


def _batches(batch: int) -> dict[str, object]:
    """Run config writing deterministic batch `batch` into every demo asset that takes one."""
    ops = {a.op.name: {"config": {"batch": batch}} for a in DEMO_ASSETS
           if a.op.config_schema is not None and "batch" in getattr(a.op.config_schema.config_type, "fields", {})}
    return {"ops": ops, "loggers": QUIET}


def _audit_evaluation(instance: dg.DagsterInstance, run_id: str) -> dg.AssetCheckEvaluation | None:
    for entry in instance.all_logs(run_id, of_type=dg.DagsterEventType.ASSET_CHECK_EVALUATION):
        evaluation = entry.dagster_event.event_specific_data
        if evaluation.asset_check_key in AUDIT_CHECK_KEYS:
            return evaluation
    return None


def _launch_audit(runs: Launcher, *, plant: bool) -> dg.DagsterRun:
    """A run of shop.payments (batch AUDIT_BATCH, with planted bad rows or not), its publication and downstream."""
    config = {"batch": AUDIT_BATCH, "plant_bad_rows": plant}
    checks = [*AUDIT_CHECK_KEYS, *(k for k in DEMO_CHECKS if k.asset_key in AUDIT_RUN_KEYS)]
    run_id = runs.launch(ASSET_JOB, assets=AUDIT_RUN_KEYS, checks=checks,
                         run_config={"ops": {payments.op.name: {"config": config}}, "loggers": QUIET},
                         tags={"demo/audit": "planted bad batch" if plant else "corrected batch"})
    return runs.wait(run_id, require_success=not plant)


def run_audit(runs: Launcher, catalog: FileSystemCatalog) -> None:
    """Write-audit-publish of shop.payments: a planted bad batch caught by its blocking check (main unchanged, the
    branch kept, downstream not run), then the corrected batch, audited and published."""
    table = catalog.load_table(AUDITED)
    before = table.latest_snapshot().id
    print(f"write-audit-publish on {AUDITED} (main at snapshot {before}): batch {AUDIT_BATCH} with planted bad rows")
    t = time.monotonic()
    bad = _launch_audit(runs, plant=True)
    evaluation = _audit_evaluation(runs.instance, bad.run_id)
    after = table.refresh().latest_snapshot().id
    if bad.status == dg.DagsterRunStatus.SUCCESS or evaluation is None or evaluation.passed or after != before:
        raise LaunchError(f"run {bad.run_id}: the planted bad batch was not caught (run {bad.status.value}, main "
                          f"{before} -> {after}, audit {evaluation and evaluation.passed})")
    done = {e.dagster_event.asset_key for e in runs.instance.all_logs(
        bad.run_id, of_type=dg.DagsterEventType.ASSET_MATERIALIZATION)}
    skipped = ", ".join(k.to_user_string() for k in AUDIT_RUN_KEYS if k not in done)
    branch = evaluation.metadata[BRANCH].value
    found = {k: evaluation.metadata[k].value for k in ("negative_amounts", "orders_paid_twice")}
    print(f"  the bad batch was caught, as intended (run {bad.run_id[:8]} {bad.status.value}, "
          f"{time.monotonic() - t:.1f} s): blocking check {evaluation.check_name} failed "
          f"({found['negative_amounts']} negative amounts, {found['orders_paid_twice']} orders paid twice)")
    print(f"  main of {AUDITED} unchanged at snapshot {after}; branch {branch!r} kept ({AUDITED}$branch_{branch}); "
          f"not run: {skipped}")
    t = time.monotonic()
    good = _launch_audit(runs, plant=False)
    print(f"  corrected batch {AUDIT_BATCH} in {time.monotonic() - t:.1f} s: {_checks_line(runs.instance, good.run_id)}"
          f"; published: main of {AUDITED} {before} -> {table.refresh().latest_snapshot().id}")


def run_demo(runs: Launcher, catalog: FileSystemCatalog) -> None:
    """The demo's runs, one after the other, each printed as it finishes."""
    instance = runs.instance
    for round_no in (1, 2):
        t = time.monotonic()
        run = runs.wait(runs.launch(ASSET_JOB, assets=DEMO_KEYS, checks=(*DEMO_CHECKS, *AUDIT_CHECK_KEYS),
                                    run_config=_batches(round_no - 1), tags={"demo/round": str(round_no)}))
        materialized = len(instance.all_logs(run.run_id, of_type=dg.DagsterEventType.ASSET_MATERIALIZATION))
        print(f"materialized {materialized} assets (round {round_no}) in {time.monotonic() - t:.1f} s; "
              f"{_checks_line(instance, run.run_id)}")
    run_audit(runs, catalog)
    requested: set[dg.AssetCheckKey] = set()
    for job_name, node, config in MAINTENANCE_RUNS:
        t = time.monotonic()
        run = runs.wait(runs.launch(job_name, run_config=dg.RunConfig(ops={node: config}, loggers=QUIET)
                                    .to_config_dict()))
        print(f"{job_name}: ok in {time.monotonic() - t:.1f} s")
        print("\n".join(_reports(instance, run.run_id)))
        request = checks_request(instance, run, DEMO_CHECKS)  # what the checks_after_maintenance sensor requests
        if isinstance(request, dg.RunRequest):
            requested.update(request.asset_check_keys or ())
    if requested:  # one run for all four jobs' requests (the sensor, when a daemon runs, requests one per job)
        t = time.monotonic()
        checked = runs.wait(runs.launch(TABLE_HEALTH_CHECKS, checks=sorted(requested, key=str),
                                        run_config={"loggers": QUIET}, tags={"demo/after": "maintenance"}))
        print(f"health checks after maintenance in {time.monotonic() - t:.1f} s; "
              f"{_checks_line(instance, checked.run_id)}")


def summary_rows(catalog: PaimonCatalogResource) -> list[tuple[str, ...]]:
    """One row per table: rows, snapshots, files, buckets, last commit kind."""
    rows = []
    for identifier in catalog.table_identifiers():
        table = catalog.load_table(identifier)
        health = table_health(table)
        latest = table.latest_snapshot()
        key_columns = table.primary_keys or table.arrow_schema.names[:1]
        count = table.scan(columns=key_columns).to_arrow().num_rows
        rows.append((identifier, str(count), str(health.snapshot_count), str(health.file_count),
                     table.options.get("bucket", "-1"), latest.commit_kind.value if latest else "-"))
    return rows


def consumer_lines(catalog: PaimonCatalogResource) -> list[str]:
    """The tables' Paimon consumers (the incremental downstream assets): the snapshot each read last, how many
    snapshots with row changes it has not read (a compaction leaves none)."""
    lines = []
    for identifier in catalog.table_identifiers():
        table = catalog.load_table(identifier)
        snapshots = table.snapshots()
        for consumer in table.consumers():
            where = "read snapshot" if consumer.pins_last_read else "next snapshot"
            lines.append(f"  {identifier:18} {consumer.consumer_id:28} {where} {consumer.next_snapshot}, "
                         f"{consumer.unread(snapshots)} with new rows unread")
    return lines


def format_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    def line(r: Sequence[str]) -> str:
        return "  ".join(str(v).ljust(w) if i == 0 else str(v).rjust(w) for i, (v, w) in enumerate(zip(r, widths, strict=False)))
    return "\n".join([line(header), "  ".join("-" * w for w in widths), *(line(r) for r in rows)])


def iceberg_hint(catalog: FileSystemCatalog) -> str:
    """Where Iceberg readers find the demo's table with Iceberg metadata, and a DuckDB query over it."""
    table = catalog.load_table(f"{DATABASE}.clickstream")
    return (f"\n{table.identifier} carries Iceberg metadata ({table.iceberg_metadata_dir()}); with duckdb and its "
            f"iceberg extension:\n  SELECT dt, count(*) FROM iceberg_scan('{table.path}') GROUP BY dt ORDER BY dt")


def main() -> int:
    home = _instance_home()
    changed = ensure_run_coordinator(home)
    warehouse = os.path.abspath(default_warehouse())
    os.environ["LAKEHOUSE_WAREHOUSE"] = warehouse  # the code location's and the runs' warehouse
    print(f"demo: warehouse {warehouse}, DAGSTER_HOME {home}, Spark {os.environ.get('SPARK_MASTER', 'local[2]')}")
    if changed:
        print(f"demo: set {changed}")
    t0 = time.monotonic()
    with dg.DagsterInstance.get() as instance:
        for line in reset_demo(FileSystemCatalog(warehouse), instance):
            print(f"demo: reset: {line}")
        output = home / "demo-runs.log"
        print(f"demo: the runs' own output (code server, Spark) goes to {output}")
        try:
            with launched_runs(instance, output=output) as runs:
                run_demo(runs, FileSystemCatalog(warehouse))
        except LaunchError as exc:
            print(f"demo: FAILED: {exc}", file=sys.stderr)
            return 1
    print()
    summary = summary_rows(PaimonCatalogResource(warehouse=warehouse))
    print(format_table(("table", "rows", "snapshots", "files", "buckets", "last commit"), summary))
    consumers = consumer_lines(PaimonCatalogResource(warehouse=warehouse))
    if consumers:
        print("\nconsumers (incremental inputs: expiry keeps what they have not read; UI: snapshots_within_retention)")
        print("\n".join(consumers))
    print(iceberg_hint(FileSystemCatalog(warehouse)))
    print(f"\ndone in {time.monotonic() - t0:.1f} s; open it in the Dagster UI: bash scripts/ui.sh")
    return 0


if __name__ == "__main__":
    sys.exit(main())
