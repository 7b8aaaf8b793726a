"""Helpers of the reliability suites: table kinds, row builders, and checks written independently of the product.

`referenced_files(table)` opens every snapshot and tag file itself and lists, relative to the table directory,
everything a reader of some snapshot or tag needs: manifest lists, manifests, live data files (+ extra files),
changelog files, index manifests, index files. `missing_files` reports those that are not on disk.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import Any

import pyarrow as pa

from table_format import FileSystemCatalog, Table
from table_format.meta.manifest import FileKind, merge_entries
from table_format.meta.snapshot import Snapshot, tag_from_json

# ---- table kinds ---------------------------------------------------------------------------------------------------

SCHEMA = pa.schema([("id", pa.int64(), False), ("w", pa.int64()), ("v", pa.string())])
PSCHEMA = pa.schema([("dt", pa.string(), False), ("id", pa.int64(), False), ("w", pa.int64()), ("v", pa.string())])

KINDS: dict[str, dict[str, Any]] = {
    "append-unaware": {"schema": SCHEMA},
    "append-fixed": {"schema": SCHEMA, "options": {"bucket": "3", "bucket-key": "id"}},
    "pk-fixed": {"schema": SCHEMA, "primary_keys": ["id"],
                 "options": {"bucket": "2", "num-sorted-run.compaction-trigger": "3"}},
    "pk-fixed-write-only": {"schema": SCHEMA, "primary_keys": ["id"], "options": {"bucket": "2", "write-only": "true"}},
    "pk-dynamic": {"schema": SCHEMA, "primary_keys": ["id"],
                   "options": {"bucket": "-1", "dynamic-bucket.target-row-num": "50"}},
    "partitioned": {"schema": PSCHEMA, "primary_keys": ["dt", "id"], "partition_keys": ["dt"],
                    "options": {"bucket": "2", "num-sorted-run.compaction-trigger": "3"}},
    "append-partitioned": {"schema": PSCHEMA, "partition_keys": ["dt"]},
}
PARTITIONS = ("a", "b", "c")


def is_pk(kind: str) -> bool:
    return bool(KINDS[kind].get("primary_keys"))


def is_partitioned(kind: str) -> bool:
    return bool(KINDS[kind].get("partition_keys"))


def create(warehouse: str, kind: str, name: str = "t", *, extra_options: Mapping[str, str] | None = None,
           **catalog_kw: Any) -> Table:
    spec = KINDS[kind]
    catalog = FileSystemCatalog(warehouse, **catalog_kw)
    catalog.create_database("db", exist_ok=True)
    return catalog.create_table(
        f"db.{name}", spec["schema"], primary_keys=spec.get("primary_keys", ()),
        partition_keys=spec.get("partition_keys", ()), options={**spec.get("options", {}), **(extra_options or {})},
    )


def rows(kind: str, ids: Iterable[int], w: int, v: str = "", *, dt: str | None = None,
         row_kind: str | None = None) -> pa.Table:
    """Rows of `kind`'s schema; partitioned kinds put id in partition PARTITIONS[id % 3] unless `dt` is given."""
    ids = list(ids)
    cols: dict[str, Any] = {}
    if is_partitioned(kind):
        cols["dt"] = [dt if dt is not None else PARTITIONS[i % len(PARTITIONS)] for i in ids]
    cols["id"] = pa.array(ids, pa.int64())
    cols["w"] = pa.array([w] * len(ids), pa.int64())
    cols["v"] = [f"{v}{i}" for i in ids]
    table = pa.table(cols, schema=KINDS[kind]["schema"])
    if row_kind is not None:
        table = table.append_column("_row_kind", pa.array([row_kind] * len(ids), pa.string()))
    return table


def key_of(kind: str, r: Mapping[str, Any]) -> tuple[Any, ...]:
    return (r["dt"], r["id"]) if is_partitioned(kind) else (r["id"],)


def read_rows(table: Table, snapshot_id: int | None = None) -> list[tuple[Any, ...]]:
    """All rows of the latest (or a given) snapshot as sorted tuples in schema order."""
    data = table.scan(snapshot_id=snapshot_id).to_arrow()
    names = data.column_names
    return sorted(tuple(r[n] for n in names) for r in data.to_pylist())


def row_tuples(kind: str, model: Mapping[tuple[Any, ...], Mapping[str, Any]] | Iterable[Mapping[str, Any]]
               ) -> list[tuple[Any, ...]]:
    names = KINDS[kind]["schema"].names
    values = model.values() if isinstance(model, Mapping) else model
    return sorted(tuple(r[n] for n in names) for r in values)


