"""Compaction of one (partition, bucket): pick, merge or upgrade, and describe the result as a CommitMessage.

Mirrors MergeTreeCompactManager + MergeTreeCompactTask (primary-key tables: universal compaction or
full compaction, key-range sections, files upgraded to a higher level without rewriting where no
merge is needed, retractions dropped only when writing the highest non-empty level) and
AppendOnlyCompactManager (append tables: small files packed into target-size files). A CompactTask
is a picklable value: the driver plans tasks, executors run them, the driver commits the messages.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pyarrow as pa

from table_format.data.deletion_vector import (
    DELETION_VECTORS,
    DeletionFile,
    read_deletion_vector,
    write_deletion_vector_file,
)
from table_format.data.file_reader import read_data_file
from table_format.errors import CommitConflictError, CorruptMetadataError
from table_format.lsm.levels import Levels, make_levels
from table_format.lsm.universal import CompactUnit, UniversalCompaction
from table_format.merge import merge_kv
from table_format.meta.manifest import DataFileMeta, DeletionVectorMeta, FileSource, IndexFileMeta
from table_format.options import ChangelogProducer, MergeEngine
from table_format.row.binary_row import decode_row
from table_format.row.row_kind import SEQUENCE_NUMBER, VALUE_KIND
from table_format.store.file_store import FileStore
from table_format.write.changelog import key_codes
from table_format.write.commit_message import CommitMessage
from table_format.write.compaction_changelog import compaction_changelog
from table_format.write.file_writer import DataFileWriter
from table_format.write.key_range_rewrite import fits_in_memory, lookup_by_key_ranges, rewrite_by_key_ranges

SMALL_FILE_RATIO = 0.7  # compaction.small-file-ratio: files below ratio x target are "small"


@dataclass(frozen=True, slots=True)
class CompactTask:
    """All live files of one bucket and how to compact them."""

    partition: bytes
    bucket: int
    total_buckets: int
    files: tuple[DataFileMeta, ...]
    full: bool = False
    deletion_files: tuple[DeletionFile | None, ...] | None = None  # aligned with files
    dv_index_file: IndexFileMeta | None = None  # the bucket's DELETION_VECTORS index file, if any


def _strategy(store: FileStore) -> UniversalCompaction:
    raw = store.options.raw
    return UniversalCompaction(
        max_size_amp=int(raw.get("compaction.max-size-amplification-percent", "200")),
        size_ratio=int(raw.get("compaction.size-ratio", "1")),
        num_run_trigger=store.options.num_sorted_run_compaction_trigger,
    )


def num_levels(store: FileStore) -> int:
    return store.options.num_levels


def pick_unit(store: FileStore, levels: Levels, *, full: bool) -> CompactUnit | None:
    runs = levels.sorted_runs()
    if not runs:
        return None
    max_level = levels.max_level
    if full:
        if len(runs) == 1 and runs[0].level == max_level:
            return None  # one run on the max level already (CompactStrategy.pickFullCompaction)
        return CompactUnit(max_level, tuple(runs))
    strategy = _strategy(store)
    unit = strategy.pick(levels.num_levels, runs)
    force_l0 = (
        store.options.deletion_vectors_enabled
        or store.options.changelog_producer == ChangelogProducer.LOOKUP
        or store.options.merge_engine == MergeEngine.FIRST_ROW
        or store.options.raw.get("compaction.force-up-level-0", "false").lower() == "true"
    )
    if unit is None and force_l0:
        unit = strategy.force_pick_level0(levels.num_levels, runs)
    return unit


def _sections(store: FileStore, files: list[DataFileMeta]) -> list[list[DataFileMeta]]:
    """IntervalPartition: groups of files whose key ranges overlap, in key order."""
    key_types = store.key_types
    ranged = sorted(
        ((decode_row(f.min_key, key_types), decode_row(f.max_key, key_types), f) for f in files),
        key=lambda t: (t[0], t[1]),
    )
    sections: list[list[DataFileMeta]] = []
    bound = None
    for lo, hi, f in ranged:
        if sections and bound is not None and lo <= bound:
            sections[-1].append(f)
            bound = max(bound, hi)
        else:
            sections.append([f])
            bound = hi
    return sections


class _BucketCompaction:
    def __init__(self, store: FileStore, task: CompactTask, output_level: int, drop_delete: bool) -> None:
        self.store = store
        self.task = task
        self.output_level = output_level
        self.drop_delete = drop_delete
        self.max_level = num_levels(store) - 1
        self.before: list[DataFileMeta] = []
        self.after: list[DataFileMeta] = []
        self.written: list[str] = []
        self.rewritten = 0
        self.upgraded = 0
        self._dv = {f.file_name: d for f, d in zip(task.files, task.deletion_files or (), strict=False) if d}

    def upgrade(self, f: DataFileMeta) -> None:
        if f.level == self.output_level:
            return
        if self.output_level != self.max_level or (f.delete_row_count == 0 and f.file_name not in self._dv):
            self.before.append(f)
            self.after.append(replace(f, level=self.output_level))
            self.upgraded += 1
        else:  # retractions (or deleted rows) must not reach the max level unmerged
            self.rewrite([[f]])

    def rewrite(self, sections: list[list[DataFileMeta]]) -> None:
        files = [f for s in sections for f in s]
        if not files:
            return
        if len(files) == 1 and len(sections) == 1 and not (
            self.output_level == self.max_level and (files[0].delete_row_count or files[0].file_name in self._dv)
        ):
            self.upgrade(files[0])
            return
        store = self.store
        names = store.schema.field_names
        if not fits_in_memory(store, files):
            writer = DataFileWriter(store, self.task.partition, self.task.bucket, level=self.output_level,
                                    file_source=FileSource.COMPACT)
            try:
                new = rewrite_by_key_ranges(
                    store, self.task.partition, self.task.bucket, files, self._dv, writer,
                    lambda data: merge_kv(data, schema=store.schema, options=store.options,
                                          drop_retractions=self.drop_delete))
            finally:
                self.written.extend(writer.written_paths)
            self.before.extend(files)
            self.after.extend(new)
            self.rewritten += len(files)
            return
        tables = [
            read_data_file(store, self.task.partition, self.task.bucket, f, names,
                           system=(SEQUENCE_NUMBER, VALUE_KIND), deletion_file=self._dv.get(f.file_name))
            for f in sorted(files, key=lambda f: f.min_sequence_number)
        ]
        data = pa.concat_tables(tables) if len(tables) > 1 else tables[0]
        merged = merge_kv(data, schema=store.schema, options=store.options, drop_retractions=self.drop_delete)
        writer = DataFileWriter(store, self.task.partition, self.task.bucket, level=self.output_level,
                                file_source=FileSource.COMPACT)
        try:
            new = writer.write(
                merged.select(names),
                sequence_numbers=merged.column(SEQUENCE_NUMBER).to_numpy(),
                kinds=merged.column(VALUE_KIND).combine_chunks(),
            )
        finally:
            self.written.extend(writer.written_paths)
        self.before.extend(files)
        self.after.extend(new)
        self.rewritten += len(files)

    def run(self, unit: CompactUnit) -> None:
        """MergeTreeCompactTask.doCompact: rewrite overlapping sections, upgrade lone large files."""
        min_file_size = self.store.options.target_file_size * SMALL_FILE_RATIO
        candidate: list[list[DataFileMeta]] = []
        for section in _sections(self.store, unit.files):
            if len(section) > 1:
                candidate.append(section)
                continue
            f = section[0]
            if f.file_size < min_file_size:
                candidate.append([f])
            else:
                self.rewrite(candidate)
                candidate = []
                self.upgrade(f)
        self.rewrite(candidate)


def picked_files(store: FileStore, task: CompactTask) -> list[DataFileMeta]:
    """The files `run_compact_task` would rewrite: its picking alone (no data file is opened), [] for a no-op."""
    if store.has_primary_key:
        unit = pick_unit(store, make_levels(task.files, num_levels(store)), full=task.full)
        return [] if unit is None else unit.files
    return _append_pick(store, task)


def _append_pick(store: FileStore, task: CompactTask) -> list[DataFileMeta]:
    """The small append files to pack (AppendOnlyCompactManager / UnawareAppendTableCompactionCoordinator)."""
    target = store.options.target_file_size
    raw = store.options.raw
    min_num = int(raw.get("compaction.min.file-num", "5"))
    max_num = int(raw.get("compaction.max.file-num", "50"))
    small = sorted((f for f in task.files if f.file_size < target * SMALL_FILE_RATIO or task.full),
                   key=lambda f: f.min_sequence_number)
    if len(small) < 2 or (not task.full and len(small) < min_num and len(small) < max_num):
        return []
    return small


def _append_compact(store: FileStore, task: CompactTask) -> tuple[list[DataFileMeta], list[DataFileMeta], list[str]]:
    """Pack the picked small append files into new files."""
    small = _append_pick(store, task)
    if not small:
        return [], [], []
    names = store.schema.field_names
    dv = {f.file_name: d for f, d in zip(task.files, task.deletion_files or (), strict=False) if d}
    tables = [read_data_file(store, task.partition, task.bucket, f, names, deletion_file=dv.get(f.file_name))
              for f in small]
    data = pa.concat_tables(tables) if len(tables) > 1 else tables[0]
    seq_lo = min(f.min_sequence_number for f in small)
    seqs = np.arange(seq_lo, seq_lo + data.num_rows, dtype=np.int64)
    writer = DataFileWriter(store, task.partition, task.bucket, level=0, file_source=FileSource.COMPACT)
    try:
        after = writer.write(data, sequence_numbers=seqs, kinds=None)
    finally:
        written = list(writer.written_paths)
    return small, after, written


def _deletion_vector_index(
    store: FileStore, task: CompactTask, removed: set[str], added: dict[str, np.ndarray]
) -> tuple[tuple[IndexFileMeta, ...], tuple[IndexFileMeta, ...], list[str]]:
    """The bucket's new DV index file: vectors of removed files dropped, `added` positions merged in.

    Returns (new index files, replaced index files, written paths); nothing when nothing changed.
    """
    current = {f.file_name: d for f, d in zip(task.files, task.deletion_files or (), strict=False) if d}
    dropped = set(current) & removed
    if not dropped and not added:
        return (), (), []
    vectors = {name: read_deletion_vector(store.file_io, d) for name, d in current.items() if name not in removed}
    for name, positions in added.items():
        vectors[name] = np.union1d(vectors[name], positions) if name in vectors else np.unique(positions)
    old = (task.dv_index_file,) if task.dv_index_file is not None else ()
    if not vectors:
        return (), old, []
    name = store.paths.new_name("index-")
    path = store.paths.index_file(name)
    size, ranges = write_deletion_vector_file(store.file_io, path, vectors)
    meta = IndexFileMeta(
        DELETION_VECTORS, name, size, len(ranges),
        dv_ranges=tuple(DeletionVectorMeta(n, o, ln, c) for n, o, ln, c in ranges),
    )
    return (meta,), old, [path]


def _lookup_deletions(
    store: FileStore, task: CompactTask, unit: CompactUnit, written: list[str]
) -> tuple[list[DataFileMeta], list[DataFileMeta], dict[str, np.ndarray]]:
    """Deletion-vector compaction (LookupMergeTreeCompactRewriter with deletion vectors).

    The unit's files are merged, together with the older versions of their keys found in the higher
    levels outside the unit, into the output level; those older rows are marked deleted in the
    deletion vectors of their files instead of rewriting the files. Readers of levels >= 1 then see
    each key once without merging.
    """
    names = store.schema.field_names
    keys = [f.name for f in store.key_fields]
    system = (SEQUENCE_NUMBER, VALUE_KIND)
    dv = {f.file_name: d for f, d in zip(task.files, task.deletion_files or (), strict=False) if d}
    unit_names = {f.file_name for f in unit.files}
    higher = [f for f in task.files if f.file_name not in unit_names and f.level != 0]
    writer = DataFileWriter(store, task.partition, task.bucket, level=unit.output_level,
                            file_source=FileSource.COMPACT)
    if not fits_in_memory(store, [*unit.files, *higher]):  # key range by key range, in bounded memory
        try:
            after, lost = lookup_by_key_ranges(
                store, task.partition, task.bucket, unit.files, higher, dv,
                lambda data: merge_kv(data, schema=store.schema, options=store.options, drop_retractions=True),
                writer)
        finally:
            written.extend(writer.written_paths)
        return list(unit.files), after, lost
    unit_data = pa.concat_tables([
        read_data_file(store, task.partition, task.bucket, f, names, system=system, deletion_file=dv.get(f.file_name))
        for f in sorted(unit.files, key=lambda f: f.min_sequence_number)
    ])
    parts = [unit_data]
    added: dict[str, np.ndarray] = {}
    for f in higher:
        raw = read_data_file(store, task.partition, task.bucket, f, names, system=system)
        alive = np.ones(raw.num_rows, dtype=bool)
        if f.file_name in dv:
            gone = read_deletion_vector(store.file_io, dv[f.file_name])
            alive[gone[gone < raw.num_rows]] = False
        codes_unit, codes_file = key_codes([unit_data, raw], keys)
        hit = alive & np.isin(codes_file, codes_unit)
        if hit.any():
            added[f.file_name] = np.flatnonzero(hit)
            parts.append(raw.filter(pa.array(hit)))
    data = pa.concat_tables(parts)
    merged = merge_kv(data, schema=store.schema, options=store.options, drop_retractions=True)
    try:
        after = writer.write(merged.select(names), sequence_numbers=merged.column(SEQUENCE_NUMBER).to_numpy(),
                             kinds=merged.column(VALUE_KIND).combine_chunks())
    finally:
        written.extend(writer.written_paths)
    return list(unit.files), after, added


@dataclass(frozen=True, slots=True)
class CompactOutcome:
    message: CommitMessage | None
    rewritten_files: int = 0
    upgraded_files: int = 0
    written_paths: tuple[str, ...] = ()


def run_compact_task(store: FileStore, task: CompactTask) -> CompactOutcome:
    """Execute one task (on any process); nothing is committed here.

    A concurrent compaction may have replaced the task's files and an expiration deleted them since the task
    was planned: reading them then fails, and that is a CommitConflictError (the task is stale), not corruption.
    Files are never rewritten into a schema older than theirs (their newer columns would be lost): a store older
    than a file is moved to the table's latest schema first.
    """
    if any(f.schema_id > store.schema.id for f in task.files):
        store = store.latest()
    try:
        return _run_compact_task(store, task)
    except CorruptMetadataError as e:
        inputs = [store.data_file_path(task.partition, task.bucket, f.file_name, f.external_path) for f in task.files]
        if task.dv_index_file is not None:
            inputs.append(task.dv_index_file.external_path or store.paths.index_file(task.dv_index_file.file_name))
        gone = [p for p in inputs if not store.file_io.exists(p)]
        if not gone:
            raise
        raise CommitConflictError(
            f"table {store.identifier!r}: compaction of bucket {task.bucket} gave up: {gone[0]} was removed by a "
            f"concurrent commit and snapshot expiration after the compaction was planned ({e})"
        ) from None


def _run_compact_task(store: FileStore, task: CompactTask) -> CompactOutcome:
    if store.has_primary_key:
        levels = make_levels(task.files, num_levels(store))
        unit = pick_unit(store, levels, full=task.full)
        if unit is None:
            return CompactOutcome(None)
        drop_delete = unit.output_level != 0 and unit.output_level >= levels.non_empty_highest_level()
        job = _BucketCompaction(store, task, unit.output_level, drop_delete)
        dv_added: dict[str, np.ndarray] = {}
        try:
            dv = {f.file_name: d for f, d in zip(task.files, task.deletion_files or (), strict=False) if d}
            changelog = compaction_changelog(store, task.partition, task.bucket, task.files, dv, unit, levels,
                                             job.written)
            if store.options.deletion_vectors_enabled and not task.full:
                job.before, job.after, dv_added = _lookup_deletions(store, task, unit, job.written)
                job.rewritten = len(job.before)
            else:
                job.run(unit)
        except BaseException:
            for p in job.written:
                store.file_io.delete_quietly(p)
            raise
        before, after, written = job.before, job.after, job.written
        rewritten, upgraded = job.rewritten, job.upgraded
    else:
        before, after, written = _append_compact(store, task)
        rewritten, upgraded, changelog, dv_added = len(before), 0, [], {}
    if not before:
        return CompactOutcome(None)
    removed = {f.file_name for f in before} - {f.file_name for f in after}
    new_index, old_index, index_paths = _deletion_vector_index(store, task, removed, dv_added)
    message = CommitMessage(
        partition=task.partition,
        bucket=task.bucket,
        total_buckets=task.total_buckets,
        compact_before=tuple(before),
        compact_after=tuple(after),
        compact_changelog=tuple(changelog),
        new_index_files=new_index,
        deleted_index_files=old_index,
    )
    return CompactOutcome(message, rewritten, upgraded, tuple(written + index_paths))
