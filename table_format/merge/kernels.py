"""Vectorized building blocks of the merge: key runs, per-run reductions and position-major sequential loops.

Rows are first put in merge order (key, then sequence order); a *run* is the rows of one key. Per-run
reductions use numpy `reduceat` over run starts; merge functions that must see records one at a time
(Java's `add(kv)` loop) run as a loop over positions inside the runs, vectorized across all runs
(`Positions`): step p updates every run that has more than p records at once.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from table_format.row.sort import sortable


def combined(col: pa.Array | pa.ChunkedArray) -> pa.Array:
    if isinstance(col, pa.ChunkedArray):
        return col.combine_chunks() if col.num_chunks != 1 else col.chunk(0)
    return col


def is_null(col: pa.Array) -> np.ndarray:
    if col.null_count == 0:
        return np.zeros(len(col), dtype=bool)
    return pc.is_null(col).to_numpy(zero_copy_only=False)


def _float_total_order(col: pa.Array) -> np.ndarray:
    """int64 keys ordering floats as Java's Float/Double.compare (-0.0 < 0.0, every NaN equal and largest)."""
    return _float_bits_order(col.fill_null(0).to_numpy(zero_copy_only=False))


def _float_bits_order(x: np.ndarray) -> np.ndarray:
    if x.dtype == np.float32:
        x = np.where(np.isnan(x), np.float32(np.nan), x).astype(np.float32)
        bits = x.view(np.int32).astype(np.int64)
        return bits ^ ((bits >> 31) & 0x7FFFFFFF)
    x = np.where(np.isnan(x), np.nan, x).astype(np.float64)
    bits = x.view(np.int64)
    return bits ^ ((bits >> 63) & 0x7FFFFFFFFFFFFFFF)


def order_key(col: pa.Array) -> np.ndarray:
    """A numpy array ordering the non-null values of `col` as Paimon compares them (InternalRowUtils.compare)."""
    if pa.types.is_floating(col.type):
        return _float_total_order(col)
    return np.asarray(sortable(col)).astype(np.int64, copy=False)


def sequence_rank(col: pa.Array) -> np.ndarray:
    """Order of a sequence column: ascending, nulls first (Paimon's generated RecordComparator)."""
    col = combined(col)
    if col.null_count == 0:
        return order_key(col)
    return dense_rank(col)


def dense_rank(col: pa.Array) -> np.ndarray:
    """Dense ranks in Paimon's order: 0 for null, 1.. for values (equal values share a rank)."""
    col = combined(col)
    nulls = is_null(col)
    out = np.zeros(len(col), dtype=np.int64)
    if (~nulls).any():
        out[~nulls] = np.unique(order_key(col)[~nulls], return_inverse=True)[1].reshape(-1) + 1
    return out


def lex_rank(keys: list[np.ndarray]) -> np.ndarray:
    """Dense rank of row tuples (lexicographic over `keys`)."""
    if len(keys) == 1:
        return keys[0]
    order = np.lexsort(keys[::-1])
    n = len(order)
    first = np.ones(n, dtype=bool)
    if n > 1:
        differs = np.zeros(n - 1, dtype=bool)
        for k in keys:
            s = k[order]
            differs |= s[1:] != s[:-1]
        first[1:] = differs
    dense = np.cumsum(first) - 1
    out = np.empty(n, dtype=np.int64)
    out[order] = dense
    return out


@dataclass
class Segments:
    """Runs of equal keys over rows in merge order: run i is rows [starts[i], starts[i] + lens[i])."""

    starts: np.ndarray
    lens: np.ndarray

    @property
    def n(self) -> int:
        return int(self.lens.sum())

    @property
    def runs(self) -> int:
        return len(self.starts)

    @cached_property
    def run_of(self) -> np.ndarray:
        return np.repeat(np.arange(self.runs, dtype=np.int64), self.lens)

    @cached_property
    def ends(self) -> np.ndarray:
        return self.starts + self.lens - 1

    @cached_property
    def _rows(self) -> np.ndarray:
        return np.arange(self.n, dtype=np.int64)

    @cached_property
    def pairs(self) -> bool:
        """Every run has exactly two records (one update of each key: the common case), so per-run reductions
        are comparisons of the two."""
        return bool(self.runs) and bool((self.lens == 2).all())

    def last(self, mask: np.ndarray) -> np.ndarray:
        """Per run: the last row where mask holds, else -1."""
        if self.runs == 0:
            return np.zeros(0, dtype=np.int64)
        if mask.all():
            return self.ends
        if self.pairs:
            return np.where(mask[self.ends], self.ends, np.where(mask[self.starts], self.starts, -1))
        return np.maximum.reduceat(np.where(mask, self._rows, -1), self.starts)

    def first(self, mask: np.ndarray) -> np.ndarray:
        """Per run: the first row where mask holds, else -1."""
        if self.runs == 0:
            return np.zeros(0, dtype=np.int64)
        if mask.all():
            return self.starts
        if self.pairs:
            return np.where(mask[self.starts], self.starts, np.where(mask[self.ends], self.ends, -1))
        n = len(mask)
        r = np.minimum.reduceat(np.where(mask, self._rows, n), self.starts)
        r[r == n] = -1
        return r

    def count(self, mask: np.ndarray) -> np.ndarray:
        if self.runs == 0:
            return np.zeros(0, dtype=np.int64)
        return np.add.reduceat(mask.astype(np.int64), self.starts)

    def any(self, mask: np.ndarray) -> np.ndarray:
        return self.count(mask) > 0

    @cached_property
    def positions(self) -> Positions:
        return Positions(self.starts, self.lens)


