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

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from table_format.errors import OptionError, UnsupportedFeatureError
from table_format.maintenance.progress import ProgressCallback, ProgressTracker
from table_format.maintenance.results import RescaleResult
from table_format.options import BucketMode
from table_format.scan.planner import plan_splits
from table_format.scan.reader import SplitReader
from table_format.store.file_store import FileStore
from table_format.store.partition_spec import partition_spec_filter
from table_format.write.commit import FileStoreCommit, Overwrite, commit_landed
from table_format.write.commit_message import CommitMessage
from table_format.write.table_write import TableWrite


@dataclass(frozen=True, slots=True)
class RescaleTask:
    """Rewrite of one partition with the new bucket count; picklable for executors."""

    partition: bytes
    snapshot_id: int


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


def plan_rescale(store: FileStore, *, partitions: Sequence[Mapping[str, Any]] | None = None) -> list[RescaleTask]:
    snapshot = store.snapshots.latest()
    if snapshot is None:
        return []
    accept: Callable[[bytes], bool] | None = (
        partition_spec_filter(store, partitions) if partitions is not None else None
    )
    live = store.manifests.live_files(snapshot, entry_filter=None if accept is None else (lambda e: accept(e.partition)))
    return [RescaleTask(p, snapshot.id) for p in sorted({e.partition for e in live})]


def run_rescale_task(old: FileStore, new: FileStore, task: RescaleTask) -> tuple[list[CommitMessage], int]:
    """Read the partition's merged rows at the pinned snapshot and write them with the new bucket count."""
    snapshot = old.snapshots.snapshot(task.snapshot_id)
    splits = [s for s in plan_splits(old, snapshot, None) if s.partition == task.partition]
    reader = SplitReader(old)
    tables = [reader.read(s) for s in splits]
    rows = pa.concat_tables(tables) if tables else None
    writer = TableWrite(new, ignore_previous_files=True)
    try:
        if rows is not None and rows.num_rows:
            writer.write(rows)
        return writer.prepare_commit(), rows.num_rows if rows is not None else 0
    except BaseException:
        writer.abort()
        raise


def _partition_sizes(store: FileStore, snapshot_id: int) -> dict[bytes, tuple[int, int]]:
    """Partition -> (live files, bytes) at a snapshot: the units of rescale's progress."""
    sizes: dict[bytes, tuple[int, int]] = {}
    for e in store.manifests.live_files(store.snapshots.snapshot(snapshot_id)):
        files, nbytes = sizes.get(e.partition, (0, 0))
        sizes[e.partition] = (files + 1, nbytes + e.file.file_size)
    return sizes


def rescale(store: FileStore, *, bucket: int, partitions: Sequence[Mapping[str, Any]] | None = None,
            progress: ProgressCallback | None = None) -> tuple[RescaleResult, FileStore]:
    """Rescale; returns the result and the store of the new schema version.

    ``progress`` hears of each partition rewritten, counting the files (and bytes) it read.
    """
    if store.bucket_mode != BucketMode.FIXED:
        raise UnsupportedFeatureError(
            f"table {store.identifier!r}: rescale needs a fixed-bucket table (option 'bucket' > 0), "
            f"not bucket = {store.options.bucket}"
        )
    if not isinstance(bucket, int) or bucket <= 0:
        raise OptionError(f"table {store.identifier!r}: rescale bucket must be a positive integer, got {bucket!r}")
    tasks = plan_rescale(store, partitions=partitions)
    new_store = with_bucket_option(store, bucket)
    if not tasks:
        return RescaleResult(snapshot_id=None, bucket=bucket), new_store
    sizes = _partition_sizes(store, tasks[0].snapshot_id) if progress is not None else {}
    tracker = ProgressTracker(progress, "rescale", files_total=sum(f for f, _ in sizes.values()),
                              bytes_total=sum(b for _, b in sizes.values()))
    messages: list[CommitMessage] = []
    rows = 0
    committer = FileStoreCommit(new_store)
    try:
        for task in tasks:
            msgs, n = run_rescale_task(store, new_store, task)
            messages.extend(msgs)
            rows += n
            tracker.advance(*sizes.get(task.partition, (0, 0)))
        chosen = {t.partition for t in tasks}
        sid = committer.commit(
            messages, overwrite=Overwrite(lambda p: p in chosen, base_snapshot_id=tasks[0].snapshot_id)
        )
    except BaseException:
        if not commit_landed(new_store, committer.commit_user, tasks[0].snapshot_id):
            for m in messages:
                for f in m.new_files:
                    new_store.file_io.delete_quietly(new_store.data_file_path(m.partition, m.bucket, f.file_name))
        raise
    return RescaleResult(snapshot_id=sid, bucket=bucket, rewritten_partitions=len(tasks), rewritten_rows=rows), new_store
