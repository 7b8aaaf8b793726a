"""The code location: the demo lakehouse, its health checks, the maintenance jobs, sensor and schedule, and the
resources they share. The only module importing every layer (schedules -> jobs -> lakehouse_assets -> jobs.spark ->
table_format). ``workspace.yaml`` loads ``defs``.

Configuration from the environment: ``LAKEHOUSE_WAREHOUSE`` (default ``./warehouse``), ``SPARK_MASTER`` (default
``local[2]``).
"""

import os

import dagster as dg

from jobs.maintenance import MAINTENANCE_JOBS
from lakehouse_assets import PaimonCatalogResource, PaimonIOManager, default_warehouse, pyspark_resource
from lakehouse_assets.checks import build_table_health_checks
from lakehouse_assets.demo import DEMO_ASSETS
from lakehouse_definitions.component import PaimonLakehouse
from lakehouse_definitions.lakehouse import LakehouseConfigError, paimon_lakehouse_definitions
from lakehouse_definitions.policy import (
    CompactionPolicy,
    ExpirePolicy,
    IOManagerPolicy,
    MaintenancePolicy,
    ObservedTable,
    OrphanPolicy,
)
from schedules import compaction_sensor, nightly_expire_snapshots


def build_definitions(*, warehouse: str | None = None, spark_master: str | None = None) -> dg.Definitions:
    """The Definitions over `warehouse` (default ``LAKEHOUSE_WAREHOUSE``, then ./warehouse) on Spark `spark_master`
    (default ``SPARK_MASTER``, then local[2])."""
    warehouse = os.path.abspath(warehouse or default_warehouse())
    return dg.Definitions(
        assets=list(DEMO_ASSETS),
        asset_checks=build_table_health_checks(DEMO_ASSETS),
        jobs=list(MAINTENANCE_JOBS),
        sensors=[compaction_sensor],
        schedules=[nightly_expire_snapshots],
        resources={
            "io_manager": PaimonIOManager(warehouse=warehouse, mode="overwrite"),
            "paimon_catalog": PaimonCatalogResource(warehouse=warehouse),
            "pyspark": pyspark_resource(master=spark_master),
        },
    )


defs = build_definitions()

__all__ = [
    "CompactionPolicy",
    "ExpirePolicy",
    "IOManagerPolicy",
    "LakehouseConfigError",
    "MaintenancePolicy",
    "ObservedTable",
    "OrphanPolicy",
    "PaimonLakehouse",
    "build_definitions",
    "defs",
    "paimon_lakehouse_definitions",
]
