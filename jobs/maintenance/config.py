"""Typed run config of the maintenance jobs (what the Launchpad shows and validates)."""

import datetime as dt

import dagster as dg
from pydantic import Field

from jobs.maintenance.engine import DEFAULT_SPARK_THRESHOLD_BYTES, DEFAULT_SPARK_THRESHOLD_FILES, Engine
from table_format import OptionError, parse_duration


def _duration(text: str, field: str) -> dt.timedelta:
    try:
        return parse_duration(text, option=field)
    except OptionError as exc:
        raise dg.Failure(description=f"run config {field!r}: {exc}; no table touched") from exc


class TableSelection(dg.Config):
    """Which tables a maintenance run touches."""

    tables: list[str] = Field(default=[], description="'database.table' identifiers; empty: every table of the warehouse")


class EngineConfig(dg.Config):
    """Where each table's operation runs (engine.py): in process, on PySpark, or chosen by the work's size."""

    engine: Engine = Field(default="auto", description="auto: local below the threshold, Spark from it (on a "
                                                       "cluster master); "
                                                       "local: in process (table_format); spark: the PySpark resource")
    spark_threshold_bytes: int = Field(default=DEFAULT_SPARK_THRESHOLD_BYTES, description=(
        "auto: compaction/rescale go to Spark when they would rewrite at least this many bytes (default 256 MiB)"))
    spark_threshold_files: int = Field(default=DEFAULT_SPARK_THRESHOLD_FILES, description=(
        "auto: expiration/orphan removal go to Spark when they would delete or look at this many files"))
    spark_on_local_master: bool = Field(default=False, description=(
        "auto: also take Spark above the threshold when the Spark master is local[...] (by default a local master "
        "keeps the work in process, which is faster on one machine)"))


class CompactConfig(TableSelection, EngineConfig):
    full: bool = Field(default=False, description="rewrite every bucket into one sorted run (full compaction)")
    partitions: list[dict[str, str]] = Field(default=[], description="partition specs, e.g. [{dt: '2024-05-14'}]; empty: all")


class RetentionConfig(dg.Config):
    """Overrides of the tables' retention options; unset means the table's own option."""

    retain_min: int | None = Field(default=None, description="snapshot.num-retained.min")
    retain_max: int | None = Field(default=None, description="snapshot.num-retained.max")
    older_than: str | None = Field(default=None, description="snapshot.time-retained, a duration such as '1 h'")

    def older_than_delta(self) -> dt.timedelta | None:
        return None if self.older_than is None else _duration(self.older_than, "retention.older_than")


class ExpireSnapshotsConfig(TableSelection, EngineConfig):
    retention: RetentionConfig = Field(default_factory=RetentionConfig)
    dry_run: bool = Field(default=True, description="report what would expire, delete nothing")


class RescaleConfig(EngineConfig):
    table: str = Field(description="the 'database.table' to rescale")
    bucket: int = Field(description="the new bucket count (> 0)")
    partitions: list[dict[str, str]] = Field(default=[], description="partitions to rewrite now; empty: all")


class RemoveOrphanFilesConfig(TableSelection, EngineConfig):
    older_than: str = Field(default="1 d", description="only files older than this duration are orphans")
    dry_run: bool = Field(default=True, description="report the orphans, delete nothing")

    def older_than_delta(self) -> dt.timedelta:
        return _duration(self.older_than, "older_than")
