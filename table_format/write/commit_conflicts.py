"""Conflict checks of a commit against the snapshots committed since it started (ConflictDetection).

Mirrors FileStoreCommitImpl's checks: files added twice or deleted twice, bucket counts changed without an
overwrite, overlapping files in one LSM level after a compaction (PrimaryKeyConflictDetection); and two of ours:
a pinned overwrite refuses partitions changed after the snapshot it read, and new primary-key rows must number
after the live rows of the same keys. Each raises CommitConflictError naming the table.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from typing import Any

from table_format.errors import CommitConflictError, CorruptMetadataError, SnapshotNotFoundError
from table_format.meta.manifest import FileKind, ManifestEntry, merge_entries
from table_format.meta.snapshot import CommitKind, Snapshot
from table_format.options import BucketMode
from table_format.row.binary_row import decode_row
from table_format.store.file_store import FileStore

PartitionFilter = Callable[[bytes], bool]


def check_pinned(store: FileStore, latest: Snapshot | None, base: int | None, accept: PartitionFilter | None) -> None:
    """An overwrite pinned to snapshot `base` (commit.strict-mode.last-safe-snapshot) fails when a later snapshot
    touched the partitions it replaces (`accept`; None: every partition)."""
    if base is None or latest is None or latest.id == base:
        return
    for sid in range(base + 1, latest.id + 1):
        try:
            snap = store.snapshots.snapshot(sid)
            metas = store.manifests.read_manifest_list(snap.delta_manifest_list)
            entries = store.manifests.read_entries(metas)
        except (SnapshotNotFoundError, CorruptMetadataError):
            if store.snapshots.exists(sid):
                raise
            raise CommitConflictError(
                f"table {store.identifier!r}: snapshot {sid}, committed after the snapshot {base} this "
                "overwrite read, was expired before it could be checked; rerun it on the new data"
            ) from None
        for e in entries:
            if accept is None or accept(e.partition):
                raise CommitConflictError(
                    f"table {store.identifier!r}: snapshot {sid} changed the partitions this overwrite "
                    f"read at snapshot {base}; rerun it on the new data"
                )


def check_conflicts(store: FileStore, latest: Snapshot | None, delta: list[ManifestEntry], kind: CommitKind) -> None:
    """File conflicts (ConflictDetection): files added twice, deleted files already gone, bucket counts.

    Unlike Java, plain appends are checked too, so committing the same messages twice is refused.
    """
    deletes = [e for e in delta if e.kind == FileKind.DELETE]
    check_buckets = store.bucket_mode == BucketMode.FIXED and kind != CommitKind.OVERWRITE
    partitions = {e.partition for e in delta}
    live = store.manifests.live_files(latest, partition_ok=partitions.__contains__)
    try:
        merged = merge_entries([*live, *delta])
    except CorruptMetadataError as err:  # ADD of a file that is already live (e.g. messages committed twice)
        raise CommitConflictError(f"table {store.identifier!r}: file conflicts detected: {err}") from None
    if deletes:
        missing = [e.file.file_name for e in merged if e.kind == FileKind.DELETE]
        if missing:
            raise CommitConflictError(
                f"table {store.identifier!r}: file deletion conflicts detected, files {missing[:5]} were "
                "already removed by a concurrent commit; give up committing"
            )
    if kind == CommitKind.COMPACT and store.has_primary_key:
        _check_lsm(store, merged)
    elif store.has_primary_key and not store.options.sequence_fields:
        _check_sequence_order(store, live, delta)
    if check_buckets:
        existing = {e.partition: e.total_buckets for e in live if e.total_buckets > 0}
        for e in delta:
            if e.kind == FileKind.ADD and e.total_buckets > 0:
                prev = existing.get(e.partition)
                if prev is not None and prev != e.total_buckets:
                    values = dict(zip(store.schema.partition_keys, store.decode_partition(e.partition),
                                      strict=True))
                    raise CommitConflictError(
                        f"table {store.identifier!r}: total buckets of partition {values or '(whole table)'} "
                        f"changed from {prev} to {e.total_buckets} without overwrite"
                    )

def _check_sequence_order(store: FileStore, live: list[ManifestEntry], delta: list[ManifestEntry]) -> None:
    """New rows of a primary-key bucket must sort after the rows committed before them (not in Java).

    A writer numbers its rows from the bucket's highest sequence number when it started. If another writer
    committed rows of the same keys to the bucket meanwhile, both overlap in sequence numbers and the merge
    keeps whichever happens to number higher, not the later commit: a later upsert or delete could be undone
    by an earlier one (differently in every bucket). So a commit whose new files overlap a live file both in
    sequence numbers and in key range is refused; the caller writes it again on the new snapshot. Files this
    delta deletes (an overwrite) do not count; `sequence.field` tables order by their field instead.
    """
    new_files: dict[tuple[bytes, int], list[ManifestEntry]] = defaultdict(list)
    for e in delta:
        if e.kind == FileKind.ADD:
            new_files[(e.partition, e.bucket)].append(e)
    if not new_files:
        return
    deleted = {(e.partition, e.bucket, e.file.file_name) for e in delta if e.kind == FileKind.DELETE}
    floors = {k: min(e.file.min_sequence_number for e in v) for k, v in new_files.items()}
    key_types = store.key_types
    for old in live:
        key = (old.partition, old.bucket)
        floor = floors.get(key)
        if floor is None or old.file.max_sequence_number < floor or (*key, old.file.file_name) in deleted:
            continue
        old_min = decode_row(old.file.min_key, key_types)
        old_max = decode_row(old.file.max_key, key_types)
        for new in new_files[key]:
            if new.file.min_sequence_number > old.file.max_sequence_number:
                continue
            if decode_row(new.file.min_key, key_types) <= old_max and old_min <= decode_row(new.file.max_key,
                                                                                              key_types):
                values = dict(zip(store.schema.partition_keys, store.decode_partition(old.partition),
                                  strict=True))
                raise CommitConflictError(
                    f"table {store.identifier!r}: a concurrent commit wrote the same keys to bucket "
                    f"{old.bucket} of partition {values or '(whole table)'} (file {old.file.file_name}, "
                    f"sequence numbers up to {old.file.max_sequence_number}); the rows of this commit (file "
                    f"{new.file.file_name}, numbered from {new.file.min_sequence_number}) would not replace "
                    "them; write them again on the new snapshot"
                )

def _check_lsm(store: FileStore, merged: list[ManifestEntry]) -> None:
    """Files of one level >= 1 must not overlap in key range (PrimaryKeyConflictDetection)."""
    key_types = store.key_types
    runs: dict[tuple[bytes, int, int], list[tuple[Any, Any, str]]] = defaultdict(list)
    for e in merged:
        if e.kind == FileKind.ADD and e.file.level > 0:
            runs[(e.partition, e.bucket, e.file.level)].append(
                (decode_row(e.file.min_key, key_types), decode_row(e.file.max_key, key_types), e.file.file_name)
            )
    for (_, bucket, level), files in runs.items():
        files.sort()
        for a, b in zip(files, files[1:], strict=False):
            if not a[1] < b[0]:
                raise CommitConflictError(
                    f"table {store.identifier!r}: LSM conflicts detected in bucket {bucket} level {level}: "
                    f"files {a[2]} and {b[2]} overlap (a concurrent compaction); give up committing"
                )
