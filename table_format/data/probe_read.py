"""Point reads of a Parquet file: decode the filter's columns first, then only the rows up to the last hit.

pyarrow reads no part of a row group by its page index (it writes page indexes but its readers do not select
pages by them), so a key lookup would decode whole row groups. Here the columns a point filter tests (the keys)
are decoded first; row groups without a hit are dropped, and a row group with hits is decoded batch by batch
only up to its last hit (Parquet pages decode lazily, so the rest of the group is never decompressed).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.dataset as pads
import pyarrow.parquet as pq

RowProbe = Callable[[pa.Table], np.ndarray]
"""Rows of the probed columns (file names) -> a boolean mask of the rows that may match."""
StatsTest = Callable[[Mapping[str, Any], Mapping[str, Any], Mapping[str, int | None], int], bool]
"""(min, max, null count by column, rows) of some rows -> may one of them match (file_format.RowGroupTest)."""

_BATCH_ROWS = 4096  # decode granularity of a partial row group
_PARTIAL_SHARE = 0.75  # a row group whose last hit lies beyond this share of it is decoded whole


def probe_row_groups(source: pa.NativeFile, fragment: pads.ParquetFileFragment, meta: pq.FileMetaData,
                     selected: Sequence[int], columns: Sequence[str], probe: RowProbe, *,
                     sorted_by: str | None = None, keep: StatsTest | None = None,
                     verify_checksums: bool = True) -> tuple[dict[int, int], np.ndarray]:
    """(row group -> offset of its last row the probe keeps, for the row groups of `selected` holding one; the
    positions in the file of the rows it keeps). In a file sorted by column `sorted_by` (one of `columns`), a
    row group's columns are decoded batch by batch until `keep`, given the range of the sort column's values left
    (the last one decoded to the group's max), says no later row can match."""
    if sorted_by is None or keep is None:
        keys = fragment.subset(row_group_ids=list(selected)).to_table(columns=list(columns), use_threads=True)
        sizes = np.array([meta.row_group(i).num_rows for i in selected], dtype=np.int64)
    else:
        keys, sizes = _sorted_prefixes(source, meta, selected, columns, sorted_by, keep, verify_checksums)
    hits = np.flatnonzero(probe(keys))
    if not len(hits):
        return {}, hits
    starts = np.concatenate([[0], np.cumsum(sizes)])
    before_end = np.searchsorted(hits, starts[1:], side="left") - 1  # each group's last hit if it is in the group
    last = hits[np.maximum(before_end, 0)]
    last_hits = {selected[g]: int(last[g] - starts[g]) for g in range(len(selected))
                 if before_end[g] >= 0 and last[g] >= starts[g]}
    file_starts = np.cumsum([0] + [meta.row_group(i).num_rows for i in range(meta.num_row_groups)])
    group = np.searchsorted(starts[1:], hits, side="right")
    return last_hits, hits - starts[group] + file_starts[np.asarray(selected)[group]]


def _sorted_prefixes(source: pa.NativeFile, meta: pq.FileMetaData, selected: Sequence[int], columns: Sequence[str],
                     sorted_by: str, keep: StatsTest, verify_checksums: bool) -> tuple[pa.Table, np.ndarray]:
    """The decoded leading rows of each selected group (columns `columns`) and their counts."""
    pf = pq.ParquetFile(source, metadata=meta, page_checksum_verification=verify_checksums)
    column = [meta.row_group(0).column(j).path_in_schema for j in range(meta.num_columns)].index(sorted_by)
    batches: list[pa.RecordBatch] = []
    sizes = np.zeros(len(selected), dtype=np.int64)
    for n, g in enumerate(selected):
        stats = meta.row_group(g).column(column).statistics
        group_max = stats.max if stats is not None and stats.has_min_max else None
        total = meta.row_group(g).num_rows
        for batch in pf.iter_batches(batch_size=_BATCH_ROWS, row_groups=[g], columns=list(columns),
                                     use_threads=True):
            batches.append(batch)
            sizes[n] += batch.num_rows
            rest = ({sorted_by: batch.column(sorted_by)[-1].as_py()}, {sorted_by: group_max}, {sorted_by: 0}, 1)
            if sizes[n] < total and not keep(*rest):
                break
    if not batches:
        return pf.schema_arrow.empty_table().select(list(columns)), sizes
    return pa.Table.from_batches(batches), sizes


def read_probed(source: pa.NativeFile, fragment: pads.ParquetFileFragment, meta: pq.FileMetaData,
                last_hits: dict[int, int], columns: Sequence[str] | None, *, verify_checksums: bool,
                only: np.ndarray | None = None) -> tuple[pa.Table, np.ndarray]:
    """Rows of the probed row groups up to (at least) each group's last hit, with their positions in the file;
    `only`: just the rows at these (ascending) positions."""
    starts = np.cumsum([0] + [meta.row_group(i).num_rows for i in range(meta.num_row_groups)])
    pieces: list[pa.Table] = []
    positions: list[np.ndarray] = []
    whole = [g for g, h in sorted(last_hits.items()) if h + 1 > _PARTIAL_SHARE * meta.row_group(g).num_rows]
    if whole:
        pieces.append(fragment.subset(row_group_ids=whole).to_table(columns=columns, use_threads=True))
        positions += [np.arange(starts[g], starts[g + 1], dtype=np.int64) for g in whole]
    pf: pq.ParquetFile | None = None
    for g, h in sorted(last_hits.items()):
        if g in whole:
            continue
        pf = pf or pq.ParquetFile(source, metadata=meta, page_checksum_verification=verify_checksums)
        batches = []
        rows = 0
        for batch in pf.iter_batches(batch_size=_BATCH_ROWS, row_groups=[g], columns=columns, use_threads=True):
            batches.append(batch)
            rows += batch.num_rows
            if rows > h:
                break
        pieces.append(pa.Table.from_batches(batches))
        positions.append(np.arange(starts[g], starts[g] + rows, dtype=np.int64))
    table, at = pa.concat_tables(pieces), np.concatenate(positions)
    if only is None or len(only) == len(at):  # every row read is kept
        return table, at
    order = np.argsort(at, kind="stable")  # whole groups come first: positions ascend only within each piece
    picked = order[np.searchsorted(at[order], only)]
    return table.take(pa.array(picked)), only
