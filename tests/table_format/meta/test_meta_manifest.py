"""table_format.meta.manifest against real Java Paimon 0.9 files, the Java 1.4 writer schema, and corruption."""

from __future__ import annotations

import copy
import json
import random
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from table_format.errors import CorruptMetadataError
from table_format.meta.avro import read_avro, write_avro, writer_schema_json
from table_format.meta.manifest import (
    COLUMNAR_MIN_RECORDS,
    EMPTY_ROW,
    EMPTY_STATS,
    INDEX_MANIFEST_ENTRY_SCHEMA,
    MANIFEST_ENTRY_SCHEMA,
    MANIFEST_FILE_META_SCHEMA,
    DataFileMeta,
    DecodedManifest,
    DeletionVectorMeta,
    FileKind,
    FileSource,
    GlobalIndexMeta,
    IndexFileMeta,
    IndexManifestEntry,
    ManifestEntry,
    ManifestFileMeta,
    SimpleStats,
    decode_index_manifest,
    decode_manifest,
    decode_manifest_list,
    decode_manifest_rows,
    encode_index_manifest,
    encode_manifest,
    encode_manifest_list,
    local_wall_clock_millis,
    merge_entries,
    read_manifest,
)
from table_format.meta.snapshot import CommitKind, Snapshot

SHARED = Path(__file__).resolve().parents[3].parent / "shared"
GOLDEN = SHARED / "golden"
TABLES = GOLDEN / "tables"
ONDISK_09 = SHARED / "paimon-oracle" / "ondisk-0.9.txt"

needs_golden = pytest.mark.skipif(
    not TABLES.is_dir(), reason=f"Java-written golden tables not found at {TABLES} (shared/ not next to the repo)"
)

# ---- Java 1.4 writer schemas, spelled as Java's AvroSchemaConverter + Avro Schema.toString write them (App. A) ----
_STATS = '[{"name":"_MIN_VALUES","type":"bytes"},{"name":"_MAX_VALUES","type":"bytes"},{"name":"_NULL_COUNTS","type":["null",{"type":"array","items":["null","long"]}],"default":null}]'
JAVA_14_MANIFEST = (
    '{"type":"record","name":"record","namespace":"org.apache.paimon.avro.generated","fields":['
    '{"name":"_VERSION","type":"int"},{"name":"_KIND","type":"int"},{"name":"_PARTITION","type":"bytes"},'
    '{"name":"_BUCKET","type":"int"},{"name":"_TOTAL_BUCKETS","type":"int"},'
    '{"name":"_FILE","type":{"type":"record","name":"record__FILE","fields":['
    '{"name":"_FILE_NAME","type":"string"},{"name":"_FILE_SIZE","type":"long"},{"name":"_ROW_COUNT","type":"long"},'
    '{"name":"_MIN_KEY","type":"bytes"},{"name":"_MAX_KEY","type":"bytes"},'
    '{"name":"_KEY_STATS","type":{"type":"record","name":"record__FILE__KEY_STATS","fields":' + _STATS + "}},"
    '{"name":"_VALUE_STATS","type":{"type":"record","name":"record__FILE__VALUE_STATS","fields":' + _STATS + "}},"
    '{"name":"_MIN_SEQUENCE_NUMBER","type":"long"},{"name":"_MAX_SEQUENCE_NUMBER","type":"long"},'
    '{"name":"_SCHEMA_ID","type":"long"},{"name":"_LEVEL","type":"int"},'
    '{"name":"_EXTRA_FILES","type":{"type":"array","items":"string"}},'
    '{"name":"_CREATION_TIME","type":["null",{"type":"long","logicalType":"timestamp-millis"}],"default":null},'
    '{"name":"_DELETE_ROW_COUNT","type":["null","long"],"default":null},'
    '{"name":"_EMBEDDED_FILE_INDEX","type":["null","bytes"],"default":null},'
    '{"name":"_FILE_SOURCE","type":["null","int"],"default":null},'
    '{"name":"_VALUE_STATS_COLS","type":["null",{"type":"array","items":"string"}],"default":null},'
    '{"name":"_EXTERNAL_PATH","type":["null","string"],"default":null},'
    '{"name":"_FIRST_ROW_ID","type":["null","long"],"default":null},'
    '{"name":"_WRITE_COLS","type":["null",{"type":"array","items":"string"}],"default":null}]}}]}'
)
JAVA_14_MANIFEST_LIST = (
    '{"type":"record","name":"record","namespace":"org.apache.paimon.avro.generated","fields":['
    '{"name":"_VERSION","type":"int"},{"name":"_FILE_NAME","type":"string"},{"name":"_FILE_SIZE","type":"long"},'
    '{"name":"_NUM_ADDED_FILES","type":"long"},{"name":"_NUM_DELETED_FILES","type":"long"},'
    '{"name":"_PARTITION_STATS","type":{"type":"record","name":"record__PARTITION_STATS","fields":' + _STATS + "}},"
    '{"name":"_SCHEMA_ID","type":"long"},'
    '{"name":"_MIN_BUCKET","type":["null","int"],"default":null},{"name":"_MAX_BUCKET","type":["null","int"],"default":null},'
    '{"name":"_MIN_LEVEL","type":["null","int"],"default":null},{"name":"_MAX_LEVEL","type":["null","int"],"default":null},'
    '{"name":"_MIN_ROW_ID","type":["null","long"],"default":null},{"name":"_MAX_ROW_ID","type":["null","long"],"default":null}]}'
)
JAVA_14_INDEX_MANIFEST = (
    '{"type":"record","name":"record","namespace":"org.apache.paimon.avro.generated","fields":['
    '{"name":"_VERSION","type":"int"},{"name":"_KIND","type":"int"},{"name":"_PARTITION","type":"bytes"},'
    '{"name":"_BUCKET","type":"int"},{"name":"_INDEX_TYPE","type":"string"},{"name":"_FILE_NAME","type":"string"},'
    '{"name":"_FILE_SIZE","type":"long"},{"name":"_ROW_COUNT","type":"long"},'
    '{"name":"_DELETIONS_VECTORS_RANGES","type":["null",{"type":"array","items":["null",'
    '{"type":"record","name":"record__DELETIONS_VECTORS_RANGES","fields":[{"name":"f0","type":"string"},'
    '{"name":"f1","type":"int"},{"name":"f2","type":"int"},'
    '{"name":"_CARDINALITY","type":["null","long"],"default":null}]}]}],"default":null},'
    '{"name":"_EXTERNAL_PATH","type":["null","string"],"default":null},'
    '{"name":"_GLOBAL_INDEX","type":["null",{"type":"record","name":"record__GLOBAL_INDEX","fields":['
    '{"name":"_ROW_RANGE_START","type":"long"},{"name":"_ROW_RANGE_END","type":"long"},'
    '{"name":"_INDEX_FIELD_ID","type":"int"},'
    '{"name":"_EXTRA_FIELD_IDS","type":["null",{"type":"array","items":"int"}],"default":null},'
    '{"name":"_INDEX_META","type":["null","bytes"],"default":null},'
    '{"name":"_SOURCE_META","type":["null","bytes"],"default":null}]}],"default":null}]}'
)


