"""Scalar value conversions shared by BinaryRow, key columns and partition paths.

Java's Decimal/Timestamp/DATE/TIME encodings as plain Python: DECIMAL as an unscaled integer at the
type's scale (HALF_UP), TIMESTAMP as (epoch millis, nano of milli), DATE as epoch days, TIME as millis
of day; plus the compact precisions (Decimal.isCompact, Timestamp.isCompact) that decide whether a
value fits an 8-byte slot.
"""

from __future__ import annotations

import datetime as _dt
import decimal
from typing import Any

from table_format.types import DecimalType, LocalZonedTimestampType, TimestampType

__all__ = [
    "EPOCH",
    "EPOCH_DATE",
    "EPOCH_UTC",
    "MAX_COMPACT_DECIMAL_PRECISION",
    "MAX_COMPACT_TIMESTAMP_PRECISION",
    "date_to_days",
    "decimal_from_unscaled",
    "decimal_unscaled",
    "is_compact_decimal",
    "is_compact_timestamp",
    "millis_to_time",
    "time_to_millis",
    "timestamp_from_millis_nanos",
    "timestamp_to_millis_nanos",
]

MAX_COMPACT_DECIMAL_PRECISION = 18  # Decimal.isCompact
MAX_COMPACT_TIMESTAMP_PRECISION = 3  # Timestamp.isCompact

EPOCH_DATE = _dt.date(1970, 1, 1)
EPOCH = _dt.datetime(1970, 1, 1)
EPOCH_UTC = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)

_DEC_CTX = decimal.Context(prec=100, rounding=decimal.ROUND_HALF_UP)


def is_compact_decimal(t: DecimalType) -> bool:
    return t.precision <= MAX_COMPACT_DECIMAL_PRECISION


def is_compact_timestamp(t: TimestampType | LocalZonedTimestampType) -> bool:
    return t.precision <= MAX_COMPACT_TIMESTAMP_PRECISION


def decimal_unscaled(value: Any, t: DecimalType) -> int:
    """Unscaled integer of value at t's scale (Decimal.fromBigDecimal, HALF_UP); ValueError on overflow."""
    if isinstance(value, bool) or not isinstance(value, (decimal.Decimal, int, str, float)):
        raise TypeError(f"DECIMAL value must be Decimal/int/str, got {type(value).__name__}")
    d = decimal.Decimal(str(value)) if isinstance(value, float) else decimal.Decimal(value)
    if not d.is_finite():
        raise ValueError(f"DECIMAL value {value!r} is not finite")
    q = d.quantize(decimal.Decimal(1).scaleb(-t.scale), context=_DEC_CTX)
    unscaled = int(q.scaleb(t.scale, context=_DEC_CTX))
    if abs(unscaled) >= 10**t.precision:
        raise ValueError(f"{value!r} does not fit {t}")
    return unscaled


def decimal_from_unscaled(unscaled: int, scale: int) -> decimal.Decimal:
    """Exact Decimal with exponent -scale (independent of the decimal context precision)."""
    sign = 1 if unscaled < 0 else 0
    digits = tuple(int(c) for c in str(abs(unscaled)))
    return decimal.Decimal((sign, digits, -scale))


def timestamp_to_millis_nanos(value: _dt.datetime, precision: int) -> tuple[int, int]:
    """(epoch millis, nano of milli) of a datetime, truncated (floor) to the type precision.

    Naive datetimes are taken as wall-clock (TIMESTAMP) / UTC (TIMESTAMP_LTZ); aware ones are converted to UTC.
    """
    if not isinstance(value, _dt.datetime):
        raise TypeError(f"TIMESTAMP value must be datetime, got {type(value).__name__}")
    delta = (value - EPOCH_UTC) if value.tzinfo is not None else (value - EPOCH)
    micros = (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
    if precision < 6:
        unit = 10 ** (6 - precision)
        micros -= micros % unit
    millis, rem = divmod(micros, 1000)
    return millis, rem * 1000


def timestamp_from_millis_nanos(millis: int, nanos: int, ltz: bool) -> _dt.datetime:
    base = EPOCH_UTC if ltz else EPOCH
    return base + _dt.timedelta(milliseconds=millis, microseconds=nanos // 1000)


def date_to_days(value: Any) -> int:
    if isinstance(value, _dt.datetime):
        raise TypeError("DATE value must be a date, not a datetime")
    if isinstance(value, _dt.date):
        return (value - EPOCH_DATE).days
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise TypeError(f"DATE value must be date or int days, got {type(value).__name__}")


def time_to_millis(value: Any) -> int:
    if isinstance(value, _dt.time):
        return ((value.hour * 60 + value.minute) * 60 + value.second) * 1000 + value.microsecond // 1000
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise TypeError(f"TIME value must be time or int millis, got {type(value).__name__}")


def millis_to_time(millis: int) -> _dt.time:
    s, ms = divmod(millis, 1000)
    m, s = divmod(s, 60)
    h, m = divmod(m, 60)
    return _dt.time(h, m, s, ms * 1000)
