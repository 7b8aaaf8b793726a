"""Did a commit land? Answers for the ambiguous moments of publishing a snapshot.

A create whose reply was lost, a create-if-absent that reports "exists" for our own retried write, a snapshot
id re-used after expiration, a failed commit whose caller must decide whether its files may be deleted: each
is settled by reading the table back. Whatever cannot be told counts as landed, so no file a snapshot may use
is ever deleted (Java's commit idempotence check, RenamingSnapshotCommit).
"""

from __future__ import annotations

import time

from table_format.errors import (
    CommitFailedError,
    CommitOutcomeUnknownError,
    CorruptMetadataError,
    SnapshotNotFoundError,
)
from table_format.meta.manifest import FileKind, ManifestEntry, merge_entries
from table_format.meta.snapshot import Snapshot
from table_format.store.file_store import FileStore


def delete_manifests(store: FileStore, names: list[str]) -> None:
    """Delete the manifest files a commit attempt wrote (it did not land)."""
    for name in names:
        store.file_io.delete_quietly(store.paths.manifest(name))


def created_in_a_gap(store: FileStore, base: Snapshot | None, ours: Snapshot, delta: list[ManifestEntry]) -> bool:
    """Did the snapshot we just created re-use an id that had been taken and expired meanwhile?

    A committer that built on snapshot n (and was slow, e.g. descheduled) can find snapshot-<n+1> absent
    because a newer one exists and an expiration removed n and n+1 in the meantime; creating it then slips a
    snapshot nobody builds on below the real latest: a lost commit. Expiration deletes snapshot files oldest
    first, so while `base` still exists, n+1 cannot have been expired: the usual, one-`exists` answer. Else:
    our file already expired (others built on it), or ours is the newest: it landed; a successor n+2 that
    holds our changes in its base: it landed; anything else: a gap. (Not in Java, where the same race exists.)
    """
    snapshots = store.snapshots
    if base is not None and snapshots.exists(base.id):
        return False
    ids = snapshots.list_ids()
    if ours.id not in ids or not any(i > ours.id for i in ids):
        return False
    if ours.id + 1 not in ids:
        return True  # n+2 gone while ours is still there: expiration would have removed ours first
    successor = snapshots.snapshot(ours.id + 1)
    manifests = store.manifests
    entries = manifests.read_entries(manifests.read_manifest_list(successor.base_manifest_list))

    def ident(e: ManifestEntry) -> tuple[bytes, int, int, str]:
        return (e.partition, e.bucket, e.file.level, e.file.file_name)

    added = {ident(e) for e in delta if e.kind == FileKind.ADD}
    if added:
        return not added <= {ident(e) for e in entries if e.kind == FileKind.ADD}
    removed = {ident(e) for e in delta if e.kind == FileKind.DELETE}
    return bool(removed & {ident(e) for e in merge_entries(entries) if e.kind == FileKind.ADD})


def read_back_is_ours(store: FileStore, snapshot: Snapshot) -> bool:
    """Is snapshot-<id> as stored our snapshot (not another writer's, not absent or unreadable)?"""
    path = store.paths.snapshot(snapshot.id)
    try:
        existing = Snapshot.from_json(store.file_io.read_bytes(path), source=path)
    except (FileNotFoundError, CorruptMetadataError):
        return False
    return existing == snapshot


def published_after_error(store: FileStore, snapshot: Snapshot, error: Exception, written: list[str]) -> bool:
    """Publishing raised: did our snapshot land anyway (e.g. the reply of a successful create was lost)?

    Re-read snapshot-<id>: ours -> published; another writer's -> lost the race (retry); absent -> the
    create failed (manifests deleted, error raised). When that cannot be told, nothing is deleted and
    CommitOutcomeUnknownError is raised (RenamingSnapshotCommit / the commit idempotence check of Java).
    """
    path = store.paths.snapshot(snapshot.id)
    try:
        data = store.file_io.read_bytes(path)
    except FileNotFoundError:
        delete_manifests(store, written)
        raise CommitFailedError(
            f"table {store.identifier!r}: publishing snapshot {path} failed ({error}); nothing was committed"
        ) from error
    except Exception as e:
        raise CommitOutcomeUnknownError(
            f"table {store.identifier!r}: publishing snapshot {path} failed ({error}) and whether it landed "
            f"cannot be told ({e}); its files are kept: check the table before retrying"
        ) from error
    try:
        existing = Snapshot.from_json(data, source=path)
    except CorruptMetadataError:
        existing = None
    return existing == snapshot


def commit_landed(store: FileStore, commit_user: str, after_id: int | None) -> bool:
    """True when a snapshot newer than `after_id` was committed by `commit_user`, or when that cannot be told.

    Callers that clean up after a failed commit use it (Java's commit idempotence check): files of a commit that
    may have landed must never be deleted.
    """
    try:
        for sid in reversed(store.snapshots.list_ids()):
            if after_id is not None and sid <= after_id:
                return False
            snapshot = _read_settled(store, sid)
            if snapshot is None:
                continue  # expired meanwhile: older than ours would be
            if snapshot.commit_user == commit_user:
                return True
        return False
    except Exception:
        return True


def commit_identifier_of(store: FileStore, commit_user: str) -> int | None:
    """The commit identifier of the newest snapshot by `commit_user`; None when none is left."""
    for sid in reversed(store.snapshots.list_ids()):
        snapshot = _read_settled(store, sid)
        if snapshot is not None and snapshot.commit_user == commit_user:
            return snapshot.commit_identifier
    return None


def _read_settled(store: FileStore, sid: int, *, attempts: int = 10) -> Snapshot | None:
    """Snapshot `sid`, or None when it is gone; on a store without atomic puts a snapshot being written can read as
    truncated for a moment, so an unreadable one is read again before giving up (the error propagates)."""
    for attempt in range(attempts):
        try:
            return store.snapshots.snapshot(sid)
        except SnapshotNotFoundError:
            return None
        except CorruptMetadataError:
            if attempt == attempts - 1:
                raise
            time.sleep(0.02 * (attempt + 1))
    return None