# ---- helpers ------------------------------------------------------------------------------------------------------


def _stats(n: int) -> SimpleStats:
    return SimpleStats(b"\x00\x00\x00\x01" + bytes(8) + n.to_bytes(8, "little"), EMPTY_ROW, (0, None, n))


def _file(name: str, **kw: Any) -> DataFileMeta:
    base: dict[str, Any] = {
        "file_name": name,
        "file_size": 1234,
        "row_count": 10,
        "min_key": EMPTY_ROW,
        "max_key": EMPTY_ROW,
        "key_stats": EMPTY_STATS,
        "value_stats": _stats(3),
        "min_sequence_number": 0,
        "max_sequence_number": 9,
        "schema_id": 0,
        "level": 0,
        "extra_files": (),
        "creation_time": 1_700_000_000_123,
        "delete_row_count": 0,
        "embedded_index": None,
        "file_source": FileSource.APPEND,
    }
    base.update(kw)
    return DataFileMeta(**base)


def _entry(name: str, kind: FileKind = FileKind.ADD, *, bucket: int = 0, **kw: Any) -> ManifestEntry:
    return ManifestEntry(kind, EMPTY_ROW, bucket, 2, _file(name, **kw))


FULL_ENTRY = ManifestEntry(
    FileKind.DELETE,
    b"\x00\x00\x00\x01" + bytes(16),
    -2,
    -2,
    _file(
        "data-full.parquet",
        extra_files=("data-full.parquet.index",),
        embedded_index=b"\x01\x02",
        file_source=FileSource.COMPACT,
        value_stats_cols=("a", "b"),
        external_path="s3://bucket/x/data-full.parquet",
        first_row_id=77,
        write_cols=("a",),
        delete_row_count=4,
        level=3,
    ),
)


def _golden_tables() -> list[Path]:
    return sorted(p for p in TABLES.iterdir() if p.is_dir())


def _snapshots(table: Path) -> list[Snapshot]:
    files = sorted((table / "snapshot").glob("snapshot-*"), key=lambda p: int(p.name.split("-")[1]))
    return [Snapshot.from_json(p.read_text(), source=str(p)) for p in files]


def _manifest_list(table: Path, name: str) -> list[ManifestFileMeta]:
    path = table / "manifest" / name
    return decode_manifest_list(path.read_bytes(), source=str(path))


def _manifest(table: Path, name: str) -> list[ManifestEntry]:
    path = table / "manifest" / name
    return decode_manifest(path.read_bytes(), source=str(path))


def _java_09_schemas() -> dict[str, dict[str, Any]]:
    """Writer schemas of the 0.9 dump (as fastavro printed them), keyed manifest / manifest-list / index-manifest."""
    if not ONDISK_09.is_file():
        return {}
    lines = ONDISK_09.read_text().splitlines()
    out: dict[str, dict[str, Any]] = {}
    for i, line in enumerate(lines):
        if line.startswith("writer schema (raw JSON):"):
            schema = json.loads(lines[i + 1])
            names = [f["name"] for f in schema["fields"]]
            key = "index-manifest" if "_INDEX_TYPE" in names else "manifest" if "_FILE" in names else "manifest-list"
            out[key] = schema
    return out


