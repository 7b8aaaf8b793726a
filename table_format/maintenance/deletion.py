"""Deletion plans shared by expiration, tag deletion and rollback (FileDeletionBase's deleting side).

A plan is an ordered list of paths computed without side effects, so a dry run reports exactly what a real run
deletes; `execute` then deletes them in that order.
"""

from __future__ import annotations

from collections.abc import Iterable

from table_format.maintenance.progress import ProgressTracker
from table_format.maintenance.references import (
    index_file_path,
    statistics_path,
    try_read_index_manifest,
    try_read_manifest,
    try_read_manifest_list,
)
from table_format.meta.manifest import FileKind, ManifestEntry
from table_format.meta.snapshot import Snapshot
from table_format.store.file_store import FileStore

DELETE_CHUNK = 1000  # paths per batch delete (S3's DeleteObjects takes at most 1000 keys), progress per chunk


class DeletionPlan:
    """Paths to delete, in order, each once."""

    def __init__(self) -> None:
        self.paths: list[str] = []
        self._seen: set[str] = set()

    def add(self, path: str) -> None:
        if path not in self._seen:
            self._seen.add(path)
            self.paths.append(path)

    def add_all(self, paths: Iterable[str]) -> None:
        for p in paths:
            self.add(p)


def added_entries(store: FileStore, manifest_list: str | None) -> list[ManifestEntry]:
    """ADD entries of the manifests of a manifest list, skipping unreadable files (deleteAddedDataFiles)."""
    out: list[ManifestEntry] = []
    for meta in try_read_manifest_list(store, manifest_list):
        entries = try_read_manifest(store, meta.file_name)
        if entries is not None:
            out.extend(e for e in entries if e.kind == FileKind.ADD)
    return out


def plan_metadata(store: FileStore, snap: Snapshot, skip: set[str], plan: DeletionPlan, *, changelog: bool) -> None:
    """FileDeletionBase.cleanUnusedManifests: the manifest lists of a snapshot and their manifests, its index
    manifest and index files, its statistics file, except names in `skip` (which grows with what is planned)."""
    lists = [snap.base_manifest_list, snap.delta_manifest_list]
    if changelog and snap.changelog_manifest_list:
        lists.append(snap.changelog_manifest_list)
    for list_name in lists:
        for meta in try_read_manifest_list(store, list_name):
            if meta.file_name not in skip:
                plan.add(store.paths.manifest(meta.file_name))
                skip.add(meta.file_name)  # other snapshots sharing it do not plan it again
        if list_name not in skip:
            plan.add(store.paths.manifest(list_name))
    if snap.index_manifest:
        entries = try_read_index_manifest(store, snap.index_manifest)
        for e in entries or []:
            if e.index_file.file_name not in skip:
                plan.add(index_file_path(store, e))
        if entries is not None and snap.index_manifest not in skip:
            plan.add(store.paths.manifest(snap.index_manifest))
    if snap.statistics and snap.statistics not in skip:
        plan.add(statistics_path(store, snap.statistics))


def execute(store: FileStore, paths: Iterable[str], *, dry_run: bool,
            tracker: ProgressTracker | None = None) -> list[str]:
    """Delete the paths in order (a dry run only reports the existing ones); returns what is (or would be) gone."""
    paths = list(paths)
    if dry_run:
        out = [path for path in paths if store.file_io.exists(path)]
        if tracker is not None:
            tracker.advance(len(paths))
        return out
    out = []
    for start in range(0, len(paths), DELETE_CHUNK):  # object stores: one batch delete per chunk
        chunk = paths[start:start + DELETE_CHUNK]
        out += store.file_io.delete_many(chunk)
        if tracker is not None:
            tracker.advance(len(chunk))
    return out


def clean_empty_directories(store: FileStore) -> bool:
    """Option snapshot.clean-empty-directories (fallback key snapshot.expire.clean-empty-directories)."""
    raw = store.options.raw
    value = raw.get("snapshot.clean-empty-directories", raw.get("snapshot.expire.clean-empty-directories", "false"))
    return str(value).strip().lower() == "true"
