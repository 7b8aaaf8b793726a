"""Dynamic bucket assignment (bucket = -1 on primary-key tables) with Paimon's HASH index files.

Mirrors HashBucketAssigner / PartitionIndex / DynamicBucketIndexMaintainer with one assigner: every
key hash already in a bucket's HASH index keeps that bucket; new hashes fill the existing buckets up
to `dynamic-bucket.target-row-num`, then open the smallest unused bucket ids. A HASH index file is
the complete set of key hashes of one bucket as big-endian int32 (IntFileUtils), rewritten whenever
the bucket gains keys. Vectorized: hashes are matched with numpy searchsorted, new ones are dealt
out to buckets with one cumulative sum.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np

from table_format.errors import CorruptMetadataError
from table_format.meta.manifest import FileKind, IndexFileMeta
from table_format.meta.snapshot import Snapshot
from table_format.store.file_store import FileStore
from table_format.write.commit_message import CommitMessage

HASH_INDEX = "HASH"
MAX_BUCKETS = 32767


def read_hash_index(store: FileStore, meta: IndexFileMeta) -> np.ndarray:
    path = meta.external_path or store.paths.index_file(meta.file_name)
    try:
        data = store.file_io.read_bytes(path)
    except FileNotFoundError:
        raise CorruptMetadataError(f"hash index file {path} is missing") from None
    if len(data) % 4:
        raise CorruptMetadataError(f"hash index file {path} is truncated ({len(data)} bytes)")
    return np.frombuffer(data, dtype=">i4").astype(np.int32)


@dataclass
class PartitionIndex:
    """Key hashes per bucket of one partition, plus what this writer added."""

    hashes: dict[int, np.ndarray]
    files: dict[int, IndexFileMeta]
    added: dict[int, list[np.ndarray]] = field(default_factory=dict)
    # several writers of one commit may hold the same new keys (a plain Spark write): a new key's bucket is then a
    # function of its hash and the loaded index alone, so they agree; the commit merges their HASH files
    shared: bool = False

    def assign(self, key_hashes: np.ndarray, *, target_rows: int, max_buckets: int) -> np.ndarray:
        """Bucket of every row's key hash (rows with equal hashes get equal buckets)."""
        max_buckets = max_buckets if max_buckets > 0 else MAX_BUCKETS
        buckets = np.full(len(key_hashes), -1, dtype=np.int32)
        known_h = list(self.hashes.values()) + [np.concatenate(a) for a in self.added.values() if a]
        known_b = [np.full(len(h), b, np.int32) for b, h in self.hashes.items()] + [
            np.full(sum(len(x) for x in a), b, np.int32) for b, a in self.added.items() if a
        ]
        if known_h:
            all_h = np.concatenate(known_h)
            all_b = np.concatenate(known_b)
            order = np.argsort(all_h, kind="stable")
            all_h, all_b = all_h[order], all_b[order]
            pos = np.searchsorted(all_h, key_hashes)
            pos_c = np.minimum(pos, len(all_h) - 1)
            hit = all_h[pos_c] == key_hashes
            buckets[hit] = all_b[pos_c[hit]]
        missing = buckets < 0
        if missing.any():
            uniq, first = np.unique(key_hashes[missing], return_index=True)
            new_hashes = uniq[np.argsort(first, kind="stable")]  # first-appearance order
            if self.shared:
                new_buckets = self._by_hash(new_hashes, target_rows=target_rows, max_buckets=max_buckets)
            else:
                new_buckets = self._deal(len(new_hashes), target_rows=target_rows, max_buckets=max_buckets)
            for b in np.unique(new_buckets):
                self.added.setdefault(int(b), []).append(new_hashes[new_buckets == b])
            lookup = np.argsort(new_hashes)
            sorted_new = new_hashes[lookup]
            idx = lookup[np.searchsorted(sorted_new, key_hashes[missing])]
            buckets[missing] = new_buckets[idx]
        return buckets

    def count(self, bucket: int) -> int:
        base = len(self.hashes.get(bucket, ()))
        return base + sum(len(a) for a in self.added.get(bucket, []))

    def _deal(self, n: int, *, target_rows: int, max_buckets: int) -> np.ndarray:
        """Buckets for n new keys: fill non-full buckets in id order, then open new ids."""
        used = sorted(set(self.hashes) | set(self.added))
        slots: list[tuple[int, int]] = [(b, target_rows - self.count(b)) for b in used if self.count(b) < target_rows]
        need = n - sum(c for _, c in slots)
        next_id = 0
        taken = set(used)
        while need > 0 and len(taken) < max_buckets:
            while next_id in taken:
                next_id += 1
            slots.append((next_id, target_rows))
            taken.add(next_id)
            need -= target_rows
        ids = np.array([b for b, _ in slots], dtype=np.int32)
        caps = np.minimum(np.array([c for _, c in slots], dtype=np.int64), n)
        dealt = np.repeat(ids, caps)[:n]
        if len(dealt) < n:  # every bucket is full and the cap is reached: spread the rest over all buckets
            every = np.array(sorted(taken), dtype=np.int32)
            dealt = np.concatenate([dealt, every[np.arange(n - len(dealt)) % len(every)]])
        return dealt

    def _by_hash(self, new_hashes: np.ndarray, *, target_rows: int, max_buckets: int) -> np.ndarray:
        """Buckets for new keys from the loaded index only: the non-full buckets and the smallest unused id (the
        buckets, when the cap is reached), picked by hash. Every writer that loaded the same index agrees."""
        loaded = sorted(self.hashes)
        candidates = [b for b in loaded if len(self.hashes[b]) < target_rows]
        if len(loaded) < max_buckets:
            candidates.append(next(i for i in range(len(loaded) + 1) if i not in self.hashes))
        ids = np.array(candidates or loaded, dtype=np.int32)
        return ids[new_hashes.astype(np.int64) % len(ids)]

    def changed_files(self, store: FileStore) -> tuple[dict[int, IndexFileMeta], dict[int, IndexFileMeta]]:
        """Write complete HASH files for buckets that gained keys: (new files, replaced files) by bucket.

        Afterwards the written files are this index's base, so a writer can prepare several commits.
        """
        new: dict[int, IndexFileMeta] = {}
        old: dict[int, IndexFileMeta] = {}
        for bucket, parts in self.added.items():
            if not parts:
                continue
            merged = np.concatenate([self.hashes.get(bucket, np.empty(0, np.int32)), *parts]).astype(">i4")
            name = store.paths.new_name("index-")
            data = merged.tobytes()
            store.file_io.write_bytes(store.paths.index_file(name), data)
            new[bucket] = IndexFileMeta(HASH_INDEX, name, len(data), len(merged))
            if bucket in self.files:
                old[bucket] = self.files[bucket]
            self.hashes[bucket] = merged.astype(np.int32)
            self.files[bucket] = new[bucket]
        self.added = {}
        return new, old


