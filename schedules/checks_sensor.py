"""Health checks after maintenance: `table_health_checks`, a job of the table-health checks alone (no asset is
materialized), and `checks_after_maintenance`, a run-status sensor that has it check again the tables each finished
maintenance run reported on (a compaction from the UI, the compaction sensor or the nightly expiry alike).

So each asset's checks show the table as maintenance left it: a compaction's fewer sorted runs, an expiry's fewer
snapshots. Maintenance reports observations, not materializations (jobs/maintenance/report.py), so the new results
count as evaluated against the asset's latest materialization: "Passed" in the asset graph, not "Not evaluated".
"""

from collections.abc import Collection

import dagster as dg

from jobs.maintenance import MAINTENANCE_JOBS
from lakehouse_assets.checks import CHECK_NAMES

TABLE_HEALTH_CHECKS = "table_health_checks"

table_health_checks = dg.define_asset_job(
    TABLE_HEALTH_CHECKS, selection=dg.AssetSelection.all_asset_checks(),
    description="Run the table-health checks (all, or those a run request selects) without materializing",
    tags={"kind": "health"},
)


def reported_assets(instance: dg.DagsterInstance, run_id: str) -> set[dg.AssetKey]:
    """The assets a maintenance run reported on (its observations: one per table it touched)."""
    events = instance.all_logs(run_id, of_type=dg.DagsterEventType.ASSET_OBSERVATION)
    return {e.dagster_event.asset_key for e in events if e.dagster_event is not None and e.dagster_event.asset_key}


def checks_request(instance: dg.DagsterInstance, run: dg.DagsterRun,
                   check_keys: Collection[dg.AssetCheckKey]) -> dg.RunRequest | dg.SkipReason:
    """The `table_health_checks` run for the tables maintenance run `run` touched, among `check_keys` (the checks
    of this code location); a skip when it touched none of their assets."""
    touched = reported_assets(instance, run.run_id)
    selected = sorted((k for k in check_keys if k.asset_key in touched), key=lambda k: k.to_user_string())
    if not selected:
        return dg.SkipReason(f"run {run.run_id} of {run.job_name} reported no table with health checks here")
    tables = sorted({".".join(k.asset_key.path) for k in selected})
    return dg.RunRequest(run_key=f"checks-after:{run.run_id}", asset_check_keys=selected,
                         tags={"paimon/after_run": run.run_id, "paimon/after_job": run.job_name,
                               "paimon/tables": ",".join(tables)})


@dg.run_status_sensor(
    run_status=dg.DagsterRunStatus.SUCCESS, monitored_jobs=list(MAINTENANCE_JOBS), request_job=table_health_checks,
    name="checks_after_maintenance", default_status=dg.DefaultSensorStatus.RUNNING, minimum_interval_seconds=15,
    description="After each successful maintenance run, runs the health checks of the tables it touched",
)
def checks_after_maintenance(context: dg.RunStatusSensorContext) -> dg.RunRequest | dg.SkipReason:
    check_keys = context.repository_def.asset_graph.asset_check_keys if context.repository_def else ()
    health = [k for k in check_keys if k.name in CHECK_NAMES]  # not an audit check: it audits a materialization
    return checks_request(context.instance, context.dagster_run, health)
