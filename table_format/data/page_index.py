"""Parquet reads by page index: decode only the pages whose key range can match (OffsetIndex + ColumnIndex).

pyarrow writes page indexes but reads whole column chunks. Here the footer and the page indexes of a file are
decoded with :mod:`.parquet_thrift` (cached per file: data files never change), the pages of the filter's columns
whose min/max may match are found with the filter's statistics test, and only those pages are decoded: for each
set of columns sharing page boundaries, a small Parquet file is built in memory from the column chunks' dictionary
pages and the selected data pages (byte-copied, CRCs kept) plus a footer re-encoded for them, and pyarrow decodes
it. The filter's columns are decoded first; the other columns only on the pages holding a row the probe keeps.
Flat schemas only; a file without page indexes (or with nested columns) is read the usual way (None).
"""

from __future__ import annotations

import struct
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from decimal import Decimal
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from table_format.data import parquet_thrift as t
from table_format.data.page_file import decode_rows
from table_format.errors import CorruptMetadataError

RowProbe = Callable[[pa.Table], np.ndarray]
StatsTest = Callable[[Mapping[str, Any], Mapping[str, Any], Mapping[str, int | None], int], bool]

_CACHE_BYTES = 4 << 20  # footer bytes of the files kept decoded (~30x that in Python objects, page indexes aside)
_INT32, _INT64, _BYTE_ARRAY, _FIXED = 1, 2, 6, 7


