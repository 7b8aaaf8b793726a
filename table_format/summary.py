"""What one snapshot changed and the shape it left: files added and removed, sorted runs per bucket."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from table_format.errors import SnapshotNotFoundError
from table_format.meta.manifest import FileKind
from table_format.table import Table


@dataclass(frozen=True)
class SnapshotSummary:
    """One snapshot of a table, as a maintenance-minded reader wants it.

    ``files_added``/``files_removed`` count the data files of the snapshot's own delta (a compaction adds its
    output and removes its inputs). ``max_sorted_runs`` is the largest number of sorted runs of any bucket
    (each level-0 file is one run, each non-empty higher level one more); for append tables every file is a
    level-0 file, so it is the largest file count of a bucket.
    """

    snapshot_id: int
    schema_id: int
    commit_kind: str
    time_millis: int
    files_added: int
    files_removed: int
    delta_record_count: int
    total_record_count: int
    file_count: int
    total_file_size: int
    bucket_count: int
    max_sorted_runs: int
    delta_partitions: tuple[Mapping[str, Any], ...] = ()


def snapshot_summary(table: Table, snapshot_id: int | None = None) -> SnapshotSummary | None:
    """The summary of `snapshot_id` (default: the latest); None when the table has no snapshot yet."""
    store = table.store
    if snapshot_id is None:
        snapshot = store.snapshots.latest()
        if snapshot is None:
            return None
    else:
        try:
            snapshot = store.snapshots.snapshot(snapshot_id)
        except SnapshotNotFoundError as missing:
            raise SnapshotNotFoundError(f"table {table.identifier!r}: {missing}") from None
    delta = store.manifests.read_entries(
        store.manifests.read_manifest_list(snapshot.delta_manifest_list, size=snapshot.delta_manifest_list_size)
    )
    kinds = Counter(e.kind for e in delta)
    live = store.manifests.live_files(snapshot)
    level0: Counter[tuple[bytes, int]] = Counter()
    levels: defaultdict[tuple[bytes, int], set[int]] = defaultdict(set)
    for e in live:
        where = (e.partition, e.bucket)
        if e.file.level == 0:
            level0[where] += 1
        else:
            levels[where].add(e.file.level)
    buckets = set(level0) | set(levels)
    return SnapshotSummary(
        snapshot_id=snapshot.id,
        schema_id=snapshot.schema_id,
        commit_kind=snapshot.commit_kind.value,
        time_millis=snapshot.time_millis,
        files_added=kinds[FileKind.ADD],
        files_removed=kinds[FileKind.DELETE],
        delta_record_count=snapshot.delta_record_count,
        total_record_count=snapshot.total_record_count,
        file_count=len(live),
        total_file_size=sum(e.file.file_size for e in live),
        bucket_count=len(buckets),
        max_sorted_runs=max((level0[b] + len(levels[b]) for b in buckets), default=0),
        delta_partitions=tuple(table.partition_values(p) for p in sorted({e.partition for e in delta})),
    )
