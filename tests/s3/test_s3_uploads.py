"""Multipart uploads left by a crashed writer (started, never completed) on SeaweedFS: orphan removal lists those
under the table's prefix older than ``older_than``, reports them in a dry run and aborts them otherwise (library,
``jobs.spark.remove_orphan_files``, the CLI); uploads elsewhere or younger stay."""

from __future__ import annotations

import datetime as dt
import json
import time
from typing import Any

import pyarrow as pa
import pytest
from click.testing import CliRunner

from jobs.spark import remove_orphan_files
from lakehouse_cli.main import cli
from table_format import FileSystemCatalog, Table, write_table

pytestmark = [pytest.mark.s3]

SCHEMA = pa.schema([("id", pa.int64(), False), ("v", pa.string())])
AGE = dt.timedelta(seconds=1)


def _table(catalog: FileSystemCatalog, name: str) -> Table:
    catalog.create_database("db", exist_ok=True)
    table = catalog.create_table(f"db.{name}", SCHEMA, primary_keys=["id"], options={"bucket": "1"})
    write_table(table, pa.table({"id": pa.array([1, 2, 3], pa.int64()), "v": ["a", "b", "c"]}, schema=SCHEMA))
    return table


def _abandon(client: Any, path: str) -> str:
    """Start a multipart upload of `path` (bucket/key), upload one part, and never complete it: a crashed writer."""
    bucket, key = path.split("/", 1)
    upload_id = client.create_multipart_upload(Bucket=bucket, Key=key)["UploadId"]
    client.upload_part(Bucket=bucket, Key=key, UploadId=upload_id, PartNumber=1, Body=b"x" * (1 << 20))
    return upload_id


def _in_progress(client: Any, bucket: str, prefix: str) -> set[str]:
    pages = client.get_paginator("list_multipart_uploads").paginate(Bucket=bucket, Prefix=prefix)
    return {f"{bucket}/{u['Key']}" for page in pages for u in page.get("Uploads", ())}


def test_seaweedfs_lists_and_aborts_multipart_uploads(s3_warehouse: str, s3_server: Any) -> None:
    """What the feature relies on, checked on the server itself: an unfinished upload is no object, is listed by
    ListMultipartUploads, and is gone after AbortMultipartUpload."""
    client = s3_server.client()
    path = f"{s3_warehouse.removeprefix('s3://')}/db.db/t/bucket-0/data-crashed.parquet"
    bucket, key = path.split("/", 1)
    upload_id = _abandon(client, path)
    assert "Contents" not in client.list_objects_v2(Bucket=bucket, Prefix=key)
    assert _in_progress(client, bucket, key) == {path}
    client.abort_multipart_upload(Bucket=bucket, Key=key, UploadId=upload_id)
    assert _in_progress(client, bucket, key) == set()


def test_remove_orphan_files_aborts_abandoned_uploads(s3_warehouse: str, s3_server: Any) -> None:
    client = s3_server.client()
    catalog = FileSystemCatalog(s3_warehouse)
    table, other = _table(catalog, "t"), _table(catalog, "other")
    bucket = table.path.split("/", 1)[0]
    crashed = f"{table.path}/bucket-0/data-crashed.parquet"
    elsewhere = [f"{other.path}/bucket-0/data-crashed.parquet", f"{table.path}-suffix/bucket-0/data-x.parquet"]
    for path in (crashed, *elsewhere):
        _abandon(client, path)
    time.sleep(1.1)  # the store's upload times may have a resolution of one second
    cutoff = dt.datetime.now(dt.timezone.utc)  # an instant: the machine's speed cannot move a file across it
    time.sleep(1.1)
    fresh = f"{table.path}/bucket-0/data-being-written.parquet"
    _abandon(client, fresh)  # a writer still uploading: started after the cut-off
    rows = table.scan().to_arrow()

    dry = table.maintenance.remove_orphan_files(older_than=cutoff, dry_run=True)
    assert dry.abandoned_uploads == (crashed,) and dry.aborted_uploads == (crashed,) and dry.orphan_files == ()
    assert crashed in _in_progress(client, bucket, table.path.split("/", 1)[1])  # a dry run aborts nothing

    done = table.maintenance.remove_orphan_files(older_than=cutoff, dry_run=False)
    assert done.abandoned_uploads == (crashed,) and done.aborted_uploads == (crashed,)
    prefix = s3_warehouse.removeprefix(f"s3://{bucket}/")
    assert _in_progress(client, bucket, prefix) == {fresh, *elsewhere}
    assert table.scan().to_arrow().equals(rows)
    again = table.maintenance.remove_orphan_files(older_than=cutoff, dry_run=False)
    assert again.abandoned_uploads == ()


@pytest.mark.spark
def test_spark_job_and_cli_abort_abandoned_uploads(s3_warehouse: str, s3_server: Any, spark: Any) -> None:
    client = s3_server.client()
    catalog = FileSystemCatalog(s3_warehouse)
    table = _table(catalog, "t")
    bucket, key = table.path.split("/", 1)
    first, second = (f"{table.path}/bucket-0/data-crashed-{i}.parquet" for i in (1, 2))
    _abandon(client, first)
    time.sleep(AGE.total_seconds() + 1.1)

    result = remove_orphan_files(spark, catalog.table_uri("db.t"), older_than=AGE, dry_run=False,
                                 options=s3_server.options())
    assert result.aborted_uploads == (first,) and _in_progress(client, bucket, key) == set()

    _abandon(client, second)
    time.sleep(AGE.total_seconds() + 1.1)
    args = ["--warehouse", s3_warehouse, "remove-orphan-files", "db.t", "--older-than", "1s"]
    dry = CliRunner().invoke(cli, [*args, "--json"], catch_exceptions=False)
    assert dry.exit_code == 0 and json.loads(dry.stdout)["abandoned_uploads"] == [second]
    assert _in_progress(client, bucket, key) == {second}
    health = CliRunner().invoke(cli, ["--warehouse", s3_warehouse, "health", "db.t", "--orphan-older-than", "1s",
                                      "--json"], catch_exceptions=False)
    orphans = json.loads(health.stdout)["orphans"]
    assert orphans["status"] == "warn" and orphans["abandoned_uploads"] == [second] and orphans["count"] == 0
    text = CliRunner().invoke(cli, [*args, "--apply"], catch_exceptions=False)
    assert text.exit_code == 0 and "aborted 1 abandoned multipart upload(s)" in text.stdout
    assert _in_progress(client, bucket, key) == set()
    assert sorted(table.scan().to_arrow().column("id").to_pylist()) == [1, 2, 3]
