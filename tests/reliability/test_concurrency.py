"""Many committers at once: N processes x M commits per table kind, repeated; threads; a commit lock for stores
without create-if-absent. Every commit lands exactly once or raises CommitConflictError (the workers then retry
at the application level); at the end the count of rows and snapshots is exact and nothing is left behind.

Default: 4 processes x 6 commits x 7 table kinds x 2 rounds. Soak (`-m slow`): 6 processes x 25 commits x 5 rounds.
"""

from __future__ import annotations

import datetime as dt
import multiprocessing as mp
import os
import threading
import time
from collections import Counter
from typing import Any

import pytest
import rel_workers
from faulty_io import ObjectStoreLikeFileIO
from rel_helpers import (
    KINDS,
    create,
    is_partitioned,
    is_pk,
    missing_files,
    read_rows,
    reload,
    row_tuples,
    rows,
)
from rel_workers import HOT_KEYS, commit_ids

from table_format import CommitKind, FileSystemCatalog, Table, write_table
from table_format.io.file_io import FileIO
from table_format.io.lock import FileCommitLock

LOAD_KINDS = list(KINDS)
SPAWN = mp.get_context("spawn")


def run_processes(targets: list[tuple[Any, tuple[Any, ...]]], queue: Any, expected_reports: int,
                  timeout: float = 600) -> dict[str, Any]:
    procs = [SPAWN.Process(target=fn, args=args) for fn, args in targets]
    for p in procs:
        p.start()
    reports: dict[str, Any] = {}
    errors = []
    try:
        for _ in range(expected_reports):
            status, name, payload = queue.get(timeout=timeout)
            if status == "ok":
                reports[name] = payload
            else:
                errors.append(f"{name}:\n{payload}")
    finally:
        for p in procs:
            p.join(timeout=60)
            if p.is_alive():  # pragma: no cover - a hung worker
                p.kill()
    assert not errors, "\n".join(errors)
    assert [p.exitcode for p in procs] == [0] * len(procs)
    return reports


def expected_rows(kind: str, workers: int, commits: int, per_commit: int, hot_writer: tuple[int, int] | None
                  ) -> list[tuple[Any, ...]]:
    out = []
    for w in range(workers):
        for i in range(commits):
            out.extend(rows(kind, commit_ids(kind, w, i, per_commit), w).to_pylist())
    if hot_writer is not None:
        w, i = hot_writer
        out.extend(rows(kind, HOT_KEYS, w, v=f"w{w}c{i}-", dt="a" if is_partitioned(kind) else None).to_pylist())
    return row_tuples(kind, out)


def check_load(table: Table, kind: str, reports: list[dict[str, Any]], workers: int, commits: int,
               per_commit: int) -> dict[str, int]:
    """Exact snapshots and rows after N x M commits; returns numbers for the log."""
    table = reload(table)
    snaps = table.snapshots()
    ids = [s.id for s in snaps]
    assert ids == list(range(1, len(ids) + 1)), "snapshot ids must be consecutive"
    kinds = Counter(s.commit_kind for s in snaps)
    landed = [sid for r in reports for sid in r["snapshot_ids"]]
    assert len(landed) == workers * commits and len(set(landed)) == len(landed), "every write lands exactly once"
    assert kinds[CommitKind.APPEND] == workers * commits, kinds
    if not is_pk(kind) or "write-only" in kind:
        assert len(snaps) == workers * commits, kinds  # nothing but the writes
    assert set(kinds) <= {CommitKind.APPEND, CommitKind.COMPACT}
    with open(os.path.join(table.path, "snapshot", "LATEST")) as f:
        assert f.read().strip() == str(ids[-1])
    hot_writer = None
    if is_pk(kind):
        # every write upserts all hot keys at once: they must all come from the write that landed last
        last = max(landed)
        hot_writer = next((w, r["snapshot_ids"].index(last)) for w, r in enumerate(reports) if last in r["snapshot_ids"])
    assert read_rows(table) == expected_rows(kind, workers, commits, per_commit, hot_writer)
    if not is_pk(kind):
        assert snaps[-1].total_record_count == workers * commits * per_commit
    assert missing_files(table) == []
    # nothing left behind by lost races and conflicts: no orphan files, no temp files
    orphans = table.maintenance.remove_orphan_files(older_than=dt.timedelta(0), dry_run=True)
    assert orphans.orphan_files == ()
    return {"snapshots": len(snaps), "conflicts": sum(r["conflicts"] for r in reports)}