def reload(table: Table, **catalog_kw: Any) -> Table:
    """The same table through a fresh catalog (no caches)."""
    warehouse = os.path.dirname(os.path.dirname(table.path))
    return FileSystemCatalog(warehouse, **catalog_kw).load_table(table.identifier)


# ---- what the table references ---------------------------------------------------------------------------------------


def _snapshot_sources(table: Table) -> list[tuple[str, Snapshot, bool]]:
    out = []
    for sub, prefix, is_tag in (("snapshot", "snapshot-", False), ("tag", "tag-", True)):
        d = os.path.join(table.path, sub)
        if not os.path.isdir(d):
            continue
        for name in sorted(os.listdir(d)):
            if name.startswith(prefix) and not name.startswith("."):
                with open(os.path.join(d, name), "rb") as f:
                    data = f.read()
                snap = tag_from_json(data).snapshot if is_tag else Snapshot.from_json(data)
                out.append((f"{sub}/{name}", snap, is_tag))
    return out


def referenced_files(table: Table) -> set[str]:
    """Files (relative to the table) a reader of any snapshot or tag needs; raises if a manifest is unreadable."""
    store = table.store
    needed: set[str] = set()
    for rel, snap, is_tag in _snapshot_sources(table):
        needed.add(rel)
        entries = []
        for name in (snap.base_manifest_list, snap.delta_manifest_list):
            needed.add(f"manifest/{name}")
            if not os.path.exists(os.path.join(table.path, "manifest", name)):
                continue
            for meta in store.manifests.read_manifest_list(name):
                needed.add(f"manifest/{meta.file_name}")
                if os.path.exists(os.path.join(table.path, "manifest", meta.file_name)):
                    entries.extend(store.manifests.read_manifest(meta.file_name))
        for e in merge_entries(entries):
            if e.kind != FileKind.ADD:
                continue
            bucket_dir = os.path.relpath(store.paths.bucket_dir(store.partition_path(e.partition), e.bucket),
                                         table.path)
            needed.add(f"{bucket_dir}/{e.file.file_name}")
            needed.update(f"{bucket_dir}/{x}" for x in e.file.extra_files)
        if snap.changelog_manifest_list and not is_tag:
            needed.add(f"manifest/{snap.changelog_manifest_list}")
            if os.path.exists(os.path.join(table.path, "manifest", snap.changelog_manifest_list)):
                for meta in store.manifests.read_manifest_list(snap.changelog_manifest_list):
                    needed.add(f"manifest/{meta.file_name}")
                    for e in store.manifests.read_manifest(meta.file_name):
                        bucket_dir = os.path.relpath(
                            store.paths.bucket_dir(store.partition_path(e.partition), e.bucket), table.path)
                        needed.add(f"{bucket_dir}/{e.file.file_name}")
        if snap.index_manifest:
            needed.add(f"manifest/{snap.index_manifest}")
            if os.path.exists(os.path.join(table.path, "manifest", snap.index_manifest)):
                for ie in store.manifests.read_index_manifest(snap.index_manifest):
                    needed.add(f"index/{ie.index_file.file_name}")
    return needed


def missing_files(table: Table) -> list[str]:
    """Files some snapshot or tag needs that are not on disk (must always be empty)."""
    fresh = reload(table)
    return sorted(p for p in referenced_files(fresh) if not os.path.exists(os.path.join(table.path, p)))


def tree(path: str) -> dict[str, int]:
    """Every file below `path` (relative) with its size; hidden temp files included."""
    out = {}
    for dirpath, _, names in os.walk(path):
        for n in names:
            full = os.path.join(dirpath, n)
            out[os.path.relpath(full, path)] = os.path.getsize(full)
    return out


def snapshot_state(table: Table) -> dict[str, bytes]:
    """The snapshot/ and tag/ directories' snapshot files with their bytes (hints excluded)."""
    out = {}
    for sub, prefix in (("snapshot", "snapshot-"), ("tag", "tag-"), ("schema", "schema-")):
        d = os.path.join(table.path, sub)
        if os.path.isdir(d):
            for name in os.listdir(d):
                if name.startswith(prefix):
                    with open(os.path.join(d, name), "rb") as f:
                        out[f"{sub}/{name}"] = f.read()
    return out


def visible_data_files(table: Table) -> set[str]:
    """Data files referenced by the latest snapshot (what a reader would open)."""
    fresh = reload(table)
    snap = fresh.latest_snapshot()
    out = set()
    for e in fresh.store.manifests.live_files(snap):
        out.add(os.path.relpath(fresh.store.data_file_path(e.partition, e.bucket, e.file.file_name), table.path))
    return out


def read_bytes(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def read_text(path: str) -> str:
    with open(path) as f:
        return f.read()
