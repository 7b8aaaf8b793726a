"""Asset key and definition metadata -> the Paimon table an asset lives in, and how to create it."""

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import dagster as dg

from table_format import IMMUTABLE_OPTIONS, CoreOptions, Table, TableFormatError, check_option_keys

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


def check_declaration(table: Table, spec: TableSpec, where: str) -> list[str]:
    """An existing table must match the asset's declared ``primary_keys``, ``partition_keys`` and ``table_options``
    (those declared; others are free): else a PaimonAssetError naming each differing key and the call that changes
    it, raised before anything is written. Unknown option keys get Paimon's closest key ("did you mean").

    A declared option equals the table's when the strings match or when table_format acts on both alike
    (``'128mb'`` and ``'128 mb'``; an unset option and its default, e.g. ``bucket: -1``). Every key counts, also
    those Paimon takes as dynamic per-query options: the IO manager has no per-run options, so ``table_options``
    are the table's own. One exception: an option the table was created with as declared and changed since
    (``alter_table``, a ``rescale``) is the table's deliberate evolution, not a stale table: returned as a warning
    (the declaration should follow), not refused.
    """
    problems = [
        f"metadata {what} {list(declared)} differ from the existing table's {list(actual)}: primary and partition "
        "keys cannot change (create a new table and copy the rows, or fix the metadata)"
        for what, declared, actual in (("primary_keys", spec.primary_keys, table.primary_keys),
                                       ("partition_keys", spec.partition_keys, table.partition_keys))
        if declared and tuple(declared) != tuple(actual)
    ]
    has_pk, has_data = bool(table.primary_keys), table.latest_snapshot() is not None
    differing = {k: v for k, v in spec.options.items() if not _same_option(table.options, has_pk, k, v)}
    created = _creation_options(table) if differing else {}
    warnings, alter = [], []
    for key, value in differing.items():
        change = f"{key!r}: table has {table.options.get(key)!r}, declared {value!r}"
        if _same_option(created, has_pk, key, value):
            warnings.append(f"{where}: table {table.identifier!r} was created with {key!r} = {value!r} as declared "
                            f"and changed since to {table.options.get(key)!r}; update the asset's table_options")
            continue
        try:
            check_option_keys({key: value}, table=table.identifier, columns=table.arrow_schema.names)
        except TableFormatError as exc:
            problems.append(f"metadata table_options: {exc}")
            continue
        if has_data and key == "bucket":
            problems.append(f"{change}: rewrite the table with table.maintenance.rescale(bucket={value}) "
                            "(or the rescale_table job)")
        elif has_data and key in IMMUTABLE_OPTIONS:
            problems.append(f"{change}: it cannot change once the table has data (Paimon refuses it too); "
                            "create a new table and copy the rows")
        else:
            alter.append((key, value))
            problems.append(change)
    if alter:
        changes = ", ".join(f"SchemaChange.set_option({k!r}, {v!r})" for k, v in alter)
        problems.append(f"change the options with catalog.alter_table({table.identifier!r}, [{changes}])")
    if problems:
        raise PaimonAssetError(f"{where}: the declaration differs from the existing table {table.identifier!r}; "
                               f"nothing was written:\n  " + "\n  ".join(problems))
    return warnings


_PROBE = "\x00"  # a value no option parser accepts unchanged


def _same_option(options: Mapping[str, str], has_pk: bool, key: str, value: str) -> bool:
    """Whether declaring `key` = `value` over `options` changes nothing table_format acts on (check_declaration)."""
    current = dict(options)
    if current.get(key) == value:
        return True
    try:
        now = _effective(current, has_pk)
        if _effective({**current, key: value}, has_pk) != now:
            return False
    except TableFormatError:
        return False
    try:  # the parsers read `key` if a probe value changes or breaks them; otherwise only the strings count
        return _effective({**current, key: _PROBE}, has_pk) != now
    except TableFormatError:
        return True


def _effective(options: Mapping[str, str], has_pk: bool) -> tuple[Any, Any]:
    parsed = CoreOptions.parse(options, has_primary_key=has_pk)
    return replace(parsed, raw={}), parsed.post_commit()


def _creation_options(table: Table) -> dict[str, str]:
    """The options of the table's first schema version (what it was created with)."""
    schemas = table.system_table("schemas").sort_by("schema_id")
    return json.loads(schemas["options"][0].as_py()) if schemas.num_rows else {}
