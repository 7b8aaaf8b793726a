"""SQL over Paimon tables: session tables (``CREATE TABLE t USING paimon OPTIONS (path '...')``) and
``register_warehouse``.

PySpark 4.3 hands a Python data source the table's options only once, at ``CREATE TABLE`` (to infer the schema); a
later ``SELECT`` / ``INSERT`` of that catalog table gets the query's own options (``WITH (...)``), not the path
(measured: the reader and the writer see ``{}``). It does hand them the schema stored in the catalog, field
metadata included. So ``schema()`` stores the path and the table's read options in the first field's metadata
(``paimon.table``), and ``reader()`` / ``writer()`` take them back from the schema they are given. Secrets
(``s3.access-key``, ...) are never stored there: they come from ``register_warehouse(options=...)`` (kept in the
registered data source, not in the catalog) or from the executors' AWS variables.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from pyspark.sql import SparkSession
from pyspark.sql.types import StructField, StructType

from table_format import OptionError

SESSION_TABLE_KEY = "paimon.table"  # field metadata key holding {"path": ..., "options": {...}}
SECRET_OPTIONS = frozenset({"s3.access-key", "s3.secret-key", "s3.session-token", "s3.access.key", "s3.secret.key"})
TIME_TRAVEL_OPTIONS = ("snapshot-id", "tag", "incremental-between")
# what Spark adds to a catalog table's options at CREATE TABLE (not ours to keep)
_SPARK_TABLE_KEYS = frozenset({"owner", "provider", "location", "path", "external", "comment"})


def tag_session_table(schema: StructType, options: Mapping[str, str]) -> StructType:
    """At ``CREATE TABLE ... USING paimon`` (Spark passes ``provider``): ``schema`` with the table's path and
    non-secret options in the first field's metadata; any other load gets ``schema`` unchanged."""
    lowered = {k.lower(): v for k, v in options.items()}
    if "provider" not in lowered or not lowered.get("path") or not schema.fields:
        return schema
    kept = {k: v for k, v in lowered.items()
            if k not in _SPARK_TABLE_KEYS and not k.startswith("option.") and k not in SECRET_OPTIONS}
    first = schema.fields[0]
    metadata = {**(first.metadata or {}), SESSION_TABLE_KEY: json.dumps({"path": lowered["path"], "options": kept})}
    return StructType([StructField(first.name, first.dataType, first.nullable, metadata), *schema.fields[1:]])


def stored_table(schema: StructType) -> dict[str, Any] | None:
    """What ``tag_session_table`` stored in ``schema`` ({"path", "options"}), or None (not a session table)."""
    for field in schema.fields[:1]:
        raw = (field.metadata or {}).get(SESSION_TABLE_KEY)
        if raw:
            return dict(json.loads(raw))
    return None


def session_options(options: Mapping[str, str], schema: StructType, *,
                    defaults: Mapping[str, str] | None = None) -> dict[str, str]:
    """The options of a scan or write: ``defaults`` (register_warehouse's catalog options), then what the session
    table stored at CREATE TABLE, then the query's own (``WITH (...)``, ``.option(...)``), later ones winning."""
    merged: dict[str, str] = {}
    stored = stored_table(schema)
    if stored is not None:
        merged.update(stored["options"])
        merged["path"] = stored["path"]
    merged.update({k.lower(): v for k, v in options.items()})
    merged = with_defaults(merged, defaults)
    if "path" not in merged:
        raise OptionError(
            'format("paimon"): no table path. A catalog table made with a column list (CREATE TABLE t (a INT) '
            "USING paimon ...) gives PySpark 4.3's data source no path: create the Paimon table first, then "
            "CREATE TABLE t USING paimon OPTIONS (path '<warehouse>/<db>.db/<table>') without columns, or call "
            "jobs.spark.register_warehouse(spark, warehouse)")
    return merged


def with_defaults(options: Mapping[str, str], defaults: Mapping[str, str] | None) -> dict[str, str]:
    """``options`` over the session's catalog options (``s3.*`` of register_warehouse / spark_session): those apply
    to tables on object stores only, so a local path written or read in the same session never gets them."""
    from table_format.io.factory import is_s3  # noqa: PLC0415 - lazy: spark_session() loads no table code

    own = {k.lower(): v for k, v in options.items()}
    if not defaults or not is_s3(own.get("path", "")):
        return own
    return {**{k.lower(): v for k, v in defaults.items()}, **own}