class FileIndex:
    """One file's decoded footer and the page indexes read so far."""

    def __init__(self, footer: t.Struct, path: str, size: int) -> None:
        self.footer = footer
        self.path = path
        self.size = size  # the footer's bytes
        schema = t.get(footer, t.FMD_SCHEMA)[1]
        self.flat = len(schema) - 1 == t.get(schema[0], t.SE_NUM_CHILDREN, 0) and all(
            t.SE_NUM_CHILDREN not in e and t.get(e, t.SE_REPETITION, 0) != 2 for e in schema[1:])
        self.leaves = {t.get(e, t.SE_NAME).decode("utf-8", "replace"): i for i, e in enumerate(schema[1:])}
        self.row_groups = t.get(footer, t.FMD_ROW_GROUPS, (0, []))[1]
        self.offsets: dict[tuple[int, int], tuple[np.ndarray, np.ndarray, np.ndarray] | None] = {}
        self.bounds: dict[tuple[int, int], tuple[list[Any], list[Any], list[int | None]] | None] = {}

    def chunk(self, group: int, leaf: int) -> t.Struct:
        return t.get(self.row_groups[group], t.RG_COLUMNS)[1][leaf]

    def pages(self, group: int, leaf: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(offset, byte size, first row) of each page of a column chunk whose offset index was read."""
        found = self.offsets.get((group, leaf))
        if found is None:
            raise CorruptMetadataError(f"data file {self.path}: no offset index for row group {group}, column {leaf}")
        return found


_LOCK = threading.Lock()
_FILES: OrderedDict[tuple[str, int], FileIndex] = OrderedDict()
_CACHED = [0]  # footer bytes of _FILES


def file_index(source: pa.NativeFile, path: str) -> FileIndex:
    """The decoded footer of a Parquet file (cached by path and size)."""
    size = source.size()
    key = (path, size)
    with _LOCK:
        found = _FILES.get(key)
        if found is not None:
            _FILES.move_to_end(key)
            return found
    tail = source.read_at(8, size - 8)
    length = struct.unpack("<i", tail[:4])[0]
    if tail[4:] != b"PAR1" or not 0 < length <= size - 12:
        raise CorruptMetadataError(f"data file {path} has no Parquet footer")
    footer, _ = t.decode_struct(source.read_at(length, size - 8 - length), what=f"the footer of {path}")
    found = FileIndex(footer, path, length)
    with _LOCK:
        if key not in _FILES:
            _FILES[key] = found
            _CACHED[0] += length
        while _CACHED[0] > _CACHE_BYTES and len(_FILES) > 1:
            _CACHED[0] -= _FILES.popitem(last=False)[1].size
    return found


def _read_index(source: pa.NativeFile, fi: FileIndex, wanted: list[tuple[int, int, int, int]]) -> list[t.Struct]:
    """Decode the index structs at (offset, length) of `wanted` entries (group, leaf, offset, length), read in one
    span."""
    lo = min(w[2] for w in wanted)
    hi = max(w[2] + w[3] for w in wanted)
    data = source.read_at(hi - lo, lo)
    return [t.decode_struct(data[o - lo:o - lo + n], what=f"a page index of {fi.path}")[0] for _, _, o, n in wanted]


def _not_loaded(fi: FileIndex, keys: list[tuple[int, int]], cache: dict, offset_field: int,
                length_field: int) -> list[tuple[int, int, int, int]]:
    """(group, leaf, offset, length) of the indexes in ``keys`` not in ``cache`` yet; a chunk without that index
    (or encrypted) is cached as None."""
    wanted = []
    for g, leaf in (k for k in keys if k not in cache):
        cc = fi.chunk(g, leaf)
        if offset_field in cc and t.CC_CRYPTO not in cc:
            wanted.append((g, leaf, t.get(cc, offset_field), t.get(cc, length_field)))
        else:
            cache[(g, leaf)] = None
    return wanted


def _load_offsets(source: pa.NativeFile, fi: FileIndex, keys: list[tuple[int, int]]) -> None:
    wanted = _not_loaded(fi, keys, fi.offsets, t.CC_OFFSET_INDEX_OFFSET, t.CC_OFFSET_INDEX_LENGTH)
    if wanted:
        for (g, leaf, _, _), oi in zip(wanted, _read_index(source, fi, wanted), strict=True):
            locs = t.get(oi, t.OI_PAGE_LOCATIONS)[1]
            fi.offsets[(g, leaf)] = (np.array([t.get(p, t.PL_OFFSET) for p in locs], dtype=np.int64),
                                     np.array([t.get(p, t.PL_SIZE) for p in locs], dtype=np.int64),
                                     np.array([t.get(p, t.PL_FIRST_ROW) for p in locs], dtype=np.int64))


def _load_bounds(source: pa.NativeFile, fi: FileIndex, keys: list[tuple[int, int]],
                 types: dict[int, pa.DataType]) -> None:
    wanted = _not_loaded(fi, keys, fi.bounds, t.CC_COLUMN_INDEX_OFFSET, t.CC_COLUMN_INDEX_LENGTH)
    if wanted:
        schema = t.get(fi.footer, t.FMD_SCHEMA)[1]
        for (g, leaf, _, _), ci in zip(wanted, _read_index(source, fi, wanted), strict=True):
            physical = t.get(schema[leaf + 1], t.SE_TYPE)
            nulls = t.get(ci, t.CI_NULL_PAGES)[1]
            mins = page_values(t.get(ci, t.CI_MINS)[1], nulls, physical, types[leaf], is_max=False)
            maxs = page_values(t.get(ci, t.CI_MAXS)[1], nulls, physical, types[leaf], is_max=True)
            counts = t.get(ci, t.CI_NULL_COUNTS)
            fi.bounds[(g, leaf)] = None if mins is None or maxs is None else (
                mins, maxs, list(counts[1]) if counts is not None else [None] * len(nulls))


def page_values(raw: list[bytes], null_pages: list[bool], physical: int, arrow_type: pa.DataType, *,
                is_max: bool) -> list[Any] | None:
    """Page minima or maxima as the Python values pyarrow's statistics give for `arrow_type` (None for a null
    page); None for a type they are not compared on."""
    out: list[Any] = [None] * len(raw)
    live = [i for i, null in enumerate(null_pages) if not null]
    if pa.types.is_integer(arrow_type) and not pa.types.is_unsigned_integer(arrow_type) or \
            pa.types.is_date32(arrow_type):
        width = {_INT32: "<i4", _INT64: "<i8"}.get(physical)
        if width is None or any(len(raw[i]) != int(width[-1]) for i in live):
            return None
        values = np.frombuffer(b"".join(raw[i] for i in live), dtype=width)
        decoded = (pa.array(values.astype(np.int32)).cast(pa.date32()).to_pylist()
                   if pa.types.is_date32(arrow_type) else values.tolist())
    elif pa.types.is_boolean(arrow_type):
        decoded = [raw[i] == b"\x01" for i in live]
    elif pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type):
        try:  # a truncated minimum may end inside a character: a shorter prefix is still a lower bound
            decoded = [raw[i].decode("utf-8") if is_max else raw[i].decode("utf-8", "ignore") for i in live]
        except UnicodeDecodeError:
            return None
    elif pa.types.is_decimal(arrow_type) and arrow_type.bit_width <= 128:
        scale = -arrow_type.scale
        if physical in (_INT32, _INT64):
            ints = [int.from_bytes(raw[i], "little", signed=True) for i in live]
        elif physical in (_BYTE_ARRAY, _FIXED):
            ints = [int.from_bytes(raw[i], "big", signed=True) for i in live]
        else:
            return None
        decoded = [Decimal(v).scaleb(scale) for v in ints]
    else:
        return None
    for i, v in zip(live, decoded, strict=True):
        out[i] = v
    return out


def _page_rows(first: np.ndarray, rows: int) -> np.ndarray:
    return np.diff(np.append(first, rows))


def _candidates(fi: FileIndex, group: int, rows: int, leaves: dict[str, int], keep: StatsTest) -> np.ndarray | None:
    """Rows of a row group on a page that may match, by every column with a page index; None: none has one."""
    mask: np.ndarray | None = None
    for name, leaf in leaves.items():
        bounds = fi.bounds.get((group, leaf))
        offsets = fi.offsets.get((group, leaf))
        if bounds is None or offsets is None:
            continue
        mins, maxs, nulls = bounds
        sizes = _page_rows(offsets[2], rows)
        ok = np.array([keep({} if lo is None else {name: lo}, {} if hi is None else {name: hi}, {name: n}, int(r))
                       for lo, hi, n, r in zip(mins, maxs, nulls, sizes, strict=True)], dtype=bool)
        page_mask = np.repeat(ok, sizes)
        mask = page_mask if mask is None else mask & page_mask
    return mask


def read_by_pages(source: pa.NativeFile, path: str, meta: pq.FileMetaData, arrow_schema: pa.Schema,
                  selected: Sequence[int], columns: Sequence[str], stats_columns: Sequence[str], keep: StatsTest,
                  probe: RowProbe, *, sorted_file: bool, verify_checksums: bool) -> tuple[pa.Table, np.ndarray] | None:
    """(the rows of `columns` the probe keeps, their positions in the file), decoding only the pages of the row
    groups `selected` that may hold them; None when the file has no page index to read by, or when it would skip
    no page a row-group read skips too: in a file sorted by the probed columns (`sorted_file`), one whose row
    groups' first pages may all match (that read starts there and stops after the last match)."""
    if not columns:
        return None
    fi = file_index(source, path)
    if not fi.flat or len(fi.row_groups) != meta.num_row_groups:
        return None
    leaves = {c: fi.leaves[c] for c in stats_columns if c in fi.leaves}
    needed = {c: fi.leaves[c] for c in columns if c in fi.leaves}
    if not leaves or len(needed) != len(columns):
        return None
    types = {leaf: arrow_schema.field(name).type for name, leaf in {**leaves, **needed}.items()}
    _load_offsets(source, fi, [(g, leaf) for g in selected for leaf in {**leaves, **needed}.values()])
    if any(fi.offsets[(g, leaf)] is None for g in selected for leaf in needed.values()):
        return None
    _load_bounds(source, fi, [(g, leaf) for g in selected for leaf in leaves.values()], types)
    sizes = [meta.row_group(g).num_rows for g in selected]
    masks = []
    for g, rows in zip(selected, sizes, strict=True):
        mask = _candidates(fi, g, rows, leaves, keep)
        if mask is None:
            return None
        masks.append(mask)
    live = [m for m in masks if m.any()]
    if live and (all(m[0] for m in live) if sorted_file else sum(len(m) for m in live) == sum(m.sum() for m in live)):
        return None
    first = decode_rows(source, fi, selected, masks, leaves, arrow_schema, verify_checksums=verify_checksums)
    hits = np.flatnonzero(probe(first)) if first.num_rows else np.zeros(0, dtype=np.int64)
    starts = np.cumsum([0] + [int(m.sum()) for m in masks])
    hit_masks = []
    for m, lo, hi in zip(masks, starts[:-1], starts[1:], strict=True):
        at = np.flatnonzero(m)
        keep_mask = np.zeros(len(m), dtype=bool)
        keep_mask[at[hits[(hits >= lo) & (hits < hi)] - lo]] = True
        hit_masks.append(keep_mask)
    file_starts = np.cumsum([0] + [meta.row_group(i).num_rows for i in range(meta.num_row_groups)])
    positions = np.concatenate([np.flatnonzero(m) + file_starts[g] for g, m in zip(selected, hit_masks, strict=True)]
                               or [np.zeros(0, dtype=np.int64)]).astype(np.int64)
    rest = {c: needed[c] for c in columns if c not in leaves}
    second = decode_rows(source, fi, selected, hit_masks, rest, arrow_schema, verify_checksums=verify_checksums)
    kept = first.take(pa.array(hits, type=pa.int64()))
    table = pa.table({c: kept.column(c) if c in leaves else second.column(c) for c in columns})
    return table, positions
