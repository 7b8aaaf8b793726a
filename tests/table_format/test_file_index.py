"""Paimon's bloom-filter file index: written with every data file (embedded in the manifest or a `.index` extra
file), used by filtered scans and lookups to skip files, kept by compaction, live for orphan removal and expired
with its data file. Java's own bytes are checked in tests/interop/test_file_index_java.py."""

from __future__ import annotations

import datetime as dt
import os
import struct
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from table_format import FileSystemCatalog, write_table
from table_format.data.bloom_filter import BloomFilter64, fast_hash
from table_format.data.file_index import parse_index, serialize_index
from table_format.data.xxhash64 import xxhash64
from table_format.errors import CorruptMetadataError, OptionError, UnsupportedFeatureError
from table_format.predicate.key_set import KeySet
from table_format.scan.planner import ScanPlanner
from table_format.schema_evolution import RemoveOption, RenameColumn, SetOption
from table_format.types import BigIntType, VarCharType


@pytest.fixture
def catalog(tmp_path: Any) -> FileSystemCatalog:
    cat = FileSystemCatalog(str(tmp_path / "wh"))
    cat.create_database("db")
    return cat


SCHEMA = pa.schema([("id", pa.int64()), ("s", pa.string()), ("v", pa.float64())])


def _batch(start: int, n: int = 10, tag: str = "k") -> pa.Table:
    ids = np.arange(start, start + n, dtype=np.int64)
    return pa.table({"id": ids, "s": [f"{tag}{i}" for i in ids], "v": (ids % 10).astype(np.float64)}, schema=SCHEMA)


def _files(table: Any, filter: Any = None) -> int:
    return sum(len(s.files) for s in table.scan(filter=filter).plan())


def _u64(values: np.ndarray) -> list[int]:
    return [int(v) & (2**64 - 1) for v in values]


def test_xxhash64_of_known_inputs_and_of_every_length_at_once() -> None:
    known = {"": 0xEF46DB3751D8E999, "a": 0xD24EC4F1A98C6E5B, "abc": 0x44BC2CF5AD770999,
             "Nobody inspects the spammish repetition": 0xFBCEA83C8A378BF1}
    assert _u64(xxhash64(pa.array(list(known)))) == list(known.values())
    # one column of strings of 0..200 bytes (every tail and stripe count) hashes as each value alone does
    rng = np.random.default_rng(7)
    values = ["".join(chr(c) for c in rng.integers(97, 123, n)) for n in rng.permutation(201)]
    together = _u64(xxhash64(pa.array(values)))
    assert together == [_u64(xxhash64(pa.array([v])))[0] for v in values]
    assert _u64(xxhash64(pa.array(values, pa.large_binary()).slice(50, 20))) == together[50:70]


def test_bloom_filter_sizes_and_membership() -> None:
    assert BloomFilter64.sized(100, 0.1) == (480, 3)  # what Java 0.9 writes for items 100, fpp 0.1
    assert BloomFilter64.sized(1_000_000, 0.1)[0] == 4_792_536
    present = pa.array([f"v{i}" for i in range(500)])
    bloom = BloomFilter64.build(fast_hash(present, VarCharType()), items=500, fpp=0.01)
    parsed = BloomFilter64.parse(bloom.serialize())
    assert parsed == bloom
    assert parsed.may_contain(fast_hash(present, VarCharType())).all()
    absent = parsed.may_contain(fast_hash(pa.array([f"w{i}" for i in range(5000)]), VarCharType()))
    assert absent.mean() < 0.03  # about the configured false-positive rate
    longs = pa.array([-(2**63), -1, 0, 1, 2**63 - 1], pa.int64())
    assert BloomFilter64.build(fast_hash(longs, BigIntType()), items=10, fpp=0.1).may_contain(
        fast_hash(longs, BigIntType())).all()


