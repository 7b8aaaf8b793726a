"""The schema changes that let a table take an input's columns (write_table(..., schema_mode="merge")).

Columns the input has and the table lacks are added (nullable, in input order, after the last column).
Columns whose input type is a widening of the table's type (schema_evolution.widening: wider integers, FLOAT ->
DOUBLE, more DECIMAL digits, ...) are widened, except primary-key, partition and bucket-key columns, which
keep their type. Anything else is left to the strict input conversion, which refuses what does not fit.
"""

from __future__ import annotations

import pyarrow as pa

from table_format.arrow_types import from_arrow_type
from table_format.errors import SchemaError
from table_format.row.row_kind import ROW_KIND_COLUMN
from table_format.schema import TableSchema
from table_format.schema_evolution.changes import AddColumn, SchemaChange, UpdateColumnType
from table_format.schema_evolution.widening import same_type, widening_problem
from table_format.types import CharType, VarBinaryType, VarCharType, is_atomic

# length-only widenings are not made from input: Arrow strings and binaries carry no length
_LENGTH_TYPES = (CharType, VarCharType, VarBinaryType)


def _value_type(t: pa.DataType) -> pa.DataType:
    return t.value_type if pa.types.is_dictionary(t) else t


def merge_changes(schema: TableSchema, input_schema: pa.Schema, *, table: str) -> list[SchemaChange]:
    """Changes making `schema` hold every column of `input_schema` (empty when it already does)."""
    changes: list[SchemaChange] = []
    fixed = set(schema.primary_keys) | set(schema.partition_keys) | set(schema.bucket_keys)
    for f in input_schema:
        if f.name == ROW_KIND_COLUMN:
            continue
        try:
            new_type = from_arrow_type(_value_type(f.type), nullable=True, where=f.name)
        except SchemaError as e:
            if f.name in schema.field_names:
                continue  # no Paimon type of its own: the input conversion decides
            raise SchemaError(f"table {table!r}: cannot add column {f.name!r}: {e}") from None
        if f.name not in schema.field_names:
            changes.append(AddColumn(f.name, new_type))
            continue
        current = schema.field(f.name).type
        if (f.name in fixed or same_type(current, new_type) or not is_atomic(current)
                or isinstance(new_type, _LENGTH_TYPES) or widening_problem(current, new_type) is not None):
            continue
        changes.append(UpdateColumnType(f.name, new_type))
    return changes


def missing_columns(schema: TableSchema, input_schema: pa.Schema) -> list[str]:
    """Table columns the input lacks."""
    have = set(input_schema.names)
    return [n for n in schema.field_names if n not in have]
