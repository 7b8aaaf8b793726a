"""Reads and writes manifests and manifest lists, folds them into live files, and merges small manifests.

Mirrors org.apache.paimon.manifest.ManifestFile / ManifestList / ManifestFileMerger and the entry
reading of AbstractFileStoreScan. Manifests are immutable, so decoded ones are cached per store, as columns
(:class:`~table_format.meta.manifest.columnar.DecodedManifest`): entries become objects only when selected.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Collection, Iterable, Sequence
from typing import Any

from table_format.errors import CorruptMetadataError
from table_format.io.file_io import FileIO
from table_format.io.paths import TablePaths
from table_format.meta.avro import avro_codec
from table_format.meta.manifest import (
    EMPTY_STATS,
    FileKind,
    IndexManifestEntry,
    ManifestEntry,
    ManifestFileMeta,
    SimpleStats,
    decode_index_manifest,
    decode_manifest_list,
    encode_index_manifest,
    encode_manifest,
    encode_manifest_list,
    merge_entries,
)
from table_format.meta.manifest.columnar import DecodedManifest, read_manifest
from table_format.meta.snapshot import Snapshot
from table_format.options import CoreOptions
from table_format.row.binary_row import decode_row, encode_row
from table_format.types import DataType
from table_format.workers import run_all

FULL_COMPACTION_THRESHOLD = 16 << 20  # manifest.full-compaction-threshold-size
_ENTRIES_PER_SIZE_CHECK = 1000
_CACHE_LIMIT = 512


class ManifestStore:
    """Manifest-level I/O of one table."""

    def __init__(
        self, file_io: FileIO, paths: TablePaths, options: CoreOptions, partition_types: Sequence[DataType]
    ) -> None:
        self.file_io = file_io
        self.paths = paths
        self.options = options
        self.partition_types = [t.copy(nullable=True) for t in partition_types]
        self._cache: OrderedDict[str, DecodedManifest] = OrderedDict()
        self._lock = threading.Lock()

    def __getstate__(self) -> dict[str, object]:
        state = dict(self.__dict__)
        state["_cache"] = OrderedDict()
        del state["_lock"]
        return state

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    @property
    def _codec(self) -> str:
        return avro_codec(self.options.manifest_compression)

    # ---- reading -------------------------------------------------------------------------
    def read_manifest_list(self, name: str, *, size: int | None = None) -> list[ManifestFileMeta]:
        """A manifest list; `size` (the snapshot's base/delta/changelogManifestListSize) is checked when known."""
        path = self.paths.manifest(name)
        try:
            data = self.file_io.read_bytes(path)
        except FileNotFoundError:
            raise CorruptMetadataError(f"manifest list {path} is missing") from None
        if size is not None and len(data) != size:
            raise CorruptMetadataError(f"manifest list {path} has {len(data)} bytes, its snapshot says {size}")
        return decode_manifest_list(data, source=path)

    def read_manifest(self, name: str, *, meta: ManifestFileMeta | None = None) -> list[ManifestEntry]:
        """A manifest's entries; with its `meta` (from the manifest list) its size and entry counts are checked."""
        return self.decoded_manifest(name, meta=meta).entries()

    def decoded_manifest(self, name: str, *, meta: ManifestFileMeta | None = None) -> DecodedManifest:
        """A manifest decoded (column-wise when it can be) and cached; entries are built on demand."""
        with self._lock:
            cached = self._cache.get(name)
            if cached is not None:
                self._cache.move_to_end(name)
                return cached
        path = self.paths.manifest(name)
        try:
            data = self.file_io.read_bytes(path)
        except FileNotFoundError:
            raise CorruptMetadataError(f"manifest {path} is missing") from None
        if meta is not None and len(data) != meta.file_size:
            raise CorruptMetadataError(f"manifest {path} has {len(data)} bytes, its manifest list says {meta.file_size}")
        decoded = read_manifest(data, source=path)
        if meta is not None and (decoded.added, decoded.deleted) != (meta.num_added_files, meta.num_deleted_files):
            raise CorruptMetadataError(
                f"manifest {path} holds {decoded.added} ADD and {decoded.deleted} DELETE entries, its manifest list "
                f"says {meta.num_added_files} and {meta.num_deleted_files}"
            )
        self._remember(name, decoded)
        return decoded

    def _remember(self, name: str, decoded: DecodedManifest) -> None:
        with self._lock:
            self._cache[name] = decoded
            while len(self._cache) > _CACHE_LIMIT:
                self._cache.popitem(last=False)

    def data_manifests(self, snapshot: Snapshot) -> list[ManifestFileMeta]:
        """Base then delta manifests of a snapshot (the order readers fold in)."""
        return self.read_manifest_list(snapshot.base_manifest_list, size=snapshot.base_manifest_list_size) + (
            self.read_manifest_list(snapshot.delta_manifest_list, size=snapshot.delta_manifest_list_size)
        )

    def read_entries(
        self,
        manifests: Sequence[ManifestFileMeta],
        *,
        entry_filter: Callable[[ManifestEntry], bool] | None = None,
        partition_ok: Callable[[bytes], bool] | None = None,
        buckets_for: Callable[[int], Collection[int] | None] | None = None,
    ) -> list[ManifestEntry]:
        """All entries of the manifests in order, read in parallel. `partition_ok` / `buckets_for` (asked once per
        distinct partition / total bucket count) drop entries before they become objects; `entry_filter` then
        tests each remaining entry."""

        def select(m: ManifestFileMeta) -> list[ManifestEntry]:
            return self.decoded_manifest(m.file_name, meta=m).select(partition_ok=partition_ok,
                                                                     buckets_for=buckets_for)

        with self._lock:  # cached manifests are selected in this thread: a hop to the pool costs more
            cached = all(m.file_name in self._cache for m in manifests)
        if len(manifests) > 1 and not cached:
            chunks = run_all("manifest", select, manifests)
        else:
            chunks = [select(m) for m in manifests]
        out: list[ManifestEntry] = []
        for chunk in chunks:
            out.extend(chunk if entry_filter is None else (e for e in chunk if entry_filter(e)))
        return out

    def live_files(
        self,
        snapshot: Snapshot | None,
        *,
        manifest_filter: Callable[[ManifestFileMeta], bool] | None = None,
        entry_filter: Callable[[ManifestEntry], bool] | None = None,
        partition_ok: Callable[[bytes], bool] | None = None,
        buckets_for: Callable[[int], Collection[int] | None] | None = None,
    ) -> list[ManifestEntry]:
        """The ADD entries that survive folding base + delta of `snapshot` (FileEntry.mergeEntries); the filters
        are those of :meth:`read_entries` (partition and bucket are part of a file's identity, so filtering before
        folding is exact)."""
        if snapshot is None:
            return []
        manifests = self.data_manifests(snapshot)
        if manifest_filter is not None:
            manifests = [m for m in manifests if manifest_filter(m)]
        entries = self.read_entries(manifests, entry_filter=entry_filter, partition_ok=partition_ok,
                                    buckets_for=buckets_for)
        return [e for e in merge_entries(entries) if e.kind == FileKind.ADD]

    def read_index_manifest(self, name: str | None) -> list[IndexManifestEntry]:
        if not name:
            return []
        path = self.paths.manifest(name)
        try:
            data = self.file_io.read_bytes(path)
        except FileNotFoundError:
            raise CorruptMetadataError(f"index manifest {path} is missing") from None
        return decode_index_manifest(data, source=path)

    # ---- writing -------------------------------------------------------------------------
    def partition_stats(self, entries: Iterable[ManifestEntry]) -> SimpleStats:
        """Min/max/null counts over the partition row of every entry (ManifestFileMeta._PARTITION_STATS)."""
        arity = len(self.partition_types)
        if arity == 0:
            return EMPTY_STATS
        seen: set[bytes] = {e.partition for e in entries}
        mins: list[Any] = [None] * arity
        maxs: list[Any] = [None] * arity
        nulls = [0] * arity
        for raw in seen:
            values = decode_row(raw, self.partition_types)
            for i, v in enumerate(values):
                if v is None:
                    nulls[i] += 1
                    continue
                if mins[i] is None or v < mins[i]:
                    mins[i] = v
                if maxs[i] is None or v > maxs[i]:
                    maxs[i] = v
        return SimpleStats(
            min_values=encode_row(mins, self.partition_types, stats=True),
            max_values=encode_row(maxs, self.partition_types, stats=True),
            null_counts=tuple(nulls),
        )

    def write_manifests(self, entries: Sequence[ManifestEntry], *, schema_id: int) -> list[ManifestFileMeta]:
        """Write entries into rolling manifest files of about manifest.target-file-size each."""
        if not entries:
            return []
        target = self.options.manifest_target_file_size
        out: list[ManifestFileMeta] = []
        start = 0
        chunk = len(entries)
        # size a chunk from a first encoding; manifests compress well and rarely roll
        if len(entries) > _ENTRIES_PER_SIZE_CHECK:
            probe = encode_manifest(entries[:_ENTRIES_PER_SIZE_CHECK], codec=self._codec)
            per_entry = max(1, len(probe) // _ENTRIES_PER_SIZE_CHECK)
            chunk = max(_ENTRIES_PER_SIZE_CHECK, target // per_entry)
        while start < len(entries):
            part = entries[start : start + chunk]
            start += chunk
            out.append(self._write_manifest(part, schema_id=schema_id))
        return out

    def _write_manifest(self, entries: Sequence[ManifestEntry], *, schema_id: int) -> ManifestFileMeta:
        name = self.paths.new_name("manifest-")
        data = encode_manifest(entries, codec=self._codec)
        self.file_io.write_bytes(self.paths.manifest(name), data)
        self._remember(name, DecodedManifest(None, list(entries)))
        buckets = [e.bucket for e in entries]
        levels = [e.file.level for e in entries]
        return ManifestFileMeta(
            file_name=name,
            file_size=len(data),
            num_added_files=sum(1 for e in entries if e.kind == FileKind.ADD),
            num_deleted_files=sum(1 for e in entries if e.kind == FileKind.DELETE),
            partition_stats=self.partition_stats(entries),
            schema_id=max((e.file.schema_id for e in entries), default=schema_id),
            min_bucket=min(buckets),
            max_bucket=max(buckets),
            min_level=min(levels),
            max_level=max(levels),
        )

    def write_manifest_list(self, metas: Sequence[ManifestFileMeta]) -> tuple[str, int]:
        name = self.paths.new_name("manifest-list-")
        data = encode_manifest_list(metas, codec=self._codec)
        self.file_io.write_bytes(self.paths.manifest(name), data)
        return name, len(data)

    def write_index_manifest(self, entries: Sequence[IndexManifestEntry]) -> str:
        name = self.paths.new_name("index-manifest-")
        self.file_io.write_bytes(self.paths.manifest(name), encode_index_manifest(entries, codec=self._codec))
        return name

    def merge(self, manifests: list[ManifestFileMeta], *, schema_id: int) -> tuple[list[ManifestFileMeta], list[str]]:
        """ManifestFileMerger: returns (merged manifest list, names of manifests newly written).

        Full compaction when the manifests that must change (small or holding DELETE entries)
        reach 16 MiB: fold everything and rewrite the live entries. Otherwise minor: merge runs of small manifests
        that reach the target size, and the tail if it has at least manifest.merge-min-count files.
        """
        target = self.options.manifest_target_file_size
        must_change = [m for m in manifests if m.num_deleted_files > 0 or m.file_size < target]
        written: list[str] = []
        if sum(m.file_size for m in must_change) >= FULL_COMPACTION_THRESHOLD:
            # fold everything: a DELETE may cancel an ADD held by any manifest
            live = [e for e in merge_entries(self.read_entries(manifests)) if e.kind == FileKind.ADD]
            rewritten = self.write_manifests(live, schema_id=schema_id)
            written.extend(m.file_name for m in rewritten)
            return rewritten, written

        result: list[ManifestFileMeta] = []
        group: list[ManifestFileMeta] = []
        group_size = 0
        for m in manifests:
            if m.file_size >= target and m.num_deleted_files == 0:
                self._flush_group(group, result, written, schema_id=schema_id, force=False)
                group, group_size = [], 0
                result.append(m)
                continue
            group.append(m)
            group_size += m.file_size
            if group_size >= target:
                self._flush_group(group, result, written, schema_id=schema_id, force=True)
                group, group_size = [], 0
        self._flush_group(group, result, written, schema_id=schema_id, force=False)
        return result, written

    def _flush_group(
        self,
        group: list[ManifestFileMeta],
        result: list[ManifestFileMeta],
        written: list[str],
        *,
        schema_id: int,
        force: bool,
    ) -> None:
        if len(group) > 1 and (force or len(group) >= self.options.manifest_merge_min_count):
            merged = merge_entries(self.read_entries(group))
            new = self.write_manifests(merged, schema_id=schema_id)
            written.extend(m.file_name for m in new)
            result.extend(new)
        else:
            result.extend(group)
