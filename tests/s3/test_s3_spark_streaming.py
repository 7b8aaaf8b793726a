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
from jobs.spark.data_source import register_data_source
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


@pytest.fixture
def tables(s3_server: Any, s3_warehouse: str, tmp_path: Path) -> tuple[Table, str, Table, str, Path]:
    """An append table and a primary-key table on S3 (their s3:// URIs: Table.path lacks the scheme), an inbox."""
    catalog = FileSystemCatalog(s3_warehouse, options=s3_server.options())
    catalog.create_database("db")
    events = catalog.create_table("db.events", SCHEMA)
    pk = catalog.create_table("db.pk", SCHEMA, primary_keys=["id"], options={"bucket": "2"})
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    return events, f"{s3_warehouse}/db.db/events", pk, f"{s3_warehouse}/db.db/pk", inbox


def _no_secret(secret: str, capfd: pytest.CaptureFixture[str], checkpoints: list[Path], *texts: str) -> None:
    kept = [p.read_bytes() for ckpt in checkpoints for p in ckpt.rglob("*") if p.is_file()]
    out, err = capfd.readouterr()  # what Spark's JVM and our Python wrote to stdout / stderr (its log)
    assert secret not in out + err + "".join(texts)
    assert not any(secret.encode() in blob for blob in kept)


def test_sink_on_s3_exactly_once_after_replay(spark: Any, s3_server: Any, tables: Any, tmp_path: Path,
                                              capfd: pytest.CaptureFixture[str]) -> None:
    events, events_uri, _, _, inbox = tables
    opts = s3_server.options()
    files = [_drop(inbox, n) for n in range(2)]
    ckpt = tmp_path / "ckpt-sink"

    def sink() -> Any:
        return _run(_source(spark, inbox).writeStream.format("paimon").options(**opts)
                    .option("checkpointLocation", str(ckpt)).trigger(availableNow=True).start(events_uri))

    sink()
    assert _identifiers(events, ckpt) == [0, 1]  # one commit per file
    _forget_last_commit(ckpt, 1)
    files.append(_drop(inbox, 2))
    query = sink()
    assert _identifiers(events, ckpt) == [0, 1, 2]  # batch 1 replayed without a commit, then batch 2
    got = sorted((r["id"], r["v"]) for r in events.refresh().scan().to_arrow().to_pylist())
    assert got == sorted((r["id"], r["v"]) for r in pa.concat_tables(files).to_pylist())  # every row exactly once
    query.explain(extended=True)
    _no_secret(s3_server.secret_key, capfd, [ckpt], str(query.recentProgress))


def test_write_stream_and_source_on_s3(spark: Any, s3_server: Any, tables: Any, tmp_path: Path,
                                       capfd: pytest.CaptureFixture[str]) -> None:
    _, _, pk, pk_uri, inbox = tables
    opts = s3_server.options()
    files = [_drop(inbox, n) for n in range(3)]
    # write_stream into the primary-key table; Spark replays the last batch: no second commit
    ws_ckpt = tmp_path / "ckpt-ws"
    def run() -> None:
        _run(write_stream(_source(spark, inbox), pk_uri, checkpoint=str(ws_ckpt), options=opts,
                          trigger={"availableNow": True}))

    run()
    _forget_last_commit(ws_ckpt, 2)
    run()
    assert (ws_ckpt / "commits" / "2").exists()  # Spark ran batch 2 again and logged it
    assert _identifiers(pk, ws_ckpt) == [0, 1, 2]
    latest = {r["id"]: r["v"] for f in files for r in f.to_pylist()}  # the files upserted in order
    assert {r["id"]: r["v"] for r in pk.refresh().scan().to_arrow().to_pylist()} == latest

    # the source: the table's changes from snapshot 1, with a consumer written to S3; the options come from the
    # session's defaults (what register_warehouse(..., options=...) sets), not from the query
    batches: list[pa.Table] = []
    read_ckpt = tmp_path / "ckpt-read"
    register_data_source(spark, defaults=opts)
    try:
        reader = (spark.readStream.format("paimon").option("read.changelog", "true").option("scan.mode", "from-snapshot")
                  .option("scan.snapshot-id", "1").option("consumer-id", "s3c"))
        query = _run(reader.load(pk_uri).writeStream.foreachBatch(lambda df, _: batches.append(df.toArrow()))
                     .option("checkpointLocation", str(read_ckpt)).trigger(availableNow=True).start())
    finally:
        register_data_source(spark)
    last = pk.refresh().store.snapshots.latest_id()
    assert last is not None
    want = pk.changes(0, last, merged=False)
    got = pa.concat_tables(batches).select(want.column_names)
    assert sorted(map(str, got.to_pylist())) == sorted(map(str, want.to_pylist()))
    consumer = f"{pk.path.split('/', 1)[1]}/consumer/consumer-s3c"  # Table.path: "<bucket>/<key>"
    assert s3_server.client().head_object(Bucket=s3_server.bucket, Key=consumer)["ContentLength"] > 0
    assert pk.consumer("s3c") is not None

    query.explain(extended=True)
    _no_secret(s3_server.secret_key, capfd, [ws_ckpt, read_ckpt], str(query.recentProgress),
               repr(stream_options({"path": pk_uri, **opts})))
