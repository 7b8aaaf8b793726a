"""Columnar sort keys: stable multi-column sort permutations and run boundaries, all in numpy.

Key order follows Paimon's key comparators (RecordComparator): numbers by value, strings and
binaries by unsigned bytes, booleans false < true. Each column becomes a numeric numpy array
(non-numeric columns through pyarrow's dense rank). Integer keys whose ranges fit combine into one int64
sorted once: a radix sort when it spans <= 65536 values, timsort when the rows are a few ascending runs
(concatenated sorted files), else a quicksort of unique (value, position); otherwise one stable argsort per
column, least significant first (LSD). Equal neighbours give the run boundaries.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc


def sortable(column: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """A numpy array whose order (and equality) is the column's key order (nulls last)."""
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    t = column.type
    if column.null_count == 0:
        if pa.types.is_integer(t):
            return column.to_numpy(zero_copy_only=False)
        if pa.types.is_boolean(t):
            return column.to_numpy(zero_copy_only=False).astype(np.uint8)
        if pa.types.is_date32(t) or pa.types.is_time32(t):
            return column.cast(pa.int32()).to_numpy(zero_copy_only=False)
        if pa.types.is_timestamp(t) or pa.types.is_date64(t) or pa.types.is_time64(t):
            return column.cast(pa.int64()).to_numpy(zero_copy_only=False)
    # strings, binaries, decimals, floats (NaN equals NaN, as Double.compare) and anything with nulls:
    # dense ranks (pyarrow sorts bytes unsigned)
    ranks = pc.rank(column, sort_keys="ascending", tiebreaker="dense")
    return ranks.to_numpy(zero_copy_only=False)


_FEW_RUNS = 64  # descents below which a stable sort (timsort) beats numpy's quicksort of unique keys


def stable_sort_indices(keys: Sequence[np.ndarray], *, initial: np.ndarray | None = None) -> np.ndarray:
    """Permutation sorting rows by keys[0], then keys[1], ..., ties kept in `initial` order (default input order)."""
    n = len(keys[0]) if keys else (0 if initial is None else len(initial))
    composite = _composite(keys)
    if composite is not None:
        values, span, lo = composite  # values - lo are in [0, span)
        ordered = values if initial is None else values[initial]
        if span <= 1 << 16:  # numpy's stable sort of uint16 is a radix sort, O(n)
            order = np.argsort(_from_zero(ordered, lo).astype(np.uint16), kind="stable")
        elif n > 1 and np.count_nonzero(ordered[1:] < ordered[:-1]) < _FEW_RUNS:
            # a few ascending runs (concatenated sorted files): timsort merges them in about linear time
            order = np.argsort(ordered, kind="stable")
        elif span * max(n, 1) < 1 << 62:  # unique keys (value, then position): any sort is stable, use the fastest
            order = np.argsort(_from_zero(ordered, lo) * np.int64(n) + np.arange(n, dtype=np.int64))
        else:
            order = np.argsort(ordered, kind="stable")
        return order.astype(np.int64, copy=False) if initial is None else initial[order]
    perm = np.arange(n, dtype=np.int64) if initial is None else initial
    for k in reversed(keys):
        perm = perm[np.argsort(_narrow(k)[perm], kind="stable")]
    return perm


def _from_zero(values: np.ndarray, lo: int) -> np.ndarray:
    return values - np.int64(lo) if lo else values


def _composite(keys: Sequence[np.ndarray]) -> tuple[np.ndarray, int, int] | None:
    """Integer keys as one int64 array, the number of values it spans and its minimum: one sort instead of one per
    key. A lone int64 key is itself (no copy); several keys whose value ranges multiply to < 2**62 combine in mixed
    radix from 0 (keys[0] most significant; e.g. bucket code then an integer key)."""
    if len(keys) == 1 and keys[0].dtype == np.int64 and len(keys[0]):
        lo, hi = int(keys[0].min()), int(keys[0].max())
        return keys[0], hi - lo + 1, lo
    out: np.ndarray | None = None
    total = 1
    for k in keys:
        if k.dtype.kind not in "iu" or not len(k):
            return None
        lo, hi = int(k.min()), int(k.max())
        span = hi - lo + 1
        total *= span
        if total >= 1 << 62 or hi >= 1 << 63:
            return None
        part = k.astype(np.int64) - np.int64(lo) if k.dtype.kind == "i" else (k - np.uint64(lo)).astype(np.int64)
        out = part if out is None else out * np.int64(span) + part
    return None if out is None else (out, total, 0)


def _narrow(k: np.ndarray) -> np.ndarray:
    """Integers spanning < 65536 values as uint16: numpy's stable sort is then a radix sort."""
    if k.dtype.kind in "iu" and len(k) and k.dtype.itemsize > 2:
        lo, hi = int(k.min()), int(k.max())
        if hi - lo < 65536:
            return (k - lo).astype(np.uint16)
    return k


def last_of_runs(sorted_keys: Sequence[np.ndarray]) -> np.ndarray:
    """Boolean mask: row i is the last of its run of equal keys (keys already sorted)."""
    n = len(sorted_keys[0])
    if n == 0:
        return np.zeros(0, dtype=bool)
    differs = np.zeros(n - 1, dtype=bool)
    for k in sorted_keys:
        differs |= k[:-1] != k[1:]
    return np.concatenate([differs, [True]])


def first_of_runs(sorted_keys: Sequence[np.ndarray]) -> np.ndarray:
    """Boolean mask: row i is the first of its run of equal keys (keys already sorted)."""
    n = len(sorted_keys[0])
    if n == 0:
        return np.zeros(0, dtype=bool)
    differs = np.zeros(n - 1, dtype=bool)
    for k in sorted_keys:
        differs |= k[:-1] != k[1:]
    return np.concatenate([[True], differs])
