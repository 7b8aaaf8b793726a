"""Manifest records (manifest-*, manifest-list-*, index-manifest-*): the frozen dataclasses and entry folding.

Mirrors org.apache.paimon.stats.SimpleStats, io.DataFileMeta, manifest.ManifestEntry / FileKind /
ManifestFileMeta / IndexManifestEntry and index.IndexFileMeta / DeletionVectorMeta / GlobalIndexMeta.
BinaryRows are kept as the raw Avro `bytes` (4-byte big-endian arity prefix + row).
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Iterable
from dataclasses import dataclass
from enum import IntEnum
from typing import NamedTuple

from table_format.errors import CorruptMetadataError

MANIFEST_ENTRY_VERSION = 2  # ManifestEntrySerializer.getVersion()
MANIFEST_FILE_META_VERSION = 2  # ManifestFileMetaSerializer.getVersion()
INDEX_MANIFEST_ENTRY_VERSION = 1  # IndexManifestEntrySerializer.getVersion()

EMPTY_ROW = b"\x00\x00\x00\x00" + b"\x00" * 8  # BinaryRow.EMPTY_ROW as SerializationUtils writes it

_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
_EPOCH_NAIVE = _dt.datetime(1970, 1, 1)
_ONE_MS = _dt.timedelta(milliseconds=1)


def local_wall_clock_millis() -> int:
    """`_CREATION_TIME` for a new file: the local wall clock read as if it were UTC (LocalDateTime.now())."""
    return (_dt.datetime.now() - _EPOCH_NAIVE) // _ONE_MS


# ---- records -----------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SimpleStats:
    """Min/max BinaryRows plus per-column null counts (org.apache.paimon.stats.SimpleStats)."""

    min_values: bytes
    max_values: bytes
    null_counts: tuple[int | None, ...]


EMPTY_STATS = SimpleStats(EMPTY_ROW, EMPTY_ROW, ())


class FileKind(IntEnum):
    """org.apache.paimon.manifest.FileKind (`_KIND` byte)."""

    ADD = 0
    DELETE = 1


class FileSource(IntEnum):
    """org.apache.paimon.manifest.FileSource (`_FILE_SOURCE`)."""

    APPEND = 0
    COMPACT = 1


@dataclass(frozen=True, slots=True)
class DataFileMeta:
    """One data file as recorded in `_FILE` of a manifest entry (org.apache.paimon.io.DataFileMeta)."""

    file_name: str
    file_size: int
    row_count: int
    min_key: bytes
    max_key: bytes
    key_stats: SimpleStats
    value_stats: SimpleStats
    min_sequence_number: int
    max_sequence_number: int
    schema_id: int
    level: int
    extra_files: tuple[str, ...] = ()
    creation_time: int | None = None  # epoch millis of the local wall clock (timestamp-millis in Avro)
    delete_row_count: int | None = None
    embedded_index: bytes | None = None
    file_source: int | None = None
    value_stats_cols: tuple[str, ...] | None = None
    external_path: str | None = None
    first_row_id: int | None = None
    write_cols: tuple[str, ...] | None = None


class FileIdentifier(NamedTuple):
    """Identity of a file entry for ADD/DELETE folding (FileEntry.Identifier)."""

    partition: bytes
    bucket: int
    level: int
    file_name: str
    extra_files: tuple[str, ...]
    embedded_index: bytes | None
    external_path: str | None


@dataclass(frozen=True, slots=True)
class ManifestEntry:
    """One record of a manifest file (org.apache.paimon.manifest.ManifestEntry)."""

    kind: FileKind
    partition: bytes
    bucket: int
    total_buckets: int
    file: DataFileMeta

    @property
    def identifier(self) -> FileIdentifier:
        f = self.file
        return FileIdentifier(
            self.partition, self.bucket, f.level, f.file_name, f.extra_files, f.embedded_index, f.external_path
        )


def merge_entries(entries: Iterable[ManifestEntry], *, source: str | None = None) -> list[ManifestEntry]:
    """Fold ADD/DELETE entries in read order by file identity (FileEntry.mergeEntries).

    ADD of an identity already present is a CorruptMetadataError (prefixed with `source` when given; a commit
    doing conflict detection re-raises it as a conflict); DELETE of a present identity removes it; a DELETE
    whose ADD is not among `entries` is kept (its ADD lives in an older manifest). Survivors keep read order.
    """
    merged: dict[FileIdentifier, ManifestEntry] = {}
    for e in entries:
        f = e.file
        key = FileIdentifier(
            e.partition, e.bucket, f.level, f.file_name, f.extra_files, f.embedded_index, f.external_path
        )
        if e.kind == FileKind.ADD:
            if key in merged:
                raise CorruptMetadataError(
                    f"{source + ': ' if source else ''}trying to add file {f.file_name!r} (bucket {e.bucket}, level {f.level}, partition "
                    f"{e.partition.hex()}) which is already added"
                )
            merged[key] = e
        elif key in merged:
            del merged[key]
        else:
            merged[key] = e
    return list(merged.values())


@dataclass(frozen=True, slots=True)
class ManifestFileMeta:
    """One record of a manifest list: a manifest file and its summary (manifest.ManifestFileMeta)."""

    file_name: str
    file_size: int
    num_added_files: int
    num_deleted_files: int
    partition_stats: SimpleStats
    schema_id: int
    min_bucket: int | None = None
    max_bucket: int | None = None
    min_level: int | None = None
    max_level: int | None = None
    min_row_id: int | None = None
    max_row_id: int | None = None


@dataclass(frozen=True, slots=True)
class DeletionVectorMeta:
    """Where one data file's deletion vector sits in a DV index file (index.DeletionVectorMeta)."""

    data_file_name: str
    offset: int
    length: int
    cardinality: int | None = None


@dataclass(frozen=True, slots=True)
class GlobalIndexMeta:
    """Row range and field of a global index file, 1.4+ (index.GlobalIndexMeta); read and kept, never built."""

    row_range_start: int
    row_range_end: int
    index_field_id: int
    extra_field_ids: tuple[int, ...] | None = None
    index_meta: bytes | None = None
    source_meta: bytes | None = None


@dataclass(frozen=True, slots=True)
class IndexFileMeta:
    """One index file: HASH or DELETION_VECTORS (org.apache.paimon.index.IndexFileMeta)."""

    index_type: str
    file_name: str
    file_size: int
    row_count: int
    dv_ranges: tuple[DeletionVectorMeta, ...] | None = None
    external_path: str | None = None
    global_index: GlobalIndexMeta | None = None


@dataclass(frozen=True, slots=True)
class IndexManifestEntry:
    """One record of an index manifest (org.apache.paimon.manifest.IndexManifestEntry)."""

    kind: FileKind
    partition: bytes
    bucket: int
    index_file: IndexFileMeta

