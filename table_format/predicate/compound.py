"""AND / OR of predicates, and the helpers that build them flattened."""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Iterable, Mapping
from functools import reduce
from typing import Any, ClassVar

import pyarrow.compute as pc

from table_format.errors import SchemaError
from table_format.predicate.base import Predicate
from table_format.schema import TableSchema


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

