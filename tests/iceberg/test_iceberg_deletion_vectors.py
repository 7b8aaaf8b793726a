"""Deletion vectors in the Iceberg view (`metadata.iceberg.format-version` = 3): Paimon's deletion vectors become Puffin
`deletion-vector-v1` blobs in delete manifests, and PyIceberg 0.12 and DuckDB 1.5.5 apply them: deleted rows stay
absent across commits that change the vectors, in time travel, after compaction and after expiry. Format version 2
with deletion vectors is refused by name."""

from __future__ import annotations

import datetime as dt
import json
import os
import struct
import zlib
from pathlib import Path
from typing import Any

import fastavro
import numpy as np
import pyarrow as pa
import pytest
from pyroaring import BitMap
from test_iceberg_metadata import READERS, metadata_path, rows

from table_format import (
    CorruptMetadataError,
    FileSystemCatalog,
    OptionError,
    SchemaChange,
    Table,
    UnsupportedFeatureError,
    write_table,
)
from table_format.data.deletion_vector import MAGIC_64, encode_deletion_vector
from table_format.iceberg.puffin import DeletionVectorBlob, iceberg_blob, puffin_file

V3 = {"metadata.iceberg.storage": "table-location", "metadata.iceberg.format-version": "3"}
DV = {"deletion-vectors.enabled": "true"}
SCHEMA = pa.schema([("id", pa.int64()), ("dt", pa.string()), ("v", pa.string())])
KINDED = SCHEMA.append(pa.field("_row_kind", pa.string()))


def upsert(t: Table, ids: list[int], dt_value: str, v: str) -> None:
    write_table(t, pa.table({"id": ids, "dt": [dt_value] * len(ids), "v": [f"{v}{i}" for i in ids]}, schema=SCHEMA))


def delete(t: Table, ids: list[int], dt_value: str) -> None:
    write_table(t, pa.table({"id": ids, "dt": [dt_value] * len(ids), "v": [None] * len(ids),
                             "_row_kind": ["-D"] * len(ids)}, schema=KINDED))


def delete_entries(t: Table) -> list[dict[str, Any]]:
    """The live entries of the current snapshot's delete manifests."""
    with open(metadata_path(t)) as f:
        meta = json.load(f)
    current = next(s for s in meta["snapshots"] if s["snapshot-id"] == meta["current-snapshot-id"])
    with open(current["manifest-list"], "rb") as f:
        manifests = [m for m in fastavro.reader(f) if isinstance(m, dict) and m["content"] == 1]
    out = []
    for m in manifests:
        with open(m["manifest_path"], "rb") as f:
            out += [e for e in fastavro.reader(f) if isinstance(e, dict) and e["status"] != 2]
    return out


def assert_puffins_are_those_retained_snapshots_use(t: Table) -> None:
    with open(metadata_path(t)) as f:
        meta = json.load(f)
    assert {s["snapshot-id"] for s in meta["snapshots"]} <= {s.id for s in t.snapshots()}
    referenced = set()
    for snap in meta["snapshots"]:
        with open(snap["manifest-list"], "rb") as f:
            for m in fastavro.reader(f):
                if isinstance(m, dict) and m["content"] == 1:
                    with open(m["manifest_path"], "rb") as g:
                        referenced |= {os.path.basename(e["data_file"]["file_path"]) for e in fastavro.reader(g)
                                       if isinstance(e, dict)}
    puffins = {n for n in os.listdir(os.path.join(t.path, "metadata")) if n.endswith(".puffin")}
    assert referenced and puffins == referenced  # what retained snapshots use is kept, nothing else


def assert_readers_read_ours(readers: Any, t: Table, snapshot_id: int | None = None) -> list[dict[str, Any]]:
    expected = rows(t.scan(snapshot_id=snapshot_id).to_arrow()) if snapshot_id else rows(t.scan().to_arrow())
    for reader in READERS:
        assert readers.read(reader, metadata_path(t), snapshot_id=snapshot_id)["rows"] == expected, reader
    return expected


