"""Incremental reads: the rows changed between two snapshots, exactly as Paimon 0.9's audit log reads them.

Mirrors `t$audit_log` read with `incremental-between=start,end`:

* IncrementalStartingScanner and MergeTreeSplitGenerator.splitForBatch: which files are read together
  (scan/change_plan.py).
* MergeFileSplitRead.createMergeReader with forceKeepDelete (no DropDeleteReader): IntervalPartition sections of
  sorted runs (java.util.PriorityQueue order, then MergeSorter's spill order; scan/change_plan.py), each merged by
  SortMergeReaderWithLoserTree through ReducerMergeFunctionWrapper with the table's merge function. A run hands
  one record per key to each merge, so a key is merged in rounds: round i takes the i-th record of the key of
  every run. Inside a round records go in sequence order; equal sequence numbers (a lookup/full-compaction
  after-image and the later before-image of the same record, or sequence numbers restarted by an overwrite)
  go in the order the LoserTree pops them (scan/loser_tree.py). A lone record keeps its row kind; two or more go
  through the merge function (deduplicate: the last record with its kind; partial-update/aggregation: +I; a
  partial-update of ignored retractions only: an all-null +I row). Tables that need lookup (lookup producer,
  deletion vectors, force-lookup; not first-row) merge through LookupMergeFunction: of the records of level > 0
  of a round only the last one counts.
* Append tables (AppendOnlyFileStoreTable): every file read as it is, all rows +I.

``merged=False`` reads the range as Paimon >= 1.1 does (apache/paimon#5361: IncrementalDeltaStartingScanner builds
streaming splits, read without merging): the same snapshots' files of every level (no level-0 skip), every record
of every file with its row kind, no deletion vectors applied.

Each group is merged whole, not in key ranges (lsm/key_ranges.py): which of two records with equal sequence numbers
the LoserTree pops first depends on the last round each run took part in, which may be an earlier key's, so a
cut between keys would change the order of ties.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import pyarrow as pa

from table_format.data.deletion_vector import DeletionFile
from table_format.data.file_reader import read_data_file
from table_format.errors import SnapshotNotFoundError
from table_format.merge import FieldAgg, MergeSpec, merge_kv
from table_format.merge.kernels import lex_rank, sequence_rank
from table_format.meta.manifest import DataFileMeta
from table_format.options import ChangelogProducer, MergeEngine
from table_format.row.row_kind import ROW_KIND_COLUMN, SEQUENCE_NUMBER, VALUE_KIND, RowKind, row_kind_strings
from table_format.row.sort import first_of_runs, sortable
from table_format.scan.change_plan import (
    grouped_files,
    interval_partition,
    key_of,
    spill_order,
    split_deletion_files,
    split_for_batch,
)
from table_format.scan.loser_tree import dense, merge_order
from table_format.scan.reader import SplitReader
from table_format.store.file_store import FileStore
from table_format.types import BigIntType

_ROUND = "__round"  # merge key of one round of one key: (key, occurrence in its run)


@dataclass(frozen=True)
class ChangeSplit:
    """Files of one (partition, bucket) read together for an incremental read (picklable: read on any process)."""

    partition: bytes
    bucket: int
    files: tuple[DataFileMeta, ...]
    deletion_files: tuple[tuple[str, DeletionFile], ...] = ()  # (file name, its deletion file)
    merged: bool = True  # False: one file read as it is (append rows +I; primary-key records with their own kinds)

    @property
    def size_bytes(self) -> int:
        return sum(f.file_size for f in self.files)


def plan_changes(store: FileStore, start: int, end: int | None, *, merged: bool = True) -> list[ChangeSplit]:
    """The splits of the changes after snapshot `start` up to `end` (default latest), in (partition, bucket) order;
    reading each with `read_change_split` and concatenating gives `read_changes` (`merged` as there)."""
    latest = store.snapshots.latest_id()
    earliest = store.snapshots.earliest_id()
    end = latest if end is None else end
    if latest is None or earliest is None or end is None or start > end or start < earliest - 1 or end > latest:
        raise SnapshotNotFoundError(
            f"table {store.identifier!r}: no changes between snapshots {start} and {end} "
            f"(available: {earliest} to {latest})"
        )
    splits: list[ChangeSplit] = []
    grouped = grouped_files(store, start, end, all_levels=not merged)
    for (partition, bucket, dv_key), entries in sorted(grouped.items(), key=lambda kv: kv[0][:2]):
        files = [e.file for e in entries]
        if not store.has_primary_key or not merged:
            splits.extend(ChangeSplit(partition, bucket, (f,), merged=False) for f in files)
            continue
        for split in split_for_batch(store, files):
            dvs = split_deletion_files(store, split, dv_key)
            splits.append(ChangeSplit(partition, bucket, tuple(split), tuple(sorted(dvs.items()))))
    return splits


def changes_schema(store: FileStore, columns: Sequence[str] | None = None) -> pa.Schema:
    """The schema of `read_changes` before nullability is relaxed: the projected columns, then `_row_kind`."""
    return SplitReader(store, columns=columns).output_schema.append(
        pa.field(ROW_KIND_COLUMN, pa.string(), nullable=False))


def read_change_split(store: FileStore, split: ChangeSplit, *, columns: Sequence[str] | None = None) -> pa.Table:
    """The changed rows of one split, with `_row_kind` (every column may be null: see `read_changes`)."""
    reader = SplitReader(store, columns=columns)
    if not split.merged:
        (f,) = split.files
        if store.has_primary_key:  # unmerged (Paimon >= 1.1): every record with its own row kind
            raw = read_data_file(store, split.partition, split.bucket, f, reader.merge_columns, system=(VALUE_KIND,))
            return _with_kinds(reader.project(raw), row_kind_strings(raw.column(VALUE_KIND)))
        data = read_data_file(store, split.partition, split.bucket, f, reader.columns)
        return _with_kinds(reader.project(data), pa.array(["+I"] * data.num_rows, pa.string()))
    merged = _merge_read(store, reader, split.partition, split.bucket, list(split.files), dict(split.deletion_files))
    return _with_kinds(reader.project(merged), row_kind_strings(merged.column(VALUE_KIND)))


def read_changes(store: FileStore, start: int, end: int | None, *, columns: Sequence[str] | None = None,
                 merged: bool = True) -> pa.Table:
    out = [read_change_split(store, split, columns=columns)
           for split in plan_changes(store, start, end, merged=merged)]
    schema = changes_schema(store, columns)
    if not out:
        return schema.empty_table()
    if any(t.column(f.name).null_count for t in out for f in schema if not f.nullable):
        # the empty row of a partial-update merge of retractions only: Java shows every column null
        schema = pa.schema([f.with_nullable(f.name != ROW_KIND_COLUMN) for f in schema])
    return pa.concat_tables([t.cast(schema) for t in out])


def _with_kinds(data: pa.Table, kinds: pa.Array) -> pa.Table:
    return data.append_column(ROW_KIND_COLUMN, kinds)


# ---- read: MergeFileSplitRead.createMergeReader(forceKeepDelete) ---------------------------------------------------
def _merge_read(store: FileStore, reader: SplitReader, partition: bytes, bucket: int, files: list[DataFileMeta],
                deletion_files: dict[str, DeletionFile]) -> pa.Table:
    tables: list[pa.Table] = []
    sec_ids: list[np.ndarray] = []
    leaf_ids: list[np.ndarray] = []
    leaf_counts: list[np.ndarray] = []
    levels: list[np.ndarray] = []
    for si, section in enumerate(interval_partition(files, key_of(store))):
        runs = spill_order(store, section)
        for li, run in enumerate(runs):
            for f in run:
                t = read_data_file(store, partition, bucket, f, reader.merge_columns, system=(SEQUENCE_NUMBER, VALUE_KIND),
                                   deletion_file=deletion_files.get(f.file_name))
                tables.append(t)
                sec_ids.append(np.full(t.num_rows, si, np.int64))
                leaf_ids.append(np.full(t.num_rows, li, np.int64))
                leaf_counts.append(np.full(t.num_rows, len(runs), np.int64))
                levels.append(np.full(t.num_rows, f.level, np.int64))
    data = pa.concat_tables(tables).combine_chunks()
    if data.num_rows == 0:
        return data
    spec = reader.merge_spec
    assert spec is not None
    key = lex_rank([np.asarray(sortable(data.column(k))) for k in spec.key_names])
    seq = data.column(SEQUENCE_NUMBER).to_numpy(zero_copy_only=False)
    s = dense([*(sequence_rank(data.column(c)) for c in spec.sequence_fields), seq])
    order, rounds = merge_order(np.concatenate(sec_ids), np.concatenate(leaf_ids), np.concatenate(leaf_counts),
                                 key, s)
    return _merge_rounds(store, spec, data.take(pa.array(order)), rounds[order], np.concatenate(levels)[order])


def _merge_rounds(store: FileStore, spec: MergeSpec, data: pa.Table, rounds: np.ndarray,
                  levels: np.ndarray) -> pa.Table:
    """Merge each round (rows in merge order) as ReducerMergeFunctionWrapper does: a lone record stays as it is,
    two or more go through the merge function (LookupMergeFunction first, when the table needs lookup)."""
    opts = store.options
    engine = spec.engine
    starts = np.flatnonzero(first_of_runs([rounds]))
    lens = np.diff(np.append(starts, len(rounds)))
    merged = np.repeat(lens > 1, lens)  # the merge function sees this round
    lookup = opts.changelog_producer == ChangelogProducer.LOOKUP or opts.deletion_vectors_enabled or (
        opts.raw.get("force-lookup", "false").strip().lower() == "true")
    if lookup and engine != MergeEngine.FIRST_ROW and merged.any():
        # LookupMergeFunction: of the records of level > 0 only the last one counts
        idx = np.arange(len(rounds))
        high = levels > 0
        last_high = np.full(len(starts), -1)
        np.maximum.at(last_high, np.repeat(np.arange(len(starts)), lens)[high], idx[high])
        keep = ~merged | ~high | (idx == np.repeat(last_high, lens))
        data, rounds, merged = data.filter(pa.array(keep)), rounds[keep], merged[keep]
        starts = np.flatnonzero(first_of_runs([rounds]))
        lens = np.diff(np.append(starts, len(rounds)))
    kinds = data.column(VALUE_KIND).to_numpy(zero_copy_only=False)
    retract = (kinds == int(RowKind.UPDATE_BEFORE)) | (kinds == int(RowKind.DELETE))
    alone = merged & np.repeat(lens == 1, lens)  # the merge function sees one record only
    null_rows = 0
    if engine == MergeEngine.DEDUPLICATE and spec.ignore_delete:
        keep = ~(alone & retract)  # an ignored retraction leaves nothing
        data, rounds, alone = data.filter(pa.array(keep)), rounds[keep], alone[keep]
    elif engine == MergeEngine.PARTIAL_UPDATE and not spec.groups and (spec.ignore_delete
                                                                       or spec.remove_record_on_delete):
        # only retractions, all ignored: PartialUpdateMergeFunction returns its empty row (+I, every column null)
        starts = np.flatnonzero(first_of_runs([rounds]))
        lens = np.diff(np.append(starts, len(rounds)))
        run_of = np.repeat(np.arange(len(starts)), lens)
        only_retract = np.repeat(np.bincount(run_of, weights=~retract, minlength=len(starts)) == 0, lens) & merged
        if spec.remove_record_on_delete:  # a -D drops the row
            deleted = np.bincount(run_of, weights=kinds == int(RowKind.DELETE), minlength=len(starts)) > 0
            null_rows = int((~deleted[run_of] & only_retract & first_of_runs([rounds])).sum())
        else:
            null_rows = int((only_retract & first_of_runs([rounds])).sum())
        keep = ~only_retract
        data, rounds, alone = data.filter(pa.array(keep)), rounds[keep], alone[keep]
    if engine in (MergeEngine.PARTIAL_UPDATE, MergeEngine.AGGREGATION) and alone.any():
        # one record through the merge function (result +I): merged after an empty +I record of its key
        empty = data.filter(pa.array(alone))
        for c in empty.column_names:
            if c not in (*spec.key_names, *spec.primary_keys):
                empty = empty.set_column(empty.schema.get_field_index(c), empty.field(c),
                                         pa.nulls(empty.num_rows, empty.field(c).type))
        empty = empty.set_column(empty.schema.get_field_index(VALUE_KIND), empty.field(VALUE_KIND),
                                 pa.array(np.zeros(empty.num_rows, np.int8)))
        position = np.concatenate([np.flatnonzero(alone) - 0.5, np.arange(len(rounds))])
        both = np.argsort(position, kind="stable")
        data = pa.concat_tables([empty, data]).take(pa.array(both))
        rounds = np.concatenate([rounds[alone], rounds])[both]
    data = data.set_column(data.schema.get_field_index(SEQUENCE_NUMBER), SEQUENCE_NUMBER,
                           pa.array(np.arange(len(rounds), dtype=np.int64)))
    data = data.append_column(_ROUND, pa.array(rounds, pa.int64()))
    # each round merges as one key: the round number is an extra key column (FieldPrimaryKeyAgg when aggregating)
    round_type = BigIntType(nullable=False)
    round_spec = replace(spec, key_names=(_ROUND,), sequence_fields=(), primary_keys=(*spec.primary_keys, _ROUND),
                         field_names=(*spec.field_names, _ROUND), types={**spec.types, _ROUND: round_type},
                         aggs={**spec.aggs, _ROUND: FieldAgg(_ROUND, "primary_key", round_type)}
                         if spec.aggs else spec.aggs)
    out = merge_kv(data, schema=store.schema, options=opts, drop_retractions=False, seq_ordered=True,
                   table=store.identifier, spec=round_spec)
    if null_rows:
        nulls = pa.Table.from_arrays([pa.nulls(null_rows, f.type) if f.name != VALUE_KIND
                                      else pa.array(np.zeros(null_rows, np.int8)) for f in out.schema],
                                     schema=pa.schema([f.with_nullable(True) for f in out.schema]))
        out = pa.concat_tables([out.cast(nulls.schema), nulls])
    return out