def _restrict(schema: dict[str, Any], like: dict[str, Any]) -> dict[str, Any]:
    """`schema` with only the fields `like` has (recursively), to compare a newer schema with an older one."""
    out = copy.deepcopy(schema)

    def walk(ours: Any, theirs: Any) -> None:
        if isinstance(ours, dict) and ours.get("type") == "record" and isinstance(theirs, dict):
            keep = {f["name"]: f for f in theirs["fields"]}
            ours["fields"] = [f for f in ours["fields"] if f["name"] in keep]
            for f in ours["fields"]:
                walk(f["type"], keep[f["name"]]["type"])
        elif isinstance(ours, dict) and ours.get("type") == "array" and isinstance(theirs, dict):
            walk(ours["items"], theirs["items"])
        elif isinstance(ours, list) and isinstance(theirs, list):
            for a, b in zip(ours, theirs, strict=False):
                walk(a, b)
        elif isinstance(ours, dict) and isinstance(ours.get("type"), dict):
            walk(ours["type"], theirs.get("type") if isinstance(theirs, dict) else theirs)

    walk(out, like)
    return out


# ---- records -------------------------------------------------------------------------------------------------------


def test_empty_stats_is_two_empty_binary_rows() -> None:
    assert bytes.fromhex("000000000000000000000000") == EMPTY_ROW
    assert SimpleStats(EMPTY_ROW, EMPTY_ROW, ()) == EMPTY_STATS


def test_local_wall_clock_millis_is_plausible() -> None:
    now = int(time.time() * 1000)
    assert abs(local_wall_clock_millis() - now) < 15 * 3600 * 1000


def test_identifier_includes_level_extra_files_index_and_external_path() -> None:
    a = _entry("f")
    assert a.identifier == (EMPTY_ROW, 0, 0, "f", (), None, None)
    assert a.identifier != _entry("f", level=1).identifier
    assert a.identifier != _entry("f", extra_files=("f.index",)).identifier
    assert a.identifier != _entry("f", embedded_index=b"x").identifier
    assert a.identifier != _entry("f", external_path="/x/f").identifier
    assert a.identifier != _entry("f", bucket=1).identifier
    assert a.identifier == _entry("f", row_count=99, creation_time=1).identifier  # non-identity fields


# ---- merge_entries (FileEntry.mergeEntries) ------------------------------------------------------------------------


def test_merge_add_then_delete_cancels() -> None:
    assert merge_entries([_entry("a"), _entry("b"), _entry("a", FileKind.DELETE)]) == [_entry("b")]


def test_merge_unmatched_delete_is_kept() -> None:
    d = _entry("old", FileKind.DELETE)
    assert merge_entries([_entry("a"), d]) == [_entry("a"), d]


def test_merge_double_add_names_the_file() -> None:
    with pytest.raises(CorruptMetadataError, match=r"snapshot-7: trying to add file 'data-x\.parquet'"):
        merge_entries([_entry("data-x.parquet"), _entry("data-x.parquet")], source="snapshot-7")


def test_merge_upgrade_delete_level0_add_level5() -> None:
    base = [_entry("u")]
    delta = [_entry("u", FileKind.DELETE), _entry("u", level=5)]
    assert merge_entries(base + delta) == [_entry("u", level=5)]


def test_merge_delete_must_match_extra_files_exactly() -> None:
    added = _entry("e", extra_files=("e.index",))
    wrong = _entry("e", FileKind.DELETE)  # no extra files -> a different identity
    assert merge_entries([added, wrong]) == [added, wrong]


# ---- codecs: synthetic round trips ---------------------------------------------------------------------------------


@pytest.mark.parametrize("codec", ["zstandard", "null", "deflate"])
def test_manifest_round_trip_all_fields(codec: str) -> None:
    entries = [_entry("a"), FULL_ENTRY, _entry("c", creation_time=None, delete_row_count=None, file_source=None)]
    assert decode_manifest(encode_manifest(entries, codec=codec), source="m") == entries


def test_manifest_list_round_trip() -> None:
    metas = [
        ManifestFileMeta("manifest-a-0", 100, 3, 0, EMPTY_STATS, 0),
        ManifestFileMeta("manifest-a-1", 200, 1, 2, _stats(5), 4, 0, 7, 0, 5, 10, 99),
    ]
    assert decode_manifest_list(encode_manifest_list(metas), source="l") == metas


def test_index_manifest_round_trip() -> None:
    entries = [
        IndexManifestEntry(FileKind.ADD, EMPTY_ROW, 1, IndexFileMeta("HASH", "index-x-0", 12, 3)),
        IndexManifestEntry(
            FileKind.ADD,
            EMPTY_ROW,
            0,
            IndexFileMeta(
                "DELETION_VECTORS",
                "index-x-1",
                31,
                2,
                (DeletionVectorMeta("data-a.parquet", 1, 22, 2), DeletionVectorMeta("data-b.parquet", 23, 20)),
            ),
        ),
        IndexManifestEntry(FileKind.ADD, EMPTY_ROW, 0, IndexFileMeta("DELETION_VECTORS", "index-x-2", 1, 0, ())),
        IndexManifestEntry(
            FileKind.DELETE,
            EMPTY_ROW,
            0,
            IndexFileMeta("btree", "index-x-3", 9, 9, None, "/ext/index-x-3", GlobalIndexMeta(0, 99, 2, (3, 4), b"m")),
        ),
    ]
    decoded = decode_index_manifest(encode_index_manifest(entries), source="i")
    assert decoded == entries
    assert decoded[0].index_file.dv_ranges is None and decoded[2].index_file.dv_ranges == ()
    assert decoded[0].index_file.global_index is None


