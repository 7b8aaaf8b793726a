"""Java-compatible bucket hashing, vectorized over Arrow columns.

Mirrors BinaryRow.hashCode() (MurmurHashUtils.hashBytesByWords: MurmurHash3 x86_32, seed 42, over the whole
row bytes read as little-endian 32-bit words, fmix with the byte length) of the bucket-key row built by
FixedBucketRowKeyExtractor's codegen projection, and DefaultBucketFunction (``abs(hash % n)``).
See paimon-format.md sections 5.3 and 6.1.

hash_rows builds, per block of rows, a (words, rows) uint32 matrix holding each row's BinaryRow bytes
(header with null bits, 8-byte slots, variable part) and runs murmur column by column; rows whose total
length differs (long strings, nulls) are hashed group-wise by word count.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from table_format.row.binary_row import header_size, row_bytes_for_hash
from table_format.row.key_columns import as_array, key_column
from table_format.types import DataType

__all__ = ["SEED", "bucket_of", "hash_bytes", "hash_row", "hash_rows"]

SEED = 42
_C1 = np.uint32(0xCC9E2D51)
_C2 = np.uint32(0x1B873593)
_M5 = np.uint32(5)
_N1 = np.uint32(0xE6546B64)
_F1 = np.uint32(0x85EBCA6B)
_F2 = np.uint32(0xC2B2AE35)
_MASK32 = 0xFFFFFFFF
_BLOCK_ROWS = 1 << 17
_U32 = np.uint32
_WORDS = struct.Struct("<I")


# ---------------------------------------------------------------------------------------------------------
# scalar murmur (reference / small inputs)


def hash_bytes(data: bytes) -> int:
    """MurmurHashUtils.hashBytesByWords(data, seed 42) as a signed int; len(data) must be a multiple of 4."""
    if len(data) % 4:
        raise ValueError(f"BinaryRow bytes must be word aligned, got {len(data)} bytes")
    h = SEED
    for (k,) in _WORDS.iter_unpack(data):
        k = (k * 0xCC9E2D51) & _MASK32
        k = ((k << 15) | (k >> 17)) & _MASK32
        k = (k * 0x1B873593) & _MASK32
        h ^= k
        h = ((h << 13) | (h >> 19)) & _MASK32
        h = (h * 5 + 0xE6546B64) & _MASK32
    h ^= len(data)
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & _MASK32
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & _MASK32
    h ^= h >> 16
    return h - (1 << 32) if h & 0x80000000 else h


def hash_row(values: Sequence[Any], types: Sequence[DataType]) -> int:
    """BinaryRow.hashCode() of one key row of Python values (see table_format.row.binary_row)."""
    return hash_bytes(row_bytes_for_hash(values, types))


def bucket_of(hashes: np.ndarray, num_buckets: int) -> np.ndarray:
    """DefaultBucketFunction: ``Math.abs(hash % n)`` with Java's truncating remainder, as int32."""
    if num_buckets <= 0:
        raise ValueError(f"bucket count must be positive, got {num_buckets}")
    h = np.asarray(hashes, dtype=np.int64)
    return np.abs(np.fmod(h, num_buckets)).astype(np.int32)


# ---------------------------------------------------------------------------------------------------------
# vectorized murmur


def _murmur_matrix(words: np.ndarray) -> np.ndarray:
    """Murmur3 x86_32 (seed 42) of each column of a (n_words, n_rows) uint32 matrix; returns int32."""
    n_words, n = words.shape
    h = np.full(n, SEED, dtype=_U32)
    k = np.empty(n, dtype=_U32)
    t = np.empty(n, dtype=_U32)
    with np.errstate(over="ignore"):
        for w in range(n_words):
            np.multiply(words[w], _C1, out=k)
            np.left_shift(k, _U32(15), out=t)
            np.right_shift(k, _U32(17), out=k)
            k |= t
            k *= _C2
            h ^= k
            np.left_shift(h, _U32(13), out=t)
            np.right_shift(h, _U32(19), out=h)
            h |= t
            h *= _M5
            h += _N1
        h ^= _U32((4 * n_words) & _MASK32)
        h ^= h >> _U32(16)
        h *= _F1
        h ^= h >> _U32(13)
        h *= _F2
        h ^= h >> _U32(16)
    return h.view(np.int32)


