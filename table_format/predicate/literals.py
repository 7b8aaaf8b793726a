"""Literal conversion: filter values brought to a column's Python type, and comparisons across types."""

from __future__ import annotations

import datetime as _dt
import decimal
import math
import re
import struct
from decimal import Decimal
from typing import Any

import pyarrow as pa

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

# ---- literal conversion ------------------------------------------------------------------------------
_DEC_CTX = decimal.Context(prec=200)
_INT_BITS: dict[type[DataType], int] = {TinyIntType: 8, SmallIntType: 16, IntType: 32, BigIntType: 64}
_FRACTION_RE = re.compile(r"(\d{2}:\d{2}:\d{2})\.(\d+)")


def _unwrap(value: Any) -> Any:
    """pyarrow and numpy scalars as plain Python values."""
    if isinstance(value, pa.Scalar):
        return value.as_py()
    if type(value).__module__ == "numpy" and hasattr(value, "item"):
        return value.item()
    return value


def _is_nan(v: Any) -> bool:
    return (isinstance(v, float) and math.isnan(v)) or (isinstance(v, Decimal) and v.is_nan())


def _parse_iso_datetime(text: str) -> _dt.datetime:
    s = text.strip()
    if s.endswith(("Z", "z")):
        s = s[:-1] + "+00:00"

    def fraction(m: re.Match[str]) -> str:
        digits = m.group(2)
        if len(digits) > 6 and digits[6:].strip("0"):
            raise ValueError("sub-microsecond literals are not supported")
        return f"{m.group(1)}.{(digits + '000000')[:6]}"

    return _dt.datetime.fromisoformat(_FRACTION_RE.sub(fraction, s, count=1))


def _parse_iso_time(text: str) -> _dt.time:
    s = text.strip()
    m = re.fullmatch(r"(\d{2}:\d{2}(?::\d{2})?)(?:\.(\d+))?", s)
    if not m:
        raise ValueError(f"not an ISO time {text!r}")
    digits = m.group(2) or ""
    if len(digits) > 6 and digits[6:].strip("0"):
        raise ValueError("sub-microsecond literals are not supported")
    return _dt.time.fromisoformat(m.group(1) + (f".{(digits + '000000')[:6]}" if digits else ""))


def _to_utc_naive(v: _dt.datetime) -> _dt.datetime:
    return v if v.tzinfo is None else v.astimezone(_dt.timezone.utc).replace(tzinfo=None)