def load_partition_index(store: FileStore, partition: bytes) -> PartitionIndex:
    def read(snapshot: Snapshot | None) -> PartitionIndex:
        hashes: dict[int, np.ndarray] = {}
        files: dict[int, IndexFileMeta] = {}
        if snapshot is not None and snapshot.index_manifest:
            for e in store.manifests.read_index_manifest(snapshot.index_manifest):
                if e.kind == FileKind.ADD and e.partition == partition and e.index_file.index_type == HASH_INDEX:
                    hashes[e.bucket] = read_hash_index(store, e.index_file)
                    files[e.bucket] = e.index_file
        return PartitionIndex(hashes=hashes, files=files)

    return store.snapshots.read_latest(read)  # again if the latest snapshot expires while its index is read


def merge_shared_indexes(store: FileStore, messages: list[CommitMessage]) -> tuple[list[CommitMessage], list[str],
                                                                                   list[str]]:
    """One commit's messages from writers with shared indexes (PartitionIndex.shared): where several wrote a new
    HASH file for one (partition, bucket), one file with the union of their hashes replaces theirs. Returns the
    messages (the first of each bucket carries the merged file), the paths written, the paths no longer used."""
    by_bucket: dict[tuple[bytes, int], list[int]] = {}
    for i, m in enumerate(messages):
        if any(f.index_type == HASH_INDEX for f in m.new_index_files):
            by_bucket.setdefault((m.partition, m.bucket), []).append(i)
    out = list(messages)
    written: list[str] = []
    superseded: list[str] = []
    for positions in by_bucket.values():
        if len(positions) < 2:
            continue
        metas = [f for i in positions for f in messages[i].new_index_files if f.index_type == HASH_INDEX]
        merged = np.unique(np.concatenate([read_hash_index(store, f) for f in metas])).astype(">i4")
        name = store.paths.new_name("index-")
        data = merged.tobytes()
        store.file_io.write_bytes(store.paths.index_file(name), data)
        written.append(store.paths.index_file(name))
        superseded.extend(store.paths.index_file(f.file_name) for f in metas)
        replaced = next(((f,) for i in positions for f in messages[i].deleted_index_files
                         if f.index_type == HASH_INDEX), ())  # the loaded index's file: the same for every writer
        for n, i in enumerate(positions):
            m = messages[i]
            new = tuple(f for f in m.new_index_files if f.index_type != HASH_INDEX)
            gone = tuple(f for f in m.deleted_index_files if f.index_type != HASH_INDEX)
            if n == 0:
                new, gone = new + (IndexFileMeta(HASH_INDEX, name, len(data), len(merged)),), gone + replaced
            out[i] = dataclasses.replace(m, new_index_files=new, deleted_index_files=gone)
    return out, written, superseded
