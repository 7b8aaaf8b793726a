"""xxHash64 (seed 0) of every value of an Arrow string / binary column, vectorized with numpy.

Paimon's bloom-filter file index hashes CHAR/VARCHAR (UTF-8 bytes) and BINARY/VARBINARY values with
zero-allocation-hashing's `LongHashFunction.xx()`, which is xxHash64 with seed 0 (the public XXH64 algorithm:
32-byte stripes over four lanes, then 8-, 4- and 1-byte tails, then the avalanche). Values are grouped by byte
length (rows ordered by length once, so each length's bytes are one (rows, length) matrix); each group is hashed
at once with wrapping uint64 arithmetic, so the only Python loops run over distinct lengths and over the stripes
of one length, never over rows.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

_U64 = np.uint64
P1 = _U64(0x9E3779B185EBCA87)
P2 = _U64(0xC2B2AE3D27D4EB4F)
P3 = _U64(0x165667B19E3779F9)
P4 = _U64(0x85EBCA77C2B2AE63)
P5 = _U64(0x27D4EB2F165667C5)
_MINUS_P1 = _U64((1 << 64) - 0x9E3779B185EBCA87)  # seed - P1, wrapped
_V1_INIT = _U64((0x9E3779B185EBCA87 + 0xC2B2AE3D27D4EB4F) % (1 << 64))  # seed + P1 + P2, wrapped


def _rotl(x: np.ndarray, r: int) -> np.ndarray:
    return (x << _U64(r)) | (x >> _U64(64 - r))


def _round(acc: np.ndarray, lane: np.ndarray) -> np.ndarray:
    return _rotl(acc + lane * P2, 31) * P1


def _lanes(block: np.ndarray, start: int, count: int, width: int) -> np.ndarray:
    """`count` little-endian unsigned words of `width` bytes of every row of `block`, from byte `start`."""
    part = np.ascontiguousarray(block[:, start:start + count * width])
    return part.view("<u8" if width == 8 else "<u4").reshape(block.shape[0], count).astype(np.uint64)


def _hash_block(block: np.ndarray) -> np.ndarray:
    """xxHash64 of each row of an (n, length) uint8 matrix."""
    n, length = block.shape
    pos = 0
    if length >= 32:
        stripes = length // 32
        lanes = _lanes(block, 0, stripes * 4, 8).reshape(n, stripes, 4)
        v1 = np.full(n, _V1_INIT)
        v2 = np.full(n, P2)
        v3 = np.zeros(n, dtype=np.uint64)
        v4 = np.full(n, _MINUS_P1)
        for s in range(stripes):
            v1 = _round(v1, lanes[:, s, 0])
            v2 = _round(v2, lanes[:, s, 1])
            v3 = _round(v3, lanes[:, s, 2])
            v4 = _round(v4, lanes[:, s, 3])
        h = _rotl(v1, 1) + _rotl(v2, 7) + _rotl(v3, 12) + _rotl(v4, 18)
        zero = np.zeros(n, dtype=np.uint64)
        for v in (v1, v2, v3, v4):
            h = (h ^ _round(zero, v)) * P1 + P4
        pos = stripes * 32
    else:
        h = np.full(n, P5)
    h = h + _U64(length)
    words = (length - pos) // 8
    if words:
        lanes = _lanes(block, pos, words, 8)
        zero = np.zeros(n, dtype=np.uint64)
        for w in range(words):
            h = _rotl(h ^ _round(zero, lanes[:, w]), 27) * P1 + P4
        pos += words * 8
    if length - pos >= 4:
        h = _rotl(h ^ (_lanes(block, pos, 1, 4)[:, 0] * P1), 23) * P2 + P3
        pos += 4
    for i in range(pos, length):
        h = _rotl(h ^ (block[:, i].astype(np.uint64) * P5), 11) * P1
    h = (h ^ (h >> _U64(33))) * P2
    h = (h ^ (h >> _U64(29))) * P3
    return h ^ (h >> _U64(32))


def xxhash64(values: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """xxHash64 (seed 0) of every value of a string / binary column without nulls, as int64 (Java's long)."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks() if values.num_chunks != 1 else values.chunk(0)
    t = values.type
    if not pa.types.is_large_binary(t):  # strings hash their UTF-8 bytes
        values = values.cast(pa.large_binary())
    n = len(values)
    out = np.zeros(n, dtype=np.uint64)
    if n == 0:
        return out.view(np.int64)
    offsets = np.frombuffer(values.buffers()[1], dtype=np.int64)[values.offset:values.offset + n + 1]
    lengths = np.diff(offsets)
    # rows ordered by length: each length's values then lie back to back, an (rows, length) matrix without copying
    if (lengths == lengths[0]).all():
        order, ordered = np.arange(n), values
    else:  # a radix sort when lengths fit 16 bits
        order = np.argsort(lengths.astype(np.uint16) if lengths.max() < 1 << 16 else lengths, kind="stable")
        ordered = values.take(pa.array(order))
    _, offsets_buf, data_buf = ordered.buffers()
    offsets = np.frombuffer(offsets_buf, dtype=np.int64)[ordered.offset:ordered.offset + n + 1]
    data = np.frombuffer(data_buf, dtype=np.uint8) if data_buf is not None else np.zeros(0, dtype=np.uint8)
    lengths = lengths[order]
    bounds = [0, *(np.flatnonzero(np.diff(lengths)) + 1).tolist(), n]
    with np.errstate(over="ignore"):
        for a, b in zip(bounds, bounds[1:], strict=False):
            length = int(lengths[a])
            block = data[offsets[a]:offsets[b]].reshape(b - a, length)
            out[order[a:b]] = _hash_block(block)
    return out.view(np.int64)