def convert_literal(value: Any, dtype: DataType, *, lenient: bool = False) -> Any:
    """``value`` as the Python value of Paimon type ``dtype``; ValueError / TypeError when it does not fit.

    Python types: BOOLEAN bool; TINYINT..BIGINT int (range-checked); FLOAT / DOUBLE float (FLOAT rounded
    to single precision, NaN refused); DECIMAL Decimal (from Decimal, int, float or str; integer digits
    checked against the precision, extra fractional digits kept exactly); CHAR / VARCHAR str; BINARY /
    VARBINARY bytes; DATE date (or ISO string); TIME time (or ISO string); TIMESTAMP naive datetime (ISO
    string, date; aware values converted to UTC); TIMESTAMP WITH LOCAL TIME ZONE datetime in UTC (naive
    values taken as UTC).

    ``lenient`` is for values observed in data or statistics: numbers from strings, DATE from epoch days,
    TIME from milliseconds of the day, NaN and out-of-range values are accepted.
    """
    value = _unwrap(value)
    if value is None:
        raise ValueError("None is not a value")
    if isinstance(dtype, BooleanType):
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in ("true", "false"):
            return value.strip().lower() == "true"
        raise TypeError(f"expected a bool, got {type(value).__name__}")
    bits = _INT_BITS.get(type(dtype))
    if bits is not None:
        if isinstance(value, bool):
            raise TypeError("expected an int, got bool")
        if isinstance(value, int):
            out = value
        elif isinstance(value, (float, Decimal)) and math.isfinite(value) and value == int(value):
            out = int(value)
        elif lenient and isinstance(value, str):
            out = int(value.strip())
        else:
            raise TypeError(f"expected an int, got {type(value).__name__} {value!r}")
        if not lenient and not -(2 ** (bits - 1)) <= out < 2 ** (bits - 1):
            raise ValueError(f"{out} is out of range for a {bits}-bit integer")
        return out
    if isinstance(dtype, (FloatType, DoubleType)):
        if isinstance(value, bool):
            raise TypeError("expected a number, got bool")
        if isinstance(value, (int, float, Decimal)):
            out_f = float(value)
        elif lenient and isinstance(value, str):
            out_f = float(value.strip())
        else:
            raise TypeError(f"expected a number, got {type(value).__name__}")
        if math.isnan(out_f):
            if lenient:
                return out_f
            raise ValueError("NaN literals are not supported (NaN never compares equal)")
        if isinstance(dtype, FloatType) and math.isfinite(out_f):
            try:
                out_f = struct.unpack("<f", struct.pack("<f", out_f))[0]
            except OverflowError:
                if lenient:
                    return out_f
                raise ValueError(f"{value!r} is out of range for FLOAT") from None
        return out_f
    if isinstance(dtype, DecimalType):
        if isinstance(value, bool):
            raise TypeError("expected a decimal, got bool")
        if isinstance(value, Decimal):
            d = value
        elif isinstance(value, int):
            d = Decimal(value)
        elif isinstance(value, float):
            if not math.isfinite(value):
                if lenient:
                    return Decimal(value)
                raise ValueError("not a finite number")
            d = Decimal(repr(value))
        elif isinstance(value, str):
            try:
                d = Decimal(value.strip())
            except decimal.InvalidOperation:
                raise ValueError(f"not a decimal number: {value!r}") from None
        else:
            raise TypeError(f"expected a Decimal, int, float or str, got {type(value).__name__}")
        if lenient:
            return d
        if not d.is_finite():
            raise ValueError("not a finite number")
        if abs(d) >= Decimal(10) ** (dtype.precision - dtype.scale):
            raise ValueError(f"{d} has more than {dtype.precision - dtype.scale} integer digits")
        return d
    if isinstance(dtype, (CharType, VarCharType)):
        if isinstance(value, str):
            return value
        raise TypeError(f"expected a str, got {type(value).__name__}")
    if isinstance(dtype, (BinaryType, VarBinaryType)):
        if isinstance(value, (bytes, bytearray, memoryview)):
            return bytes(value)
        raise TypeError(f"expected bytes, got {type(value).__name__}")
    if isinstance(dtype, DateType):
        if isinstance(value, _dt.datetime):
            if lenient or (value.tzinfo is None and value.time() == _dt.time(0)):
                return value.date()
            raise ValueError("a DATE literal must not have a time of day or time zone")
        if isinstance(value, _dt.date):
            return value
        if isinstance(value, str):
            return _dt.date.fromisoformat(value.strip())
        if lenient and isinstance(value, int) and not isinstance(value, bool):
            return _dt.date(1970, 1, 1) + _dt.timedelta(days=value)
        raise TypeError(f"expected a date or ISO date string, got {type(value).__name__}")
    if isinstance(dtype, TimeType):
        if isinstance(value, _dt.time):
            if value.tzinfo is not None:
                raise ValueError("a TIME literal must not have a time zone")
            return value
        if isinstance(value, str):
            return _parse_iso_time(value)
        if lenient and isinstance(value, int) and not isinstance(value, bool):
            return (_dt.datetime(1970, 1, 1) + _dt.timedelta(milliseconds=value)).time()
        raise TypeError(f"expected a time or ISO time string, got {type(value).__name__}")
    if isinstance(dtype, (TimestampType, LocalZonedTimestampType)):
        if isinstance(value, _dt.datetime):
            ts = value
        elif isinstance(value, _dt.date):
            ts = _dt.datetime.combine(value, _dt.time(0))
        elif isinstance(value, str):
            ts = _parse_iso_datetime(value)
        else:
            raise TypeError(f"expected a datetime or ISO timestamp string, got {type(value).__name__}")
        if isinstance(dtype, TimestampType):
            return _to_utc_naive(ts)
        if ts.tzinfo is None:
            return ts.replace(tzinfo=_dt.timezone.utc)
        return ts.astimezone(_dt.timezone.utc)
    raise TypeError(f"type {dtype} cannot be filtered on")


def _comparable(a: Any, b: Any) -> tuple[Any, Any]:
    """Make naive and aware datetimes comparable (aware ones as naive UTC); other pairs as they are."""
    if isinstance(a, _dt.datetime) and isinstance(b, _dt.datetime) and (a.tzinfo is None) != (b.tzinfo is None):
        return _to_utc_naive(a), _to_utc_naive(b)
    return a, b


def _equal_variants(v: Any) -> tuple[Any, ...]:
    """Values distinct to hashing but equal to v under '=' (0.0 and -0.0)."""
    if isinstance(v, float) and v == 0.0:
        return (0.0, -0.0)
    return (v,)


def _value_key(v: Any) -> Any:
    """A hashable identity for deduplication that keeps 0.0 and -0.0 apart."""
    if isinstance(v, float):
        return ("float", v.hex())
    try:
        hash(v)
    except TypeError:
        return ("repr", repr(v))
    return (type(v).__name__, v) if isinstance(v, bool) else v

