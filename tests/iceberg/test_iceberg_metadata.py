"""Iceberg metadata (`metadata.iceberg.storage`) on tables we write, read by real Iceberg readers: PyIceberg 0.12 and
DuckDB 1.5.5 read exactly our rows after every kind of commit, prune files by partition and column bounds, time
travel by Iceberg snapshot id (= Paimon's), and keep reading the latest snapshot after expiry and orphan removal."""

from __future__ import annotations

import datetime as dt
import decimal
import json
import os
from typing import Any

import pyarrow as pa
import pytest

from table_format import FileSystemCatalog, SchemaChange, Table, UnsupportedFeatureError, write_table

READERS = ("pyiceberg", "duckdb")
ICEBERG = {"metadata.iceberg.storage": "table-location"}
SCHEMA = pa.schema([("id", pa.int64()), ("dt", pa.string()), ("v", pa.float64()), ("s", pa.string())])


def rows(table: pa.Table) -> list[dict[str, Any]]:
    return sorted((json.loads(json.dumps(r, default=str)) for r in table.to_pylist()),
                  key=lambda r: json.dumps(r, sort_keys=True))


def metadata_path(table: Table) -> str:
    with open(os.path.join(table.path, "metadata", "version-hint.text")) as f:
        hint = f.read().strip()
    return os.path.join(table.path, "metadata", f"v{hint}.metadata.json")


def assert_readers_agree(readers: Any, table: Table, *, location: str | None = None) -> None:
    expected = rows(table.scan().to_arrow())
    for reader in READERS:
        got = readers.read(reader, location or metadata_path(table))
        assert got["rows"] == expected, reader


def batch(ids: list[int], dt_value: str = "2024-01-01") -> pa.Table:
    return pa.table({"id": ids, "dt": [dt_value] * len(ids), "v": [i * 1.5 for i in ids],
                     "s": [f"s{i}" if i % 3 else None for i in ids]}, schema=SCHEMA)


@pytest.fixture
def catalog(warehouse: str) -> FileSystemCatalog:
    c = FileSystemCatalog(warehouse)
    c.create_database("db")
    return c


def test_append_table_every_commit_kind(catalog: FileSystemCatalog, iceberg_readers: Any) -> None:
    t = catalog.create_table("db.app", SCHEMA, partition_keys=["dt"], options=ICEBERG)
    write_table(t, batch([1, 2, 3], "2024-01-01"))
    assert_readers_agree(iceberg_readers, t)
    write_table(t, batch([4, 5], "2024-01-02"))
    write_table(t, batch([6], "2024-01-02"), mode="overwrite", overwrite_partitions=[{"dt": "2024-01-02"}])
    assert_readers_agree(iceberg_readers, t)
    # the table location works too (DuckDB follows version-hint.text)
    assert iceberg_readers.read("duckdb", t.path)["rows"] == rows(t.scan().to_arrow())
    # partition pruning: only the files of one partition are planned
    pruned = iceberg_readers.read("pyiceberg", metadata_path(t), filter="dt = '2024-01-02'")
    assert pruned["files"] == 1 and [r["id"] for r in pruned["rows"]] == [6]
    # column bounds prune too
    assert iceberg_readers.read("pyiceberg", metadata_path(t), filter="id > 100")["files"] == 0


def test_time_travel_by_snapshot_id(catalog: FileSystemCatalog, iceberg_readers: Any) -> None:
    t = catalog.create_table("db.tt", SCHEMA, options=ICEBERG)
    for i in range(3):
        write_table(t, batch([i * 10 + 1, i * 10 + 2]))
    for sid in (1, 2, 3):
        expected = rows(t.scan(snapshot_id=sid).to_arrow())
        got = iceberg_readers.read("pyiceberg", metadata_path(t), snapshot_id=sid)
        assert got["rows"] == expected
    assert iceberg_readers.read("pyiceberg", metadata_path(t))["snapshots"] == [1, 2, 3]


@pytest.mark.parametrize("bucket", ["2", "-1"])
def test_primary_key_table_after_full_compaction(catalog: FileSystemCatalog, iceberg_readers: Any,
                                                  bucket: str) -> None:
    t = catalog.create_table("db.pk", SCHEMA, primary_keys=["dt", "id"], partition_keys=["dt"],
                             options={**ICEBERG, "bucket": bucket})
    write_table(t, batch([1, 2, 3, 4]))
    write_table(t, pa.table({"id": [2, 3], "dt": ["2024-01-01"] * 2, "v": [0.5, 0.25], "s": ["new", None],
                             "_row_kind": ["+U", "-D"]}, schema=SCHEMA.append(pa.field("_row_kind", pa.string()))))
    # before a full compaction only the highest level is exposed (as Java): nothing yet
    assert iceberg_readers.read("pyiceberg", metadata_path(t))["rows"] == []
    t.maintenance.compact(full=True)
    assert_readers_agree(iceberg_readers, t)
    assert sorted(r["id"] for r in rows(t.scan().to_arrow())) == [1, 2, 4]


