"""Iceberg metadata for a Paimon table's latest snapshot, as Java Paimon 1.0+ writes it in a commit callback.

``sync_iceberg(store)`` makes ``<metadata dir>/v<N>.metadata.json`` + ``version-hint.text`` describe snapshot N, the
latest Paimon snapshot (Iceberg snapshot ids and sequence numbers are Paimon's snapshot ids, so time travel by id
means the same on both sides). Incremental: the data files added since the previous Iceberg snapshot go into one new
manifest; manifests of the previous snapshot are kept as they are unless a file of theirs left the table (then they
are rewritten without it); more than ``compaction.max.file-num`` manifests are merged into one. Primary-key tables
expose their highest-level files only (fully merged rows: rows appear after a full compaction, as with Java).
Iceberg snapshots whose Paimon snapshot expired are dropped from the metadata with their manifest lists, and
metadata files beyond ``previous-versions-max`` are deleted when ``delete-after-commit.enabled``. Format version 3
adds row lineage and the deletion vectors as Puffin deletion vectors in delete manifests (deletion_vectors.py).
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from collections.abc import Sequence
from typing import Any

from table_format.errors import TableFormatError
from table_format.iceberg import manifests as mf
from table_format.iceberg.data_files import data_file_records, delta_since, file_uri, partition_summaries, visible
from table_format.iceberg.deletion_vectors import DeleteManifests, sync_deletion_vectors, unreferenced_puffins
from table_format.iceberg.options import IcebergOptions
from table_format.iceberg.types import PARTITION_FIELD_ID_START, partition_fields, partition_spec_json, schema_json
from table_format.io.paths import MAIN_BRANCH, TAG_PREFIX
from table_format.meta.snapshot import CommitKind, Snapshot, tag_from_json
from table_format.store.file_store import FileStore

log = logging.getLogger(__name__)
VERSION_HINT = "version-hint.text"


def _read_json(store: FileStore, path: str) -> dict[str, Any] | None:
    try:
        return json.loads(store.file_io.read_bytes(path))
    except (FileNotFoundError, ValueError):
        return None


def current_version(store: FileStore, opts: IcebergOptions) -> int | None:
    try:
        return int(store.file_io.read_bytes(f"{opts.metadata_dir}/{VERSION_HINT}").decode().strip())
    except (FileNotFoundError, ValueError, UnicodeDecodeError):
        return None


def _uri(store: FileStore, path: str) -> str:
    return path if store.file_io.local else store.file_io.uri(path)


def _path(store: FileStore, uri: str) -> str:
    return uri if store.file_io.local else store.file_io.path_of(uri)


def sync_iceberg(store: FileStore) -> int | None:
    """Write Iceberg metadata for the latest snapshot if the table asks for it; the version written, else None."""
    opts = IcebergOptions.of(store)
    if opts is None or store.paths.branch != MAIN_BRANCH:  # Iceberg readers see main; branches are not exported
        return None
    latest = store.snapshots.latest()
    if latest is None:
        return None
    hint = current_version(store, opts)
    if hint == latest.id:
        current = _read_json(store, f"{opts.metadata_dir}/v{hint}.metadata.json")
        if current is not None:
            _drop_expired(store, opts, current)
            _refresh_refs(store, opts)
            return None
    # any other version is the base: newer ones too (a rollback), whose snapshots then drop out as expired ones do
    previous = _read_json(store, f"{opts.metadata_dir}/v{hint}.metadata.json") if hint and hint != latest.id else None
    return _write_version(store, opts, latest, previous)


def _previous_manifests(store: FileStore, previous: dict[str, Any] | None,
                        content: int = mf.CONTENT_DATA) -> list[dict[str, Any]]:
    if previous is None or previous.get("current-snapshot-id") in (None, -1):
        return []
    current = next((s for s in previous["snapshots"] if s["snapshot-id"] == previous["current-snapshot-id"]), None)
    if current is None:
        return []
    try:
        listed = mf.decode(store.file_io.read_bytes(_path(store, current["manifest-list"])))
    except (FileNotFoundError, ValueError):
        return []
    return [m for m in listed if m.get("content", mf.CONTENT_DATA) == content]


def _entry(record: dict[str, Any], sid: int) -> dict[str, Any]:
    return {"status": mf.STATUS_ADDED, "snapshot_id": sid, "sequence_number": sid, "file_sequence_number": sid,
            "data_file": record}


def _carry_over(store: FileStore, opts: IcebergOptions, previous: dict[str, Any] | None, keep: Any,
                build: Any) -> tuple[list[dict[str, Any]], int, int, int]:
    """The previous snapshot's manifests, those holding a file `keep(path)` rejects rewritten without it; also the
    count, records and bytes of the files dropped."""
    kept: list[dict[str, Any]] = []
    files = records = size = 0
    for m in _previous_manifests(store, previous):
        entries = [e for e in mf.decode(store.file_io.read_bytes(_path(store, m["manifest_path"])))
                   if e["status"] != mf.STATUS_DELETED]
        rest = [e for e in entries if keep(e["data_file"]["file_path"])]
        if len(rest) == len(entries):
            kept.append(m)
            continue
        gone = [e["data_file"] for e in entries if not keep(e["data_file"]["file_path"])]
        files, records = files + len(gone), records + sum(d["record_count"] for d in gone)
        size += sum(d["file_size_in_bytes"] for d in gone)
        if rest:
            kept.append(build([{**e, "status": mf.STATUS_EXISTING} for e in rest]))
    return kept, files, records, size


def _write_version(store: FileStore, opts: IcebergOptions, snapshot: Snapshot,
                   previous: dict[str, Any] | None) -> int:
    table = store.identifier
    schema = store.schema_by_id(snapshot.schema_id)
    ice_schema = schema_json(schema, table=table)
    partition = partition_fields(schema, table=table)
    io = store.file_io
    sid = snapshot.id
    written: list[str] = []

    def build(entries: list[dict[str, Any]], content: int = mf.CONTENT_DATA) -> dict[str, Any]:
        return _write_manifest(store, opts, entries, partition, ice_schema, sid, written, content)

    previous_id = previous.get("current-snapshot-id") if previous else None
    live_entries = None
    delta = delta_since(store, previous_id, snapshot) if isinstance(previous_id, int) and previous_id > 0 else None
    previous_summary = next((s["summary"] for s in (previous or {}).get("snapshots", [])
                             if s["snapshot-id"] == previous_id), None)
    if delta is not None and previous_summary is not None:
        # the usual case: only the files this commit added or removed are looked at
        added_entries, removed_entries = delta
        removed_paths = {file_uri(store, e) for e in removed_entries}
        added = [_entry(r, sid) for r in data_file_records(store, added_entries, partition).values()]
        if removed_paths:
            kept, removed, removed_records, removed_size = _carry_over(
                store, opts, previous, lambda path: path not in removed_paths, build)
        else:
            kept, removed, removed_records, removed_size = _previous_manifests(store, previous), 0, 0, 0
        added_records = sum(e["data_file"]["record_count"] for e in added)
        total_files = int(previous_summary["total-data-files"]) + len(added) - removed
        total_records = int(previous_summary["total-records"]) + added_records - removed_records
        total_size = (int(previous_summary["total-files-size"]) - removed_size
                      + sum(e["data_file"]["file_size_in_bytes"] for e in added))
    else:
        # first version, or snapshots in between are gone: compare the full file list with the previous manifests
        live_entries = visible(store, store.manifests.live_files(snapshot))
        live = data_file_records(store, live_entries, partition)
        kept, removed, _, _ = _carry_over(store, opts, previous, lambda path: path in live, build)
        listed = {e["data_file"]["file_path"] for m in kept
                  for e in mf.decode(io.read_bytes(_path(store, m["manifest_path"])))}
        added = [_entry(rec, sid) for path, rec in live.items() if path not in listed]
        added_records = sum(e["data_file"]["record_count"] for e in added)
        total_files, total_records = len(live), sum(r["record_count"] for r in live.values())
        total_size = sum(r["file_size_in_bytes"] for r in live.values())
    if added:
        kept.append(build(added))
    if len(kept) > opts.compaction_max_files:
        everything = [{**e, "status": mf.STATUS_EXISTING if e["snapshot_id"] != sid else e["status"]}
                      for m in kept for e in mf.decode(io.read_bytes(_path(store, m["manifest_path"])))
                      if e["status"] != mf.STATUS_DELETED]
        kept = [build(everything)]
    deletes = DeleteManifests([])
    if opts.format_version >= 3:
        deletes = sync_deletion_vectors(
            store, opts, snapshot, previous=_previous_manifests(store, previous, mf.CONTENT_DELETES),
            previous_summary=previous_summary if delta is not None else None, previous_id=previous_id,
            live=live_entries if delta is None else None, partition=partition, build=build,
            to_path=lambda uri: _path(store, uri))
    first_row_id = int((previous or {}).get("next-row-id", 0))
    kept, added_rows = mf.assign_row_ids(kept, first_row_id) if opts.format_version >= 3 else (kept, 0)
    kept += deletes.manifests
    final = {_path(store, m["manifest_path"]) for m in kept}
    io.delete_many([p for p in written if p not in final])  # written here, then merged away in this same commit
    earliest = store.snapshots.earliest_id() or sid
    retained = [s for s in (previous or {}).get("snapshots", [])  # Paimon's snapshots are earliest..latest
                if earliest <= s["snapshot-id"] < sid]
    retained_ids = {s["snapshot-id"] for s in retained}
    dropped = [s for s in (previous or {}).get("snapshots", []) if s["snapshot-id"] not in retained_ids]
    parent = retained[-1]["snapshot-id"] if retained else None
    list_path = f"{opts.metadata_dir}/snap-{sid}-{uuid.uuid4()}.avro"
    io.write_bytes(list_path, mf.encode_manifest_list(
        kept, snapshot_id=sid, parent_id=parent, compression=opts.compression, version=opts.format_version,
        first_row_id=first_row_id if opts.format_version >= 3 else None))
    summary = {
        "operation": _operation(snapshot, bool(added), removed),
        "added-data-files": str(len(added)), "deleted-data-files": str(removed),
        "added-records": str(added_records), "total-records": str(total_records),
        "total-data-files": str(total_files), "total-files-size": str(total_size),
        "total-delete-files": "0", "total-position-deletes": "0", "total-equality-deletes": "0", **deletes.summary(),
        "paimon-snapshot-id": str(sid), "paimon-commit-kind": snapshot.commit_kind.value,
    }
    new_snapshot = {"snapshot-id": sid, "sequence-number": sid, "timestamp-ms": snapshot.time_millis,
                    "summary": summary, "manifest-list": _uri(store, list_path), "schema-id": schema.id}
    if parent is not None:
        new_snapshot["parent-snapshot-id"] = parent
    if opts.format_version >= 3:  # row lineage: the row ids this snapshot assigned (to its new data manifests)
        new_snapshot.update({"first-row-id": first_row_id, "added-rows": added_rows})
    snapshots = [*retained, new_snapshot]
    schemas = {s["schema-id"]: s for s in (previous or {}).get("schemas", [])}
    schemas[schema.id] = ice_schema
    metadata = {
        "format-version": opts.format_version,
        **({"next-row-id": first_row_id + added_rows} if opts.format_version >= 3 else {}),
        "table-uuid": (previous or {}).get("table-uuid") or str(uuid.uuid4()),
        "location": _uri(store, opts.location),
        "last-sequence-number": sid,
        "last-updated-ms": int(time.time() * 1000),
        "last-column-id": max(schema.highest_field_id, int((previous or {}).get("last-column-id", 0))),
        "schemas": [schemas[k] for k in sorted(schemas)],
        "current-schema-id": schema.id,
        "partition-specs": [partition_spec_json(partition)],
        "default-spec-id": 0,
        "last-partition-id": PARTITION_FIELD_ID_START + len(partition) - 1,
        "sort-orders": [{"order-id": 0, "fields": []}],
        "default-sort-order-id": 0,
        "properties": {"paimon.table": table},
        "current-snapshot-id": sid,
        "refs": _refs(store, [s["snapshot-id"] for s in snapshots], sid),
        "snapshots": snapshots,
        "snapshot-log": [{"snapshot-id": s["snapshot-id"], "timestamp-ms": s["timestamp-ms"]} for s in snapshots],
        "metadata-log": _metadata_log(store, opts, previous),
        "statistics": [],
    }
    io.write_bytes(f"{opts.metadata_dir}/v{sid}.metadata.json", json.dumps(metadata).encode())
    hinted = current_version(store, opts) or 0
    if hinted < sid or not store.snapshots.exists(hinted):  # a concurrent writer's newer version stays current
        io.overwrite_hint(f"{opts.metadata_dir}/{VERSION_HINT}", str(sid).encode())
    _clean_up(store, opts, metadata, previous, dropped)
    return sid


def _refs(store: FileStore, snapshot_ids: list[int], current: int) -> dict[str, dict[str, Any]]:
    """`main` and every Paimon tag whose snapshot is an Iceberg snapshot of the metadata, as Iceberg tag refs."""
    refs: dict[str, dict[str, Any]] = {"main": {"snapshot-id": current, "type": "branch"}}
    known = set(snapshot_ids)
    for st in store.file_io.list_dir(store.paths.tag_dir):
        if st.is_dir or not st.name.startswith(TAG_PREFIX):
            continue
        try:
            tagged = tag_from_json(store.file_io.read_bytes(st.path), source=st.path).snapshot
        except (FileNotFoundError, TableFormatError):
            continue
        if tagged.id in known and st.name[len(TAG_PREFIX):] != "main":
            refs[st.name[len(TAG_PREFIX):]] = {"snapshot-id": tagged.id, "type": "tag"}
    return refs


def _refresh_refs(store: FileStore, opts: IcebergOptions) -> None:
    """After a tag was created or deleted: rewrite the current version in place when its refs changed."""
    hint = current_version(store, opts)
    metadata = _read_json(store, f"{opts.metadata_dir}/v{hint}.metadata.json") if hint else None
    if metadata is None:
        return
    refs = _refs(store, [s["snapshot-id"] for s in metadata["snapshots"]], metadata["current-snapshot-id"])
    if refs != metadata.get("refs"):
        store.file_io.overwrite_hint(f"{opts.metadata_dir}/v{hint}.metadata.json",
                                     json.dumps({**metadata, "refs": refs}).encode())


def _drop_expired(store: FileStore, opts: IcebergOptions, metadata: dict[str, Any]) -> None:
    """Rewrite the current version without the snapshots Paimon expired (their files may be gone)."""
    current = metadata["current-snapshot-id"]
    earliest = store.snapshots.earliest_id()
    if earliest is not None and metadata["snapshots"][0]["snapshot-id"] >= earliest:
        return  # nothing older than Paimon's earliest snapshot: nothing expired (no listing needed)
    existing = set(store.snapshots.list_ids())
    retained = [s for s in metadata["snapshots"] if s["snapshot-id"] == current or s["snapshot-id"] in existing]
    if len(retained) == len(metadata["snapshots"]):
        return
    ids = {s["snapshot-id"] for s in retained}
    dropped = [s for s in metadata["snapshots"] if s["snapshot-id"] not in ids]
    if retained[0].get("parent-snapshot-id") not in ids:
        retained[0] = {k: v for k, v in retained[0].items() if k != "parent-snapshot-id"}
    updated = {**metadata, "snapshots": retained, "last-updated-ms": int(time.time() * 1000),
               "snapshot-log": [e for e in metadata["snapshot-log"] if e["snapshot-id"] in ids]}
    store.file_io.overwrite_hint(f"{opts.metadata_dir}/v{current}.metadata.json", json.dumps(updated).encode())
    if not opts.delete_after_commit:
        return
    _delete_unlisted(store, updated, dropped)
    store.file_io.delete_many([_path(store, s["manifest-list"]) for s in dropped])


def check_iceberg_writable(store: FileStore) -> None:
    """Raise before a commit when the table asks for Iceberg metadata that cannot be written (names why)."""
    opts = IcebergOptions.of(store)
    if opts is not None:
        schema_json(store.schema, table=store.identifier)
        partition_fields(store.schema, table=store.identifier)


def sync_after_commit(store: FileStore) -> None:
    """The commit callback: bring Iceberg metadata up to the snapshot just committed, never failing the commit
    (it landed); a failure is logged and caught up by the next commit or an explicit sync."""
    try:
        sync_iceberg(store)
    except Exception as e:  # noqa: BLE001 - the Paimon commit landed; say so rather than fail it
        log.warning("table %r: the commit landed, but its Iceberg metadata could not be written: %s; it is caught "
                    "up by the next commit or `lakehouse iceberg-sync %s`", store.identifier, e, store.identifier)


def _operation(snapshot: Snapshot, added: bool, removed: int) -> str:
    if snapshot.commit_kind in (CommitKind.COMPACT,) or (added and removed):
        return "replace" if snapshot.commit_kind == CommitKind.COMPACT else "overwrite"
    if removed:
        return "delete"
    return "append"


def _write_manifest(store: FileStore, opts: IcebergOptions, entries: Sequence[dict[str, Any]],
                    partition: Sequence[Any], ice_schema: dict[str, Any], sid: int, written: list[str],
                    content: int = mf.CONTENT_DATA) -> dict[str, Any]:
    path = f"{opts.metadata_dir}/{uuid.uuid4()}-m{len(written)}.avro"
    data = mf.encode_manifest(entries, partition=partition, schema_json=ice_schema, compression=opts.compression,
                              version=opts.format_version, content=content)
    store.file_io.write_bytes(path, data)
    written.append(path)
    counts = {status: [e for e in entries if e["status"] == status]
              for status in (mf.STATUS_ADDED, mf.STATUS_EXISTING, mf.STATUS_DELETED)}
    return {
        "manifest_path": _uri(store, path), "manifest_length": len(data), "partition_spec_id": 0,
        "content": content, "sequence_number": sid,
        "min_sequence_number": min((e["sequence_number"] for e in entries), default=sid),
        "added_snapshot_id": sid,
        "added_files_count": len(counts[mf.STATUS_ADDED]), "existing_files_count": len(counts[mf.STATUS_EXISTING]),
        "deleted_files_count": len(counts[mf.STATUS_DELETED]),
        "added_rows_count": sum(e["data_file"]["record_count"] for e in counts[mf.STATUS_ADDED]),
        "existing_rows_count": sum(e["data_file"]["record_count"] for e in counts[mf.STATUS_EXISTING]),
        "deleted_rows_count": sum(e["data_file"]["record_count"] for e in counts[mf.STATUS_DELETED]),
        "partitions": partition_summaries([e["data_file"] for e in entries], partition),
    }


def _metadata_log(store: FileStore, opts: IcebergOptions, previous: dict[str, Any] | None) -> list[dict[str, Any]]:
    if previous is None or opts.previous_versions_max == 0:
        return []
    entry = {"timestamp-ms": previous["last-updated-ms"],
             "metadata-file": _uri(store, f"{opts.metadata_dir}/v{previous['current-snapshot-id']}.metadata.json")}
    return [*previous.get("metadata-log", []), entry][-opts.previous_versions_max:]


def _manifests_of(store: FileStore, list_uri: str) -> list[dict[str, Any]]:
    try:
        return mf.decode(store.file_io.read_bytes(_path(store, list_uri)))
    except (FileNotFoundError, ValueError):
        return []


def _delete_unlisted(store: FileStore, metadata: dict[str, Any], sources: list[dict[str, Any]]) -> None:
    """Delete the manifests the `sources` snapshots listed that no snapshot of `metadata` lists any more.

    A manifest is listed by the snapshots from the one that wrote it (``added_snapshot_id``) up to the last one that
    kept it, a contiguous range; the retained snapshots are a contiguous range too (expiry drops the oldest,
    rollback the newest), so a manifest is still listed iff the oldest or the current retained snapshot lists it,
    or it was written by a retained snapshot after the oldest: two manifest lists read, not one per snapshot."""
    snapshots = metadata["snapshots"]
    oldest, current = snapshots[0], snapshots[-1]
    retained = _manifests_of(store, current["manifest-list"]) + _manifests_of(store, oldest["manifest-list"])
    listed = {_path(store, m["manifest_path"]) for m in retained}
    doomed: dict[str, dict[str, Any]] = {}
    for s in sources:
        for m in _manifests_of(store, s["manifest-list"]):
            path = _path(store, m["manifest_path"])
            if path in listed or oldest["snapshot-id"] < m["added_snapshot_id"] <= current["snapshot-id"]:
                continue
            doomed[path] = m
    deletes = [m for m in doomed.values() if m.get("content") == mf.CONTENT_DELETES]
    puffins = unreferenced_puffins(store, deletes, [m for m in retained if m.get("content") == mf.CONTENT_DELETES],
                                   oldest["snapshot-id"], current["snapshot-id"], lambda uri: _path(store, uri))
    store.file_io.delete_many(sorted(doomed) + puffins)


def _clean_up(store: FileStore, opts: IcebergOptions, metadata: dict[str, Any], previous: dict[str, Any] | None,
              dropped: list[dict[str, Any]]) -> None:
    """Delete what the previous version referenced and no retained snapshot or metadata version does.

    Only files the previous version knew are candidates, so a concurrent writer's files are never touched.
    """
    if not opts.delete_after_commit or previous is None:
        return
    io = store.file_io
    kept_logs = {m["metadata-file"] for m in metadata["metadata-log"]}
    old_versions = [m["metadata-file"] for m in previous.get("metadata-log", [])]
    old_versions.append(_uri(store, f"{opts.metadata_dir}/v{previous['current-snapshot-id']}.metadata.json"))
    for uri in old_versions:
        if uri not in kept_logs:
            io.delete_quietly(_path(store, uri))
    previous_current = [s for s in previous.get("snapshots", [])
                        if s["snapshot-id"] == previous.get("current-snapshot-id")]
    _delete_unlisted(store, metadata, [*dropped, *previous_current])
    io.delete_many([_path(store, s["manifest-list"]) for s in dropped])
