"""`nightly_expire_snapshots`: each night, expire snapshots of the tables holding more than their retention keeps.

`build_expire_schedule` makes one with another cron, table selection, retention or default status.
"""

from collections.abc import Sequence

import dagster as dg

from jobs.maintenance import ExpireSnapshotsConfig, RetentionConfig, expire_snapshots
from lakehouse_assets import PaimonCatalogResource
from table_format import Table

NIGHTLY_CRON = "0 2 * * *"


def expirable(table: Table, retention: RetentionConfig) -> tuple[int, ...]:
    """The snapshots expiration would remove now (a dry run; unset retention fields: the table's options)."""
    result = table.maintenance.expire_snapshots(retain_min=retention.retain_min, retain_max=retention.retain_max,
                                                older_than=retention.older_than_delta(), dry_run=True)
    return tuple(result.expired_snapshots)


def build_expire_schedule(*, cron: str = NIGHTLY_CRON, tables: Sequence[str] = (),
                          retention: RetentionConfig | None = None, execution_timezone: str = "UTC",
                          default_status: dg.DefaultScheduleStatus = dg.DefaultScheduleStatus.STOPPED,
                          name: str = "nightly_expire_snapshots") -> dg.ScheduleDefinition:
    """Expires snapshots (dry_run=False) of `tables` (empty: every table) holding more than `retention` keeps
    (default: each table's own snapshot.num-retained.* / snapshot.time-retained); skips when none is due."""
    selected = tuple(tables)
    retention = retention or RetentionConfig()

    @dg.schedule(name=name, job=expire_snapshots, cron_schedule=cron, execution_timezone=execution_timezone,
                 default_status=default_status,
                 description="Expires snapshots (dry_run=False) of every table beyond its retention"
                             + ("" if not selected else f" (tables: {', '.join(selected)})"))
    def _schedule(context: dg.ScheduleEvaluationContext,
                  paimon_catalog: PaimonCatalogResource) -> dg.RunRequest | dg.SkipReason:
        due = [identifier for identifier in selected or paimon_catalog.table_identifiers()
               if expirable(paimon_catalog.load_table(identifier), retention)]
        if not due:
            return dg.SkipReason("every table is within its snapshot retention")
        return dg.RunRequest(
            run_key=f"expire:{context.scheduled_execution_time:%Y-%m-%d}" if context.scheduled_execution_time else None,
            run_config=dg.RunConfig(ops={"expire_snapshots_op": ExpireSnapshotsConfig(
                tables=due, retention=retention, dry_run=False)}),
            tags={"paimon/tables": ",".join(due)},
        )

    return _schedule


nightly_expire_snapshots = build_expire_schedule()
