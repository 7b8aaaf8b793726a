"""FileStoreCommit: turns CommitMessages into manifests, a manifest list pair and one snapshot, atomically.

Mirrors org.apache.paimon.operation.FileStoreCommitImpl: the new snapshot is published with
create-if-absent; when another committer took the id, everything is rebuilt on top of the new
latest snapshot and retried with exponential backoff. Conflicts (a file to delete is gone, bucket
counts changed under us) raise CommitConflictError. Manifests of a failed attempt are deleted, so
a failure leaves no visible trace.
Whether a publish that raised or reported "exists" landed anyway is settled in write/commit_recovery.py.
"""

from __future__ import annotations

import logging
import random
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass

from table_format.errors import (
    CommitConflictError,
    CommitFailedError,
    CommitOutcomeUnknownError,
    CorruptMetadataError,
    SnapshotNotFoundError,
)
from table_format.iceberg import check_iceberg_writable, sync_after_commit
from table_format.meta.manifest import (
    FileKind,
    IndexFileMeta,
    IndexManifestEntry,
    ManifestEntry,
    ManifestFileMeta,
)
from table_format.meta.snapshot import BATCH_COMMIT_IDENTIFIER, CommitKind, Snapshot
from table_format.store.file_store import FileStore
from table_format.write.commit_conflicts import PartitionFilter, check_conflicts, check_pinned
from table_format.write.commit_message import CommitMessage
from table_format.write.commit_recovery import (
    created_in_a_gap,
    delete_manifests,
    published_after_error,
    read_back_is_ours,
)

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class IndexChange:
    """Index files a commit adds and replaces, per (partition, bucket)."""

    added: tuple[tuple[bytes, int, IndexFileMeta], ...] = ()
    deleted: tuple[tuple[bytes, int, IndexFileMeta], ...] = ()


@dataclass(frozen=True, slots=True)
class Overwrite:
    """Replace the live files of the partitions accepted by `partitions` (None = whole table).

    With `base_snapshot_id` the overwrite is pinned to what it read (commit.strict-mode.last-safe-snapshot):
    a later commit touching those partitions makes it fail instead of being silently replaced.
    """

    partitions: PartitionFilter | None = None
    base_snapshot_id: int | None = None


def _entries(messages: Sequence[CommitMessage]) -> tuple[list[ManifestEntry], list[ManifestEntry]]:
    """(append entries, compact entries) in Java's order: DELETE before ADD for compaction."""
    append: list[ManifestEntry] = []
    compact: list[ManifestEntry] = []
    for m in messages:
        append.extend(ManifestEntry(FileKind.ADD, m.partition, m.bucket, m.total_buckets, f) for f in m.new_files)
        compact.extend(
            ManifestEntry(FileKind.DELETE, m.partition, m.bucket, m.total_buckets, f) for f in m.compact_before
        )
        compact.extend(ManifestEntry(FileKind.ADD, m.partition, m.bucket, m.total_buckets, f) for f in m.compact_after)
    return append, compact


def _index_change(messages: Sequence[CommitMessage]) -> IndexChange:
    return IndexChange(
        added=tuple((m.partition, m.bucket, f) for m in messages for f in m.new_index_files),
        deleted=tuple((m.partition, m.bucket, f) for m in messages for f in m.deleted_index_files),
    )