def test_schema_evolution(catalog: FileSystemCatalog, iceberg_readers: Any) -> None:
    schema = pa.schema([("id", pa.int32()), ("name", pa.string())])
    t = catalog.create_table("db.evo", schema, options=ICEBERG)
    write_table(t, pa.table({"id": pa.array([1, 2], pa.int32()), "name": ["a", "b"]}))
    t = catalog.alter_table("db.evo", [SchemaChange.add_column("score", pa.float64()),
                                       SchemaChange.rename_column("name", "label"),
                                       SchemaChange.update_column_type("id", pa.int64())])
    write_table(t, pa.table({"id": [3], "label": ["c"], "score": [9.5]}))
    assert_readers_agree(iceberg_readers, t)


def test_types_and_bounds(catalog: FileSystemCatalog, iceberg_readers: Any) -> None:
    schema = pa.schema([("k", pa.int32()), ("d", pa.date32()), ("ts", pa.timestamp("us")),
                        ("amount", pa.decimal128(10, 2)), ("flag", pa.bool_()), ("raw", pa.binary())])
    t = catalog.create_table("db.types", schema, partition_keys=["d"], options=ICEBERG)
    write_table(t, pa.table({
        "k": pa.array([1, 2], pa.int32()), "d": [dt.date(2024, 5, 1), dt.date(2024, 5, 2)],
        "ts": [dt.datetime(2024, 5, 1, 12, 0, 1, 5), None], "amount": [decimal.Decimal("1.25"), decimal.Decimal("-3.50")],
        "flag": [True, False], "raw": [b"\x00\x01", None]}, schema=schema))
    assert iceberg_readers.read("pyiceberg", metadata_path(t))["rows"] == rows(t.scan().to_arrow())
    assert iceberg_readers.read("duckdb", metadata_path(t))["rows"]  # DuckDB reads every type
    pruned = iceberg_readers.read("pyiceberg", metadata_path(t), filter="amount < 0")
    assert [r["k"] for r in pruned["rows"]] == [2] and pruned["files"] == 1


def test_expiry_orphans_and_rollback(catalog: FileSystemCatalog, iceberg_readers: Any) -> None:
    t = catalog.create_table("db.exp", SCHEMA, options=ICEBERG)
    for i in range(5):
        write_table(t, batch([i]), mode="overwrite" if i == 3 else "append")
    t.maintenance.expire_snapshots(retain_min=2, older_than=dt.timedelta(0), dry_run=False)
    t.maintenance.remove_orphan_files(older_than=dt.timedelta(0), dry_run=False)
    assert_readers_agree(iceberg_readers, t)
    assert iceberg_readers.read("pyiceberg", metadata_path(t))["snapshots"] == [4, 5]
    # only what the retained snapshots reference is left in metadata/
    assert sorted(n for n in os.listdir(os.path.join(t.path, "metadata")) if n.endswith(".json")) == [
        "v5.metadata.json"]
    t.rollback_to(snapshot_id=4)
    assert_readers_agree(iceberg_readers, t)
    write_table(t, batch([42]))
    assert_readers_agree(iceberg_readers, t)
    assert iceberg_readers.read("pyiceberg", metadata_path(t))["snapshots"] == [4, 5]


def test_hadoop_catalog_location(catalog: FileSystemCatalog, warehouse: str, iceberg_readers: Any) -> None:
    t = catalog.create_table("db.hc", SCHEMA, options={"metadata.iceberg.storage": "hadoop-catalog"})
    write_table(t, batch([1, 2]))
    location = os.path.join(warehouse, "iceberg", "db", "hc")
    assert os.path.isfile(os.path.join(location, "metadata", "version-hint.text"))
    assert iceberg_readers.read("duckdb", location)["rows"] == rows(t.scan().to_arrow())


def test_enabling_on_an_existing_table_writes_the_current_state(catalog: FileSystemCatalog,
                                                                iceberg_readers: Any) -> None:
    t = catalog.create_table("db.late", SCHEMA)
    write_table(t, batch([1, 2]))
    assert not os.path.exists(os.path.join(t.path, "metadata"))
    t = catalog.alter_table("db.late", [SchemaChange.set_option("metadata.iceberg.storage", "table-location")])
    assert_readers_agree(iceberg_readers, t)


@pytest.mark.parametrize("compression", ["deflate", "snappy", "null"])
def test_manifest_compression(catalog: FileSystemCatalog, iceberg_readers: Any, compression: str) -> None:
    t = catalog.create_table("db.c", SCHEMA, options={**ICEBERG, "metadata.iceberg.manifest-compression": compression})
    write_table(t, batch([1, 2]))
    assert_readers_agree(iceberg_readers, t)


