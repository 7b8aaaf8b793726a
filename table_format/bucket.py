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
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from table_format.errors import SchemaError
from table_format.row.binary_row import (
    MAX_COMPACT_DECIMAL_PRECISION,
    MAX_COMPACT_TIMESTAMP_PRECISION,
    MAX_INLINE_BYTES,
    header_size,
    row_bytes_for_hash,
)
from table_format.types import (
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
    SmallIntType,
    TimestampType,
    TimeType,
    TinyIntType,
    VarBinaryType,
    VarCharType,
)

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
_U64 = np.uint64
_WORDS = struct.Struct("<I")
_BYTE_MASKS = np.array([0, 0xFF, 0xFFFF, 0xFFFFFF, 0xFFFFFFFF], dtype=np.uint32)


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
# per-column BinaryRow pieces


WordsFn = Callable[[int, "np.ndarray | slice"], np.ndarray]


@dataclass
class _Column:
    """One field of the key row for a block of rows: slot words, null mask and variable-part words.

    var_words[i] is the number of 32-bit words field i of row i appends to the variable part (0 when the
    value is inline/fixed); words(count, rows) yields the first `count` words of that part for the given
    rows as a (count, len(rows)) matrix. For fields with a variable part, slot_hi still lacks the offset
    (added once the row layout is known).
    """

    null: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    var_words: np.ndarray | None = None
    words: WordsFn | None = None


def _as_array(col: Any) -> pa.Array:
    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks() if col.num_chunks != 1 else col.chunk(0)
    elif not isinstance(col, pa.Array):
        col = pa.array(col)
    if pa.types.is_dictionary(col.type):
        col = col.dictionary_decode()
    return col


def _nulls(arr: pa.Array) -> np.ndarray:
    if arr.null_count == 0:
        return np.zeros(len(arr), dtype=bool)
    return np.asarray(arr.is_null().to_numpy(zero_copy_only=False), dtype=bool)


def _ints(arr: pa.Array) -> np.ndarray:
    """Values as int64 numpy (nulls as 0)."""
    if arr.type != pa.int64():
        arr = pc.cast(arr, pa.int64())
    if arr.null_count:
        arr = pc.fill_null(arr, 0)
    return np.asarray(arr.to_numpy(zero_copy_only=False)).astype(np.int64, copy=False)