class FileStoreCommit:
    def __init__(self, store: FileStore, *, commit_user: str | None = None) -> None:
        self.store = store
        self.commit_user = commit_user or str(uuid.uuid4())

    def commit(
        self,
        messages: Sequence[CommitMessage],
        *,
        overwrite: Overwrite | None = None,
        commit_identifier: int = BATCH_COMMIT_IDENTIFIER,
    ) -> int | None:
        """Commit; returns the new snapshot id (the last one when two are written), None if nothing to do.

        A table with ``metadata.iceberg.storage`` gets its Iceberg metadata brought up to the new snapshot after it.
        """
        check_iceberg_writable(self.store)
        last = self._commit(messages, overwrite=overwrite, commit_identifier=commit_identifier)
        if last is not None:
            sync_after_commit(self.store)
        return last

    def _commit(self, messages: Sequence[CommitMessage], *, overwrite: Overwrite | None,
                commit_identifier: int) -> int | None:
        append, compact = _entries(messages)
        changelog = [ManifestEntry(FileKind.ADD, m.partition, m.bucket, m.total_buckets, f)
                     for m in messages for f in m.changelog_files]
        compact_changelog = [ManifestEntry(FileKind.ADD, m.partition, m.bucket, m.total_buckets, f)
                             for m in messages for f in m.compact_changelog]
        is_compaction = [bool(m.compact_before or m.compact_after) for m in messages]
        index = _index_change([m for m, c in zip(messages, is_compaction, strict=True) if not c])
        compact_index = _index_change([m for m, c in zip(messages, is_compaction, strict=True) if c])
        last: int | None = None
        if overwrite is not None:
            last = self._commit_with_retry(append, CommitKind.OVERWRITE, overwrite=overwrite,
                                           identifier=commit_identifier, index=index)
            # an overwrite commits no changelog (Java 0.9 ignores them with a warning): the files the writer made
            # for it (changelog-producer 'input', e.g. a rescale's rewrite) would be orphans
            for e in changelog:
                self.store.file_io.delete_quietly(self.store.data_file_path(e.partition, e.bucket, e.file.file_name,
                                                                            e.file.external_path))
        elif append or index.added or index.deleted:
            kind = CommitKind.OVERWRITE if any(e.kind == FileKind.DELETE for e in append) else CommitKind.APPEND
            last = self._commit_with_retry(append, kind, identifier=commit_identifier, index=index,
                                           changelog=changelog)
        if compact:
            try:
                last = self._commit_with_retry(compact, CommitKind.COMPACT, identifier=commit_identifier,
                                               index=compact_index, changelog=compact_changelog)
            except Exception as e:
                if last is None:
                    raise
                # The data landed in snapshot `last`; only the compaction written beside it (automatic compaction
                # after a write) failed, e.g. a concurrent compaction of the same bucket won. Raising would tell the
                # caller that nothing landed and make it delete or re-send committed data, so the compaction is
                # dropped instead: its new files go, the files it would have replaced stay live.
                if not isinstance(e, CommitOutcomeUnknownError):
                    self._delete_compaction_outputs([m for m, c in zip(messages, is_compaction, strict=True) if c])
                log.warning("table %r: data committed as snapshot %d; the compaction written with it was dropped: %s",
                            self.store.identifier, last, e)
        return last

    def _delete_compaction_outputs(self, messages: Sequence[CommitMessage]) -> None:
        store = self.store
        for m in messages:
            before = {f.file_name for f in m.compact_before}
            for f in (*m.compact_after, *m.compact_changelog):
                if f.file_name not in before:
                    store.file_io.delete_quietly(store.data_file_path(m.partition, m.bucket, f.file_name,
                                                                      f.external_path))
            for meta in m.new_index_files:
                store.file_io.delete_quietly(meta.external_path or store.paths.index_file(meta.file_name))

    # ---- the retry loop ------------------------------------------------------------------
    def _commit_with_retry(
        self,
        entries: list[ManifestEntry],
        kind: CommitKind,
        *,
        identifier: int,
        overwrite: Overwrite | None = None,
        index: IndexChange | None = None,
        changelog: Sequence[ManifestEntry] = (),
    ) -> int | None:
        opts = self.store.options
        wait = opts.commit_min_retry_wait.total_seconds()
        max_wait = opts.commit_max_retry_wait.total_seconds()
        for attempt in range(opts.commit_max_retries + 1):
            latest = self.store.snapshots.latest()
            try:
                delta = list(entries)
                if overwrite is not None:
                    check_pinned(self.store, latest, overwrite.base_snapshot_id, overwrite.partitions)
                    delta = self._overwrite_deletes(latest, overwrite) + delta
                    if not delta:
                        return None
                check_conflicts(self.store, latest, delta, kind)
                result = self._try_commit_once(latest, delta, kind, identifier, index=index, overwrite=overwrite,
                                               changelog=changelog)
            except (CorruptMetadataError, SnapshotNotFoundError):
                # the snapshot we built on was expired meanwhile (its manifests are gone): build on the new latest
                if latest is None or self.store.snapshots.exists(latest.id):
                    raise
                result = None
            if result is not None:
                return result
            if attempt < opts.commit_max_retries:
                time.sleep(min(max_wait, wait * (2**attempt)) * (1 + random.random() * 0.2))
        raise CommitFailedError(
            f"table {self.store.identifier!r}: commit gave up after {opts.commit_max_retries} retries "
            "(other writers kept taking the next snapshot id); nothing was committed"
        )

    def _overwrite_deletes(self, latest: Snapshot | None, overwrite: Overwrite) -> list[ManifestEntry]:
        accept = overwrite.partitions
        live = self.store.manifests.live_files(latest, partition_ok=accept)
        return [ManifestEntry(FileKind.DELETE, e.partition, e.bucket, e.total_buckets, e.file) for e in live]

    def _index_manifest(
        self, latest: Snapshot | None, index: IndexChange | None, overwrite: Overwrite | None, written: list[str]
    ) -> str | None:
        """The index manifest of the new snapshot (IndexManifestFileHandler): the previous one when unchanged."""
        store = self.store
        previous = latest.index_manifest if latest else None
        touched = index is not None and (index.added or index.deleted)
        if not touched and (overwrite is None or not previous):
            return previous
        live = {
            (e.partition, e.bucket, e.index_file.index_type, e.index_file.file_name): e
            for e in store.manifests.read_index_manifest(previous)
            if e.kind == FileKind.ADD
        }
        if overwrite is not None:
            accept = overwrite.partitions
            live = {k: e for k, e in live.items() if accept is not None and not accept(e.partition)}
        if index is not None:
            for partition, bucket, meta in index.deleted:
                key = (partition, bucket, meta.index_type, meta.file_name)
                if key not in live:
                    raise CommitConflictError(
                        f"table {store.identifier!r}: index file {meta.file_name} of bucket {bucket} was replaced "
                        "by a concurrent commit (dynamic bucket tables take one writer at a time)"
                    )
                del live[key]
            for partition, bucket, meta in index.added:
                if any(k[:3] == (partition, bucket, meta.index_type) for k in live):
                    raise CommitConflictError(
                        f"table {store.identifier!r}: a concurrent commit also assigned keys to bucket {bucket} "
                        "(dynamic bucket tables take one writer at a time)"
                    )
                live[(partition, bucket, meta.index_type, meta.file_name)] = IndexManifestEntry(
                    FileKind.ADD, partition, bucket, meta
                )
        if not live:
            return None
        name = store.manifests.write_index_manifest(list(live.values()))
        written.append(name)
        return name

    def _try_commit_once(
        self,
        latest: Snapshot | None,
        delta: list[ManifestEntry],
        kind: CommitKind,
        identifier: int,
        *,
        index: IndexChange | None = None,
        overwrite: Overwrite | None = None,
        changelog: Sequence[ManifestEntry] = (),
    ) -> int | None:
        store = self.store
        manifests = store.manifests
        schema_id = store.schemas.list_ids()[-1]
        written: list[str] = []
        try:
            index_manifest = self._index_manifest(latest, index, overwrite, written)
            previous: list[ManifestFileMeta] = manifests.data_manifests(latest) if latest else []
            base, merged_names = manifests.merge(previous, schema_id=schema_id)
            written.extend(merged_names)
            delta_metas = manifests.write_manifests(delta, schema_id=schema_id)
            written.extend(m.file_name for m in delta_metas)
            base_name, base_size = manifests.write_manifest_list(base)
            written.append(base_name)
            delta_name, delta_size = manifests.write_manifest_list(delta_metas)
            written.append(delta_name)
            changelog_name = changelog_size = changelog_count = None
            if changelog:
                changelog_metas = manifests.write_manifests(list(changelog), schema_id=schema_id)
                written.extend(m.file_name for m in changelog_metas)
                changelog_name, changelog_size = manifests.write_manifest_list(changelog_metas)
                written.append(changelog_name)
                changelog_count = sum(e.file.row_count for e in changelog)
            delta_count = sum(e.file.row_count if e.kind == FileKind.ADD else -e.file.row_count for e in delta)
            new_id = latest.id + 1 if latest else 1
            snapshot = Snapshot(
                id=new_id,
                schema_id=schema_id,
                base_manifest_list=base_name,
                base_manifest_list_size=base_size,
                delta_manifest_list=delta_name,
                delta_manifest_list_size=delta_size,
                changelog_manifest_list=changelog_name,
                changelog_manifest_list_size=changelog_size,
                changelog_record_count=changelog_count,
                index_manifest=index_manifest,
                commit_user=self.commit_user,
                commit_identifier=identifier,
                commit_kind=kind,
                time_millis=int(time.time() * 1000),
                total_record_count=(latest.total_record_count if latest and latest.total_record_count else 0)
                + delta_count,
                delta_record_count=delta_count,
                watermark=latest.watermark if latest else None,
            )
        except BaseException:
            delete_manifests(store, written)
            raise
        # The id must not have been used before: if the snapshot we built on was expired meanwhile, newer ones
        # exist, and snapshot-<new_id> may be one of them that expired too; creating it again would slip a
        # snapshot nobody builds on into a gap (and a LATEST hint pointing at it). Rebuild on the new latest.
        try:
            stale = (not store.snapshots.exists(latest.id)) if latest is not None else bool(store.snapshots.list_ids())
        except BaseException:
            delete_manifests(store, written)
            raise
        if stale:
            delete_manifests(store, written)
            return None
        try:
            published = store.snapshots.try_create(snapshot)
            if not published:
                # "exists" can be our own snapshot when the store retried a create whose reply was lost (NFS):
                # only another writer's content means we lost the race (RenamingSnapshotCommit does the same)
                published = read_back_is_ours(store, snapshot)
        except Exception as e:
            published = published_after_error(store, snapshot, e, written)
        except BaseException:
            raise  # interrupted while publishing: the snapshot may exist, so its manifests must stay (orphans if not)
        if not published:
            delete_manifests(store, written)
            return None
        for attempt in range(3):  # a transient read error must not turn a landed commit into an error
            try:
                in_a_gap = created_in_a_gap(store, latest, snapshot, delta)
                break
            except Exception as e:
                if attempt == 2:
                    raise CommitOutcomeUnknownError(
                        f"table {store.identifier!r}: snapshot {store.paths.snapshot(new_id)} was created but "
                        f"whether it extends the table or fills an expired id could not be told ({e}); its files "
                        "are kept"
                    ) from e
        if in_a_gap:
            store.file_io.delete_quietly(store.paths.snapshot(new_id))
            delete_manifests(store, written)
            return None
        store.snapshots.commit_latest_hint(new_id)
        if new_id == 1:
            store.snapshots.commit_earliest_hint(1)
        return new_id
