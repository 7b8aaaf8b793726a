"""Filter predicates: parsed from pyarrow.parquet-style DNF, bound to a table schema, and evaluated three ways.

Mirrors the role of org.apache.paimon.predicate.* (leaf predicates combined with AND / OR):

* ``to_arrow_expression()`` filters rows of an Arrow table (SQL semantics: a comparison with null never
  matches);
* ``test_stats(...)`` prunes a data file from its min / max / null-count statistics (False only when no
  row of the file can match);
* ``test_row(...)`` evaluates one row of Python values, used on partition values;
* ``project(...)`` and :func:`equality_values` derive partition-only / key-only filters and the bucket-key
  values a filter pins, for partition and bucket pruning.

A predicate is *bound* when :func:`parse_filter` built it: every literal is then a value of the column's
Python type (see :func:`convert_literal`) and the leaf carries the column's Paimon type.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import decimal
import itertools
import math
import re
import struct
from abc import ABC, abstractmethod
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from decimal import Decimal
from functools import reduce
from typing import Any, ClassVar

import pyarrow as pa
import pyarrow.compute as pc

from table_format.arrow_types import to_arrow_type
from table_format.errors import SchemaError
from table_format.schema import TableSchema
from table_format.types import (
    ArrayType,
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
    MapType,
    MultisetType,
    RowType,
    SmallIntType,
    TimestampType,
    TimeType,
    TinyIntType,
    VarBinaryType,
    VarCharType,
)

__all__ = [
    "EQ",
    "NE",
    "LT",
    "LE",
    "GT",
    "GE",
    "IN",
    "NOT_IN",
    "IS_NULL",
    "IS_NOT_NULL",
    "STARTS_WITH",
    "OPS",
    "Predicate",
    "Leaf",
    "And",
    "Or",
    "and_",
    "or_",
    "parse_filter",
    "convert_literal",
    "equality_values",
]

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


# ---- the predicate model -----------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True, slots=True)
class Predicate(ABC):
    """A boolean condition on the columns of a row (org.apache.paimon.predicate.Predicate)."""

    @abstractmethod
    def fields(self) -> set[str]:
        """The columns this predicate reads."""

    @abstractmethod
    def to_arrow_expression(self) -> pc.Expression:
        """An Arrow expression selecting the matching rows; rows where it is null or false are dropped."""

    @abstractmethod
    def test_stats(
        self,
        min_values: Mapping[str, Any],
        max_values: Mapping[str, Any],
        null_counts: Mapping[str, int | None],
        row_count: int | None,
    ) -> bool:
        """False only when no row of a file with these statistics can match; True means 'maybe'.

        A column missing from a mapping, or a None min / max, is unknown (unbounded); a None null count
        is unknown; null_count == row_count means the column is all null.
        """

    @abstractmethod
    def test_row(self, values: Mapping[str, Any]) -> bool:
        """Evaluate on one row of Python values with SQL null semantics (a comparison with null is false).

        A column missing from ``values`` or a value that cannot be read as the column's type makes the leaf
        answer True (unknown), so the result is safe for pruning.
        """

    @abstractmethod
    def project(self, fields: Collection[str]) -> Predicate | None:
        """The weakest predicate implied by this one that reads only ``fields`` (None: no restriction)."""

    @abstractmethod
    def _bind(self, schema: TableSchema, where: str) -> Predicate: ...


@dataclasses.dataclass(frozen=True, slots=True)
class Leaf(Predicate):
    """``field op literals``: one literal for comparisons and starts_with, any number for in / not in,
    none for is_null / is_not_null. ``dtype`` is the column's Paimon type when bound (not part of equality).
    """

    field: str
    op: str
    literals: tuple[Any, ...] = ()
    dtype: DataType | None = dataclasses.field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        op = _normalize_op(self.op)
        if op is None:
            raise SchemaError(f"unknown filter operator {self.op!r} on column {self.field!r}; valid: {list(OPS)}")
        object.__setattr__(self, "op", op)
        lits = self.literals
        if isinstance(lits, (str, bytes)) or not isinstance(lits, Iterable):
            raise SchemaError(f"literals of a filter on column {self.field!r} must be a tuple, got {lits!r}")
        lits = tuple(lits)
        object.__setattr__(self, "literals", lits)
        if op in _NULL_OPS and lits:
            raise SchemaError(f"filter {op!r} on column {self.field!r} takes no literal, got {lits!r}")
        if op not in _NULL_OPS and op not in _LIST_OPS and len(lits) != 1:
            raise SchemaError(f"filter {op!r} on column {self.field!r} takes exactly one literal, got {lits!r}")

    # -- helpers --
    @property
    def literal(self) -> Any:
        return self.literals[0]

    def _is_float(self) -> bool:
        if self.dtype is not None:
            return isinstance(self.dtype, (FloatType, DoubleType))
        return any(isinstance(v, float) for v in self.literals)

    def _observe(self, value: Any) -> Any:
        """Bring an observed value (row value or statistic) to the column's Python type, else _UNKNOWN."""
        value = _unwrap(value)
        if value is None:
            return None
        if self.dtype is None:
            return value
        try:
            return convert_literal(value, self.dtype, lenient=True)
        except (ValueError, TypeError, ArithmeticError):
            return _UNKNOWN

    # -- Predicate API --
    def fields(self) -> set[str]:
        return {self.field}

    def project(self, fields: Collection[str]) -> Predicate | None:
        return self if self.field in fields else None

    def test_row(self, values: Mapping[str, Any]) -> bool:
        if self.field not in values:
            return True
        value = self._observe(values[self.field])
        if value is None:
            return self.op == IS_NULL
        if self.op == IS_NULL:
            return False
        if self.op == IS_NOT_NULL:
            return True
        if value is _UNKNOWN:
            return True
        try:
            if self.op in _PY_OPS:
                a, b = _comparable(value, self.literal)
                return _PY_OPS[self.op](a, b)
            if self.op == IN:
                return any(_PY_OPS[EQ](*_comparable(value, lit)) for lit in self.literals)
            if self.op == NOT_IN:
                return all(_PY_OPS[NE](*_comparable(value, lit)) for lit in self.literals)
            if self.op == STARTS_WITH:
                return bool(value.startswith(self.literal))
        except (TypeError, AttributeError):
            return True
        raise AssertionError(self.op)  # pragma: no cover

    def test_stats(
        self,
        min_values: Mapping[str, Any],
        max_values: Mapping[str, Any],
        null_counts: Mapping[str, int | None],
        row_count: int | None,
    ) -> bool:
        if row_count is not None and row_count <= 0:
            return False
        raw_nulls = null_counts.get(self.field)
        nulls = int(raw_nulls) if raw_nulls is not None else None
        if self.op == IS_NULL:
            return nulls is None or nulls > 0
        if self.op == IS_NOT_NULL:
            return nulls is None or row_count is None or nulls < row_count
        if nulls is not None and row_count is not None and nulls >= row_count:
            return False  # all null: no comparison matches
        lo = self._bound(min_values)
        hi = self._bound(max_values)
        try:
            return self._may_match(lo, hi)
        except (TypeError, AttributeError):
            return True

    def _bound(self, stats: Mapping[str, Any]) -> Any:
        v = self._observe(stats.get(self.field))
        if v is _UNKNOWN or _is_nan(v):
            return None
        return v

    def _may_match(self, lo: Any, hi: Any) -> bool:
        """Can some non-null value v with lo <= v <= hi (None: unbounded) satisfy this leaf?"""
        op = self.op

        def inside(lit: Any) -> bool:
            return (lo is None or _PY_OPS[LE](*_comparable(lo, lit))) and (
                hi is None or _PY_OPS[GE](*_comparable(hi, lit))
            )

        if op == EQ:
            return inside(self.literal)
        if op == IN:
            return any(inside(lit) for lit in self.literals)
        if op in (NE, NOT_IN):
            # Writers that leave NaN out of min / max would hide NaN rows, and NaN != x: never prune floats.
            if self._is_float() or lo is None or hi is None or not _PY_OPS[EQ](*_comparable(lo, hi)):
                return True
            return not any(_PY_OPS[EQ](*_comparable(lo, lit)) for lit in self.literals)
        if op == LT:
            return lo is None or _PY_OPS[LT](*_comparable(lo, self.literal))
        if op == LE:
            return lo is None or _PY_OPS[LE](*_comparable(lo, self.literal))
        if op == GT:
            return hi is None or _PY_OPS[GT](*_comparable(hi, self.literal))
        if op == GE:
            return hi is None or _PY_OPS[GE](*_comparable(hi, self.literal))
        if op == STARTS_WITH:
            prefix = self.literal
            # the values starting with prefix form the range [prefix, next prefix): does it meet [lo, hi]?
            return (hi is None or hi >= prefix) and (lo is None or lo[: len(prefix)] <= prefix)
        raise AssertionError(op)  # pragma: no cover

    def to_arrow_expression(self) -> pc.Expression:
        col = pc.field(self.field)
        op = self.op
        if op == IS_NULL:
            return col.is_null()
        if op == IS_NOT_NULL:
            return col.is_valid()
        if op == STARTS_WITH:
            return pc.starts_with(col, pattern=self.literal)
        if op in _LIST_OPS:
            values: list[Any] = []
            seen: set[Any] = set()
            for lit in self.literals:
                if self._exact_scalar(lit) is None:
                    continue  # no value of the column equals it
                for v in _equal_variants(lit):
                    k = _value_key(v)
                    if k not in seen:
                        seen.add(k)
                        values.append(v)
            if not values:
                return pc.scalar(False) if op == IN else col.is_valid()
            arrow_type = self._arrow_type()
            value_set = pa.array(values, type=arrow_type) if arrow_type is not None else pa.array(values)
            member = col.isin(value_set)
            return member if op == IN else col.is_valid() & ~member
        lit = self.literal
        exact = self._exact_scalar(lit)
        if exact is not None:
            return _ARROW_OPS[op](col, exact)
        if op == EQ:
            return pc.scalar(False)
        if op == NE:
            return col.is_valid()
        if isinstance(self.dtype, DecimalType):
            return self._decimal_bound_expression(col, lit, self.dtype)
        # a finer literal than the column (e.g. microseconds vs a TIMESTAMP(3) column): Arrow widens the column
        return _ARROW_OPS[op](col, pa.scalar(lit))

    def _arrow_type(self) -> pa.DataType | None:
        if self.dtype is None:
            return None
        try:
            return to_arrow_type(self.dtype)
        except SchemaError:
            return None

    def _exact_scalar(self, lit: Any) -> pa.Scalar | None:
        """The literal as a scalar of the column's Arrow type, or None when the type cannot hold it exactly."""
        arrow_type = self._arrow_type()
        if arrow_type is None:
            return pa.scalar(lit)
        try:
            s = pa.scalar(lit, type=arrow_type)
            return s if s.as_py() == lit else None
        except (pa.ArrowException, OverflowError, TypeError, ValueError, ArithmeticError):
            return None

    def _decimal_bound_expression(self, col: pc.Expression, lit: Decimal, t: DecimalType) -> pc.Expression:
        """col <op> lit for a literal with more fractional digits than the column: compare with the
        neighbouring representable value (c < 1.005 on DECIMAL(p, 2) is c <= 1.00)."""
        quantum = Decimal(1).scaleb(-t.scale)
        limit = Decimal(10) ** (t.precision - t.scale)
        if self.op in (LT, LE):
            bound = lit.quantize(quantum, rounding=decimal.ROUND_FLOOR, context=_DEC_CTX)
            if -bound >= limit:
                return pc.scalar(False)
            return col <= pa.scalar(bound, type=to_arrow_type(t))
        bound = lit.quantize(quantum, rounding=decimal.ROUND_CEILING, context=_DEC_CTX)
        if bound >= limit:
            return pc.scalar(False)
        return col >= pa.scalar(bound, type=to_arrow_type(t))

    def _bind(self, schema: TableSchema, where: str) -> Predicate:
        dtype = _column_type(schema, self.field, f"{where}filter {self._describe()}: ")
        return _bound_leaf(self.field, self.op, self.literals, dtype, f"{where}filter {self._describe()}: ")

    def _describe(self) -> str:
        if self.op in _NULL_OPS:
            return repr((self.field, self.op))
        if self.op in _LIST_OPS:
            return repr((self.field, self.op, list(self.literals)))
        return repr((self.field, self.op, self.literal))


