"""Spark's pushed filters -> table_format's DNF filter (partition, bucket and stats pruning, then exact row filtering).

A filter is taken only when table_format evaluates it exactly as Spark would; every other filter goes back to
Spark, which applies it after the scan. Taken (column of a supported type, literal that converts exactly):

==============================  =============================  ======================================
Spark filter                    table_format condition         notes
==============================  =============================  ======================================
EqualTo, EqualNullSafe(v)       ``(c, "=", v)``                EqualNullSafe(None) -> ``is null``
GreaterThan(OrEqual)            ``(c, ">", v)``, ``>=``
LessThan(OrEqual)               ``(c, "<", v)``, ``<=``
In                              ``(c, "in", values)``          not when a value is null
IsNull / IsNotNull              ``(c, "is null")`` / not null
StringStartsWith                ``(c, "starts_with", s)``      string columns
Not(EqualTo / In / IsNull ...)  ``!=``, ``not in``, ...         the negation of a comparison
==============================  =============================  ======================================

Never taken: FLOAT / DOUBLE columns (Spark orders NaN above every number and NaN = NaN; min/max statistics do
not see NaN), TIME and nested columns, StringEndsWith, StringContains, Not of anything else.
"""

from __future__ import annotations

import datetime
import decimal
from collections.abc import Iterable, Sequence
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import (
    EqualNullSafe,
    EqualTo,
    Filter,
    GreaterThan,
    GreaterThanOrEqual,
    In,
    IsNotNull,
    IsNull,
    LessThan,
    LessThanOrEqual,
    Not,
    StringStartsWith,
)

Condition = tuple[Any, ...]

_COMPARISON: dict[type, str] = {
    EqualTo: "=",
    GreaterThan: ">",
    GreaterThanOrEqual: ">=",
    LessThan: "<",
    LessThanOrEqual: "<=",
}
_NEGATED: dict[type, str] = {
    EqualTo: "!=",
    GreaterThan: "<=",
    GreaterThanOrEqual: "<",
    LessThan: ">=",
    LessThanOrEqual: ">",
}


def split_filters(filters: Iterable[Filter], schema: pa.Schema) -> tuple[list[Condition], list[Filter]]:
    """(conditions table_format takes, ANDed; the filters Spark must still apply, by reference)."""
    taken: list[Condition] = []
    rejected: list[Filter] = []
    for f in filters:
        condition = to_condition(f, schema)
        if condition is None:
            rejected.append(f)
        else:
            taken.append(condition)
    return taken, rejected


def to_condition(f: Filter, schema: pa.Schema) -> Condition | None:
    """The table_format condition equal to Spark filter ``f``, or None when it is not taken."""
    negated = isinstance(f, Not)
    inner = f.child if isinstance(f, Not) else f
    column = _column(getattr(inner, "attribute", ()), schema)
    if column is None:
        return None
    name, arrow_type = column
    if isinstance(inner, IsNull):
        return (name, "is not null" if negated else "is null")
    if isinstance(inner, IsNotNull):
        return (name, "is null" if negated else "is not null")
    value = getattr(inner, "value", None)
    if isinstance(inner, EqualNullSafe):
        if value is None:
            return (name, "is not null" if negated else "is null")
        return None if negated or not _literal_fits(value, arrow_type) else (name, "=", value)
    if isinstance(inner, In):
        values = tuple(value)
        if not values or any(v is None or not _literal_fits(v, arrow_type) for v in values):
            return None
        return (name, "not in" if negated else "in", values)
    if isinstance(inner, StringStartsWith):
        if negated or not pa.types.is_string(arrow_type) or not isinstance(value, str):
            return None
        return (name, "starts_with", value)
    op = (_NEGATED if negated else _COMPARISON).get(type(inner))
    if op is None or value is None or not _literal_fits(value, arrow_type):
        return None
    return (name, op, value)


def _column(path: Sequence[str], schema: pa.Schema) -> tuple[str, pa.DataType] | None:
    if len(path) != 1 or path[0] not in schema.names:
        return None
    arrow_type = schema.field(path[0]).type
    if pa.types.is_floating(arrow_type) or pa.types.is_time(arrow_type) or pa.types.is_nested(arrow_type):
        return None
    return path[0], arrow_type


def _literal_fits(value: Any, arrow_type: pa.DataType) -> bool:
    """Spark hands the literal in the column's own type; anything else (or a time zone mismatch) is not taken."""
    if pa.types.is_timestamp(arrow_type):
        if not isinstance(value, datetime.datetime):
            return False
        return (value.tzinfo is not None) == (arrow_type.tz is not None)
    if pa.types.is_date(arrow_type):
        return isinstance(value, datetime.date) and not isinstance(value, datetime.datetime)
    if pa.types.is_boolean(arrow_type):
        return isinstance(value, bool)
    if pa.types.is_integer(arrow_type):
        return isinstance(value, int) and not isinstance(value, bool)
    if pa.types.is_decimal(arrow_type):
        return isinstance(value, (int, decimal.Decimal)) and not isinstance(value, bool)
    if pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type):
        return isinstance(value, str)
    if pa.types.is_binary(arrow_type) or pa.types.is_large_binary(arrow_type):
        return isinstance(value, (bytes, bytearray))
    return False