# ---------------------------------------------------------------------------------------------------------
# row assembly


def _hash_block(cols: list[pa.Array], types: Sequence[DataType]) -> np.ndarray:
    n = len(cols[0]) if cols else 0
    arity = len(types)
    hw = header_size(arity) // 4
    fixed_words = hw + 2 * arity
    parts = [key_column(c, t) for c, t in zip(cols, types, strict=True)]

    header = np.zeros((hw, n), dtype=_U32)
    for i, p in enumerate(parts):
        bit = i + 8
        header[bit // 32] |= p.null.astype(_U32) << _U32(bit % 32)

    # variable-part layout: word offset (from row start) of each var field, total words per row
    total = np.full(n, fixed_words, dtype=np.int64)
    var_at: list[np.ndarray | None] = []
    for p in parts:
        if p.var_words is None:
            var_at.append(None)
            continue
        var_at.append(total.copy())
        has = p.var_words > 0
        p.hi = np.where(has, (total * 4).astype(_U32), p.hi)
        total += p.var_words

    out = np.empty(n, dtype=np.int32)
    if n == 0 or total.min() == total.max():
        groups: list[tuple[int, np.ndarray | slice]] = [(int(total[0]) if n else fixed_words, slice(None))]
    else:
        order = np.argsort(total, kind="stable")
        sizes, firsts = np.unique(total[order], return_index=True)
        bounds = [*firsts.tolist(), n]
        groups = [(int(sz), order[bounds[g] : bounds[g + 1]]) for g, sz in enumerate(sizes)]  # stable: ascending
    for size, rows in groups:
        m = np.zeros((size, n if isinstance(rows, slice) else len(rows)), dtype=_U32)
        m[:hw] = header[:, rows]
        for i, p in enumerate(parts):
            m[hw + 2 * i] = p.lo[rows]
            m[hw + 2 * i + 1] = p.hi[rows]
        for p, at in zip(parts, var_at, strict=True):
            if at is None or p.words is None or p.var_words is None:
                continue
            vw, start = p.var_words[rows], at[rows]
            most = int(vw.max(initial=0))
            if not most:
                continue
            if vw.min() == most and start.min() == start.max():
                # every row of the group has this field's var words at the same place: fill whole rows
                m[int(start[0]) : int(start[0]) + most] = p.words(most, rows)
                continue
            idx = np.flatnonzero(vw)
            var = p.words(most, np.arange(n)[rows][idx])
            for k in range(most):
                sel = vw[idx] > k
                m[start[idx[sel]] + k, idx[sel]] = var[k, sel]
        out[rows] = _murmur_matrix(m)
    return out


def hash_rows(columns: Sequence[pa.Array | pa.ChunkedArray], types: Sequence[DataType]) -> np.ndarray:
    """BinaryRow.hashCode() of the row (columns[0][i], columns[1][i], ...) for every i, as int32.

    Columns may be chunked, of any Arrow type holding the Paimon type (string/large_string/view,
    any timestamp unit, date32/date64, decimal of another scale); timestamps are truncated to the
    Paimon precision. Nulls of non-compact DECIMAL/TIMESTAMP reserve variable-part bytes, as in Java.
    """
    if len(columns) != len(types):
        raise ValueError(f"{len(columns)} columns for {len(types)} types")
    if not columns:
        raise ValueError("hash_rows needs at least one column")
    arrays = [as_array(c) for c in columns]
    n = len(arrays[0])
    if any(len(a) != n for a in arrays):
        raise ValueError(f"columns differ in length: {[len(a) for a in arrays]}")
    out = np.empty(n, dtype=np.int32)
    for start in range(0, n, _BLOCK_ROWS):
        stop = min(n, start + _BLOCK_ROWS)
        out[start:stop] = _hash_block([a.slice(start, stop - start) for a in arrays], types)
    return out
