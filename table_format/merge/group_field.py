"""The accumulated value of one column while partial_update.py adds a run's records one by one (sequence groups).

A column is kept as row pointers wherever its value is one of the input values (plain columns, sequence fields,
last/first/max/min aggregators): pointer updates are numpy `where`s. Columns with value-building aggregators (sum,
product, listagg, bool_*, collect, merge_map, nested_update) keep Python values and fold them with the scalar Java
semantics of `ScalarAgg` (FieldAggregator.agg / aggReversed / retract).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import numpy as np
import pyarrow as pa

from table_format.errors import SchemaError, UnsupportedFeatureError
from table_format.merge.aggregate import _decimal_from_unscaled, _decimal_unscaled, _java_decimal
from table_format.merge.kernels import MergeColumn, Pick
from table_format.merge.nested import (
    _collect_agg,
    _collect_retract,
    _map_agg,
    _map_retract,
    _nested_agg,
    _nested_retract,
    _NestedKey,
)
from table_format.merge.spec import FieldAgg
from table_format.types import ArrayType, MapType, MultisetType, RowType

_POINTER_FUNCTIONS = ("primary_key", "last_value", "last_non_null_value", "first_value", "first_non_null_value",
                      "max", "min")
_INT_BITS = {pa.int8(): 8, pa.int16(): 16, pa.int32(): 32, pa.int64(): 64}


def _wrap(v: int, bits: int) -> int:
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >> (bits - 1) else v


class ScalarAgg:
    """Java's agg / aggReversed / retract of a value-building FieldAggregator, on Python values."""

    def __init__(self, agg: FieldAgg, arrow_type: pa.DataType, where: str) -> None:
        self.agg = agg
        self.t = arrow_type
        self.where = where
        self.fn = agg.function
        if self.fn == "collect":
            assert isinstance(agg.type, ArrayType)
            self.et = arrow_type.value_type
            self.constructed = isinstance(agg.type.element, (ArrayType, MapType, MultisetType, RowType))
        if self.fn == "merge_map":
            self.kt = arrow_type.key_type
        self.key = None
        if self.fn == "nested_update" and agg.nested_key:
            assert isinstance(agg.type, ArrayType) and isinstance(agg.type.element, RowType)
            self.key = _NestedKey(agg.type.element, agg.nested_key)

    def _num(self, a: Any, b: Any, op: str) -> Any:
        t = self.t
        if pa.types.is_integer(t):
            if op == "/":
                if b == 0:
                    raise UnsupportedFeatureError(f"{self.where}column {self.agg.column!r}: product retracts a 0")
                q = abs(a) // abs(b)
                r = -q if (a < 0) != (b < 0) else q
            else:
                r = a + b if op == "+" else a - b if op == "-" else a * b
            return _wrap(r, _INT_BITS[t])
        if pa.types.is_float32(t):
            x, y = np.float32(a), np.float32(b)
            with np.errstate(all="ignore"):
                return float(x + y if op == "+" else x - y if op == "-" else x * y if op == "*" else x / y)
        if pa.types.is_floating(t):
            if op == "/":
                return a / b if b != 0 else (float("nan") if a == 0 or a != a else float("inf") * (1 if a > 0 else -1))
            return a + b if op == "+" else a - b if op == "-" else a * b
        # decimal
        if op == "/" and b == 0:
            raise UnsupportedFeatureError(f"{self.where}column {self.agg.column!r}: product retracts a 0")
        raw = a + b if op == "+" else a - b if op == "-" else a * b if op == "*" else Decimal(a) / Decimal(b)
        if op in ("+", "-") and t.precision <= 18:
            return raw  # compact decimals are not checked against their precision
        return _java_decimal(raw, t)

    def add(self, acc: Any, x: Any, reversed_: bool = False) -> Any:
        fn = self.fn
        if fn == "collect":
            return _collect_agg(acc, x, self.agg.distinct, self.constructed, self.et)  # aggReversed == agg
        if reversed_:
            acc, x = x, acc
        if fn == "merge_map":
            return _map_agg(acc, x, self.kt)
        if fn == "nested_update":
            return _nested_agg(acc, x, self.key)
        if acc is None or x is None:
            return x if acc is None else acc
        if fn == "sum":
            return self._num(acc, x, "+")
        if fn == "product":
            return self._num(acc, x, "*")
        if fn == "listagg":
            return f"{acc}{self.agg.delimiter}{x}"
        if fn == "bool_and":
            return bool(acc) and bool(x)
        if fn == "bool_or":
            return bool(acc) or bool(x)
        raise AssertionError(fn)

    def retract(self, acc: Any, x: Any) -> Any:
        fn = self.fn
        if self.agg.ignore_retract:
            return acc
        if fn == "sum":
            if acc is None or x is None:
                return (None if x is None else self._num(0 if not pa.types.is_decimal(self.t) else Decimal(0), x, "-")
                        ) if acc is None else acc
            return self._num(acc, x, "-")
        if fn == "product":
            if acc is None or x is None:
                return x if acc is None else acc
            return self._num(acc, x, "/")
        if fn == "collect":
            return _collect_retract(acc, x)
        if fn == "merge_map":
            return _map_retract(acc, x, self.kt)
        if fn == "nested_update":
            return _nested_retract(acc, x, self.key)
        raise AssertionError(fn)


