"""Partition directory names exactly as Paimon 0.9 writes them.

Mirrors org.apache.paimon.utils.InternalRowPartitionComputer (value string = Java ``toString()`` of the
internal value; null, empty or whitespace-only -> ``partition.default-name``) and PartitionPathUtils
(``escapePathName`` / ``unescapePathName`` / ``generatePartitionPath``). FLOAT/DOUBLE use an emulation of the
JDK 8-17 ``Float/Double.toString`` (java_float_text.py). See paimon-format.md section 1.2.
"""

from __future__ import annotations

import datetime as _dt
import decimal
import re
import struct
from collections.abc import Sequence
from typing import Any

from table_format.errors import SchemaError, UnsupportedFeatureError
from table_format.java_float_text import java_double_to_string, java_float_to_string
from table_format.row.value_codecs import (
    EPOCH_DATE,
    EPOCH_UTC,
    date_to_days,
    decimal_from_unscaled,
    decimal_unscaled,
    millis_to_time,
    time_to_millis,
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
    "DEFAULT_PARTITION_NAME",
    "escape_path_name",
    "java_double_to_string",
    "java_float_to_string",
    "java_local_datetime_string",
    "parse_partition_path",
    "parse_partition_value",
    "partition_path",
    "partition_value_string",
    "unescape_path_name",
]

DEFAULT_PARTITION_NAME = "__DEFAULT_PARTITION__"

# PartitionPathUtils.CHAR_TO_ESCAPE: 0x00-0x1F, 0x7F and  " # % ' * / : = ? \ { } [ ] ^
_ESCAPED = frozenset([*map(chr, range(0x20)), "\x7f", *"\"#%'*/:=?\\{}[]^"])
# Character.isWhitespace (StringUtils.isNullOrWhitespaceOnly); no-break spaces are not whitespace in Java
_JAVA_WHITESPACE = frozenset(
    [
        *map(chr, range(0x09, 0x0E)),
        *map(chr, range(0x1C, 0x21)),
        "\u1680",
        *map(chr, range(0x2000, 0x2007)),
        *map(chr, range(0x2008, 0x200B)),
        "\u2028",
        "\u2029",
        "\u205f",
        "\u3000",
    ]
)
_UNESCAPE_CODE = re.compile(r"[+-]?[0-9A-Fa-f]+")  # what Integer.parseInt(s, 16) accepts


def escape_path_name(name: str) -> str:
    """PartitionPathUtils.escapePathName: listed ASCII chars -> %XX (upper-case hex); empty is an error."""
    if not name:
        raise SchemaError("partition path name/value must not be empty")
    return "".join(f"%{ord(c):02X}" if c in _ESCAPED else c for c in name)


def unescape_path_name(name: str) -> str:
    """PartitionPathUtils.unescapePathName: ``%XX`` -> char where XX parses as hex; anything else is kept."""
    out: list[str] = []
    i, n = 0, len(name)
    while i < n:
        c = name[i]
        if c == "%" and i + 2 < n:
            code = name[i + 1 : i + 3]
            if _UNESCAPE_CODE.fullmatch(code) and int(code, 16) >= 0:  # "+F" parses, "-1" does not count
                out.append(chr(int(code, 16)))
                i += 3
                continue
        out.append(c)
        i += 1
    return "".join(out)


# ---------------------------------------------------------------------------------------------------------
# value strings


def java_local_datetime_string(value: _dt.datetime, nanos: int | None = None) -> str:
    """LocalDateTime.toString(): seconds only when non-zero, fraction in groups of 3 digits."""
    nano = value.microsecond * 1000 if nanos is None else nanos
    out = f"{value.year:04d}-{value.month:02d}-{value.day:02d}T{value.hour:02d}:{value.minute:02d}"
    if value.second or nano:
        out += f":{value.second:02d}"
        if nano:
            if nano % 1_000_000 == 0:
                out += f".{nano // 1_000_000:03d}"
            elif nano % 1000 == 0:
                out += f".{nano // 1000:06d}"
            else:
                out += f".{nano:09d}"
    return out


def _utc_naive(value: _dt.datetime) -> _dt.datetime:
    if value.tzinfo is None:
        return value
    return (value - EPOCH_UTC) + _dt.datetime(1970, 1, 1)


