"""Paimon types and schemas <-> Arrow types and schemas, with Paimon field ids in the field metadata.

Mirrors the type bands of Paimon's Parquet writer (ParquetSchemaConverter): TIMESTAMP(p) uses ms for
p <= 3, us for 4..6 and ns for 7..9, so values keep their meaning for readers that trust the precision.
"""

from __future__ import annotations

import pyarrow as pa

from table_format.errors import SchemaError
from table_format.types import (
    MAX_LENGTH,
    ArrayType,
    BigIntType,
    BinaryType,
    BooleanType,
    CharType,
    DataField,
    DataType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntType,
    LocalZonedTimestampType,
    MapType,
    MultisetType,
    RowType,
    SmallIntType,
    TimestampType,
    TimeType,
    TinyIntType,
    VarBinaryType,
    VarCharType,
)

FIELD_ID_KEY = b"PARQUET:field_id"

_SIMPLE: dict[type[DataType], pa.DataType] = {
    BooleanType: pa.bool_(),
    TinyIntType: pa.int8(),
    SmallIntType: pa.int16(),
    IntType: pa.int32(),
    BigIntType: pa.int64(),
    FloatType: pa.float32(),
    DoubleType: pa.float64(),
    DateType: pa.date32(),
    VarCharType: pa.string(),
    CharType: pa.string(),
    VarBinaryType: pa.binary(),
    BinaryType: pa.binary(),
}


def timestamp_unit(precision: int) -> str:
    return "ms" if precision <= 3 else "us" if precision <= 6 else "ns"


def to_arrow_type(t: DataType) -> pa.DataType:
    """The Arrow type that holds values of Paimon type t."""
    simple = _SIMPLE.get(type(t))
    if simple is not None:
        return simple
    if isinstance(t, DecimalType):
        return pa.decimal128(t.precision, t.scale)
    if isinstance(t, TimeType):
        return pa.time32("ms") if t.precision <= 3 else pa.time64("us" if t.precision <= 6 else "ns")
    if isinstance(t, TimestampType):
        return pa.timestamp(timestamp_unit(t.precision))
    if isinstance(t, LocalZonedTimestampType):
        return pa.timestamp(timestamp_unit(t.precision), tz="UTC")
    if isinstance(t, ArrayType):
        return pa.list_(pa.field("element", to_arrow_type(t.element), nullable=t.element.nullable))
    if isinstance(t, MultisetType):
        return pa.map_(to_arrow_type(t.element), pa.int32())
    if isinstance(t, MapType):
        return pa.map_(
            pa.field("key", to_arrow_type(t.key), nullable=False),
            pa.field("value", to_arrow_type(t.value), nullable=t.value.nullable),
        )
    if isinstance(t, RowType):
        return pa.struct([to_arrow_field(f) for f in t.fields])
    raise SchemaError(f"no Arrow type for Paimon type {t}")


def to_arrow_field(f: DataField) -> pa.Field:
    return pa.field(
        f.name, to_arrow_type(f.type), nullable=f.type.nullable, metadata={FIELD_ID_KEY: str(f.id).encode()}
    )


def to_arrow_schema(fields: list[DataField] | tuple[DataField, ...]) -> pa.Schema:
    return pa.schema([to_arrow_field(f) for f in fields])


def from_arrow_type(t: pa.DataType, *, nullable: bool = True, where: str = "") -> DataType:
    """The Paimon type for an Arrow type (used when a table is created from a pyarrow schema)."""
    if pa.types.is_boolean(t):
        return BooleanType(nullable=nullable)
    if pa.types.is_int8(t):
        return TinyIntType(nullable=nullable)
    if pa.types.is_int16(t):
        return SmallIntType(nullable=nullable)
    if pa.types.is_int32(t):
        return IntType(nullable=nullable)
    if pa.types.is_int64(t):
        return BigIntType(nullable=nullable)
    if pa.types.is_float32(t):
        return FloatType(nullable=nullable)
    if pa.types.is_float64(t):
        return DoubleType(nullable=nullable)
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return VarCharType(MAX_LENGTH, nullable=nullable)
    if pa.types.is_fixed_size_binary(t):
        return BinaryType(t.byte_width, nullable=nullable)
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_binary_view(t):
        return VarBinaryType(MAX_LENGTH, nullable=nullable)
    if pa.types.is_date32(t) or pa.types.is_date64(t):
        return DateType(nullable=nullable)
    if pa.types.is_decimal(t):
        return DecimalType(t.precision, t.scale, nullable=nullable)
    if pa.types.is_time(t):
        return TimeType({"s": 0, "ms": 3, "us": 6, "ns": 9}[t.unit], nullable=nullable)
    if pa.types.is_timestamp(t):
        p = {"s": 0, "ms": 3, "us": 6, "ns": 9}[t.unit]
        if t.tz is not None:
            return LocalZonedTimestampType(p, nullable=nullable)
        return TimestampType(p, nullable=nullable)
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        vf = t.value_field
        return ArrayType(from_arrow_type(vf.type, nullable=vf.nullable, where=where), nullable=nullable)
    if pa.types.is_map(t):
        return MapType(
            from_arrow_type(t.key_type, nullable=False, where=where),
            from_arrow_type(t.item_type, nullable=t.item_field.nullable, where=where),
            nullable=nullable,
        )
    if pa.types.is_struct(t):
        # ids are assigned later by the schema builder; -1 marks "not yet assigned"
        sub = tuple(
            DataField(-1, t.field(i).name, from_arrow_type(t.field(i).type, nullable=t.field(i).nullable))
            for i in range(t.num_fields)
        )
        return RowType(sub, nullable=nullable)
    raise SchemaError(f"Arrow type {t} of column {where!r} has no Paimon equivalent")
