"""Rescale: change the bucket count of a fixed-bucket table, or of chosen partitions, by rewriting them.

Mirrors Paimon's procedure (`ALTER TABLE ... SET ('bucket' = 'N')` then `INSERT OVERWRITE` of the
partitions, RescaleProcedure): a new schema version with the new `bucket` option is committed, the
merged rows of each selected partition are rewritten with the new hash distribution, and one
OVERWRITE snapshot replaces their files. Partitions left out keep their old bucket count (readers
use each file's `_TOTAL_BUCKETS`); writers refuse to append to them until they are rescaled too.
The rewrite is pinned to the snapshot it read: a concurrent commit to those partitions makes it fail
with CommitConflictError instead of losing rows.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from table_format.errors import OptionError, UnsupportedFeatureError
from table_format.maintenance.results import RescaleResult
from table_format.options import BucketMode
from table_format.scan.planner import plan_splits
from table_format.scan.reader import SplitReader
from table_format.store.file_store import FileStore
from table_format.store.partition_spec import partition_spec_filter
from table_format.write.commit import FileStoreCommit, Overwrite
from table_format.write.commit_message import CommitMessage
from table_format.write.commit_recovery import commit_landed
from table_format.write.table_write import TableWrite


@dataclass(frozen=True, slots=True)
class RescaleTask:
    """Rewrite of one partition with the new bucket count; picklable for executors."""

    partition: bytes
    snapshot_id: int  # the snapshot the rewrite reads (and the overwrite is pinned to)
    read_schema_id: int  # the schema version the partition was planned under (its old bucket count)
    size_bytes: int = 0  # the partition's live data files, to balance tasks


@dataclass(frozen=True, slots=True)
class RescaleOutcome:
    """What one RescaleTask wrote: its commit messages and the rows they hold."""

    messages: tuple[CommitMessage, ...]
    rows: int


def with_bucket_option(store: FileStore, bucket: int) -> FileStore:
    """Commit a new schema version whose `bucket` option is `bucket` (no-op if already so)."""
    if store.options.bucket == bucket:
        return store
    latest = store.schemas.latest()
    assert latest is not None
    options = dict(latest.options)
    options["bucket"] = str(bucket)
    new_schema = latest.with_options(options, new_id=latest.id + 1)
    if not store.schemas.commit(new_schema):
        raise OptionError(f"table {store.identifier!r}: another writer changed the schema concurrently; retry")
    return FileStore(identifier=store.identifier, file_io=store.file_io, paths=store.paths, schema=new_schema)


def plan_rescale(store: FileStore, *, bucket: int, partitions: Sequence[Mapping[str, Any]] | None = None) -> tuple[
    list[RescaleTask], FileStore
]:
    """Check the request, commit the schema version with the new bucket count, plan one task per partition.

    Returns the tasks and the store of the new schema version (the one the tasks run and commit with).
    """
    if store.bucket_mode != BucketMode.FIXED:
        raise UnsupportedFeatureError(
            f"table {store.identifier!r}: rescale needs a fixed-bucket table (option 'bucket' > 0), "
            f"not bucket = {store.options.bucket}"
        )
    if isinstance(bucket, bool) or not isinstance(bucket, int) or bucket <= 0:
        raise OptionError(f"table {store.identifier!r}: rescale bucket must be a positive integer, got {bucket!r}")
    snapshot = store.snapshots.latest()
    accept: Callable[[bytes], bool] | None = (
        partition_spec_filter(store, partitions) if partitions is not None else None
    )
    tasks: list[RescaleTask] = []
    if snapshot is not None:
        live = store.manifests.live_files(
            snapshot, entry_filter=None if accept is None else (lambda e: accept(e.partition))
        )
        sizes: dict[bytes, int] = {}
        for e in live:
            sizes[e.partition] = sizes.get(e.partition, 0) + e.file.file_size
        tasks = [RescaleTask(p, snapshot.id, store.schema.id, sizes[p]) for p in sorted(sizes)]
    return tasks, with_bucket_option(store, bucket)


def run_rescale_task(store: FileStore, task: RescaleTask) -> RescaleOutcome:
    """Read the partition's merged rows at the pinned snapshot and write them with `store`'s bucket count, a
    bounded part of a bucket at a time.

    Runs on any process; nothing is committed. On failure the files written so far are deleted.
    """
    old = FileStore(identifier=store.identifier, file_io=store.file_io, paths=store.paths,
                    schema=store.schema_by_id(task.read_schema_id))
    snapshot = old.snapshots.snapshot(task.snapshot_id)
    splits = [s for s in plan_splits(old, snapshot, None) if s.partition == task.partition]
    reader = SplitReader(old)
    writer = TableWrite(store, ignore_previous_files=True)
    rows = 0
    try:
        for split in splits:  # merged in key ranges (SplitReader.iter_read): bounded memory for a large bucket
            for part in reader.iter_read(split):
                if part.num_rows:
                    writer.write(part)
                    rows += part.num_rows
        return RescaleOutcome(tuple(writer.prepare_commit()), rows)
    except BaseException:
        writer.abort()
        raise


def partition_sizes(store: FileStore, tasks: Sequence[RescaleTask]) -> dict[bytes, tuple[int, int]]:
    """Partition -> (live files, bytes) read by the tasks: the units of rescale's progress."""
    if not tasks:
        return {}
    chosen = {t.partition for t in tasks}
    sizes: dict[bytes, tuple[int, int]] = {}
    for e in store.manifests.live_files(store.snapshots.snapshot(tasks[0].snapshot_id),
                                        entry_filter=lambda e: e.partition in chosen):
        files, nbytes = sizes.get(e.partition, (0, 0))
        sizes[e.partition] = (files + 1, nbytes + e.file.file_size)
    return sizes


