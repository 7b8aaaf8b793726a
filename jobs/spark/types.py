"""Spark types <-> the Arrow types of Paimon tables (table_format.arrow_types), with errors naming the column.

Paimon -> Spark (reads): BOOLEAN, TINYINT, SMALLINT, INT, BIGINT, FLOAT, DOUBLE, DECIMAL(p, s), CHAR/VARCHAR/STRING
(StringType), BINARY/VARBINARY/BYTES (BinaryType), DATE, TIME(p) (TimeType), TIMESTAMP(p) (TimestampNTZType),
TIMESTAMP(p) WITH LOCAL TIME ZONE (TimestampType), ARRAY, MAP, MULTISET (MAP<element, INT>), ROW (StructType).
Spark keeps microseconds: TIMESTAMP(7..9) values are read truncated to microseconds.

Spark -> Paimon (writes): each Spark column must exist in the table and convert to its type without loss;
TimestampType (with time zone) goes only into TIMESTAMP WITH LOCAL TIME ZONE columns, TimestampNTZType only into
TIMESTAMP columns, like Paimon's own Spark connector.
"""

from __future__ import annotations

import pyarrow as pa
from pyspark.sql import types as st
from pyspark.sql.pandas.types import to_arrow_schema as spark_to_arrow_schema

from table_format import SchemaError

_SIMPLE: list[tuple[pa.DataType, st.DataType]] = [
    (pa.bool_(), st.BooleanType()),
    (pa.int8(), st.ByteType()),
    (pa.int16(), st.ShortType()),
    (pa.int32(), st.IntegerType()),
    (pa.int64(), st.LongType()),
    (pa.float32(), st.FloatType()),
    (pa.float64(), st.DoubleType()),
    (pa.string(), st.StringType()),
    (pa.large_string(), st.StringType()),
    (pa.binary(), st.BinaryType()),
    (pa.large_binary(), st.BinaryType()),
    (pa.date32(), st.DateType()),
]

SPARK_MAX_DECIMAL_DIGITS = 38
SPARK_TIMEZONE = "UTC"  # the time zone of TimestampType values in the Arrow batches Spark exchanges with Python


def spark_type(arrow_type: pa.DataType, *, where: str) -> st.DataType:
    """The Spark type that holds values of a table column of this Arrow type; SchemaError when none does."""
    for a, s in _SIMPLE:
        if arrow_type == a:
            return s
    if pa.types.is_decimal(arrow_type):
        if arrow_type.precision > SPARK_MAX_DECIMAL_DIGITS:
            raise SchemaError(f"{where}: {arrow_type} has more than 38 digits, which Spark cannot hold")
        return st.DecimalType(arrow_type.precision, arrow_type.scale)
    if pa.types.is_timestamp(arrow_type):
        return st.TimestampType() if arrow_type.tz is not None else st.TimestampNTZType()
    if pa.types.is_time(arrow_type):
        return st.TimeType()
    if pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type):
        item = arrow_type.value_field
        return st.ArrayType(spark_type(item.type, where=f"{where} (element)"), containsNull=item.nullable)
    if pa.types.is_map(arrow_type):
        key, item = arrow_type.key_field, arrow_type.item_field
        return st.MapType(spark_type(key.type, where=f"{where} (key)"),
                          spark_type(item.type, where=f"{where} (value)"), valueContainsNull=item.nullable)
    if pa.types.is_struct(arrow_type):
        return st.StructType([
            st.StructField(f.name, spark_type(f.type, where=f"{where}.{f.name}"), nullable=f.nullable)
            for f in arrow_type
        ])
    raise SchemaError(f"{where}: Arrow type {arrow_type} has no Spark equivalent")


def spark_schema(arrow_schema: pa.Schema, *, table: str) -> st.StructType:
    """The Spark schema of a table's columns (Paimon NOT NULL -> nullable=False)."""
    return st.StructType([
        st.StructField(f.name, spark_type(f.type, where=f"table {table!r} column {f.name!r}"), nullable=f.nullable)
        for f in arrow_schema
    ])


def exchange_schema(schema: st.StructType) -> pa.Schema:
    """The exact Arrow schema of the batches Spark exchanges with Python for this Spark schema."""
    return spark_to_arrow_schema(schema, timezone=SPARK_TIMEZONE)