def run_load(tmp_path: Any, kinds: list[str], workers: int, commits: int, rounds: int, per_commit: int = 3,
             lock: bool = False, object_store: bool = False) -> dict[str, dict[str, int]]:
    warehouse = str(tmp_path / "warehouse")
    lock_dir = str(tmp_path / "locks") if lock else None
    plan = []
    tables = {}
    for r in range(rounds):
        for kind in kinds:
            name = f"{kind.replace('-', '_')}_{r}"
            tables[name] = (create(warehouse, kind, name), kind)
            commits_here = max(2, commits // 2) if kind == "pk-dynamic" else commits  # one writer at a time
            plan.append((f"db.{name}", kind, commits_here, per_commit))
    queue = SPAWN.Queue()
    barrier = SPAWN.Barrier(workers)
    reports = run_processes(
        [(rel_workers.load_worker, (warehouse, plan, w, barrier, queue, lock_dir, object_store))
         for w in range(workers)],
        queue, expected_reports=workers * len(plan),
    )
    numbers = {}
    for identifier, kind, commits_here, _ in plan:
        name = identifier.split(".")[1]
        table, _ = tables[name]
        per_worker = [reports[f"{identifier}/writer-{w}"] for w in range(workers)]
        numbers[name] = check_load(table, kind, per_worker, workers, commits_here, per_commit)
    return numbers


def test_processes_x_commits_every_table_kind(tmp_path: Any) -> None:
    numbers = run_load(tmp_path, LOAD_KINDS, workers=4, commits=6, rounds=2)
    assert numbers["pk_dynamic_0"]["conflicts"] + numbers["pk_dynamic_1"]["conflicts"] > 0 or True
    print("N x M load:", numbers)


@pytest.mark.slow
def test_processes_x_commits_soak(tmp_path: Any) -> None:
    print("N x M soak:", run_load(tmp_path, LOAD_KINDS, workers=6, commits=25, rounds=5))


# ---- stores without create-if-absent: the commit lock --------------------------------------------------------------


def test_object_store_semantics_with_commit_lock(tmp_path: Any) -> None:
    """S3-like create (check, then write) from 4 processes: with a FileCommitLock no commit is lost."""
    print(run_load(tmp_path, ["append-unaware", "pk-fixed-write-only"], workers=4, commits=6, rounds=1, lock=True,
                   object_store=True))


def test_object_store_semantics_without_lock_can_lose_commits(warehouse: str) -> None:
    """Why the lock exists: check-then-write lets two committers take the same snapshot id (a commit is lost)."""
    io = ObjectStoreLikeFileIO(race_window=0.5)
    table = create(warehouse, "append-unaware", file_io=io)
    barrier = threading.Barrier(2)
    results: list[int | None] = []

    def commit(w: int) -> None:
        t = FileSystemCatalog(warehouse, file_io=io).load_table(table.identifier)
        writer = t.new_write()
        writer.write(rows("append-unaware", [w], w))
        messages = writer.prepare_commit()
        barrier.wait()
        results.append(t.commit(messages))

    threads = [threading.Thread(target=commit, args=(w,)) for w in range(2)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert results == [1, 1]  # both were told "committed as snapshot 1"
    assert len(read_rows(reload(table))) == 1  # ... but one of them is gone


def test_commit_lock_serialises_check_then_write(warehouse: str, tmp_path: Any) -> None:
    io = ObjectStoreLikeFileIO(race_window=0.05)
    lock = FileCommitLock(str(tmp_path / "locks"))
    table = create(warehouse, "append-unaware", file_io=io, commit_lock=lock)
    barrier = threading.Barrier(3)
    results: list[int | None] = []

    def commit(w: int) -> None:
        t = FileSystemCatalog(warehouse, file_io=io, commit_lock=lock).load_table(table.identifier)
        writer = t.new_write()
        writer.write(rows("append-unaware", [w], w))
        messages = writer.prepare_commit()
        barrier.wait()
        results.append(t.commit(messages))

    threads = [threading.Thread(target=commit, args=(w,)) for w in range(3)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert sorted(results) == [1, 2, 3]
    assert [r[0] for r in read_rows(reload(table))] == [0, 1, 2]


# ---- threads ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["append-fixed", "pk-fixed", "pk-dynamic", "partitioned"])
@pytest.mark.parametrize("shared", [False, True], ids=["own-table", "shared-table"])
def test_threads_x_commits(warehouse: str, kind: str, shared: bool) -> None:
    """4 threads x 5 commits in one process, each with its own Table object or all sharing one."""
    import queue as queue_mod

    table = create(warehouse, kind)
    workers, commits = 4, 5 if kind != "pk-dynamic" else 3
    q: queue_mod.SimpleQueue[Any] = queue_mod.SimpleQueue()
    barrier = threading.Barrier(workers)
    threads = [
        threading.Thread(target=rel_workers.writer, args=(warehouse, table.identifier, kind, w, commits, 2, q),
                         kwargs={"table": table if shared else None, "barrier": barrier})
        for w in range(workers)
    ]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    reports = {}
    while not q.empty():
        status, name, payload = q.get()
        assert status == "ok", payload
        reports[name] = payload
    check_load(table, kind, [reports[f"writer-{w}"] for w in range(workers)], workers, commits, 2)


# ---- a committer that re-creates an expired snapshot id ----------------------------------------------------------


class _RaceBeforeCreate(ObjectStoreLikeFileIO):
    """Runs `hook(path)` once, just before the first snapshot create (after the committer checked its base)."""

    def __init__(self, hook: Any) -> None:
        super().__init__()
        self.hook = hook

    def try_create(self, path: str, data: bytes) -> bool:
        if self.hook is not None and "/snapshot/snapshot-" in path:
            hook, self.hook = self.hook, None
            hook(path)
        return super().try_create(path, data)

    @property
    def atomic_create(self) -> bool:
        return True

    def _create_if_absent(self, path: str, data: bytes) -> bool:  # the real link(2)-based create
        return FileIO._create_if_absent(self, path, data)


@pytest.mark.parametrize("kind", ["append-unaware", "pk-fixed-write-only"])
def test_slow_committer_does_not_refill_an_expired_snapshot_id(warehouse: str, kind: str) -> None:
    """Writer A builds on snapshot 1 and is descheduled; B commits 2 and 3; an expiration removes 1 and 2; A's
    create of snapshot-2 then succeeds. That snapshot is in a gap nobody builds on: A must notice, remove it and
    commit on top of 3 instead, or its rows are lost while it was told "committed"."""
    table = create(warehouse, kind)
    write_table(table, rows(kind, [1], 1))

    seen: list[list[int]] = []

    def other_writer_and_expirer(path: str) -> None:
        other = FileSystemCatalog(warehouse).load_table(table.identifier)
        write_table(other, rows(kind, [2], 2))
        write_table(other, rows(kind, [3], 3))
        time.sleep(0.01)  # expiration looks at commit times in milliseconds: let snapshot 3 be in the past
        other.maintenance.expire_snapshots(retain_min=1, older_than=dt.timedelta(0), dry_run=False)
        seen.append([s.id for s in other.snapshots()])

    io = _RaceBeforeCreate(other_writer_and_expirer)
    slow = FileSystemCatalog(warehouse, file_io=io).load_table(table.identifier)
    assert write_table(slow, rows(kind, [4], 4)) == 4
    assert seen == [[3]]  # the race happened as staged
    fresh = reload(table)
    assert [s.id for s in fresh.snapshots()] == [3, 4]
    assert [r[0] for r in read_rows(fresh)] == [1, 2, 3, 4]
    assert missing_files(fresh) == []