class GroupField:
    """The state of one column of the accumulated rows of the active runs (in Positions order)."""

    def __init__(self, name: str, col: MergeColumn, agg: FieldAgg | None, runs: int, where: str) -> None:
        self.name = name
        self.col = col
        self.nulls = col.nulls
        self.agg = agg
        self.fn = agg.function if agg is not None else None
        if agg is not None and agg.error is not None:
            raise SchemaError(agg.error)
        self.pointer = self.fn is None or self.fn in _POINTER_FUNCTIONS
        if self.pointer:
            self.ptr = np.full(runs, -1, dtype=np.int64)
            self.initialized = np.zeros(runs, dtype=bool)
            self.key = col.order_key() if self.fn in ("max", "min") else None
        else:
            assert agg is not None
            self.scalar = ScalarAgg(agg, col.type, where)
            self.numeric = _numeric_state(agg.function, col.type)
            if self.numeric is not None:  # numpy state: the value and "not null" of every active run
                self.xs = _numeric_values(col, self.numeric)
                self.nacc = np.zeros(runs, dtype=self.xs.dtype)
                self.nhas = np.zeros(runs, dtype=bool)
            else:
                self.values = col.array.to_pylist()
                self.acc: list[Any] = [None] * runs

    def null_at(self, ptr: np.ndarray) -> np.ndarray:
        return (ptr < 0) | self.nulls[np.maximum(ptr, 0)]

    # pointer aggregators (FieldLastValueAgg, FieldMaxAgg, ...): acc = ptr[:k], input = rows j
    def pointer_agg(self, mask: np.ndarray, j: np.ndarray, reversed_: bool) -> None:
        k = len(j)
        acc = self.ptr[:k]
        fn = self.fn
        a_null = self.null_at(acc)
        x_null = self.nulls[j]
        if fn is None or fn in ("primary_key", "last_value"):
            new = acc if reversed_ else j
        elif fn == "last_non_null_value":
            new = np.where(a_null, j, acc) if reversed_ else np.where(x_null, acc, j)
        elif fn in ("first_value", "first_non_null_value"):
            init = self.initialized[:k]
            # agg(acc, in): the first call (with a non-null input for first_non_null_value) takes the input;
            # reversed is agg(in, acc): the first call takes acc, later calls take the (older) input
            first_in, later = (acc, j) if reversed_ else (j, acc)
            can = ~init if fn == "first_value" else ~init & ~(a_null if reversed_ else x_null)
            new = np.where(can, first_in, later)
            self.initialized[:k] = np.where(mask, init | can, init)
        else:  # max / min
            assert self.key is not None
            ka = self.key[np.maximum(acc, 0)]
            kx = self.key[j]
            if reversed_:  # agg(in, acc)
                a_null, x_null, ka, kx, acc_, in_ = x_null, a_null, kx, ka, j, acc
            else:
                acc_, in_ = acc, j
            if fn == "max":
                pick = np.where(ka < kx, in_, acc_)
            else:
                pick = np.where(ka < kx, acc_, in_)
            new = np.where(a_null, in_, np.where(x_null, acc_, pick))
        self.ptr[:k] = np.where(mask, new, acc)

    def pointer_retract(self, mask: np.ndarray, j: np.ndarray) -> None:
        k = len(j)
        acc = self.ptr[:k]
        fn = self.fn
        if self.agg is not None and self.agg.ignore_retract:
            return
        if fn == "primary_key":
            new = j
        elif fn == "last_value" or fn is None:
            new = np.full(k, -1, dtype=np.int64)
        elif fn == "last_non_null_value":
            new = np.where(self.nulls[j], acc, -1)
        else:
            raise AssertionError(fn)  # checked up front: no retraction support
        self.ptr[:k] = np.where(mask, new, acc)

    def value_step(self, mask: np.ndarray, j: np.ndarray, mode: str) -> None:
        """mode: 'agg', 'rev' (aggReversed) or 'retract'."""
        if self.numeric is not None:
            self._numeric_step(mask, j, mode)
            return
        for i in np.flatnonzero(mask).tolist():
            x = self.values[int(j[i])]
            a = self.acc[i]
            if mode == "retract":
                self.acc[i] = self.scalar.retract(a, x)
            else:
                self.acc[i] = self.scalar.add(a, x, reversed_=mode == "rev")

    def _numeric_step(self, mask: np.ndarray, j: np.ndarray, mode: str) -> None:
        """sum / product / bool_and / bool_or of numbers, all active runs at once (agg and aggReversed are the
        same for these commutative functions; the null rules are FieldAggregator's)."""
        if mode == "retract" and self.scalar.agg.ignore_retract:
            return
        k = len(j)
        acc, has = self.nacc[:k], self.nhas[:k]
        x, x_null = self.xs[j], self.nulls[j]
        fn = self.scalar.fn
        with np.errstate(all="ignore"):  # Java's int arithmetic wraps; float division by zero is inf/nan
            if mode != "retract":
                if fn == "sum":
                    both = acc + x
                elif fn == "product":
                    both = acc * x
                elif fn == "bool_and":
                    both = acc & x
                else:
                    both = acc | x
                new = np.where(has, np.where(x_null, acc, both), x)
            elif fn == "sum":  # a null accumulator retracts to -x
                new = np.where(has, np.where(x_null, acc, acc - x), -x)
            else:  # product: a null accumulator takes x
                div_mask = mask & has & ~x_null
                new = np.where(div_mask, _divide(acc, np.where(div_mask, x, 1), self.scalar), np.where(has, acc, x))
        self.nacc[:k] = np.where(mask, new, acc)
        self.nhas[:k] = np.where(mask, has | ~x_null, has)

    def set_from(self, mask: np.ndarray, j: np.ndarray) -> None:
        """row.setField(i, kv.getField(i)) for the runs in mask."""
        k = len(j)
        if self.pointer:
            self.ptr[:k] = np.where(mask, j, self.ptr[:k])
        elif self.numeric is not None:
            self.nacc[:k] = np.where(mask, self.xs[j], self.nacc[:k])
            self.nhas[:k] = np.where(mask, ~self.nulls[j], self.nhas[:k])
        else:
            for i in np.flatnonzero(mask).tolist():
                self.acc[i] = self.values[int(j[i])]

    def result(self, order: np.ndarray) -> pa.Array | Pick:
        if self.pointer:
            ptr = np.empty_like(self.ptr)
            ptr[order] = self.ptr
            return Pick(ptr)
        if self.numeric is not None:
            values = np.empty_like(self.nacc)
            values[order] = self.nacc
            has = np.empty_like(self.nhas)
            has[order] = self.nhas
            t = self.col.type
            if pa.types.is_decimal(t):
                return _decimal_from_unscaled(values, has, t)
            return pa.array(values, mask=~has, type=t)
        acc: list[Any] = [None] * len(self.acc)
        for pos, v in zip(order.tolist(), self.acc, strict=True):
            acc[pos] = v
        return pa.array(acc, type=self.col.type)


