"""Dagster maintenance jobs over Paimon tables, each table in process (table_format) or on the PySpark resource
(`jobs.spark`) as run config ``engine: auto | local | spark`` says (engine.py).

Resources: ``pyspark`` (a dagster-pyspark ``PySparkResource``; ours creates the session only when a table takes
Spark) and ``paimon_catalog`` (``PaimonCatalogResource``). Every job runs its one op in process (at most one
SparkSession per run).
"""

import dagster as dg

from jobs.maintenance.config import (
    CompactConfig,
    EngineConfig,
    ExpireSnapshotsConfig,
    RemoveOrphanFilesConfig,
    RescaleConfig,
    RetentionConfig,
    TableSelection,
)
from jobs.maintenance.ops import compact_tables_op, expire_snapshots_op, remove_orphan_files_op, rescale_table_op
from jobs.maintenance.report import MaintenanceReport, asset_key_of


@dg.job(executor_def=dg.in_process_executor, tags={"kind": "maintenance"},
        description="Compact the tables selected in run config (default: all), large ones on PySpark")
def compact_tables() -> None:
    compact_tables_op()


@dg.job(executor_def=dg.in_process_executor, tags={"kind": "maintenance"},
        description="Expire snapshots by the tables' retention options (run config may override)")
def expire_snapshots() -> None:
    expire_snapshots_op()


@dg.job(executor_def=dg.in_process_executor, tags={"kind": "maintenance"},
        description="Rescale one table to the bucket count in run config")
def rescale_table() -> None:
    rescale_table_op()


@dg.job(executor_def=dg.in_process_executor, tags={"kind": "maintenance"},
        description="Remove unreferenced files older than the configured age")
def remove_orphan_files() -> None:
    remove_orphan_files_op()


MAINTENANCE_JOBS = (compact_tables, expire_snapshots, rescale_table, remove_orphan_files)

__all__ = [
    "MAINTENANCE_JOBS",
    "CompactConfig",
    "EngineConfig",
    "ExpireSnapshotsConfig",
    "MaintenanceReport",
    "RemoveOrphanFilesConfig",
    "RescaleConfig",
    "RetentionConfig",
    "TableSelection",
    "asset_key_of",
    "compact_tables",
    "expire_snapshots",
    "remove_orphan_files",
    "rescale_table",
]