def _split64(v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    u = v.astype(np.int64, copy=False).view(_U64)
    return (u & _U64(_MASK32)).astype(_U32), (u >> _U64(32)).astype(_U32)


def _fixed(null: np.ndarray, v: np.ndarray, nbytes: int) -> _Column:
    """Slot holding the low `nbytes` bytes of integer v (remaining bytes zero)."""
    lo, hi = _split64(v)
    if nbytes < 8:
        hi = np.zeros_like(lo)
        if nbytes < 4:
            lo &= _U32((1 << (8 * nbytes)) - 1)
    lo[null] = 0
    hi[null] = 0
    return _Column(null, lo, hi)


def _byte_column(arr: pa.Array, null: np.ndarray) -> _Column:
    """STRING/CHAR/BINARY/VARBINARY: inline when <= 7 bytes, else (offset << 32 | len) + padded var bytes."""
    t = arr.type
    if pa.types.is_string_view(t) or pa.types.is_binary_view(t):
        arr = pc.cast(arr, pa.large_binary())
        t = arr.type
    n = len(arr)
    bufs = arr.buffers()
    if pa.types.is_fixed_size_binary(t):
        width = t.byte_width
        starts = np.arange(n, dtype=np.int64) * width
        lengths = np.full(n, width, dtype=np.int64)
        first, data_buf = arr.offset * width, bufs[1]
    elif t in (pa.string(), pa.binary(), pa.large_string(), pa.large_binary()):
        odt = np.int64 if t in (pa.large_string(), pa.large_binary()) else np.int32
        offs = np.frombuffer(bufs[1], dtype=odt, count=n + 1, offset=arr.offset * np.dtype(odt).itemsize)
        first = int(offs[0])
        offs = offs.astype(np.int64) - first
        starts = offs[:-1]
        lengths = offs[1:] - starts
        data_buf = bufs[2]
    else:
        raise SchemaError(f"Arrow type {t} cannot hold a STRING/BINARY bucket key")
    size = int(starts[-1] + lengths[-1]) if n else 0
    data = np.frombuffer(data_buf, dtype=np.uint8, count=size, offset=first) if size else np.zeros(0, np.uint8)
    # word-aligned copy with >= 16 bytes of zero padding so every 8-byte read below stays in bounds
    padded = np.zeros((len(data) + 19) // 4 * 4, dtype=np.uint8)
    padded[: len(data)] = data
    words32 = padded.view("<u4").astype(_U32, copy=False)
    lengths = np.where(null, 0, lengths)
    starts = np.where(null, 0, starts)
    aligned = not (starts & 3).any()

    def words(count: int, rows: np.ndarray | slice) -> np.ndarray:
        """Words 0..count-1 (bytes 4k..4k+3, zero beyond the value's length) of each selected row's bytes."""
        p = starts[rows]
        q = p >> 2
        length = lengths[rows]
        out = np.empty((count, len(q)), dtype=_U32)
        if not aligned:
            shift = ((p & 3) << 3).astype(_U32)
            back = _U32(31) - shift
        last = len(words32) - 2  # rows shorter than `count` words may read past the data: clamp (masked below)
        clamp = len(q) > 0 and int(q.max()) + count > last
        for k in range(count):
            at = np.minimum(q + k, last) if clamp else q + k
            w = words32[at]
            if not aligned:
                w = (w >> shift) | ((words32[at + 1] << _U32(1)) << back)
            avail = length - 4 * k
            if (avail < 4).any():
                w &= _BYTE_MASKS[np.clip(avail, 0, 4)]
            out[k] = w
        return out

    inline = lengths <= MAX_INLINE_BYTES
    lo = lengths.astype(_U32)
    hi = np.zeros(n, dtype=_U32)
    if inline.any():
        rows = np.flatnonzero(inline)
        head = words(2, rows)
        lo[rows] = head[0]
        hi[rows] = head[1] | ((lengths[rows].astype(_U32) | _U32(0x80)) << _U32(24))
    lo[null] = 0
    hi[null] = 0
    var_words = np.where(inline, 0, (lengths + 7) // 8 * 2)
    return _Column(null, lo, hi, var_words.astype(np.int64), words)


def _decimal_column(arr: pa.Array, null: np.ndarray, t: DecimalType) -> _Column:
    target = pa.decimal128(t.precision, t.scale)
    if arr.type != target:
        arr = pc.cast(arr, target)
    n = len(arr)
    raw = np.frombuffer(arr.buffers()[1], dtype="<u8", count=2 * n, offset=arr.offset * 16).reshape(n, 2)
    lo64, hi64 = raw[:, 0].copy(), raw[:, 1].copy()
    lo64[null] = 0
    hi64[null] = 0
    if t.precision <= MAX_COMPACT_DECIMAL_PRECISION:
        return _fixed(null, lo64.view(np.int64), 8)
    # BigInteger.toByteArray(): big-endian two's complement, minimal length, reserved 16 bytes
    neg = (hi64 >> _U64(63)).astype(bool)
    mag_hi = np.where(neg, ~hi64, hi64)
    mag_lo = np.where(neg, ~lo64, lo64)
    nbytes = np.ones(n, dtype=np.int64)
    for b in range(1, 16):
        bit = 8 * b - 1  # value needs more than b bytes iff magnitude >= 2**bit
        if bit < 64:
            ge = (mag_hi != 0) | (mag_lo >= _U64(1 << bit))
        else:
            ge = mag_hi >= _U64(1 << (bit - 64))
        nbytes += ge
    le = np.empty((n, 16), dtype=np.uint8)
    le[:, :8] = lo64.view(np.uint8).reshape(n, 8)
    le[:, 8:] = hi64.view(np.uint8).reshape(n, 8)
    be = le[:, ::-1]
    src = np.arange(16)[None, :] + (16 - nbytes)[:, None]
    var = np.where(src < 16, np.take_along_axis(be, np.minimum(src, 15), axis=1), 0).astype(np.uint8)
    var_w = np.ascontiguousarray(var).view("<u4").astype(_U32, copy=False)  # (n, 4)
    lo = np.where(null, 0, nbytes).astype(_U32)
    hi = np.zeros(n, dtype=_U32)

    def words(count: int, rows: np.ndarray | slice) -> np.ndarray:
        return var_w[rows, :count].T

    return _Column(null, lo, hi, np.full(n, 4, dtype=np.int64), words)


_UNIT_NANOS = {"s": 1_000_000_000, "ms": 1_000_000, "us": 1_000, "ns": 1}


def _timestamp_column(arr: pa.Array, null: np.ndarray, precision: int) -> _Column:
    if not pa.types.is_timestamp(arr.type):
        raise SchemaError(f"Arrow type {arr.type} cannot hold a TIMESTAMP bucket key")
    unit = arr.type.unit
    v = _ints(arr)
    per_unit = _UNIT_NANOS[unit]
    if per_unit >= 1_000_000:
        millis = v * (per_unit // 1_000_000)
        nanos = np.zeros_like(v)
    else:
        millis, rem = np.divmod(v, 1_000_000 // per_unit)
        nanos = rem * per_unit
    if precision <= MAX_COMPACT_TIMESTAMP_PRECISION:
        if precision < 3:
            millis -= millis % (10 ** (3 - precision))
        return _fixed(null, millis, 8)
    if precision < 9:
        nanos -= nanos % (10 ** (9 - precision))
    n = len(arr)
    mlo, mhi = _split64(millis)
    var_w = np.stack([mlo, mhi], axis=1)
    var_w[null] = 0
    lo = np.where(null, 0, nanos).astype(_U32)

    def words(count: int, rows: np.ndarray | slice) -> np.ndarray:
        return var_w[rows, :count].T

    return _Column(null, lo, np.zeros(n, dtype=_U32), np.full(n, 2, dtype=np.int64), words)


def _column(col: pa.Array, t: DataType) -> _Column:
    null = _nulls(col)
    a = col.type
    if isinstance(t, BooleanType):
        return _fixed(null, _ints(col), 1)
    if isinstance(t, TinyIntType):
        return _fixed(null, _ints(col), 1)
    if isinstance(t, SmallIntType):
        return _fixed(null, _ints(col), 2)
    if isinstance(t, IntType):
        return _fixed(null, _ints(col), 4)
    if isinstance(t, BigIntType):
        return _fixed(null, _ints(col), 8)
    if isinstance(t, FloatType):
        f = pc.fill_null(pc.cast(col, pa.float32()), 0.0).to_numpy(zero_copy_only=False)
        return _fixed(null, np.asarray(f, dtype=np.float32).view(np.int32).astype(np.int64), 4)
    if isinstance(t, DoubleType):
        d = pc.fill_null(pc.cast(col, pa.float64()), 0.0).to_numpy(zero_copy_only=False)
        return _fixed(null, np.asarray(d, dtype=np.float64).view(np.int64), 8)
    if isinstance(t, DateType):
        if pa.types.is_date64(a):
            return _fixed(null, np.floor_divide(_ints(pc.cast(col, pa.int64())), 86_400_000), 4)
        return _fixed(null, _ints(pc.cast(col, pa.int32()) if pa.types.is_date32(a) else col), 4)
    if isinstance(t, TimeType):
        if pa.types.is_time(a):
            per = _UNIT_NANOS[a.unit]
            raw = _ints(pc.cast(col, pa.int32() if pa.types.is_time32(a) else pa.int64()))
            millis = raw * (per // 1_000_000) if per >= 1_000_000 else raw // (1_000_000 // per)
            return _fixed(null, millis, 4)
        return _fixed(null, _ints(col), 4)
    if isinstance(t, DecimalType):
        return _decimal_column(col, null, t)
    if isinstance(t, (TimestampType, LocalZonedTimestampType)):
        return _timestamp_column(col, null, t.precision)
    if isinstance(t, (VarCharType, CharType, VarBinaryType, BinaryType)):
        return _byte_column(col, null)
    raise SchemaError(f"type {t} cannot be a bucket key")


# ---------------------------------------------------------------------------------------------------------
# row assembly


def _hash_block(cols: list[pa.Array], types: Sequence[DataType]) -> np.ndarray:
    n = len(cols[0]) if cols else 0
    arity = len(types)
    hw = header_size(arity) // 4
    fixed_words = hw + 2 * arity
    parts = [_column(c, t) for c, t in zip(cols, types, strict=True)]

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
    arrays = [_as_array(c) for c in columns]
    n = len(arrays[0])
    if any(len(a) != n for a in arrays):
        raise ValueError(f"columns differ in length: {[len(a) for a in arrays]}")
    out = np.empty(n, dtype=np.int32)
    for start in range(0, n, _BLOCK_ROWS):
        stop = min(n, start + _BLOCK_ROWS)
        out[start:stop] = _hash_block([a.slice(start, stop - start) for a in arrays], types)
    return out
