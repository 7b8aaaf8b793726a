"""Schedules and sensors for the maintenance jobs (and factories of them with other crons, intervals, tables), and
the checks-only job they request after maintenance."""

from schedules.checks_sensor import checks_after_maintenance, checks_request, table_health_checks
from schedules.compaction_sensor import build_compaction_sensor, compaction_requests, compaction_sensor
from schedules.nightly import build_expire_schedule, nightly_expire_snapshots
from schedules.orphans import build_orphan_schedule

__all__ = [
    "build_compaction_sensor",
    "build_expire_schedule",
    "build_orphan_schedule",
    "checks_after_maintenance",
    "checks_request",
    "compaction_requests",
    "compaction_sensor",
    "nightly_expire_snapshots",
    "table_health_checks",
]
