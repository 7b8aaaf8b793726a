"""Row-wise Avro codecs of manifest, manifest-list and index-manifest files (fastavro records <-> dataclasses).

Writers emit the Java 1.4 field set with Java's AvroSchemaConverter record names; readers resolve fields by
name and accept every field set from 0.9 to master (unknown fields are ignored, missing nullable fields read as
None). Every failure is a CorruptMetadataError naming the file.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from table_format.errors import CorruptMetadataError
from table_format.meta.avro import read_avro, write_avro
from table_format.meta.manifest.records import (
    _EPOCH,
    _ONE_MS,
    INDEX_MANIFEST_ENTRY_VERSION,
    MANIFEST_ENTRY_VERSION,
    MANIFEST_FILE_META_VERSION,
    DataFileMeta,
    DeletionVectorMeta,
    FileKind,
    GlobalIndexMeta,
    IndexFileMeta,
    IndexManifestEntry,
    ManifestEntry,
    ManifestFileMeta,
    SimpleStats,
)
from table_format.meta.manifest.schemas import (
    INDEX_MANIFEST_ENTRY_SCHEMA,
    MANIFEST_ENTRY_SCHEMA,
    MANIFEST_FILE_META_SCHEMA,
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


def decode_manifest_rows(data: bytes, *, source: str) -> list[ManifestEntry]:
    """Entries of a `manifest-*` file written by any Paimon 0.9 .. master or pypaimon writer (row by row)."""
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