def _numeric_state(fn: str, t: pa.DataType) -> str | None:
    """Which value-building aggregators keep numpy state: 'int', 'float', 'decimal' (unscaled int64) or 'bool'."""
    if fn in ("bool_and", "bool_or"):
        return "bool" if pa.types.is_boolean(t) else None
    if fn not in ("sum", "product"):
        return None
    if pa.types.is_integer(t):
        return "int"
    if pa.types.is_floating(t):
        return "float"
    if pa.types.is_decimal(t) and t.precision <= 18 and fn == "sum":  # compact decimals add as longs
        return "decimal"
    return None


def _numeric_values(col: MergeColumn, kind: str) -> np.ndarray:
    """The column's values in merge order as numpy (nulls hold 0 / False)."""
    if kind == "decimal":
        return _decimal_unscaled(col.orig)[col.sel]
    return col.numpy(False if kind == "bool" else 0)


def _divide(acc: np.ndarray, x: np.ndarray, scalar: ScalarAgg) -> np.ndarray:
    """FieldProductAgg.retract: acc / x (integers truncate toward zero; dividing by 0 fails as in Java)."""
    if not np.issubdtype(acc.dtype, np.integer):
        return acc / x
    if (x == 0).any():
        raise UnsupportedFeatureError(f"{scalar.where}column {scalar.agg.column!r}: product retracts a 0")
    q = np.abs(acc) // np.abs(x)
    return np.where((acc < 0) ^ (x < 0), -q, q).astype(acc.dtype)