def test_primary_key_table_deletion_vectors_across_commits(warehouse: str, iceberg_readers: Any) -> None:
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db")
    t = catalog.create_table("db.dv", SCHEMA, primary_keys=["dt", "id"], partition_keys=["dt"],
                             options={**V3, **DV, "bucket": "2"})
    upsert(t, list(range(40)), "2024-01-01", "a")
    upsert(t, list(range(40)), "2024-01-02", "b")
    assert_readers_read_ours(iceberg_readers, t)
    assert delete_entries(t) == []
    # deletes become deletion vectors on the highest-level files: the readers apply them
    delete(t, [1, 2, 3, 30], "2024-01-01")
    delete(t, [5, 6], "2024-01-02")
    first = t.latest_snapshot().id
    expected = assert_readers_read_ours(iceberg_readers, t)
    assert len(expected) == 74
    entries = delete_entries(t)
    assert {e["data_file"]["file_format"] for e in entries} == {"PUFFIN"}
    assert sum(e["data_file"]["record_count"] for e in entries) == 6
    refs = [e["data_file"]["referenced_data_file"] for e in entries]
    assert len(refs) == len(set(refs))  # at most one deletion vector per data file
    # more deletes in one partition: its vectors change (a new Puffin file), the other partition's are reused
    before = {e["data_file"]["referenced_data_file"]: e["data_file"]["file_path"] for e in entries}
    delete(t, [7, 8, 9, 10, 11], "2024-01-01")
    assert_readers_read_ours(iceberg_readers, t)
    after = {e["data_file"]["referenced_data_file"]: e["data_file"]["file_path"] for e in delete_entries(t)}
    unchanged = [ref for ref in after if "dt=2024-01-02" in ref]
    assert unchanged and all(after[ref] == before[ref] for ref in unchanged)
    assert any(after[ref] != before.get(ref) for ref in after if "dt=2024-01-01" in ref)
    # time travel to the earlier snapshot applies that snapshot's vectors
    assert_readers_read_ours(iceberg_readers, t, snapshot_id=first)
    # upserts: the new versions sit below the highest level until a full compaction; the Iceberg view never shows
    # a deleted row nor an old version (the vectors hide them), it only lags for the upserted keys
    upsert(t, [0, 12, 100], "2024-01-01", "c")
    ours = {(r["dt"], r["id"]): r for r in rows(t.scan().to_arrow())}
    for reader in READERS:
        seen = iceberg_readers.read(reader, metadata_path(t))["rows"]
        assert all(ours[(r["dt"], r["id"])] == r for r in seen), reader
        assert {(r["dt"], r["id"]) for r in seen} == set(ours) - {("2024-01-01", i) for i in (0, 12, 100)}, reader
    # a full compaction rewrites the partition with new rows (its vectors go); a bucket that already is one
    # highest-level file is left as it is, its vector too (as in Java), and the readers still apply it
    t.maintenance.compact(full=True)
    assert_readers_read_ours(iceberg_readers, t)
    entries = delete_entries(t)
    assert entries and all("dt=2024-01-02" in e["data_file"]["referenced_data_file"] for e in entries)
    with open(metadata_path(t)) as f:
        assert json.load(f)["snapshots"][-1]["summary"]["total-delete-files"] == str(len(entries))
    # expiry: the readers keep reading the latest snapshot, Puffin files no retained snapshot uses are gone
    before = len([n for n in os.listdir(os.path.join(t.path, "metadata")) if n.endswith(".puffin")])
    t.maintenance.expire_snapshots(retain_min=1, retain_max=1, older_than=dt.timedelta(0), dry_run=False)
    assert_readers_read_ours(iceberg_readers, t)
    assert len([n for n in os.listdir(os.path.join(t.path, "metadata")) if n.endswith(".puffin")]) < before
    assert_puffins_are_those_retained_snapshots_use(t)


