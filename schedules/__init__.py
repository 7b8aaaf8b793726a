"""Schedules and sensors for the maintenance jobs, and the checks-only job they request after maintenance."""

from schedules.checks_sensor import checks_after_maintenance, checks_request, table_health_checks
from schedules.compaction_sensor import compaction_requests, compaction_sensor
from schedules.nightly import nightly_expire_snapshots

__all__ = ["checks_after_maintenance", "checks_request", "compaction_requests", "compaction_sensor",
           "nightly_expire_snapshots", "table_health_checks"]