@dataclasses.dataclass(frozen=True, slots=True)
class _Compound(Predicate):
    """And / Or (CompoundPredicate): one function over the children."""

    children: tuple[Predicate, ...]

    def __post_init__(self) -> None:
        kind = type(self).__name__
        if isinstance(self.children, Predicate) or not isinstance(self.children, Iterable):
            raise SchemaError(f"{kind} takes a sequence of predicates, got {self.children!r}")
        kids = tuple(self.children)
        if not kids:
            raise SchemaError(f"{kind} needs at least one child predicate")
        bad = [k for k in kids if not isinstance(k, Predicate)]
        if bad:
            raise SchemaError(f"{kind} children must be predicates, got {bad[0]!r}")
        object.__setattr__(self, "children", kids)

    conjunction: ClassVar[bool]  # And: all children must hold; Or: any

    def combine(self, results: Iterable[bool]) -> bool:
        return all(results) if self.conjunction else any(results)

    def fields(self) -> set[str]:
        return set().union(*(c.fields() for c in self.children))

    def test_stats(
        self,
        min_values: Mapping[str, Any],
        max_values: Mapping[str, Any],
        null_counts: Mapping[str, int | None],
        row_count: int | None,
    ) -> bool:
        return self.combine(c.test_stats(min_values, max_values, null_counts, row_count) for c in self.children)

    def test_row(self, values: Mapping[str, Any]) -> bool:
        return self.combine(c.test_row(values) for c in self.children)

    def _bind(self, schema: TableSchema, where: str) -> Predicate:
        return type(self)(tuple(c._bind(schema, where) for c in self.children))


