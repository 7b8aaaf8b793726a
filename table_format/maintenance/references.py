"""What snapshots and tags reference, and small file helpers shared by the maintenance operations.

Mirrors the reading side of org.apache.paimon.operation.FileDeletionBase (manifestSkippingSet,
addMergedDataFiles, tryReadManifestList) and org.apache.paimon.utils.TagManager (tags()). Everything here only
reads; callers decide what to delete.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
from collections.abc import Iterable
from dataclasses import dataclass

from table_format.errors import CorruptMetadataError, SnapshotNotFoundError
from table_format.io.paths import TAG_PREFIX
from table_format.meta.manifest import FileKind, IndexManifestEntry, ManifestEntry, ManifestFileMeta
from table_format.meta.snapshot import Snapshot, tag_from_json
from table_format.store.file_store import FileStore

STATISTICS_DIR = "statistics"
CONSUMER_DIR = "consumer"
CONSUMER_PREFIX = "consumer-"
CHANGELOG_DIR = "changelog"
CHANGELOG_PREFIX = "changelog-"
BRANCH_DIR = "branch"
BRANCH_PREFIX = "branch-"

# a data file as expiration identifies it: (partition BinaryRow bytes, bucket, file name)
DataFileKey = tuple[bytes, int, str]


# ---- tags ---------------------------------------------------------------------------------------------------------


def tag_names(store: FileStore, tag_dir: str | None = None) -> list[str]:
    """Names of the tag files `tag/tag-<name>` (temp files start with '.', so the prefix skips them)."""
    names = []
    for st in store.file_io.list_dir(tag_dir or store.paths.tag_dir):
        if not st.is_dir and st.name.startswith(TAG_PREFIX):
            names.append(st.name[len(TAG_PREFIX):])
    return sorted(names)


def read_tag(store: FileStore, name: str, tag_dir: str | None = None) -> Snapshot | None:
    """The snapshot of tag `name` (trimmed to a Snapshot), None if the tag file is gone."""
    path = f"{tag_dir or store.paths.tag_dir}/{TAG_PREFIX}{name}"
    try:
        data = store.file_io.read_bytes(path)
    except FileNotFoundError:
        return None
    return tag_from_json(data, source=path).snapshot


def tagged_snapshots(store: FileStore, tag_dir: str | None = None) -> list[tuple[Snapshot, list[str]]]:
    """Every tagged snapshot once, sorted by id, with its tag names (TagManager.tags())."""
    by_id: dict[int, tuple[Snapshot, list[str]]] = {}
    for name in tag_names(store, tag_dir):
        snap = read_tag(store, name, tag_dir)
        if snap is None:  # deleted meanwhile
            continue
        by_id.setdefault(snap.id, (snap, []))[1].append(name)
    return [by_id[i] for i in sorted(by_id)]


def tag_snapshot_or_raise(store: FileStore, name: str) -> Snapshot:
    snap = read_tag(store, name)
    if snap is None:
        raise SnapshotNotFoundError(f"table {store.identifier!r}: tag {name!r} does not exist")
    return snap


# ---- manifests ----------------------------------------------------------------------------------------------------


def try_read_manifest_list(store: FileStore, name: str | None) -> list[ManifestFileMeta]:
    """A manifest list, or [] when it is missing/unreadable (FileDeletionBase.tryReadManifestList)."""
    if not name:
        return []
    try:
        return store.manifests.read_manifest_list(name)
    except CorruptMetadataError:
        return []


def try_read_manifest(store: FileStore, name: str) -> list[ManifestEntry] | None:
    try:
        return store.manifests.read_manifest(name)
    except CorruptMetadataError:
        return None


def try_read_index_manifest(store: FileStore, name: str | None) -> list[IndexManifestEntry] | None:
    if not name:
        return []
    try:
        return store.manifests.read_index_manifest(name)
    except CorruptMetadataError:
        return None


def data_manifest_names(store: FileStore, snapshot: Snapshot) -> list[str]:
    """Base + delta manifests of a snapshot; strict (a missing list raises CorruptMetadataError)."""
    return [m.file_name for m in store.manifests.data_manifests(snapshot)]


@dataclass
class MetadataRefs:
    """Names of the metadata files snapshots reference (manifestSkippingSet), plus index file metas by name."""

    names: set[str]
    index_files: dict[str, IndexManifestEntry]

    def __contains__(self, name: object) -> bool:
        return name in self.names


def metadata_refs(store: FileStore, snapshots: Iterable[Snapshot], *, changelog: bool = False) -> MetadataRefs:
    """Manifest lists, manifests, index manifest, index files and statistics file of the snapshots.

    Strict: a referenced file that cannot be read raises CorruptMetadataError (it protects other files, so
    guessing would be unsafe). Like Java's manifestSkippingSet, changelog manifests are only added when asked.
    """
    names: set[str] = set()
    index_files: dict[str, IndexManifestEntry] = {}
    for snap in snapshots:
        names.add(snap.base_manifest_list)
        names.add(snap.delta_manifest_list)
        names.update(data_manifest_names(store, snap))
        if changelog and snap.changelog_manifest_list:
            names.add(snap.changelog_manifest_list)
            names.update(m.file_name for m in store.manifests.read_manifest_list(snap.changelog_manifest_list))
        if snap.index_manifest:
            names.add(snap.index_manifest)
            for e in store.manifests.read_index_manifest(snap.index_manifest):
                names.add(e.index_file.file_name)
                index_files[e.index_file.file_name] = e
        if snap.statistics:
            names.add(snap.statistics)
    return MetadataRefs(names, index_files)


def live_data_files(store: FileStore, snapshot: Snapshot) -> set[DataFileKey]:
    """(partition, bucket, file name) of every live data file of a snapshot (addMergedDataFiles); strict."""
    return {(e.partition, e.bucket, e.file.file_name) for e in store.manifests.live_files(snapshot)}


def live_data_entries(store: FileStore, snapshot: Snapshot) -> list[ManifestEntry]:
    return store.manifests.live_files(snapshot)


def added_entries(store: FileStore, manifest_list: str | None) -> list[ManifestEntry]:
    """ADD entries of the manifests of a manifest list, tolerating missing files (deleteAddedDataFiles)."""
    out: list[ManifestEntry] = []
    for meta in try_read_manifest_list(store, manifest_list):
        entries = try_read_manifest(store, meta.file_name)
        if entries is None:
            continue
        out.extend(e for e in entries if e.kind == FileKind.ADD)
    return out


# ---- paths --------------------------------------------------------------------------------------------------------


def data_file_paths(store: FileStore, entry: ManifestEntry, *, extra: bool = True) -> list[str]:
    """The data file of an entry plus its extra files (same bucket directory)."""
    f = entry.file
    main = store.data_file_path(entry.partition, entry.bucket, f.file_name, f.external_path)
    if not extra or not f.extra_files:
        return [main]
    bucket_dir = store.paths.bucket_dir(store.partition_path(entry.partition), entry.bucket)
    return [main, *(f"{bucket_dir}/{x}" for x in f.extra_files)]


def index_file_path(store: FileStore, entry: IndexManifestEntry) -> str:
    meta = entry.index_file
    return meta.external_path or store.paths.index_file(meta.file_name)


def statistics_path(store: FileStore, name: str) -> str:
    return f"{store.paths.root}/{STATISTICS_DIR}/{name}"


def bucket_dirs_upwards(store: FileStore, partition: bytes, bucket: int) -> list[str]:
    """The bucket directory, then each partition directory from the deepest to the shallowest."""
    part = store.partition_path(partition)
    out = [store.paths.bucket_dir(part, bucket)]
    segments = [s for s in part.split("/") if s]
    for depth in range(len(segments), 0, -1):
        out.append(f"{store.paths.root}/" + "/".join(segments[:depth]))
    return out


def remove_empty_dirs(store: FileStore, dirs: Iterable[str]) -> list[str]:
    """Remove each directory that is empty, deepest first; returns the removed ones."""
    removed = []
    for d in sorted(set(dirs), key=lambda p: (-p.count("/"), p)):
        with contextlib.suppress(OSError):
            if store.file_io.delete_empty_dir(d):
                removed.append(d)
    return removed


def millis(t: _dt.datetime) -> int:
    """Epoch millis of a datetime; a naive one is local time (like Java's LocalDateTime in the default zone)."""
    return int(t.timestamp() * 1000)
