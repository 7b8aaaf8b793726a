"""PaimonIOManager: every asset a Paimon table (created on first materialization), read back as any handled type."""

import os
from collections.abc import Sequence
from typing import Any

import dagster as dg
import pyarrow as pa
from pydantic import Field, PrivateAttr

from lakehouse_assets.audit import (
    audit_metadata,
    discard_audit_branch,
    open_audit_branch,
    pending_branch,
    wants_audit,
)
from lakehouse_assets.handlers.arrow import ArrowHandler
from lakehouse_assets.handlers.base import ROW_KIND, PaimonTypeHandler
from lakehouse_assets.handlers.polars import PolarsHandler
from lakehouse_assets.handlers.spark import SparkHandler
from lakehouse_assets.incremental import IncrementalCursor, change_plan, plan_steps, wants_incremental
from lakehouse_assets.lineage import LINEAGE, declared_lineage, lineage_of_sources
from lakehouse_assets.metadata import table_metadata
from lakehouse_assets.partitions import PartitionSlice, partition_columns, partition_slice
from lakehouse_assets.table_spec import (
    DEFAULT_DATABASE,
    SCHEMA_MODES,
    PaimonAssetError,
    TableSpec,
    check_declaration,
    check_mode,
    raw,
    table_spec,
)
from table_format import (
    FileSystemCatalog,
    Table,
    TableAlreadyExistsError,
    TableNotFoundError,
)

DEFAULT_WAREHOUSE = "./warehouse"


def default_warehouse() -> str:
    """``LAKEHOUSE_WAREHOUSE``, else ``./warehouse``."""
    return os.environ.get("LAKEHOUSE_WAREHOUSE") or DEFAULT_WAREHOUSE


def default_type_handlers() -> list[PaimonTypeHandler]:
    return [ArrowHandler(), PolarsHandler(), SparkHandler()]