@dataclasses.dataclass(frozen=True, slots=True)
class And(_Compound):
    """All children hold."""

    conjunction = True

    def to_arrow_expression(self) -> pc.Expression:
        return reduce(lambda a, b: a & b, (c.to_arrow_expression() for c in self.children))

    def project(self, fields: Collection[str]) -> Predicate | None:
        kept = [p for p in (c.project(fields) for c in self.children) if p is not None]
        return and_(*kept) if kept else None


@dataclasses.dataclass(frozen=True, slots=True)
class Or(_Compound):
    """At least one child holds."""

    conjunction = False

    def to_arrow_expression(self) -> pc.Expression:
        return reduce(lambda a, b: a | b, (c.to_arrow_expression() for c in self.children))

    def project(self, fields: Collection[str]) -> Predicate | None:
        kept: list[Predicate] = []
        for c in self.children:
            p = c.project(fields)
            if p is None:
                return None
            kept.append(p)
        return or_(*kept)


def and_(*predicates: Predicate) -> Predicate:
    """AND of the predicates, flattening nested ANDs; a single predicate is returned as is."""
    flat: list[Predicate] = []
    for p in predicates:
        flat.extend(p.children if isinstance(p, And) else (p,))
    if not flat:
        raise SchemaError("and_ needs at least one predicate")
    return flat[0] if len(flat) == 1 else And(tuple(flat))


