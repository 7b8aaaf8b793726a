"""Which files an incremental read reads together, planned as Paimon 0.9's audit log plans them.

* IncrementalStartingScanner: for every snapshot in (start, end] the ADD files of ScanMode.CHANGELOG (a changelog
  producer is set: the changelog files of every snapshot but OVERWRITE) or ScanMode.DELTA (no producer: the files of
  APPEND commits). Primary-key tables with deletion vectors or first-row see only files of level > 0
  (DataTableBatchScan's level filter). Files are grouped by (partition, bucket, deletion files of their snapshot's
  split) over the whole range; every group goes through the batch split generator and is read merged
  (DeletionFile.factory pairs a split's files with those deletion files by position, and fails when they are fewer).
* MergeTreeSplitGenerator.splitForBatch / BinPacking.packForOrdered: which files are read together.
* IntervalPartition: the sections of sorted runs a merged read goes through, runs in java.util.PriorityQueue order,
  then MergeSorter's spill order.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from typing import Any, TypeVar

from table_format.data.deletion_vector import DeletionFile, deletion_files_of
from table_format.errors import UnsupportedFeatureError
from table_format.meta.manifest import DataFileMeta, FileKind, ManifestEntry, merge_entries
from table_format.meta.snapshot import CommitKind
from table_format.options import ChangelogProducer, MergeEngine, parse_memory_size
from table_format.row.binary_row import decode_row
from table_format.store.file_store import FileStore

T = TypeVar("T")


# ---- scan: IncrementalStartingScanner ------------------------------------------------------------------------------
def grouped_files(store: FileStore, start: int, end: int, *,
                  all_levels: bool = False) -> dict[tuple[bytes, int, Any], list[ManifestEntry]]:
    opts = store.options
    mode = opts.raw.get("incremental-between-scan-mode", "auto").strip().lower()
    changelog = mode == "changelog" or (mode == "auto" and opts.changelog_producer != ChangelogProducer.NONE)
    skip_level0 = not all_levels and store.has_primary_key and (
        opts.deletion_vectors_enabled or opts.merge_engine == MergeEngine.FIRST_ROW
    )
    grouped: dict[tuple[bytes, int, Any], list[ManifestEntry]] = defaultdict(list)
    for sid in range(start + 1, end + 1):
        snapshot = store.snapshots.snapshot(sid)
        if changelog:
            if snapshot.commit_kind == CommitKind.OVERWRITE or not snapshot.changelog_manifest_list:
                continue
            manifest_list = snapshot.changelog_manifest_list
        elif snapshot.commit_kind == CommitKind.APPEND:
            manifest_list = snapshot.delta_manifest_list
        else:
            continue
        metas = store.manifests.read_manifest_list(manifest_list)
        entries = [e for e in merge_entries(store.manifests.read_entries(metas)) if e.kind == FileKind.ADD]
        if skip_level0:
            entries = [e for e in entries if e.file.level > 0]
        per_bucket: dict[tuple[bytes, int], list[ManifestEntry]] = defaultdict(list)
        for e in entries:
            per_bucket[(e.partition, e.bucket)].append(e)
        dvs = deletion_files_of(store, snapshot) if opts.deletion_vectors_enabled and per_bucket else None
        for (partition, bucket), bucket_entries in per_bucket.items():
            # SplitInfo: a split's deletion files (one per file, mostly None) are part of the grouping key
            dv_key = None if dvs is None else tuple(
                dvs.get((partition, bucket, e.file.file_name)) for e in bucket_entries
            )
            grouped[(partition, bucket, dv_key)].extend(bucket_entries)
    return grouped


def split_deletion_files(store: FileStore, split: list[DataFileMeta],
                         dv_key: tuple[DeletionFile | None, ...] | None) -> dict[str, DeletionFile]:
    """DeletionFile.factory(files, deletionFiles) of a split built by IncrementalStartingScanner: the deletion files
    of the group's first snapshot split, matched to the split's files by position (a 0.9 quirk)."""
    if dv_key is None:
        return {}
    if len(split) > len(dv_key):  # Java 0.9 fails with IndexOutOfBoundsException here
        raise UnsupportedFeatureError(
            f"table {store.identifier!r}: Paimon 0.9 cannot read these incremental changes of a table with deletion "
            f"vectors: a split of {len(split)} files has the deletion files of a snapshot split of {len(dv_key)}; "
            "read a range of one snapshot at a time"
        )
    return {f.file_name: d for f, d in zip(split, dv_key, strict=False) if d is not None}


# ---- split generation: MergeTreeSplitGenerator.splitForBatch, IntervalPartition ------------------------------------
def key_of(store: FileStore) -> Callable[[bytes], tuple[Any, ...]]:
    types = store.key_types
    cache: dict[bytes, tuple[Any, ...]] = {}

    def key(data: bytes) -> tuple[Any, ...]:
        k = cache.get(data)
        if k is None:
            k = cache[data] = tuple(decode_row(data, types))
        return k

    return key


def _pack(items: list[T], weight: Callable[[T], int], target: int) -> list[list[T]]:
    """BinPacking.packForOrdered."""
    packed: list[list[T]] = []
    current: list[T] = []
    total = 0
    for item in items:
        w = weight(item)
        if total + w > target and current:
            packed.append(current)
            current, total = [], 0
        total += w
        current.append(item)
    if current:
        packed.append(current)
    return packed


def split_for_batch(store: FileStore, files: list[DataFileMeta]) -> list[list[DataFileMeta]]:
    opts = store.options
    target = parse_memory_size(opts.raw.get("source.split.target-size", "128 mb"), option="source.split.target-size")
    open_cost = parse_memory_size(opts.raw.get("source.split.open-file-cost", "4 mb"),
                                  option="source.split.open-file-cost")
    raw = all(f.level != 0 and not f.delete_row_count for f in files)
    one_level = len({f.level for f in files}) == 1
    if raw and (opts.deletion_vectors_enabled or opts.merge_engine == MergeEngine.FIRST_ROW or one_level):
        return _pack(files, lambda f: max(f.file_size, open_cost), target)
    key = key_of(store)
    sections = [[f for run in section for f in run] for section in interval_partition(files, key)]
    bins = _pack(sections, lambda s: max(sum(f.file_size for f in s), open_cost), target)
    return [[f for section in b for f in section] for b in bins]


def interval_partition(files: list[DataFileMeta],
                       key: Callable[[bytes], tuple[Any, ...]]) -> list[list[list[DataFileMeta]]]:
    """IntervalPartition.partition(): sections of sorted runs; runs in java.util.PriorityQueue array order."""
    ordered = sorted(files, key=lambda f: (key(f.min_key), key(f.max_key)))  # List.sort is stable too
    result: list[list[list[DataFileMeta]]] = []
    section: list[DataFileMeta] = []
    bound: tuple[Any, ...] | None = None
    for f in ordered:
        if section and bound is not None and key(f.min_key) > bound:
            result.append(_runs_of(section, key))
            section, bound = [], None
        section.append(f)
        if bound is None or key(f.max_key) > bound:
            bound = key(f.max_key)
    if section:
        result.append(_runs_of(section, key))
    return result


def _runs_of(files: list[DataFileMeta], key: Callable[[bytes], tuple[Any, ...]]) -> list[list[DataFileMeta]]:
    """IntervalPartition.partition(section): a PriorityQueue of runs keyed by the max key of their last file."""
    heap: list[list[DataFileMeta]] = []

    def less(a: list[DataFileMeta], b: list[DataFileMeta]) -> bool:
        return key(a[-1].max_key) < key(b[-1].max_key)

    def offer(x: list[DataFileMeta]) -> None:  # PriorityQueue.siftUp
        k = len(heap)
        heap.append(x)
        while k > 0:
            parent = (k - 1) >> 1
            if not less(x, heap[parent]):
                break
            heap[k] = heap[parent]
            k = parent
        heap[k] = x

    def poll() -> list[DataFileMeta]:  # PriorityQueue.poll / siftDown
        top, last = heap[0], heap.pop()
        n = len(heap)
        if n:
            k = 0
            while k < n >> 1:
                child = 2 * k + 1
                if child + 1 < n and less(heap[child + 1], heap[child]):
                    child += 1
                if not less(heap[child], last):
                    break
                heap[k] = heap[child]
                k = child
            heap[k] = last
        return top

    offer([files[0]])
    for f in files[1:]:
        top = poll()
        if key(f.min_key) > key(top[-1].max_key):
            top.append(f)
        else:
            offer([f])
        offer(top)
    return heap


def spill_order(store: FileStore, runs: list[list[DataFileMeta]]) -> list[list[DataFileMeta]]:
    """MergeSorter.mergeSort with an IOManager: past `sort-spill-threshold` runs the smallest ones are spilled and
    read after the others."""
    raw = store.options.raw
    trigger = store.options.num_sorted_run_compaction_trigger
    stop = max(trigger, int(raw.get("num-sorted-run.stop-trigger", trigger + 3)))
    threshold = int(raw.get("sort-spill-threshold", stop + 1))
    if len(runs) <= threshold:
        return runs
    by_size = sorted(runs, key=lambda r: sum(f.file_size for f in r))
    spilled = len(runs) - threshold
    return by_size[spilled:] + by_size[:spilled]
