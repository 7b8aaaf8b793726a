"""Structured Streaming on an s3:// warehouse (SeaweedFS) with the ``s3.*`` options only (the Python workers have no
AWS variables): the sink and ``write_stream`` commit one snapshot per micro-batch and stay exactly once when Spark
replays a batch whose commit it had not logged; the source streams the changes and writes its consumer to S3.
No secret reaches Spark's logs, the checkpoint, the query's progress or plan."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from jobs.spark import write_stream
from jobs.spark.stream_options import stream_options
from jobs.spark.stream_writer import COMMIT_USER_FILE
from table_format import FileSystemCatalog, Table

pytestmark = [pytest.mark.s3, pytest.mark.spark]

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string())])


def _drop(inbox: Path, n: int) -> pa.Table:
    """File n of the inbox: five rows, ids overlapping the previous file's (upserts on a primary-key table)."""
    data = pa.table({"id": [(n * 3 + i) % 8 for i in range(5)], "v": [f"f{n}-{i}" for i in range(5)]}, schema=SCHEMA)
    path = inbox / f"part-{n}.parquet"
    pq.write_table(data, path)
    os.utime(path, (1_700_000_000 + n, 1_700_000_000 + n))  # the file source reads the oldest first
    return data


def _source(spark: Any, inbox: Path) -> Any:
    return spark.readStream.schema("id BIGINT, v STRING").option("maxFilesPerTrigger", 1).parquet(str(inbox))


def _identifiers(table: Table, checkpoint: Path) -> list[int]:
    user = (checkpoint / COMMIT_USER_FILE).read_text().strip()
    return [s.commit_identifier for s in table.refresh().snapshots() if s.commit_user == user]


def _forget_last_commit(checkpoint: Path, batch: int) -> None:
    """As if the query died after our commit of ``batch`` and before Spark logged it: Spark replays the batch."""
    (checkpoint / "commits" / str(batch)).unlink()
    (checkpoint / "commits" / f".{batch}.crc").unlink(missing_ok=True)


def _run(query: Any) -> Any:
    query.awaitTermination(300)
    assert query.exception() is None, query.exception()
    return query


def test_streams_on_s3_with_options(spark: Any, s3_server: Any, s3_warehouse: str, tmp_path: Path,
                                    capfd: pytest.CaptureFixture[str]) -> None:
    opts = s3_server.options()
    catalog = FileSystemCatalog(s3_warehouse, options=opts)
    catalog.create_database("db")
    events = catalog.create_table("db.events", SCHEMA)
    pk = catalog.create_table("db.pk", SCHEMA, primary_keys=["id"], options={"bucket": "2"})
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    files = [_drop(inbox, n) for n in range(3)]

    # the sink: one commit per file; Spark replays batch 2 (its commit log lost), the replay is dropped
    sink_ckpt = tmp_path / "ckpt-sink"
    def sink() -> Any:
        return _run(_source(spark, inbox).writeStream.format("paimon").options(**opts)
                    .option("checkpointLocation", str(sink_ckpt)).trigger(availableNow=True).start(events.path))
    sink()
    assert _identifiers(events, sink_ckpt) == [0, 1, 2]
    _forget_last_commit(sink_ckpt, 2)
    files.append(_drop(inbox, 3))
    progress = str(sink().recentProgress)
    assert _identifiers(events, sink_ckpt) == [0, 1, 2, 3]  # batch 2 replayed without a commit, then batch 3
    key = sorted(("id", "v"))
    assert sorted(events.refresh().scan().to_arrow().to_pylist(), key=lambda r: [r[k] for k in key]) == \
        sorted(pa.concat_tables(files).to_pylist(), key=lambda r: [r[k] for k in key])  # every row exactly once

    # write_stream into the primary-key table: the same replay, the table equal to the files upserted in order
    ws_ckpt = tmp_path / "ckpt-ws"
    _run(write_stream(_source(spark, inbox), pk.path, checkpoint=str(ws_ckpt), options=opts,
                      trigger={"availableNow": True}))
    _forget_last_commit(ws_ckpt, 3)
    _run(write_stream(_source(spark, inbox), pk.path, checkpoint=str(ws_ckpt), options=opts,
                      trigger={"availableNow": True}))
    assert _identifiers(pk, ws_ckpt) == [0, 1, 2, 3]
    latest = {r["id"]: r["v"] for f in files for r in f.to_pylist()}
    assert {r["id"]: r["v"] for r in pk.refresh().scan().to_arrow().to_pylist()} == latest

    # the source: the primary-key table's changes from snapshot 1, with a consumer written to S3
    batches: list[pa.Table] = []
    reader = (spark.readStream.format("paimon").options(**opts).option("read.changelog", "true")
              .option("scan.mode", "from-snapshot").option("scan.snapshot-id", "1").option("consumer-id", "s3c"))
    read_query = _run(reader.load(pk.path).writeStream.foreachBatch(lambda df, _: batches.append(df.toArrow()))
                      .option("checkpointLocation", str(tmp_path / "ckpt-read")).trigger(availableNow=True).start())
    last = pk.refresh().store.snapshots.latest_id()
    assert last is not None
    got = pa.concat_tables(batches)
    want = pk.changes(0, last, merged=False)
    assert sorted(map(str, got.select(want.column_names).to_pylist())) == sorted(map(str, want.to_pylist()))
    consumer = f"{pk.path.split('://', 1)[1].split('/', 1)[1]}/consumer/consumer-s3c"
    assert s3_server.client().head_object(Bucket=s3_server.bucket, Key=consumer)["ContentLength"] > 0
    assert pk.consumer("s3c") is not None

    # no secret in what Spark and we print, log or keep
    read_query.explain(extended=True)
    kept = [p.read_bytes() for ckpt in tmp_path.glob("ckpt-*") for p in ckpt.rglob("*") if p.is_file()]
    out, err = capfd.readouterr()
    secret = s3_server.secret_key
    assert secret not in out + err + progress + str(read_query.recentProgress)
    assert not any(secret.encode() in blob for blob in kept)
    assert secret not in repr(stream_options({"path": pk.path, **opts}))
