"""Row masks of simple predicates by Arrow compute kernels, without an Acero plan per call.

A key lookup tests a page's worth of rows (thousands) per file; filtering with an expression builds and runs an
Acero plan each time, which costs more than the comparison. Comparisons of a column with a literal the column's
type holds exactly, key sets and conjunctions of them are computed with compute kernels here; anything else
(None) goes through the expression.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from table_format.predicate.base import Predicate
from table_format.predicate.compound import And
from table_format.predicate.key_set import KeySet
from table_format.predicate.leaf import Leaf
from table_format.predicate.ops import EQ, GE, GT, LE, LT

Mask = Callable[[pa.Table], pa.ChunkedArray | pa.Array]
_KERNELS = {EQ: pc.equal, LT: pc.less, LE: pc.less_equal, GT: pc.greater, GE: pc.greater_equal}


def _mask(predicate: Predicate) -> Mask | None:
    if isinstance(predicate, Leaf):
        kernel = _KERNELS.get(predicate.op)
        scalar = predicate._exact_scalar(predicate.literal) if kernel is not None else None
        if kernel is None or scalar is None or predicate.dtype is None:
            return None
        name = predicate.field
        return lambda rows: kernel(rows.column(name), scalar)
    if isinstance(predicate, KeySet):
        parts = predicate.values
        return lambda rows: _all([pc.is_in(rows.column(c), value_set=v) for c, v in parts])
    if isinstance(predicate, And):
        children = [_mask(c) for c in predicate.children]
        if any(c is None for c in children):
            return None
        return lambda rows: _all([c(rows) for c in children])  # type: ignore[misc]
    return None


def _all(masks: list[pa.ChunkedArray | pa.Array]) -> pa.ChunkedArray | pa.Array:
    out = masks[0]
    for m in masks[1:]:
        out = pc.and_kleene(out, m)
    return out


def row_mask(predicate: Predicate) -> Callable[[pa.Table], np.ndarray] | None:
    """rows -> the boolean numpy mask of the rows `predicate` keeps (null: not kept), for the shapes computed by
    kernels; None for others."""
    mask = _mask(predicate)
    if mask is None:
        return None
    fn = mask

    def run(rows: pa.Table) -> np.ndarray:
        out = pc.fill_null(fn(rows), False)
        if isinstance(out, pa.ChunkedArray):
            out = out.combine_chunks() if out.num_chunks != 1 else out.chunk(0)
        return out.to_numpy(zero_copy_only=False)

    return run