class PaimonIOManager(dg.ConfigurableIOManager):
    """Stores each asset as the Paimon table ``<key prefix>.<key name>`` of a filesystem warehouse.

    Definition metadata of an asset: ``database``/``table`` (override the key mapping), ``primary_keys``,
    ``partition_keys``, ``table_options`` (used when the table is created; an existing table must match them:
    `check_declaration`), ``partition_expr`` (partitioned assets), ``mode``, ``publish`` ("audit":
    write-audit-publish, see `lakehouse_assets.audit`); ``Output(..., metadata={"mode": ...})`` overrides the mode
    of one output. Inputs take ``AssetIn(metadata={"columns": [...]})`` and ``{"incremental": True}`` (see
    `lakehouse_assets.incremental`).
    """

    warehouse: str | None = Field(
        default=None, description="Warehouse path or URI; default LAKEHOUSE_WAREHOUSE, else ./warehouse"
    )
    options: dict[str, str] = Field(
        default_factory=dict, description="catalog options of s3:// warehouses (s3.endpoint, s3.access-key, ...); "
                                          "unset ones come from the AWS_* variables"
    )
    mode: str = Field(default="overwrite", description="overwrite | append | upsert (primary-key tables)")
    schema_mode: str = Field(default="strict", description="strict: new columns are refused; merge: added")
    default_database: str = Field(default=DEFAULT_DATABASE, description="database of single-part asset keys")
    # consumers to advance once the step's output is stored: (run id, step key) -> [(table, consumer id, snapshot)]
    _consumers: dict[tuple[str, str], list[tuple[str, str, int]]] = PrivateAttr(default_factory=dict)

    @classmethod
    def type_handlers(cls) -> Sequence[PaimonTypeHandler]:
        return default_type_handlers()

    @property
    def catalog(self) -> FileSystemCatalog:
        return FileSystemCatalog(self.warehouse or default_warehouse(), options=self.options or None)

    # ---- output ------------------------------------------------------------------------------
    def handle_output(self, context: dg.OutputContext, obj: Any) -> None:
        spec = self._spec(context.asset_key if context.has_asset_key else None, context.definition_metadata,
                          output=context.name)
        where = f"asset {spec.identifier!r}" if context.has_asset_key else f"output {context.name!r}"
        mode = raw(context.output_metadata.get("mode")) or spec.mode or self.mode
        check_mode(mode, where)
        if self.schema_mode not in SCHEMA_MODES:
            raise PaimonAssetError(f"PaimonIOManager: schema_mode must be one of {SCHEMA_MODES}, not {self.schema_mode!r}")
        handler = self._handler(type(obj), where)
        data = handler.prepare(obj)
        schema = handler.schema(data)
        catalog = self.catalog
        table = catalog.load_table(spec.identifier) if catalog.table_exists(spec.identifier) else None
        if table is not None:
            for warning in check_declaration(table, spec, where):
                context.log.warning(warning)
            self._check_columns(table, schema, where)
        if mode == "upsert" and not (table.primary_keys if table is not None else spec.primary_keys):
            raise PaimonAssetError(f"{where}: mode 'upsert' needs a primary-key table (metadata 'primary_keys')")

        slice_: PartitionSlice | None = None
        partition_keys = tuple(table.partition_keys) if table is not None else spec.partition_keys
        if context.has_asset_partitions:
            if table is None and not partition_keys:  # a new table of a partitioned asset: by partition_expr
                partition_keys = tuple(
                    partition_columns(context.asset_partitions_def, spec.partition_expr, where=where).values()
                )
            slice_ = partition_slice(
                context.asset_partitions_def, context.asset_partition_keys, spec.partition_expr,
                schema=table.arrow_schema if table is not None else schema,
                table_partition_keys=partition_keys, where=where,
            )
            slice_.check_rows(handler.distinct(data, slice_.columns), where=where)
        created = False
        if table is None:
            table, created = _create_table(catalog, spec, schema, partition_keys=partition_keys)
            if not created:  # another run created it meanwhile
                check_declaration(table, spec, where)

        overwrite_partitions = list(slice_.specs) if slice_ is not None and mode == "overwrite" else None
        audit = wants_audit(context.definition_metadata, where)
        try:
            target = open_audit_branch(table, context.run_id) if audit else table  # write-audit-publish: audit.py
            snapshot_id, write_details = handler.write_with_metadata(
                catalog, target, data, mode="overwrite" if mode == "overwrite" else "append",
                overwrite_partitions=overwrite_partitions, schema_mode=self.schema_mode)
        except BaseException:
            if audit and catalog.table_exists(spec.identifier):
                discard_audit_branch(catalog.load_table(spec.identifier), context.run_id)
            if created and catalog.load_table(spec.identifier).latest_snapshot() is None:
                catalog.drop_table(spec.identifier)  # the failed first write leaves no empty table behind
            raise
        table = catalog.load_table(spec.identifier)  # the schema may have evolved
        written = table.branch(target.current_branch) if audit else table
        metadata = table_metadata(written, partition_filter=slice_.filter() if slice_ else None,
                                  snapshot_id=snapshot_id, committed=snapshot_id is not None)
        if audit:
            metadata.update(audit_metadata(table, written))
        metadata["paimon/write_mode"] = mode
        metadata["paimon/committed"] = snapshot_id is not None
        metadata.update(write_details)
        lineage = declared_lineage(context.definition_metadata, where) or lineage_of_sources(
            handler.column_sources(data))
        if lineage is not None:
            metadata[LINEAGE] = lineage
        context.add_output_metadata(metadata)
        self._advance_consumers(context)

    def _advance_consumers(self, context: dg.OutputContext) -> None:
        """The step's incremental inputs were consumed: their upstream tables' consumers move to what it read."""
        if not self._consumers:  # no incremental input loaded (also: a context built outside a run has no step key)
            return
        for identifier, consumer, snapshot in self._consumers.pop((context.run_id, context.step_key), []):
            self.catalog.load_table(identifier).set_consumer(consumer, next_snapshot=snapshot)
            context.log.info(f"table {identifier!r}: consumer {consumer!r} at snapshot {snapshot}")

    def _check_columns(self, table: Table, schema: pa.Schema, where: str) -> None:
        new = [name for name in schema.names if name not in table.arrow_schema.names and name != ROW_KIND]
        if new and self.schema_mode == "strict":
            raise PaimonAssetError(
                f"{where}: columns {new} are not in table {table.identifier!r} and schema_mode is 'strict'; "
                "set PaimonIOManager(schema_mode='merge') to add them; nothing was written"
            )

    # ---- input -------------------------------------------------------------------------------
    def load_input(self, context: dg.InputContext) -> Any:
        upstream = context.upstream_output
        metadata = upstream.definition_metadata if upstream is not None else {}
        spec = self._spec(context.asset_key if context.has_asset_key else None, metadata,
                          output=upstream.name if upstream is not None else context.name)
        where = f"input {context.name!r} (table {spec.identifier!r})"
        target = context.dagster_type.typing_type
        handler = self._handler(target, where)
        try:
            table = self.catalog.load_table(spec.identifier)
        except TableNotFoundError as e:
            raise PaimonAssetError(f"{where}: the table does not exist yet; materialize the upstream asset first") from e
        if upstream is not None and wants_audit(metadata, where):  # this run's audit branch, until published
            table = pending_branch(self.catalog, context.instance, context.asset_key, run_id=upstream.run_id) or table
        columns = _columns(context, where)
        if wants_incremental(context):
            return self._load_changes(context, table, handler, target, columns, where)
        filter_ = None
        if context.has_asset_partitions:
            filter_ = partition_slice(
                context.asset_partitions_def, context.asset_partition_keys, spec.partition_expr,
                schema=table.arrow_schema, table_partition_keys=table.partition_keys, where=where,
            ).filter()
        return handler.read(table, target, filter=filter_, columns=columns, snapshot_id=None)

    def _load_changes(self, context: dg.InputContext, table: Table, handler: PaimonTypeHandler, target: Any,
                      columns: list[str] | None, where: str) -> Any:
        cursor = IncrementalCursor(context)
        consumed = cursor.consumed(context.asset_key)
        if consumed is not None:  # what the last successful run read: pinned (again) while this one reads on
            table.set_consumer(cursor.consumer_id, next_snapshot=consumed)
        latest = table.latest_snapshot()
        if latest is None:
            raise PaimonAssetError(f"{where}: the table has no snapshot yet; materialize the upstream asset first")
        steps = change_plan(table, consumed, latest.id, where=where)
        data = handler.read_changes(table, target, steps=steps, columns=columns)
        cursor.record(context.asset_key, latest.id)
        self._consumers.setdefault(cursor.step_key, []).append((table.identifier, cursor.consumer_id, latest.id))
        context.log.info(f"{where}: changes after snapshot {consumed} up to {latest.id}: {plan_steps(steps)}")
        return data

    # ---- shared ------------------------------------------------------------------------------
    def _spec(self, asset_key: dg.AssetKey | None, metadata: Any, *, output: str) -> TableSpec:
        if asset_key is None:
            raise PaimonAssetError(
                f"output {output!r} is not an asset: PaimonIOManager stores assets only; give op outputs "
                "another io_manager_key"
            )
        return table_spec(asset_key, metadata or {}, default_database=self.default_database)

    def _handler(self, python_type: Any, where: str) -> PaimonTypeHandler:
        if python_type in (Any, object, None):
            python_type = pa.Table
        for handler in self.type_handlers():
            if isinstance(python_type, type) and issubclass(python_type, handler.supported_types):
                return handler
        supported = sorted(t.__module__.split(".")[0] + "." + t.__name__ for h in self.type_handlers()
                           for t in h.supported_types)
        raise PaimonAssetError(f"{where}: PaimonIOManager cannot handle {python_type!r}; it handles {supported}")


def _columns(context: dg.InputContext, where: str) -> list[str] | None:
    columns = raw(context.definition_metadata.get("columns"))
    if columns is None:
        return None
    if not isinstance(columns, list | tuple) or not all(isinstance(c, str) for c in columns):
        raise PaimonAssetError(f"{where}: metadata 'columns' must be a list of column names, not {columns!r}")
    return list(columns)


def _create_table(catalog: FileSystemCatalog, spec: TableSpec, schema: pa.Schema, *,
                  partition_keys: Sequence[str]) -> tuple[Table, bool]:
    """Create the table from the data's schema; (table, whether this call created it: a concurrent creation of
    the same table, e.g. another partition's run, wins)."""
    fields = [f for f in schema if f.name != ROW_KIND]
    catalog.create_database(spec.database, exist_ok=True)
    try:
        return catalog.create_table(spec.identifier, pa.schema(fields), primary_keys=spec.primary_keys,
                                    partition_keys=partition_keys, options=spec.options), True
    except TableAlreadyExistsError:
        return catalog.load_table(spec.identifier), False
