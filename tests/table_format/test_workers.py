"""The process-wide worker pools (table_format/workers.py): reused across calls, started again in a forked child,
and a scan stopped early cancels the splits it had not started."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pyarrow as pa

from table_format import FileSystemCatalog, write_table
from table_format.scan.reader import SplitReader
from table_format.workers import pool_size, worker_pool


def _table(warehouse: str) -> object:
    cat = FileSystemCatalog(warehouse)
    cat.create_database("db", exist_ok=True)
    t = cat.create_table("db.t", pa.schema([("id", pa.int64()), ("v", pa.string())]), primary_keys=["id"],
                         options={"bucket": "8"})
    ids = pa.array(range(4000), pa.int64())
    write_table(t, pa.table({"id": ids, "v": pa.array([f"a{i}" for i in range(4000)])}))
    write_table(t, pa.table({"id": ids[::2], "v": pa.array([f"b{i}" for i in range(0, 4000, 2)])}))
    return t


def test_pools_are_shared_per_purpose() -> None:
    assert worker_pool("read") is worker_pool("read")
    assert worker_pool("write") is not worker_pool("read")
    assert worker_pool("read")._max_workers == pool_size("read") == 2 * (os.cpu_count() or 2)


def test_reads_reuse_the_same_threads(warehouse: str) -> None:
    t = _table(warehouse)
    first = t.scan().to_arrow()  # type: ignore[attr-defined]
    threads = {th.ident for th in worker_pool("read")._threads}
    for _ in range(3):
        assert t.scan().to_arrow().equals(first)  # type: ignore[attr-defined]
    assert {th.ident for th in worker_pool("read")._threads} == threads
    assert first.num_rows == 4000
    assert sorted(first.filter(pa.compute.starts_with(first["v"], "b"))["id"].to_pylist()) == list(range(0, 4000, 2))


_FORK_SCRIPT = """
import multiprocessing, sys, threading
from table_format import FileSystemCatalog
from table_format.workers import pool_size, worker_pool

def read(out):
    out.put(FileSystemCatalog(sys.argv[1]).load_table("db.t").scan().to_arrow().num_rows)

if __name__ == "__main__":
    # the parent's pools have threads when it forks (it does not read: polars, which decodes manifests, is not
    # fork-safe once its own thread pool has started, whoever forks)
    for purpose in ("read", "write", "manifest"):  # every thread of each pool started, then idle
        barrier = threading.Barrier(pool_size(purpose))
        for f in [worker_pool(purpose).submit(barrier.wait) for _ in range(pool_size(purpose))]:
            f.result()
    ctx = multiprocessing.get_context("fork")
    out = ctx.Queue()
    child = ctx.Process(target=read, args=(out,), daemon=True)  # a hung child is killed when this script ends
    child.start()
    child.join(timeout=60)
    print(child.exitcode, out.get(timeout=5))
"""


def test_a_forked_child_reads_through_its_own_pool(warehouse: str, tmp_path: Path) -> None:
    """A process whose pools have threads forks, as multiprocessing's workers do; the child reads through pools of
    its own (without them it would queue its splits on the parent's threads, which do not exist in the child). A fresh interpreter: a fork of the test session would inherit whatever
    its other threads (Spark's, pytest's) hold."""
    _table(warehouse)
    script = tmp_path / "fork_read.py"
    script.write_text(_FORK_SCRIPT)
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, str(script), warehouse], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(root)})
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["0", "4000"], done.stdout


def test_a_scan_stopped_early_cancels_the_splits_not_started(warehouse: str, monkeypatch) -> None:
    t = _table(warehouse)
    reads: list[int] = []
    real_read = SplitReader.read
    closed = threading.Event()  # a split started after the first waits for the scan to be closed: the machine's
    # load cannot let more splits start before close() than the one free worker takes next

    def counted(self: SplitReader, split: object) -> pa.Table:
        reads.append(split.bucket)  # type: ignore[attr-defined]
        if len(reads) > 1:
            closed.wait(timeout=30)
        return real_read(self, split)  # type: ignore[arg-type]

    monkeypatch.setattr(SplitReader, "read", counted)
    pool = worker_pool("read")
    size = pool_size("read")
    release = threading.Event()
    busy = [pool.submit(release.wait) for _ in range(size - 1)]  # one worker left for the scan
    try:
        batches = t.scan().to_batches()  # type: ignore[attr-defined]
        assert next(batches).num_rows > 0
        batches.close()  # the splits queued behind the first are cancelled
    finally:
        closed.set()
        release.set()
        for f in busy:
            f.result()
    every_worker = threading.Barrier(size)  # all workers meet here only once every task queued before has ended
    for f in [pool.submit(every_worker.wait, 30) for _ in range(size)]:
        f.result()
    assert len(reads) <= 2, reads  # the first split, and at most the one its worker took next; 8 splits in all
    assert t.scan(limit=10).to_arrow().num_rows == 10  # type: ignore[attr-defined]
