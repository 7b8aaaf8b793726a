"""Writes that create their table: a DataFrame written to a path where no table exists yet creates it first.

The table is created from the DataFrame's Spark schema (Spark's Arrow types: microsecond timestamps, a
``TimestampType`` column becomes ``TIMESTAMP(6) WITH LOCAL TIME ZONE``, ``TimestampNTZType`` ``TIMESTAMP(6)``,
non-nullable fields NOT NULL), with the given primary keys, partition keys and table options, in the warehouse the
path names (``<warehouse>/<database>.db/<table>``; the database directory is created when missing). An existing
table is written as it is: creation options that contradict it (other keys) are refused.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pyarrow as pa
from pyspark.sql.types import StructType

from jobs.spark.types import exchange_schema
from table_format import (
    FileSystemCatalog,
    OptionError,
    SchemaError,
    Table,
    TableAlreadyExistsError,
    TableNotFoundError,
    open_table,
)

ROW_KIND = "_row_kind"
DB_SUFFIX = ".db"


@dataclass(frozen=True)
class TableSpec:
    """How to create the table when it does not exist (ignored, but checked, when it does)."""

    primary_keys: tuple[str, ...] | None = None  # None: not given (an existing table keeps its keys)
    partition_keys: tuple[str, ...] | None = None
    options: dict[str, str] = field(default_factory=dict)


def split_table_path(path: str) -> tuple[str, str, str]:
    """``<warehouse>/<database>.db/<table>`` -> (warehouse, database, table), or an OptionError naming the path."""
    trimmed = path.rstrip("/")
    parent, _, name = trimmed.rpartition("/")
    warehouse, _, database_dir = parent.rpartition("/")
    if not name or not warehouse or not database_dir.endswith(DB_SUFFIX) or database_dir == DB_SUFFIX:
        raise OptionError(f"no table at {path!r}, and it cannot be created there: a new table's path must look like "
                          "<warehouse>/<database>.db/<table> (or create it with FileSystemCatalog.create_table)")
    return warehouse, database_dir[: -len(DB_SUFFIX)], name


def table_schema_of(schema: StructType, *, path: str) -> pa.Schema:
    """The Arrow schema of a new table from a DataFrame's schema (without ``_row_kind``)."""
    arrow = exchange_schema(schema)
    fields = [f for f in arrow if f.name != ROW_KIND]
    if not fields:
        raise SchemaError(f"cannot create the table at {path!r}: the DataFrame has no column")
    return pa.schema(fields)


def open_or_create(path: str, schema: StructType, spec: TableSpec, *,
                   catalog_options: Mapping[str, str] | None = None) -> Table:
    """The table at ``path``; created from ``schema`` and ``spec`` when no table is there."""
    try:
        table = open_table(path, options=catalog_options)
    except TableNotFoundError:
        table = _create(path, schema, spec, catalog_options=catalog_options)
    check_spec(table, spec)
    return table


def _create(path: str, schema: StructType, spec: TableSpec, *, catalog_options: Mapping[str, str] | None) -> Table:
    warehouse, database, name = split_table_path(path)
    arrow = table_schema_of(schema, path=path)
    for kind, keys in (("primary key", spec.primary_keys), ("partition key", spec.partition_keys)):
        unknown = [k for k in keys or () if k not in arrow.names]
        if unknown:
            raise SchemaError(f"cannot create table {database}.{name} at {path!r}: {kind} columns {unknown} are not "
                              f"in the DataFrame (columns: {arrow.names})")
    catalog = FileSystemCatalog(warehouse, options=catalog_options)
    new_database = not catalog.database_exists(database)
    catalog.create_database(database, exist_ok=True)
    try:
        return catalog.create_table(f"{database}.{name}", arrow, primary_keys=spec.primary_keys or (),
                                    partition_keys=spec.partition_keys or (), options=spec.options)
    except TableAlreadyExistsError:  # another writer created it meanwhile: write into theirs (checked by the caller)
        return open_table(path, options=catalog_options)
    except BaseException:
        if new_database and not catalog.list_tables(database):
            catalog.drop_database(database)  # a refused table leaves nothing behind, not even its database
        raise


def check_spec(table: Table, spec: TableSpec) -> None:
    """Refuse keys that contradict the table (a write never changes a table's keys)."""
    for kind, given, actual in (("primary keys", spec.primary_keys, tuple(table.primary_keys)),
                                ("partition keys", spec.partition_keys, tuple(table.partition_keys))):
        if given is not None and tuple(given) != actual:
            raise SchemaError(f"table {table.identifier!r} exists with {kind} {list(actual)}, the write asks for "
                              f"{list(given)}; a write does not change a table's keys (alter or recreate the table)")


def key_list(raw: str | Sequence[str] | None) -> tuple[str, ...] | None:
    """``"a,b"`` or ``["a", "b"]`` -> ("a", "b"); None stays None."""
    if raw is None:
        return None
    items = raw.split(",") if isinstance(raw, str) else list(raw)
    return tuple(k.strip() for k in items if k.strip())
