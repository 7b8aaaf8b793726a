"""Paimon's bloom filter of one column of one data file (BloomFilterFileIndex, index type "bloom-filter").

Byte layout (what Java's BloomFilterFileIndex writes and reads): the number of hash functions as a 4-byte
big-endian int, then the bit set, bit i in byte i // 8 at bit i % 8 (least significant first). The filter is
sized by the options, not by the rows (BloomFilter64): bits = int(-items * ln(fpp) / ln(2)^2) rounded up to the
next multiple of 8 (a multiple gets 8 more), hash functions = max(1, round(bits / items * ln 2)). A value's
64-bit hash h (FastHash) sets, for i in 1..k, the bit (c if c >= 0 else ~c) % bits of c = int32(low32(h) +
i * high32(h)). FastHash: xxHash64 of the bytes for CHAR/VARCHAR (UTF-8) and BINARY/VARBINARY; Thomas Wang's
64-bit integer hash of the value as a Java long for the integer types, DATE (days), TIME (millis),
FLOAT/DOUBLE (their IEEE bits, NaN canonical) and TIMESTAMP (millis up to precision 3, else micros). Nulls are
not added. Other types (BOOLEAN, DECIMAL, nested) Java refuses to index.
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from table_format.data.xxhash64 import xxhash64
from table_format.errors import CorruptMetadataError
from table_format.types import (
    BigIntType,
    BinaryType,
    CharType,
    DataType,
    DateType,
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

BLOOM_FILTER = "bloom-filter"
DEFAULT_ITEMS = 1_000_000
DEFAULT_FPP = 0.1
_BYTES_TYPES = (CharType, VarCharType, BinaryType, VarBinaryType)
_INT_TYPES = (TinyIntType, SmallIntType, IntType, BigIntType, DateType)
_TIMESTAMP_TYPES = (TimestampType, LocalZonedTimestampType)
_UNIT_PER_SECOND = {"s": 1, "ms": 1000, "us": 1_000_000, "ns": 1_000_000_000}


def indexable(dtype: DataType) -> bool:
    """Whether Java's FastHash hashes values of this type (else Java refuses a bloom filter on the column)."""
    return isinstance(dtype, (*_BYTES_TYPES, *_INT_TYPES, FloatType, DoubleType, TimeType, *_TIMESTAMP_TYPES))


def _long_hash(key: np.ndarray) -> np.ndarray:
    """Thomas Wang's 64-bit integer hash (FastHash.getLongHash) over int64, wrapping, arithmetic shifts."""
    key = (~key) + (key << 21)
    key = key ^ (key >> 24)
    key = (key + (key << 3)) + (key << 8)
    key = key ^ (key >> 14)
    key = (key + (key << 2)) + (key << 4)
    key = key ^ (key >> 28)
    return key + (key << 31)