def test_expiry_keeps_the_puffin_files_retained_snapshots_use(warehouse: str, iceberg_readers: Any) -> None:
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db")
    t = catalog.create_table("db.keep", SCHEMA, primary_keys=["id"], options={**V3, **DV, "bucket": "1"})
    upsert(t, list(range(20)), "2024-01-01", "a")
    delete(t, [1], "2024-01-01")
    delete(t, [2, 3], "2024-01-01")
    delete(t, [4], "2024-01-01")
    t.maintenance.expire_snapshots(retain_min=3, retain_max=3, older_than=dt.timedelta(0), dry_run=False)
    with open(metadata_path(t)) as f:
        retained = [s["snapshot-id"] for s in json.load(f)["snapshots"]]
    assert len(retained) >= 2
    for sid in retained:  # every retained Iceberg snapshot applies its own vectors
        assert_readers_read_ours(iceberg_readers, t, snapshot_id=sid)
    assert_puffins_are_those_retained_snapshots_use(t)
    # a rollback rebuilds the view from the older snapshot (its smaller vectors), and commits go on from there
    t.rollback_to(snapshot_id=retained[0])
    assert_readers_read_ours(iceberg_readers, t)
    delete(t, [9], "2024-01-01")
    assert sorted(r["id"] for r in assert_readers_read_ours(iceberg_readers, t)) == [
        i for i in range(20) if i not in (1, 2, 3, 9)]
    assert_puffins_are_those_retained_snapshots_use(t)


def test_format_version_2_with_deletion_vectors_is_refused_by_name(warehouse: str) -> None:
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db")
    t = catalog.create_table("db.v2", SCHEMA, primary_keys=["id"],
                             options={"metadata.iceberg.storage": "table-location", **DV, "bucket": "1"})
    with pytest.raises(UnsupportedFeatureError, match=r"metadata\.iceberg\.format-version=3"):
        upsert(t, [1], "2024-01-01", "a")
    assert t.latest_snapshot() is None
    bad = catalog.create_table("db.v4", SCHEMA, options={**V3, "metadata.iceberg.format-version": "4"})
    with pytest.raises(OptionError, match=r"'metadata\.iceberg\.format-version' = '4'"):
        upsert(bad, [1], "2024-01-01", "a")
    assert bad.latest_snapshot() is None


def test_append_table_format_version_3(warehouse: str, iceberg_readers: Any) -> None:
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db")
    t = catalog.create_table("db.app", SCHEMA, partition_keys=["dt"], options={**V3, **DV})
    upsert(t, [1, 2], "2024-01-01", "a")
    upsert(t, [3], "2024-01-02", "a")
    assert_readers_read_ours(iceberg_readers, t)
    with open(metadata_path(t)) as f:
        meta = json.load(f)
    assert meta["format-version"] == 3 and meta["next-row-id"] == 3
    assert [(s["first-row-id"], s["added-rows"]) for s in meta["snapshots"]] == [(0, 2), (2, 1)]
    from click.testing import CliRunner

    from lakehouse_cli.main import cli

    described = CliRunner().invoke(cli, ["-w", warehouse, "describe", "db.app"]).output
    assert "Iceberg v3 Puffin deletion vectors" in described


def _positions(blob: bytes) -> np.ndarray:
    """Decode a deletion-vector-v1 blob by the Puffin spec, independently of the writer."""
    length = struct.unpack_from(">I", blob, 0)[0]
    body = blob[4:4 + length]
    assert body[:4] == bytes([0xD1, 0xD3, 0x39, 0x64])
    assert struct.unpack_from(">I", blob, 4 + length)[0] == zlib.crc32(body)
    count = struct.unpack_from("<Q", body, 4)[0]
    pos, out = 12, []
    for _ in range(count):
        key = struct.unpack_from("<I", body, pos)[0]
        bitmap = BitMap.deserialize(body[pos + 4:])
        pos += 4 + len(bitmap.serialize())
        out.append((np.int64(key) << 32) | np.array(bitmap.to_array(), dtype=np.int64))
    return np.concatenate(out)


