"""Build the demo lakehouse end to end through Dagster, run each maintenance job once, print the tables.

    python -m lakehouse_definitions.build_demo        # what `bash scripts/demo.sh` runs

A real Dagster instance in ``DAGSTER_HOME`` (default ``.dagster_home/``, which `bash scripts/ui.sh` opens too, so the
UI shows these runs), the warehouse in ``LAKEHOUSE_WAREHOUSE`` (default ``./warehouse``), Spark on ``SPARK_MASTER``
(default ``local[2]``). The demo's own database (``shop``) and the default instance are reset first.
"""

import os
import shutil
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import dagster as dg
from pyspark.sql import SparkSession

from jobs.maintenance import (
    CompactConfig,
    ExpireSnapshotsConfig,
    RemoveOrphanFilesConfig,
    RescaleConfig,
    RetentionConfig,
)
from jobs.spark import spark_session
from lakehouse_assets import PaimonCatalogResource, default_warehouse
from lakehouse_assets.demo.assets import DATABASE
from lakehouse_assets.health import table_health
from lakehouse_definitions import build_definitions
from table_format import FileSystemCatalog

DEFAULT_HOME = ".dagster_home"
QUIET = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}  # the runs' events stay in the instance

MAINTENANCE_RUNS: tuple[tuple[str, str, object], ...] = (
    ("compact_tables", "compact_tables_op", CompactConfig(full=True)),
    ("rescale_table", "rescale_table_op", RescaleConfig(table=f"{DATABASE}.user_events", bucket=4)),
    ("expire_snapshots", "expire_snapshots_op",
     ExpireSnapshotsConfig(retention=RetentionConfig(retain_min=1, retain_max=2), dry_run=False)),
    ("remove_orphan_files", "remove_orphan_files_op", RemoveOrphanFilesConfig(older_than="1 d", dry_run=False)),
)


def _instance_home() -> Path:
    """DAGSTER_HOME, or the repository's .dagster_home (reset: the demo starts from an empty history)."""
    if os.environ.get("DAGSTER_HOME"):
        return Path(os.environ["DAGSTER_HOME"])
    home = Path(DEFAULT_HOME).resolve()
    shutil.rmtree(home, ignore_errors=True)
    home.mkdir(parents=True)
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    os.environ["DAGSTER_HOME"] = str(home)
    return home


def _reset_demo_tables(catalog: FileSystemCatalog) -> None:
    if DATABASE in catalog.list_databases():
        for name in catalog.list_tables(DATABASE):
            catalog.drop_table(f"{DATABASE}.{name}")


def _events(result: dg.ExecuteInProcessResult, node: str) -> list[str]:
    lines = []
    for event in result.all_events:
        if event.event_type_value in ("ASSET_MATERIALIZATION", "ASSET_OBSERVATION") and event.node_name == node:
            data = event.event_specific_data
            record = getattr(data, "materialization", None) or getattr(data, "asset_observation", None)
            lines.append(f"    {record.asset_key.to_user_string():24} {record.description}")
    return lines


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


def format_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    def line(r: Sequence[str]) -> str:
        return "  ".join(str(v).ljust(w) if i == 0 else str(v).rjust(w) for i, (v, w) in enumerate(zip(r, widths, strict=False)))
    return "\n".join([line(header), "  ".join("-" * w for w in widths), *(line(r) for r in rows)])


def main() -> int:
    home = _instance_home()
    warehouse = os.path.abspath(default_warehouse())
    catalog = FileSystemCatalog(warehouse)
    _reset_demo_tables(catalog)
    print(f"demo: warehouse {warehouse}, DAGSTER_HOME {home}, Spark {os.environ.get('SPARK_MASTER', 'local[2]')}")
    defs = build_definitions(warehouse=warehouse)
    t0 = time.monotonic()
    own_session = SparkSession.getActiveSession() is None
    spark = spark_session()  # one JVM for every run below (the PySpark resource reuses the active session)
    spark.sparkContext.setLogLevel("ERROR")
    with dg.DagsterInstance.get() as instance:
        assets_job = defs.resolve_implicit_global_asset_job_def()
        for round_no in (1, 2):
            t = time.monotonic()
            result = assets_job.execute_in_process(instance=instance, run_config=QUIET, raise_on_error=True)
            checks = list(result.get_asset_check_evaluations())
            failed = [f"{c.asset_key.to_user_string()}:{c.check_name}" for c in checks if not c.passed]
            print(f"materialized {len(result.get_asset_materialization_events())} assets (round {round_no}) in "
                  f"{time.monotonic() - t:.1f} s; checks: {len(checks) - len(failed)} passed, "
                  f"{len(failed)} failed {failed if failed else ''}")
        for job_name, node, config in MAINTENANCE_RUNS:
            t = time.monotonic()
            result = defs.resolve_job_def(job_name).execute_in_process(
                instance=instance, run_config=dg.RunConfig(ops={node: config}, loggers=QUIET["loggers"]),
                raise_on_error=True)
            print(f"{job_name}: {'ok' if result.success else 'FAILED'} in {time.monotonic() - t:.1f} s")
            print("\n".join(_events(result, node)))
    if own_session:
        spark.stop()
    print()
    summary = summary_rows(PaimonCatalogResource(warehouse=warehouse))
    print(format_table(("table", "rows", "snapshots", "files", "buckets", "last commit"), summary))
    print(f"\ndone in {time.monotonic() - t0:.1f} s; open it in the Dagster UI: bash scripts/ui.sh")
    return 0


if __name__ == "__main__":
    sys.exit(main())
