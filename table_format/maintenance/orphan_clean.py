"""Orphan-file removal: delete files in a table directory that no snapshot, tag or changelog references.

Mirrors org.apache.paimon.operation.OrphanFilesClean (0.9) / LocalOrphanFilesClean (later releases):

* candidates: every file older than the cut-off in ``manifest/``, ``index/``, ``statistics/`` and the bucket
  directories (``<k>=<v>/.../bucket-<n>/``, found by walking exactly the partition depth); unknown directories and
  files elsewhere are left alone (0.9 also deleted unknown entries inside partition directories; later releases
  stopped doing that, and so do we);
* in ``snapshot/`` and ``changelog/``: files that are neither ``snapshot-N``/``changelog-N`` nor a hint
  (e.g. leftovers ``.snapshot-7.<uuid>.tmp`` of atomic writes); in ``schema/``, ``tag/`` and ``consumer/`` only
  such hidden ``.tmp`` files (an extension: Java leaves them);
* used: the names referenced by every snapshot, tag and long-lived changelog of every branch: manifest lists,
  manifests, every data file named in them (ADD or DELETE) with its extra files, the index manifest and its index
  files, the statistics file. A candidate whose name is used anywhere is kept;
* afterwards, empty bucket and partition directories are removed (as Paimon >= 1.0 does);
* object stores: multipart uploads in progress under the table's prefix, started before the cut-off, are aborted
  (a writer that crashed mid-upload leaves one: no object, invisible to listings, yet its parts are stored and
  billed until aborted). An extension: Paimon leaves them to the bucket's lifecycle rules.

Schema, snapshot, tag and hint files are never candidates. A dry run reports the same files and deletes nothing.
"""

from __future__ import annotations

import datetime as _dt
import posixpath
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace

from table_format.errors import CorruptMetadataError, OptionError
from table_format.io.file_io import FileStatus, PendingUpload
from table_format.io.paths import EARLIEST, LATEST, SCHEMA_PREFIX, SNAPSHOT_PREFIX, TAG_PREFIX
from table_format.maintenance.deletion import DELETE_CHUNK
from table_format.maintenance.progress import ProgressCallback, ProgressTracker
from table_format.maintenance.references import (
    BRANCH_DIR,
    BRANCH_PREFIX,
    CHANGELOG_DIR,
    CHANGELOG_PREFIX,
    CONSUMER_DIR,
    STATISTICS_DIR,
    millis,
)
from table_format.maintenance.results import OrphanCleanResult
from table_format.meta.snapshot import Snapshot
from table_format.store.file_store import FileStore

__all__ = [
    "OrphanCleanPlan",
    "delete_files",
    "finish_orphan_clean",
    "list_candidates",
    "plan_orphan_clean",
    "remove_orphan_files",
    "used_file_names",
]


def _cutoff_millis(store: FileStore, older_than: object, now_ms: int) -> int:
    if isinstance(older_than, _dt.timedelta):
        if older_than < _dt.timedelta(0):
            raise OptionError(f"table {store.identifier!r}: older_than must not be negative, got {older_than}")
        return now_ms - int(older_than.total_seconds() * 1000)
    if isinstance(older_than, _dt.datetime):
        cutoff = millis(older_than)
        if cutoff > now_ms:
            raise OptionError(
                f"table {store.identifier!r}: older_than {older_than} is in the future; files being written now "
                "would be deleted"
            )
        return cutoff
    raise OptionError(f"table {store.identifier!r}: older_than must be a timedelta or a datetime, got {older_than!r}")


def _is_temp(name: str) -> bool:
    return name.startswith(".") and name.endswith(".tmp")


