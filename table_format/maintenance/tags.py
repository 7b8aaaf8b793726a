"""Tags (tag/tag-<name>) and rollback.

Mirrors org.apache.paimon.utils.TagManager (createTag, deleteTag, tags), org.apache.paimon.operation.TagDeletion
and org.apache.paimon.table.RollbackHelper / AbstractFileStoreTable.rollbackTo of Paimon 0.9:

* create: the tag file is the snapshot's JSON; with a time retained (argument or ``tag.default-time-retained``)
  it is a Tag with ``tagCreateTime``/``tagTimeRetained`` (without one Java writes the plain snapshot so that
  readers <= 0.7 can read it). A tag of an expired snapshot may be made from another tag of that snapshot.
  Existing names are refused (Java >= 1.0; 0.9 silently rewrote a tag of the same snapshot).
* delete: drop the tag file; when its snapshot has expired and no other tag shares it, also delete the data and
  metadata files nobody else uses (protected: the neighbouring tag or snapshot on either side).
* rollback: delete the snapshots after the target and the files they added, the tags after it and the files only
  they used, their manifests/index files, set LATEST; rolling back to a tag whose snapshot expired restores the
  snapshot file from the tag and sets EARLIEST. Unlike 0.9 (which deleted every file ADDed by a removed snapshot,
  including files a compaction merely moved to another level), files live in the target are always kept.
"""

from __future__ import annotations

import contextlib
import datetime as _dt

from table_format.errors import (
    CorruptMetadataError,
    SchemaError,
    SnapshotNotFoundError,
    TagAlreadyExistsError,
    UnsupportedFeatureError,
)
from table_format.iceberg import sync_after_commit
from table_format.maintenance.branch_refs import keep_branch_files
from table_format.maintenance.deletion import (
    DeletionPlan,
    added_entries,
    clean_empty_directories,
    execute,
    plan_metadata,
)
from table_format.maintenance.references import (
    CHANGELOG_DIR,
    CHANGELOG_PREFIX,
    DataFileKey,
    bucket_dirs_upwards,
    data_file_paths,
    live_data_entries,
    live_data_files,
    metadata_refs,
    read_tag,
    remove_empty_dirs,
    tag_snapshot_or_raise,
    tagged_snapshots,
)
from table_format.maintenance.results import DeleteTagResult, RollbackResult
from table_format.meta.manifest import ManifestEntry
from table_format.meta.snapshot import Snapshot, tag_to_json
from table_format.options import parse_duration
from table_format.store.file_store import FileStore

__all__ = ["create_tag", "delete_tag", "list_tags", "rollback_to", "write_tag"]

_MAX_NAME = 200


def _check_tag_name(store: FileStore, name: object) -> str:
    if not isinstance(name, str) or not name.strip():
        raise SchemaError(f"table {store.identifier!r}: tag name {name!r} is blank")
    bad = [c for c in name if c in "/\\" or ord(c) < 32 or ord(c) == 127]
    if bad or name != name.strip() or name.startswith(".") or len(name) > _MAX_NAME:
        raise SchemaError(
            f"table {store.identifier!r}: invalid tag name {name!r}: it becomes the file name tag/tag-<name>, so it "
            f"must not contain '/', '\\' or control characters, start with '.', have surrounding spaces or be "
            f"longer than {_MAX_NAME} characters"
        )
    return name


def list_tags(store: FileStore) -> dict[str, int]:
    """Tag name -> snapshot id, ordered by snapshot id then name."""
    out: dict[str, int] = {}
    for snap, names in tagged_snapshots(store):
        for name in sorted(names):
            out[name] = snap.id
    return out


def _find_snapshot(store: FileStore, snapshot_id: int) -> Snapshot:
    """AbstractFileStoreTable.findSnapshot: the snapshot, or (once expired) a tag of it."""
    if store.snapshots.exists(snapshot_id):
        return store.snapshots.snapshot(snapshot_id)
    for snap, _ in tagged_snapshots(store):
        if snap.id == snapshot_id:
            return snap
    raise SnapshotNotFoundError(
        f"table {store.identifier!r}: cannot create tag because snapshot {snapshot_id} does not exist"
    )


