"""Filter operators: their names, the spellings accepted for them, and the comparison functions."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pyarrow.compute as pc

# ---- operators ---------------------------------------------------------------------------------------
EQ, NE, LT, LE, GT, GE = "=", "!=", "<", "<=", ">", ">="
IN, NOT_IN = "in", "not in"
IS_NULL, IS_NOT_NULL = "is_null", "is_not_null"
STARTS_WITH = "starts_with"

OPS: tuple[str, ...] = (EQ, NE, LT, LE, GT, GE, IN, NOT_IN, IS_NULL, IS_NOT_NULL, STARTS_WITH)
_COMPARISONS = (EQ, NE, LT, LE, GT, GE)
_NULL_OPS = (IS_NULL, IS_NOT_NULL)
_LIST_OPS = (IN, NOT_IN)

_OP_ALIASES: dict[str, str] = {
    "=": EQ,
    "==": EQ,
    "!=": NE,
    "<>": NE,
    "<": LT,
    "<=": LE,
    ">": GT,
    ">=": GE,
    "in": IN,
    "not in": NOT_IN,
    "not_in": NOT_IN,
    "is null": IS_NULL,
    "is_null": IS_NULL,
    "is not null": IS_NOT_NULL,
    "is_not_null": IS_NOT_NULL,
    "starts_with": STARTS_WITH,
    "startswith": STARTS_WITH,
    "starts with": STARTS_WITH,
}


def _normalize_op(op: object) -> str | None:
    if not isinstance(op, str):
        return None
    return _OP_ALIASES.get(" ".join(op.strip().lower().split()))


_PY_OPS: dict[str, Callable[[Any, Any], bool]] = {
    EQ: lambda a, b: bool(a == b),
    NE: lambda a, b: bool(a != b),
    LT: lambda a, b: bool(a < b),
    LE: lambda a, b: bool(a <= b),
    GT: lambda a, b: bool(a > b),
    GE: lambda a, b: bool(a >= b),
}

_ARROW_OPS: dict[str, Callable[[pc.Expression, Any], pc.Expression]] = {
    EQ: lambda c, v: c == v,
    NE: lambda c, v: c != v,
    LT: lambda c, v: c < v,
    LE: lambda c, v: c <= v,
    GT: lambda c, v: c > v,
    GE: lambda c, v: c >= v,
}


class _Unknown:
    """Marks a value that could not be brought to the column's type: the test's answer is 'maybe'."""

    def __repr__(self) -> str:
        return "<unknown>"


_UNKNOWN = _Unknown()

