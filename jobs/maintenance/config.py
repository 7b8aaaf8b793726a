"""Typed run config of the maintenance jobs (what the Launchpad shows and validates)."""

import datetime as dt

import dagster as dg
from pydantic import Field

from table_format import OptionError, parse_duration


def _duration(text: str, field: str) -> dt.timedelta:
    try:
        return parse_duration(text, option=field)
    except OptionError as exc:
        raise dg.Failure(description=f"run config {field!r}: {exc}; no table touched") from exc


class TableSelection(dg.Config):
    """Which tables a maintenance run touches."""

    tables: list[str] = Field(default=[], description="'database.table' identifiers; empty: every table of the warehouse")


class CompactConfig(TableSelection):
    full: bool = Field(default=False, description="rewrite every bucket into one sorted run (full compaction)")
    partitions: list[dict[str, str]] = Field(default=[], description="partition specs, e.g. [{dt: '2024-05-14'}]; empty: all")


class RetentionConfig(dg.Config):
    """Overrides of the tables' retention options; unset means the table's own option."""

    retain_min: int | None = Field(default=None, description="snapshot.num-retained.min")
    retain_max: int | None = Field(default=None, description="snapshot.num-retained.max")
    older_than: str | None = Field(default=None, description="snapshot.time-retained, a duration such as '1 h'")

    def older_than_delta(self) -> dt.timedelta | None:
        return None if self.older_than is None else _duration(self.older_than, "retention.older_than")


class ExpireSnapshotsConfig(TableSelection):
    retention: RetentionConfig = Field(default_factory=RetentionConfig)
    dry_run: bool = Field(default=True, description="report what would expire, delete nothing")


class RescaleConfig(dg.Config):
    table: str = Field(description="the 'database.table' to rescale")
    bucket: int = Field(description="the new bucket count (> 0)")
    partitions: list[dict[str, str]] = Field(default=[], description="partitions to rewrite now; empty: all")


class RemoveOrphanFilesConfig(TableSelection):
    older_than: str = Field(default="1 d", description="only files older than this duration are orphans")
    dry_run: bool = Field(default=True, description="report the orphans, delete nothing")

    def older_than_delta(self) -> dt.timedelta:
        return _duration(self.older_than, "older_than")
