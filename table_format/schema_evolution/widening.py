"""Which column type changes keep every stored value readable and unchanged (the widenings we accept).

Java Paimon 0.9 accepts any change its explicit casts allow (DataTypeCasts.supportsExplicitCast), including
STRING -> INT and BIGINT -> INT, after which reading the old files fails or changes values. We accept only the
changes below, where every value of the old type has exactly one value of the new type:

* integers to wider integers (TINYINT < SMALLINT < INT < BIGINT); FLOAT -> DOUBLE;
* integers to floating point where exact: TINYINT/SMALLINT -> FLOAT, TINYINT/SMALLINT/INT -> DOUBLE;
* integers to DECIMAL(p, s) with p - s integer digits enough for the integer type;
* DECIMAL(p, s) -> DECIMAL(p', s') with s' >= s and p' - s' >= p - s (no digit lost on either side);
* CHAR(n) -> CHAR(m) / VARCHAR(m), VARCHAR(n) -> VARCHAR(m), m >= n; BINARY(n) / VARBINARY(n) -> VARBINARY(m), m >= n;
* TIME(p) -> TIME(q) and TIMESTAMP(p) -> TIMESTAMP(q) (also WITH LOCAL TIME ZONE), q >= p, as long as the
  values stay in the same 64-bit range (precision 7..9 holds only the years 1677..2262: not from p <= 6).
"""

from __future__ import annotations

from table_format.types import (
    BigIntType,
    BinaryType,
    CharType,
    DataType,
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

_INT_RANK: dict[type[DataType], int] = {TinyIntType: 0, SmallIntType: 1, IntType: 2, BigIntType: 3}
_INT_DIGITS: dict[type[DataType], int] = {TinyIntType: 3, SmallIntType: 5, IntType: 10, BigIntType: 19}
_EXACT_IN_FLOAT = (TinyIntType, SmallIntType)  # 24-bit mantissa
_EXACT_IN_DOUBLE = (TinyIntType, SmallIntType, IntType)  # 53-bit mantissa


def same_type(a: DataType, b: DataType) -> bool:
    """Equal apart from nullability."""
    return a.copy(nullable=True) == b.copy(nullable=True)


def widening_problem(old: DataType, new: DataType) -> str | None:
    """None when every value of `old` reads unchanged as `new` (nullability aside); else the reason it does not."""
    if same_type(old, new):
        return None
    ok = _widens(old, new)
    if ok:
        return None
    if _widens(new, old):
        return f"{old.copy(nullable=True)} -> {new.copy(nullable=True)} narrows the type: stored values may not fit"
    return (
        f"{old.copy(nullable=True)} -> {new.copy(nullable=True)} is not a widening: stored values would change "
        "meaning or become unreadable (allowed: wider integers, FLOAT -> DOUBLE, exact integer -> FLOAT/DOUBLE/DECIMAL, "
        "more DECIMAL digits, longer CHAR/VARCHAR/BINARY/VARBINARY, more TIME/TIMESTAMP precision)"
    )


def _widens(old: DataType, new: DataType) -> bool:
    to, tn = type(old), type(new)
    if to in _INT_RANK:
        if tn in _INT_RANK:
            return _INT_RANK[tn] >= _INT_RANK[to]
        if tn is FloatType:
            return to in _EXACT_IN_FLOAT
        if tn is DoubleType:
            return to in _EXACT_IN_DOUBLE
        if isinstance(new, DecimalType):
            return new.precision - new.scale >= _INT_DIGITS[to]
        return False
    if to is FloatType:
        return tn is DoubleType
    if isinstance(old, DecimalType) and isinstance(new, DecimalType):
        return new.scale >= old.scale and new.precision - new.scale >= old.precision - old.scale
    if isinstance(old, (CharType, VarCharType)) and isinstance(new, (CharType, VarCharType)):
        return new.length >= old.length and not (isinstance(old, VarCharType) and isinstance(new, CharType))
    if isinstance(old, (BinaryType, VarBinaryType)) and isinstance(new, VarBinaryType):
        return new.length >= old.length
    if isinstance(old, TimeType) and isinstance(new, TimeType):
        return new.precision >= old.precision
    for kind in (TimestampType, LocalZonedTimestampType):
        if isinstance(old, kind) and isinstance(new, kind):
            return new.precision >= old.precision and (new.precision <= 6 or old.precision >= 7)
    return False
