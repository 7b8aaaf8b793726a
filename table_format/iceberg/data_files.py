"""A Paimon snapshot's live data files as Iceberg `data_file` records: paths, partition values, column bounds."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from table_format.iceberg.types import PartitionField, avro_value, iceberg_type, single_value
from table_format.meta.manifest import FileKind, ManifestEntry
from table_format.meta.snapshot import Snapshot
from table_format.row.binary_row import decode_row
from table_format.store.file_store import FileStore


def visible(store: FileStore, entries: list[ManifestEntry]) -> list[ManifestEntry]:
    """The files an Iceberg reader may see: all of an append table's, a primary-key table's highest level only."""
    if not store.has_primary_key:
        return entries
    top = store.options.num_levels - 1
    return [e for e in entries if e.file.level == top]


def delta_since(store: FileStore, previous_id: int, snapshot: Snapshot
                ) -> tuple[list[ManifestEntry], list[ManifestEntry]] | None:
    """(added, removed) visible files from snapshot `previous_id` to `snapshot`, folded over the deltas in between;
    None when one of those snapshots is gone (expired, rolled back): then only the full file list can tell."""
    if previous_id >= snapshot.id:
        return None
    ids = range(previous_id + 1, snapshot.id + 1)
    if not all(store.snapshots.exists(i) for i in ids):
        return None
    entries: list[ManifestEntry] = []
    for i in ids:
        s = snapshot if i == snapshot.id else store.snapshots.snapshot(i)
        entries.extend(store.manifests.read_entries(
            store.manifests.read_manifest_list(s.delta_manifest_list, size=s.delta_manifest_list_size)))
    net: dict[tuple[bytes, int, int, str], ManifestEntry] = {}
    for e in entries:
        key = (e.partition, e.bucket, e.file.level, e.file.file_name)
        if key in net and net[key].kind != e.kind:
            del net[key]  # added and removed again in between
        else:
            net[key] = e
    folded = visible(store, list(net.values()))
    return ([e for e in folded if e.kind == FileKind.ADD], [e for e in folded if e.kind == FileKind.DELETE])


def file_uri(store: FileStore, e: ManifestEntry) -> str:
    path = store.data_file_path(e.partition, e.bucket, e.file.file_name, e.file.external_path)
    return path if store.file_io.local else store.file_io.uri(path)


def _bounds(store: FileStore, entry: ManifestEntry, cache: dict[int, Any]) -> tuple[list, list, list]:
    f = entry.file
    if f.schema_id not in cache:
        schema = store.schema_by_id(f.schema_id)
        cache[f.schema_id] = {x.name: x for x in schema.fields}
    fields = cache[f.schema_id]
    names = list(f.value_stats_cols) if f.value_stats_cols is not None else list(fields)
    stat_fields = [fields[n] for n in names if n in fields]
    if len(stat_fields) != len(names):
        return [], [], []
    types = [x.type.copy(nullable=True) for x in stat_fields]
    try:
        mins = decode_row(f.value_stats.min_values, types) if f.value_stats.min_values else [None] * len(types)
        maxs = decode_row(f.value_stats.max_values, types) if f.value_stats.max_values else [None] * len(types)
    except Exception:  # stats of a type we cannot decode: no bounds rather than wrong ones
        return [], [], []
    nulls, lower, upper = [], [], []
    counts = list(f.value_stats.null_counts) + [None] * len(stat_fields)
    for field, lo, hi, n in zip(stat_fields, mins, maxs, counts, strict=False):
        type_name = iceberg_type(field.type, table=store.identifier, column=field.name)
        if n is not None:
            nulls.append({"key": field.id, "value": int(n)})
        if type_name in ("float", "double"):
            continue  # NaN handling differs; Iceberg readers then simply do not prune on these
        if lo is not None:
            lower.append({"key": field.id, "value": single_value(type_name, lo)})
        if hi is not None:
            upper.append({"key": field.id, "value": single_value(type_name, hi)})
    return nulls, lower, upper


def data_file_records(store: FileStore, entries: Sequence[ManifestEntry], partition: Sequence[PartitionField]
                      ) -> dict[str, dict[str, Any]]:
    """Path URI -> Iceberg data_file record of each entry."""
    cache: dict[int, Any] = {}
    decoded: dict[bytes, dict[str, Any]] = {}
    out: dict[str, dict[str, Any]] = {}
    for e in entries:
        if e.partition not in decoded:
            values = store.decode_partition(e.partition) if partition else ()
            decoded[e.partition] = {p.name: avro_value(p.type_name, v) for p, v in zip(partition, values, strict=True)}
        uri = file_uri(store, e)
        nulls, lower, upper = _bounds(store, e, cache)
        fmt = e.file.file_name.rsplit(".", 1)[-1].lower()
        out[uri] = {
            "content": 0, "file_path": uri, "file_format": fmt if fmt in ("parquet", "orc", "avro") else "parquet",
            "partition": decoded[e.partition], "record_count": e.file.row_count, "file_size_in_bytes": e.file.file_size,
            "null_value_counts": nulls or None, "lower_bounds": lower or None, "upper_bounds": upper or None,
        }
    return out


def partition_summaries(files: Sequence[dict[str, Any]], partition: Sequence[PartitionField]
                        ) -> list[dict[str, Any]] | None:
    """Per partition field: contains_null and the lower/upper bound over the files (manifest-list pruning)."""
    if not partition:
        return None
    summaries = []
    for p in partition:
        values = [f["partition"][p.name] for f in files]
        present = [v for v in values if v is not None]
        summaries.append({
            "contains_null": len(present) < len(values), "contains_nan": False,
            "lower_bound": single_value(p.type_name, min(present)) if present else None,
            "upper_bound": single_value(p.type_name, max(present)) if present else None,
        })
    return summaries
