"""Avro data files (file.format=avro) <-> Arrow, with the schema Paimon's AvroSchemaConverter derives.

Avro data files are rare in Paimon tables (manifests are Avro, data usually Parquet); this path is
row-based through fastavro and favours exactness over speed.
"""

from __future__ import annotations

import datetime as dt
import io
from decimal import Decimal
from typing import Any

import fastavro
import pyarrow as pa

from table_format.errors import CorruptMetadataError, OptionError

_RECORD = "org.apache.paimon.avro.generated.record"
_CODECS = {"zstd": "zstandard", "snappy": "snappy", "none": "null", "deflate": "deflate", "gzip": "deflate"}


def _avro_type(t: pa.DataType, name: str) -> Any:
    if pa.types.is_boolean(t):
        return "boolean"
    if pa.types.is_int8(t) or pa.types.is_int16(t) or pa.types.is_int32(t):
        return "int"
    if pa.types.is_int64(t):
        return "long"
    if pa.types.is_float32(t):
        return "float"
    if pa.types.is_float64(t):
        return "double"
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return "string"
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t):
        return "bytes"
    if pa.types.is_date32(t):
        return {"type": "int", "logicalType": "date"}
    if pa.types.is_time32(t):
        return {"type": "int", "logicalType": "time-millis"}
    if pa.types.is_decimal(t):
        return {"type": "bytes", "logicalType": "decimal", "precision": t.precision, "scale": t.scale}
    if pa.types.is_timestamp(t):
        if t.unit == "ns":
            raise OptionError(f"column {name!r}: Avro data files reject TIMESTAMP precision > 6")
        logical = "timestamp-millis" if t.unit in ("s", "ms") else "timestamp-micros"
        if t.tz is None:
            logical = "local-" + logical
        return {"type": "long", "logicalType": logical}
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        vf = t.value_field
        return {"type": "array", "items": _nullable(_avro_type(vf.type, name), vf.nullable)}
    if pa.types.is_map(t):
        if not pa.types.is_string(t.key_type):
            raise OptionError(f"column {name!r}: Avro maps need STRING keys")
        return {"type": "map", "values": _nullable(_avro_type(t.item_type, name), t.item_field.nullable)}
    if pa.types.is_struct(t):
        return {
            "type": "record",
            "name": f"{_RECORD}_{name}",
            "fields": [_avro_field(t.field(i), f"{_RECORD}_{name}") for i in range(t.num_fields)],
        }
    raise OptionError(f"column {name!r}: Arrow type {t} cannot be written to Avro")


def _nullable(avro: Any, nullable: bool) -> Any:
    return ["null", avro] if nullable else avro


def _avro_field(f: pa.Field, prefix: str) -> dict[str, Any]:
    out: dict[str, Any] = {"name": f.name, "type": _nullable(_avro_type(f.type, f.name), f.nullable)}
    if f.nullable:
        out["default"] = None
    return out


def write_avro_table(table: pa.Table, *, compression: str = "zstd") -> bytes:
    schema = {"type": "record", "name": _RECORD, "fields": [_avro_field(f, _RECORD) for f in table.schema]}
    codec = _CODECS.get(compression)
    if codec is None:
        raise OptionError(f"option 'file.compression': {compression!r} is not supported for avro")
    rows = table.to_pylist()
    for f in table.schema:
        if pa.types.is_map(f.type):
            for r in rows:
                if r[f.name] is not None:
                    r[f.name] = dict(r[f.name])
    buf = io.BytesIO()
    fastavro.writer(buf, fastavro.parse_schema(schema), rows, codec=codec)
    return buf.getvalue()


def _arrow_type(avro: Any) -> tuple[pa.DataType, bool]:
    """(Arrow type, nullable) of an Avro writer-schema node."""
    if isinstance(avro, list):
        non_null = [a for a in avro if a != "null"]
        if len(non_null) != 1:
            raise CorruptMetadataError(f"unsupported Avro union {avro!r} in a data file")
        return _arrow_type(non_null[0])[0], True
    if isinstance(avro, str):
        simple = {
            "boolean": pa.bool_(), "int": pa.int32(), "long": pa.int64(), "float": pa.float32(),
            "double": pa.float64(), "string": pa.string(), "bytes": pa.binary(),
        }
        if avro not in simple:
            raise CorruptMetadataError(f"unsupported Avro type {avro!r} in a data file")
        return simple[avro], False
    logical = avro.get("logicalType")
    kind = avro.get("type")
    if logical == "date":
        return pa.date32(), False
    if logical == "time-millis":
        return pa.time32("ms"), False
    if logical == "decimal":
        return pa.decimal128(int(avro["precision"]), int(avro.get("scale", 0))), False
    if logical in ("timestamp-millis", "local-timestamp-millis"):
        return pa.timestamp("ms", tz="UTC" if logical == "timestamp-millis" else None), False
    if logical in ("timestamp-micros", "local-timestamp-micros"):
        return pa.timestamp("us", tz="UTC" if logical == "timestamp-micros" else None), False
    if kind == "array":
        item, nullable = _arrow_type(avro["items"])
        return pa.list_(pa.field("element", item, nullable=nullable)), False
    if kind == "map":
        item, nullable = _arrow_type(avro["values"])
        return pa.map_(pa.string(), pa.field("value", item, nullable=nullable)), False
    if kind == "record":
        fields = []
        for f in avro["fields"]:
            t, nullable = _arrow_type(f["type"])
            fields.append(pa.field(f["name"], t, nullable=nullable))
        return pa.struct(fields), False
    if isinstance(kind, (str, list, dict)) and logical is None:
        return _arrow_type(kind)
    raise CorruptMetadataError(f"unsupported Avro type {avro!r} in a data file")


def _fix(value: Any, t: pa.DataType) -> Any:
    if value is None:
        return None
    if pa.types.is_timestamp(t) and isinstance(value, dt.datetime) and t.tz is None and value.tzinfo is not None:
        return value.replace(tzinfo=None)
    if pa.types.is_map(t) and isinstance(value, dict):
        return list(value.items())
    if pa.types.is_decimal(t) and not isinstance(value, Decimal):
        return Decimal(value)
    return value


def read_avro_table(data: bytes, *, source: str) -> pa.Table:
    try:
        reader = fastavro.reader(io.BytesIO(data))
        schema: Any = reader.writer_schema
        records: list[Any] = list(reader)
    except Exception as e:  # fastavro raises many exception types on corrupt input
        raise CorruptMetadataError(f"data file {source} is not readable Avro: {e}") from None
    if isinstance(schema, list):  # Paimon writes the row type as a nullable union ["null", record]
        schema = next((s for s in schema if s != "null"), "null")
    if not isinstance(schema, dict) or schema.get("type") != "record":
        raise CorruptMetadataError(f"data file {source}: top-level Avro schema is not a record")
    fields = []
    arrays = []
    for f in schema["fields"]:
        t, nullable = _arrow_type(f["type"])
        values = [_fix(r.get(f["name"]) if isinstance(r, dict) else None, t) for r in records]
        fields.append(pa.field(f["name"], t, nullable=nullable))
        arrays.append(pa.array(values, type=t))
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields))
