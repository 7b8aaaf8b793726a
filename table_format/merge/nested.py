"""collect, merge_map and nested_update: the aggregate functions over nested values (ARRAY, MAP, ARRAY<ROW>).

Mirrors FieldCollectAgg, FieldMergeMapAgg and FieldNestedUpdateAgg of Paimon 0.9. These build Java
HashSet / HashMap collections, so the element order of their results is the iteration order of a
java.util.HashMap: entries sorted by bucket `(h ^ h >>> 16) & (capacity - 1)` and, within a bucket, by
insertion. That order is reproduced here from the elements' Java hashCode (Integer, Long, Float, Double,
Boolean, BinaryString, Timestamp, BinaryRow), so that our results equal Java's element for element.
The values are Python objects, folded per run (these functions are for nested values, not hot columns).
"""

from __future__ import annotations

import datetime as dt
import math
import struct
from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from table_format.merge.kernels import Segments
from table_format.merge.spec import FieldAgg
from table_format.row.binary_row import row_bytes_for_hash
from table_format.types import ArrayType, MapType, MultisetType, RowType

_MASK32 = 0xFFFFFFFF
_SEED = 42


def _mix_k1(k: int) -> int:
    k = (k * 0xCC9E2D51) & _MASK32
    k = ((k << 15) | (k >> 17)) & _MASK32
    return (k * 0x1B873593) & _MASK32


def _mix_h1(h: int, k: int) -> int:
    h ^= k
    h = ((h << 13) | (h >> 19)) & _MASK32
    return (h * 5 + 0xE6546B64) & _MASK32


def _fmix(h: int, length: int) -> int:
    h ^= length
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & _MASK32
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & _MASK32
    h ^= h >> 16
    return h


def murmur_bytes(data: bytes) -> int:
    """MurmurHashUtils.hashBytes (seed 42; the tail bytes sign-extended), as an unsigned 32-bit int."""
    aligned = len(data) - len(data) % 4
    h = _SEED
    for (k,) in struct.iter_unpack("<I", data[:aligned]):
        h = _mix_h1(h, _mix_k1(k))
    for b in data[aligned:]:
        h = _mix_h1(h, _mix_k1((b - 256 if b > 127 else b) & _MASK32))
    return _fmix(h, len(data))


def murmur_words(data: bytes) -> int:
    """MurmurHashUtils.hashBytesByWords (BinaryRow.hashCode), unsigned."""
    h = _SEED
    for (k,) in struct.iter_unpack("<I", data):
        h = _mix_h1(h, _mix_k1(k))
    return _fmix(h, len(data))


def _long_hash(v: int) -> int:
    v &= 0xFFFFFFFFFFFFFFFF
    return (v ^ (v >> 32)) & _MASK32


def java_hash(value: Any, t: pa.DataType) -> int | None:
    """hashCode() of the Java object Paimon holds for `value` of Arrow type `t`; None if not reproducible."""
    if value is None:
        return 0
    if pa.types.is_boolean(t):
        return 1231 if value else 1237
    if pa.types.is_int8(t) or pa.types.is_int16(t) or pa.types.is_int32(t):
        return int(value) & _MASK32
    if pa.types.is_int64(t):
        return _long_hash(int(value))
    if pa.types.is_date32(t):
        return ((value - dt.date(1970, 1, 1)).days) & _MASK32
    if pa.types.is_float32(t):
        bits = 0x7FC00000 if math.isnan(value) else struct.unpack("<I", struct.pack("<f", value))[0]
        return bits
    if pa.types.is_float64(t):
        bits = 0x7FF8000000000000 if math.isnan(value) else struct.unpack("<Q", struct.pack("<d", value))[0]
        return _long_hash(bits)
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return murmur_bytes(value.encode("utf-8"))
    return None


def _spread(h: int, cap: int) -> int:
    return (h ^ (h >> 16)) & (cap - 1)


def _capacity(max_size: int) -> int:
    cap = 16
    while max_size > cap * 3 // 4:
        cap *= 2
    return cap


class _HashMap:
    """Insertion-ordered dict that iterates like java.util.HashMap (no treeified bins)."""

    def __init__(self) -> None:
        self.entries: dict[Any, tuple[int | None, Any]] = {}
        self.max_size = 0

    def put(self, key: Any, h: int | None, value: Any) -> None:
        if key in self.entries:
            self.entries[key] = (self.entries[key][0], value)
        else:
            self.entries[key] = (h, value)
            self.max_size = max(self.max_size, len(self.entries))

    def remove(self, key: Any) -> None:
        self.entries.pop(key, None)

    def items(self) -> list[tuple[Any, Any]]:
        items = list(self.entries.items())
        if any(h is None for _, (h, _) in items):
            return [(k, v) for k, (_, v) in items]  # hash not reproducible: keep insertion order
        cap = _capacity(self.max_size)
        order = sorted(range(len(items)), key=lambda i: _spread(items[i][1][0] or 0, cap))  # stable
        return [(items[i][0], items[i][1][1]) for i in order]


