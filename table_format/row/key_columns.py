"""One column of a BinaryRow, for a block of rows at once: the 8-byte slot words, the null mask and the words the
field appends to the row's variable part (BinaryRowWriter's layout: inline strings/binaries of up to 7 bytes,
compact decimals and timestamps in the slot, longer values in the variable part). bucket.py assembles them into
whole rows and hashes them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from table_format.errors import SchemaError
from table_format.row.binary_row import MAX_INLINE_BYTES
from table_format.row.value_codecs import MAX_COMPACT_DECIMAL_PRECISION, MAX_COMPACT_TIMESTAMP_PRECISION
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

_U32 = np.uint32
_U64 = np.uint64
_MASK32 = 0xFFFFFFFF
_BYTE_MASKS = np.array([0, 0xFF, 0xFFFF, 0xFFFFFF, 0xFFFFFFFF], dtype=np.uint32)



WordsFn = Callable[[int, "np.ndarray | slice"], np.ndarray]


@dataclass
class KeyColumn:
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


def as_array(col: Any) -> pa.Array:
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


def _fixed(null: np.ndarray, v: np.ndarray, nbytes: int) -> KeyColumn:
    """Slot holding the low `nbytes` bytes of integer v (remaining bytes zero)."""
    lo, hi = _split64(v)
    if nbytes < 8:
        hi = np.zeros_like(lo)
        if nbytes < 4:
            lo &= _U32((1 << (8 * nbytes)) - 1)
    lo[null] = 0
    hi[null] = 0
    return KeyColumn(null, lo, hi)


def _byte_column(arr: pa.Array, null: np.ndarray) -> KeyColumn:
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
    return KeyColumn(null, lo, hi, var_words.astype(np.int64), words)


def _decimal_column(arr: pa.Array, null: np.ndarray, t: DecimalType) -> KeyColumn:
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

    return KeyColumn(null, lo, hi, np.full(n, 4, dtype=np.int64), words)


_UNIT_NANOS = {"s": 1_000_000_000, "ms": 1_000_000, "us": 1_000, "ns": 1}


def _timestamp_column(arr: pa.Array, null: np.ndarray, precision: int) -> KeyColumn:
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

    return KeyColumn(null, lo, np.zeros(n, dtype=_U32), np.full(n, 2, dtype=np.int64), words)


def key_column(col: pa.Array, t: DataType) -> KeyColumn:
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