def to_exchange(table: pa.Table, target: pa.Schema) -> pa.Table:
    """A table's data in the exact Arrow types Spark expects (microsecond timestamps, Spark's nested names)."""
    if table.schema.equals(target):
        return table
    arrays = []
    for field, column in zip(target, table.columns, strict=True):
        if column.type != field.type:
            # nanosecond timestamps are truncated to Spark's microseconds (documented in the module docstring)
            column = column.cast(field.type, safe=not _is_narrowing_timestamp(column.type, field.type))
        arrays.append(column)
    return pa.Table.from_arrays(arrays, schema=target)


def _is_narrowing_timestamp(source: pa.DataType, target: pa.DataType) -> bool:
    return pa.types.is_timestamp(source) and pa.types.is_timestamp(target) and source.unit == "ns"


def check_writable(schema: st.StructType, table_schema: pa.Schema, *, table: str) -> None:
    """Refuse, before any task runs, a DataFrame whose columns do not fit the table (names, types, time zones)."""
    incoming = exchange_schema(schema)
    names = incoming.names
    wanted = table_schema.names
    missing = [n for n in wanted if n not in names]
    extra = [n for n in names if n not in wanted and n != "_row_kind"]
    if missing or extra:
        parts = ([f"missing columns {missing}"] if missing else []) + ([f"unknown columns {extra}"] if extra else [])
        raise SchemaError(f"table {table!r}: the DataFrame does not match the table: {'; '.join(parts)} "
                          f"(table columns: {wanted})")
    for field in incoming:
        if field.name == "_row_kind":
            continue
        target = table_schema.field(field.name).type
        _check_type(field.type, target, where=f"table {table!r} column {field.name!r}")


def _check_type(source: pa.DataType, target: pa.DataType, *, where: str) -> None:
    if pa.types.is_timestamp(source) and pa.types.is_timestamp(target):
        if (source.tz is None) != (target.tz is None):
            wanted = "TimestampType (TIMESTAMP WITH LOCAL TIME ZONE)" if target.tz else "TimestampNTZType (TIMESTAMP)"
            raise SchemaError(f"{where}: needs Spark {wanted} values, got {_spark_name(source)}; cast the column")
        return
    if pa.types.is_struct(source) and pa.types.is_struct(target):
        if [f.name for f in source] != [f.name for f in target]:
            raise SchemaError(f"{where}: struct fields {[f.name for f in source]} differ from the table's "
                              f"{[f.name for f in target]}")
        for s, t in zip(source, target, strict=True):
            _check_type(s.type, t.type, where=f"{where}.{s.name}")
        return
    if pa.types.is_list(source) and (pa.types.is_list(target) or pa.types.is_large_list(target)):
        _check_type(source.value_type, target.value_type, where=f"{where} (element)")
        return
    if pa.types.is_map(source) and pa.types.is_map(target):
        _check_type(source.key_type, target.key_type, where=f"{where} (key)")
        _check_type(source.item_type, target.item_type, where=f"{where} (value)")
        return
    if source == target:
        return
    try:
        pa.array([], type=source).cast(target)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
        raise SchemaError(f"{where}: Spark {_spark_name(source)} cannot be stored as {target}") from None


def _spark_name(arrow_type: pa.DataType) -> str:
    if pa.types.is_timestamp(arrow_type):
        return "TimestampType" if arrow_type.tz else "TimestampNTZType"
    return str(arrow_type)


def to_table_units(batch: pa.RecordBatch, table_schema: pa.Schema, *, table: str) -> pa.RecordBatch:
    """Spark hands timestamps in microseconds only: bring top-level timestamp columns to a coarser table unit
    (TIMESTAMP(0..3)) when no value loses precision, else a SchemaError naming the column."""
    arrays = list(batch.columns)
    changed = False
    for i, field in enumerate(batch.schema):
        if field.name not in table_schema.names:
            continue
        wanted = table_schema.field(field.name).type
        if not (pa.types.is_timestamp(field.type) and pa.types.is_timestamp(wanted)) or field.type.unit == wanted.unit:
            continue
        if (field.type.tz is None) != (wanted.tz is None) or wanted.unit == "ns":
            continue  # the table's own checks explain these (time zone kind; widening is lossless)
        try:
            arrays[i] = arrays[i].cast(pa.timestamp(wanted.unit, tz=field.type.tz), safe=True)
        except pa.ArrowInvalid:
            raise SchemaError(f"table {table!r} column {field.name!r}: a Spark timestamp has more precision than the "
                              f"table's TIMESTAMP unit {wanted.unit!r}; truncate it in Spark (date_trunc) first") from None
        changed = True
    if not changed:
        return batch
    return pa.RecordBatch.from_arrays(arrays, names=batch.schema.names)