class _UsedFiles:
    """Names referenced by snapshots/tags/changelogs; each manifest (list) is read once."""

    def __init__(self, store: FileStore) -> None:
        self.store = store
        self.names: set[str] = set()
        self._lists: set[str] = set()
        self._manifests: set[str] = set()
        self._index_manifests: set[str] = set()

    def add_snapshot(self, snap: Snapshot, *, optional_data_lists: bool = False) -> None:
        """Everything `snap` references. Tolerated when missing: the changelog manifest list (expired with its
        snapshot, while a tag keeps the rest) and, for long-lived changelogs, the base/delta lists; anything else
        missing raises CorruptMetadataError."""
        lists = []
        # a tag keeps its snapshot's data but not its changelog: that manifest list may have expired
        if snap.changelog_manifest_list and self.store.file_io.exists(
            self.store.paths.manifest(snap.changelog_manifest_list)
        ):
            lists.append(snap.changelog_manifest_list)
        for name in (snap.base_manifest_list, snap.delta_manifest_list):
            if optional_data_lists and not self.store.file_io.exists(self.store.paths.manifest(name)):
                continue
            lists.append(name)
        for list_name in lists:
            self.names.add(list_name)
            if list_name in self._lists:
                continue
            for meta in self.store.manifests.read_manifest_list(list_name):
                self.names.add(meta.file_name)
                if meta.file_name in self._manifests:
                    continue
                for e in self.store.manifests.read_manifest(meta.file_name):
                    self.names.add(e.file.file_name)
                    self.names.update(e.file.extra_files)
                self._manifests.add(meta.file_name)
            self._lists.add(list_name)
        if snap.index_manifest:
            self.names.add(snap.index_manifest)
            if snap.index_manifest not in self._index_manifests:
                for ie in self.store.manifests.read_index_manifest(snap.index_manifest):
                    self.names.add(ie.index_file.file_name)
                self._index_manifests.add(snap.index_manifest)
        if snap.statistics:
            self.names.add(snap.statistics)


def _versioned(statuses: Iterable[FileStatus], prefix: str) -> list[FileStatus]:
    return [st for st in statuses if not st.is_dir and st.name.startswith(prefix) and st.name[len(prefix):].isdigit()]


def _branch_roots(store: FileStore) -> list[str]:
    """The table root (main branch) and branch/branch-<name>/ (their metadata; data is shared at the root)."""
    roots = [store.paths.root]
    for st in store.file_io.list_dir(f"{store.paths.root}/{BRANCH_DIR}"):
        if st.is_dir and st.name.startswith(BRANCH_PREFIX):
            roots.append(st.path)
    for root in roots:
        if not _versioned(store.file_io.list_dir(f"{root}/schema"), SCHEMA_PREFIX):
            raise CorruptMetadataError(
                f"table {store.identifier!r}: branch directory {root} has no schema; orphan files cleaning aborted "
                "(check the branch by hand)"
            )
    return roots


def _collect_used(store: FileStore, roots: list[str]) -> set[str]:
    used = _UsedFiles(store)
    fio = store.file_io
    for root in roots:
        sources: list[tuple[str, bool]] = []  # (metadata file, is long-lived changelog)
        sources += [(st.path, False) for st in _versioned(fio.list_dir(f"{root}/snapshot"), SNAPSHOT_PREFIX)]
        sources += [(st.path, False) for st in fio.list_dir(f"{root}/tag")
                    if not st.is_dir and st.name.startswith(TAG_PREFIX)]
        sources += [(st.path, True) for st in _versioned(fio.list_dir(f"{root}/{CHANGELOG_DIR}"), CHANGELOG_PREFIX)]
        for path, changelog in sources:
            try:
                data = fio.read_bytes(path)
            except FileNotFoundError:  # expired or deleted meanwhile
                continue
            snap = Snapshot.from_json(data, source=path)
            try:
                used.add_snapshot(snap, optional_data_lists=changelog)
            except CorruptMetadataError as e:
                if not fio.exists(path):  # expired while we read it: its files are someone else's business now
                    continue
                raise CorruptMetadataError(
                    f"table {store.identifier!r}: {path} references a file that cannot be read ({e}); orphan files "
                    "cleaning refuses to guess what is used (expire the snapshot or repair the table first)"
                ) from None
    return used.names


