"""s3:// warehouses on a real S3 server (SeaweedFS): catalog, writes, merged reads, maintenance, configuration."""

from __future__ import annotations

import datetime as dt
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from table_format import FileSystemCatalog, OptionError, open_table, write_table
from table_format.io.s3_config import S3Config
from table_format.io.s3_file_io import TAIL_BYTES, S3FileIO
from table_format.io.s3_streams import S3InputFile, S3OutputStream

pytestmark = pytest.mark.s3

SCHEMA = pa.schema([("id", pa.int64(), False), ("v", pa.string())])


def _pk_table(warehouse: str, **catalog_kw: Any) -> Any:
    catalog = FileSystemCatalog(warehouse, **catalog_kw)
    catalog.create_database("db", exist_ok=True)
    return catalog.create_table("db.t", SCHEMA, primary_keys=["id"], options={"bucket": "2"})


def test_catalog_write_read_from_environment(s3_warehouse: str) -> None:
    table = _pk_table(s3_warehouse)
    assert isinstance(table.store.file_io, S3FileIO)
    write_table(table, pa.table({"id": [1, 2, 3], "v": ["a", "b", "c"]}, schema=SCHEMA))
    write_table(table, pa.table({"id": [2, 4], "v": ["B", "d"]}, schema=SCHEMA))
    again = FileSystemCatalog(s3_warehouse)
    assert again.list_databases() == ["db"]
    assert again.list_tables("db") == ["t"]
    got = again.load_table("db.t").scan().to_arrow().sort_by("id")
    assert got.to_pylist() == [{"id": 1, "v": "a"}, {"id": 2, "v": "B"}, {"id": 3, "v": "c"}, {"id": 4, "v": "d"}]
    assert [s.id for s in again.load_table("db.t").snapshots()] == [1, 2]
    by_uri = open_table(f"{s3_warehouse}/db.db/t")
    assert by_uri.scan().to_arrow().num_rows == 4