def partition_value_string(value: Any, t: DataType) -> str | None:
    """Java toString() of the internal value of one partition field (None stays None).

    DATE -> epoch days, TIME -> millis of day, TIMESTAMP(_LTZ) -> LocalDateTime.toString (UTC for LTZ),
    DECIMAL -> plain string at the type's scale, FLOAT/DOUBLE -> Float/Double.toString, BOOLEAN -> true/false.
    """
    if value is None:
        return None
    if isinstance(t, BooleanType):
        if not isinstance(value, bool):
            raise TypeError(f"BOOLEAN partition value must be bool, got {type(value).__name__}")
        return "true" if value else "false"
    if isinstance(t, (TinyIntType, SmallIntType, IntType, BigIntType)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{t} partition value must be int, got {type(value).__name__}")
        return str(value)
    if isinstance(t, FloatType):
        return java_float_to_string(float(value))
    if isinstance(t, DoubleType):
        return java_double_to_string(float(value))
    if isinstance(t, DateType):
        return str(date_to_days(value))
    if isinstance(t, TimeType):
        return str(time_to_millis(value))
    if isinstance(t, DecimalType):
        return format(decimal_from_unscaled(decimal_unscaled(value, t), t.scale), "f")  # Decimal.toString: plain
    if isinstance(t, (TimestampType, LocalZonedTimestampType)):
        if not isinstance(value, _dt.datetime):
            raise TypeError(f"{t} partition value must be datetime, got {type(value).__name__}")
        micros_unit = 10 ** max(0, 6 - t.precision)
        value = _utc_naive(value)
        value = value.replace(microsecond=value.microsecond - value.microsecond % micros_unit)
        return java_local_datetime_string(value)
    if isinstance(t, (VarCharType, CharType)):
        if not isinstance(value, str):
            raise TypeError(f"{t} partition value must be str, got {type(value).__name__}")
        return value
    if isinstance(t, (VarBinaryType, BinaryType)):
        raise UnsupportedFeatureError(f"{t} partition keys have no stable directory name in Paimon (byte[].toString)")
    raise UnsupportedFeatureError(f"type {t} cannot be a partition key")


def _is_blank(text: str) -> bool:
    """StringUtils.isNullOrWhitespaceOnly for a non-null string (empty counts as blank)."""
    return all(c in _JAVA_WHITESPACE for c in text)


def partition_path(
    values: Sequence[Any],
    names: Sequence[str],
    types: Sequence[DataType],
    *,
    default_name: str = DEFAULT_PARTITION_NAME,
) -> str:
    """Relative partition directory, e.g. ``dt=2024-05-14/hr=7/`` (trailing slash); ``""`` if unpartitioned."""
    if not len(values) == len(names) == len(types):
        raise ValueError(f"{len(values)} values, {len(names)} names and {len(types)} types")
    parts = []
    for v, name, t in zip(values, names, types, strict=True):
        text = partition_value_string(v, t)
        shown = default_name if text is None or _is_blank(text) else text
        parts.append(f"{escape_path_name(name)}={escape_path_name(shown)}/")
    return "".join(parts)


# ---------------------------------------------------------------------------------------------------------
# parsing back


def parse_partition_value(text: str, t: DataType, *, default_name: str = DEFAULT_PARTITION_NAME) -> Any:
    """Inverse of partition_value_string for an unescaped value; the default name parses to None."""
    if text == default_name:
        return None
    try:
        if isinstance(t, BooleanType):
            if text not in ("true", "false"):
                raise ValueError(text)
            return text == "true"
        if isinstance(t, (TinyIntType, SmallIntType, IntType, BigIntType)):
            return int(text)
        if isinstance(t, FloatType):
            return struct.unpack("<f", struct.pack("<f", float(text)))[0]
        if isinstance(t, DoubleType):
            return float(text)
        if isinstance(t, DateType):
            return EPOCH_DATE + _dt.timedelta(days=int(text))
        if isinstance(t, TimeType):
            return millis_to_time(int(text))
        if isinstance(t, DecimalType):
            return decimal_from_unscaled(decimal_unscaled(decimal.Decimal(text), t), t.scale)
        if isinstance(t, (TimestampType, LocalZonedTimestampType)):
            m = re.fullmatch(r"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?", text)
            if not m:
                raise ValueError(text)
            frac = (m.group(3) or "").ljust(9, "0")
            value = _dt.datetime.fromisoformat(m.group(1)).replace(
                second=int(m.group(2) or 0), microsecond=int(frac) // 1000
            )
            return value.replace(tzinfo=_dt.timezone.utc) if isinstance(t, LocalZonedTimestampType) else value
        if isinstance(t, (VarCharType, CharType)):
            return text
    except (ValueError, ArithmeticError, OverflowError) as e:
        raise SchemaError(f"partition value {text!r} is not a valid {t}: {e}") from None
    raise UnsupportedFeatureError(f"type {t} cannot be a partition key")


def parse_partition_path(
    path: str,
    names: Sequence[str],
    types: Sequence[DataType],
    *,
    default_name: str = DEFAULT_PARTITION_NAME,
) -> tuple[Any, ...]:
    """Values of a partition path such as ``dt=2024-05-14/hr=7/`` (order and names must match)."""
    segments = [s for s in path.strip("/").split("/") if s] if path.strip("/") else []
    if len(segments) != len(names):
        raise SchemaError(f"partition path {path!r} has {len(segments)} levels, expected {len(names)} ({list(names)})")
    out = []
    for seg, name, t in zip(segments, names, types, strict=True):
        key, sep, raw = seg.partition("=")
        if not sep or unescape_path_name(key) != name:
            raise SchemaError(f"partition path segment {seg!r} is not {name}=<value>")
        out.append(parse_partition_value(unescape_path_name(raw), t, default_name=default_name))
    return tuple(out)