# ---- codecs: schemas -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (lambda: encode_manifest([_entry("a")]), JAVA_14_MANIFEST),
        (lambda: encode_manifest_list([]), JAVA_14_MANIFEST_LIST),
        (lambda: encode_index_manifest([]), JAVA_14_INDEX_MANIFEST),
    ],
    ids=["manifest", "manifest-list", "index-manifest"],
)
def test_written_schema_equals_java_14_writer_schema(data: Callable[[], bytes], expected: str) -> None:
    ours = json.loads(writer_schema_json(data(), source="ours"))
    assert ours == json.loads(expected)


@needs_golden
def test_written_schema_extends_java_09_writer_schema_exactly() -> None:
    """Java 0.9's own headers (golden files) == our 1.4 schema restricted to the 0.9 fields, names and order."""
    ours = {
        "manifest-": json.loads(writer_schema_json(encode_manifest([]), source="m")),
        "manifest-list-": json.loads(writer_schema_json(encode_manifest_list([]), source="l")),
    }
    seen = set()
    for path in sorted(TABLES.glob("*/manifest/*")):
        prefix = "manifest-list-" if path.name.startswith("manifest-list-") else "manifest-"
        java = json.loads(writer_schema_json(path.read_bytes(), source=str(path)))
        assert _restrict(ours[prefix], java) == java, path
        seen.add(prefix)
    assert seen == {"manifest-", "manifest-list-"}


def test_index_schema_extends_java_09_dump() -> None:
    schemas = _java_09_schemas()
    if "index-manifest" not in schemas:
        pytest.skip(f"0.9 dump not found at {ONDISK_09}")
    java = schemas["index-manifest"]  # fastavro-printed: full names, no namespace key
    ours = json.loads(writer_schema_json(encode_index_manifest([]), source="i"))
    restricted = _restrict(ours, java)
    assert [f["name"] for f in restricted["fields"]] == [f["name"] for f in java["fields"]]
    dv_ours = restricted["fields"][8]["type"][1]["items"][1]
    dv_java = java["fields"][8]["type"][1]["items"][1]
    assert dv_ours["fields"] == dv_java["fields"]
    assert dv_java["name"] == "org.apache.paimon.avro.generated." + dv_ours["name"]


# ---- codecs: other writers' field sets ----------------------------------------------------------------------------


def test_decodes_java_09_index_manifest_field_set() -> None:
    schemas = _java_09_schemas()
    if "index-manifest" not in schemas:
        pytest.skip(f"0.9 dump not found at {ONDISK_09}")
    part = bytes.fromhex("0000000100000000000000000100000000000000")
    records = [
        {
            "_VERSION": 1,
            "_KIND": 0,
            "_PARTITION": part,
            "_BUCKET": 1,
            "_INDEX_TYPE": "DELETION_VECTORS",
            "_FILE_NAME": "index-5f0b-0",
            "_FILE_SIZE": 31,
            "_ROW_COUNT": 1,
            "_DELETIONS_VECTORS_RANGES": [{"f0": "data-27c3.parquet", "f1": 1, "f2": 22}],
        },
        {
            "_VERSION": 1,
            "_KIND": 0,
            "_PARTITION": part,
            "_BUCKET": 2,
            "_INDEX_TYPE": "HASH",
            "_FILE_NAME": "index-f833-0",
            "_FILE_SIZE": 8,
            "_ROW_COUNT": 2,
            "_DELETIONS_VECTORS_RANGES": None,
        },
    ]
    got = decode_index_manifest(write_avro(schemas["index-manifest"], records), source="i")
    assert got == [
        IndexManifestEntry(
            FileKind.ADD,
            part,
            1,
            IndexFileMeta("DELETION_VECTORS", "index-5f0b-0", 31, 1, (DeletionVectorMeta("data-27c3.parquet", 1, 22),)),
        ),
        IndexManifestEntry(FileKind.ADD, part, 2, IndexFileMeta("HASH", "index-f833-0", 8, 2)),
    ]


def _rename_records(schema: Any, names: dict[str, str]) -> Any:
    if isinstance(schema, dict):
        out = {k: _rename_records(v, names) for k, v in schema.items()}
        if out.get("type") == "record":
            out["name"] = names.get(out["name"], out["name"])
            out.pop("namespace", None)
        return out
    if isinstance(schema, list):
        return [_rename_records(x, names) for x in schema]
    return schema