def test_blob_framing() -> None:
    positions = np.array([0, 3, 4, 5, 70_000, 1 << 20], dtype=np.int64)
    blob = iceberg_blob(encode_deletion_vector(positions), source="test")
    assert np.array_equal(_positions(blob), positions)
    # a 64-bit Paimon vector is already a deletion-vector-v1 blob: copied as it is
    high = np.array([7, (2 << 32) + 1], dtype=np.int64)
    parts = [struct.pack("<iq", MAGIC_64, 2)]
    for key, low in ((0, [7]), (2, [1])):
        parts.append(struct.pack("<i", key) + BitMap(low).serialize())
    payload = b"".join(parts)
    paimon64 = struct.pack(">i", len(payload)) + payload + struct.pack(">I", zlib.crc32(payload))
    assert iceberg_blob(paimon64, source="test") == paimon64
    assert np.array_equal(_positions(paimon64), high)
    with pytest.raises(CorruptMetadataError, match="CRC32"):
        iceberg_blob(paimon64[:-1] + bytes([paimon64[-1] ^ 1]), source="test")
    data, ranges = puffin_file([DeletionVectorBlob("file:/d.parquet", blob, 6)])
    assert data[:4] == data[-4:] == b"PFA1" and data[-8:-4] == b"\x00" * 4
    size = struct.unpack_from("<i", data, len(data) - 12)[0]
    footer = json.loads(data[len(data) - 12 - size:len(data) - 12])
    assert footer["blobs"][0]["properties"] == {"referenced-data-file": "file:/d.parquet", "cardinality": "6"}
    assert data[ranges[0][0]:ranges[0][0] + ranges[0][1]] == blob


@pytest.mark.parametrize("bitmap64", ["false", "true"])
def test_java_2_deletion_vectors_exposed(oracle2: Any, warehouse: str, iceberg_readers: Any, bitmap64: str) -> None:
    """Java 2.0 writes the deletion vectors (32-bit, or 64-bit with `deletion-vectors.bitmap64`, whose bytes are
    copied into the Puffin file as they are); enabling the option writes the current state, read as ours."""
    fields = [{"name": "id", "type": "INT"}, {"name": "v", "type": "STRING"}]
    oracle2.write_spec({
        "warehouse": warehouse, "database": "db", "table": "java", "if_exists": "drop",
        "schema": {"fields": fields, "primary_keys": ["id"], "options": {
            "bucket": "1", "deletion-vectors.enabled": "true", "deletion-vectors.bitmap64": bitmap64}},
        "batches": [{"rows": [["+I", i, f"v{i}"] for i in range(20)], "compact": True},
                    {"rows": [["-D", 3, "v3"], ["-D", 11, "v11"]]}]})
    catalog = FileSystemCatalog(warehouse)
    t = catalog.load_table("db.java")
    index_files = (Path(t.path) / "index").iterdir()
    magic64 = any(struct.pack("<I", MAGIC_64) in f.read_bytes() for f in index_files)
    assert magic64 == (bitmap64 == "true")
    assert sorted(r["id"] for r in rows(t.scan().to_arrow())) == [i for i in range(20) if i not in (3, 11)]
    t = catalog.alter_table("db.java", [SchemaChange.set_option(k, v) for k, v in V3.items()])
    assert_readers_read_ours(iceberg_readers, t)
    assert sum(e["data_file"]["record_count"] for e in delete_entries(t)) == 2
    write_table(t, pa.table({"id": pa.array([5], pa.int32()), "v": [None], "_row_kind": ["-D"]}))
    expected = assert_readers_read_ours(iceberg_readers, t)
    assert sorted(r["id"] for r in expected) == [i for i in range(20) if i not in (3, 5, 11)]