def _data_dirs(store: FileStore) -> tuple[list[str], list[str]]:
    """(bucket directories, partition directories without any bucket directory), walking the partition depth."""
    fio = store.file_io
    buckets: list[str] = []
    empty_partitions: list[str] = []

    def walk(directory: str, level: int) -> bool:
        entries = fio.list_dir(directory)
        if level == 0:
            found = [st.path for st in entries if st.is_dir and st.name.startswith("bucket-")]
            buckets.extend(found)
            return bool(found)
        any_found = False
        for st in entries:
            if st.is_dir and "=" in st.name:
                if walk(st.path, level - 1):
                    any_found = True
                else:
                    empty_partitions.append(st.path)
        return any_found

    walk(store.paths.root, len(store.schema.partition_keys))
    return buckets, empty_partitions


@dataclass(frozen=True, slots=True)
class OrphanCleanPlan:
    """Where orphans may be; picklable: executors list `candidate_dirs` (`list_candidates`), one task each."""

    cutoff_millis: int  # files modified before this instant (epoch millis) may go
    roots: tuple[str, ...]  # the table root and its branch roots
    metadata_orphans: tuple[FileStatus, ...]  # stray files in snapshot/, changelog/, schema/, tag/, consumer/
    candidate_dirs: tuple[str, ...]  # manifest/, index/, statistics/ and every bucket directory
    bucket_dirs: tuple[str, ...]
    empty_partitions: tuple[str, ...]  # partition directories without any bucket directory
    abandoned_uploads: tuple[PendingUpload, ...] = ()  # multipart uploads in progress, started before the cut-off

    def old_enough(self, st: FileStatus) -> bool:
        return st.mtime_ns is not None and st.mtime_ns // 1_000_000 < self.cutoff_millis