def test_decodes_pypaimon_style_field_set_with_extra_fields() -> None:
    """pypaimon 2.1 names records differently, and master/pypaimon add fields we must skip by name."""
    manifest_schema = _rename_records(
        MANIFEST_ENTRY_SCHEMA,
        {"record": "ManifestEntry", "record__FILE": "DataFileMeta", "record__FILE__KEY_STATS": "record_KEY_STATS"},
    )
    manifest_schema["fields"][5]["type"]["fields"].append(
        {"name": "_WRITE_COLS_SEQUENCES", "type": ["null", {"type": "array", "items": "long"}], "default": None}
    )
    manifest_schema["fields"].append({"name": "_SOMETHING_NEW", "type": ["null", "string"], "default": None})
    records = [
        {
            "_VERSION": 2,
            "_KIND": 0,
            "_PARTITION": EMPTY_ROW,
            "_BUCKET": 0,
            "_TOTAL_BUCKETS": -1,
            "_SOMETHING_NEW": "x",
            "_FILE": {
                "_FILE_NAME": "data-p.parquet",
                "_FILE_SIZE": 5,
                "_ROW_COUNT": 1,
                "_MIN_KEY": EMPTY_ROW,
                "_MAX_KEY": EMPTY_ROW,
                "_KEY_STATS": {"_MIN_VALUES": EMPTY_ROW, "_MAX_VALUES": EMPTY_ROW, "_NULL_COUNTS": None},
                "_VALUE_STATS": {"_MIN_VALUES": EMPTY_ROW, "_MAX_VALUES": EMPTY_ROW, "_NULL_COUNTS": []},
                "_MIN_SEQUENCE_NUMBER": 0,
                "_MAX_SEQUENCE_NUMBER": 0,
                "_SCHEMA_ID": 0,
                "_LEVEL": 0,
                "_EXTRA_FILES": [],
                "_CREATION_TIME": 1_000,
                "_DELETE_ROW_COUNT": 0,
                "_EMBEDDED_FILE_INDEX": None,
                "_FILE_SOURCE": 0,
                "_VALUE_STATS_COLS": [],
                "_EXTERNAL_PATH": None,
                "_FIRST_ROW_ID": 5,
                "_WRITE_COLS": None,
                "_WRITE_COLS_SEQUENCES": [1, 2],
            },
        }
    ]
    (e,) = decode_manifest(write_avro(manifest_schema, records), source="p")
    assert e.total_buckets == -1 and e.file.first_row_id == 5 and e.file.value_stats_cols == ()
    assert e.file.creation_time == 1_000 and e.file.key_stats == EMPTY_STATS

    list_schema = _rename_records(MANIFEST_FILE_META_SCHEMA, {"record": "ManifestFileMeta"})
    list_schema["fields"] = [f for f in list_schema["fields"] if not f["name"].startswith(("_MIN_", "_MAX_"))]
    list_schema["fields"].append({"name": "_TOTAL_BUCKETS", "type": ["null", "int"], "default": None})
    rec = {
        "_VERSION": 2,
        "_FILE_NAME": "manifest-p-0",
        "_FILE_SIZE": 9,
        "_NUM_ADDED_FILES": 1,
        "_NUM_DELETED_FILES": 0,
        "_PARTITION_STATS": {"_MIN_VALUES": EMPTY_ROW, "_MAX_VALUES": EMPTY_ROW, "_NULL_COUNTS": []},
        "_SCHEMA_ID": 0,
        "_TOTAL_BUCKETS": 4,
    }
    assert decode_manifest_list(write_avro(list_schema, [rec]), source="l") == [
        ManifestFileMeta("manifest-p-0", 9, 1, 0, EMPTY_STATS, 0)
    ]


def _one_record(data: bytes) -> dict[str, Any]:
    (r,) = read_avro(data, source="x")
    return r


@pytest.mark.parametrize(
    ("schema", "data", "decode", "expected"),
    [
        (MANIFEST_ENTRY_SCHEMA, lambda: encode_manifest([_entry("a")]), decode_manifest, 2),
        (MANIFEST_FILE_META_SCHEMA, lambda: encode_manifest_list([ManifestFileMeta("m", 1, 1, 0, EMPTY_STATS, 0)]),
         decode_manifest_list, 2),
        (INDEX_MANIFEST_ENTRY_SCHEMA,
         lambda: encode_index_manifest([IndexManifestEntry(FileKind.ADD, EMPTY_ROW, 0, IndexFileMeta("HASH", "i", 1, 1))]),
         decode_index_manifest, 1),
    ],
    ids=["manifest", "manifest-list", "index-manifest"],
)  # fmt: skip
@pytest.mark.parametrize("version", [1, 3, 99, -1])
def test_unknown_version_is_rejected(
    schema: dict[str, Any], data: Callable[[], bytes], decode: Callable[..., Any], expected: int, version: int
) -> None:
    if version == expected:
        return
    rec = _one_record(data())
    rec["_VERSION"] = version
    if "_FILE" in rec and rec["_FILE"]["_CREATION_TIME"] is not None:
        rec["_FILE"]["_CREATION_TIME"] = 0
    with pytest.raises(CorruptMetadataError, match=rf"bad-file: unsupported .*_VERSION {version}, expected {expected}"):
        decode(write_avro(schema, [rec]), source="bad-file")


@pytest.mark.parametrize("kind", [2, -1, 255])
def test_unknown_kind_is_rejected(kind: int) -> None:
    rec = _one_record(encode_manifest([_entry("a")]))
    rec["_KIND"] = kind
    rec["_FILE"]["_CREATION_TIME"] = 0
    with pytest.raises(CorruptMetadataError, match=r"k-file: malformed manifest entry record #0: .*_KIND"):
        decode_manifest(write_avro(MANIFEST_ENTRY_SCHEMA, [rec]), source="k-file")


