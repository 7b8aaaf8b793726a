"""System tables (`table$snapshots`, `$schemas`, `$options`, `$files`, `$manifests`, `$partitions`,
`$buckets`, `$tags`) as Arrow tables, with Java Paimon's column names (org.apache.paimon.table.system.*).
"""

from __future__ import annotations

import datetime as dt
import json
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any

import pyarrow as pa

from table_format.data.file_format import format_of
from table_format.errors import SchemaError, TableFormatError
from table_format.io.paths import TAG_PREFIX
from table_format.meta.snapshot import tag_from_json
from table_format.partition_path import partition_value_string
from table_format.row.binary_row import decode_row
from table_format.schema import TableSchema
from table_format.store.file_store import FileStore
from table_format.types import BigIntType, CharType, DataType


def _millis(ms: int | None) -> dt.datetime | None:
    return None if ms is None else dt.datetime(1970, 1, 1) + dt.timedelta(milliseconds=ms)


def _java_string(value: Any, t: DataType) -> str:
    """String.valueOf of Paimon's internal value, as Java's system tables print it (DATE as epoch days,
    TIMESTAMP as LocalDateTime.toString, booleans as true/false, null as null)."""
    if value is None:
        return "null"
    try:
        text = partition_value_string(value, t)
    except (TableFormatError, TypeError):
        return str(value)
    return "null" if text is None else text


def _row_string(values: Sequence[Any], types: Sequence[DataType]) -> str:
    return "[" + ", ".join(_java_string(v, t) for v, t in zip(values, types, strict=True)) + "]"


def _stats_string(cols: Sequence[str], values: Sequence[Any], types: Sequence[DataType]) -> str:
    items = sorted(zip(cols, values, types, strict=True), key=lambda item: item[0])
    return "{" + ", ".join(f"{c}={_java_string(v, t)}" for c, v, t in items) + "}"


def _snapshots(store: FileStore) -> pa.Table:
    rows = [
        {
            "snapshot_id": s.id,
            "schema_id": s.schema_id,
            "commit_user": s.commit_user,
            "commit_identifier": s.commit_identifier,
            "commit_kind": s.commit_kind.value,
            "commit_time": _millis(s.time_millis),
            "base_manifest_list": s.base_manifest_list,
            "delta_manifest_list": s.delta_manifest_list,
            "changelog_manifest_list": s.changelog_manifest_list,
            "total_record_count": s.total_record_count,
            "delta_record_count": s.delta_record_count,
            "changelog_record_count": s.changelog_record_count,
            "watermark": s.watermark,
        }
        for s in store.snapshots.snapshots()
    ]
    schema = pa.schema([
        ("snapshot_id", pa.int64()), ("schema_id", pa.int64()), ("commit_user", pa.string()),
        ("commit_identifier", pa.int64()), ("commit_kind", pa.string()), ("commit_time", pa.timestamp("ms")),
        ("base_manifest_list", pa.string()), ("delta_manifest_list", pa.string()),
        ("changelog_manifest_list", pa.string()), ("total_record_count", pa.int64()),
        ("delta_record_count", pa.int64()), ("changelog_record_count", pa.int64()), ("watermark", pa.int64()),
    ])
    return pa.Table.from_pylist(rows, schema=schema)


def _schemas(store: FileStore) -> pa.Table:
    rows = [
        {
            "schema_id": s.id,
            "fields": json.dumps([f.to_json() for f in s.fields]),
            "partition_keys": json.dumps(list(s.partition_keys)),
            "primary_keys": json.dumps(list(s.primary_keys)),
            "options": json.dumps(dict(s.options)),
            "comment": s.comment,
            "update_time": _millis(s.time_millis),
        }
        for s in store.schemas.all()
    ]
    schema = pa.schema([
        ("schema_id", pa.int64()), ("fields", pa.string()), ("partition_keys", pa.string()),
        ("primary_keys", pa.string()), ("options", pa.string()), ("comment", pa.string()),
        ("update_time", pa.timestamp("ms")),
    ])
    return pa.Table.from_pylist(rows, schema=schema)


def _options(store: FileStore) -> pa.Table:
    items = sorted(store.schema.options.items())
    return pa.table({"key": pa.array([k for k, _ in items], pa.string()),
                     "value": pa.array([v for _, v in items], pa.string())})


def _live(store: FileStore) -> list[Any]:
    return store.manifests.live_files(store.snapshots.latest())


def _files(store: FileStore) -> pa.Table:
    rows = []
    key_types = store.key_types
    for e in _live(store):
        f = e.file
        file_schema = store.schema_by_id(f.schema_id)
        cols = list(f.value_stats_cols) if f.value_stats_cols is not None else file_schema.field_names
        types = [file_schema.field(c).type.copy(nullable=True) for c in cols]
        mins = list(decode_row(f.value_stats.min_values, types))
        maxs = list(decode_row(f.value_stats.max_values, types))
        nulls: list[int | None] = list(f.value_stats.null_counts)
        if file_schema.id != store.schema.id:
            cols, types, mins, maxs, nulls = _evolved_stats(store.schema, file_schema, f.row_count,
                                                            (cols, mins, maxs, nulls))
        rows.append({
            "partition": _row_string(store.decode_partition(e.partition), store.partition_types),
            "bucket": e.bucket,
            "file_path": store.data_file_path(e.partition, e.bucket, f.file_name, f.external_path),
            "file_format": format_of(f.file_name),
            "schema_id": f.schema_id,
            "level": f.level,
            "record_count": f.row_count,
            "file_size_in_bytes": f.file_size,
            "min_key": _row_string(decode_row(f.min_key, key_types), key_types) if key_types else None,
            "max_key": _row_string(decode_row(f.max_key, key_types), key_types) if key_types else None,
            "null_value_counts": _stats_string(cols, nulls, [BigIntType()] * len(cols)),
            "min_value_stats": _stats_string(cols, mins, types),
            "max_value_stats": _stats_string(cols, maxs, types),
            "min_sequence_number": f.min_sequence_number,
            "max_sequence_number": f.max_sequence_number,
            "creation_time": _millis(f.creation_time),
        })
    schema = pa.schema([
        ("partition", pa.string()), ("bucket", pa.int32()), ("file_path", pa.string()),
        ("file_format", pa.string()), ("schema_id", pa.int64()), ("level", pa.int32()),
        ("record_count", pa.int64()), ("file_size_in_bytes", pa.int64()), ("min_key", pa.string()),
        ("max_key", pa.string()), ("null_value_counts", pa.string()), ("min_value_stats", pa.string()),
        ("max_value_stats", pa.string()), ("min_sequence_number", pa.int64()), ("max_sequence_number", pa.int64()),
        ("creation_time", pa.timestamp("ms")),
    ])
    return pa.Table.from_pylist(rows, schema=schema)


