"""Leaf predicates: one column compared with literals, evaluated on Arrow rows, file statistics and Python rows."""

from __future__ import annotations

import dataclasses
import decimal
from collections.abc import Collection, Iterable, Mapping
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from table_format.arrow_types import to_arrow_type
from table_format.errors import SchemaError
from table_format.predicate.base import Predicate
from table_format.predicate.literals import (
    _DEC_CTX,
    _comparable,
    _equal_variants,
    _is_nan,
    _unwrap,
    _value_key,
    convert_literal,
)
from table_format.predicate.ops import (
    _ARROW_OPS,
    _COMPARISONS,
    _LIST_OPS,
    _NULL_OPS,
    _PY_OPS,
    _UNKNOWN,
    EQ,
    GE,
    GT,
    IN,
    IS_NOT_NULL,
    IS_NULL,
    LE,
    LT,
    NE,
    NOT_IN,
    OPS,
    STARTS_WITH,
    _normalize_op,
)
from table_format.schema import TableSchema
from table_format.types import (
    ArrayType,
    BinaryType,
    CharType,
    DataType,
    DecimalType,
    DoubleType,
    FloatType,
    MapType,
    MultisetType,
    RowType,
    VarBinaryType,
    VarCharType,
)


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
