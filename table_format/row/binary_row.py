"""Paimon BinaryRow bytes: encode and decode single rows of atomic values.

Mirrors org.apache.paimon.data.BinaryRow / BinaryRowWriter (layout, inline strings, compact and
non-compact DECIMAL/TIMESTAMP) and SerializationUtils.serializeBinaryRow (4-byte big-endian arity prefix,
the form stored in manifest Avro ``bytes`` fields). Layout: a header of W bytes (RowKind byte, then one
null bit per field at bit i+8), one 8-byte little-endian slot per field, then an 8-byte aligned
variable part. See paimon-format.md section 5.

Python values: None, bool, int, float, str, bytes, decimal.Decimal, datetime.date (DATE), datetime.time
(TIME, stored as millis of day), datetime.datetime (TIMESTAMP naive; TIMESTAMP WITH LOCAL TIME ZONE naive
meaning UTC, or aware). Decoding returns the same kinds; TIMESTAMP_LTZ decodes to an aware UTC datetime.
The per-value conversions live in table_format.row.value_codecs.
"""

from __future__ import annotations

import datetime as _dt
import struct
from collections.abc import Callable, Sequence
from typing import Any

from table_format.errors import CorruptMetadataError, UnsupportedFeatureError
from table_format.row.value_codecs import (
    EPOCH_DATE,
    date_to_days,
    decimal_from_unscaled,
    decimal_unscaled,
    is_compact_decimal,
    is_compact_timestamp,
    millis_to_time,
    time_to_millis,
    timestamp_from_millis_nanos,
    timestamp_to_millis_nanos,
)
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

__all__ = [
    "EMPTY_ROW",
    "MAX_INLINE_BYTES",
    "decode_row",
    "row_decoder",
    "encode_row",
    "header_size",
    "row_bytes",
    "row_bytes_for_hash",
    "strip_arity",
]

MAX_INLINE_BYTES = 7  # BinaryRowWriter: strings/binaries of <= 7 bytes live in the slot

_ARITY = struct.Struct(">i")
_I8 = struct.Struct("<b")
_I16 = struct.Struct("<h")
_I32 = struct.Struct("<i")
_I64 = struct.Struct("<q")
_U64 = struct.Struct("<Q")
_F32 = struct.Struct("<f")
_F64 = struct.Struct("<d")
_INLINE_FLAG = 0x80


