"""Safe commits on a real S3 server: conditional PUT (If-None-Match: *) gives one winner per snapshot id, 4 writer
processes lose nothing, a store without conditional PUT refuses unlocked commits, hints are verified."""

from __future__ import annotations

import datetime as dt
import multiprocessing as mp
import threading
from collections import Counter
from typing import Any

import pyarrow as pa
import pytest
import s3_workers

from table_format import CommitFailedError, CommitKind, FileSystemCatalog, write_table
from table_format.io.lock import FileCommitLock
from table_format.io.s3_config import S3Config
from table_format.io.s3_file_io import S3FileIO

pytestmark = pytest.mark.s3
SPAWN = mp.get_context("spawn")


def test_conditional_put_has_exactly_one_winner_per_key(s3_server: Any) -> None:
    """The server honours If-None-Match: * atomically: 8 racing creates of a key, one True, its content stays."""
    io = S3FileIO(S3Config.resolve(s3_server.options()))
    workers, keys = 4, 12
    barrier = threading.Barrier(workers)
    won: Counter[int] = Counter()
    winner: dict[int, bytes] = {}
    guard = threading.Lock()

    def race(w: int) -> None:
        for k in range(keys):
            barrier.wait()
            data = f"writer {w}".encode()
            if io.try_create(f"{s3_server.bucket}/race-{id(io)}/snapshot/snapshot-{k}", data):
                with guard:
                    won[k] += 1
                    winner[k] = data

    threads = [threading.Thread(target=race, args=(w,)) for w in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert won == Counter(dict.fromkeys(range(keys), 1))
    for k in range(keys):
        assert io.read_bytes(f"{s3_server.bucket}/race-{id(io)}/snapshot/snapshot-{k}") == winner[k]
    assert io.requests.snapshot()["PutObject"] == workers * keys  # one request per attempt, no check-then-write


def _create(warehouse: str, name: str, primary_key: bool, **catalog_kw: Any) -> Any:
    catalog = FileSystemCatalog(warehouse, **catalog_kw)
    catalog.create_database("db", exist_ok=True)
    keys = ["id"] if primary_key else []
    options = {"bucket": "2"} if primary_key else {}
    return catalog.create_table(f"db.{name}", s3_workers.SCHEMA, primary_keys=keys, options=options)


def _run_writers(warehouse: str, identifiers: list[str], workers: int, commits: int, per_commit: int,
                 **kw: Any) -> dict[str, list[dict[str, Any]]]:
    """`workers` processes write `commits` batches into each table in turn; their reports per table."""
    queue = SPAWN.Queue()
    barrier = SPAWN.Barrier(workers)
    procs = [SPAWN.Process(target=s3_workers.writer,
                           args=(warehouse, identifiers, w, commits, per_commit, barrier, queue),
                           kwargs=kw) for w in range(workers)]
    for p in procs:
        p.start()
    reports: dict[int, Any] = {}
    errors = []
    try:
        for _ in range(workers):
            status, worker, payload = queue.get(timeout=300)
            if status == "ok":
                reports[worker] = payload
            else:
                errors.append(f"writer {worker}:\n{payload}")
    finally:
        for p in procs:
            p.join(timeout=60)
            if p.is_alive():  # pragma: no cover - a hung writer
                p.kill()
    assert not errors, "\n".join(errors)
    return {i: [reports[w][i] for w in range(workers)] for i in identifiers}


def _check_nothing_lost(table: Any, reports: list[dict[str, Any]], workers: int, commits: int,
                        per_commit: int) -> None:
    table = FileSystemCatalog(table.store.file_io.uri(table.path).rsplit("/", 2)[0]).load_table(table.identifier)
    snaps = table.snapshots()
    assert [s.id for s in snaps] == list(range(1, len(snaps) + 1))
    landed = [sid for r in reports for sid in r["snapshot_ids"]]
    assert len(landed) == len(set(landed)) == workers * commits  # every writer was told a different id
    appends = [s.id for s in snaps if s.commit_kind == CommitKind.APPEND]
    assert len(appends) == workers * commits  # every write is one append snapshot (none was overwritten) ...
    assert set(landed) <= {s.id for s in snaps}  # ... (write_table reports its automatic compaction's id, if any)
    expected = pa.concat_tables([s3_workers.batch(w, i, per_commit) for w in range(workers) for i in range(commits)])
    got = table.scan().to_arrow().sort_by("id")
    assert got.equals(expected.sort_by("id"))
    orphans = table.maintenance.remove_orphan_files(older_than=dt.timedelta(0), dry_run=True)
    assert orphans.orphan_files == ()  # lost races cleaned up their manifests


def test_four_writer_processes_lose_nothing(s3_warehouse: str) -> None:
    """4 processes commit to a primary-key table, then to an append table, all at once, through conditional PUT."""
    tables = {"db.pk": _create(s3_warehouse, "pk", True), "db.append": _create(s3_warehouse, "append", False)}
    workers, commits, per_commit = 4, 3, 3
    reports = _run_writers(s3_warehouse, list(tables), workers, commits, per_commit)
    for identifier, table in tables.items():
        _check_nothing_lost(table, reports[identifier], workers, commits, per_commit)
        print(identifier, "retries per writer:", [r["retries"] for r in reports[identifier]])


def test_store_without_conditional_put_refuses_unlocked_commits(s3_warehouse: str) -> None:
    options = {"s3.conditional-put": "false"}
    catalog = FileSystemCatalog(s3_warehouse, options=options)
    catalog.create_database("db")
    with pytest.raises(CommitFailedError, match="without a commit lock.*s3.conditional-put"):
        catalog.create_table("db.t", s3_workers.SCHEMA)
    assert not catalog.table_exists("db.t")
    locked = _create(s3_warehouse, "t", False, commit_lock=FileCommitLock("/tmp/unused-lock-dir-not-needed"),
                     options=options)
    unlocked = FileSystemCatalog(s3_warehouse, options=options).load_table("db.t")
    with pytest.raises(CommitFailedError, match="without a commit lock"):
        write_table(unlocked, s3_workers.batch(0, 0, 2))
    assert unlocked.latest_snapshot() is None  # nothing published
    assert write_table(locked, s3_workers.batch(0, 0, 2)) == 1


def test_commit_lock_makes_check_then_write_safe(s3_warehouse: str, tmp_path: Any) -> None:
    """Without conditional PUT, 4 processes sharing a FileCommitLock still lose nothing."""
    options = {"s3.conditional-put": "false"}
    lock_dir = str(tmp_path / "locks")
    table = _create(s3_warehouse, "t", False, commit_lock=FileCommitLock(lock_dir), options=options)
    reports = _run_writers(s3_warehouse, ["db.t"], 4, 2, 2, options=options, lock_dir=lock_dir)
    _check_nothing_lost(table, reports["db.t"], 4, 2, 2)


def test_hints_are_verified_not_trusted(s3_warehouse: str) -> None:
    table = _create(s3_warehouse, "t", True)
    for i in range(3):
        write_table(table, s3_workers.batch(0, i, 2))
    io, hint = table.store.file_io, f"{table.path}/snapshot/LATEST"
    for stale in (b"1", b"garbage", b"99"):
        io.overwrite_hint(hint, stale)
        assert table.latest_snapshot().id == 3
    io.delete(hint)
    assert table.latest_snapshot().id == 3
    assert table.scan().to_arrow().num_rows == 6


class LostReplyS3FileIO(S3FileIO):
    """The conditional PUT lands, then the reply is "lost" (an OSError), `failures` times."""

    failures = 1

    def _create_if_absent(self, path: str, data: bytes) -> bool:
        created = super()._create_if_absent(path, data)
        if created and "/snapshot/" in path and self.failures > 0:
            self.failures -= 1
            raise OSError(f"connection reset after PUT {path}")
        return created


def test_lost_reply_of_the_conditional_put_is_one_commit(s3_server: Any, s3_warehouse: str) -> None:
    io = LostReplyS3FileIO(S3Config.resolve(s3_server.options()))
    table = _create(s3_warehouse, "t", False, file_io=io)
    assert write_table(table, s3_workers.batch(0, 0, 2)) == 1  # read back: our own snapshot, so it landed
    assert write_table(table, s3_workers.batch(0, 1, 2)) == 2
    assert [s.id for s in table.snapshots()] == [1, 2]
    assert table.scan().to_arrow().num_rows == 4


def test_leftovers_of_uncommitted_writes_are_batch_deleted(s3_warehouse: str) -> None:
    table = _create(s3_warehouse, "t", True)
    write_table(table, s3_workers.batch(0, 0, 2))
    for i in range(1, 6):  # writers that died before committing: their data files are orphans
        w = table.new_write()
        w.write(s3_workers.batch(0, i, 50))
        w.prepare_commit()
    requests = table.store.file_io.requests
    with requests.measure() as m:
        result = table.maintenance.remove_orphan_files(older_than=dt.timedelta(0), dry_run=False)
    assert len(result.deleted_files) >= 5
    assert m.by_kind.get("DeleteObjects") == 1 and "DeleteObject" not in m.by_kind, m.by_kind
    assert table.maintenance.remove_orphan_files(older_than=dt.timedelta(0), dry_run=True).orphan_files == ()
    assert table.scan().to_arrow().num_rows == 2
