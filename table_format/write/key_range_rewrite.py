"""Compaction rewrites and changelog production in bounded memory: the files' sorted runs merged key range by key
range (lsm/key_ranges.py), merged rows written as they come.

Mirrors MergeTreeCompactRewriter (a SortMergeReader over the runs feeding a RollingFileWriter) and
FullChangelogMergeTreeCompactRewriter: the merge holds about `sort-spill-buffer-size` of decoded rows, the output
at most `write-buffer-size` of rows before they become a file of about `target-file-size`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

import numpy as np
import pyarrow as pa

from table_format.data.deletion_vector import DeletionFile, read_deletion_vector
from table_format.data.file_reader import iter_data_file
from table_format.lsm.key_ranges import Piece, estimated_bytes, file_key_ranges, row_bytes
from table_format.meta.manifest import DataFileMeta
from table_format.row.row_kind import SEQUENCE_NUMBER, VALUE_KIND
from table_format.store.file_store import FileStore
from table_format.write.changelog import key_codes
from table_format.write.file_writer import DataFileWriter, kv_schema


def _per_row(store: FileStore) -> int:
    """Decoded bytes per row of a data file as written (keys, system columns, every column): an estimate on the
    generous side, which keeps a compaction's peak memory near the budget's intent (its merge temporaries and
    output buffer grow with the rows in a range)."""
    return row_bytes(kv_schema(store))


def fits_in_memory(store: FileStore, files: Sequence[DataFileMeta]) -> bool:
    """Whether merging `files` whole stays within `sort-spill-buffer-size` of decoded rows."""
    return estimated_bytes(files, _per_row(store)) <= store.options.sort_spill_buffer_size


def key_range_pieces(store: FileStore, partition: bytes, bucket: int, files: Sequence[DataFileMeta],
                     deletion_files: dict[str, DeletionFile]) -> tuple[Iterator[list[Piece]], list[DataFileMeta]]:
    """The key ranges of `files` (every column, `_SEQUENCE_NUMBER`, `_VALUE_KIND`) and the files in input order
    (oldest first): a piece's tag is its file's position in that list."""
    ordered = sorted(files, key=lambda f: f.min_sequence_number)
    names = store.schema.field_names

    def read(i: int, batch_rows: int) -> Iterator[pa.Table]:
        f = ordered[i]
        return iter_data_file(store, partition, bucket, f, names, batch_rows=batch_rows,
                              system=(SEQUENCE_NUMBER, VALUE_KIND), deletion_file=deletion_files.get(f.file_name))

    ranges = file_key_ranges(ordered, [f.name for f in store.key_fields], store.key_types,
                             budget=store.options.sort_spill_buffer_size, per_row=_per_row(store), read=read)
    return iter(ranges), ordered


class RollingOutput:
    """Merged rows (table columns + `_SEQUENCE_NUMBER` + `_VALUE_KIND`, in key order) added range by range and
    written as files of about `target-file-size`, with at most `write-buffer-size` of rows buffered."""

    def __init__(self, store: FileStore, writer: DataFileWriter) -> None:
        self.store = store
        self.writer = writer
        self.names = store.schema.field_names
        self.cap = store.options.write_buffer_size
        self.buffer: list[pa.Table] = []
        self.buffered = 0
        self.ratio = 1.0  # file bytes per decoded byte, learnt from the files written
        self.files: list[DataFileMeta] = []

    def add(self, merged: pa.Table) -> None:
        if not merged.num_rows:
            return
        # merged runs and lone records may differ in nullability: one schema for the file
        merged = pa.Table.from_arrays(merged.columns, schema=pa.schema([f.with_nullable(True) for f in merged.schema]))
        self.buffer.append(merged)
        self.buffered += merged.nbytes
        if self.buffered >= min(self.cap, self.store.options.target_file_size / self.ratio):
            self.flush()

    def flush(self) -> None:
        if not self.buffer:
            return
        rows = pa.concat_tables(self.buffer) if len(self.buffer) > 1 else self.buffer[0]
        decoded = self.buffered
        self.buffer, self.buffered = [], 0
        meta = self.writer.write_file(rows.select(self.names),
                                      sequence_numbers=rows.column(SEQUENCE_NUMBER).to_numpy(),
                                      kinds=rows.column(VALUE_KIND).combine_chunks())
        self.ratio = max(1e-3, meta.file_size / max(1, decoded))
        self.files.append(meta)

    def finish(self) -> list[DataFileMeta]:
        self.flush()
        return self.files


def rewrite_by_key_ranges(store: FileStore, partition: bytes, bucket: int, files: Sequence[DataFileMeta],
                          deletion_files: dict[str, DeletionFile], writer: DataFileWriter,
                          merge: Callable[[pa.Table], pa.Table]) -> list[DataFileMeta]:
    """`files` merged range by range with `merge` into files of `writer`."""
    ranges, _ = key_range_pieces(store, partition, bucket, files, deletion_files)
    out = RollingOutput(store, writer)
    for pieces in ranges:
        out.add(merge(_concat([t for _, t in pieces])))
    return out.finish()


def changelog_by_key_ranges(store: FileStore, partition: bytes, bucket: int, files: Sequence[DataFileMeta],
                            deletion_files: dict[str, DeletionFile], scope: Sequence[DataFileMeta],
                            before: Sequence[DataFileMeta],
                            log_of: Callable[[pa.Table, pa.Table, pa.Table | None], pa.Table],
                            writer: DataFileWriter) -> list[DataFileMeta]:
    """A compaction's changelog range by range: `log_of(scope rows, rows of all files, rows of the `before` files)`
    of each key range holding rows of `scope`, written as changelog files of `writer`."""
    ranges, ordered = key_range_pieces(store, partition, bucket, files, deletion_files)
    scope_names, before_names = {f.file_name for f in scope}, {f.file_name for f in before}
    in_scope = np.array([f.file_name in scope_names for f in ordered])
    in_before = np.array([f.file_name in before_names for f in ordered])
    out = RollingOutput(store, writer)
    for pieces in ranges:
        scope_rows = [t for tag, t in pieces if in_scope[tag]]
        if not scope_rows:
            continue
        old = [t for tag, t in pieces if in_before[tag]]
        out.add(log_of(_concat(scope_rows), _concat([t for _, t in pieces]), _concat(old) if old else None))
    return out.finish()


_POSITION = "_ROW_POSITION"  # a higher-level row's position in its file


def lookup_by_key_ranges(store: FileStore, partition: bytes, bucket: int, unit: Sequence[DataFileMeta],
                         higher: Sequence[DataFileMeta], deletion_files: dict[str, DeletionFile],
                         merge: Callable[[pa.Table], pa.Table],
                         writer: DataFileWriter) -> tuple[list[DataFileMeta], dict[str, np.ndarray]]:
    """Deletion-vector compaction in key ranges (see compact_task._lookup_deletions): the `unit` files merged with
    the rows of the `higher`-level files that hold the same keys, range by range. Returns the files written and,
    per higher-level file, the positions of the rows it loses (they go into its deletion vector)."""
    files = [*sorted(unit, key=lambda f: f.min_sequence_number), *higher]  # the whole-bucket input order
    in_unit = len(unit)
    names = store.schema.field_names
    keys = [f.name for f in store.key_fields]

    def read(i: int, batch_rows: int) -> Iterator[pa.Table]:
        f = files[i]
        if i < in_unit:
            yield from iter_data_file(store, partition, bucket, f, names, batch_rows=batch_rows,
                                      system=(SEQUENCE_NUMBER, VALUE_KIND), deletion_file=deletion_files.get(f.file_name))
            return
        dv = deletion_files.get(f.file_name)
        gone = read_deletion_vector(store.file_io, dv) if dv is not None else None
        start = 0  # no filter and no deletion vector: slices are consecutive rows of the file
        for t in iter_data_file(store, partition, bucket, f, names, batch_rows=batch_rows,
                                system=(SEQUENCE_NUMBER, VALUE_KIND)):
            positions = np.arange(start, start + t.num_rows, dtype=np.int64)
            start += t.num_rows
            t = t.append_column(_POSITION, pa.array(positions))
            yield t if gone is None else t.filter(pa.array(~np.isin(positions, gone)))

    ranges = file_key_ranges(files, keys, store.key_types, budget=store.options.sort_spill_buffer_size,
                             per_row=_per_row(store), read=read)
    out = RollingOutput(store, writer)
    hits: dict[int, list[np.ndarray]] = {}
    for pieces in ranges:
        unit_rows = [t for tag, t in pieces if tag < in_unit]
        if not unit_rows:
            continue  # keys the unit does not touch
        older = [(tag, t) for tag, t in pieces if tag >= in_unit]
        # one dense code per key over the range: the unit's keys and every older piece's
        codes = key_codes([_concat(unit_rows).select(keys), *(t.select(keys) for _, t in older)], keys)
        parts = list(unit_rows)
        for (tag, t), piece_codes in zip(older, codes[1:], strict=True):
            hit = np.isin(piece_codes, codes[0])
            if hit.any():
                found = t.filter(pa.array(hit))
                hits.setdefault(tag, []).append(found.column(_POSITION).to_numpy())
                parts.append(found.drop_columns([_POSITION]))
        out.add(merge(_concat(parts)))
    added = {files[tag].file_name: np.sort(np.concatenate(p)) for tag, p in hits.items()}
    return out.finish(), added


def _concat(tables: list[pa.Table]) -> pa.Table:
    return pa.concat_tables(tables) if len(tables) > 1 else tables[0]
