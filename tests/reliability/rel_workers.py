"""Bodies of the processes and threads the reliability tests start (importable by `spawn` children).

Every worker reports through a queue: ("ok", name, payload) or ("error", name, traceback text). A worker only
ever expects CommitConflictError from a commit; anything else is reported as an error and fails the test.
"""

from __future__ import annotations

import datetime as dt
import os
import random
import time
import traceback
from collections.abc import Callable
from typing import Any

import pyarrow as pa
from faulty_io import ObjectStoreLikeFileIO
from rel_helpers import PARTITIONS, is_partitioned, is_pk, rows

from table_format import (
    CommitConflictError,
    CommitFailedError,
    CommitOutcomeUnknownError,
    FileSystemCatalog,
    Table,
    write_table,
)
from table_format.io.lock import FileCommitLock

HOT_KEYS = range(5)  # keys every writer of a primary-key table upserts (last writer wins)


def _catalog(warehouse: str, lock_dir: str | None, object_store: bool = False) -> FileSystemCatalog:
    """A catalog; `object_store`: over a FileIO without create-if-absent (like S3), `lock_dir`: with a file lock."""
    lock = FileCommitLock(lock_dir) if lock_dir else None
    file_io = ObjectStoreLikeFileIO(race_window=0.002) if object_store else None
    return FileSystemCatalog(warehouse, file_io=file_io, commit_lock=lock)


def _retrying(fn: Callable[[], Any], *, conflicts: list[int], max_tries: int = 200) -> Any:
    """Run a commit until it lands. CommitConflictError, and CommitFailedError when the committer's own retries
    ran out (other writers kept taking the next id), mean "nothing landed, try again"; nothing else is expected
    (CommitOutcomeUnknownError, a CommitFailedError too, is not retried)."""
    for attempt in range(max_tries):
        try:
            return fn()
        except CommitOutcomeUnknownError:
            raise
        except (CommitConflictError, CommitFailedError):
            conflicts[0] += 1
            time.sleep(random.uniform(0.0, 0.02 * min(attempt + 1, 10)))
    raise AssertionError(f"no progress after {max_tries} conflicting attempts")


def _report(queue: Any, name: str, body: Callable[[], Any]) -> None:
    try:
        queue.put(("ok", name, body()))
    except BaseException:
        queue.put(("error", name, traceback.format_exc()))


# ---- N writers x M commits ----------------------------------------------------------------------------------------


def commit_ids(kind: str, worker: int, commit: int, per_commit: int) -> list[int]:
    base = 1_000 + worker * 100_000 + commit * 1_000
    return list(range(base, base + per_commit))


def writer(warehouse: str, identifier: str, kind: str, worker: int, commits: int, per_commit: int, queue: Any,
           lock_dir: str | None = None, table: Table | None = None, object_store: bool = False,
           barrier: Any = None) -> None:
    """Commit `commits` writes of fresh keys (+ the hot keys on primary-key tables); report the snapshot ids."""

    def body() -> dict[str, Any]:
        t = table if table is not None else _catalog(warehouse, lock_dir, object_store).load_table(identifier)
        conflicts = [0]
        ids = []
        if barrier is not None:
            barrier.wait(timeout=300)
        for i in range(commits):
            data = rows(kind, commit_ids(kind, worker, i, per_commit), worker)
            if is_pk(kind):
                hot = rows(kind, HOT_KEYS, worker, v=f"w{worker}c{i}-", dt="a" if is_partitioned(kind) else None)
                data = pa.concat_tables([data, hot])
            ids.append(_retrying(lambda d=data: write_table(t, d), conflicts=conflicts))
        return {"snapshot_ids": ids, "conflicts": conflicts[0], "pid": os.getpid()}

    _report(queue, f"writer-{worker}", body)


# ---- mixed load ---------------------------------------------------------------------------------------------------


