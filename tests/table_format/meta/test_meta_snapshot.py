"""table_format.meta.snapshot: Java 0.9 snapshot files byte for byte, the digest's example, tags, corruption."""

from __future__ import annotations

import datetime as dt
import json
import random
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from table_format.errors import CorruptMetadataError
from table_format.meta.snapshot import (
    BATCH_COMMIT_IDENTIFIER,
    CommitKind,
    Snapshot,
    Tag,
    jackson_pretty,
    tag_from_json,
    tag_to_json,
)

GOLDEN = Path(__file__).resolve().parents[3].parent / "shared" / "golden"
SNAPSHOT_FILES = sorted((GOLDEN / "tables").glob("*/snapshot/snapshot-*")) if GOLDEN.is_dir() else []

needs_golden = pytest.mark.skipif(
    not SNAPSHOT_FILES, reason=f"Java-written golden tables not found under {GOLDEN} (shared/ not next to the repo)"
)

# format digest 3.1: minimal compatible snapshot written by a Python writer
DIGEST_EXAMPLE = """{
  "version" : 3,
  "id" : 1,
  "schemaId" : 0,
  "baseManifestList" : "manifest-list-<uuid>-0",
  "baseManifestListSize" : 884,
  "deltaManifestList" : "manifest-list-<uuid>-1",
  "deltaManifestListSize" : 1004,
  "commitUser" : "<uuid>",
  "commitIdentifier" : 9223372036854775807,
  "commitKind" : "APPEND",
  "timeMillis" : 1720496663041,
  "totalRecordCount" : 3,
  "deltaRecordCount" : 3
}"""

# Paimon's TagTest (master): a snapshot with null lists and a tag with create time and retention
TAG_TEST_JSON = """{
  "version" : 3,
  "id" : 0,
  "schemaId" : 0,
  "baseManifestList" : null,
  "deltaManifestList" : null,
  "commitUser" : null,
  "commitIdentifier" : 0,
  "commitKind" : "APPEND",
  "timeMillis" : 1000,
  "totalRecordCount" : 0,
  "deltaRecordCount" : 0,
  "tagCreateTime" : [ 1969, 1, 1, 0, 0, 0, 123456789 ],
  "tagTimeRetained" : 5.000000000
}"""

FULL = Snapshot(
    id=7,
    schema_id=2,
    base_manifest_list="manifest-list-a-0",
    delta_manifest_list="manifest-list-a-1",
    commit_user="user-1",
    commit_identifier=42,
    commit_kind=CommitKind.OVERWRITE,
    time_millis=1_720_000_000_000,
    total_record_count=100,
    delta_record_count=-5,
    uuid="0f3c-uuid",
    base_manifest_list_size=884,
    delta_manifest_list_size=1004,
    changelog_manifest_list="manifest-list-a-2",
    changelog_manifest_list_size=700,
    index_manifest="index-manifest-b-0",
    writer_version="python-0.1.0",
    log_offsets={0: 5, 3: 9},
    changelog_record_count=4,
    watermark=-9223372036854775808,
    statistics="stat-c-0",
    properties={"k": "v", "ünï": "cödé"},
    next_row_id=1000,
    operation="WRITE",
)


@needs_golden
@pytest.mark.parametrize("path", SNAPSHOT_FILES, ids=lambda p: f"{p.parts[-3]}/{p.name}")
def test_java_09_snapshot_round_trips_byte_for_byte(path: Path) -> None:
    text = path.read_text()
    snap = Snapshot.from_json(text, source=str(path))
    assert snap.version == 3
    assert snap.commit_identifier == BATCH_COMMIT_IDENTIFIER
    assert snap.changelog_manifest_list is None and snap.index_manifest is None
    assert snap.log_offsets == {} and snap.changelog_record_count == 0
    assert snap.base_manifest_list.startswith("manifest-list-") and snap.delta_manifest_list.startswith(
        "manifest-list-"
    )
    assert path.name == f"snapshot-{snap.id}"
    assert snap.to_json() == text  # Jackson pretty printer, `{ }`, key order, no trailing newline
    assert Snapshot.from_json(text.encode(), source=str(path)) == snap


@needs_golden
def test_java_09_commit_kinds() -> None:
    kinds = {
        f"{p.parts[-3]}/{p.name}": Snapshot.from_json(p.read_text(), source=str(p)).commit_kind for p in SNAPSHOT_FILES
    }
    assert kinds["pk_partitioned_compacted/snapshot-3"] is CommitKind.COMPACT
    assert kinds["append_unaware/snapshot-2"] is CommitKind.APPEND