def or_(*predicates: Predicate) -> Predicate:
    """OR of the predicates, flattening nested ORs; a single predicate is returned as is."""
    flat: list[Predicate] = []
    for p in predicates:
        flat.extend(p.children if isinstance(p, Or) else (p,))
    if not flat:
        raise SchemaError("or_ needs at least one predicate")
    return flat[0] if len(flat) == 1 else Or(tuple(flat))


# ---- parsing and binding -----------------------------------------------------------------------------
def parse_filter(filter: Any, schema: TableSchema, *, table: str = "") -> Predicate | None:
    """Parse a pyarrow.parquet-style DNF filter into a predicate bound to ``schema``.

    ``[("a", "=", 1), ("b", ">", 2)]`` is a conjunction; ``[[...], [...]]`` is a disjunction of
    conjunctions. A condition is ``(column, op, literal)``, or ``(column, "is null")`` /
    ``(column, "is not null")``; ``in`` / ``not in`` take a list, tuple or set of literals. A
    :class:`Predicate` is accepted too and bound (its literals converted to the column types).
    None or an empty list means no filter. Errors are :class:`SchemaError` naming the table and column.
    """
    where = f"table {table!r}: " if table else ""
    if filter is None:
        return None
    if isinstance(filter, Predicate):
        return filter._bind(schema, where)
    if not isinstance(filter, (list, tuple)) or isinstance(filter, str):
        raise SchemaError(
            f"{where}filter must be a list of (column, op, value) tuples or a list of such lists, got {filter!r}"
        )
    if not filter:
        return None
    if all(isinstance(f, list) for f in filter):
        return or_(*(_parse_conjunction(conj, schema, where) for conj in filter))
    if all(isinstance(f, tuple) for f in filter):
        return _parse_conjunction(list(filter), schema, where)
    raise SchemaError(
        f"{where}filter {filter!r} mixes conditions and lists: use a list of (column, op, value) tuples "
        "(AND) or a list of such lists (OR of ANDs)"
    )