def mixed_ops(kind: str, worker: int, commits: int) -> list[tuple[str, list[int]]]:
    """The deterministic op sequence of an upserting writer: ("upsert"|"delete", ids), ids in its own range."""
    rnd = random.Random(worker)
    ops: list[tuple[str, list[int]]] = []
    written: list[int] = []
    for i in range(commits):
        if is_pk(kind) and written and rnd.random() < 0.25:
            victims = rnd.sample(written, min(len(written), rnd.randint(1, 3)))
            ops.append(("delete", victims))
            written = [x for x in written if x not in victims]
        else:
            base = 1_000 + worker * 100_000
            fresh = [base + i * 10 + j for j in range(rnd.randint(1, 4))]
            again = rnd.sample(written, min(len(written), 2)) if is_pk(kind) else []
            ops.append(("upsert", fresh + again))
            written += fresh
    return ops


def mixed_value(worker: int, step: int) -> str:
    return f"w{worker}s{step}-"


def mixed_writer(warehouse: str, identifier: str, kind: str, worker: int, commits: int, queue: Any,
                 table: Table | None = None) -> None:
    def body() -> dict[str, Any]:
        t = table if table is not None else FileSystemCatalog(warehouse).load_table(identifier)
        conflicts = [0]
        ids = []
        for step, (op, keys) in enumerate(mixed_ops(kind, worker, commits)):
            # partitioned kinds never write partition "c": the overwriter owns it
            dt_of = {k: PARTITIONS[k % 2] for k in keys} if is_partitioned(kind) else {}
            if op == "upsert":
                data = _by_dt(kind, keys, worker, mixed_value(worker, step), dt_of, None)
            else:
                data = _by_dt(kind, keys, worker, "", dt_of, "-D")
            ids.append(_retrying(lambda d=data: write_table(t, d), conflicts=conflicts))
        return {"snapshot_ids": ids, "conflicts": conflicts[0]}

    _report(queue, f"writer-{worker}", body)


def _by_dt(kind: str, keys: list[int], worker: int, v: str, dt_of: dict[int, str], row_kind: str | None) -> Any:
    if not is_partitioned(kind):
        return rows(kind, keys, worker, v, row_kind=row_kind)
    parts = [rows(kind, [k], worker, v, dt=dt_of[k], row_kind=row_kind) for k in keys]
    return pa.concat_tables(parts)


def overwrite_rows(kind: str, round_: int) -> Any:
    return rows(kind, [900_000 + round_ * 10 + j for j in range(3)], 99, f"ow{round_}-", dt="c")


def overwriter(warehouse: str, identifier: str, kind: str, rounds: int, queue: Any, table: Table | None = None
               ) -> None:
    """Overwrite partition c `rounds` times; the last landed overwrite decides what c holds."""

    def body() -> dict[str, Any]:
        t = table if table is not None else FileSystemCatalog(warehouse).load_table(identifier)
        conflicts = [0]
        ids = []
        for r in range(rounds):
            data = overwrite_rows(kind, r)
            ids.append(_retrying(lambda d=data: write_table(t, d, mode="overwrite", overwrite_partitions=[{"dt": "c"}]),
                                 conflicts=conflicts))
        return {"snapshot_ids": ids, "conflicts": conflicts[0]}

    _report(queue, "overwriter", body)


def compactor(warehouse: str, identifier: str, stop: Any, queue: Any, table: Table | None = None,
              full_every: int = 3) -> None:
    """Compact until told to stop; a compaction either lands or raises CommitConflictError."""

    def body() -> dict[str, Any]:
        t = table if table is not None else FileSystemCatalog(warehouse).load_table(identifier)
        landed = conflicts = n = 0
        while not stop.is_set() or n == 0:
            n += 1
            try:
                if t.maintenance.compact(full=n % full_every == 0).snapshot_id is not None:
                    landed += 1
            except CommitOutcomeUnknownError:
                raise
            except (CommitConflictError, CommitFailedError):  # nothing landed
                conflicts += 1
            time.sleep(0.01)
        return {"landed": landed, "conflicts": conflicts, "runs": n}

    _report(queue, "compactor", body)


