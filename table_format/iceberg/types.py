"""Paimon types and values as Iceberg sees them: schema JSON, partition specs, single-value bound encoding.

Iceberg field ids are Paimon's own field ids (as Java Paimon 1.0+ writes them), so a column keeps its id through
renames and Iceberg readers resolve evolved schemas by id. Nested types (ARRAY, MAP, MULTISET, ROW) and timestamps
finer than microseconds have no Iceberg form here: a table with such a column is refused by name.
"""

from __future__ import annotations

import datetime as dt
import decimal
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from table_format.errors import UnsupportedFeatureError
from table_format.schema import TableSchema
from table_format.types import (
    BigIntType,
    BinaryType,
    BooleanType,
    CharType,
    DataType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntType,
    LocalZonedTimestampType,
    SmallIntType,
    TimestampType,
    TimeType,
    TinyIntType,
    VarBinaryType,
    VarCharType,
)

PARTITION_FIELD_ID_START = 1000
_EPOCH = dt.date(1970, 1, 1)
_EPOCH_TS = dt.datetime(1970, 1, 1)
_EPOCH_TSZ = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)


def iceberg_type(data_type: DataType, *, table: str, column: str) -> str:
    """The Iceberg primitive type name of a Paimon type, or UnsupportedFeatureError naming the column."""
    t = data_type
    if isinstance(t, BooleanType):
        return "boolean"
    if isinstance(t, TinyIntType | SmallIntType | IntType):
        return "int"
    if isinstance(t, BigIntType):
        return "long"
    if isinstance(t, FloatType):
        return "float"
    if isinstance(t, DoubleType):
        return "double"
    if isinstance(t, DecimalType):
        return f"decimal({t.precision}, {t.scale})"
    if isinstance(t, CharType | VarCharType):
        return "string"
    if isinstance(t, BinaryType | VarBinaryType):
        return "binary"
    if isinstance(t, DateType):
        return "date"
    if isinstance(t, TimeType):
        return "time"
    if isinstance(t, TimestampType | LocalZonedTimestampType) and t.precision <= 6:
        return "timestamptz" if isinstance(t, LocalZonedTimestampType) else "timestamp"
    raise UnsupportedFeatureError(
        f"table {table!r}: column {column!r} of type {data_type} has no Iceberg metadata form here "
        "(nested types and timestamps finer than microseconds are not exposed; option 'metadata.iceberg.storage')"
    )


def schema_json(schema: TableSchema, *, table: str) -> dict[str, Any]:
    """An Iceberg schema (struct) with Paimon's field ids."""
    return {
        "type": "struct",
        "schema-id": schema.id,
        "fields": [
            {"id": f.id, "name": f.name, "required": not f.type.nullable,
             "type": iceberg_type(f.type, table=table, column=f.name),
             **({"doc": f.description} if f.description else {})}
            for f in schema.fields
        ],
    }


@dataclass(frozen=True)
class PartitionField:
    """One identity partition field of the spec: source column, Iceberg type, partition field id."""

    name: str
    source_id: int
    field_id: int
    type_name: str


def partition_fields(schema: TableSchema, *, table: str) -> list[PartitionField]:
    by_name = {f.name: f for f in schema.fields}
    return [PartitionField(k, by_name[k].id, PARTITION_FIELD_ID_START + i,
                           iceberg_type(by_name[k].type, table=table, column=k))
            for i, k in enumerate(schema.partition_keys)]


def partition_spec_json(fields: Sequence[PartitionField]) -> dict[str, Any]:
    return {"spec-id": 0, "fields": [{"name": f.name, "transform": "identity", "source-id": f.source_id,
                                      "field-id": f.field_id} for f in fields]}


def avro_type(type_name: str) -> Any:
    """The Avro type a value of this Iceberg type has in a manifest's partition record."""
    if type_name in ("boolean", "int", "long", "float", "double", "string"):
        return type_name
    if type_name == "binary":
        return "bytes"
    if type_name == "date":
        return {"type": "int", "logicalType": "date"}
    if type_name == "time":
        return {"type": "long", "logicalType": "time-micros"}
    if type_name in ("timestamp", "timestamptz"):
        return {"type": "long", "logicalType": "timestamp-micros", "adjust-to-utc": type_name == "timestamptz"}
    if type_name.startswith("decimal"):
        precision, scale = (int(x) for x in type_name[len("decimal("):-1].split(","))
        return {"type": "fixed", "name": f"decimal_{precision}_{scale}", "size": _decimal_size(precision),
                "logicalType": "decimal", "precision": precision, "scale": scale}
    raise ValueError(type_name)


def _decimal_size(precision: int) -> int:
    size = 1
    while 10 ** precision > 2 ** (8 * size - 1):
        size += 1
    return size


def _micros(value: dt.datetime) -> int:
    if value.tzinfo is not None:
        delta = value - _EPOCH_TSZ
    else:
        delta = value - _EPOCH_TS
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def _time_micros(value: dt.time) -> int:
    return ((value.hour * 60 + value.minute) * 60 + value.second) * 1_000_000 + value.microsecond


def avro_value(type_name: str, value: Any) -> Any:
    """A Python value as fastavro writes it for `avro_type(type_name)` (logical types as raw numbers/bytes)."""
    if value is None:
        return None
    if type_name == "date":
        return (value - _EPOCH).days if isinstance(value, dt.date) else int(value)
    if type_name == "time":
        return _time_micros(value) if isinstance(value, dt.time) else int(value)
    if type_name in ("timestamp", "timestamptz"):
        return _micros(value) if isinstance(value, dt.datetime) else int(value)
    if type_name.startswith("decimal"):
        return value if isinstance(value, decimal.Decimal) else decimal.Decimal(value)
    return value


def single_value(type_name: str, value: Any) -> bytes:
    """Iceberg's binary single-value serialization (used for column bounds and partition summaries)."""
    if type_name == "boolean":
        return b"\x01" if value else b"\x00"
    if type_name == "int":
        return struct.pack("<i", int(value))
    if type_name == "long":
        return struct.pack("<q", int(value))
    if type_name == "float":
        return struct.pack("<f", float(value))
    if type_name == "double":
        return struct.pack("<d", float(value))
    if type_name == "string":
        return value.encode("utf-8")
    if type_name == "binary":
        return bytes(value)
    if type_name == "date":
        return struct.pack("<i", avro_value("date", value))
    if type_name in ("time", "timestamp", "timestamptz"):
        return struct.pack("<q", avro_value(type_name, value))
    if type_name.startswith("decimal"):
        unscaled = int(decimal.Decimal(value).scaleb(int(type_name[:-1].split(",")[1])))
        length = max(1, (unscaled.bit_length() + 8) // 8)
        return unscaled.to_bytes(length, "big", signed=True)
    raise ValueError(type_name)