def test_index_format_round_trip_and_corruption() -> None:
    bodies = {"s": {"bloom-filter": b"\x00\x00\x00\x01abc"}, "id": {"bloom-filter": b"\x00\x00\x00\x02xy"}}
    data = serialize_index(bodies)
    assert data[:8] == (1493475289347502).to_bytes(8, "big") and data[8:12] == b"\x00\x00\x00\x01"
    assert parse_index(data, source="x") == bodies
    # version 2 (Paimon after 2.0): magic, version, bodies, then the entries (8-byte offsets) in a footer
    bodies_v2 = b"\x00\x00\x00\x01abc"
    footer = struct.pack(">i", 1) + b"\x00\x01s" + struct.pack(">i", 2) + b"\x00\x0cbloom-filter" + \
        struct.pack(">qq", 12, len(bodies_v2)) + b"\x00\x06bitmap" + struct.pack(">qq", -1, 0)
    v2 = struct.pack(">qi", 1493475289347502, 2) + bodies_v2 + footer + struct.pack(">iq", len(footer),
                                                                                      0x5041464944583032)
    assert parse_index(v2, source="x") == {"s": {"bloom-filter": bodies_v2}}
    assert parse_index(struct.pack(">qi", 1493475289347502, 3) + b"\x00" * 20, source="x") == {}  # newer: no verdict
    with pytest.raises(CorruptMetadataError, match="not a Paimon file index"):
        parse_index(b"\x00" * 40, source="x")
    with pytest.raises(CorruptMetadataError, match="x: "):
        parse_index(data[:30], source="x")


def test_embedded_and_separate_index_prune_equality_and_in(catalog: FileSystemCatalog) -> None:
    table = catalog.create_table("db.t", SCHEMA, options={
        "bucket": "-1", "file-index.bloom-filter.columns": "s, id", "file-index.bloom-filter.s.items": "20",
        "file-index.bloom-filter.id.items": "20", "file-index.bloom-filter.id.fpp": "0.01",
        "file-index.in-manifest-threshold": "100 b"})
    for b in range(6):
        write_table(table, _batch(b * 10))
    table = table.refresh()
    entries = table.store.manifests.live_files(table.store.snapshots.latest())
    assert all(e.file.embedded_index is None and e.file.extra_files == (e.file.file_name + ".index",)
               for e in entries)  # two columns of 20 items: more than 100 bytes
    assert _files(table) == 6
    assert _files(table, [("s", "=", "k34")]) == 1
    assert table.scan(filter=[("s", "=", "k34")]).to_arrow().column("id").to_pylist() == [34]
    assert _files(table, [("id", "in", [5, 42, 1000])]) == 2
    assert _files(table, [("s", "=", "nope")]) == 0
    assert _files(table, [("v", "=", 3.0)]) == 6  # not indexed
    assert _files(table, [[("s", "=", "k3")], [("v", "=", 5.0)]]) == 6  # OR with an unindexed part
    assert _files(table, [("s", "=", "k3"), ("v", ">", 0.0)]) == 1
    off = catalog.alter_table("db.t", [SetOption("file-index.read.enabled", "false")])
    assert _files(off, [("s", "=", "k34")]) == 2  # min/max statistics alone: 'k0'..'k9' holds 'k34' too
    assert off.scan(filter=[("s", "=", "k34")]).to_arrow().column("id").to_pylist() == [34]

    small = catalog.create_table("db.e", SCHEMA, options={
        "bucket": "-1", "file-index.bloom-filter.columns": "s", "file-index.bloom-filter.s.items": "20"})
    for b in range(3):
        write_table(small, _batch(b * 10))
    small = small.refresh()
    entries = small.store.manifests.live_files(small.store.snapshots.latest())
    assert all(e.file.embedded_index is not None and not e.file.extra_files for e in entries)
    assert _files(small, [("s", "in", ["k1", "k25"])]) == 2
    small.maintenance.compact(full=True)  # an append table's compaction writes the index of its output too
    small = small.refresh()
    [entry] = small.store.manifests.live_files(small.store.snapshots.latest())
    assert entry.file.embedded_index is not None and entry.file.row_count == 30
    assert _files(small, [("s", "=", "k25")]) == 1 and _files(small, [("s", "=", "k05")]) == 0


