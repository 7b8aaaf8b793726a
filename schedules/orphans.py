"""A schedule of `remove_orphan_files`: on a cron, delete files no snapshot, tag or branch references that are older
than a given age (Paimon's own guard against removing a writer's files before it commits)."""

from collections.abc import Sequence

import dagster as dg

from jobs.maintenance import RemoveOrphanFilesConfig, remove_orphan_files

WEEKLY_CRON = "0 3 * * 0"


def build_orphan_schedule(*, cron: str = WEEKLY_CRON, older_than: str = "1 d", tables: Sequence[str] = (),
                          execution_timezone: str = "UTC",
                          default_status: dg.DefaultScheduleStatus = dg.DefaultScheduleStatus.STOPPED,
                          name: str = "remove_orphan_files_schedule") -> dg.ScheduleDefinition:
    """Runs `remove_orphan_files` (dry_run=False) over `tables` (empty: every table) on `cron`."""
    config = RemoveOrphanFilesConfig(tables=list(tables), older_than=older_than, dry_run=False)

    @dg.schedule(name=name, job=remove_orphan_files, cron_schedule=cron, execution_timezone=execution_timezone,
                 default_status=default_status,
                 description=f"Removes unreferenced files older than {older_than} "
                             f"({', '.join(tables) if tables else 'every table'})")
    def _schedule(context: dg.ScheduleEvaluationContext) -> dg.RunRequest:
        when = context.scheduled_execution_time
        return dg.RunRequest(run_key=f"orphans:{when:%Y-%m-%dT%H:%M}" if when else None,
                             run_config=dg.RunConfig(ops={"remove_orphan_files_op": config}),
                             tags={"paimon/older_than": older_than})

    return _schedule