def plan_orphan_clean(
    store: FileStore, *, older_than: _dt.timedelta | _dt.datetime = _dt.timedelta(days=1)
) -> OrphanCleanPlan:
    """Check the cut-off, list the metadata directories and walk the partition directories down to the buckets."""
    now_ms = int(time.time() * 1000)
    cutoff = _cutoff_millis(store, older_than, now_ms)
    fio = store.file_io
    roots = _branch_roots(store)
    plan = OrphanCleanPlan(cutoff, tuple(roots), (), (), (), ())
    orphans: list[FileStatus] = []
    # metadata directories: only files that are not metadata (temp files of atomic writes and strays)
    for root in roots:
        for st in fio.list_dir(f"{root}/snapshot"):
            if not st.is_dir and plan.old_enough(st) and not (
                st.name.startswith(SNAPSHOT_PREFIX) or st.name in (EARLIEST, LATEST)
            ):
                orphans.append(st)
        for st in fio.list_dir(f"{root}/{CHANGELOG_DIR}"):
            if not st.is_dir and plan.old_enough(st) and not (
                st.name.startswith(CHANGELOG_PREFIX) or st.name in (EARLIEST, LATEST)
            ):
                orphans.append(st)
        for sub in ("schema", "tag", CONSUMER_DIR):
            orphans.extend(st for st in fio.list_dir(f"{root}/{sub}")
                           if not st.is_dir and _is_temp(st.name) and plan.old_enough(st))
    bucket_dirs, empty_partitions = _data_dirs(store)
    candidate_dirs = [store.paths.manifest_dir, store.paths.index_dir, f"{store.paths.root}/{STATISTICS_DIR}"]
    candidate_dirs += bucket_dirs
    uploads = [u for u in fio.pending_uploads(store.paths.root) if u.initiated_ns // 1_000_000 < cutoff]
    return replace(plan, metadata_orphans=tuple(orphans), candidate_dirs=tuple(candidate_dirs),
                   bucket_dirs=tuple(bucket_dirs), empty_partitions=tuple(empty_partitions),
                   abandoned_uploads=tuple(uploads))


def list_candidates(store: FileStore, plan: OrphanCleanPlan, directory: str) -> list[FileStatus]:
    """The files of one candidate directory old enough to go (any process)."""
    return [st for st in store.file_io.list_dir(directory) if not st.is_dir and plan.old_enough(st)]


def used_file_names(store: FileStore, plan: OrphanCleanPlan) -> set[str]:
    """Every file name a snapshot, tag or long-lived changelog references (read after listing the candidates)."""
    return _collect_used(store, list(plan.roots))


def delete_files(store: FileStore, files: Iterable[FileStatus], *, dry_run: bool,
                 tracker: ProgressTracker | None = None) -> list[FileStatus]:
    """Delete the files (any process); returns those gone (a dry run: all of them)."""
    files = list(files)
    if dry_run:
        if tracker is not None:
            tracker.advance(len(files), sum(st.size for st in files))
        return files
    gone: list[FileStatus] = []
    for start in range(0, len(files), DELETE_CHUNK):  # object stores: one batch delete per chunk
        chunk = files[start:start + DELETE_CHUNK]
        deleted = set(store.file_io.delete_many([st.path for st in chunk]))
        gone += [st for st in chunk if st.path in deleted]
        if tracker is not None:
            tracker.advance(len(chunk), sum(st.size for st in chunk))
    return gone


def finish_orphan_clean(store: FileStore, plan: OrphanCleanPlan, orphans: Sequence[FileStatus],
                        deleted: Sequence[FileStatus], *, dry_run: bool) -> OrphanCleanResult:
    """Abort the abandoned multipart uploads, remove the data directories emptied (or empty and old); the result."""
    removed_dirs: list[str] = []
    aborted = list(plan.abandoned_uploads)  # a dry run reports them
    if not dry_run:
        aborted = store.file_io.abort_uploads(plan.abandoned_uploads)
        removed_dirs = _remove_empty_data_dirs(store, [st.path for st in deleted], list(plan.bucket_dirs),
                                               list(plan.empty_partitions), plan.old_enough)
    return OrphanCleanResult(
        orphan_files=tuple(st.path for st in orphans),
        deleted_files=tuple(st.path for st in deleted),
        bytes_freed=sum(st.size for st in deleted),
        dry_run=dry_run,
        removed_directories=tuple(removed_dirs),
        abandoned_uploads=tuple(u.path for u in plan.abandoned_uploads),
        aborted_uploads=tuple(u.path for u in aborted),
    )


def remove_orphan_files(
    store: FileStore,
    *,
    older_than: _dt.timedelta | _dt.datetime = _dt.timedelta(days=1),
    dry_run: bool = True,
    progress: ProgressCallback | None = None,
) -> OrphanCleanResult:
    """Delete unreferenced files older than `older_than` (an age, or an instant; naive = local time).

    ``progress`` hears of each orphan file deleted (at once for a dry run), with the files' sizes.
    """
    plan = plan_orphan_clean(store, older_than=older_than)
    candidates = [st for d in plan.candidate_dirs for st in list_candidates(store, plan, d)]
    orphans = list(plan.metadata_orphans)
    if candidates:
        used = used_file_names(store, plan)
        orphans.extend(st for st in candidates if st.name not in used)
    tracker = ProgressTracker(progress, "remove_orphan_files", files_total=len(orphans),
                              bytes_total=sum(st.size for st in orphans))
    deleted = delete_files(store, orphans, dry_run=dry_run, tracker=tracker)
    return finish_orphan_clean(store, plan, orphans, deleted, dry_run=dry_run)


def _remove_empty_data_dirs(
    store: FileStore, deleted: list[str], bucket_dirs: list[str], empty_partitions: list[str],
    old_enough: Callable[[FileStatus], bool],
) -> list[str]:
    """Remove bucket directories emptied now (or empty and old), then partition directories up the hierarchy."""
    fio = store.file_io
    root = store.paths.root
    bucket_set = set(bucket_dirs)
    tries = {posixpath.dirname(p) for p in deleted} & bucket_set
    for d in bucket_dirs:
        st = fio.status(d)
        if d not in tries and st is not None and old_enough(st) and not fio.list_dir(d):
            tries.add(d)
    for d in empty_partitions:
        st = fio.status(d)
        if st is not None and old_enough(st):
            tries.add(d)
    removed: list[str] = []
    level = set(tries)
    for _ in range(len(store.schema.partition_keys) + 1):
        parents = set()
        for d in sorted(level, key=lambda p: -p.count("/")):
            if d == root or not d.startswith(root + "/"):
                continue
            if fio.delete_empty_dir(d):
                removed.append(d)
                parents.add(posixpath.dirname(d))
        level = parents
        if not level:
            break
    return removed