def test_catalog_options_instead_of_environment(s3_server: Any, s3_warehouse: str,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION"):
        monkeypatch.delenv(name)
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
    table = _pk_table(s3_warehouse, options=s3_server.options())
    write_table(table, pa.table({"id": [7], "v": ["x"]}, schema=SCHEMA))
    reopened = open_table(f"{s3_warehouse}/db.db/t", options=s3_server.options())
    assert reopened.scan().to_arrow().to_pylist() == [{"id": 7, "v": "x"}]
    # the table's settings as options reopen it elsewhere (the IO manager's Spark handler hands them to executors)
    carried = reopened.store.file_io.catalog_options()
    assert S3Config.resolve(carried, env={}) == reopened.store.file_io.config
    assert reopened.uri == f"{s3_warehouse}/db.db/t"
    assert open_table(reopened.uri, options=carried).scan().to_arrow().num_rows == 1
    wrong = {**s3_server.options(), "s3.secret-key": "wrong"}
    with pytest.raises(OSError, match="SignatureDoesNotMatch|AccessDenied|InvalidAccessKeyId"):
        FileSystemCatalog(s3_warehouse, options=wrong).list_databases()


def test_bad_catalog_options_are_refused(s3_warehouse: str, warehouse: str) -> None:
    with pytest.raises(OptionError, match="s3.endpiont.*did you mean 's3.endpoint'"):
        FileSystemCatalog(s3_warehouse, options={"s3.endpiont": "http://x"})
    with pytest.raises(OptionError, match="s3.conditional-put"):
        FileSystemCatalog(s3_warehouse, options={"s3.conditional-put": "maybe"})
    with pytest.raises(OptionError, match="s3:// warehouses only"):
        FileSystemCatalog(warehouse, options={"s3.endpoint": "http://x"})


def test_maintenance_on_s3(s3_warehouse: str) -> None:
    table = _pk_table(s3_warehouse)
    for i in range(4):
        write_table(table, pa.table({"id": [i, 100 + i], "v": [f"v{i}", "x"]}, schema=SCHEMA))
    before = table.scan().to_arrow().sort_by("id")
    result = table.maintenance.compact(full=True)
    assert result.snapshot_id is not None
    assert table.scan().to_arrow().sort_by("id").equals(before)
    expired = table.maintenance.expire_snapshots(retain_min=1, older_than=dt.timedelta(0), dry_run=False)
    assert len(expired.expired_snapshots) == 4
    assert [s.id for s in table.snapshots()] == [5]
    stray = f"{table.path}/bucket-0/data-stray-0.parquet"
    table.store.file_io.write_bytes(stray, b"junk")
    orphans = table.maintenance.remove_orphan_files(older_than=dt.timedelta(0), dry_run=False)
    assert stray in orphans.deleted_files
    assert not table.store.file_io.file_exists(stray)
    assert table.scan().to_arrow().sort_by("id").equals(before)


def test_round_trips_per_commit_and_per_plan(s3_warehouse: str) -> None:
    """Guards the request counts measured by benchmarks/bench_s3.py against regressions."""
    table = _pk_table(s3_warehouse)
    write_table(table, pa.table({"id": [0], "v": ["a"]}, schema=SCHEMA))
    requests = table.store.file_io.requests
    with requests.measure() as commit:
        write_table(table, pa.table({"id": [1], "v": ["b"]}, schema=SCHEMA))
    assert commit.total <= 30, commit.by_kind
    assert commit.by_kind.get("CopyObject", 0) == 0  # no rename emulation anywhere
    fresh = FileSystemCatalog(s3_warehouse).load_table("db.t")
    with fresh.store.file_io.requests.measure() as cold:
        fresh.scan().plan()
    with fresh.store.file_io.requests.measure() as warm:
        fresh.scan().plan()
    # latest: GET LATEST, GET snapshot-N, HEAD snapshot-N+1; manifests are immutable and cached after the first plan
    assert warm.by_kind == {"GetObject": 2, "HeadObject": 1}
    assert cold.total > warm.total


def test_large_files_read_by_ranges_and_written_by_parts(s3_server: Any, s3_warehouse: str) -> None:
    client, bucket = s3_server.client(), s3_server.bucket
    payload = bytes(range(256)) * (11 * 4096)  # 11 MiB
    out = S3OutputStream(client, bucket, "parts/blob", part_size=5 << 20)
    for i in range(0, len(payload), 1 << 20):
        out.write(payload[i:i + (1 << 20)])
    out.close()
    assert client.get_object(Bucket=bucket, Key="parts/blob")["Body"].read() == payload
    f = S3InputFile(client, bucket, "parts/blob", tail_bytes=1 << 20)
    assert f.size == len(payload)
    f.seek(len(payload) - 100)
    assert f.read(100) == payload[-100:]  # from the tail fetched on open
    f.seek((1 << 20) - 10)
    assert f.read(4 << 20) == payload[(1 << 20) - 10:(5 << 20) - 10]  # a ranged GET
    f.seek(len(payload) - (1 << 20) - 5)
    assert f.read(10) == payload[-(1 << 20) - 5:-(1 << 20) + 5]  # straddles the tail

    noise = np.random.default_rng(0).integers(0, 1 << 62, 200_000)  # incompressible: the file outgrows the tail
    big = pa.table({"id": pa.array(range(200_000), pa.int64()),
                    "v": pa.array([f"{i:x}{x:016x}" for i, x in enumerate(noise.tolist())])}, schema=SCHEMA)
    catalog = FileSystemCatalog(s3_warehouse)
    catalog.create_database("db")
    table = catalog.create_table("db.big", SCHEMA)
    write_table(table, big)
    assert [f["file_size_in_bytes"] > TAIL_BYTES for f in table.system_table("files").to_pylist()] == [True]
    with table.store.file_io.requests.measure() as m:
        ids = table.scan(columns=["id"]).to_arrow()
    assert ids.column("id").to_pylist() == list(range(200_000))
    assert m.by_kind["GetObject"] <= 8, m.by_kind  # metadata + tail + the id column chunk, not the whole file
