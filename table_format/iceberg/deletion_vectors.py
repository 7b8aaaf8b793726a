"""The deletion vectors of an Iceberg v3 view of a Paimon table: Puffin files and delete manifests.

Every data file the Iceberg view lists (an append table's files, a primary-key table's highest level) whose Paimon
deletion vector has deleted rows gets one `deletion-vector-v1` blob and one delete manifest entry (content 1, format
PUFFIN, `referenced_data_file`, `content_offset`, `content_size_in_bytes`, `record_count` = cardinality): at most
one per data file and snapshot, as the spec asks. A commit whose Paimon index manifest is unchanged reuses the
previous snapshot's delete manifests as they are. Otherwise the vectors whose cardinality changed (a data file's
Paimon vector only grows, so within one history an equal cardinality is an equal vector) go into one new Puffin file
`dv-<snapshot>-<uuid>.puffin`; entries of changed or dropped vectors leave the previous delete manifests, which are
rewritten without them (the others are kept, with their Puffin files). A full rebuild (first version, a rollback,
snapshots gone in between) writes every vector again.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from table_format.data.deletion_vector import DeletionFile, deletion_files_of
from table_format.iceberg import manifests as mf
from table_format.iceberg.data_files import data_file_records, file_uri, visible
from table_format.iceberg.options import IcebergOptions
from table_format.iceberg.puffin import DeletionVectorBlob, cardinality_of, iceberg_blob, puffin_file
from table_format.iceberg.types import PartitionField
from table_format.meta.manifest import ManifestEntry
from table_format.meta.snapshot import Snapshot
from table_format.store.file_store import FileStore

PATH_FIELD_ID = 2147483546  # Iceberg's `file_path` of position deletes: equal bounds name the one data file
Build = Callable[[list[dict[str, Any]], int], dict[str, Any]]  # (entries, manifest content) -> manifest-list record


@dataclass(frozen=True)
class DeleteManifests:
    """The delete manifests of the new snapshot and the counts its summary reports."""

    manifests: list[dict[str, Any]]
    added: int = 0
    added_records: int = 0
    removed: int = 0
    removed_records: int = 0
    total: int = 0
    total_records: int = 0

    def summary(self) -> dict[str, str]:
        return {"added-delete-files": str(self.added), "added-dvs": str(self.added),
                "added-position-deletes": str(self.added_records), "removed-delete-files": str(self.removed),
                "removed-dvs": str(self.removed), "removed-position-deletes": str(self.removed_records),
                "total-delete-files": str(self.total), "total-position-deletes": str(self.total_records)}


def _entries(store: FileStore, manifest: dict[str, Any], to_path: Callable[[str], str]) -> list[dict[str, Any]]:
    return [e for e in mf.decode(store.file_io.read_bytes(to_path(manifest["manifest_path"])))
            if e["status"] != mf.STATUS_DELETED]


def _raw_vectors(store: FileStore, wanted: dict[str, DeletionFile]) -> dict[str, bytes]:
    """Each data file URI's Paimon deletion vector bytes (`size | payload | CRC`), one read per index file."""
    by_index: dict[str, list[tuple[str, DeletionFile]]] = {}
    for uri, d in wanted.items():
        by_index.setdefault(d.path, []).append((uri, d))
    out: dict[str, bytes] = {}
    for path, items in by_index.items():
        data = store.file_io.read_bytes(path)
        for uri, d in items:
            size = int.from_bytes(data[d.offset:d.offset + 4], "big", signed=True)
            out[uri] = data[d.offset:d.offset + 8 + max(size, 0)]
    return out


def _is_ours(entry: dict[str, Any], opts: IcebergOptions, to_path: Callable[[str], str]) -> bool:
    """A deletion vector entry we wrote (a `dv-*.puffin` of ours); Java Paimon's point into Paimon's index files,
    which no Iceberg reader can read, so they are replaced."""
    path = to_path(entry["data_file"]["file_path"])
    return (entry["data_file"].get("referenced_data_file") is not None and path.endswith(".puffin")
            and path.rsplit("/", 1)[0] == opts.metadata_dir and path.rsplit("/", 1)[-1].startswith("dv-"))