def abort_rescale(store: FileStore, outcomes: Iterable[RescaleOutcome]) -> None:
    """Delete the files of outcomes that will not be committed."""
    for o in outcomes:
        for m in o.messages:
            for f in (*m.new_files, *m.changelog_files):
                store.file_io.delete_quietly(store.data_file_path(m.partition, m.bucket, f.file_name))


def commit_rescale(store: FileStore, tasks: Sequence[RescaleTask], outcomes: Sequence[RescaleOutcome]) -> RescaleResult:
    """One OVERWRITE snapshot replacing the tasks' partitions, pinned to the snapshot they read.

    When it fails and did not land, the outcomes' files are deleted.
    """
    bucket = store.options.bucket
    if not tasks:
        return RescaleResult(snapshot_id=None, bucket=bucket)
    messages = [m for o in outcomes for m in o.messages]
    chosen = {t.partition for t in tasks}
    committer = FileStoreCommit(store)
    try:
        sid = committer.commit(
            messages, overwrite=Overwrite(lambda p: p in chosen, base_snapshot_id=tasks[0].snapshot_id)
        )
    except BaseException:
        if not commit_landed(store, committer.commit_user, tasks[0].snapshot_id):
            abort_rescale(store, outcomes)
        raise
    return RescaleResult(snapshot_id=sid, bucket=bucket, rewritten_partitions=len(tasks),
                         rewritten_rows=sum(o.rows for o in outcomes))


def rescale(store: FileStore, *, bucket: int, partitions: Sequence[Mapping[str, Any]] | None = None) -> tuple[
    RescaleResult, FileStore
]:
    """Rescale locally; returns the result and the store of the new schema version."""
    tasks, new_store = plan_rescale(store, bucket=bucket, partitions=partitions)
    outcomes: list[RescaleOutcome] = []
    try:
        for task in tasks:
            outcomes.append(run_rescale_task(new_store, task))
    except BaseException:
        abort_rescale(new_store, outcomes)
        raise
    return commit_rescale(new_store, tasks, outcomes), new_store
