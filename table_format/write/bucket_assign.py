"""Where written rows go: the bucket of every row and the (partition, bucket) groups TableWrite sorts into.

Fixed buckets hash the bucket key (KeyAndBucketExtractor), dynamic buckets ask each partition's HASH index
(write/dynamic_bucket.py), bucket-unaware tables put every row in bucket 0. Rows are grouped by one int64
code per (partition, bucket), ordered by partition then bucket; a group's partition is its BinaryRow bytes.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa

from table_format.bucket import bucket_of, hash_rows
from table_format.errors import OptionError
from table_format.options import BucketMode
from table_format.row.binary_row import encode_row
from table_format.row.sort import sortable, stable_sort_indices
from table_format.store.file_store import FileStore
from table_format.write.dynamic_bucket import PartitionIndex, load_partition_index


def buckets_of(store: FileStore, rows: pa.Table, part_cols: list[str], indexes: dict[bytes, PartitionIndex], *,
               ignore_previous_files: bool, shared: bool = False) -> np.ndarray:
    """The bucket of every row; dynamic mode loads a partition's index into `indexes` the first time it is seen
    (an empty one with `ignore_previous_files`). `shared`: other writers of this commit may hold the same new keys,
    so new keys go to buckets chosen by their hash alone (PartitionIndex.shared)."""
    if store.bucket_mode == BucketMode.DYNAMIC:
        return _dynamic_buckets(store, rows, part_cols, indexes, ignore_previous_files=ignore_previous_files,
                                shared=shared)
    if store.bucket_mode == BucketMode.FIXED:
        keys = store.schema.bucket_keys
        if not keys:
            raise OptionError(
                f"table {store.identifier!r}: option 'bucket' = {store.options.bucket} on a table without "
                "primary key needs the option 'bucket-key'"
            )
        types = [store.schema.field(k).type for k in keys]
        hashes = hash_rows([rows.column(k) for k in keys], types)
        return bucket_of(hashes, store.options.bucket).astype(np.int32)
    return np.zeros(rows.num_rows, dtype=np.int32)


def group_codes(rows: pa.Table, part_cols: list[str], buckets: np.ndarray) -> np.ndarray:
    """One int64 per row identifying its (partition, bucket), ordered by partition then bucket."""
    code = buckets.astype(np.int64)
    if part_cols:
        part = stable_sort_indices([sortable(rows.column(c)) for c in part_cols])
        sorted_parts = [sortable(rows.column(c))[part] for c in part_cols]
        first = np.concatenate([[True], np.zeros(max(0, len(part) - 1), dtype=bool)])
        for k in sorted_parts:
            first[1:] |= k[1:] != k[:-1]
        dense = np.empty(len(part), dtype=np.int64)
        dense[part] = np.cumsum(first) - 1
        code = dense * (int(buckets.max(initial=0)) + 1) + code
    return code


def partition_rows(store: FileStore, rows: pa.Table, part_cols: Sequence[str], starts: np.ndarray) -> list[bytes]:
    """The serialized partition BinaryRow of the rows at positions `starts`."""
    if not part_cols:
        return [encode_row([], [])] * len(starts)
    firsts = rows.select(part_cols).take(pa.array(starts)).to_pylist()
    types = store.partition_types
    return [encode_row([r[c] for c in part_cols], types) for r in firsts]


def _dynamic_buckets(store: FileStore, rows: pa.Table, part_cols: list[str], indexes: dict[bytes, PartitionIndex], *,
                     ignore_previous_files: bool, shared: bool) -> np.ndarray:
    """Buckets from each partition's HASH index (HashBucketAssigner), new keys dealt to non-full buckets."""
    key_hashes = hash_rows([rows.column(f.name) for f in store.key_fields], store.key_types)
    codes = group_codes(rows, part_cols, np.zeros(rows.num_rows, dtype=np.int32))
    order = np.argsort(codes, kind="stable")
    starts = np.flatnonzero(np.concatenate([[True], codes[order][1:] != codes[order][:-1]]))
    ends = np.concatenate([starts[1:], [len(order)]])
    partitions = partition_rows(store, rows, part_cols, order[starts])
    buckets = np.empty(rows.num_rows, dtype=np.int32)
    for partition, start, end in zip(partitions, starts, ends, strict=True):
        index = indexes.get(partition)
        if index is None:
            index = PartitionIndex({}, {}) if ignore_previous_files else load_partition_index(store, partition)
            index.shared = shared
            indexes[partition] = index
        rows_of = order[start:end]
        buckets[rows_of] = index.assign(
            key_hashes[rows_of],
            target_rows=store.options.dynamic_bucket_target_row_num,
            max_buckets=store.options.dynamic_bucket_max_buckets,
        )
    return buckets
