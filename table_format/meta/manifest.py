"""Manifest records (manifest-*, manifest-list-*, index-manifest-*) and their Avro codecs.

Mirrors org.apache.paimon.stats.SimpleStats, io.DataFileMeta, manifest.ManifestEntry / FileKind /
ManifestFileMeta / IndexManifestEntry, index.IndexFileMeta / DeletionVectorMeta / GlobalIndexMeta, and
their *Serializer classes. Writers emit the Java 1.4 field set with Java's AvroSchemaConverter record
names; readers resolve fields by name and accept every field set from 0.9 to master (unknown fields are
ignored, missing nullable fields read as None). BinaryRows are kept as the raw Avro `bytes`
(4-byte big-endian arity prefix + row).
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import IntEnum
from typing import Any, NamedTuple

from table_format.errors import CorruptMetadataError
from table_format.meta.avro import read_avro, write_avro

__all__ = [
    "EMPTY_STATS",
    "EMPTY_ROW",
    "MANIFEST_ENTRY_SCHEMA",
    "MANIFEST_FILE_META_SCHEMA",
    "INDEX_MANIFEST_ENTRY_SCHEMA",
    "DataFileMeta",
    "DeletionVectorMeta",
    "FileIdentifier",
    "FileKind",
    "FileSource",
    "GlobalIndexMeta",
    "IndexFileMeta",
    "IndexManifestEntry",
    "ManifestEntry",
    "ManifestFileMeta",
    "SimpleStats",
    "decode_index_manifest",
    "decode_manifest",
    "decode_manifest_list",
    "encode_index_manifest",
    "encode_manifest",
    "encode_manifest_list",
    "local_wall_clock_millis",
    "merge_entries",
]

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


# ---- Avro schemas (AvroSchemaConverter naming: nested ROW field F of record R is named R + "_" + F) ----------

_NAMESPACE = "org.apache.paimon.avro.generated"
_RECORD = "record"  # full name org.apache.paimon.avro.generated.record; nested records inherit the namespace


def _f(name: str, avro_type: Any) -> dict[str, Any]:
    return {"name": name, "type": avro_type}


def _opt(name: str, avro_type: Any) -> dict[str, Any]:
    return {"name": name, "type": ["null", avro_type], "default": None}


def _rec(name: str, fields: list[dict[str, Any]]) -> dict[str, Any]:
    return {"type": "record", "name": name, "fields": fields}


def _top(fields: list[dict[str, Any]]) -> dict[str, Any]:
    return {"type": "record", "name": _RECORD, "namespace": _NAMESPACE, "fields": fields}


def _stats_schema(name: str) -> dict[str, Any]:
    return _rec(
        name,
        [
            _f("_MIN_VALUES", "bytes"),
            _f("_MAX_VALUES", "bytes"),
            _opt("_NULL_COUNTS", {"type": "array", "items": ["null", "long"]}),
        ],
    )


_FILE_RECORD = _RECORD + "__FILE"

MANIFEST_ENTRY_SCHEMA: dict[str, Any] = _top(
    [
        _f("_VERSION", "int"),
        _f("_KIND", "int"),
        _f("_PARTITION", "bytes"),
        _f("_BUCKET", "int"),
        _f("_TOTAL_BUCKETS", "int"),
        _f(
            "_FILE",
            _rec(
                _FILE_RECORD,
                [
                    _f("_FILE_NAME", "string"),
                    _f("_FILE_SIZE", "long"),
                    _f("_ROW_COUNT", "long"),
                    _f("_MIN_KEY", "bytes"),
                    _f("_MAX_KEY", "bytes"),
                    _f("_KEY_STATS", _stats_schema(_FILE_RECORD + "__KEY_STATS")),
                    _f("_VALUE_STATS", _stats_schema(_FILE_RECORD + "__VALUE_STATS")),
                    _f("_MIN_SEQUENCE_NUMBER", "long"),
                    _f("_MAX_SEQUENCE_NUMBER", "long"),
                    _f("_SCHEMA_ID", "long"),
                    _f("_LEVEL", "int"),
                    _f("_EXTRA_FILES", {"type": "array", "items": "string"}),
                    _opt("_CREATION_TIME", {"type": "long", "logicalType": "timestamp-millis"}),
                    _opt("_DELETE_ROW_COUNT", "long"),
                    _opt("_EMBEDDED_FILE_INDEX", "bytes"),
                    _opt("_FILE_SOURCE", "int"),
                    _opt("_VALUE_STATS_COLS", {"type": "array", "items": "string"}),
                    _opt("_EXTERNAL_PATH", "string"),
                    _opt("_FIRST_ROW_ID", "long"),
                    _opt("_WRITE_COLS", {"type": "array", "items": "string"}),
                ],
            ),
        ),
    ],
)

MANIFEST_FILE_META_SCHEMA: dict[str, Any] = _top(
    [
        _f("_VERSION", "int"),
        _f("_FILE_NAME", "string"),
        _f("_FILE_SIZE", "long"),
        _f("_NUM_ADDED_FILES", "long"),
        _f("_NUM_DELETED_FILES", "long"),
        _f("_PARTITION_STATS", _stats_schema(_RECORD + "__PARTITION_STATS")),
        _f("_SCHEMA_ID", "long"),
        _opt("_MIN_BUCKET", "int"),
        _opt("_MAX_BUCKET", "int"),
        _opt("_MIN_LEVEL", "int"),
        _opt("_MAX_LEVEL", "int"),
        _opt("_MIN_ROW_ID", "long"),
        _opt("_MAX_ROW_ID", "long"),
    ],
)

INDEX_MANIFEST_ENTRY_SCHEMA: dict[str, Any] = _top(
    [
        _f("_VERSION", "int"),
        _f("_KIND", "int"),
        _f("_PARTITION", "bytes"),
        _f("_BUCKET", "int"),
        _f("_INDEX_TYPE", "string"),
        _f("_FILE_NAME", "string"),
        _f("_FILE_SIZE", "long"),
        _f("_ROW_COUNT", "long"),
        _opt(
            "_DELETIONS_VECTORS_RANGES",
            {
                "type": "array",
                "items": [
                    "null",
                    _rec(
                        _RECORD + "__DELETIONS_VECTORS_RANGES",
                        [
                            _f("f0", "string"),
                            _f("f1", "int"),
                            _f("f2", "int"),
                            _opt("_CARDINALITY", "long"),
                        ],
                    ),
                ],
            },
        ),
        _opt("_EXTERNAL_PATH", "string"),
        _opt(
            "_GLOBAL_INDEX",
            _rec(
                _RECORD + "__GLOBAL_INDEX",
                [
                    _f("_ROW_RANGE_START", "long"),
                    _f("_ROW_RANGE_END", "long"),
                    _f("_INDEX_FIELD_ID", "int"),
                    _opt("_EXTRA_FIELD_IDS", {"type": "array", "items": "int"}),
                    _opt("_INDEX_META", "bytes"),
                    _opt("_SOURCE_META", "bytes"),
                ],
            ),
        ),
    ],
)


# ---- shared codec helpers ------------------------------------------------------------------------------------------

_KIND_OF: dict[int, FileKind] = {0: FileKind.ADD, 1: FileKind.DELETE}


def _stats_to_avro(s: SimpleStats) -> dict[str, Any]:
    return {"_MIN_VALUES": s.min_values, "_MAX_VALUES": s.max_values, "_NULL_COUNTS": list(s.null_counts)}


def _stats_from_avro(r: dict[str, Any]) -> SimpleStats:
    nc = r.get("_NULL_COUNTS")
    return SimpleStats(r["_MIN_VALUES"], r["_MAX_VALUES"], tuple(nc) if nc else ())


def _kind(value: Any) -> FileKind:
    kind = _KIND_OF.get(value)
    if kind is None:
        raise ValueError(f"_KIND {value!r} is neither ADD (0) nor DELETE (1)")
    return kind


def _bad_version(source: str, what: str, version: Any, expected: int) -> CorruptMetadataError:
    hint = " (written by Paimon < 0.9? recreate the table)" if isinstance(version, int) and version < expected else ""
    return CorruptMetadataError(f"{source}: unsupported {what} _VERSION {version!r}, expected {expected}{hint}")


def _decode_error(source: str, what: str, index: int, e: Exception) -> CorruptMetadataError:
    detail = f"missing field {e.args[0]!r}" if isinstance(e, KeyError) else f"{type(e).__name__}: {e}"
    return CorruptMetadataError(f"{source}: malformed {what} record #{index}: {detail}")


# ---- manifest (ManifestEntry) --------------------------------------------------------------------------------------


def _file_to_avro(f: DataFileMeta) -> dict[str, Any]:
    return {
        "_FILE_NAME": f.file_name,
        "_FILE_SIZE": f.file_size,
        "_ROW_COUNT": f.row_count,
        "_MIN_KEY": f.min_key,
        "_MAX_KEY": f.max_key,
        "_KEY_STATS": _stats_to_avro(f.key_stats),
        "_VALUE_STATS": _stats_to_avro(f.value_stats),
        "_MIN_SEQUENCE_NUMBER": f.min_sequence_number,
        "_MAX_SEQUENCE_NUMBER": f.max_sequence_number,
        "_SCHEMA_ID": f.schema_id,
        "_LEVEL": f.level,
        "_EXTRA_FILES": list(f.extra_files),
        "_CREATION_TIME": f.creation_time,
        "_DELETE_ROW_COUNT": f.delete_row_count,
        "_EMBEDDED_FILE_INDEX": f.embedded_index,
        "_FILE_SOURCE": None if f.file_source is None else int(f.file_source),
        "_VALUE_STATS_COLS": None if f.value_stats_cols is None else list(f.value_stats_cols),
        "_EXTERNAL_PATH": f.external_path,
        "_FIRST_ROW_ID": f.first_row_id,
        "_WRITE_COLS": None if f.write_cols is None else list(f.write_cols),
    }


def encode_manifest(entries: Iterable[ManifestEntry], *, codec: str = "zstandard", level: int | None = 1) -> bytes:
    """Bytes of a `manifest-*` file holding `entries` (ManifestFile writer, 1.4 field set)."""
    records = (
        {
            "_VERSION": MANIFEST_ENTRY_VERSION,
            "_KIND": int(e.kind),
            "_PARTITION": e.partition,
            "_BUCKET": e.bucket,
            "_TOTAL_BUCKETS": e.total_buckets,
            "_FILE": _file_to_avro(e.file),
        }
        for e in entries
    )
    return write_avro(MANIFEST_ENTRY_SCHEMA, records, codec=codec, level=level)


def decode_manifest(data: bytes, *, source: str) -> list[ManifestEntry]:
    """Entries of a `manifest-*` file written by any Paimon 0.9 .. master or pypaimon writer."""
    records = read_avro(data, source=source)
    out: list[ManifestEntry] = []
    append = out.append
    kind_of = _KIND_OF
    epoch = _EPOCH
    one_ms = _ONE_MS
    i = 0
    try:
        for i, r in enumerate(records):  # noqa: B007 - i is reported on error
            if r["_VERSION"] != MANIFEST_ENTRY_VERSION:
                raise _bad_version(source, "manifest entry", r["_VERSION"], MANIFEST_ENTRY_VERSION)
            f = r["_FILE"]
            get = f.get
            ks = f["_KEY_STATS"]
            vs = f["_VALUE_STATS"]
            knc = ks.get("_NULL_COUNTS")
            vnc = vs.get("_NULL_COUNTS")
            kind = kind_of.get(r["_KIND"])
            if kind is None:
                kind = _kind(r["_KIND"])
            ct = get("_CREATION_TIME")
            cols = get("_VALUE_STATS_COLS")
            wcols = get("_WRITE_COLS")
            append(
                ManifestEntry(
                    kind,
                    r["_PARTITION"],
                    r["_BUCKET"],
                    r["_TOTAL_BUCKETS"],
                    DataFileMeta(
                        f["_FILE_NAME"],
                        f["_FILE_SIZE"],
                        f["_ROW_COUNT"],
                        f["_MIN_KEY"],
                        f["_MAX_KEY"],
                        SimpleStats(ks["_MIN_VALUES"], ks["_MAX_VALUES"], tuple(knc) if knc else ()),
                        SimpleStats(vs["_MIN_VALUES"], vs["_MAX_VALUES"], tuple(vnc) if vnc else ()),
                        f["_MIN_SEQUENCE_NUMBER"],
                        f["_MAX_SEQUENCE_NUMBER"],
                        f["_SCHEMA_ID"],
                        f["_LEVEL"],
                        tuple(f["_EXTRA_FILES"]),
                        None if ct is None else (ct - epoch) // one_ms,
                        get("_DELETE_ROW_COUNT"),
                        get("_EMBEDDED_FILE_INDEX"),
                        get("_FILE_SOURCE"),
                        None if cols is None else tuple(cols),
                        get("_EXTERNAL_PATH"),
                        get("_FIRST_ROW_ID"),
                        None if wcols is None else tuple(wcols),
                    ),
                )
            )
    except CorruptMetadataError:
        raise
    except (KeyError, TypeError, IndexError, AttributeError, ValueError) as e:
        raise _decode_error(source, "manifest entry", i, e) from None
    return out


# ---- manifest list (ManifestFileMeta) ----------------------------------------------------------------------------


def encode_manifest_list(
    metas: Iterable[ManifestFileMeta], *, codec: str = "zstandard", level: int | None = 1
) -> bytes:
    """Bytes of a `manifest-list-*` file (ManifestList writer, 1.4 field set)."""
    records = (
        {
            "_VERSION": MANIFEST_FILE_META_VERSION,
            "_FILE_NAME": m.file_name,
            "_FILE_SIZE": m.file_size,
            "_NUM_ADDED_FILES": m.num_added_files,
            "_NUM_DELETED_FILES": m.num_deleted_files,
            "_PARTITION_STATS": _stats_to_avro(m.partition_stats),
            "_SCHEMA_ID": m.schema_id,
            "_MIN_BUCKET": m.min_bucket,
            "_MAX_BUCKET": m.max_bucket,
            "_MIN_LEVEL": m.min_level,
            "_MAX_LEVEL": m.max_level,
            "_MIN_ROW_ID": m.min_row_id,
            "_MAX_ROW_ID": m.max_row_id,
        }
        for m in metas
    )
    return write_avro(MANIFEST_FILE_META_SCHEMA, records, codec=codec, level=level)


def decode_manifest_list(data: bytes, *, source: str) -> list[ManifestFileMeta]:
    """Records of a `manifest-list-*` file (0.9: first 6 data fields only; later fields read as None)."""
    records = read_avro(data, source=source)
    out: list[ManifestFileMeta] = []
    i = 0
    try:
        for i, r in enumerate(records):  # noqa: B007
            if r["_VERSION"] != MANIFEST_FILE_META_VERSION:
                raise _bad_version(source, "manifest list", r["_VERSION"], MANIFEST_FILE_META_VERSION)
            get = r.get
            out.append(
                ManifestFileMeta(
                    r["_FILE_NAME"],
                    r["_FILE_SIZE"],
                    r["_NUM_ADDED_FILES"],
                    r["_NUM_DELETED_FILES"],
                    _stats_from_avro(r["_PARTITION_STATS"]),
                    r["_SCHEMA_ID"],
                    get("_MIN_BUCKET"),
                    get("_MAX_BUCKET"),
                    get("_MIN_LEVEL"),
                    get("_MAX_LEVEL"),
                    get("_MIN_ROW_ID"),
                    get("_MAX_ROW_ID"),
                )
            )
    except CorruptMetadataError:
        raise
    except (KeyError, TypeError, IndexError, AttributeError, ValueError) as e:
        raise _decode_error(source, "manifest list", i, e) from None
    return out


# ---- index manifest (IndexManifestEntry) --------------------------------------------------------------------------


def _global_to_avro(g: GlobalIndexMeta | None) -> dict[str, Any] | None:
    if g is None:
        return None
    return {
        "_ROW_RANGE_START": g.row_range_start,
        "_ROW_RANGE_END": g.row_range_end,
        "_INDEX_FIELD_ID": g.index_field_id,
        "_EXTRA_FIELD_IDS": None if g.extra_field_ids is None else list(g.extra_field_ids),
        "_INDEX_META": g.index_meta,
        "_SOURCE_META": g.source_meta,
    }


def _global_from_avro(r: dict[str, Any] | None) -> GlobalIndexMeta | None:
    if r is None:
        return None
    extra = r.get("_EXTRA_FIELD_IDS")
    return GlobalIndexMeta(
        r["_ROW_RANGE_START"],
        r["_ROW_RANGE_END"],
        r["_INDEX_FIELD_ID"],
        None if extra is None else tuple(extra),
        r.get("_INDEX_META"),
        r.get("_SOURCE_META"),
    )


def _dv_ranges_from_avro(items: Sequence[dict[str, Any] | None] | None) -> tuple[DeletionVectorMeta, ...] | None:
    if items is None:
        return None
    out = []
    for d in items:
        if d is None:
            raise ValueError("null entry in _DELETIONS_VECTORS_RANGES")
        out.append(DeletionVectorMeta(d["f0"], d["f1"], d["f2"], d.get("_CARDINALITY")))
    return tuple(out)


def encode_index_manifest(
    entries: Iterable[IndexManifestEntry], *, codec: str = "zstandard", level: int | None = 1
) -> bytes:
    """Bytes of an `index-manifest-*` file (IndexManifestFile writer, 1.4 field set)."""
    records = (
        {
            "_VERSION": INDEX_MANIFEST_ENTRY_VERSION,
            "_KIND": int(e.kind),
            "_PARTITION": e.partition,
            "_BUCKET": e.bucket,
            "_INDEX_TYPE": e.index_file.index_type,
            "_FILE_NAME": e.index_file.file_name,
            "_FILE_SIZE": e.index_file.file_size,
            "_ROW_COUNT": e.index_file.row_count,
            "_DELETIONS_VECTORS_RANGES": None
            if e.index_file.dv_ranges is None
            else [
                {"f0": d.data_file_name, "f1": d.offset, "f2": d.length, "_CARDINALITY": d.cardinality}
                for d in e.index_file.dv_ranges
            ],
            "_EXTERNAL_PATH": e.index_file.external_path,
            "_GLOBAL_INDEX": _global_to_avro(e.index_file.global_index),
        }
        for e in entries
    )
    return write_avro(INDEX_MANIFEST_ENTRY_SCHEMA, records, codec=codec, level=level)


def decode_index_manifest(data: bytes, *, source: str) -> list[IndexManifestEntry]:
    """Entries of an `index-manifest-*` file (0.9: DV ranges without _CARDINALITY, no external path)."""
    records = read_avro(data, source=source)
    out: list[IndexManifestEntry] = []
    i = 0
    try:
        for i, r in enumerate(records):  # noqa: B007
            if r["_VERSION"] != INDEX_MANIFEST_ENTRY_VERSION:
                raise _bad_version(source, "index manifest entry", r["_VERSION"], INDEX_MANIFEST_ENTRY_VERSION)
            out.append(
                IndexManifestEntry(
                    _kind(r["_KIND"]),
                    r["_PARTITION"],
                    r["_BUCKET"],
                    IndexFileMeta(
                        r["_INDEX_TYPE"],
                        r["_FILE_NAME"],
                        r["_FILE_SIZE"],
                        r["_ROW_COUNT"],
                        _dv_ranges_from_avro(r.get("_DELETIONS_VECTORS_RANGES")),
                        r.get("_EXTERNAL_PATH"),
                        _global_from_avro(r.get("_GLOBAL_INDEX")),
                    ),
                )
            )
    except CorruptMetadataError:
        raise
    except (KeyError, TypeError, IndexError, AttributeError, ValueError) as e:
        raise _decode_error(source, "index manifest entry", i, e) from None
    return out
