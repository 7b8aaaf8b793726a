"""Turns user data (pyarrow / polars) into an Arrow table of exactly the table's columns, validated.

Input types are converted only where no value can change meaning (table_format.conversion).

Every rejection names the table and the column, and happens before any file is written.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from table_format.arrow_types import to_arrow_schema
from table_format.conversion import conversion_refusal
from table_format.errors import SchemaError
from table_format.row.row_kind import ROW_KIND_COLUMN, row_kinds_from_column
from table_format.schema import TableSchema

ROWKIND_FIELD = "rowkind.field"


def to_arrow_table(data: Any, *, table: str) -> pa.Table:
    if isinstance(data, pa.Table):
        return data
    if isinstance(data, pa.RecordBatch):
        return pa.Table.from_batches([data])
    if isinstance(data, pa.RecordBatchReader):
        return data.read_all()
    to_arrow = getattr(data, "to_arrow", None)  # polars.DataFrame (and other Arrow producers)
    if callable(to_arrow):
        result = to_arrow()
        if isinstance(result, pa.Table):
            return result
    if hasattr(data, "__arrow_c_stream__"):
        return pa.table(data)
    raise SchemaError(
        f"table {table!r}: cannot write {type(data).__name__}; pass a pyarrow.Table, RecordBatchReader "
        "or polars.DataFrame"
    )


def conform(data: Any, schema: TableSchema, *, table: str) -> tuple[pa.Table, pa.Array | None]:
    """(data with the table's columns in schema order and Arrow types, int8 row kinds or None)."""
    src = to_arrow_table(data, table=table)
    kinds = None
    if ROW_KIND_COLUMN in src.column_names:
        kinds = row_kinds_from_column(src.column(ROW_KIND_COLUMN), table=table)
        src = src.drop_columns([ROW_KIND_COLUMN])
    kind_field = schema.options.get(ROWKIND_FIELD)
    if kind_field:  # RowKindGenerator: a real column of the table gives each row's kind (it stays stored)
        if kinds is not None:
            raise SchemaError(
                f"table {table!r}: option {ROWKIND_FIELD!r} = {kind_field!r} gives the row kinds; "
                f"do not pass a {ROW_KIND_COLUMN!r} column too"
            )
        if kind_field in src.column_names:
            kinds = row_kinds_from_column(src.column(kind_field), table=table, name=kind_field)
    target = to_arrow_schema(schema.fields)
    names = src.column_names
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise SchemaError(f"table {table!r}: input has duplicate columns {dupes}")
    missing = [n for n in target.names if n not in names]
    extra = [n for n in names if n not in target.names]
    if missing or extra:
        parts = []
        if missing:
            parts.append(f"missing columns {missing}")
        if extra:
            parts.append(f"unknown columns {extra}")
        raise SchemaError(f"table {table!r}: input does not match the schema: {'; '.join(parts)} "
                          f"(table columns: {target.names})")
    arrays = []
    for f, field in zip(target, schema.fields, strict=True):
        col = src.column(f.name)
        if col.type != f.type:
            col = _convert(col, f, str(field.type), table)
        if not f.nullable and col.null_count:
            raise SchemaError(f"table {table!r}: column {f.name!r} is NOT NULL but the input has {col.null_count} null(s)")
        arrays.append(col)
    return pa.Table.from_arrays(arrays, schema=target), kinds


def _convert(col: pa.ChunkedArray, f: pa.Field, paimon_type: str, table: str) -> pa.ChunkedArray:
    """The column as the table's Arrow type, if no value can change meaning (conversion_refusal), else SchemaError."""
    reason = conversion_refusal(col.type, f.type)
    if reason is not None:
        raise SchemaError(
            f"table {table!r}: column {f.name!r} of input type {col.type} cannot be stored as the table's type "
            f"{paimon_type}: {reason}"
        )
    try:
        return pc.cast(col, f.type, safe=True)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as e:
        raise SchemaError(
            f"table {table!r}: column {f.name!r} of input type {col.type} cannot be stored as the table's type "
            f"{paimon_type}: {e}"
        ) from None