def test_primary_key_table_prunes_by_key_always_and_by_value_only_on_final_rows(catalog: FileSystemCatalog) -> None:
    options = {"bucket": "1", "file-index.bloom-filter.columns": "id,s", "file-index.bloom-filter.id.items": "50",
               "file-index.bloom-filter.s.items": "50"}
    table = catalog.create_table("db.pk", SCHEMA, primary_keys=["id"], options={**options, "write-only": "true"})
    write_table(table, _batch(0, 20, "a"))
    write_table(table, _batch(0, 5, "b"))  # keys 0..4 now hold b*: two overlapping sorted runs
    table = table.refresh()
    assert _files(table, [("id", "=", 15)]) == 1  # the key part of a filter prunes any split
    # a value filter must not drop the newer file: the old version 'a3' would resurface
    assert table.scan(filter=[("s", "=", "a3")]).to_arrow().num_rows == 0
    assert table.scan(filter=[("s", "=", "b3")]).to_arrow().column("id").to_pylist() == [3]
    assert _files(table, [("s", "=", "a3")]) == 2
    table.maintenance.compact(full=True)
    table = table.refresh()
    [entry] = table.store.manifests.live_files(table.store.snapshots.latest())
    assert entry.file.embedded_index is not None or entry.file.extra_files  # compaction writes the index too
    assert _files(table, [("s", "=", "a3")]) == 0  # one final file: the value filter prunes
    assert table.scan(filter=[("s", "=", "a13")]).to_arrow().column("id").to_pylist() == [13]
    table.maintenance.rescale(bucket=2)
    table = table.refresh()
    entries = table.store.manifests.live_files(table.store.snapshots.latest())
    assert len(entries) == 2 and all(e.file.embedded_index is not None for e in entries)  # rescale writes it too
    assert _files(table, [("s", "=", "a13")]) == 1

    dv = catalog.create_table("db.dv", SCHEMA, primary_keys=["id"], options={
        **options, "deletion-vectors.enabled": "true"})
    write_table(dv, _batch(0, 20, "a"))
    write_table(dv, _batch(100, 20, "c"))
    dv = dv.refresh()
    assert _files(dv, [("s", "=", "c105")]) == 1 and _files(dv, [("s", "=", "x")]) == 0
    assert dv.scan(filter=[("s", "=", "c105")]).to_arrow().column("id").to_pylist() == [105]


def test_float_zero_and_timestamps_filter_exactly(catalog: FileSystemCatalog) -> None:
    schema = pa.schema([("d", pa.float64()), ("f", pa.float32()), ("ts", pa.timestamp("us"))])
    table = catalog.create_table("db.z", schema, options={
        "bucket": "-1", "file-index.bloom-filter.columns": "d,f,ts", "file-index.in-manifest-threshold": "4 mb"})
    stamp = dt.datetime(1969, 12, 31, 23, 59, 59, 999999)
    write_table(table, pa.table({"d": [-0.0, 5.0], "f": pa.array([-0.0, 5.0], pa.float32()), "ts": [stamp, None]},
                                schema=schema))
    write_table(table, pa.table({"d": [1.0, 5.0], "f": pa.array([1.0, 5.0], pa.float32()),
                                 "ts": [dt.datetime(2024, 1, 1), None]}, schema=schema))
    table = table.refresh()
    assert table.scan(filter=[("d", "=", 0.0)]).to_arrow().num_rows == 1  # -0.0 = 0.0, though their bits differ
    assert table.scan(filter=[("f", "in", [0.0, 7.0])]).to_arrow().num_rows == 1
    assert _files(table, [("d", "=", 1.0)]) == 1
    assert table.scan(filter=[("ts", "=", stamp)]).to_arrow().num_rows == 1 and _files(table, [("ts", "=", stamp)]) == 1