def sync_deletion_vectors(store: FileStore, opts: IcebergOptions, snapshot: Snapshot, *,
                          previous: Sequence[dict[str, Any]], previous_summary: dict[str, Any] | None,
                          previous_id: int | None, live: list[ManifestEntry] | None, partition: list[PartitionField],
                          build: Build, to_path: Callable[[str], str]) -> DeleteManifests:
    """The delete manifests for `snapshot`. `previous` are the previous snapshot's delete manifests, `live` the
    visible files when already known; `previous_summary` None (or no `previous_id`) means a full rebuild."""
    full = previous_summary is None or previous_id is None
    ours = previous_summary is not None and "paimon-commit-kind" in previous_summary  # else Java wrote it
    if (ours and previous_summary is not None and previous_id is not None and store.snapshots.exists(previous_id)
            and store.snapshots.snapshot(previous_id).index_manifest == snapshot.index_manifest):  # none changed
        return DeleteManifests(list(previous), total=int(previous_summary.get("total-delete-files", 0)),
                               total_records=int(previous_summary.get("total-position-deletes", 0)))
    dvs = deletion_files_of(store, snapshot)
    wanted: dict[str, DeletionFile] = {}
    owners: dict[str, ManifestEntry] = {}
    if dvs:
        for e in live if live is not None else visible(store, store.manifests.live_files(snapshot)):
            d = dvs.get((e.partition, e.bucket, e.file.file_name))
            if d is not None and d.cardinality != 0:
                uri = file_uri(store, e)
                wanted[uri], owners[uri] = d, e
    raw = _raw_vectors(store, {u: d for u, d in wanted.items() if d.cardinality is None})
    cardinality = {u: d.cardinality if d.cardinality is not None else cardinality_of(raw[u], source=d.path)
                   for u, d in wanted.items()}
    cardinality = {u: c for u, c in cardinality.items() if c > 0}
    prior: dict[str, dict[str, Any]] = {}
    by_manifest: list[tuple[dict[str, Any], list[dict[str, Any]]]] = []
    for m in previous:
        entries = _entries(store, m, to_path)
        by_manifest.append((m, entries))
        prior.update({e["data_file"]["referenced_data_file"]: e for e in entries if _is_ours(e, opts, to_path)})
    changed = [u for u, c in cardinality.items()
               if full or u not in prior or prior[u]["data_file"]["record_count"] != c]
    keep = {u for u in prior if u in cardinality and u not in changed}
    kept: list[dict[str, Any]] = []
    removed = removed_records = 0
    for m, entries in by_manifest:
        rest = [e for e in entries if e["data_file"].get("referenced_data_file") in keep and _is_ours(e, opts, to_path)]
        removed += len(entries) - len(rest)
        removed_records += sum(e["data_file"]["record_count"] for e in entries) - sum(
            e["data_file"]["record_count"] for e in rest)
        if len(rest) == len(entries):
            kept.append(m)
        elif rest:
            kept.append(build([{**e, "status": mf.STATUS_EXISTING} for e in rest], mf.CONTENT_DELETES))
    added: list[dict[str, Any]] = []
    if changed:
        raw.update(_raw_vectors(store, {u: wanted[u] for u in changed if u not in raw}))
        blobs = [DeletionVectorBlob(u, iceberg_blob(raw[u], source=wanted[u].path), cardinality[u]) for u in changed]
        data, ranges = puffin_file(blobs)
        path = f"{opts.metadata_dir}/dv-{snapshot.id}-{uuid.uuid4()}.puffin"
        store.file_io.write_bytes(path, data)
        location = path if store.file_io.local else store.file_io.uri(path)
        partitions = data_file_records(store, [owners[u] for u in changed], partition)
        for b, (offset, length) in zip(blobs, ranges, strict=True):
            ref = b.referenced_data_file.encode("utf-8")
            added.append({"status": mf.STATUS_ADDED, "snapshot_id": snapshot.id, "sequence_number": snapshot.id,
                          "file_sequence_number": snapshot.id, "data_file": {
                              "content": 1, "file_path": location, "file_format": "PUFFIN",
                              "partition": partitions[b.referenced_data_file]["partition"],
                              "record_count": b.cardinality, "file_size_in_bytes": len(data),
                              "lower_bounds": [{"key": PATH_FIELD_ID, "value": ref}],
                              "upper_bounds": [{"key": PATH_FIELD_ID, "value": ref}],
                              "referenced_data_file": b.referenced_data_file, "content_offset": offset,
                              "content_size_in_bytes": length}})
        kept.append(build(added, mf.CONTENT_DELETES))
    if len(kept) > opts.compaction_max_files:
        merged = [{**e, "status": mf.STATUS_EXISTING if e["snapshot_id"] != snapshot.id else e["status"]}
                  for m in kept for e in _entries(store, m, to_path)]
        kept = [build(merged, mf.CONTENT_DELETES)]
    added_records = sum(e["data_file"]["record_count"] for e in added)
    return DeleteManifests(kept, added=len(added), added_records=added_records, removed=removed,
                           removed_records=removed_records, total=len(keep) + len(added),
                           total_records=sum(cardinality[u] for u in keep) + added_records)


def unreferenced_puffins(store: FileStore, doomed: Sequence[dict[str, Any]], listed: Sequence[dict[str, Any]],
                         oldest_id: int, current_id: int, to_path: Callable[[str], str]) -> list[str]:
    """Puffin files of the `doomed` delete manifests that no retained snapshot references.

    A Puffin file is referenced by the snapshots from the one that wrote it (`dv-<id>-...`) up to the last that kept
    one of its entries, a contiguous range, so (as for manifests) it is still referenced iff the oldest or the
    current retained snapshot references it (their delete manifests `listed`) or a retained later snapshot wrote it."""
    candidates = {to_path(e["data_file"]["file_path"]) for m in doomed for e in _entries(store, m, to_path)}
    # only Puffin files of ours: Java Paimon's entries point into Paimon's own index files, never to be deleted here
    candidates = {p for p in candidates if p.endswith(".puffin") and p.rsplit("/", 1)[-1].startswith("dv-")
                  and any(p.rsplit("/", 1)[0] == to_path(m["manifest_path"]).rsplit("/", 1)[0] for m in doomed)}
    if not candidates:
        return []
    referenced = {to_path(e["data_file"]["file_path"]) for m in listed for e in _entries(store, m, to_path)}
    out = []
    for path in sorted(candidates - referenced):
        writer = path.rsplit("/", 1)[-1].split("-")
        if len(writer) > 1 and writer[1].isdigit() and oldest_id < int(writer[1]) <= current_id:
            continue
        out.append(path)
    return out
