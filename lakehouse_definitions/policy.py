"""What a Paimon lakehouse is configured by: its observed tables and maintenance policy, as pydantic models.

The `dg` component (component.py) reads them from ``defs.yaml``; `paimon_lakehouse_definitions` takes the same
objects in Python. Each one checks its values when built, so a bad cron, duration, table name or count fails with
the field's name (in ``dg check defs`` too).
"""

import re
from typing import Annotated

import dagster as dg
from dagster._utils.schedules import is_valid_cron_string
from pydantic import Field, field_validator, model_validator

from lakehouse_assets import PaimonAssetError, table_asset_key
from table_format import OptionError, parse_duration

_SPARK_MASTER = re.compile(r"local(\[(\d+|\*)(,\d+)?\])?|(spark|k8s|mesos)://\S+|yarn|sc://\S+")

Identifier = Annotated[str, Field(description="a table as 'database.table'")]


def check_identifier(value: str, field: str) -> str:
    try:
        table_asset_key(value)
    except PaimonAssetError as exc:
        raise ValueError(f"{field}: {exc}") from None
    return value


def check_cron(value: str, field: str) -> str:
    if not is_valid_cron_string(value):
        raise ValueError(f"{field}: {value!r} is not a cron schedule (e.g. '0 2 * * *')")
    return value


def check_duration(value: str | None, field: str) -> str | None:
    if value is not None:
        try:
            parse_duration(value, option=field)
        except OptionError:
            raise ValueError(f"{field}: {value!r} is not a duration (e.g. '1 d', '12 h', '30 min')") from None
    return value


def check_spark_master(value: str | None) -> str | None:
    if value is not None and not _SPARK_MASTER.fullmatch(value):
        raise ValueError(f"spark_master: {value!r} is not a Spark master (local[2], local[*], spark://host:7077, "
                         "sc://host, yarn)")
    return value


class ObservedTable(dg.Resolvable, dg.Model):
    """A table written outside Dagster (Flink, Spark, Java), observed as an asset: data version = latest snapshot."""

    table: Identifier
    deps: list[Identifier] = Field(default_factory=list,
                                   description="upstream tables ('database.table'), drawn as its lineage")
    description: str | None = None
    group_name: str | None = None
    cron: str | None = Field(default=None, description="observe on this cron (Dagster's automation sensor)")

    @field_validator("table")
    @classmethod
    def _table(cls, value: str) -> str:
        return check_identifier(value, "observe.table")

    @field_validator("deps")
    @classmethod
    def _deps(cls, value: list[str]) -> list[str]:
        return [check_identifier(v, f"observe.deps[{i}]") for i, v in enumerate(value)]

    @field_validator("cron")
    @classmethod
    def _cron(cls, value: str | None) -> str | None:
        return None if value is None else check_cron(value, "observe.cron")


class CompactionPolicy(dg.Resolvable, dg.Model):
    """The compaction sensor: requests `compact_tables` runs for tables past their compaction triggers."""

    enabled: bool = Field(default=True, description="the sensor runs (on) or starts stopped (off)")
    interval_seconds: int = Field(default=60, description="the least time between two ticks")

    @field_validator("interval_seconds")
    @classmethod
    def _interval(cls, value: int) -> int:
        if value < 1:
            raise ValueError(f"maintenance.compaction.interval_seconds: must be at least 1, not {value}")
        return value


class ExpirePolicy(dg.Resolvable, dg.Model):
    """The snapshot expiry schedule; unset retention fields: each table's own snapshot.* options."""

    enabled: bool = Field(default=True, description="the schedule runs (on) or starts stopped (off)")
    cron: str = Field(default="0 2 * * *", description="when expiry runs (UTC)")
    retain_min: int | None = Field(default=None, description="snapshot.num-retained.min")
    retain_max: int | None = Field(default=None, description="snapshot.num-retained.max")
    older_than: str | None = Field(default=None, description="snapshot.time-retained, e.g. '7 d'")

    @field_validator("cron")
    @classmethod
    def _cron(cls, value: str) -> str:
        return check_cron(value, "maintenance.expire_snapshots.cron")

    @field_validator("older_than")
    @classmethod
    def _older_than(cls, value: str | None) -> str | None:
        return check_duration(value, "maintenance.expire_snapshots.older_than")

    @model_validator(mode="after")
    def _counts(self) -> "ExpirePolicy":
        if self.retain_min is not None and self.retain_min < 1:
            raise ValueError(f"maintenance.expire_snapshots.retain_min: must be >= 1, not {self.retain_min}")
        if self.retain_max is not None and self.retain_max < (self.retain_min or 1):
            raise ValueError(f"maintenance.expire_snapshots.retain_max: {self.retain_max} must be >= retain_min "
                             f"({self.retain_min or 1})")
        return self


class OrphanPolicy(dg.Resolvable, dg.Model):
    """The orphan file removal schedule."""

    enabled: bool = Field(default=True, description="the schedule runs (on) or starts stopped (off)")
    cron: str = Field(default="0 3 * * 0", description="when orphan removal runs (UTC)")
    older_than: str = Field(default="1 d", description="only files older than this are removed")

    @field_validator("cron")
    @classmethod
    def _cron(cls, value: str) -> str:
        return check_cron(value, "maintenance.remove_orphan_files.cron")

    @field_validator("older_than")
    @classmethod
    def _older_than(cls, value: str | None) -> str | None:
        return check_duration(value, "maintenance.remove_orphan_files.older_than")


class MaintenancePolicy(dg.Resolvable, dg.Model):
    """Which tables are maintained, and how."""

    tables: list[Identifier] = Field(default_factory=list,
                                     description="tables maintained and checked; empty: every table of the warehouse")
    compaction: CompactionPolicy = Field(default_factory=CompactionPolicy)
    expire_snapshots: ExpirePolicy = Field(default_factory=ExpirePolicy)
    remove_orphan_files: OrphanPolicy = Field(default_factory=OrphanPolicy)
    health_checks: bool = Field(default=True, description="table health checks on the tables' assets")

    @field_validator("tables")
    @classmethod
    def _tables(cls, value: list[str]) -> list[str]:
        return [check_identifier(v, f"maintenance.tables[{i}]") for i, v in enumerate(value)]


class IOManagerPolicy(dg.Resolvable, dg.Model):
    """The ``io_manager`` resource: assets of the project are stored as tables of the warehouse."""

    mode: str = Field(default="overwrite", description="overwrite | append | upsert")
    schema_mode: str = Field(default="strict", description="strict | merge")

    @field_validator("mode")
    @classmethod
    def _mode(cls, value: str) -> str:
        if value not in ("overwrite", "append", "upsert"):
            raise ValueError(f"io_manager.mode: {value!r} is not one of overwrite, append, upsert")
        return value

    @field_validator("schema_mode")
    @classmethod
    def _schema_mode(cls, value: str) -> str:
        if value not in ("strict", "merge"):
            raise ValueError(f"io_manager.schema_mode: {value!r} is not one of strict, merge")
        return value