def check_writable_options(options: Mapping[str, str], *, path: str) -> None:
    """A session table created with time travel options (or a query with them) is read-only."""
    chosen = [k for k in TIME_TRAVEL_OPTIONS if options.get(k)]
    if chosen:
        raise OptionError(f"table at {path!r}: cannot write with the time-travel options {chosen} (a session table "
                          "created with them is read-only; create another without them to write)")


def register_table(spark: SparkSession, name: str, path: str, *, options: Mapping[str, str] | None = None,
                   replace: bool = True) -> None:
    """Session table ``name`` ("db.t" or "t") over the Paimon table at ``path`` (``spark.sql`` can SELECT from it
    and INSERT into it). ``options``: read options kept with it (``snapshot-id``, ``tag``: a read-only time-travel
    table) and non-secret ``s3.*`` options; secret ones are refused (pass them to ``register_warehouse``).
    ``replace``: drop an existing paimon session table of that name first (to pick up a changed schema); a table
    of another provider is never dropped."""
    given = {str(k).lower(): str(v) for k, v in (options or {}).items()}
    secrets = sorted(SECRET_OPTIONS & set(given))
    if secrets:
        raise OptionError(f"session table {name!r}: options {secrets} would be stored in Spark's catalog; pass "
                          "them to register_warehouse(options=...) or set the executors' AWS variables")
    if spark.catalog.tableExists(name):
        provider = _provider(spark, name)
        if provider != "paimon":
            raise OptionError(f"session table {name!r} exists with provider {provider!r}: not replaced")
        if not replace:
            return
        spark.sql(f"DROP TABLE {_quote_name(name)}")  # an external table: the Paimon table is untouched
    spark.catalog.createTable(name, path=path, source="paimon", **given)


def register_warehouse(spark: SparkSession, warehouse: str, *, databases: Sequence[str] | None = None,
                       options: Mapping[str, str] | None = None) -> list[str]:
    """One session table per Paimon table of ``warehouse`` (``db.table``, in Spark databases of the same names),
    so that ``spark.sql("SELECT ... FROM shop.orders JOIN shop.payments ...")`` works; returns their names.

    ``databases``: only these (default: all). ``options``: catalog options of an s3:// warehouse (``s3.endpoint``,
    ``s3.access-key``, ...): every ``format("paimon")`` read and write of this session gets them as defaults
    (the secret ones stay out of Spark's catalog). Calling it again replaces the paimon session tables, picking
    up new tables and changed schemas.
    """
    from jobs.spark.data_source import register_data_source  # noqa: PLC0415 - data_source imports this module

    catalog_options = {str(k).lower(): str(v) for k, v in (options or {}).items()}
    from table_format import FileSystemCatalog  # noqa: PLC0415 - lazy: spark_session() loads no table code

    catalog = FileSystemCatalog(warehouse, options=catalog_options or None)
    known = catalog.list_databases()
    chosen = list(databases) if databases is not None else known
    missing = [d for d in chosen if d not in known]
    if missing:
        raise OptionError(f"warehouse {warehouse!r} has no databases {missing} (databases: {known})")
    if catalog_options:
        register_data_source(spark, defaults=catalog_options)
    stored = {k: v for k, v in catalog_options.items() if k not in SECRET_OPTIONS}
    names = []
    for database in chosen:
        location = catalog.table_uri(f"{database}.x").rsplit("/", 1)[0]
        where = "" if "://" in location else f" LOCATION {_literal(location)}"  # Spark's Hadoop FS lacks s3://
        spark.sql(f"CREATE DATABASE IF NOT EXISTS {_quote(database)}{where}")
        for table in catalog.list_tables(database):
            name = f"{database}.{table}"
            register_table(spark, name, catalog.table_uri(name), options=stored)
            names.append(name)
    return names


def _provider(spark: SparkSession, name: str) -> str | None:
    """The data source of a catalog table (its ``USING``), from the session catalog; None for a view. (PySpark 4.3's
    DESCRIBE and SHOW CREATE TABLE of a Python data source's table do not show it.)"""
    jsession = spark._jsparkSession  # noqa: SLF001 - the session catalog has no Python API
    identifier = jsession.sessionState().sqlParser().parseTableIdentifier(name)
    provider = jsession.sessionState().catalog().getTableMetadata(identifier).provider()
    return str(provider.get()).lower() if provider.isDefined() else None


def _quote(identifier: str) -> str:
    return "`" + identifier.replace("`", "``") + "`"


def _quote_name(name: str) -> str:
    return ".".join(_quote(part) for part in name.split("."))


def _literal(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"
