"""Table compaction: plan one CompactTask per (partition, bucket), run them, commit one COMPACT snapshot.

The plan / run / commit split is the seam the Spark job uses: `plan_compaction` on the driver,
`run_compact_task` on executors, `commit_compaction` on the driver.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from table_format.data.deletion_vector import DELETION_VECTORS, DeletionFile
from table_format.maintenance.results import CompactResult
from table_format.meta.manifest import FileKind, IndexFileMeta, ManifestEntry
from table_format.meta.snapshot import Snapshot
from table_format.store.file_store import FileStore
from table_format.store.partition_spec import partition_spec_filter
from table_format.write.commit import FileStoreCommit
from table_format.write.commit_recovery import commit_landed
from table_format.write.compact_task import CompactOutcome, CompactTask, run_compact_task


def plan_compaction(
    store: FileStore, *, full: bool = False, partitions: Sequence[Mapping[str, Any]] | None = None
) -> list[CompactTask]:
    """One task per (partition, bucket) of the latest snapshot (optionally only some partitions)."""
    return store.snapshots.read_latest(lambda snapshot: _plan(store, snapshot, full, partitions))


def _plan(store: FileStore, snapshot: Snapshot | None, full: bool,
          partitions: Sequence[Mapping[str, Any]] | None) -> list[CompactTask]:
    if snapshot is None:
        return []
    accept: Callable[[bytes], bool] | None = (
        partition_spec_filter(store, partitions) if partitions is not None else None
    )
    live = store.manifests.live_files(
        snapshot, entry_filter=None if accept is None else (lambda e: accept(e.partition))
    )
    grouped: dict[tuple[bytes, int], list[ManifestEntry]] = defaultdict(list)
    for e in live:
        grouped[(e.partition, e.bucket)].append(e)
    dv_files: dict[tuple[bytes, int], IndexFileMeta] = {}
    for ie in store.manifests.read_index_manifest(snapshot.index_manifest):
        if ie.kind == FileKind.ADD and ie.index_file.index_type == DELETION_VECTORS:
            dv_files[(ie.partition, ie.bucket)] = ie.index_file
    tasks = []
    for (partition, bucket), entries in sorted(grouped.items(), key=lambda kv: kv[0]):
        files = tuple(e.file for e in entries)
        dv_index = dv_files.get((partition, bucket))
        deletion_files = None
        if dv_index is not None and dv_index.dv_ranges:
            path = dv_index.external_path or store.paths.index_file(dv_index.file_name)
            by_name = {r.data_file_name: DeletionFile(path, r.offset, r.length, r.cardinality)
                       for r in dv_index.dv_ranges}
            deletion_files = tuple(by_name.get(f.file_name) for f in files)
        tasks.append(CompactTask(partition, bucket, entries[0].total_buckets, files, full,
                                 deletion_files, dv_index))
    return tasks


def abort_compaction(store: FileStore, outcomes: Iterable[CompactOutcome]) -> None:
    """Delete the files of outcomes that will not be committed (another task failed)."""
    for o in outcomes:
        for p in o.written_paths:
            store.file_io.delete_quietly(p)


def commit_compaction(store: FileStore, outcomes: Iterable[CompactOutcome]) -> CompactResult:
    """One COMPACT snapshot of the outcomes' messages; when it fails and did not land, their files are deleted."""
    outcomes = [o for o in outcomes if o.message is not None]
    messages = [o.message for o in outcomes if o.message is not None]
    if not messages:
        return CompactResult(snapshot_id=None)
    committer = FileStoreCommit(store)
    base_id = store.snapshots.latest_id()
    try:
        sid = committer.commit(messages)
    except BaseException:
        if not commit_landed(store, committer.commit_user, base_id):  # never delete what a snapshot may use
            abort_compaction(store, outcomes)
        raise
    return CompactResult(
        snapshot_id=sid,
        rewritten_files=sum(o.rewritten_files for o in outcomes),
        upgraded_files=sum(o.upgraded_files for o in outcomes),
        new_files=sum(len(m.compact_after) for m in messages) - sum(o.upgraded_files for o in outcomes),
        compacted_buckets=len(messages),
    )


def compact(store: FileStore, *, full: bool = False,
            partitions: Sequence[Mapping[str, Any]] | None = None) -> CompactResult:
    """Compact locally: universal compaction per bucket, or everything to the max level with full=True.
    Rewritten files take the table's latest schema."""
    store = store.latest()
    tasks = plan_compaction(store, full=full, partitions=partitions)
    outcomes = []
    try:
        for task in tasks:
            outcomes.append(run_compact_task(store, task))
    except BaseException:
        abort_compaction(store, outcomes)
        raise
    return commit_compaction(store, outcomes)