def _freeze(v: Any) -> Any:
    """A hashable stand-in for a Python value (dicts and lists from Arrow)."""
    if isinstance(v, dict):
        return tuple((k, _freeze(x)) for k, x in v.items())
    if isinstance(v, list):
        return tuple(_freeze(x) for x in v)
    if isinstance(v, float) and math.isnan(v):
        return ("NaN",)
    return v


# ---- collect ------------------------------------------------------------------------------------------
def _collect_agg(acc: list | None, inp: list | None, distinct: bool, constructed: bool, et: pa.DataType) -> list | None:
    if acc is None and inp is None:
        return None
    if (acc is None or inp is None) and not distinct:
        return acc if inp is None else inp
    if distinct and constructed:  # list + equaliser: the accumulator is already distinct
        out = list(acc or [])
        seen = [_freeze(x) for x in out]
        for x in inp or []:
            fx = _freeze(x)
            if fx not in seen:
                out.append(x)
                seen.append(fx)
        return out
    if not distinct:
        return list(acc) + list(inp)  # type: ignore[arg-type]
    m = _HashMap()
    for x in list(acc or []) + list(inp or []):
        m.put(_freeze(x), java_hash(x, et), x)
    return [v for _, v in m.items()]


def _collect_retract(acc: list | None, retract: list | None) -> list | None:
    if acc is None:
        return None
    if retract is None:
        return acc
    pending = [_freeze(x) for x in retract]
    out = []
    for x in acc:
        fx = _freeze(x)
        if fx in pending:
            pending.remove(fx)
        else:
            out.append(x)
    return out


# ---- merge_map ----------------------------------------------------------------------------------------
def _map_agg(acc: list | None, inp: list | None, kt: pa.DataType) -> list | None:
    if acc is None or inp is None:
        return acc if inp is None else inp
    m = _HashMap()
    for k, v in list(acc) + list(inp):
        m.put(_freeze(k), java_hash(k, kt), (k, v))
    return [kv for _, kv in m.items()]


def _map_retract(acc: list | None, retract: list | None, kt: pa.DataType) -> list | None:
    if acc is None:
        return None
    if retract is None:
        return acc
    gone = {_freeze(k) for k, _ in retract}
    m = _HashMap()
    for k, v in acc:
        if _freeze(k) not in gone:
            m.put(_freeze(k), java_hash(k, kt), (k, v))
    return [kv for _, kv in m.items()]


# ---- nested_update ------------------------------------------------------------------------------------
class _NestedKey:
    def __init__(self, element: RowType, keys: Sequence[str]) -> None:
        self.names = list(keys)
        self.types = [next(f.type for f in element.fields if f.name == k) for k in keys]

    def key(self, row: dict) -> tuple[Any, int | None]:
        values = [row.get(n) for n in self.names]
        try:
            h = murmur_words(row_bytes_for_hash(values, self.types))
        except Exception:  # a type the BinaryRow encoder cannot hash: keep insertion order
            h = None
        return _freeze(values), h


def _nested_agg(acc: list | None, inp: list | None, key: _NestedKey | None) -> list | None:
    if acc is None or inp is None:
        return acc if inp is None else inp
    rows = list(acc) + list(inp)
    if key is None:
        return rows
    m = _HashMap()
    for row in rows:
        k, h = key.key(row)
        m.put(k, h, row)
    return [v for _, v in m.items()]


def _nested_retract(acc: list | None, retract: list | None, key: _NestedKey | None) -> list | None:
    if acc is None or retract is None:
        return acc
    if key is None:
        gone = [_freeze(r) for r in retract]
        return [r for r in acc if _freeze(r) not in gone]
    m = _HashMap()
    for row in acc:
        k, h = key.key(row)
        m.put(k, h, row)
    for row in retract:
        m.remove(key.key(row)[0])
    return [v for _, v in m.items()]


def nested_aggregate(agg: FieldAgg, col: pa.Array, seg: Segments, part: np.ndarray, r: np.ndarray, *,
                     table: str = "") -> pa.Array:
    """collect / merge_map / nested_update over each run (rows in merge order)."""
    values = col.to_pylist()
    fn = agg.function
    t = agg.type
    key: _NestedKey | None = None
    if fn == "collect":
        assert isinstance(t, ArrayType)
        et = col.type.value_type
        constructed = isinstance(t.element, (ArrayType, MapType, MultisetType, RowType))
    elif fn == "merge_map":
        kt = col.type.key_type
    elif fn == "nested_update":
        assert isinstance(t, ArrayType) and isinstance(t.element, RowType)
        key = _NestedKey(t.element, agg.nested_key) if agg.nested_key else None
    out: list[Any] = []
    part_l = part.tolist()
    r_l = r.tolist()
    for start, length in zip(seg.starts.tolist(), seg.lens.tolist(), strict=True):
        acc: Any = None
        for i in range(start, start + length):
            if not part_l[i]:
                continue
            v = values[i]
            if fn == "collect":
                acc = _collect_retract(acc, v) if r_l[i] else _collect_agg(acc, v, agg.distinct, constructed, et)
            elif fn == "merge_map":
                acc = _map_retract(acc, v, kt) if r_l[i] else _map_agg(acc, v, kt)
            else:
                acc = _nested_retract(acc, v, key) if r_l[i] else _nested_agg(acc, v, key)
        out.append(acc)
    return pa.array(out, type=col.type)
