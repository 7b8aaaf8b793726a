"""Point reads of a Parquet file: decode the filter's columns first, then only the rows up to the last hit.

pyarrow reads no part of a row group by its page index (it writes page indexes but its readers do not select
pages by them), so a key lookup would decode whole row groups. Here the columns a point filter tests (the keys)
are decoded first; row groups without a hit are dropped, and a row group with hits is decoded batch by batch
only up to its last hit (Parquet pages decode lazily, so the rest of the group is never decompressed).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.dataset as pads
import pyarrow.parquet as pq

RowProbe = Callable[[pa.Table], np.ndarray]
"""Rows of the probed columns (file names) -> a boolean mask of the rows that may match."""

_BATCH_ROWS = 8192  # decode granularity of a partial row group
_PARTIAL_SHARE = 0.75  # a row group whose last hit lies beyond this share of it is decoded whole


def probe_row_groups(fragment: pads.ParquetFileFragment, meta: pq.FileMetaData, selected: Sequence[int],
                     columns: Sequence[str], probe: RowProbe) -> tuple[dict[int, int], np.ndarray]:
    """(row group -> offset of its last row the probe keeps, for the row groups of `selected` holding one; the
    positions in the file of the rows it keeps)."""
    keys = fragment.subset(row_group_ids=list(selected)).to_table(columns=list(columns), use_threads=True)
    hits = np.flatnonzero(probe(keys))
    if not len(hits):
        return {}, hits
    sizes = np.array([meta.row_group(i).num_rows for i in selected], dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(sizes)])
    before_end = np.searchsorted(hits, starts[1:], side="left") - 1  # each group's last hit if it is in the group
    last = hits[np.maximum(before_end, 0)]
    last_hits = {selected[g]: int(last[g] - starts[g]) for g in range(len(selected))
                 if before_end[g] >= 0 and last[g] >= starts[g]}
    file_starts = np.cumsum([0] + [meta.row_group(i).num_rows for i in range(meta.num_row_groups)])
    group = np.searchsorted(starts[1:], hits, side="right")
    return last_hits, hits - starts[group] + file_starts[np.asarray(selected)[group]]


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