def test_a_renamed_column_keeps_its_index_by_field_id(catalog: FileSystemCatalog) -> None:
    table = catalog.create_table("db.r", SCHEMA, options={
        "bucket": "-1", "file-index.bloom-filter.columns": "s", "file-index.bloom-filter.s.items": "20"})
    for b in range(3):
        write_table(table, _batch(b * 10, tag="x"))
    with pytest.raises(OptionError, match="'s' is not a column"):
        catalog.alter_table("db.r", [RenameColumn("s", "name")])
    table = catalog.alter_table("db.r", [
        RenameColumn("s", "name"), SetOption("file-index.bloom-filter.columns", "name"),
        RemoveOption("file-index.bloom-filter.s.items"), SetOption("file-index.bloom-filter.name.items", "20")])
    write_table(table, _batch(30, tag="x").rename_columns(["id", "name", "v"]))
    table = table.refresh()
    assert _files(table, [("name", "=", "x14")]) == 1  # the old files' index is under 's'
    assert table.scan(filter=[("name", "in", ["x14", "x35"])]).to_arrow().column("id").to_pylist() == [14, 35]
    assert _files(table, [("name", "in", ["x14", "x35"])]) == 2


def test_lookup_skips_files_whose_index_lacks_the_keys(catalog: FileSystemCatalog) -> None:
    table = catalog.create_table("db.lk", SCHEMA, primary_keys=["id"], options={
        "bucket": "1", "write-only": "true", "file-index.bloom-filter.columns": "id",
        "file-index.bloom-filter.id.items": "100", "file-index.bloom-filter.id.fpp": "0.01"})
    for b in range(5):  # interleaved keys: key statistics cannot tell the files apart
        write_table(table, _batch(0, 100).filter(pa.array(np.arange(100) % 5 == b)))
    table = table.refresh()
    keys = pa.table({"id": pa.array([3, 8, 13], pa.int64())})
    planner = ScanPlanner(table.store, KeySet.of(keys))
    files = sum(len(s.files) for s in planner.plan(table.store.snapshots.latest()))
    assert files == 1 and planner.file_index.skipped == 4
    assert sorted(table.lookup(keys).column("s").to_pylist()) == ["k13", "k3", "k8"]


def test_index_files_are_live_for_orphan_removal_and_expire_with_their_data(catalog: FileSystemCatalog) -> None:
    table = catalog.create_table("db.ex", SCHEMA, options={
        "bucket": "-1", "file-index.bloom-filter.columns": "s", "snapshot.num-retained.min": "1"})
    write_table(table, _batch(0))
    write_table(table, _batch(10))
    bucket = Path(table.path, "bucket-0")
    index_files = sorted(p.name for p in bucket.glob("*.index"))
    assert len(index_files) == 2  # 1,000,000 items by default: far above the 500 bytes threshold
    old = dt.datetime.now().timestamp() - 3 * 86400
    for p in bucket.iterdir():
        os.utime(p, (old, old))
    result = table.maintenance.remove_orphan_files(dry_run=True)
    assert not [p for p in result.deleted_files if p.endswith(".index")]
    write_table(table, _batch(100), mode="overwrite")
    table.maintenance.expire_snapshots(retain_min=1, retain_max=1, dry_run=False)
    left = sorted(p.name for p in bucket.glob("*.index"))
    assert len(left) == 1 and left[0] not in index_files


def test_bad_index_options_are_refused_naming_table_and_column(catalog: FileSystemCatalog) -> None:
    with pytest.raises(OptionError, match=r"db.b.*'nope' is not a column"):
        catalog.create_table("db.b", SCHEMA, options={"file-index.bloom-filter.columns": "nope"})
    with pytest.raises(UnsupportedFeatureError, match="'flag'.*BOOLEAN"):
        catalog.create_table("db.b", pa.schema([("flag", pa.bool_())]),
                             options={"file-index.bloom-filter.columns": "flag"})
    with pytest.raises(OptionError, match=r"fpp' must be in \(0, 1\)"):
        catalog.create_table("db.b", SCHEMA, options={"file-index.bloom-filter.columns": "s",
                                                      "file-index.bloom-filter.s.fpp": "1.5"})
    with pytest.raises(OptionError, match="names column 'v', which is not in"):
        catalog.create_table("db.b", SCHEMA, options={"file-index.bloom-filter.columns": "s",
                                                      "file-index.bloom-filter.v.items": "10"})
    with pytest.raises(UnsupportedFeatureError, match=r"map entries \('s\[k\]'\)"):
        catalog.create_table("db.b", SCHEMA, options={"file-index.bloom-filter.columns": "s[k]"})
    assert not catalog.table_exists("db.b")
