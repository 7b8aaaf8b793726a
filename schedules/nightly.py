"""`nightly_expire_snapshots`: each night, expire snapshots of the tables holding more than their retention keeps."""

import dagster as dg

from jobs.maintenance import ExpireSnapshotsConfig, expire_snapshots
from lakehouse_assets import PaimonCatalogResource
from lakehouse_assets.health import retention_status

NIGHTLY_CRON = "0 2 * * *"


@dg.schedule(job=expire_snapshots, cron_schedule=NIGHTLY_CRON, execution_timezone="UTC",
             description="Expires snapshots (dry_run=False) of every table beyond its retention options")
def nightly_expire_snapshots(context: dg.ScheduleEvaluationContext,
                             paimon_catalog: PaimonCatalogResource) -> dg.RunRequest | dg.SkipReason:
    due = [identifier for identifier in paimon_catalog.table_identifiers()
           if not retention_status(paimon_catalog.load_table(identifier)).within_retention]
    if not due:
        return dg.SkipReason("every table is within its snapshot retention")
    return dg.RunRequest(
        run_key=f"expire:{context.scheduled_execution_time:%Y-%m-%d}" if context.scheduled_execution_time else None,
        run_config=dg.RunConfig(ops={"expire_snapshots_op": ExpireSnapshotsConfig(tables=due, dry_run=False)}),
        tags={"paimon/tables": ",".join(due)},
    )