class Positions:
    """Position-major view of runs for sequential merges: `rows(p)` are the p-th records of every run that has
    more than p records, the runs ordered longest first (so the active runs are always a prefix)."""

    def __init__(self, starts: np.ndarray, lens: np.ndarray) -> None:
        self.order = np.argsort(-lens, kind="stable")
        self.sorted_starts = starts[self.order]
        maxlen = int(lens.max()) if len(lens) else 0
        self.maxlen = maxlen
        hist = np.bincount(lens, minlength=maxlen + 1)
        self.counts = len(lens) - np.cumsum(hist)[:maxlen]  # runs with more than p records

    def rows(self, p: int) -> np.ndarray:
        return self.sorted_starts[: self.counts[p]] + p

    def active(self, p: int) -> int:
        return int(self.counts[p])

    def unpermute(self, values: np.ndarray) -> np.ndarray:
        """State arrays are kept in `order`; this returns them in run order."""
        out = np.empty_like(values)
        out[self.order] = values
        return out


def take_or_null(col: pa.Array, idx: np.ndarray) -> pa.Array:
    """col[idx], null where idx < 0."""
    neg = idx < 0
    if neg.any():
        return col.take(pa.array(np.where(neg, 0, idx), mask=neg))
    return col.take(pa.array(idx))


class MergeColumn:
    """A column of the rows being merged, in merge order, without materializing it: `orig` is the input column,
    `sel` the input row of each merge position. Values are taken only when a function needs them."""

    def __init__(self, orig: pa.Array, sel: np.ndarray, orig_nulls: np.ndarray | None = None) -> None:
        self.orig = orig
        self.sel = sel
        self._orig_nulls = orig_nulls

    def __len__(self) -> int:
        return len(self.sel)

    @property
    def type(self) -> pa.DataType:
        return self.orig.type

    @cached_property
    def nulls(self) -> np.ndarray:
        if self.orig.null_count == 0:
            return np.zeros(len(self.sel), dtype=bool)
        base = self._orig_nulls if self._orig_nulls is not None else is_null(self.orig)
        return base[self.sel]

    @cached_property
    def array(self) -> pa.Array:
        return self.orig.take(pa.array(self.sel))

    def numpy(self, fill: object) -> np.ndarray:
        raw = primitive_values(self.orig)
        if raw is None:  # booleans, strings, ...
            col = self.array.fill_null(fill) if self.orig.null_count else self.array
            return col.to_numpy(zero_copy_only=False)
        x = raw[self.sel]
        if self.orig.null_count:
            x[self.nulls] = fill
        return x

    def order_key(self) -> np.ndarray:
        """Keys ordering the merged values (only their relative order matters, so only they are ranked)."""
        t = self.type
        raw = primitive_values(self.orig)
        if raw is not None and (pa.types.is_integer(t) or pa.types.is_temporal(t)):
            return raw[self.sel].astype(np.int64, copy=False)
        if raw is not None and pa.types.is_floating(t):  # Java's Float/Double.compare order, nulls are masked anyway
            return _float_bits_order(raw[self.sel])
        return order_key(self.array)


def primitive_values(col: pa.Array) -> np.ndarray | None:
    """The values buffer of a fixed-width numeric/temporal array as numpy (zero copy; nulls hold garbage)."""
    t = col.type
    if not (pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_temporal(t)) or len(col) == 0:
        return None
    width = t.bit_width // 8
    dtype = np.dtype(f"<f{width}") if pa.types.is_floating(t) else np.dtype(f"<i{width}")
    buf = col.buffers()[1]
    return np.frombuffer(buf, dtype=dtype, count=len(col) + col.offset)[col.offset:]


@dataclass
class Pick:
    """A merge result given as the merge position whose value each run takes (-1: null)."""

    idx: np.ndarray