def expirer(warehouse: str, identifier: str, stop: Any, queue: Any, table: Table | None = None) -> None:
    """Expire everything but the latest snapshot, over and over, until told to stop."""

    def body() -> dict[str, Any]:
        t = table if table is not None else FileSystemCatalog(warehouse).load_table(identifier)
        expired = n = 0
        while not stop.is_set() or n == 0:
            n += 1
            result = t.maintenance.expire_snapshots(retain_min=1, older_than=dt.timedelta(0), dry_run=False)
            expired += len(result.expired_snapshots)
            time.sleep(0.01)
        return {"expired": expired, "runs": n}

    _report(queue, "expirer", body)


def load_worker(warehouse: str, plan: list[tuple[str, str, int, int]], worker: int, barrier: Any, queue: Any,
                lock_dir: str | None = None, object_store: bool = False) -> None:
    """One process of the N x M load: for every (identifier, kind, commits, per_commit) of the plan, wait for the
    other processes, then commit; one report per table."""
    from queue import SimpleQueue

    for identifier, kind, commits, per_commit in plan:
        local: SimpleQueue[Any] = SimpleQueue()
        writer(warehouse, identifier, kind, worker, commits, per_commit, local, lock_dir=lock_dir,
               object_store=object_store, barrier=barrier)
        status, name, payload = local.get()
        queue.put((status, f"{identifier}/{name}", payload))


# ---- crash loop (the parent SIGKILLs this process at a random moment) ----------------------------------------------


def crash_op(kind: str, step: int) -> tuple[str, list[int]]:
    """The deterministic op of `step` in the crash loop: write, delete, overwrite, compact or expire."""
    rnd = random.Random(step * 7919)
    if step % 5 == 4:
        return ("compact", [])
    if step % 7 == 6:
        return ("expire", [])
    if is_partitioned(kind) and step % 6 == 5:
        return ("overwrite", [800_000 + step * 10 + j for j in range(2)])
    if is_pk(kind) and step > 3 and step % 3 == 2:
        return ("delete", sorted({rnd.randrange(0, step) * 10 + rnd.randrange(3) for _ in range(3)}))
    fresh = [step * 10 + j for j in range(3)]
    again = sorted({rnd.randrange(0, step) * 10 for _ in range(2)}) if is_pk(kind) and step else []
    return ("write", fresh + again)


def crash_data(kind: str, step: int, op: str, keys: list[int]) -> Any:
    if op == "overwrite":
        return rows(kind, keys, step, f"s{step}-", dt="c")
    if is_partitioned(kind):
        return pa.concat_tables([rows(kind, [k], step, f"s{step}-", dt="ab"[k % 2],
                                      row_kind="-D" if op == "delete" else None) for k in keys])
    return rows(kind, keys, step, f"s{step}-", row_kind="-D" if op == "delete" else None)


def _line(f: Any, text: str) -> None:
    f.write(text + "\n")
    f.flush()
    os.fsync(f.fileno())


def crash_child(warehouse: str, identifier: str, kind: str, start: int, report: str) -> None:
    """Run ops start, start+1, ... forever, logging "intent <step>" before and "done <step> <sid>" after each."""
    try:
        _crash_child(warehouse, identifier, kind, start, report)
    except BaseException:
        with open(report, "a") as f:
            _line(f, "error " + traceback.format_exc().replace("\n", " | "))
        raise


def _crash_child(warehouse: str, identifier: str, kind: str, start: int, report: str) -> None:
    table = FileSystemCatalog(warehouse).load_table(identifier)
    with open(report, "a") as f:
        _line(f, "ready")
        step = start
        while True:
            op, keys = crash_op(kind, step)
            _line(f, f"intent {step}")
            sid: Any = None
            if op == "write" or op == "delete":
                sid = write_table(table, crash_data(kind, step, op, keys))
            elif op == "overwrite":
                sid = write_table(table, crash_data(kind, step, op, keys), mode="overwrite",
                                  overwrite_partitions=[{"dt": "c"}])
            elif op == "compact":
                sid = table.maintenance.compact(full=step % 2 == 0).snapshot_id
            else:
                table.maintenance.expire_snapshots(retain_min=2, older_than=dt.timedelta(0), dry_run=False)
            _line(f, f"done {step} {sid}")
            step += 1
