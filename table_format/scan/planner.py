"""Scan planning: snapshot -> manifests -> live files -> pruned -> one DataSplit per (partition, bucket).

Mirrors AbstractFileStoreScan / KeyValueFileStoreScan / AppendOnlyFileStoreScan: manifests are
skipped by their partition stats, entries by partition values, by bucket (when the filter pins
every bucket key) and by min/max stats (value stats for append tables; key stats for primary-key
tables, where value stats of a file say nothing about the merged row).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np

from table_format.bucket import bucket_of, hash_row
from table_format.data.deletion_vector import DeletionFile, deletion_files_of
from table_format.meta.manifest import DataFileMeta, ManifestEntry, ManifestFileMeta, SimpleStats
from table_format.meta.snapshot import Snapshot
from table_format.predicate import Predicate, equality_values
from table_format.row.binary_row import decode_row, row_decoder
from table_format.scan.file_index_filter import FileIndexFilter
from table_format.scan.split import DataSplit
from table_format.store.file_store import FileStore
from table_format.types import CharType, DataType


def _stats_maps(
    stats: SimpleStats, names: list[str], types: list[DataType]
) -> tuple[dict[str, Any], dict[str, Any], dict[str, int | None]]:
    nullable = [t.copy(nullable=True) for t in types]
    mins = decode_row(stats.min_values, nullable)
    maxs = decode_row(stats.max_values, nullable)
    counts = list(stats.null_counts) + [None] * (len(names) - len(stats.null_counts))
    return dict(zip(names, mins, strict=True)), dict(zip(names, maxs, strict=True)), dict(zip(names, counts, strict=False))


class ScanPlanner:
    def __init__(self, store: FileStore, predicate: Predicate | None) -> None:
        self.store = store
        self.predicate = predicate
        schema = store.schema
        part_names = list(schema.partition_keys)
        self.partition_predicate = predicate.project(part_names) if predicate and part_names else None
        key_names = list(schema.trimmed_primary_keys)
        if store.has_primary_key:
            self.stats_predicate = predicate.project(key_names) if predicate and key_names else None
        else:
            self.stats_predicate = predicate
        self._partition_ok: dict[bytes, bool] = {}
        self._bucket_sets: dict[int, set[int] | None] = {}
        self._may_prune_buckets = predicate is not None and bool(schema.bucket_keys)
        self._key_decoder = row_decoder(store.key_types if store.has_primary_key else [])
        self.file_index = FileIndexFilter(store, predicate)
        # primary-key tables: the key part of the filter drops files by their index in any split (see
        # scan/file_index_filter.py); the whole filter only where the rows read are final
        self._index_key_predicate = self.file_index.project(key_names) if store.has_primary_key else None

    # ---- filters -------------------------------------------------------------------------
    def _manifest_ok(self, m: ManifestFileMeta) -> bool:
        if self.partition_predicate is None:
            return True
        names = list(self.store.schema.partition_keys)
        try:
            mins, maxs, nulls = _stats_maps(m.partition_stats, names, self.store.partition_types)
        except Exception:  # unreadable stats never hide data
            return True
        return self.partition_predicate.test_stats(mins, maxs, nulls, m.num_added_files + m.num_deleted_files)

    def _partition_matches(self, partition: bytes) -> bool:
        ok = self._partition_ok.get(partition)
        if ok is None:
            values = dict(zip(self.store.schema.partition_keys, self.store.decode_partition(partition), strict=True))
            ok = self.partition_predicate.test_row(values) if self.partition_predicate else True
            self._partition_ok[partition] = ok
        return ok

    def _buckets_for(self, total_buckets: int) -> set[int] | None:
        if total_buckets in self._bucket_sets:
            return self._bucket_sets[total_buckets]
        result: set[int] | None = None
        keys = list(self.store.schema.bucket_keys)
        if self.predicate is not None and keys and total_buckets > 0:
            combos = equality_values(self.predicate, keys)
            if combos is not None:
                types = [self.store.schema.field(k).type for k in keys]
                hashes = np.array([hash_row(list(c), types) for c in combos], dtype=np.int32)
                result = {int(b) for b in bucket_of(hashes, total_buckets)}
        self._bucket_sets[total_buckets] = result
        return result

    def _file_ok(self, f: DataFileMeta) -> bool:
        pred = self.stats_predicate
        if pred is None:
            return True
        store = self.store
        try:
            if store.has_primary_key:
                names = [x.name for x in store.key_fields]
                mins, maxs, nulls = _stats_maps(f.key_stats, names, store.key_types)
            else:
                file_schema = store.schema_by_id(f.schema_id)
                fields = (
                    [file_schema.field(c) for c in f.value_stats_cols]
                    if f.value_stats_cols is not None
                    else list(file_schema.fields)
                )
                # stats are by the file's schema: map them to the current columns by field id
                by_id = {x.id: x.name for x in store.schema.fields}
                names = [by_id.get(x.id, "\0" + x.name) for x in fields]
                mins, maxs, nulls = _stats_maps(f.value_stats, names, [x.type for x in fields])
                if file_schema.id != store.schema.id:
                    in_file = {x.id: x.type for x in file_schema.fields}
                    for x in store.schema.fields:
                        if x.id not in in_file:  # added after the file was written: all null
                            nulls[x.name] = f.row_count
                        elif isinstance(x.type, CharType) and in_file[x.id] != x.type:  # values read padded
                            mins.pop(x.name, None)
                            maxs.pop(x.name, None)
        except Exception:  # unknown stats layout: keep the file
            return True
        return pred.test_stats(mins, maxs, nulls, f.row_count)

    # ---- planning ------------------------------------------------------------------------
    def plan(self, snapshot: Snapshot | None) -> list[DataSplit]:
        if snapshot is None:
            return []
        store = self.store
        live = store.manifests.live_files(
            snapshot,
            manifest_filter=self._manifest_ok,
            partition_ok=self._partition_matches if self.partition_predicate is not None else None,
            buckets_for=self._buckets_for if self._may_prune_buckets else None,
        )
        dv_mode = store.has_primary_key and store.options.deletion_vectors_enabled
        # CoreOptions.batchScanSkipLevel0: deletion vectors hide level-0 files from batch reads. Java 0.9 hides them
        # for first-row too (rows show up only after a compaction); we merge them instead, so first-row rows are
        # visible at once (issue 3) and equal what Java shows once it has compacted.
        skip_level0 = dv_mode
        deletion_files = self._deletion_files(snapshot)
        grouped: dict[tuple[bytes, int], list[ManifestEntry]] = defaultdict(list)
        for e in live:
            if skip_level0 and e.file.level == 0:
                continue
            grouped[(e.partition, e.bucket)].append(e)
        splits = []
        for (partition, bucket), entries in sorted(grouped.items(), key=lambda kv: (kv[0][0], kv[0][1])):
            files = [e.file for e in entries if self._file_ok(e.file)]
            files = self._index_pruned(partition, bucket, files, dv_mode)
            if not files:
                continue
            files.sort(key=lambda f: (f.level, f.min_sequence_number, f.file_name))
            dvs = tuple(deletion_files.get((partition, bucket, f.file_name)) for f in files)
            splits.append(
                DataSplit(
                    snapshot_id=snapshot.id,
                    partition=partition,
                    bucket=bucket,
                    total_buckets=entries[0].total_buckets,
                    files=tuple(files),
                    raw_convertible=dv_mode or self._raw_convertible(files),
                    deletion_files=dvs if any(d is not None for d in dvs) else None,
                    schema_id=store.schema.id,
                )
            )
        return splits

    def _index_pruned(self, partition: bytes, bucket: int, files: list[DataFileMeta],
                      dv_mode: bool) -> list[DataFileMeta]:
        index = self.file_index
        if index.predicate is None or not files:
            return files
        if not self.store.has_primary_key:
            return index.keep(partition, bucket, files, index.predicate)
        files = index.keep(partition, bucket, files, self._index_key_predicate)
        if files and index.predicate != self._index_key_predicate and (dv_mode or self._raw_convertible(files)):
            files = index.keep(partition, bucket, files, index.predicate)
        return files

    def _deletion_files(self, snapshot: Snapshot) -> dict[tuple[bytes, int, str], DeletionFile]:
        return deletion_files_of(self.store, snapshot)

    def _raw_convertible(self, files: list[DataFileMeta]) -> bool:
        """True when no key appears twice across the files and no row is a retraction."""
        store = self.store
        if not store.has_primary_key:
            return True
        if any(f.delete_row_count is None or f.delete_row_count > 0 for f in files):
            return False
        if len(files) == 1:
            return True
        decode = self._key_decoder
        ranges = sorted((decode(f.min_key), decode(f.max_key)) for f in files)
        return all(prev[1] < nxt[0] for prev, nxt in zip(ranges, ranges[1:], strict=False))


def plan_splits(store: FileStore, snapshot: Snapshot | None, predicate: Predicate | None) -> list[DataSplit]:
    return ScanPlanner(store, predicate).plan(snapshot)