def create_tag(
    store: FileStore,
    name: str,
    *,
    snapshot_id: int | None = None,
    time_retained: _dt.timedelta | None = None,
) -> int:
    """Tag a snapshot (default: the latest); returns its id. TagAlreadyExistsError if the name is taken."""
    _check_tag_name(store, name)
    if snapshot_id is None:
        snapshot = store.snapshots.latest()
        if snapshot is None:
            raise SnapshotNotFoundError(
                f"table {store.identifier!r}: cannot create tag {name!r} because the table has no snapshot"
            )
    else:
        if isinstance(snapshot_id, bool) or not isinstance(snapshot_id, int):
            raise SchemaError(f"table {store.identifier!r}: snapshot_id must be an integer, got {snapshot_id!r}")
        snapshot = _find_snapshot(store, snapshot_id)
    if time_retained is not None and (not isinstance(time_retained, _dt.timedelta)
                                      or time_retained < _dt.timedelta(0)):
        raise SchemaError(
            f"table {store.identifier!r}: time_retained must be a non-negative timedelta, got {time_retained!r}"
        )
    if not write_tag(store, name, snapshot, time_retained=time_retained):
        existing = read_tag(store, name)
        raise TagAlreadyExistsError(
            f"table {store.identifier!r}: tag {name!r} already exists"
            + (f" (on snapshot {existing.id})" if existing is not None else "")
        )
    sync_after_commit(store)  # Iceberg metadata: the tag as a ref
    return snapshot.id


def write_tag(store: FileStore, name: str, snapshot: Snapshot, *, time_retained: _dt.timedelta | None) -> bool:
    """Create tag file `name` of `snapshot` (TagManager.createTag); False when the name is taken.

    Without ``time_retained`` the option ``tag.default-time-retained`` applies; with neither, the tag is the plain
    snapshot JSON (readable by Paimon <= 0.7).
    """
    if time_retained is None and "tag.default-time-retained" in store.options.raw:
        time_retained = parse_duration(store.options.raw["tag.default-time-retained"],
                                       option="tag.default-time-retained")
    content = (
        tag_to_json(snapshot, _dt.datetime.now(), time_retained) if time_retained is not None else snapshot.to_json()
    )
    return store.file_io.try_create(store.paths.tag(name), content.encode())


def delete_tag(store: FileStore, name: str, *, dry_run: bool = False) -> DeleteTagResult:
    """Delete a tag (TagManager.deleteTag), and the files only it kept alive once its snapshot has expired.

    A dry run reports the same files and deletes nothing.
    """
    if not isinstance(name, str) or not name.strip():
        raise SchemaError(f"table {store.identifier!r}: tag name {name!r} is blank")
    tagged = tag_snapshot_or_raise(store, name)
    tag_path = store.paths.tag(name)
    if store.snapshots.exists(tagged.id):  # the snapshot still holds every file
        result = DeleteTagResult(name, tagged.id, tuple(execute(store, [tag_path], dry_run=dry_run)))
        if not dry_run:
            sync_after_commit(store)  # Iceberg metadata: the ref goes too
        return result

    tags = tagged_snapshots(store)  # read before the tag file goes
    deleted = execute(store, [tag_path], dry_run=dry_run)
    names = next((n for s, n in tags if s.id == tagged.id), [])
    if len(names) > 1:  # another tag of the same snapshot keeps everything
        return DeleteTagResult(name, tagged.id, tuple(deleted))

    # the nearest tag or snapshot on each side protects what it shares with the deleted tag
    neighbours = [s for s, _ in tags if s.id != tagged.id]
    snapshot_ids = store.snapshots.list_ids()
    left_candidates = [s for s in neighbours if s.id < tagged.id]
    right_candidates = [s for s in neighbours if s.id > tagged.id]
    left_snapshot = max((i for i in snapshot_ids if i < tagged.id), default=None)
    right_snapshot = min((i for i in snapshot_ids if i > tagged.id), default=None)
    left = max(left_candidates, key=lambda s: s.id, default=None)
    if left_snapshot is not None and (left is None or left_snapshot > left.id):
        left = store.snapshots.snapshot(left_snapshot)
    right = min(right_candidates, key=lambda s: s.id, default=None)
    if right_snapshot is not None and (right is None or right_snapshot < right.id):
        right = store.snapshots.snapshot(right_snapshot)
    skipped = [s for s in (left, right) if s is not None]

    plan = DeletionPlan()
    changed: set[tuple[bytes, int]] = set()
    try:
        protected: set[DataFileKey] = set()
        for s in skipped:
            protected |= live_data_files(store, s)
        entries: list[ManifestEntry] = live_data_entries(store, tagged)
    except CorruptMetadataError:  # cannot tell what is shared: keep the data files (TagManager.doClean)
        entries = []
    for e in entries:
        if (e.partition, e.bucket, e.file.file_name) not in protected:
            plan.add_all(data_file_paths(store, e))
            changed.add((e.partition, e.bucket))
    try:
        skip = set(metadata_refs(store, skipped).names)
    except CorruptMetadataError:
        skip = None
    if skip is not None:
        plan_metadata(store, tagged, skip, plan, changelog=False)
    deleted += execute(store, keep_branch_files(store, plan.paths), dry_run=dry_run)
    if not dry_run:
        _clean_dirs(store, changed)
    return DeleteTagResult(name, tagged.id, tuple(deleted))


