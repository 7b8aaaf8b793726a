"""The process-wide worker pools (table_format/workers.py): reused across calls, started again in a forked child,
and a scan stopped early cancels the splits it had not started."""

from __future__ import annotations

import multiprocessing
import os
import threading

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


def _read_in_child(warehouse: str, out: multiprocessing.Queue) -> None:  # type: ignore[type-arg]
    t = FileSystemCatalog(warehouse).load_table("db.t")
    out.put(t.scan().to_arrow().num_rows)


def test_a_forked_child_reads_through_its_own_pool(warehouse: str) -> None:
    _table(warehouse)
    worker_pool("read").submit(lambda: None).result()  # the parent's pool has threads before the fork
    ctx = multiprocessing.get_context("fork")
    out = ctx.Queue()
    child = ctx.Process(target=_read_in_child, args=(warehouse, out))
    child.start()
    child.join(timeout=120)
    assert child.exitcode == 0
    assert out.get(timeout=5) == 4000


def test_a_scan_stopped_early_cancels_the_splits_not_started(warehouse: str, monkeypatch) -> None:
    t = _table(warehouse)
    reads: list[int] = []
    real_read = SplitReader.read

    def counted(self: SplitReader, split: object) -> pa.Table:
        reads.append(split.bucket)  # type: ignore[attr-defined]
        return real_read(self, split)  # type: ignore[arg-type]

    monkeypatch.setattr(SplitReader, "read", counted)
    pool = worker_pool("read")
    release = threading.Event()
    busy = [pool.submit(release.wait) for _ in range(pool_size("read") - 1)]  # one worker left for the scan
    try:
        batches = t.scan().to_batches()  # type: ignore[attr-defined]
        assert next(batches).num_rows > 0
        batches.close()  # the splits queued behind the first are cancelled
    finally:
        release.set()
        for f in busy:
            f.result()
    pool.submit(lambda: None).result()
    assert len(reads) <= 2, reads  # the first split, and at most the one its worker took next; 8 splits in all
    assert t.scan(limit=10).to_arrow().num_rows == 10  # type: ignore[attr-defined]