def _parse_conjunction(conj: list[Any], schema: TableSchema, where: str) -> Predicate:
    if not conj:
        raise SchemaError(f"{where}filter has an empty conjunction []: each inner list needs a condition")
    leaves = []
    for cond in conj:
        if not isinstance(cond, tuple):
            raise SchemaError(f"{where}filter condition {cond!r} must be a (column, op, value) tuple")
        leaves.append(_parse_condition(cond, schema, where))
    return and_(*leaves)


def _parse_condition(cond: tuple[Any, ...], schema: TableSchema, where: str) -> Leaf:
    ctx = f"{where}filter {cond!r}: "
    if len(cond) not in (2, 3):
        raise SchemaError(f"{ctx}a condition is (column, op, value) or (column, 'is null' / 'is not null')")
    column = cond[0]
    if not isinstance(column, str):
        raise SchemaError(f"{ctx}column name must be a string, got {column!r}")
    op = _normalize_op(cond[1])
    if op is None:
        raise SchemaError(
            f"{ctx}unknown operator {cond[1]!r} on column {column!r}; valid operators: {sorted(_OP_ALIASES)}"
        )
    dtype = _column_type(schema, column, ctx)
    if op in _NULL_OPS:
        if len(cond) == 3 and cond[2] is not None:
            raise SchemaError(f"{ctx}{cond[1]!r} on column {column!r} takes no value, got {cond[2]!r}")
        return _bound_leaf(column, op, (), dtype, ctx)
    if len(cond) != 3:
        raise SchemaError(f"{ctx}operator {cond[1]!r} on column {column!r} needs a value")
    value = cond[2]
    if op in _LIST_OPS:
        if isinstance(value, (str, bytes, bytearray)) or not isinstance(value, (list, tuple, set, frozenset)):
            raise SchemaError(f"{ctx}{op!r} on column {column!r} needs a list, tuple or set of values, got {value!r}")
        literals: tuple[Any, ...] = tuple(value)
    else:
        literals = (value,)
    return _bound_leaf(column, op, literals, dtype, ctx)


def _column_type(schema: TableSchema, column: str, ctx: str) -> DataType:
    for f in schema.fields:
        if f.name == column:
            if isinstance(f.type, (ArrayType, MapType, MultisetType, RowType)):
                raise SchemaError(f"{ctx}column {column!r} has complex type {f.type} and cannot be filtered on")
            return f.type
    raise SchemaError(f"{ctx}unknown column {column!r}; columns are {schema.field_names}")


