"""Batch key lookup: the latest merged row of each of many primary keys, one read per bucket holding one.

The keys' buckets are computed as writers compute them (the bucket-key hash), so each split (partition, bucket)
reads only its own keys: files and Parquet row groups whose key statistics hold none of them are skipped, the key
columns are decoded first and the other columns only up to the last hit of a row group (data/probe_read.py), and
the split's rows of those keys are merged with the table's merge engine. The rows are those of a scan filtered on
the same keys (the same SplitReader reads them), found by a vectorized key set rather than an 'in' literal list.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from table_format.arrow_types import to_arrow_type
from table_format.bucket import bucket_of, hash_rows
from table_format.errors import SchemaError
from table_format.meta.snapshot import Snapshot
from table_format.options import BucketMode
from table_format.predicate.key_set import KeySet
from table_format.scan.planner import plan_splits
from table_format.scan.reader import SplitReader
from table_format.scan.split import DataSplit
from table_format.store.file_store import FileStore
from table_format.workers import worker_pool


def key_table(store: FileStore, keys: Any) -> pa.Table:
    """`keys` (a pyarrow Table / RecordBatch with the primary-key columns, or an array / list for a single-column
    key) as a table of the distinct keys, cast to the key types; rows with a null key are dropped."""
    pk = list(store.schema.primary_keys)
    where = f"table {store.identifier!r}"
    if not pk:
        raise SchemaError(f"{where}: lookup needs a primary-key table")
    if isinstance(keys, pa.RecordBatch):
        keys = pa.Table.from_batches([keys])
    if not isinstance(keys, pa.Table):
        if len(pk) > 1:
            raise SchemaError(f"{where}: its primary key is {pk}: pass the keys as a pyarrow Table with those columns")
        try:
            keys = pa.table({pk[0]: keys if isinstance(keys, (pa.Array, pa.ChunkedArray)) else pa.array(keys)})
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError) as e:
            raise SchemaError(f"{where}: keys must be a pyarrow Table, array or list of {pk[0]!r} values ({e})") \
                from None
    missing = [c for c in pk if c not in keys.column_names]
    if missing:
        raise SchemaError(f"{where}: the keys lack primary-key column(s) {missing} (primary key: {pk})")
    columns = []
    for c in pk:
        target = to_arrow_type(store.schema.field(c).type)
        try:
            columns.append(keys.column(c).cast(target))
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as e:
            raise SchemaError(f"{where}: key column {c!r} of type {keys.column(c).type} does not cast to "
                              f"{target} ({e})") from None
    table = pa.table(dict(zip(pk, columns, strict=True))).drop_null()
    return table.group_by(pk, use_threads=False).aggregate([]) if table.num_rows else table


def lookup(store: FileStore, snapshot: Snapshot | None, keys: Any, *,
           columns: Sequence[str] | None = None) -> pa.Table:
    """The merged row of every key of `keys` the table holds at `snapshot` (keys it lacks have no row), in no
    particular order; `columns` projects (default: all)."""
    wanted = key_table(store, keys)
    pk = list(store.schema.primary_keys)
    out_columns = list(columns) if columns is not None else store.schema.field_names
    read_columns = out_columns + [c for c in pk if c not in out_columns] if len(pk) > 1 else out_columns
    probe = SplitReader(store, columns=read_columns, predicate=None)  # validates the columns
    if not wanted.num_rows or snapshot is None:
        return _project(probe.output_schema.empty_table(), out_columns)
    splits = plan_splits(store, snapshot, KeySet.of(wanted))
    hashes = _bucket_hashes(store, wanted)
    key_names = [f.name for f in store.key_fields]

    def read(split: DataSplit) -> pa.Table | None:
        mine = wanted.filter(_in_split(store, wanted, split, hashes)) if len(splits) > 1 or hashes is not None \
            else wanted
        if not mine.num_rows:
            return None
        reader = SplitReader(store, columns=read_columns, predicate=KeySet.of(mine.select(key_names)))
        return reader.read(split)

    parts = [t for t in worker_pool("read").map(read, splits) if t is not None and t.num_rows]
    result = pa.concat_tables(parts) if parts else probe.output_schema.empty_table()
    if len(pk) > 1 and result.num_rows:  # the key set kept each column's values: keep the exact key tuples
        joined = result.join(wanted, keys=pk, join_type="left semi", use_threads=False)
        result = pa.Table.from_arrays([joined.column(c) for c in result.column_names], schema=result.schema)
    return _project(result, out_columns)


def _project(table: pa.Table, columns: list[str]) -> pa.Table:
    return table.select(columns) if table.column_names != columns else table


def _bucket_hashes(store: FileStore, wanted: pa.Table) -> np.ndarray | None:
    """The bucket-key hash of every key (fixed-bucket tables), else None (every split of a partition is read)."""
    if store.bucket_mode != BucketMode.FIXED:
        return None
    names = list(store.schema.bucket_keys)
    types = [store.schema.field(k).type for k in names]
    return hash_rows([wanted.column(k) for k in names], types)


def _in_split(store: FileStore, wanted: pa.Table, split: DataSplit, hashes: np.ndarray | None) -> pa.Array:
    """The mask of the keys that live in the split: its partition, and its bucket when buckets are fixed."""
    mask = np.ones(wanted.num_rows, dtype=bool)
    if hashes is not None and split.total_buckets > 0:
        mask &= bucket_of(hashes, split.total_buckets) == split.bucket
    if store.partition_fields:
        values = store.decode_partition(split.partition)
        for f, v in zip(store.partition_fields, values, strict=True):
            mask &= pc.equal(wanted.column(f.name), pa.scalar(v, wanted.column(f.name).type)) \
                .to_numpy(zero_copy_only=False)
    return pa.array(mask)
