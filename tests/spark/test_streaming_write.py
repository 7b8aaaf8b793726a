"""Streaming writes exactly once: a query SIGKILLed right after its Paimon commit, before Spark's commit log,
restarted from its checkpoint, has written every input row once (the sink into an append table, write_stream into
a primary-key table, whose final state equals batch writes of the same input)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from jobs.spark.stream_writer import COMMIT_USER_FILE, CRASH_ENV
from table_format import FileSystemCatalog, Table, open_table, write_table

REPO = Path(__file__).resolve().parents[2]
DRIVER = Path(__file__).resolve().parent / "stream_crash_driver.py"
SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string())])
FILES = 3

pytest.importorskip("pyspark")
pytestmark = [pytest.mark.spark, pytest.mark.skipif(shutil.which("java") is None, reason="Spark needs Java")]


def _inputs(folder: Path) -> list[pa.Table]:
    """Three parquet files of five rows; ids overlap between files (upserts on the primary-key table)."""
    folder.mkdir()
    tables = []
    for f in range(FILES):
        ids = [(f * 3 + i) % 8 for i in range(5)]
        data = pa.table({"id": ids, "v": [f"f{f}-{i}" for i in ids]}, schema=SCHEMA)
        path = folder / f"part-{f}.parquet"
        pq.write_table(data, path)
        os.utime(path, (1_700_000_000 + f, 1_700_000_000 + f))  # the file source reads oldest first
        tables.append(data)
    return tables


def _run(request: dict[str, Any], crash: str | None) -> int:
    env = {k: v for k, v in os.environ.items() if k != CRASH_ENV}
    env.update(PYTHONPATH=str(REPO), SPARK_LOCAL_IP="127.0.0.1")
    if crash:
        env[CRASH_ENV] = crash
    proc = subprocess.Popen([sys.executable, str(DRIVER), json.dumps(request)], env=env, start_new_session=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out, err = proc.communicate(timeout=600)
    finally:
        _kill_session(proc.pid)
    if proc.returncode not in (0, -signal.SIGKILL):
        raise AssertionError(f"driver failed ({proc.returncode}):\n{err[-5000:]}")
    if crash is None:
        assert proc.returncode == 0, err[-5000:]
    return proc.returncode


def _kill_session(sid: int) -> None:
    """Whatever the driver started and the kill left (Python workers in their own process group)."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[3]) == sid:  # the session id
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(entry), signal.SIGKILL)


def _identifiers(table: Table, user: str) -> list[int]:
    return [s.commit_identifier for s in table.snapshots() if s.commit_user == user]


def _crashed_in_window(table: Table, checkpoint: Path, batch: int) -> None:
    """Our commit of `batch` landed, Spark's commit log does not have it."""
    user = (checkpoint / COMMIT_USER_FILE).read_text().strip()
    assert _identifiers(table, user)[-1] == batch
    assert (checkpoint / "offsets" / str(batch)).exists() and not (checkpoint / "commits" / str(batch)).exists()


@pytest.mark.slow
def test_killed_after_commit_restarts_exactly_once(warehouse: str, tmp_path: Path) -> None:
    inputs = _inputs(tmp_path / "in")
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db", exist_ok=True)
    append = catalog.create_table("db.app", SCHEMA)
    pk = catalog.create_table("db.pk", SCHEMA, primary_keys=("id",), options={"bucket": "2"})
    reference = catalog.create_table("db.ref", SCHEMA, primary_keys=("id",), options={"bucket": "2"})
    ckpt_app, ckpt_pk = tmp_path / "ckpt-app", tmp_path / "ckpt-pk"
    queries = [{"how": "sink", "table": append.path, "checkpoint": str(ckpt_app)},
               {"how": "write_stream", "table": pk.path, "checkpoint": str(ckpt_pk)}]
    request = {"input": str(tmp_path / "in"), "queries": queries}

    assert _run(request, crash="app:1,pk:1") == -signal.SIGKILL  # the sink dies after committing batch 1
    _crashed_in_window(append.refresh(), ckpt_app, 1)
    assert _run(request, crash="pk:1") == -signal.SIGKILL  # the sink resumes; write_stream dies after batch 1
    _crashed_in_window(pk.refresh(), ckpt_pk, 1)
    _run(request, crash=None)

    everything = pa.concat_tables(inputs)
    rows = sorted(open_table(append.path).scan().to_arrow().to_pylist(), key=lambda r: (r["id"], r["v"]))
    assert rows == sorted(everything.to_pylist(), key=lambda r: (r["id"], r["v"]))  # every row exactly once
    for table, ckpt in ((append, ckpt_app), (pk, ckpt_pk)):
        user = (ckpt / COMMIT_USER_FILE).read_text().strip()
        assert _identifiers(table.refresh(), user) == list(range(FILES))  # one commit per batch, none twice
    for data in inputs:  # the same input, batch by batch
        write_table(reference, data)
    assert (open_table(pk.path).scan().to_arrow().sort_by("id")
            == open_table(reference.path).scan().to_arrow().sort_by("id"))


def test_sink_merges_one_bucket_from_two_tasks(spark: Any, warehouse: str, tmp_path: Path) -> None:
    """Several tasks of one micro-batch hold rows of one bucket: each writes in a sequence slot of its own
    (jobs/spark/pk_write.py), so the commit is correct however Spark partitioned the batch."""
    inputs = _inputs(tmp_path / "in")
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db", exist_ok=True)
    pk = catalog.create_table("db.pk", SCHEMA, primary_keys=("id",), options={"bucket": "1"})
    query = (spark.readStream.schema("id BIGINT, v STRING").parquet(str(tmp_path / "in")).writeStream
             .format("paimon").option("checkpointLocation", str(tmp_path / "ckpt")).trigger(availableNow=True)
             .start(pk.path))
    query.awaitTermination(300)
    assert query.exception() is None
    got = {r["id"]: r["v"] for r in pk.refresh().scan().to_arrow().to_pylist()}
    candidates: dict[int, set[str]] = {}
    for t in inputs:
        for r in t.to_pylist():
            candidates.setdefault(r["id"], set()).add(r["v"])
    assert set(got) == set(candidates)  # every key once; which task's version wins is Spark's order, as in Paimon
    assert all(got[k] in candidates[k] for k in got)
    pk.maintenance.compact(full=True)
    assert {r["id"]: r["v"] for r in pk.refresh().scan().to_arrow().to_pylist()} == got