def _bound_leaf(column: str, op: str, literals: tuple[Any, ...], dtype: DataType, ctx: str) -> Leaf:
    if op == STARTS_WITH and not isinstance(dtype, (CharType, VarCharType, BinaryType, VarBinaryType)):
        raise SchemaError(f"{ctx}'starts_with' needs a string or binary column; column {column!r} is {dtype}")
    converted: list[Any] = []
    seen: set[Any] = set()
    for lit in literals:
        if _unwrap(lit) is None:
            hint = "use 'is null' / 'is not null'" if op in _COMPARISONS else "null never equals anything (SQL)"
            raise SchemaError(f"{ctx}comparing column {column!r} with None is not allowed; {hint}")
        try:
            v = convert_literal(lit, dtype)
        except (ValueError, TypeError, ArithmeticError) as e:
            raise SchemaError(f"{ctx}value {lit!r} does not fit column {column!r} of type {dtype}: {e}") from None
        k = _value_key(v)
        if k not in seen:
            seen.add(k)
            converted.append(v)
    return Leaf(column, op, tuple(converted), dtype)


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


# ---- bucket pruning ----------------------------------------------------------------------------------
_Box = dict[str, dict[Any, Any]]  # column -> {value key: value}; a row matches when each column is in its set
_MAX_BOXES = 4096


def _boxes(p: Predicate, wanted: Collection[str]) -> list[_Box]:
    """Boxes whose union contains every row matching p (restricted to the wanted columns)."""
    if isinstance(p, Leaf):
        if p.field in wanted and p.op in (EQ, IN):
            values: dict[Any, Any] = {}
            for lit in p.literals:
                for v in _equal_variants(lit):
                    values.setdefault(_value_key(v), v)
            return [{p.field: values}] if values else []
        return [{}]
    if isinstance(p, Or):
        out: list[_Box] = []
        for c in p.children:
            out.extend(_boxes(c, wanted))
            if len(out) > _MAX_BOXES:
                return [{}]
        return out
    if isinstance(p, And):
        acc: list[_Box] = [{}]
        for c in p.children:
            child = _boxes(c, wanted)
            if child == [{}]:
                continue
            nxt: list[_Box] = []
            for a in acc:
                for b in child:
                    merged = _intersect(a, b)
                    if merged is not None:
                        nxt.append(merged)
            if len(nxt) <= _MAX_BOXES:  # else ignore this child: weaker but still sound
                acc = nxt
        return acc
    return [{}]


def _intersect(a: _Box, b: _Box) -> _Box | None:
    out = dict(a)
    for f, vals in b.items():
        if f in out:
            common = {k: v for k, v in out[f].items() if k in vals}
            if not common:
                return None
            out[f] = common
        else:
            out[f] = vals
    return out


def equality_values(
    predicate: Predicate | None, fields: Sequence[str], *, max_combinations: int = 1000
) -> list[tuple[Any, ...]] | None:
    """The combinations of values of ``fields`` (in that order) a matching row can have, when the predicate
    pins every one of them to finitely many literals through '=' / 'in' (under AND, and OR of such).

    None when some field is not pinned or there are more than ``max_combinations`` combinations. An empty
    list means no row can match. For float columns 0.0 and -0.0 are both listed (they compare equal).
    """
    if predicate is None or not fields:
        return None
    result: dict[tuple[Any, ...], tuple[Any, ...]] = {}
    for box in _boxes(predicate, set(fields)):
        if any(f not in box for f in fields):
            return None
        if math.prod(len(box[f]) for f in fields) > max_combinations:
            return None
        for combo in itertools.product(*(box[f].items() for f in fields)):
            result.setdefault(tuple(k for k, _ in combo), tuple(v for _, v in combo))
            if len(result) > max_combinations:
                return None
    return list(result.values())
