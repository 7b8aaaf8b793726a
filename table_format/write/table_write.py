"""TableWrite: buffers rows, assigns partitions and buckets, merges per key and writes level-0 files.

Mirrors org.apache.paimon.table.sink.TableWriteImpl with KeyValueFileStoreWrite / AppendOnlyFileStoreWrite.
All work is columnar: bucket hashing in numpy, one stable sort of the rows by (partition, bucket), then
per (partition, bucket), in parallel, a stable sort by key (ties in input order) and one `take`. Sequence
numbers follow input order and continue from the highest one already committed in each bucket
(MergeTreeWriter.newSequenceNumber).
Which bucket and (partition, bucket) group each row goes to is decided in write/bucket_assign.py.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from table_format.data.deletion_vector import DELETION_VECTORS, DeletionFile
from table_format.errors import CommitConflictError, OptionError, SchemaError, UnsupportedFeatureError
from table_format.features import check_write_features
from table_format.merge import merge_kv, merge_spec
from table_format.merge.kernels import sequence_rank
from table_format.meta.manifest import DataFileMeta, FileKind, IndexFileMeta
from table_format.options import BucketMode, ChangelogProducer
from table_format.row.row_kind import SEQUENCE_NUMBER, VALUE_KIND, RowKind
from table_format.row.sort import last_of_runs, sortable, stable_sort_indices
from table_format.store.file_store import FileStore
from table_format.workers import run_all
from table_format.write.bucket_assign import buckets_of, group_codes, partition_rows
from table_format.write.commit_message import CommitMessage
from table_format.write.compact_task import CompactTask, run_compact_task
from table_format.write.dynamic_bucket import PartitionIndex
from table_format.write.file_writer import DataFileWriter
from table_format.write.input import conform, to_arrow_table
from table_format.write.schema_merge import (
    SchemaMerger,
    check_schema_mode,
    conform_to,
    refuse_new_columns,
    widening_hint,
)

WRITE_BUFFER_SIZE = 256 << 20
MAX_SEQUENCE = (1 << 63) - 1


@dataclass
class _BucketState:
    base: int  # the bucket's next sequence number in the snapshot written on
    next_sequence: int = 0  # rows of the bucket this writer has numbered so far
    new_files: list[DataFileMeta] = field(default_factory=list)
    changelog_files: list[DataFileMeta] = field(default_factory=list)
    existing: list[DataFileMeta] = field(default_factory=list)  # committed live files (for compaction)


class TableWrite:
    """Collects data for one commit; `prepare_commit` returns picklable CommitMessages."""

    def __init__(self, store: FileStore, *, ignore_previous_files: bool = False, schema_mode: str = "strict",
                 sequence_slot: tuple[int, int] | None = None) -> None:
        """`schema_mode="merge"`: input columns the table lacks are added and safe widenings applied, published
        with the commit (write/schema_merge.py); "strict" refuses them.

        `sequence_slot=(slot, slots)`: one of `slots` writers that may write the same buckets in one commit (Spark
        tasks of a plain write). The i-th row of a bucket gets `base + i * slots + slot` (base: the bucket's next
        sequence number in the latest snapshot), so two writers never share a number, input order holds within
        each, and the bucket's numbers grow by at most `slots` times its rows per writer. Such a writer never
        compacts (another may be rewriting the same files); the merge of their level-0 files is by sequence."""
        check_schema_mode(schema_mode, table=store.identifier)
        if sequence_slot is not None and not 0 <= sequence_slot[0] < sequence_slot[1]:
            raise OptionError(f"table {store.identifier!r}: sequence slot {sequence_slot[0]} is not below "
                              f"{sequence_slot[1]}")
        self._slot, self._slots = sequence_slot or (0, 1)
        self._merger = SchemaMerger() if schema_mode == "merge" else None
        if self._merger is not None:
            store = store.latest()  # evolve from the newest schema, never from a stale one
        self.store = store
        self.ignore_previous_files = ignore_previous_files
        self._buffer: list[tuple[pa.Table, pa.Array | None]] = []
        self._buffer_bytes = 0
        self._buckets: dict[tuple[bytes, int], _BucketState] = {}
        self._written_paths: list[str] = []
        self._indexes: dict[bytes, PartitionIndex] = {}
        self._dv_indexes: dict[tuple[bytes, int], IndexFileMeta] = {}
        self._commits = 0
        self._merge_spec = merge_spec(store.schema, table=store.identifier) if store.has_primary_key else None
        check_write_features(store.schema.options, table=store.identifier)
        if store.bucket_mode == BucketMode.DYNAMIC and not set(store.schema.partition_keys) <= set(
            store.schema.primary_keys
        ):
            raise UnsupportedFeatureError(
                f"table {store.identifier!r}: dynamic bucket mode (bucket = -1) with a primary key that does not "
                "contain every partition key (cross-partition upsert) is not supported; add the partition keys "
                "to the primary key or set the option 'bucket' to a positive number"
            )

    # ---- public --------------------------------------------------------------------------
    def write(self, data: Any) -> None:
        data = to_arrow_table(data, table=self.store.identifier)
        if self._merger is None:
            refuse_new_columns(self.store.schema, data.schema, table=self.store.identifier)
        else:
            evolved = self._merger.evolve(self.store, data)
            if evolved is not self.store:
                self._adopt_schema(evolved)
            data = self._merger.fill_missing(self.store.schema, data)
        try:
            rows, kinds = conform(data, self.store.schema, table=self.store.identifier)
        except SchemaError as e:
            hint = widening_hint(self.store.schema, data.schema, table=self.store.identifier)
            if self._merger is not None or hint is None:
                raise
            raise SchemaError(f"{e}; {hint}") from None
        if rows.num_rows == 0:
            return
        if not self.store.has_primary_key and kinds is not None:
            bad = pc.not_equal(kinds, pa.scalar(int(RowKind.INSERT), pa.int8()))
            if pc.any(bad).as_py():
                raise SchemaError(
                    f"table {self.store.identifier!r}: an append table (no primary key) accepts only +I rows "
                    "in column '_row_kind'"
                )
            kinds = None
        if kinds is not None and self._merge_spec is not None and self._merge_spec.ignore_delete:
            # TableWriteImpl: with 'ignore-delete' the -U/-D records never reach the write buffer
            keep = pc.invert(pc.is_in(kinds, value_set=pa.array([int(RowKind.UPDATE_BEFORE), int(RowKind.DELETE)],
                                                                 pa.int8())))
            if not pc.all(keep).as_py():
                rows, kinds = rows.filter(keep), kinds.filter(keep)
                if rows.num_rows == 0:
                    return
        self._check_primary_key_nulls(rows)
        self._buffer.append((rows, kinds))
        self._buffer_bytes += rows.nbytes
        if self._buffer_bytes >= WRITE_BUFFER_SIZE:
            self._flush()

    def prepare_commit(self) -> list[CommitMessage]:
        """The messages for a commit. In merge mode the evolved schema is published here, after every file is
        written: SchemaConflictError when another writer published a different one (abort, write again)."""
        self._flush()
        if self._merger is not None:
            self._merger.publish(self.store)
        self._commits += 1
        total = self.store.options.bucket if self.store.bucket_mode == BucketMode.FIXED else -1
        new_index: dict[tuple[bytes, int], IndexFileMeta] = {}
        old_index: dict[tuple[bytes, int], IndexFileMeta] = {}
        for partition, index in self._indexes.items():
            new, old = index.changed_files(self.store)
            self._written_paths.extend(self.store.paths.index_file(m.file_name) for m in new.values())
            new_index.update({(partition, b): m for b, m in new.items()})
            old_index.update({(partition, b): m for b, m in old.items()})
        messages = []
        compactions = []
        for (p, b), state in sorted(self._buckets.items(), key=lambda kv: (kv[0][0], kv[0][1])):
            if not state.new_files:
                continue
            messages.append(CommitMessage(
                partition=p,
                bucket=b,
                total_buckets=total,
                new_files=tuple(state.new_files),
                changelog_files=tuple(state.changelog_files),
                new_index_files=(new_index[(p, b)],) if (p, b) in new_index else (),
                deleted_index_files=(old_index[(p, b)],) if (p, b) in old_index else (),
            ))
            state.existing.extend(state.new_files)
            state.new_files = []
            state.changelog_files = []
            compacted = self._auto_compact(p, b, total, state)
            if compacted is not None:
                compactions.append(compacted)
        return messages + compactions

    def _full_compaction_due(self) -> bool:
        """`full-compaction.delta-commits` = N: every N-th prepared commit of this writer compacts fully."""
        every = int(self.store.options.raw.get("full-compaction.delta-commits") or 0)
        return every > 0 and self._commits % every == 0

    def _auto_compact(self, partition: bytes, bucket: int, total: int, state: _BucketState) -> CommitMessage | None:
        """Compaction after a write when the bucket's sorted runs reach the trigger (unless write-only)."""
        store = self.store
        if not store.has_primary_key or store.options.write_only or self._slots > 1:
            return None
        dv_index = self._dv_indexes.get((partition, bucket))
        deletion_files = None
        if dv_index is not None and dv_index.dv_ranges:
            path = dv_index.external_path or store.paths.index_file(dv_index.file_name)
            by_name = {r.data_file_name: DeletionFile(path, r.offset, r.length, r.cardinality)
                       for r in dv_index.dv_ranges}
            deletion_files = tuple(by_name.get(f.file_name) for f in state.existing)
        full = self._full_compaction_due()
        task = CompactTask(partition, bucket, total, tuple(state.existing), full, deletion_files, dv_index)
        try:
            outcome = run_compact_task(store, task)
        except CommitConflictError:
            return None  # a concurrent compaction replaced (and an expiration deleted) files of the bucket: skip
        self._written_paths.extend(outcome.written_paths)
        message = outcome.message
        if message is None:
            return None
        gone = {f.file_name for f in message.compact_before}
        state.existing = [f for f in state.existing if f.file_name not in gone] + list(message.compact_after)
        if message.deleted_index_files or message.new_index_files:
            self._dv_indexes.pop((partition, bucket), None)
            for meta in message.new_index_files:
                self._dv_indexes[(partition, bucket)] = meta
        return message

    def abort(self) -> None:
        """Delete every file this writer wrote (nothing was committed)."""
        for path in self._written_paths:
            self.store.file_io.delete_quietly(path)
        self._written_paths.clear()
        self._buffer.clear()
        self._buckets.clear()

    @property
    def written_paths(self) -> list[str]:
        return list(self._written_paths)

    # ---- internals -----------------------------------------------------------------------
    def _adopt_schema(self, store: FileStore) -> None:
        """Merge mode: continue with an evolved schema; rows buffered so far take its columns."""
        self.store = store
        self._merge_spec = merge_spec(store.schema, table=store.identifier) if store.has_primary_key else None
        check_write_features(store.schema.options, table=store.identifier)
        self._buffer = [(conform_to(rows, store.schema), kinds) for rows, kinds in self._buffer]

    def _check_primary_key_nulls(self, rows: pa.Table) -> None:
        for k in self.store.schema.primary_keys:
            if rows.column(k).null_count:
                raise SchemaError(f"table {self.store.identifier!r}: primary key column {k!r} holds nulls")

    def _flush(self) -> None:
        if not self._buffer:
            return
        tables = [t for t, _ in self._buffer]
        rows = pa.concat_tables(tables) if len(tables) > 1 else tables[0]
        kinds: pa.Array | None = None
        if self.store.has_primary_key:
            parts = [k if k is not None else pa.array(np.zeros(t.num_rows, np.int8)) for t, k in self._buffer]
            kinds = pa.concat_arrays(parts) if len(parts) > 1 else parts[0]
        self._buffer.clear()
        self._buffer_bytes = 0
        rows = rows.combine_chunks()
        self._write_sorted(rows, kinds)

    def _write_sorted(self, rows: pa.Table, kinds: pa.Array | None) -> None:
        store = self.store
        n = rows.num_rows
        part_cols = list(store.schema.partition_keys)
        buckets = buckets_of(store, rows, part_cols, self._indexes, ignore_previous_files=self.ignore_previous_files,
                             shared=self._slots > 1)
        key_cols = [f.name for f in store.key_fields] if store.has_primary_key else []
        seq_cols = [c for c in store.options.sequence_fields if c not in key_cols] if store.has_primary_key else []
        for c in seq_cols:
            if c not in store.schema.field_names:
                raise OptionError(f"table {store.identifier!r}: option 'sequence.field' names unknown column {c!r}")
        group_code = group_codes(rows, part_cols, buckets)
        # keys, then sequence.field (nulls first, as Paimon's sort buffer), then input order
        key_arrays = [sortable(rows.column(c)) for c in key_cols] + [sequence_rank(rows.column(c)) for c in seq_cols]
        # rows by (partition, bucket) in input order (one radix sort for few buckets); each bucket's rows are then
        # sorted by key in its own job (in parallel): a row's position in its bucket's input order is its rank
        order = stable_sort_indices([group_code]) if group_code.min() != group_code.max() else np.arange(n)
        sorted_codes = group_code[order]
        bounds = np.flatnonzero(sorted_codes[:-1] != sorted_codes[1:]) + 1
        starts = np.concatenate([[0], bounds]).astype(np.int64)
        ends = np.concatenate([bounds, [n]]).astype(np.int64)
        partitions = partition_rows(store, rows, part_cols, order[starts])
        group_buckets = [int(b) for b in buckets[order[starts]]]
        self._restore(list(zip(partitions, group_buckets, strict=True)))
        jobs = []
        for partition, bucket, start, end in zip(partitions, group_buckets, starts, ends, strict=True):
            state = self._buckets[(partition, bucket)]
            jobs.append((partition, bucket, order[start:end], state.next_sequence))
            state.next_sequence += int(end - start)
            if state.base + state.next_sequence * self._slots > MAX_SEQUENCE:  # numpy int64 would wrap silently
                raise SchemaError(f"table {store.identifier!r}: the sequence numbers of bucket {bucket} would pass "
                                  f"{MAX_SEQUENCE}; rewrite the table (an overwrite numbers from 0)")

        def write_bucket(job: tuple[bytes, int, np.ndarray, int]) -> None:
            partition, bucket, in_input_order, first_sequence = job
            state = self._buckets[(partition, bucket)]
            if key_arrays:
                ranks = stable_sort_indices([k[in_input_order] for k in key_arrays])
                index = in_input_order[ranks]
            else:
                ranks, index = np.arange(len(in_input_order), dtype=np.int64), in_input_order
            # sequence numbers follow input order within each bucket (interleaved with other writers' slots)
            seqs = state.base + (first_sequence + ranks) * self._slots + self._slot
            keys = [k[index] for k in key_arrays[: len(key_cols)]]
            take = pa.array(index)
            in_order = len(index) == n and bool(np.all(index == np.arange(n)))
            slice_rows = rows if in_order else rows.take(take)
            slice_kinds = kinds.take(take) if kinds is not None else None
            if store.has_primary_key and store.options.changelog_producer == ChangelogProducer.INPUT:
                changelog = DataFileWriter(store, partition, bucket, prefix="changelog-")
                try:
                    state.changelog_files.extend(
                        changelog.write(slice_rows, sequence_numbers=seqs, kinds=slice_kinds)
                    )
                finally:
                    self._written_paths.extend(changelog.written_paths)
            if key_cols:
                merged = self._merge_buffer(slice_rows, slice_kinds, seqs, keys)
                if merged is not None:
                    slice_rows, slice_kinds, seqs = merged
            writer = DataFileWriter(store, partition, bucket)
            try:
                state.new_files.extend(writer.write(slice_rows, sequence_numbers=seqs, kinds=slice_kinds))
            finally:
                self._written_paths.extend(writer.written_paths)

        if len(jobs) == 1:
            write_bucket(jobs[0])
        else:  # buckets are independent: write them in parallel (pyarrow releases the GIL)
            run_all("write", write_bucket, jobs)

    def _merge_buffer(self, rows: pa.Table, kinds: pa.Array | None, seqs: np.ndarray,
                      keys: list[np.ndarray]) -> tuple[pa.Table, pa.Array, np.ndarray] | None:
        """Merge equal keys of one bucket's buffer (sorted by key, then sequence order) with the merge engine,
        keeping what later merges need (SortBufferWriteBuffer + ReducerMergeFunctionWrapper); None when no key
        repeats, so such buffers pay nothing."""
        if len(keys[0]) < 2 or last_of_runs(keys).all():
            return None
        if kinds is None:
            kinds = pa.array(np.zeros(rows.num_rows, dtype=np.int8))
        data = rows.append_column(SEQUENCE_NUMBER, pa.array(seqs, pa.int64())).append_column(VALUE_KIND, kinds)
        merged = merge_kv(data, schema=self.store.schema, options=self.store.options, drop_retractions=False,
                          seq_ordered=True, table=self.store.identifier, spec=self._merge_spec)
        out_seqs = merged.column(SEQUENCE_NUMBER).to_numpy()
        out_kinds = merged.column(VALUE_KIND).combine_chunks()
        return merged.drop_columns([SEQUENCE_NUMBER, VALUE_KIND]), out_kinds, out_seqs

    def _restore(self, keys: list[tuple[bytes, int]]) -> None:
        """Load max sequence numbers (and check bucket counts) for buckets seen the first time."""
        new = [k for k in keys if k not in self._buckets]
        if not new:
            return
        max_seq: dict[tuple[bytes, int], int] = {}
        existing: dict[tuple[bytes, int], list[DataFileMeta]] = {}
        if not self.ignore_previous_files:
            store = self.store
            wanted = {p for p, _ in new}
            snapshot, entries = store.snapshots.read_latest(
                lambda snap: (snap, store.manifests.live_files(snap, partition_ok=wanted.__contains__)))
            expected = store.options.bucket if store.bucket_mode == BucketMode.FIXED else -1
            for e in entries:
                if e.total_buckets != expected and store.bucket_mode == BucketMode.FIXED:
                    values = dict(zip(store.schema.partition_keys, store.decode_partition(e.partition), strict=True))
                    raise OptionError(
                        f"table {store.identifier!r}: partition {values or '(whole table)'} was written with "
                        f"{e.total_buckets} buckets but the option 'bucket' is now {expected}; rescale it "
                        "(maintenance.rescale or an overwrite) before appending"
                    )
                k = (e.partition, e.bucket)
                max_seq[k] = max(max_seq.get(k, -1), e.file.max_sequence_number)
                existing.setdefault(k, []).append(e.file)
            if store.has_primary_key and snapshot is not None and snapshot.index_manifest:
                for ie in store.manifests.read_index_manifest(snapshot.index_manifest):
                    key = (ie.partition, ie.bucket)
                    if ie.kind == FileKind.ADD and ie.index_file.index_type == DELETION_VECTORS and key in new:
                        self._dv_indexes[key] = ie.index_file
        for k in new:
            self._buckets[k] = _BucketState(base=max_seq.get(k, -1) + 1, existing=existing.get(k, []))
