"""Schedules and sensors for the maintenance jobs."""

from schedules.compaction_sensor import compaction_requests, compaction_sensor
from schedules.nightly import nightly_expire_snapshots

__all__ = ["compaction_requests", "compaction_sensor", "nightly_expire_snapshots"]