def _evolved_stats(schema: TableSchema, file_schema: TableSchema, row_count: int,
                   stats: tuple[list[str], list[Any], list[Any], list[int | None]]) -> tuple[
                       list[str], list[DataType], list[Any], list[Any], list[int | None]]:
    """A file's stats under the current schema, by field id, as Java's FilesTable shows them: current names and
    types, dropped columns left out, columns added later null in every row."""
    cols, mins, maxs, nulls = stats
    by_id = {x.id: x.name for x in file_schema.fields}
    names: list[str] = []
    types: list[DataType] = []
    lows: list[Any] = []
    highs: list[Any] = []
    counts: list[int | None] = []
    for x in schema.fields:
        old = by_id.get(x.id)
        count: int | None
        if old is None:
            low, high, count = None, None, row_count
        elif old in cols:
            i = cols.index(old)
            low, high, count = mins[i], maxs[i], nulls[i] if i < len(nulls) else None
        else:
            continue
        if isinstance(x.type, CharType):  # a widened CHAR reads padded (CastExecutors)
            low, high = (v if v is None else v.ljust(x.type.length) for v in (low, high))
        names.append(x.name)
        types.append(x.type.copy(nullable=True))
        lows.append(low)
        highs.append(high)
        counts.append(count)
    return names, types, lows, highs, counts


def _manifests(store: FileStore) -> pa.Table:
    snap = store.snapshots.latest()
    metas = store.manifests.data_manifests(snap) if snap else []
    return pa.table({
        "file_name": pa.array([m.file_name for m in metas], pa.string()),
        "file_size": pa.array([m.file_size for m in metas], pa.int64()),
        "num_added_files": pa.array([m.num_added_files for m in metas], pa.int64()),
        "num_deleted_files": pa.array([m.num_deleted_files for m in metas], pa.int64()),
        "schema_id": pa.array([m.schema_id for m in metas], pa.int64()),
    })


def _grouped(store: FileStore, by_bucket: bool) -> pa.Table:
    acc: dict[tuple[bytes, int], list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for e in _live(store):
        a = acc[(e.partition, e.bucket if by_bucket else 0)]
        a[0] += e.file.row_count
        a[1] += e.file.file_size
        a[2] += 1
        a[3] = max(a[3], e.file.creation_time or 0)
    items = sorted(acc.items())
    cols: dict[str, pa.Array] = {
        "partition": pa.array(
            [_row_string(store.decode_partition(p), store.partition_types) for (p, _), _ in items], pa.string()
        )
    }
    if by_bucket:
        cols["bucket"] = pa.array([b for (_, b), _ in items], pa.int32())
    cols["record_count"] = pa.array([a[0] for _, a in items], pa.int64())
    cols["file_size_in_bytes"] = pa.array([a[1] for _, a in items], pa.int64())
    cols["file_count"] = pa.array([a[2] for _, a in items], pa.int64())
    cols["last_update_time"] = pa.array([_millis(a[3]) for _, a in items], pa.timestamp("ms"))
    return pa.table(cols)


def _tags(store: FileStore) -> pa.Table:
    rows = []
    for st in sorted(store.file_io.list_dir(store.paths.tag_dir), key=lambda s: s.name):
        if not st.name.startswith(TAG_PREFIX):
            continue
        tag = tag_from_json(store.file_io.read_bytes(st.path), source=st.path)
        rows.append({
            "tag_name": st.name[len(TAG_PREFIX):],
            "snapshot_id": tag.snapshot.id,
            "schema_id": tag.snapshot.schema_id,
            "commit_time": _millis(tag.snapshot.time_millis),
            "record_count": tag.snapshot.total_record_count,
        })
    schema = pa.schema([("tag_name", pa.string()), ("snapshot_id", pa.int64()), ("schema_id", pa.int64()),
                        ("commit_time", pa.timestamp("ms")), ("record_count", pa.int64())])
    return pa.Table.from_pylist(rows, schema=schema)


SYSTEM_TABLES: dict[str, Callable[[FileStore], pa.Table]] = {
    "snapshots": _snapshots,
    "schemas": _schemas,
    "options": _options,
    "files": _files,
    "manifests": _manifests,
    "partitions": lambda s: _grouped(s, by_bucket=False),
    "buckets": lambda s: _grouped(s, by_bucket=True),
    "tags": _tags,
}


def system_table(store: FileStore, name: str) -> pa.Table:
    fn = SYSTEM_TABLES.get(name)
    if fn is None:
        raise SchemaError(f"table {store.identifier!r}: unknown system table {name!r}; one of {sorted(SYSTEM_TABLES)}")
    return fn(store)
