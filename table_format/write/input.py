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
        if _has_required_parts(f.type):
            for chunk in col.chunks:
                where = _null_in_required_part(chunk)
                if where:
                    raise SchemaError(f"table {table!r}: column {f.name!r}: {where} is NOT NULL but the input has nulls")
        arrays.append(col)
    return pa.Table.from_arrays(arrays, schema=target), kinds


def _convert(col: pa.ChunkedArray, f: pa.Field, paimon_type: str, table: str) -> pa.ChunkedArray:
    """The column as the table's Arrow type, if no value can change meaning (conversion_refusal), else SchemaError."""
    reason = conversion_refusal(col.type, f.type)
    if reason is not None:
        raise SchemaError(
            f"table {table!r}: column {f.name!r} of input type {col.type} cannot be stored as the table's type "
            f"{paimon_type}: {reason}. Only conversions that keep every value are automatic: convert the column "
            f"yourself (to {f.type}; table.arrow_schema has every column's type) where you accept the change"
        )
    try:
        return pc.cast(col, f.type, safe=True)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as e:
        raise SchemaError(
            f"table {table!r}: column {f.name!r} of input type {col.type} cannot be stored as the table's type "
            f"{paimon_type}: {e}"
        ) from None


def _children(t: pa.DataType) -> list[pa.Field]:
    if pa.types.is_struct(t):
        return [t.field(i) for i in range(t.num_fields)]
    if pa.types.is_map(t):
        return [t.key_field, t.item_field]
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        return [t.value_field]
    return []


def _has_required_parts(t: pa.DataType) -> bool:
    return any(not c.nullable or _has_required_parts(c.type) for c in _children(t))


def _null_in_required_part(arr: pa.Array) -> str | None:
    """Where a NOT NULL field, element or map value nested in `arr` holds a null under a non-null parent (vectorized:
    pyarrow casts do not check nested nullability, except for struct fields)."""
    t = arr.type
    if pa.types.is_struct(t):  # struct_field: a child is null where its parent is
        parts = [(f"field {f.name!r}", f, pc.struct_field(arr, [i])) for i, f in enumerate(_children(t))]
        parent_valid = pc.is_valid(arr)
    elif pa.types.is_map(t):
        # a map is a list of (key, value) structs: viewed as one, flatten gives the entries of the non-null maps
        entries = arr.view(pa.list_(pa.struct([("key", t.key_type), ("value", t.item_type)]))).flatten()
        parts = [("map key", t.key_field, entries.field(0)), ("map value", t.item_field, entries.field(1))]
        parent_valid = None
    elif _children(t):
        parts = [("list element", t.value_field, arr.flatten())]
        parent_valid = None
    else:
        return None
    for label, f, values in parts:
        nulls = pc.is_null(values) if parent_valid is None else pc.and_(pc.is_null(values), parent_valid)
        if not f.nullable and values.null_count and pc.any(nulls).as_py():
            return label
        inner = _null_in_required_part(values)
        if inner:
            return f"{label}: {inner}"
    return None
