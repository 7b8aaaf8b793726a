"""The code location: the demo lakehouse (``shop.payments`` with write-audit-publish), its health checks, the
maintenance jobs, the checks-only job the `checks_after_maintenance` sensor requests after them, the compaction
sensor and schedules, and the resources they share, built by `paimon_lakehouse_definitions` (what the `dg` component
`PaimonLakehouse` builds from a ``defs.yaml``). The only package importing every layer (schedules -> jobs ->
lakehouse_assets -> jobs.spark -> table_format). ``workspace.yaml`` loads ``defs`` (built on first use: importing the
package for the component touches no warehouse).

Configuration from the environment: ``LAKEHOUSE_WAREHOUSE`` (default ``./warehouse``), ``SPARK_MASTER`` (default
``local[2]``).
"""

import warnings
from typing import Any

import dagster as dg

from lakehouse_assets.demo import AUDIT_ASSETS, AUDIT_CHECKS, DEMO_ASSETS
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

# Dagster 1.13 passes ``owners=[]`` on when it binds a sensor to a job resolved from the asset graph (the
# `checks_after_maintenance` sensor's `table_health_checks`), and warns that the parameter is in beta; nobody set it.
warnings.filterwarnings("ignore", message="Parameter `owners` of initializer `SensorDefinition.__init__`",
                        category=dg.BetaWarning)

# the demo's sensor and schedules start stopped (turn them on in the UI); they, and the health checks, cover the demo's
# own tables only (a user's table beside them in `shop` is neither maintained nor checked by the demo)
DEMO_TABLES = sorted(f"{k.path[0]}.{k.path[-1]}" for a in DEMO_ASSETS for k in a.keys)
DEMO_POLICY = MaintenancePolicy(tables=DEMO_TABLES, compaction=CompactionPolicy(enabled=False),
                                expire_snapshots=ExpirePolicy(enabled=False),
                                remove_orphan_files=OrphanPolicy(enabled=False))


def build_definitions(*, warehouse: str | None = None, spark_master: str | None = None) -> dg.Definitions:
    """The Definitions over `warehouse` (default ``LAKEHOUSE_WAREHOUSE``, then ./warehouse) on Spark `spark_master`
    (default ``SPARK_MASTER``, then local[2])."""
    return dg.Definitions.merge(
        # one process per run: small steps, one SparkSession per run (the multiprocess executor started one per step)
        dg.Definitions(assets=[*DEMO_ASSETS, *AUDIT_ASSETS], asset_checks=list(AUDIT_CHECKS),
                       executor=dg.in_process_executor),
        paimon_lakehouse_definitions(warehouse=warehouse, spark_master=spark_master, maintenance=DEMO_POLICY,
                                     checked_assets=DEMO_ASSETS),
    )


def __getattr__(name: str) -> Any:
    if name == "defs":  # the code location, built once, on first use
        globals()["defs"] = build_definitions()
        return globals()["defs"]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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