def test_missing_required_field_is_corrupt() -> None:
    schema = copy.deepcopy(MANIFEST_ENTRY_SCHEMA)
    schema["fields"][5]["type"]["fields"] = [
        f for f in schema["fields"][5]["type"]["fields"] if f["name"] != "_FILE_SIZE"
    ]
    rec = _one_record(encode_manifest([_entry("a")]))
    rec["_FILE"]["_CREATION_TIME"] = 0
    with pytest.raises(CorruptMetadataError, match=r"f-file: .*missing field '_FILE_SIZE'"):
        decode_manifest(write_avro(schema, [rec]), source="f-file")


# ---- Java 0.9 golden tables ------------------------------------------------------------------------------------------


@needs_golden
def test_every_golden_metadata_file_decodes_and_is_referenced() -> None:
    for table in _golden_tables():
        names = {p.name for p in (table / "manifest").iterdir()}
        referenced: set[str] = set()
        for snap in _snapshots(table):
            for list_name in (snap.base_manifest_list, snap.delta_manifest_list):
                referenced.add(list_name)
                for meta in _manifest_list(table, list_name):
                    referenced.add(meta.file_name)
                    path = table / "manifest" / meta.file_name
                    entries = _manifest(table, meta.file_name)
                    assert meta.file_size == path.stat().st_size
                    assert meta.num_added_files == sum(e.kind == FileKind.ADD for e in entries)
                    assert meta.num_deleted_files == sum(e.kind == FileKind.DELETE for e in entries)
                    assert meta.schema_id == max(e.file.schema_id for e in entries)
                    # 0.9 writes no bucket/level/row-id summary
                    assert (meta.min_bucket, meta.max_bucket, meta.min_level, meta.max_level) == (None,) * 4
                    assert (meta.min_row_id, meta.max_row_id) == (None, None)
                    parts = {e.partition for e in entries}
                    assert meta.partition_stats.min_values in parts and meta.partition_stats.max_values in parts
        assert referenced == names, table.name


@needs_golden
def test_golden_snapshot_record_counts_match_manifests() -> None:
    for table in _golden_tables():
        for snap in _snapshots(table):
            delta = [e for m in _manifest_list(table, snap.delta_manifest_list) for e in _manifest(table, m.file_name)]
            added = sum(e.file.row_count for e in delta if e.kind == FileKind.ADD)
            deleted = sum(e.file.row_count for e in delta if e.kind == FileKind.DELETE)
            assert snap.delta_record_count == added - deleted
            everything = [
                e
                for name in (snap.base_manifest_list, snap.delta_manifest_list)
                for m in _manifest_list(table, name)
                for e in _manifest(table, m.file_name)
            ]
            live = merge_entries(everything, source=f"{table.name} snapshot {snap.id}")
            assert all(e.kind == FileKind.ADD for e in live)
            assert snap.total_record_count == sum(e.file.row_count for e in live)
            for e in live:
                assert e.file.creation_time is not None
                assert abs(e.file.creation_time - snap.time_millis) < 15 * 3600 * 1000  # local wall clock


@needs_golden
def test_golden_append_table_entries() -> None:
    table = TABLES / "append_unaware"
    snaps = _snapshots(table)
    assert [s.commit_kind for s in snaps] == [CommitKind.APPEND, CommitKind.APPEND]
    assert _manifest_list(table, snaps[0].base_manifest_list) == []  # first base list is empty
    live = merge_entries(
        e
        for name in (snaps[-1].base_manifest_list, snaps[-1].delta_manifest_list)
        for m in _manifest_list(table, name)
        for e in _manifest(table, m.file_name)
    )
    assert len(live) == 2
    for e in live:
        f = e.file
        assert (e.partition, e.bucket, e.total_buckets, f.level) == (EMPTY_ROW, 0, -1, 0)
        assert f.min_key == f.max_key == EMPTY_ROW and f.key_stats == EMPTY_STATS
        assert f.file_source == FileSource.APPEND and f.delete_row_count == 0 and f.extra_files == ()
        assert f.value_stats_cols is None and f.external_path is None and f.write_cols is None
        assert (table / "bucket-0" / f.file_name).stat().st_size == f.file_size
    assert sum(e.file.row_count for e in live) == len((table / "expected.jsonl").read_text().splitlines())


@needs_golden
def test_golden_compaction_is_delete_plus_add() -> None:
    table = TABLES / "pk_partitioned_compacted"
    snaps = _snapshots(table)
    assert [s.commit_kind for s in snaps] == [CommitKind.APPEND, CommitKind.APPEND, CommitKind.COMPACT]
    delta = [e for m in _manifest_list(table, snaps[2].delta_manifest_list) for e in _manifest(table, m.file_name)]
    deletes = [e for e in delta if e.kind == FileKind.DELETE]
    adds = [e for e in delta if e.kind == FileKind.ADD]
    assert (len(deletes), len(adds)) == (6, 2)
    assert all(e.file.level == 0 and e.file.file_source == FileSource.APPEND for e in deletes)
    assert all(e.file.level == 5 and e.file.file_source == FileSource.COMPACT for e in adds)
    assert all(e.total_buckets == 2 for e in delta)
    # every DELETE mirrors an ADD of an earlier snapshot exactly (identity and all other fields)
    earlier = {
        e.identifier: e
        for s in snaps[:2]
        for m in _manifest_list(table, s.delta_manifest_list)
        for e in _manifest(table, m.file_name)
    }
    for d in deletes:
        assert replace(earlier[d.identifier], kind=FileKind.DELETE) == d
    for e in adds:
        dt = "2024-01-01" if b"2024-01-01" in e.partition else "2024-01-02"
        assert (table / f"dt={dt}" / f"bucket-{e.bucket}" / e.file.file_name).stat().st_size == e.file.file_size
        assert e.file.min_key <= e.file.max_key or len(e.file.min_key) != len(e.file.max_key)


