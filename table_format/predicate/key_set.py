"""KeySet: rows whose key columns take one of a set of key values (a batch lookup's filter).

A Leaf 'in' tests its literals one by one in Python; a key set of 10,000 keys is tested whole: sorted values for
statistics (a bisection per file and row group), Arrow `is_in` for rows. With several key columns it holds each
column's values: the rows it keeps are a superset of the key tuples, which the lookup then joins exactly.
"""

from __future__ import annotations

import bisect
import dataclasses
from collections.abc import Collection, Mapping
from functools import reduce
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from table_format.predicate.base import Predicate
from table_format.schema import TableSchema


@dataclasses.dataclass(frozen=True, slots=True, eq=False)
class KeySet(Predicate):
    """Column name -> its distinct values (an Arrow array of the column's type, no nulls)."""

    values: tuple[tuple[str, pa.Array], ...]
    _sorted: tuple[list[Any], ...] = dataclasses.field(init=False, repr=False)
    _members: tuple[frozenset[Any], ...] = dataclasses.field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_sorted", tuple(a.sort().to_pylist() for _, a in self.values))
        object.__setattr__(self, "_members", tuple(frozenset(s) for s in self._sorted))

    @staticmethod
    def of(keys: pa.Table) -> KeySet:
        """The key set of the rows of `keys` (each column's distinct non-null values)."""
        return KeySet(tuple((c, pc.unique(keys.column(c).drop_null())) for c in keys.column_names))

    def fields(self) -> set[str]:
        return {c for c, _ in self.values}

    def to_arrow_expression(self) -> pc.Expression:
        return reduce(lambda a, b: a & b, (pc.field(c).isin(v) for c, v in self.values))

    def test_stats(self, min_values: Mapping[str, Any], max_values: Mapping[str, Any],
                   null_counts: Mapping[str, int | None], row_count: int | None) -> bool:
        if row_count is not None and row_count <= 0:
            return False
        for (name, _), ordered in zip(self.values, self._sorted, strict=True):
            lo, hi = min_values.get(name), max_values.get(name)
            try:
                i = bisect.bisect_left(ordered, lo) if lo is not None else 0
                if i == len(ordered) or (hi is not None and ordered[i] > hi):
                    return False  # no key value within [lo, hi]
            except TypeError:  # statistics of another representation: unknown
                continue
        return True

    def test_row(self, values: Mapping[str, Any]) -> bool:
        return all(values[c] in m for (c, _), m in zip(self.values, self._members, strict=True) if c in values)

    def project(self, fields: Collection[str]) -> Predicate | None:
        kept = tuple((c, v) for c, v in self.values if c in fields)
        if len(kept) == len(self.values):
            return self
        return KeySet(kept) if kept else None

    def _bind(self, schema: TableSchema, where: str) -> Predicate:
        return self