def test_what_cannot_be_exposed_is_refused_by_name(catalog: FileSystemCatalog) -> None:
    nested = catalog.create_table("db.nested", pa.schema([("id", pa.int64()), ("tags", pa.list_(pa.string()))]),
                                  options=ICEBERG)
    with pytest.raises(UnsupportedFeatureError, match="'tags'"):
        write_table(nested, pa.table({"id": [1], "tags": [["a"]]}))
    assert nested.latest_snapshot() is None
    dv = catalog.create_table("db.dv", SCHEMA, primary_keys=["id"],
                              options={**ICEBERG, "bucket": "1", "deletion-vectors.enabled": "true"})
    with pytest.raises(UnsupportedFeatureError, match="deletion vectors"):
        write_table(dv, batch([1]))
    assert dv.latest_snapshot() is None


def test_cli_iceberg_sync_and_describe(catalog: FileSystemCatalog, warehouse: str, iceberg_readers: Any) -> None:
    from click.testing import CliRunner

    from lakehouse_cli.main import cli

    t = catalog.create_table("db.cli", SCHEMA, primary_keys=["id"], options={**ICEBERG, "bucket": "1"})
    write_table(t, batch([1, 2]))
    os.remove(os.path.join(t.path, "metadata", "version-hint.text"))  # as if the commit's sync had failed
    runner = CliRunner()
    result = runner.invoke(cli, ["-w", warehouse, "iceberg-sync", "db.cli"])
    assert result.exit_code == 0 and "v1.metadata.json" in result.output, result.output
    result = runner.invoke(cli, ["-w", warehouse, "iceberg-sync", "db.cli"])
    assert result.exit_code == 0 and "up to date (snapshot 1)" in result.output, result.output
    described = runner.invoke(cli, ["-w", warehouse, "describe", "db.cli"]).output
    assert "after a full compaction" in " ".join(described.split()), described  # a long path wraps the cell
    catalog.create_table("db.plain", SCHEMA)
    result = runner.invoke(cli, ["-w", warehouse, "iceberg-sync", "db.plain"])
    assert result.exit_code == 1 and "metadata.iceberg.storage" in result.output


def test_manifest_merging_and_expiry_keep_every_retained_snapshot_readable(catalog: FileSystemCatalog,
                                                                            iceberg_readers: Any) -> None:
    t = catalog.create_table("db.many", SCHEMA, partition_keys=["dt"],
                             options={**ICEBERG, "metadata.iceberg.compaction.max.file-num": "3"})
    for i in range(12):
        if i % 4 == 3:
            write_table(t, batch([i], f"2024-01-0{i % 3 + 1}"), mode="overwrite",
                        overwrite_partitions=[{"dt": f"2024-01-0{i % 3 + 1}"}])
        else:
            write_table(t, batch([i], f"2024-01-0{i % 3 + 1}"))
    t.maintenance.expire_snapshots(retain_min=5, older_than=dt.timedelta(0), dry_run=False)
    meta_dir = os.path.join(t.path, "metadata")
    with open(metadata_path(t)) as f:
        metadata = json.load(f)
    assert [s["snapshot-id"] for s in metadata["snapshots"]] == [8, 9, 10, 11, 12]
    for sid in (8, 10, 12):  # every retained Iceberg snapshot still reads as Paimon's snapshot of that id
        got = iceberg_readers.read("pyiceberg", metadata_path(t), snapshot_id=sid)
        assert got["rows"] == rows(t.scan(snapshot_id=sid).to_arrow()), sid
    # nothing unreferenced is left: every Avro file is a retained manifest list or listed by one
    import fastavro

    lists = {os.path.basename(s["manifest-list"]) for s in metadata["snapshots"]}
    listed = set()
    for name in lists:
        with open(os.path.join(meta_dir, name), "rb") as f:
            listed |= {os.path.basename(m["manifest_path"]) for m in fastavro.reader(f)}
    assert {n for n in os.listdir(meta_dir) if n.endswith(".avro")} == lists | listed


def test_tags_are_iceberg_tag_refs(catalog: FileSystemCatalog, iceberg_readers: Any) -> None:
    t = catalog.create_table("db.tags", SCHEMA, options=ICEBERG)
    write_table(t, batch([1]))
    t.create_tag("first")
    write_table(t, batch([2]))
    assert iceberg_readers.read("pyiceberg", metadata_path(t))["refs"] == {"main": 2, "first": 1}
    t.create_tag("second")
    assert iceberg_readers.read("pyiceberg", metadata_path(t))["refs"] == {"main": 2, "first": 1, "second": 2}
    t.delete_tag("first")
    assert iceberg_readers.read("pyiceberg", metadata_path(t))["refs"] == {"main": 2, "second": 2}


def test_branches_stay_out_of_iceberg_until_fast_forward(catalog: FileSystemCatalog, iceberg_readers: Any) -> None:
    t = catalog.create_table("db.br", SCHEMA, options=ICEBERG)
    write_table(t, batch([1]))
    t.create_branch("dev", from_latest=True)
    write_table(t.branch("dev"), batch([2]))
    assert [r["id"] for r in iceberg_readers.read("pyiceberg", metadata_path(t))["rows"]] == [1]
    t.fast_forward("dev")
    assert_readers_agree(iceberg_readers, t)
    assert sorted(r["id"] for r in rows(t.scan().to_arrow())) == [1, 2]