def _clean_dirs(store: FileStore, changed: set[tuple[bytes, int]]) -> None:
    if changed and clean_empty_directories(store):
        dirs: list[str] = []
        for partition, bucket in changed:
            dirs.extend(bucket_dirs_upwards(store, partition, bucket))
        remove_empty_dirs(store, dirs)


def rollback_to(store: FileStore, *, snapshot_id: int | None = None, tag: str | None = None,
                dry_run: bool = False) -> RollbackResult:
    """Make the table's latest state a former snapshot or a tag (RollbackHelper.cleanLargerThan).

    A dry run reports what would be removed and changes nothing.
    """
    snapshots = store.snapshots
    if (snapshot_id is None) == (tag is None):
        raise SchemaError(f"table {store.identifier!r}: rollback_to needs exactly one of snapshot_id and tag")
    if tag is not None:
        target = tag_snapshot_or_raise(store, tag)
    else:
        if isinstance(snapshot_id, bool) or not isinstance(snapshot_id, int):
            raise SchemaError(f"table {store.identifier!r}: snapshot_id must be an integer, got {snapshot_id!r}")
        if not snapshots.exists(snapshot_id):
            raise SnapshotNotFoundError(
                f"table {store.identifier!r}: rollback snapshot {snapshot_id} does not exist"
            )
        target = snapshots.snapshot(snapshot_id)
    _refuse_long_lived_changelogs(store, target.id)

    removed = [snapshots.snapshot(i) for i in reversed(snapshots.list_ids()) if i > target.id]  # newest first
    tags = tagged_snapshots(store)
    removed_tags = [(s, names) for s, names in tags if s.id > target.id]
    keep = live_data_files(store, target)  # strict: it decides what survives

    plan = DeletionPlan()
    changed: set[tuple[bytes, int]] = set()

    def drop(entries: list[ManifestEntry]) -> None:
        for e in entries:
            if (e.partition, e.bucket, e.file.file_name) not in keep:
                plan.add_all(data_file_paths(store, e))
                changed.add((e.partition, e.bucket))

    # 1. snapshot files first: from now on nobody can read them
    for s in removed:
        plan.add(snapshots.paths.snapshot(s.id))
    # 2. files the removed snapshots added (data and changelog)
    for s in removed:
        drop(added_entries(store, s.delta_manifest_list))
        drop(added_entries(store, s.changelog_manifest_list))
    if removed and removed[-1].id > target.id + 1:
        # the target's successors expired: files of the oldest removed snapshot came from expired deltas
        with contextlib.suppress(CorruptMetadataError):
            drop(live_data_entries(store, removed[-1]))
    # 3. tags after the target, and the files only they used
    for _, names in removed_tags:
        for n in sorted(names):
            plan.add(store.paths.tag(n))
    for s, _ in removed_tags:
        try:
            drop(live_data_entries(store, s))
        except CorruptMetadataError:
            continue
    # 4. metadata of removed snapshots and tags not used by the target
    skip = set(metadata_refs(store, [target]).names)
    removed_ids = {s.id for s in removed}
    for s in removed:
        plan_metadata(store, s, skip, plan, changelog=True)
    for s, _ in removed_tags:
        if s.id not in removed_ids:
            plan_metadata(store, s, skip, plan, changelog=False)

    deleted = execute(store, keep_branch_files(store, plan.paths), dry_run=dry_run)
    removed_ids_sorted = tuple(sorted(s.id for s in removed))
    removed_tag_names = tuple(sorted(n for _, names in removed_tags for n in names))
    if dry_run:
        return RollbackResult(target.id, removed_ids_sorted, removed_tag_names, tuple(deleted))
    _clean_dirs(store, changed)
    snapshots.commit_latest_hint(target.id)
    if not snapshots.exists(target.id):  # a tag of an expired snapshot: restore the snapshot file
        if not snapshots.try_publish(target):
            raise CorruptMetadataError(
                f"table {store.identifier!r}: snapshot {target.id} appeared while rolling back to tag {tag!r}"
            )
        snapshots.commit_earliest_hint(target.id)
    sync_after_commit(store)
    return RollbackResult(target.id, removed_ids_sorted, removed_tag_names, tuple(deleted))


def _refuse_long_lived_changelogs(store: FileStore, target_id: int) -> None:
    changelog_dir = f"{store.paths.branch_root}/{CHANGELOG_DIR}"
    later = [
        st.name for st in store.file_io.list_dir(changelog_dir)
        if st.name.startswith(CHANGELOG_PREFIX) and st.name[len(CHANGELOG_PREFIX):].isdigit()
        and int(st.name[len(CHANGELOG_PREFIX):]) > target_id
    ]
    if later:
        raise UnsupportedFeatureError(
            f"table {store.identifier!r}: long-lived changelogs after snapshot {target_id} exist ({later[:3]}, "
            "decoupled changelog lifecycle); rolling them back is not supported"
        )