def test_digest_example() -> None:
    snap = Snapshot.from_json(DIGEST_EXAMPLE, source="example")
    assert snap == Snapshot(
        id=1,
        schema_id=0,
        base_manifest_list="manifest-list-<uuid>-0",
        delta_manifest_list="manifest-list-<uuid>-1",
        commit_user="<uuid>",
        commit_identifier=BATCH_COMMIT_IDENTIFIER,
        commit_kind=CommitKind.APPEND,
        time_millis=1720496663041,
        total_record_count=3,
        delta_record_count=3,
        base_manifest_list_size=884,
        delta_manifest_list_size=1004,
    )
    # we write `changelogManifestList : null` like releases 0.9-1.3; everything else is the example verbatim
    expected = DIGEST_EXAMPLE.replace(
        '"deltaManifestListSize" : 1004,\n', '"deltaManifestListSize" : 1004,\n  "changelogManifestList" : null,\n'
    )
    assert snap.to_json() == expected


def test_full_snapshot_round_trip_and_key_order() -> None:
    text = FULL.to_json()
    assert Snapshot.from_json(text, source="full") == FULL
    keys = list(json.loads(text))
    assert keys == [
        "version",
        "uuid",
        "id",
        "schemaId",
        "baseManifestList",
        "baseManifestListSize",
        "deltaManifestList",
        "deltaManifestListSize",
        "changelogManifestList",
        "changelogManifestListSize",
        "indexManifest",
        "commitUser",
        "writerVersion",
        "commitIdentifier",
        "commitKind",
        "timeMillis",
        "logOffsets",
        "totalRecordCount",
        "deltaRecordCount",
        "changelogRecordCount",
        "watermark",
        "statistics",
        "properties",
        "nextRowId",
        "operation",
    ]
    assert '"logOffsets" : {\n    "0" : 5,\n    "3" : 9\n  },' in text
    assert '"ünï" : "cödé"' in text  # UTF-8, not \\u escapes, like Jackson


def test_omit_if_null_keys_are_omitted() -> None:
    snap = Snapshot.from_json(DIGEST_EXAMPLE, source="x")
    obj = json.loads(replace(snap, base_manifest_list_size=None, delta_manifest_list_size=None).to_json())
    assert obj["changelogManifestList"] is None
    for key in ("uuid", "baseManifestListSize", "indexManifest", "logOffsets", "properties", "nextRowId", "watermark"):
        assert key not in obj


def test_unknown_keys_ignored_and_optional_keys_may_be_missing() -> None:
    obj = json.loads(DIGEST_EXAMPLE)
    obj["totalFileSize"] = 5
    obj["someFutureKey"] = {"nested": [1, 2]}
    del obj["baseManifestListSize"]
    del obj["version"]  # missing version means 1
    snap = Snapshot.from_json(json.dumps(obj), source="x")
    assert snap.version == 1 and snap.base_manifest_list_size is None


def test_missing_record_counts_read_as_zero_like_java() -> None:
    obj = json.loads(DIGEST_EXAMPLE)
    del obj["totalRecordCount"]
    obj["deltaRecordCount"] = None
    snap = Snapshot.from_json(json.dumps(obj), source="x")
    assert (snap.total_record_count, snap.delta_record_count) == (0, 0)


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda o: o.pop("id"), "missing required key 'id'"),
        (lambda o: o.pop("commitKind"), "missing required key 'commitKind'"),
        (lambda o: o.pop("baseManifestList"), "missing required key 'baseManifestList'"),
        (lambda o: o.update(version=4), "snapshot version 4 is newer"),
        (lambda o: o.update(commitKind="MERGE"), "unknown commitKind 'MERGE'"),
        (lambda o: o.update(id="1"), "'id' must be an integer"),
        (lambda o: o.update(timeMillis=1.5), "'timeMillis' must be an integer"),
        (lambda o: o.update(schemaId=True), "'schemaId' must be an integer"),
        (lambda o: o.update(commitUser=5), "'commitUser' must be a string"),
        (lambda o: o.update(logOffsets=[1]), "malformed logOffsets"),
    ],
)
def test_bad_snapshots_name_the_file(mutate: Callable[[dict[str, Any]], object], message: str) -> None:
    obj = json.loads(DIGEST_EXAMPLE)
    mutate(obj)
    with pytest.raises(CorruptMetadataError, match="snapshot/snapshot-9: .*" + message.replace("(", r"\(")):
        Snapshot.from_json(json.dumps(obj), source="snapshot/snapshot-9")


@pytest.mark.parametrize(
    "text", ["", "{", "[]", "null", "42", '"x"', "{} {}", "\xff", b"\xff\xfe\x00", "NaN", '{"id": NaN}', "[" * 5000]
)
def test_garbage_is_corrupt(text: str | bytes) -> None:
    with pytest.raises(CorruptMetadataError, match="snap-x"):
        Snapshot.from_json(text, source="snap-x")