@needs_golden
@pytest.mark.parametrize("codec", ["zstandard", "null"])
def test_golden_reencode_round_trip(codec: str) -> None:
    for path in sorted(TABLES.glob("*/manifest/*")):
        data = path.read_bytes()
        if path.name.startswith("manifest-list-"):
            metas = decode_manifest_list(data, source=str(path))
            assert decode_manifest_list(encode_manifest_list(metas, codec=codec), source="re") == metas
        else:
            entries = decode_manifest(data, source=str(path))
            assert decode_manifest(encode_manifest(entries, codec=codec), source="re") == entries


# ---- corruption fuzzing -----------------------------------------------------------------------------------------


def _fuzz_inputs() -> list[tuple[str, bytes, Callable[..., list[Any]]]]:
    entries = [_entry(f"data-{i}.parquet", bucket=i % 3) for i in range(12)] + [FULL_ENTRY]
    out: list[tuple[str, bytes, Callable[..., list[Any]]]] = []
    for codec in ("zstandard", "null"):
        out.append((f"manifest-{codec}", encode_manifest(entries, codec=codec), decode_manifest))
        metas = [ManifestFileMeta(f"manifest-{i}", 1000 + i, i, 1, _stats(i), 0, 0, i) for i in range(5)]
        out.append((f"list-{codec}", encode_manifest_list(metas, codec=codec), decode_manifest_list))
        idx = [
            IndexManifestEntry(
                FileKind.ADD,
                EMPTY_ROW,
                i,
                IndexFileMeta("DELETION_VECTORS", f"index-{i}", 31, 1, (DeletionVectorMeta("d.parquet", 1, 22, 1),)),
            )
            for i in range(4)
        ]
        out.append((f"index-{codec}", encode_index_manifest(idx, codec=codec), decode_index_manifest))
    return out


@pytest.mark.parametrize(("name", "data", "decode"), _fuzz_inputs(), ids=lambda v: v if isinstance(v, str) else "")
def test_fuzz_flips_and_truncations_only_raise_corrupt_metadata(
    name: str, data: bytes, decode: Callable[..., list[Any]]
) -> None:
    rnd = random.Random(name)
    outcomes = {"corrupt": 0, "decoded": 0}
    for trial in range(400):
        buf = bytearray(data)
        for _ in range(rnd.randint(1, 3)):
            buf[rnd.randrange(len(buf))] ^= 1 << rnd.randrange(8)
        candidates = [bytes(buf)]
        if trial % 4 == 0:
            candidates.append(data[: rnd.randrange(len(data))])
        for blob in candidates:
            try:
                got = decode(blob, source=f"fuzz/{name}")
            except CorruptMetadataError as e:
                assert f"fuzz/{name}" in str(e)
                outcomes["corrupt"] += 1
            else:
                assert isinstance(got, list)
                outcomes["decoded"] += 1
    assert outcomes["corrupt"] > 0


@needs_golden
def test_fuzz_java_files() -> None:
    rnd = random.Random(9)
    for path in sorted(TABLES.glob("*/manifest/*")):
        data = path.read_bytes()
        decode = decode_manifest_list if path.name.startswith("manifest-list-") else decode_manifest
        for _ in range(60):
            buf = bytearray(data)
            buf[rnd.randrange(len(buf))] ^= 1 << rnd.randrange(8)
            try:
                decode(bytes(buf), source=path.name)
            except CorruptMetadataError as e:
                assert path.name in str(e)
        for n in range(0, len(data), 7):
            try:
                decode(data[:n], source=path.name)
            except CorruptMetadataError as e:
                assert path.name in str(e)


# ---- hot path ------------------------------------------------------------------------------------------------------


def test_decoding_10k_entries_adds_little_beyond_fastavro() -> None:
    entries = [
        _entry(f"data-{i:05d}.parquet", bucket=i % 16, value_stats=_stats(i), min_sequence_number=i)
        for i in range(10_000)
    ]
    data = encode_manifest(entries)
    best_raw = best_full = float("inf")
    for _ in range(2):
        t0 = time.process_time()
        read_avro(data, source="perf")
        t1 = time.process_time()
        decoded = decode_manifest(data, source="perf")
        t2 = time.process_time()
        best_raw = min(best_raw, t1 - t0)
        best_full = min(best_full, t2 - t1)
    assert decoded == entries
    # measured ~0.05-0.1 s of mapping on a dev machine; the bound is loose so that a busy CI box does not flake
    assert best_full - best_raw < 0.5, (best_raw, best_full)