def header_size(arity: int) -> int:
    """Bytes of RowKind + null bitset (BinaryRow.calculateBitSetWidthInBytes)."""
    return ((arity + 63 + 8) // 64) * 8


def _reserved_null_bytes(t: DataType) -> int:
    """Variable-part bytes BinaryRowWriter reserves for a null non-compact DECIMAL / TIMESTAMP."""
    if isinstance(t, DecimalType) and not is_compact_decimal(t):
        return 16
    if isinstance(t, (TimestampType, LocalZonedTimestampType)) and not is_compact_timestamp(t):
        return 8
    return 0


# ---------------------------------------------------------------------------------------------------------
# encoding


def _check_int(value: Any, lo: int, hi: int, t: DataType) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{t} value must be int, got {type(value).__name__}")
    if not lo <= value <= hi:
        raise ValueError(f"{value} out of range for {t}")
    return value


def _utf8(value: Any, t: DataType) -> bytes:
    if isinstance(value, str):
        return value.encode("utf-8")
    raise TypeError(f"{t} value must be str, got {type(value).__name__}")


def _raw(value: Any, t: DataType) -> bytes:
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    raise TypeError(f"{t} value must be bytes, got {type(value).__name__}")


def row_bytes(values: Sequence[Any], types: Sequence[DataType], *, stats: bool = False) -> bytes:
    """Canonical BinaryRow bytes (no arity prefix), RowKind +I, zeroed padding.

    stats=False: BinaryRowWriter as driven by Paimon's codegen projections (partition, key, bucket-key rows):
    a null non-compact DECIMAL / TIMESTAMP still reserves 16 / 8 zero bytes in the variable part.
    stats=True: the SimpleStats min/max layout, where such nulls reserve nothing (verified on Java output).
    """
    n = len(types)
    if len(values) != n:
        raise ValueError(f"{len(values)} values for {n} types")
    hdr = header_size(n)
    fixed = bytearray(hdr + 8 * n)
    var = bytearray()
    fixed_len = len(fixed)

    def append_var(data: bytes, reserve: int = 0) -> int:
        off = fixed_len + len(var)
        var.extend(data)
        size = max(len(data), reserve)
        var.extend(bytes(-(-size // 8) * 8 - len(data)))
        return off

    for i, (v, t) in enumerate(zip(values, types, strict=True)):
        pos = hdr + 8 * i
        if v is None:
            fixed[(i + 8) >> 3] |= 1 << ((i + 8) & 7)
            reserve = 0 if stats else _reserved_null_bytes(t)
            if reserve:
                _U64.pack_into(fixed, pos, append_var(b"", reserve) << 32)
            continue
        if isinstance(t, BooleanType):
            if not isinstance(v, bool):
                raise TypeError(f"BOOLEAN value must be bool, got {type(v).__name__}")
            fixed[pos] = 1 if v else 0
        elif isinstance(t, TinyIntType):
            _I8.pack_into(fixed, pos, _check_int(v, -(1 << 7), (1 << 7) - 1, t))
        elif isinstance(t, SmallIntType):
            _I16.pack_into(fixed, pos, _check_int(v, -(1 << 15), (1 << 15) - 1, t))
        elif isinstance(t, IntType):
            _I32.pack_into(fixed, pos, _check_int(v, -(1 << 31), (1 << 31) - 1, t))
        elif isinstance(t, BigIntType):
            _I64.pack_into(fixed, pos, _check_int(v, -(1 << 63), (1 << 63) - 1, t))
        elif isinstance(t, FloatType):
            _F32.pack_into(fixed, pos, float(v))
        elif isinstance(t, DoubleType):
            _F64.pack_into(fixed, pos, float(v))
        elif isinstance(t, DateType):
            _I32.pack_into(fixed, pos, date_to_days(v))
        elif isinstance(t, TimeType):
            _I32.pack_into(fixed, pos, time_to_millis(v))
        elif isinstance(t, DecimalType):
            unscaled = decimal_unscaled(v, t)
            if is_compact_decimal(t):
                _I64.pack_into(fixed, pos, unscaled)
            else:
                data = unscaled.to_bytes((unscaled + (unscaled < 0)).bit_length() // 8 + 1, "big", signed=True)
                _U64.pack_into(fixed, pos, (append_var(data, 16) << 32) | len(data))
        elif isinstance(t, (TimestampType, LocalZonedTimestampType)):
            millis, nanos = timestamp_to_millis_nanos(v, t.precision)
            if is_compact_timestamp(t):
                _I64.pack_into(fixed, pos, millis)
            else:
                _U64.pack_into(fixed, pos, (append_var(_I64.pack(millis)) << 32) | nanos)
        elif isinstance(t, (VarCharType, CharType, VarBinaryType, BinaryType)):
            data = _utf8(v, t) if isinstance(t, (VarCharType, CharType)) else _raw(v, t)
            if len(data) <= MAX_INLINE_BYTES:
                fixed[pos : pos + len(data)] = data
                fixed[pos + 7] = _INLINE_FLAG | len(data)
            else:
                _U64.pack_into(fixed, pos, (append_var(data) << 32) | len(data))
        else:
            raise UnsupportedFeatureError(f"BinaryRow field of type {t} is not supported (only atomic types)")
    return bytes(fixed) + bytes(var)


def encode_row(values: Sequence[Any], types: Sequence[DataType], *, stats: bool = False) -> bytes:
    """Bytes as stored in manifest Avro ``bytes``: 4-byte big-endian arity + row_bytes (serializeBinaryRow)."""
    return _ARITY.pack(len(types)) + row_bytes(values, types, stats=stats)


def row_bytes_for_hash(values: Sequence[Any], types: Sequence[DataType]) -> bytes:
    """Row bytes (no arity prefix, key-row layout) whose murmur hash is BinaryRow.hashCode()."""
    return row_bytes(values, types, stats=False)


def strip_arity(data: bytes) -> bytes:
    """The BinaryRow bytes of a serialized row (drops the 4-byte arity prefix)."""
    if len(data) < 4:
        raise CorruptMetadataError(f"serialized BinaryRow of {len(data)} bytes is shorter than its arity prefix")
    return bytes(data[4:])


EMPTY_ROW: bytes = encode_row((), ())  # BinaryRow.EMPTY_ROW serialized: 00000000 + 8 zero bytes


# ---------------------------------------------------------------------------------------------------------
# decoding


def _var_slice(buf: memoryview, slot: int, i: int) -> bytes:
    off, size = slot >> 32, slot & 0xFFFFFFFF
    if size > 0x7FFFFFFF or off + size > len(buf):
        raise CorruptMetadataError(
            f"BinaryRow field {i}: variable part (offset {off}, length {size}) outside the {len(buf)}-byte row"
        )
    return bytes(buf[off : off + size])


def _var_or_inline(buf: memoryview, pos: int, i: int) -> bytes:
    slot = _U64.unpack_from(buf, pos)[0]
    if slot >> 63:
        size = (slot >> 56) & 0x7F
        if size > MAX_INLINE_BYTES:
            raise CorruptMetadataError(f"BinaryRow field {i}: inline length {size} > 7")
        return bytes(buf[pos : pos + size])
    return _var_slice(buf, slot, i)


def _decode_field(buf: memoryview, pos: int, t: DataType, i: int) -> Any:
    if isinstance(t, BooleanType):
        return buf[pos] != 0
    if isinstance(t, TinyIntType):
        return _I8.unpack_from(buf, pos)[0]
    if isinstance(t, SmallIntType):
        return _I16.unpack_from(buf, pos)[0]
    if isinstance(t, IntType):
        return _I32.unpack_from(buf, pos)[0]
    if isinstance(t, BigIntType):
        return _I64.unpack_from(buf, pos)[0]
    if isinstance(t, FloatType):
        return _F32.unpack_from(buf, pos)[0]
    if isinstance(t, DoubleType):
        return _F64.unpack_from(buf, pos)[0]
    if isinstance(t, DateType):
        return EPOCH_DATE + _dt.timedelta(days=_I32.unpack_from(buf, pos)[0])
    if isinstance(t, TimeType):
        return millis_to_time(_I32.unpack_from(buf, pos)[0])
    if isinstance(t, DecimalType):
        if is_compact_decimal(t):
            return decimal_from_unscaled(_I64.unpack_from(buf, pos)[0], t.scale)
        data = _var_slice(buf, _U64.unpack_from(buf, pos)[0], i)
        if not data:
            raise CorruptMetadataError(f"BinaryRow field {i}: non-null DECIMAL with 0 bytes")
        return decimal_from_unscaled(int.from_bytes(data, "big", signed=True), t.scale)
    if isinstance(t, (TimestampType, LocalZonedTimestampType)):
        ltz = isinstance(t, LocalZonedTimestampType)
        if is_compact_timestamp(t):
            return timestamp_from_millis_nanos(_I64.unpack_from(buf, pos)[0], 0, ltz)
        slot = _U64.unpack_from(buf, pos)[0]
        nanos = slot & 0xFFFFFFFF
        if nanos > 999_999:
            raise CorruptMetadataError(f"BinaryRow field {i}: nano-of-millisecond {nanos} > 999999")
        millis = _I64.unpack(_var_slice(buf, (slot & ~0xFFFFFFFF) | 8, i))[0]
        return timestamp_from_millis_nanos(millis, nanos, ltz)
    if isinstance(t, (VarCharType, CharType)):
        data = _var_or_inline(buf, pos, i)
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as e:
            raise CorruptMetadataError(f"BinaryRow field {i}: invalid UTF-8 in {t} value: {e}") from None
    if isinstance(t, (VarBinaryType, BinaryType)):
        return _var_or_inline(buf, pos, i)
    raise UnsupportedFeatureError(f"decoding a non-null BinaryRow field of type {t} is not supported")


def decode_row(data: bytes, types: Sequence[DataType]) -> tuple[Any, ...]:
    """Inverse of encode_row (input includes the arity prefix).

    Fields beyond the row's arity decode as None (rows written before columns were added); fields beyond
    len(types) are ignored. Truncated or inconsistent bytes raise CorruptMetadataError.
    """
    if len(data) < 4:
        raise CorruptMetadataError(f"serialized BinaryRow of {len(data)} bytes is shorter than its arity prefix")
    arity = _ARITY.unpack_from(data, 0)[0]
    if arity < 0:
        raise CorruptMetadataError(f"serialized BinaryRow has negative arity {arity}")
    buf = memoryview(data)[4:]
    hdr = header_size(arity)
    if len(buf) < hdr + 8 * arity:
        raise CorruptMetadataError(f"BinaryRow of arity {arity} needs at least {hdr + 8 * arity} bytes, got {len(buf)}")
    out: list[Any] = []
    for i, t in enumerate(types):
        if i >= arity or buf[(i + 8) >> 3] & (1 << ((i + 8) & 7)):
            out.append(None)
            continue
        try:
            out.append(_decode_field(buf, hdr + 8 * i, t, i))
        except (OverflowError, ValueError, struct.error) as e:
            raise CorruptMetadataError(f"BinaryRow field {i} ({t}): undecodable value: {e}") from None
    return tuple(out)


_FIXED_CODES: dict[type, str] = {
    TinyIntType: "b7x", SmallIntType: "h6x", IntType: "i4x", BigIntType: "q", FloatType: "f4x", DoubleType: "d",
}


def row_decoder(types: Sequence[DataType]) -> Callable[[bytes], tuple[Any, ...]]:
    """`decode_row` for many rows of one layout: when every type is a fixed-width number (the usual primary
    key), one struct unpack per row with no nulls; any other row goes through decode_row."""
    codes = [_FIXED_CODES.get(type(t)) for t in types]
    if not types or any(c is None for c in codes):
        return lambda data: decode_row(data, types)
    n = len(types)
    hdr = header_size(n)
    layout = struct.Struct("<" + "".join(c for c in codes if c))
    size = 4 + hdr + 8 * n
    null_bits = ((1 << n) - 1) << 8
    arity = _ARITY.pack(n)

    def decode(data: bytes) -> tuple[Any, ...]:
        if len(data) < size or data[:4] != arity or int.from_bytes(data[4 : 4 + hdr], "little") & null_bits:
            return decode_row(data, types)
        return layout.unpack_from(data, 4 + hdr)

    return decode
