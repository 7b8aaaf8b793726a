"""Decode some pages of some Parquet column chunks: a small in-memory Parquet file of just those pages.

For the columns of one page layout (the same first row per page), each row group's chunk is copied as its
dictionary page (if any) and the data pages holding a wanted row, byte for byte (compressed, CRCs kept), behind a
footer re-encoded for them (one row group per source row group, the column chunks' offsets, sizes and value counts
adjusted, statistics dropped); pyarrow decodes that file and the wanted rows are taken from it. Flat columns only:
a page's value count is then its row count.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from table_format.data import parquet_thrift as t

if TYPE_CHECKING:
    from table_format.data.page_index import FileIndex

_DROPPED_META = (10, 12, 14, 15, 16, 17)  # index page offset, statistics, bloom filter, size/geo statistics
_BATCH_ROWS = 4096  # decode granularity when only a leading part of the pages is wanted


def decode_rows(source: pa.NativeFile, fi: FileIndex, groups: Sequence[int], masks: Sequence[np.ndarray],
                columns: dict[str, int], arrow_schema: pa.Schema, *, verify_checksums: bool) -> pa.Table:
    """Columns `columns` (name -> leaf) of the rows of row groups `groups` where `masks` hold, in file order."""
    names = list(columns)
    if not names or not any(m.any() for m in masks):
        return arrow_schema.empty_table().select(names)
    layouts: dict[bytes, list[int]] = {}
    for leaf in sorted(columns.values()):
        key = b"|".join(fi.pages(g, leaf)[2].tobytes() for g in groups)
        layouts.setdefault(key, []).append(leaf)
    by_leaf: dict[int, pa.ChunkedArray] = {}
    for leaves in layouts.values():
        table = _decode_layout(source, fi, groups, masks, leaves, verify_checksums)
        for leaf, column in zip(leaves, table.columns, strict=True):
            by_leaf[leaf] = column
    arrays = []
    for name in names:
        column = by_leaf[columns[name]]
        target = arrow_schema.field(name).type
        arrays.append(column if column.type == target else column.cast(target))
    return pa.table(arrays, names=names)


def _decode_layout(source: pa.NativeFile, fi: FileIndex, groups: Sequence[int], masks: Sequence[np.ndarray],
                   leaves: list[int], verify_checksums: bool) -> pa.Table:
    body = bytearray(b"PAR1")
    row_groups = []
    picks = []
    base = 0
    for g, mask in zip(groups, masks, strict=True):
        if not mask.any():
            continue
        first = fi.pages(g, leaves[0])[2]
        sizes = np.diff(np.append(first, len(mask)))
        need = np.logical_or.reduceat(mask, first)
        covered = np.repeat(need, sizes)
        rows = int(covered.sum())
        picks.append(np.flatnonzero(mask[covered]) + base)
        base += rows
        chunks = [_copy_chunk(source, fi, g, leaf, need, sizes, body) for leaf in leaves]
        total = sum(t.get(t.get(c, t.CC_META), t.CM_UNCOMPRESSED) for c in chunks)
        row_groups.append({t.RG_COLUMNS: (t.LIST, (t.STRUCT, chunks)), t.RG_TOTAL_BYTE_SIZE: (t.I64, total),
                           t.RG_NUM_ROWS: (t.I64, rows)})
    schema = t.get(fi.footer, t.FMD_SCHEMA)[1]
    root = dict(schema[0])
    root[t.SE_NUM_CHILDREN] = (t.I32, len(leaves))
    footer: t.Struct = {t.FMD_VERSION: fi.footer[t.FMD_VERSION],
                        t.FMD_SCHEMA: (t.LIST, (t.STRUCT, [root] + [schema[leaf + 1] for leaf in leaves])),
                        t.FMD_NUM_ROWS: (t.I64, base),
                        t.FMD_ROW_GROUPS: (t.LIST, (t.STRUCT, row_groups))}
    if 6 in fi.footer:  # created_by: readers work around known writer bugs by it
        footer[6] = fi.footer[6]
    if 7 in fi.footer:  # column orders, one per leaf
        kind, orders = fi.footer[7][1]
        footer[7] = (t.LIST, (kind, [orders[leaf] for leaf in leaves]))
    tail = t.encode_struct(footer)
    body += tail
    body += struct.pack("<i", len(tail)) + b"PAR1"
    reader = pq.ParquetFile(pa.BufferReader(pa.py_buffer(body)), page_checksum_verification=verify_checksums)
    wanted = np.concatenate(picks)
    end = int(wanted[-1]) + 1
    if end * 2 > base:
        table = reader.read(use_threads=False)
    else:  # values decode lazily: rows past the last wanted one are not decoded
        batches = []
        rows = 0
        for batch in reader.iter_batches(batch_size=_BATCH_ROWS, use_threads=False):
            batches.append(batch)
            rows += batch.num_rows
            if rows >= end:
                break
        table = pa.Table.from_batches(batches)
    return table.take(pa.array(wanted, type=pa.int64()))


def _copy_chunk(source: pa.NativeFile, fi: FileIndex, group: int, leaf: int, need: np.ndarray, sizes: np.ndarray,
                body: bytearray) -> t.Struct:
    """Append a chunk's dictionary page and needed data pages to `body`; its ColumnChunk for the new file."""
    meta = t.get(fi.chunk(group, leaf), t.CC_META)
    offsets, lengths, _ = fi.pages(group, leaf)
    data_start = t.get(meta, t.CM_DATA_PAGE_OFFSET)
    dictionary = t.get(meta, t.CM_DICTIONARY_PAGE_OFFSET)
    start = min(data_start, dictionary) if dictionary is not None and dictionary > 0 else data_start
    out = {k: v for k, v in meta.items() if k not in _DROPPED_META}
    chunk_start = len(body)
    if offsets[0] > start:  # the dictionary page precedes the first data page
        body += source.read_at(int(offsets[0] - start), int(start))
        out[t.CM_DICTIONARY_PAGE_OFFSET] = (t.I64, chunk_start)
    else:
        out.pop(t.CM_DICTIONARY_PAGE_OFFSET, None)
    first_page = len(body)
    pages = np.flatnonzero(need)
    run_start = 0
    for i in range(1, len(pages) + 1):  # runs of adjacent pages, one read each
        if i == len(pages) or offsets[pages[i]] != offsets[pages[i - 1]] + lengths[pages[i - 1]]:
            lo = int(offsets[pages[run_start]])
            hi = int(offsets[pages[i - 1]] + lengths[pages[i - 1]])
            body += source.read_at(hi - lo, lo)
            run_start = i
    size = len(body) - chunk_start
    uncompressed = t.get(meta, t.CM_UNCOMPRESSED)
    compressed = max(1, t.get(meta, t.CM_COMPRESSED))
    out[t.CM_NUM_VALUES] = (t.I64, int(sizes[pages].sum()))
    out[t.CM_COMPRESSED] = (t.I64, size)
    out[t.CM_UNCOMPRESSED] = (t.I64, max(size, uncompressed * size // compressed))
    out[t.CM_DATA_PAGE_OFFSET] = (t.I64, first_page)
    return {t.CC_FILE_OFFSET: (t.I64, chunk_start), t.CC_META: (t.STRUCT, dict(sorted(out.items())))}
