"""Asset key and definition metadata -> the Paimon table an asset lives in, and how to create it."""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import dagster as dg

from table_format import TableFormatError

WRITE_MODES = ("overwrite", "append", "upsert")
SCHEMA_MODES = ("strict", "merge")
DEFAULT_DATABASE = "default"


class PaimonAssetError(TableFormatError):
    """An asset's Paimon declaration (key, metadata, partitions, data) does not fit its table."""


def raw(value: Any) -> Any:
    """Dagster may wrap metadata values (JsonMetadataValue, TextMetadataValue, ...): the plain value."""
    return value.value if isinstance(value, dg.MetadataValue) else value


def _names(value: Any, what: str, where: str) -> tuple[str, ...]:
    value = raw(value)
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if isinstance(value, Sequence) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise PaimonAssetError(f"{where}: metadata {what!r} must be a column name or a list of names, not {value!r}")


@dataclass(frozen=True)
class TableSpec:
    """Where an asset's table lives and how it is declared (definition metadata of the asset)."""

    database: str
    table: str
    primary_keys: tuple[str, ...] = ()
    partition_keys: tuple[str, ...] = ()
    options: Mapping[str, str] = field(default_factory=dict)
    partition_expr: str | Mapping[str, str] | None = None
    mode: str | None = None

    @property
    def identifier(self) -> str:
        return f"{self.database}.{self.table}"


def table_spec(asset_key: dg.AssetKey, metadata: Mapping[str, Any], *, default_database: str) -> TableSpec:
    """Asset key ``[..., database, table]`` (or metadata ``database``/``table``) plus the table declaration.

    Metadata keys: ``database``, ``table``, ``primary_keys``, ``partition_keys``, ``table_options`` (dict of
    Paimon options), ``partition_expr`` (column, or dict dimension -> column), ``mode``.
    """
    where = f"asset {asset_key.to_user_string()!r}"
    path = asset_key.path
    database = raw(metadata.get("database")) or (path[-2] if len(path) > 1 else default_database)
    table = raw(metadata.get("table")) or path[-1]
    options = raw(metadata.get("table_options")) or {}
    if not isinstance(options, Mapping):
        raise PaimonAssetError(f"{where}: metadata 'table_options' must be a dict of Paimon options, not {options!r}")
    partition_expr = raw(metadata.get("partition_expr"))
    if partition_expr is not None and not isinstance(partition_expr, str | Mapping):
        raise PaimonAssetError(
            f"{where}: metadata 'partition_expr' must be a column name or a dict dimension -> column, "
            f"not {partition_expr!r}"
        )
    mode = raw(metadata.get("mode"))
    check_mode(mode, where)
    return TableSpec(
        database=str(database),
        table=str(table),
        primary_keys=_names(metadata.get("primary_keys"), "primary_keys", where),
        partition_keys=_names(metadata.get("partition_keys"), "partition_keys", where),
        options={str(k): str(v) for k, v in options.items()},
        partition_expr=dict(partition_expr) if isinstance(partition_expr, Mapping) else partition_expr,
        mode=mode,
    )


def check_mode(mode: Any, where: str) -> None:
    if mode is not None and mode not in WRITE_MODES:
        raise PaimonAssetError(f"{where}: mode must be one of {', '.join(WRITE_MODES)}, not {mode!r}")
