"""Schema modes of a write: "strict" refuses input columns the table lacks; "merge" evolves the table to take them.

In merge mode the writer applies `schema_evolution.merge_changes` (new columns added, safe widenings) to its
schema as input arrives and writes its files with the evolved schema's id. The evolved schema versions are
published (create-if-absent) only when the writer prepares its commit, after every data file is written, so a
write that fails before that leaves the table exactly as it was. Writers that evolve identically (executors of
one distributed write) publish the same schema: the second finds it there and goes on. A different schema
under that id is a SchemaConflictError: the writer's files must be discarded and the write redone.
"""

from __future__ import annotations

import dataclasses

import pyarrow as pa
import pyarrow.compute as pc

from table_format.arrow_types import to_arrow_field
from table_format.errors import SchemaConflictError, SchemaError
from table_format.row.row_kind import ROW_KIND_COLUMN
from table_format.schema import TableSchema
from table_format.schema_evolution import UpdateColumnType, apply_changes, merge_changes, missing_columns
from table_format.store.file_store import FileStore

SCHEMA_MODES = ("strict", "merge")


def check_schema_mode(schema_mode: str, *, table: str) -> None:
    if schema_mode not in SCHEMA_MODES:
        raise SchemaError(f"table {table!r}: schema_mode must be 'strict' or 'merge', not {schema_mode!r}")


def refuse_new_columns(schema: TableSchema, input_schema: pa.Schema, *, table: str) -> None:
    """Strict mode: input columns the table lacks are an error that says how to add them."""
    extra = [n for n in input_schema.names if n != ROW_KIND_COLUMN and n not in schema.field_names]
    if extra:
        raise SchemaError(
            f"table {table!r}: input has column(s) {extra} that the table lacks (table columns: {schema.field_names}); "
            "pass schema_mode='merge' to add them, or alter the table with SchemaChange.add_column"
        )


def widening_hint(schema: TableSchema, input_schema: pa.Schema, *, table: str) -> str | None:
    """Strict mode: for input columns wider than the table's (which the conversion refuses), how to widen them."""
    wider = [c for c in merge_changes(schema, input_schema, table=table) if isinstance(c, UpdateColumnType)]
    if not wider:
        return None
    what = ", ".join(f"{c.name!r} ({schema.field(c.name).type.copy(nullable=True)} -> {c.type})" for c in wider)
    return f"schema_mode='merge' widens {what}, as does SchemaChange.update_column_type"


def conform_to(rows: pa.Table, schema: TableSchema) -> pa.Table:
    """Rows of an older schema version as rows of `schema`: widened columns cast, new columns null."""
    arrays, fields = [], []
    for f in schema.fields:
        field = to_arrow_field(f)
        if f.name in rows.column_names:
            col = rows.column(f.name)
            arrays.append(col if col.type == field.type else pc.cast(col, field.type))
        else:
            arrays.append(pa.nulls(rows.num_rows, field.type))
        fields.append(field)
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields))


def equivalent(a: TableSchema, b: TableSchema) -> bool:
    """The same schema version apart from its creation time."""
    return dataclasses.replace(a, time_millis=b.time_millis) == b


class SchemaMerger:
    """The schema versions one merge-mode writer evolved through, not yet published."""

    def __init__(self) -> None:
        self.pending: list[TableSchema] = []

    def evolve(self, store: FileStore, data: pa.Table) -> FileStore:
        """The store at a schema that holds every column of `data` (a new pending version if needed)."""
        changes = merge_changes(store.schema, data.schema, table=store.identifier)
        if not changes:
            return store
        new = apply_changes(store.schema, changes, table=store.identifier, has_snapshots=True)
        self.pending.append(new)
        return store.with_schema(new)

    @staticmethod
    def fill_missing(schema: TableSchema, data: pa.Table) -> pa.Table:
        """Nullable table columns the input lacks are written as nulls (NOT NULL ones stay missing: an error)."""
        nullable = [n for n in missing_columns(schema, data.schema) if schema.field(n).type.nullable]
        for name in nullable:
            field = to_arrow_field(schema.field(name))
            data = data.append_column(field, pa.nulls(data.num_rows, field.type))
        return data

    def publish(self, store: FileStore) -> None:
        """Publish the pending versions in order; identical ones published by another writer are fine."""
        for schema in self.pending:
            if store.schemas.commit(schema):
                continue
            existing = store.schemas.schema(schema.id)
            if not equivalent(existing, schema):
                raise SchemaConflictError(
                    f"table {store.identifier!r}: another writer changed the schema (schema-{schema.id}) while this "
                    "write evolved it; nothing was committed: write again"
                )
        self.pending.clear()
