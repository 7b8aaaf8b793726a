"""Snapshot expiration: which snapshots go, and exactly which files go with them.

Mirrors org.apache.paimon.table.ExpireSnapshotsImpl (expire / expireUntil) and
org.apache.paimon.operation.SnapshotDeletion / FileDeletionBase of Paimon 0.9 (format digest section 10):

* which: ``[earliest, end)`` where ``end`` is bounded by ``snapshot.num-retained.max`` (forces expiry),
  ``snapshot.num-retained.min`` and consumers' ``nextSnapshot`` (protect), ``snapshot.expire.limit`` (at most that
  many per run, 10 by default) and ``snapshot.time-retained``: a snapshot may only expire once its successor is older than the
  limit (the rule of Paimon >= 1.0; 0.9 looked at the snapshot itself, which can expire a snapshot that was the
  latest one only a moment ago).
* data files: delta-driven. For every snapshot in ``(begin, end]`` the DELETE entries of its delta manifests that
  are not re-added in the same delta (level upgrades) name files no later snapshot uses; each is deleted unless the
  nearest tag before that snapshot still holds it. As a safety net (not in Java, never different on a consistent
  table) a file live in snapshot ``end`` is never deleted.
* changelog files: the ADD entries of the changelog manifests of the expired snapshots.
* metadata: manifest lists, manifests, index manifests, index files (HASH and DELETION_VECTORS) and statistics
  files of expired snapshots, except what snapshot ``end`` or a tag in the expired range references.
* the snapshot files are deleted first, oldest first, then the files above in that order, then the EARLIEST hint.

Java deletes the snapshot files last, so an interrupted run leaves snapshots whose files are partly gone. Deleting
them first means an interrupted run (a crash, a kill) leaves only unreferenced files, which remove_orphan_files
cleans; every snapshot still listed stays complete. A dry run computes the same lists and changes nothing.
"""

from __future__ import annotations

import datetime as _dt
import time
from collections.abc import Sequence
from dataclasses import dataclass

from table_format.errors import (
    CorruptMetadataError,
    OptionError,
    SnapshotNotFoundError,
    TableFormatError,
    UnsupportedFeatureError,
)
from table_format.iceberg import sync_after_commit
from table_format.io.paths import EARLIEST
from table_format.maintenance.branch_refs import keep_branch_files
from table_format.maintenance.consumers import consumer_min_next_snapshot
from table_format.maintenance.deletion import (
    DeletionPlan,
    added_entries,
    clean_empty_directories,
    execute,
    plan_metadata,
)
from table_format.maintenance.progress import ProgressCallback, ProgressTracker
from table_format.maintenance.references import (
    CONSUMER_DIR,
    CONSUMER_PREFIX,
    DataFileKey,
    bucket_dirs_upwards,
    data_file_paths,
    live_data_files,
    metadata_refs,
    millis,
    remove_empty_dirs,
    tagged_snapshots,
    try_read_manifest,
    try_read_manifest_list,
)
from table_format.maintenance.results import ExpireResult
from table_format.meta.manifest import FileKind, ManifestEntry
from table_format.meta.snapshot import Snapshot
from table_format.options import parse_duration
from table_format.store.file_store import FileStore

__all__ = [
    "ExpirePlan",
    "check_expire_options",
    "delete_snapshot_files",
    "expire_consumers",
    "expire_snapshots",
    "finish_expiration",
    "plan_expiration",
    "run_expiration",
]

_INT_MAX = 2147483647


@dataclass(frozen=True, slots=True)
class ExpirePlan:
    """What an expiration deletes, in order; picklable, so that executors can delete `file_paths` in chunks."""

    earliest_kept: int | None  # the earliest snapshot after expiration (None: the table has no snapshot)
    expired_snapshots: tuple[int, ...] = ()
    snapshot_files: tuple[str, ...] = ()  # deleted first, oldest first, by the driver
    file_paths: tuple[str, ...] = ()  # data, changelog and metadata files only the expired snapshots used
    changed_buckets: tuple[tuple[bytes, int], ...] = ()  # (partition, bucket) whose directories may become empty