# ---- column-wise decoding ------------------------------------------------------------------------------------------


def _mixed_entries() -> list[ManifestEntry]:
    parts = [b"\x00\x00\x00\x01" + bytes([i]) + bytes(15) for i in range(3)]
    return [
        replace(_entry(f"data-{i}.parquet", FileKind.DELETE if i % 5 == 0 else FileKind.ADD, bucket=i % 4,
                       value_stats=_stats(i), min_sequence_number=i), partition=parts[i % 3],
                total_buckets=4 if i % 7 else -1)
        for i in range(60)
    ] + [FULL_ENTRY]


@pytest.mark.parametrize("codec", ["zstandard", "null", "deflate"])
def test_columnar_decoder_equals_row_decoder(codec: str) -> None:
    entries = _mixed_entries()
    data = encode_manifest(entries, codec=codec)
    decoded = read_manifest(data, source="m", columnar_min_records=1)
    assert decoded._frame is not None  # the column-wise path took it
    assert decoded.entries() == decode_manifest_rows(data, source="m") == entries
    assert (decoded.added, decoded.deleted) == (sum(e.kind == FileKind.ADD for e in entries),
                                                sum(e.kind == FileKind.DELETE for e in entries))


@needs_golden
def test_columnar_decoder_equals_row_decoder_on_java_files() -> None:
    paths = [p for p in sorted(TABLES.glob("*/manifest/manifest-*")) if not p.name.startswith("manifest-list-")]
    assert paths
    for path in paths:
        data = path.read_bytes()
        decoded = read_manifest(data, source=str(path), columnar_min_records=1)
        assert decoded._frame is not None, path
        assert decoded.entries() == decode_manifest_rows(data, source=str(path)), path


def test_select_filters_partitions_and_buckets_before_building_entries() -> None:
    entries = _mixed_entries()
    data = encode_manifest(entries)
    wanted = {entries[1].partition}
    asked: list[bytes] = []

    def partition_ok(p: bytes) -> bool:
        asked.append(p)
        return p in wanted

    def buckets_for(total: int) -> set[int] | None:
        return {1, 3} if total == 4 else None

    expected = [e for e in entries if e.partition in wanted and (e.total_buckets != 4 or e.bucket in (1, 3))]
    assert expected
    columnar = read_manifest(data, source="m", columnar_min_records=1)
    assert columnar._frame is not None
    assert columnar.select(partition_ok=partition_ok, buckets_for=buckets_for) == expected
    assert len(asked) == len(set(asked)) == len({e.partition for e in entries})  # once per distinct partition
    rows = DecodedManifest(None, entries)
    assert rows.select(partition_ok=partition_ok, buckets_for=buckets_for) == expected
    assert columnar.select(partition_ok=lambda p: False) == [] == rows.select(partition_ok=lambda p: False)


def test_small_manifests_are_decoded_row_by_row_large_ones_column_wise() -> None:
    """The column-wise path has a fixed cost (~10 ms) the row-wise one does not: small files take the row path."""
    small = [_entry(f"s-{i}.parquet", min_sequence_number=i) for i in range(COLUMNAR_MIN_RECORDS - 1)]
    large = [_entry(f"l-{i}.parquet", min_sequence_number=i) for i in range(COLUMNAR_MIN_RECORDS)]
    for entries, columnar in ((small, False), (large, True)):
        decoded = read_manifest(encode_manifest(entries), source="m")
        assert (decoded._frame is not None) == columnar
        assert decoded.entries() == entries


def test_unreadable_by_polars_falls_back_to_row_decoder() -> None:
    data = encode_manifest([_entry("a.parquet")], codec="bzip2")
    decoded = read_manifest(data, source="m", columnar_min_records=1)
    assert decoded._frame is None and decoded.entries() == [_entry("a.parquet")]
    with pytest.raises(CorruptMetadataError, match="broken-file"):
        read_manifest(data[:-9], source="broken-file")


@pytest.mark.parametrize("codec", ["null", "deflate"])
def test_columnar_decoder_refuses_what_the_row_decoder_refuses(codec: str) -> None:
    """Flips in the blocks (no checksum with these codecs) fail like the row-wise decoder or decode to the same
    entries: a shifted field is caught by the block sizes, not read as other values. Only a union branch byte
    flipped to another non-null branch number reads as the undamaged entries where the row-wise decoder refuses."""
    entries = _mixed_entries()
    data = encode_manifest(entries, codec=codec)
    header_end = data.index(data[-16:]) + 16
    rnd = random.Random(codec)
    outcomes = {"same": 0, "corrupt": 0}
    for _ in range(300):
        buf = bytearray(data)
        buf[rnd.randrange(header_end, len(buf) - 16)] ^= 1 << rnd.randrange(8)
        try:
            expected: list[ManifestEntry] | None = decode_manifest_rows(bytes(buf), source="flip")
        except CorruptMetadataError:
            expected = None
        try:
            got: list[ManifestEntry] | None = read_manifest(bytes(buf), source="flip",
                                                            columnar_min_records=1).entries()
        except CorruptMetadataError as e:
            assert "flip" in str(e)
            got = None
        assert got == expected or (expected is None and got == entries)
        outcomes["same" if got is not None else "corrupt"] += 1
    assert outcomes["corrupt"] > 0
