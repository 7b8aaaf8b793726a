"""The code location: the demo lakehouse, its health checks, the maintenance jobs, the checks-only job the
`checks_after_maintenance` sensor requests after them, the compaction sensor and nightly schedule, and the
resources they share. The only module importing every layer (schedules -> jobs -> lakehouse_assets -> jobs.spark ->
table_format). ``workspace.yaml`` loads ``defs``.

Configuration from the environment: ``LAKEHOUSE_WAREHOUSE`` (default ``./warehouse``), ``SPARK_MASTER`` (default
``local[2]``).
"""

import os
import warnings

import dagster as dg

from jobs.maintenance import MAINTENANCE_JOBS
from lakehouse_assets import PaimonCatalogResource, PaimonIOManager, default_warehouse, pyspark_resource
from lakehouse_assets.checks import build_table_health_checks
from lakehouse_assets.demo import DEMO_ASSETS
from schedules import checks_after_maintenance, compaction_sensor, nightly_expire_snapshots, table_health_checks

# Dagster 1.13 passes ``owners=[]`` on when it binds a sensor to a job resolved from the asset graph (the
# `checks_after_maintenance` sensor's `table_health_checks`), and warns that the parameter is in beta; nobody set it.
warnings.filterwarnings("ignore", message="Parameter `owners` of initializer `SensorDefinition.__init__`",
                        category=dg.BetaWarning)


def build_definitions(*, warehouse: str | None = None, spark_master: str | None = None) -> dg.Definitions:
    """The Definitions over `warehouse` (default ``LAKEHOUSE_WAREHOUSE``, then ./warehouse) on Spark `spark_master`
    (default ``SPARK_MASTER``, then local[2])."""
    warehouse = os.path.abspath(warehouse or default_warehouse())
    return dg.Definitions(
        assets=list(DEMO_ASSETS),
        asset_checks=build_table_health_checks(DEMO_ASSETS),
        jobs=[*MAINTENANCE_JOBS, table_health_checks],
        sensors=[compaction_sensor, checks_after_maintenance],
        schedules=[nightly_expire_snapshots],
        executor=dg.in_process_executor,  # one process per run: small steps, one SparkSession per run
        resources={
            "io_manager": PaimonIOManager(warehouse=warehouse, mode="overwrite"),
            "paimon_catalog": PaimonCatalogResource(warehouse=warehouse),
            "pyspark": pyspark_resource(master=spark_master),
        },
    )


defs = build_definitions()