def test_s3_warehouse_deletion_vectors(s3_server: Any, s3_warehouse: str, iceberg_readers: Any) -> None:
    """On object storage the Puffin files and the vectors' data files are `s3://` URIs PyIceberg reads."""
    catalog = FileSystemCatalog(s3_warehouse)
    catalog.create_database("db")
    t = catalog.create_table("db.dv", SCHEMA, primary_keys=["id"], options={**V3, **DV, "bucket": "1"})
    upsert(t, list(range(10)), "2024-01-01", "a")
    delete(t, [2, 7], "2024-01-01")
    io = t.store.file_io
    hint = io.read_bytes(f"{t.store.paths.root}/metadata/version-hint.text").decode()
    location = f"{io.uri(t.store.paths.root)}/metadata/v{hint}.metadata.json"
    properties = {"s3.endpoint": s3_server.endpoint, "s3.access-key-id": s3_server.access_key,
                  "s3.secret-access-key": s3_server.secret_key, "s3.region": s3_server.region}
    got = iceberg_readers.read("pyiceberg", location, properties=properties)
    assert got["rows"] == rows(t.scan().to_arrow())
    assert sorted(r["id"] for r in got["rows"]) == [0, 1, 3, 4, 5, 6, 8, 9]


def test_java_2_deletion_vector_metadata_replaced_by_ours(oracle2: Any, warehouse: str, iceberg_readers: Any) -> None:
    """Java 2.0's Iceberg v3 metadata for a deletion-vector table leaves the vectors out (readers return deleted
    rows); our next commit builds on it and adds Puffin deletion vectors the readers apply."""
    fields = [{"name": "id", "type": "INT"}, {"name": "v", "type": "STRING"}]
    oracle2.write_spec({
        "warehouse": warehouse, "database": "db", "table": "mixed", "if_exists": "drop",
        "schema": {"fields": fields, "primary_keys": ["id"], "options": {
            "bucket": "1", "deletion-vectors.enabled": "true", **V3,
            "metadata.iceberg.manifest-compression": "deflate"}},
        "batches": [{"rows": [["+I", i, f"v{i}"] for i in range(20)], "compact": True},
                    {"rows": [["-D", 3, "v3"], ["-D", 11, "v11"]]}]})
    t = FileSystemCatalog(warehouse).load_table("db.mixed")
    java = {reader: sorted(r["id"] for r in iceberg_readers.read(reader, metadata_path(t))["rows"])
            for reader in READERS}
    ours = [i for i in range(20) if i not in (3, 11)]
    # Java 2.0's v3 metadata lists the data file without its deletion vector: both readers return the deleted rows
    assert java == {reader: list(range(20)) for reader in READERS}, java
    write_table(t, pa.table({"id": pa.array([5], pa.int32()), "v": [None], "_row_kind": ["-D"]}))
    expected = assert_readers_read_ours(iceberg_readers, t)
    assert sorted(r["id"] for r in expected) == [i for i in ours if i != 5]
    assert all(e["data_file"]["file_path"].endswith(".puffin") for e in delete_entries(t))
    assert sorted(r["id"] for r in rows(t.scan().to_arrow())) == [i for i in ours if i != 5]  # index files intact


def test_upgrade_from_format_version_2(warehouse: str, iceberg_readers: Any) -> None:
    """A table whose Iceberg metadata is v2 switches to 3: the next commit builds on the v2 manifests (given row ids
    then), and the readers read every retained snapshot."""
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db")
    t = catalog.create_table("db.up", SCHEMA, options={"metadata.iceberg.storage": "table-location"})
    upsert(t, [1, 2], "2024-01-01", "a")
    t = catalog.alter_table("db.up", [SchemaChange.set_option("metadata.iceberg.format-version", "3")])
    upsert(t, [3], "2024-01-01", "a")
    assert_readers_read_ours(iceberg_readers, t)
    assert_readers_read_ours(iceberg_readers, t, snapshot_id=1)
    with open(metadata_path(t)) as f:
        meta = json.load(f)
    assert meta["format-version"] == 3 and meta["next-row-id"] == 3
