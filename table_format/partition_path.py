"""Partition directory names exactly as Paimon 0.9 writes them.

Mirrors org.apache.paimon.utils.InternalRowPartitionComputer (value string = Java ``toString()`` of the
internal value; null, empty or whitespace-only -> ``partition.default-name``) and PartitionPathUtils
(``escapePathName`` / ``unescapePathName`` / ``generatePartitionPath``). FLOAT/DOUBLE use an emulation of the
JDK 8-17 ``Float/Double.toString`` (sun.misc.FloatingDecimal), including its non-shortest outputs such as
``9.1396288E8``. See paimon-format.md section 1.2.
"""

from __future__ import annotations

import datetime as _dt
import decimal
import math
import re
import struct
from collections.abc import Sequence
from typing import Any

from table_format.errors import SchemaError, UnsupportedFeatureError
from table_format.row.binary_row import (
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
# Java Float/Double.toString (JDK <= 18 FloatingDecimal.BinaryToASCIIBuffer.dtoa + getChars)

_N_5_BITS = [0] + [(5**i).bit_length() for i in range(1, 27)]  # bits of 5**i, as FloatingDecimal's table


def _wrap(x: int, bits: int) -> int:
    """Two's complement wrap-around of Java int (32) / long (64) arithmetic."""
    half = 1 << (bits - 1)
    return ((x + half) & ((1 << bits) - 1)) - half


def _jdiv(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _jmod(a: int, b: int) -> int:
    return a - b * _jdiv(a, b)


def _estimate_dec_exp(fract_bits: int, bin_exp: int) -> int:
    d2 = struct.unpack("<d", struct.pack("<Q", 0x3FF0000000000000 | (fract_bits & 0xFFFFFFFFFFFFF)))[0]
    d = (d2 - 1.5) * 0.289529654 + 0.176091259 + float(bin_exp) * 0.301029995663981
    return math.floor(d)


def _long_digits(dec_exp: int, value: int, insignificant: int) -> tuple[list[int], int]:
    """developLongDigits: an integer's digits (trailing zeros dropped) after rounding off insignificant ones."""
    if insignificant:
        pow10 = 10**insignificant
        value, residue = divmod(value, pow10)
        dec_exp += insignificant
        if residue >= pow10 >> 1:
            value += 1
    text = str(value)
    return [int(c) for c in text.rstrip("0")], dec_exp + len(text)


def _dtoa(bin_exp: int, fract_bits: int, n_sig_bits: int) -> tuple[list[int], int]:
    """Digits and decimal exponent (value = 0.d1d2... * 10**exp) as FloatingDecimal.dtoa produces them.

    fract_bits holds the significand with its leading 1 at bit 52; bin_exp is the unbiased binary exponent;
    n_sig_bits is 53 (double) / 24 (float) for normal numbers, fewer for subnormals.
    """
    tail_zeros = (fract_bits & -fract_bits).bit_length() - 1
    n_fract_bits = 53 - tail_zeros
    n_tiny_bits = max(0, n_fract_bits - bin_exp - 1)
    if -21 <= bin_exp <= 62 and n_tiny_bits == 0:
        # an integer below 2**63: exact long digits, minus the digits beyond the type's precision
        p2 = bin_exp - n_sig_bits - 1
        insignificant = len(str(1 << p2)) - 1 if bin_exp > n_sig_bits and p2 > 1 else 0
        value = fract_bits << (bin_exp - 52) if bin_exp >= 52 else fract_bits >> (52 - bin_exp)
        return _long_digits(0, value, insignificant)

    dec_exp = _estimate_dec_exp(fract_bits, bin_exp)
    b5 = max(0, -dec_exp)
    b2 = b5 + n_tiny_bits + bin_exp
    s5 = max(0, dec_exp)
    s2 = s5 + n_tiny_bits
    m5 = b5
    m2 = b2 - n_sig_bits
    fract_bits >>= tail_zeros
    b2 -= n_fract_bits - 1
    common = min(b2, s2)
    b2 -= common
    s2 -= common
    m2 -= common
    if n_fract_bits == 1:  # exact power of two: the next lower neighbour is only half as far
        m2 -= 1
    if m2 < 0:
        b2 -= m2
        s2 -= m2
        m2 = 0
    b_bits = n_fract_bits + b2 + (_N_5_BITS[b5] if b5 < len(_N_5_BITS) else b5 * 3)
    ten_s_bits = s2 + 1 + (_N_5_BITS[s5 + 1] if s5 + 1 < len(_N_5_BITS) else (s5 + 1) * 3)
    digits: list[int] = []
    if b_bits < 64 and ten_s_bits < 64:
        w = 32 if b_bits < 32 and ten_s_bits < 32 else 64  # Java int / long arithmetic, wrapping
        b = _wrap(_wrap(_wrap(fract_bits, w) * 5**b5, w) << b2, w)
        s = _wrap(5**s5 << s2, w)
        m = _wrap(5**m5 << m2, w)
        tens = _wrap(s * 10, w)
        q = _jdiv(b, s)
        b = _wrap(10 * _jmod(b, s), w)
        m = _wrap(m * 10, w)
        low, high = b < m, _wrap(b + m, w) > tens
        if q == 0 and not high:
            dec_exp -= 1  # the estimate was one too high: drop the leading zero
        else:
            digits.append(q)
        if dec_exp < -3 or dec_exp >= 8:  # E-form needs a digit after the point
            low = high = False
        while not low and not high:
            q = _jdiv(b, s)
            b = _wrap(10 * _jmod(b, s), w)
            m = _wrap(m * 10, w)
            if m > 0:
                low, high = b < m, _wrap(b + m, w) > tens
            else:  # m overflowed
                low = high = True
            digits.append(q)
        low_diff = _wrap(_wrap(b << 1, w) - tens, w)
    else:
        b = fract_bits * 5**b5 << b2
        s = 5**s5 << s2
        m = 5**m5 << m2
        tens = s * 10
        q, b = divmod(b, s)
        b *= 10
        m *= 10
        low, high = b < m, b + m > tens
        if q == 0 and not high:
            dec_exp -= 1
        else:
            digits.append(q)
        if dec_exp < -3 or dec_exp >= 8:
            low = high = False
        while not low and not high:
            q, b = divmod(b, s)
            b *= 10
            m *= 10
            low, high = b < m, b + m > tens
            digits.append(q)
        low_diff = (b << 1) - tens
    dec_exponent = dec_exp + 1
    if high and (not low or low_diff > 0 or (low_diff == 0 and digits[-1] & 1)):
        dec_exponent = _roundup(digits, dec_exponent)
    return digits, dec_exponent


def _roundup(digits: list[int], dec_exponent: int) -> int:
    i = len(digits) - 1
    while digits[i] == 9 and i > 0:
        digits[i] = 0
        i -= 1
    if digits[i] == 9:  # carry out of the first digit: 1 followed by the (zeroed) rest
        digits[0] = 1
        return dec_exponent + 1
    digits[i] += 1
    return dec_exponent


def _java_chars(negative: bool, digits: list[int], dec_exponent: int) -> str:
    """BinaryToASCIIBuffer.getChars: plain for 1e-3 <= |x| < 1e7, else d.dddE[-]n."""
    sign = "-" if negative else ""
    text = "".join(map(str, digits))
    if 0 < dec_exponent < 8:
        whole = text[:dec_exponent]
        if len(whole) < dec_exponent:
            return f"{sign}{whole}{'0' * (dec_exponent - len(whole))}.0"
        return f"{sign}{whole}.{text[dec_exponent:] or '0'}"
    if -3 < dec_exponent <= 0:
        return f"{sign}0.{'0' * -dec_exponent}{text}"
    exp = dec_exponent - 1
    return f"{sign}{text[0]}.{text[1:] or '0'}E{exp}"


def java_double_to_string(value: float) -> str:
    """Double.toString(value) as JDK 8-17 print it (JDK 19+ may differ in rare last digits)."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    bits = struct.unpack("<Q", struct.pack("<d", value))[0]
    negative = bool(bits >> 63)
    raw_exp, fract = (bits >> 52) & 0x7FF, bits & 0xFFFFFFFFFFFFF
    if raw_exp == 0 and fract == 0:
        return "-0.0" if negative else "0.0"
    if raw_exp == 0:  # subnormal: normalise so the leading 1 sits at bit 52
        shift = 53 - fract.bit_length()
        digits, dec_exponent = _dtoa(-1022 - shift, fract << shift, fract.bit_length())
    else:
        digits, dec_exponent = _dtoa(raw_exp - 1023, fract | (1 << 52), 53)
    return _java_chars(negative, digits, dec_exponent)


def java_float_to_string(value: float) -> str:
    """Float.toString((float) value) as JDK 8-17 print it."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    try:
        bits = struct.unpack("<I", struct.pack("<f", value))[0]
    except OverflowError:
        return "Infinity" if value > 0 else "-Infinity"
    negative = bool(bits >> 31)
    raw_exp, fract = (bits >> 23) & 0xFF, bits & 0x7FFFFF
    if raw_exp == 0 and fract == 0:
        return "-0.0" if negative else "0.0"
    if raw_exp == 0:
        shift = 24 - fract.bit_length()
        digits, dec_exponent = _dtoa(-126 - shift, (fract << shift) << 29, fract.bit_length())
    else:
        digits, dec_exponent = _dtoa(raw_exp - 127, (fract | (1 << 23)) << 29, 24)
    return _java_chars(negative, digits, dec_exponent)


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