def _as_int64(values: pa.Array, per_second: int | None = None) -> np.ndarray:
    """Integer-like values as int64; temporal values in units of 1/`per_second` s (floored, as Java's)."""
    t = values.type
    if pa.types.is_timestamp(t) or pa.types.is_time(t):
        if pa.types.is_timestamp(t):
            raw = pc.cast(values.cast(pa.timestamp(t.unit)), pa.int64()).to_numpy()
        else:  # time32 casts only to int32
            raw = pc.cast(values, pa.int32() if t.bit_width == 32 else pa.int64()).to_numpy().astype(np.int64)
        have = _UNIT_PER_SECOND[t.unit]
        assert per_second is not None
        return raw * (per_second // have) if per_second >= have else raw // (have // per_second)
    if pa.types.is_date(t):
        return pc.cast(values.cast(pa.date32()), pa.int32()).to_numpy().astype(np.int64)
    return pc.cast(values, pa.int64()).to_numpy()


def fast_hash(values: pa.Array | pa.ChunkedArray, dtype: DataType) -> np.ndarray:
    """The FastHash (int64) of every value of a column of Paimon type `dtype`, without nulls."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks() if values.num_chunks != 1 else values.chunk(0)
    with np.errstate(over="ignore"):
        if isinstance(dtype, _BYTES_TYPES):
            return xxhash64(values)
        if isinstance(dtype, _INT_TYPES):
            return _long_hash(_as_int64(values))
        if isinstance(dtype, TimeType):
            return _long_hash(_as_int64(values, 1000))
        if isinstance(dtype, _TIMESTAMP_TYPES):
            return _long_hash(_as_int64(values, 1000 if dtype.precision <= 3 else 1_000_000))
        if isinstance(dtype, FloatType):
            f = pc.cast(values, pa.float32()).to_numpy(zero_copy_only=False).astype(np.float32)
            bits = np.where(np.isnan(f), np.int32(0x7FC00000), f.view(np.int32))
            return _long_hash(bits.astype(np.int64))
        if isinstance(dtype, DoubleType):
            d = pc.cast(values, pa.float64()).to_numpy(zero_copy_only=False).astype(np.float64)
            return _long_hash(np.where(np.isnan(d), np.int64(0x7FF8000000000000), d.view(np.int64)))
    raise CorruptMetadataError(f"no bloom-filter hash for type {dtype}")


def _positions(hashes: np.ndarray, k: int, num_bits: int) -> np.ndarray:
    """(len(hashes), k) bit positions of the hashes (BloomFilter64.addHash/testHash), in wrapping int32."""
    halves = np.ascontiguousarray(hashes, dtype="<i8").view("<i4").reshape(-1, 2)  # (low, high) 32 bits of each
    combined = halves[:, :1] + np.arange(1, k + 1, dtype=np.int32)[None, :] * halves[:, 1:]
    return (combined ^ (combined >> 31)) % np.int32(num_bits)  # negative c becomes ~c


@dataclass(frozen=True, slots=True)
class BloomFilter64:
    """A bloom filter over 64-bit hashes: `num_hash_functions` and the bit set (little-endian bit order)."""

    num_hash_functions: int
    bits: bytes

    @staticmethod
    def sized(items: int, fpp: float) -> tuple[int, int]:
        """(bits, hash functions) of a filter for `items` values at false-positive rate `fpp`."""
        nb = int(-items * math.log(fpp) / (math.log(2) * math.log(2)))
        num_bits = nb + (8 - nb % 8)
        return num_bits, max(1, int(math.floor(num_bits / items * math.log(2) + 0.5)))

    @staticmethod
    def build(hashes: np.ndarray, *, items: int, fpp: float) -> BloomFilter64:
        num_bits, k = BloomFilter64.sized(items, fpp)
        bitmap = np.zeros(num_bits, dtype=bool)
        if len(hashes):
            bitmap[_positions(hashes, k, num_bits).ravel()] = True
        return BloomFilter64(k, np.packbits(bitmap, bitorder="little").tobytes())

    @staticmethod
    def parse(data: bytes) -> BloomFilter64:
        if len(data) < 5:
            raise CorruptMetadataError(f"bloom-filter index of {len(data)} bytes is too short")
        (k,) = struct.unpack_from(">i", data, 0)
        if k < 1:
            raise CorruptMetadataError(f"bloom-filter index has {k} hash functions")
        return BloomFilter64(k, bytes(data[4:]))

    def serialize(self) -> bytes:
        return struct.pack(">i", self.num_hash_functions) + self.bits

    def may_contain(self, hashes: np.ndarray) -> np.ndarray:
        """A mask: False where the value of the hash is surely absent."""
        if not len(hashes):
            return np.zeros(0, dtype=bool)
        packed = np.frombuffer(self.bits, dtype=np.uint8)
        positions = _positions(hashes, self.num_hash_functions, len(packed) * 8)
        return ((packed[positions >> 3] >> (positions & 7).astype(np.uint8)) & 1).astype(bool).all(axis=1)