def _option_int(store: FileStore, name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise OptionError(f"table {store.identifier!r}: {name} must be an integer, got {value!r}")
    return value


def _threshold_millis(store: FileStore, older_than: object, now_ms: int) -> int:
    """Snapshots whose successor was committed before this instant (epoch millis) may expire."""
    if older_than is None:
        return now_ms - int(store.options.snapshot_time_retained.total_seconds() * 1000)
    if isinstance(older_than, _dt.timedelta):
        if older_than < _dt.timedelta(0):
            raise OptionError(f"table {store.identifier!r}: older_than must not be negative, got {older_than}")
        return now_ms - int(older_than.total_seconds() * 1000)
    if isinstance(older_than, _dt.datetime):
        return millis(older_than)
    raise OptionError(
        f"table {store.identifier!r}: older_than must be a datetime, a timedelta or None, got {older_than!r}"
    )


def _refuse_decoupled_changelog(store: FileStore, retain_min: int, retain_max: int, retained_ms: int) -> None:
    """ExpireConfig.isChangelogDecoupled: longer changelog retention keeps changelog/changelog-N files we do not
    write, so refuse instead of half-honouring it."""
    raw = store.options.raw
    reasons = []
    try:
        if int(raw.get("changelog.num-retained.min", retain_min)) > retain_min:
            reasons.append("changelog.num-retained.min")
        if int(raw.get("changelog.num-retained.max", retain_max)) > retain_max:
            reasons.append("changelog.num-retained.max")
    except ValueError as e:
        raise OptionError(f"table {store.identifier!r}: changelog.num-retained.* is not an integer ({e})") from None
    if "changelog.time-retained" in raw:
        changelog_ms = parse_duration(raw["changelog.time-retained"], option="changelog.time-retained")
        if changelog_ms.total_seconds() * 1000 > retained_ms:
            reasons.append("changelog.time-retained")
    if reasons:
        raise UnsupportedFeatureError(
            f"table {store.identifier!r}: options {reasons} retain changelogs longer than snapshots (decoupled "
            "changelog lifecycle, changelog/changelog-N files); this implementation does not support it"
        )


def check_expire_options(store: FileStore) -> None:
    """Refuse, before anything happens, table options the expiration cannot honour (decoupled changelogs)."""
    opts = store.options
    _refuse_decoupled_changelog(store, opts.snapshot_num_retained_min, opts.snapshot_num_retained_max,
                                int(opts.snapshot_time_retained.total_seconds() * 1000))


def expire_consumers(store: FileStore, *, older_than: _dt.datetime) -> tuple[str, ...]:
    """Delete consumer files last modified before `older_than` (naive = local time); ConsumerManager.expire.

    Returns the ids of the deleted consumers. Consumers pin snapshots (``nextSnapshot``), so Java expires them
    before the snapshots.
    """
    threshold_ns = millis(older_than) * 1_000_000
    deleted = []
    for st in store.file_io.list_dir(f"{store.paths.branch_root}/{CONSUMER_DIR}"):
        if st.is_dir or not st.name.startswith(CONSUMER_PREFIX) or st.mtime_ns is None:
            continue
        # Java compares at millisecond precision (FileStatus.getModificationTime)
        if (st.mtime_ns // 1_000_000) * 1_000_000 < threshold_ns and store.file_io.delete_quietly(st.path):
            deleted.append(st.name[len(CONSUMER_PREFIX):])
    return tuple(sorted(deleted))


def expire_snapshots(
    store: FileStore,
    *,
    retain_min: int | None = None,
    retain_max: int | None = None,
    older_than: _dt.datetime | _dt.timedelta | None = None,
    max_deletes: int | None = None,
    dry_run: bool = True,
    progress: ProgressCallback | None = None,
) -> ExpireResult:
    """Expire old snapshots and delete the files only they used (ExpireSnapshotsImpl.expire).

    None means the table option: ``snapshot.num-retained.min`` (10), ``snapshot.num-retained.max``
    (unbounded), ``snapshot.time-retained`` (1 h), ``snapshot.expire.limit`` (10). ``older_than`` is an instant
    (datetime; naive = local time) or an age (timedelta): a snapshot may expire once its successor is older.
    """
    plan = plan_expiration(store, retain_min=retain_min, retain_max=retain_max, older_than=older_than,
                           max_deletes=max_deletes)
    return run_expiration(store, plan, dry_run=dry_run, progress=progress)


def plan_expiration(
    store: FileStore,
    *,
    retain_min: int | None = None,
    retain_max: int | None = None,
    older_than: _dt.datetime | _dt.timedelta | None = None,
    max_deletes: int | None = None,
) -> ExpirePlan:
    """Which snapshots expire and which files go with them, in deletion order; changes nothing."""
    earliest, end = _expiration_bounds(store, retain_min=retain_min, retain_max=retain_max, older_than=older_than,
                                       max_deletes=max_deletes, honour_consumers=True)
    return ExpirePlan(earliest_kept=None) if earliest is None else _plan_until(store, earliest, end)


def expirable_without_consumers(store: FileStore) -> range:
    """The snapshot ids the table's retention options would expire now if no consumer pinned any (a consumer
    whose ``nextSnapshot`` lies in it holds back what retention would remove)."""
    earliest, end = _expiration_bounds(store, retain_min=None, retain_max=None, older_than=None, max_deletes=None,
                                       honour_consumers=False)
    return range(0) if earliest is None else range(earliest, end)


def _expiration_bounds(
    store: FileStore, *, retain_min: int | None, retain_max: int | None,
    older_than: _dt.datetime | _dt.timedelta | None, max_deletes: int | None, honour_consumers: bool,
) -> tuple[int | None, int]:
    """``(earliest, end)``: retention expires snapshots ``[earliest, end)`` now; earliest None on an empty table."""
    opts = store.options
    rmin = opts.snapshot_num_retained_min if retain_min is None else _option_int(store, "retain_min", retain_min)
    rmax = opts.snapshot_num_retained_max if retain_max is None else _option_int(store, "retain_max", retain_max)
    limit = opts.snapshot_expire_limit if max_deletes is None else _option_int(store, "max_deletes", max_deletes)
    if rmin < 1:
        raise OptionError(f"table {store.identifier!r}: retain_min must be at least 1, got {rmin}")
    if rmax < rmin:
        raise OptionError(f"table {store.identifier!r}: retain_max ({rmax}) must not be less than retain_min ({rmin})")
    if limit < 0:
        raise OptionError(f"table {store.identifier!r}: max_deletes must not be negative, got {limit}")
    now_ms = int(time.time() * 1000)
    threshold = _threshold_millis(store, older_than, now_ms)
    _refuse_decoupled_changelog(store, rmin, rmax, now_ms - threshold)

    snapshots = store.snapshots
    latest = snapshots.latest_id()
    earliest = snapshots.earliest_id()
    if latest is None or earliest is None:
        return None, 0

    min_id = max(latest - rmax + 1, earliest)  # older ones go whatever their age (num-retained.max)
    max_exclusive = latest - rmin + 1  # num-retained.min
    consumer = consumer_min_next_snapshot(store) if honour_consumers else None
    if consumer is not None:  # a consumer still reads from this snapshot on
        max_exclusive = min(max_exclusive, consumer)
    max_exclusive = min(max_exclusive, earliest + limit)  # snapshot.expire.limit
    end = max_exclusive
    for sid in range(min_id, max_exclusive):
        try:
            successor = snapshots.snapshot(sid + 1)
        except SnapshotNotFoundError:
            continue
        if threshold <= successor.time_millis:  # time-retained: the successor is still young
            end = sid
            break
    return earliest, end


def _plan_until(store: FileStore, earliest: int, end_exclusive: int) -> ExpirePlan:
    """Expire snapshots ``[begin, end_exclusive)`` (ExpireSnapshotsImpl.expireUntil): the plan; reads metadata only."""
    snapshots = store.snapshots
    if end_exclusive <= earliest:
        return ExpirePlan(earliest_kept=earliest)

    begin = earliest
    for sid in range(end_exclusive - 1, earliest - 1, -1):
        if not snapshots.exists(sid):  # only later snapshots are kept, so everything before is gone
            begin = sid + 1
            break
    if begin >= end_exclusive:
        return ExpirePlan(earliest_kept=end_exclusive)

    end_snapshot = snapshots.snapshot(end_exclusive)
    expired = [snapshots.snapshot(sid) for sid in range(begin, end_exclusive)]
    tags = [snap for snap, _ in tagged_snapshots(store)]
    plan = DeletionPlan()

    # 1. data files no snapshot from `end` on uses (deltas of (begin, end]), unless the previous tag holds them
    end_live = live_data_files(store, end_snapshot)
    changed_buckets: set[tuple[bytes, int]] = set()
    tag_cache: dict[int, set[DataFileKey] | None] = {}
    for snap in [*expired[1:], end_snapshot]:
        previous_tag = next((t for t in reversed(tags) if t.id < snap.id), None)
        protected: set[DataFileKey] = set()
        if previous_tag is not None:
            if previous_tag.id not in tag_cache:
                try:
                    tag_cache[previous_tag.id] = live_data_files(store, previous_tag)
                except CorruptMetadataError:  # cannot build the skipping set: keep this snapshot's files
                    tag_cache[previous_tag.id] = None
            cached = tag_cache[previous_tag.id]
            if cached is None:
                continue
            protected = cached
        for entry in _unused_after(store, snap):
            key = (entry.partition, entry.bucket, entry.file.file_name)
            if key in protected or key in end_live:
                continue
            plan.add_all(data_file_paths(store, entry))
            changed_buckets.add((entry.partition, entry.bucket))

    # 2. changelog files of the expired snapshots
    for snap in expired:
        for entry in added_entries(store, snap.changelog_manifest_list):
            plan.add_all(data_file_paths(store, entry))
            changed_buckets.add((entry.partition, entry.bucket))

    # 3. metadata not used by `end` or by a tag overlapping the expired range
    skipping = [*_overlapped(tags, begin, end_exclusive), end_snapshot]
    skip = set(metadata_refs(store, skipping).names)
    for snap in expired:
        plan_metadata(store, snap, skip, plan, changelog=True)
    return ExpirePlan(
        earliest_kept=end_exclusive,
        expired_snapshots=tuple(s.id for s in expired),
        snapshot_files=tuple(store.paths.snapshot(snap.id) for snap in expired),
        file_paths=tuple(keep_branch_files(store, plan.paths)),  # what other branches use stays
        changed_buckets=tuple(sorted(changed_buckets)),
    )


def run_expiration(store: FileStore, plan: ExpirePlan, *, dry_run: bool,
                   progress: ProgressCallback | None = None) -> ExpireResult:
    """Carry out a plan locally: the snapshot files, then the other files in order, then `finish_expiration`.

    ``progress`` hears of each file deleted (or checked, in a dry run); sizes are not known (bytes_total None).
    """
    tracker = ProgressTracker(progress, "expire_snapshots",
                              files_total=len(plan.snapshot_files) + len(plan.file_paths), bytes_total=None)
    if dry_run:
        deleted = execute(store, plan.snapshot_files + plan.file_paths, dry_run=True, tracker=tracker)
    else:
        deleted = delete_snapshot_files(store, plan)
        tracker.advance(len(plan.snapshot_files))
        deleted += execute(store, plan.file_paths, dry_run=False, tracker=tracker)
    return finish_expiration(store, plan, deleted, dry_run=dry_run)


def delete_snapshot_files(store: FileStore, plan: ExpirePlan) -> list[str]:
    """Delete the expired snapshot files first, oldest first: an interrupted run then leaves only unreferenced files
    (orphans that remove_orphan_files cleans), never a snapshot whose files are partly gone."""
    deleted = []
    for path in plan.snapshot_files:
        if store.file_io.delete_quietly(path):
            deleted.append(path)
        elif store.file_io.exists(path):  # still there: its files must stay too
            raise TableFormatError(
                f"table {store.identifier!r}: could not delete snapshot file {path}; expiration stopped before "
                "deleting any other file (files of the snapshots removed so far are orphans: "
                "remove_orphan_files cleans them)"
            )
    return deleted


def finish_expiration(store: FileStore, plan: ExpirePlan, deleted: Sequence[str], *, dry_run: bool) -> ExpireResult:
    """After the files are gone: empty bucket directories (option), the EARLIEST hint; the result."""
    if plan.earliest_kept is None:  # no snapshot at all
        return ExpireResult((), (), dry_run, None)
    if not plan.expired_snapshots:
        if not dry_run and not store.file_io.exists(f"{store.paths.snapshot_dir}/{EARLIEST}"):
            store.snapshots.commit_earliest_hint(plan.earliest_kept)
        return ExpireResult((), (), dry_run, plan.earliest_kept)
    if not dry_run:
        if clean_empty_directories(store) and plan.changed_buckets:
            dirs: list[str] = []
            for partition, bucket in plan.changed_buckets:
                dirs.extend(bucket_dirs_upwards(store, partition, bucket))
            remove_empty_dirs(store, dirs)
        store.snapshots.commit_earliest_hint(plan.earliest_kept)
        sync_after_commit(store)  # Iceberg metadata drops the expired snapshots too
    return ExpireResult(
        expired_snapshots=plan.expired_snapshots,
        deleted_files=tuple(deleted),
        dry_run=dry_run,
        earliest_snapshot_id=plan.earliest_kept,
    )


# ---- helpers ------------------------------------------------------------------------------------------------------


def _unused_after(store: FileStore, snapshot: Snapshot) -> list[ManifestEntry]:
    """DELETE entries of the snapshot's delta not re-added in it (getDataFileToDelete): files it stops using.

    Keyed by data file path, in manifest order, so DELETE-then-ADD of the same file (a level upgrade) keeps it.
    A delta manifest that cannot be read cancels the deletion for this snapshot (cleanUnusedDataFiles).
    """
    to_delete: dict[str, ManifestEntry] = {}
    for meta in try_read_manifest_list(store, snapshot.delta_manifest_list):
        entries = try_read_manifest(store, meta.file_name)
        if entries is None:
            return []
        for e in entries:
            path = store.data_file_path(e.partition, e.bucket, e.file.file_name, e.file.external_path)
            if e.kind == FileKind.ADD:
                to_delete.pop(path, None)
            else:
                to_delete[path] = e
    return list(to_delete.values())


def _overlapped(tags: list[Snapshot], begin: int, end_exclusive: int) -> list[Snapshot]:
    """SnapshotManager.findOverlappedSnapshots: from the last tag <= begin to the last tag < end."""
    right = max((i for i, t in enumerate(tags) if t.id < end_exclusive), default=-1)
    if right < 0:
        return []
    left = max(max((i for i, t in enumerate(tags) if t.id <= begin), default=-1), 0)
    return tags[left : right + 1]