@pytest.mark.parametrize("seed", range(3))
def test_fuzz_snapshot_json(seed: int) -> None:
    rnd = random.Random(seed)
    base = FULL.to_json().encode()
    outcomes = {"corrupt": 0, "decoded": 0}
    for trial in range(700):
        buf = bytearray(base)
        for _ in range(rnd.randint(1, 3)):
            buf[rnd.randrange(len(buf))] ^= 1 << rnd.randrange(8)
        blobs = [bytes(buf)] + ([base[: rnd.randrange(len(base))]] if trial % 5 == 0 else [])
        for blob in blobs:
            try:
                snap = Snapshot.from_json(blob, source="fuzz-snap")
            except CorruptMetadataError as e:
                assert "fuzz-snap" in str(e)
                outcomes["corrupt"] += 1
            else:  # a flip inside a value (a digit, a letter of a name) still parses: that is fine
                assert isinstance(snap, Snapshot)
                outcomes["decoded"] += 1
    assert outcomes["corrupt"] > 0 and outcomes["decoded"] > 0


# ---- tags ----------------------------------------------------------------------------------------------------------


def test_tag_test_expectation_from_java() -> None:
    tag = tag_from_json(TAG_TEST_JSON.replace("null", '"x"'), source="tag/tag-t")
    assert tag.create_time == dt.datetime(1969, 1, 1, 0, 0, 0, 123456)  # nanos truncated to micros
    assert tag.time_retained == dt.timedelta(seconds=5)
    assert tag.snapshot.time_millis == 1000 and tag.snapshot.commit_kind is CommitKind.APPEND
    java = TAG_TEST_JSON.replace("null", '"x"').replace("123456789", "123456000")
    ours = tag.to_json()
    # ours adds the `changelogManifestList : null` line that releases <= 1.3 write; otherwise identical
    assert ours == java.replace(
        '"deltaManifestList" : "x",\n', '"deltaManifestList" : "x",\n  "changelogManifestList" : null,\n'
    )


@pytest.mark.parametrize(
    ("create", "array"),
    [
        (dt.datetime(2024, 1, 1, 0, 0), "[ 2024, 1, 1, 0, 0 ]"),
        (dt.datetime(2024, 1, 1, 0, 0, 7), "[ 2024, 1, 1, 0, 0, 7 ]"),
        (dt.datetime(2024, 12, 31, 23, 59, 0, 1), "[ 2024, 12, 31, 23, 59, 0, 1000 ]"),
    ],
)
def test_tag_create_time_array_form(create: dt.datetime, array: str) -> None:
    snap = Snapshot.from_json(DIGEST_EXAMPLE, source="x")
    text = tag_to_json(snap, create, None)
    assert f'"tagCreateTime" : {array}\n}}' in text and "tagTimeRetained" not in text
    assert tag_from_json(text, source="t") == Tag(snap, create, None)


@pytest.mark.parametrize(
    ("retained", "literal"),
    [
        (dt.timedelta(seconds=5), "5.000000000"),
        (dt.timedelta(days=1, microseconds=5), "86400.000005000"),
        (dt.timedelta(milliseconds=1500), "1.500000000"),
        (dt.timedelta(0), "0.0"),
    ],
)
def test_tag_time_retained_is_a_decimal_number(retained: dt.timedelta, literal: str) -> None:
    snap = Snapshot.from_json(DIGEST_EXAMPLE, source="x")
    text = tag_to_json(snap, None, retained)
    assert f'"tagTimeRetained" : {literal}\n}}' in text
    assert tag_from_json(text, source="t") == Tag(snap, None, retained)


def test_tag_without_tag_keys_and_snapshot_reading_a_tag() -> None:
    tag = tag_from_json(DIGEST_EXAMPLE, source="tag/tag-old")
    assert tag.create_time is None and tag.time_retained is None
    text = Tag(tag.snapshot, dt.datetime(2024, 5, 1, 12, 0), dt.timedelta(hours=1)).to_json()
    assert Snapshot.from_json(text, source="tag") == tag.snapshot


@pytest.mark.parametrize(
    ("key", "value"),
    [("tagCreateTime", "[1, 2]"), ("tagCreateTime", "[2024, 13, 1, 0, 0]"), ("tagTimeRetained", '"abc"')],
)
def test_bad_tag_times_are_corrupt(key: str, value: str) -> None:
    obj = json.loads(DIGEST_EXAMPLE)
    text = json.dumps(obj)[:-1] + f', "{key}": {value}}}'
    with pytest.raises(CorruptMetadataError, match="tag/tag-bad"):
        tag_from_json(text, source="tag/tag-bad")


def test_jackson_pretty_shapes() -> None:
    assert jackson_pretty({}) == "{ }"
    assert jackson_pretty([]) == "[ ]"
    assert jackson_pretty({"a": [1, 2], "b": {"c": None}, "d": {}}) == (
        '{\n  "a" : [ 1, 2 ],\n  "b" : {\n    "c" : null\n  },\n  "d" : { }\n}'
    )
    assert jackson_pretty({"f": [{"id": 0}]}) == '{\n  "f" : [ {\n    "id" : 0\n  } ]\n}'
