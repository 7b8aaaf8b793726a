"""Bucket pruning: the bucket-key values a predicate pins through '=' / 'in' (under AND, and OR of such)."""

from __future__ import annotations

import itertools
import math
from collections.abc import Collection, Sequence
from typing import Any

from table_format.predicate.base import Predicate
from table_format.predicate.compound import And, Or
from table_format.predicate.leaf import Leaf
from table_format.predicate.literals import _equal_variants, _value_key
from table_format.predicate.ops import EQ, IN

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
