"""Mixed load on one table: upserting/deleting writers, an overwriter of one partition, a compactor and an
expirer (retain_min=1, older_than=0), all at once, in processes and in threads.

Every commit lands or raises CommitConflictError (the writers retry); a compaction never drops rows appended
concurrently; expiration never deletes a file a remaining snapshot needs. At the end every file referenced by
every remaining snapshot exists and the table reads exactly the model's rows, also after orphan removal.

Default: 3 kinds x (2 writers x 12 commits + 4 overwrites + compactor + expirer) in processes, 2 kinds in threads.
Soak (`-m slow`): 3 kinds x 5 rounds x (4 writers x 60 commits + 15 overwrites + compactor + expirer), and threads.
"""

from __future__ import annotations

import datetime as dt
import multiprocessing as mp
import queue as queue_mod
import threading
from typing import Any

import pytest
import rel_workers
from rel_helpers import create, is_partitioned, is_pk, missing_files, read_rows, reload, row_tuples, rows
from rel_workers import mixed_ops, mixed_value, overwrite_rows
from test_concurrency import SPAWN

MIXED_KINDS = ["partitioned", "append-partitioned", "pk-fixed"]


def model_rows(kind: str, writers: int, commits: int, overwrite_rounds: int) -> list[tuple[Any, ...]]:
    keyed: dict[Any, dict[str, Any]] = {}
    appended: list[dict[str, Any]] = []
    for w in range(writers):
        for step, (op, keys) in enumerate(mixed_ops(kind, w, commits)):
            for k in keys:
                dt_value = "ab"[k % 2] if is_partitioned(kind) else None
                if op == "delete":
                    keyed.pop(k, None)
                    continue
                (r,) = rows(kind, [k], w, mixed_value(w, step), dt=dt_value).to_pylist()
                if is_pk(kind):
                    keyed[k] = r
                else:
                    appended.append(r)
    out = list(keyed.values()) + appended
    if is_partitioned(kind) and overwrite_rounds:
        out += overwrite_rows(kind, overwrite_rounds - 1).to_pylist()
    return row_tuples(kind, out)


def check_mixed(table: Any, kind: str, reports: dict[str, Any], writers: int, commits: int, rounds: int) -> None:
    table = reload(table)
    expected = model_rows(kind, writers, commits, rounds)
    assert read_rows(table) == expected
    ids = [s.id for s in table.snapshots()]
    assert ids == list(range(ids[0], ids[0] + len(ids))), "remaining snapshots are consecutive"
    landed = [sid for name, r in reports.items() if "snapshot_ids" in r for sid in r["snapshot_ids"]]
    assert len(set(landed)) == len(landed) and max(landed) <= ids[-1]
    assert missing_files(table) == []
    for sid in ids:  # every remaining snapshot reads
        table.scan(snapshot_id=sid).to_arrow()
    table.maintenance.remove_orphan_files(older_than=dt.timedelta(0), dry_run=False)
    table = reload(table)
    assert read_rows(table) == expected
    assert missing_files(table) == []
    print(kind, {name: {k: v for k, v in r.items() if k != "snapshot_ids"} for name, r in reports.items()},
          "latest", ids[-1])


def run_mixed_processes(warehouse: str, kind: str, writers: int, commits: int, rounds: int) -> None:
    table = create(warehouse, kind)
    queue = SPAWN.Queue()
    stop = SPAWN.Event()
    procs = [SPAWN.Process(target=rel_workers.mixed_writer, args=(warehouse, table.identifier, kind, w, commits, queue))
             for w in range(writers)]
    if is_partitioned(kind):
        procs.append(SPAWN.Process(target=rel_workers.overwriter, args=(warehouse, table.identifier, kind, rounds,
                                                                        queue)))
    procs.append(SPAWN.Process(target=rel_workers.compactor, args=(warehouse, table.identifier, stop, queue)))
    procs.append(SPAWN.Process(target=rel_workers.expirer, args=(warehouse, table.identifier, stop, queue)))
    for p in procs:
        p.start()
    reports: dict[str, Any] = {}
    errors = []
    try:
        producers = writers + (1 if is_partitioned(kind) else 0)
        for i in range(len(procs)):
            if i == producers:
                stop.set()  # the writers are done: let the compactor and the expirer finish their round
            status, name, payload = queue.get(timeout=600)
            (reports.__setitem__(name, payload) if status == "ok" else errors.append(f"{name}:\n{payload}"))
            if status != "ok":
                stop.set()
    finally:
        stop.set()
        for p in procs:
            p.join(timeout=120)
            if p.is_alive():  # pragma: no cover
                p.kill()
    assert not errors, "\n".join(errors)
    check_mixed(table, kind, reports, writers, commits, rounds)


@pytest.mark.parametrize("kind", MIXED_KINDS)
def test_mixed_processes(warehouse: str, kind: str) -> None:
    run_mixed_processes(warehouse, kind, writers=2, commits=12, rounds=4)


@pytest.mark.slow
@pytest.mark.parametrize("kind", MIXED_KINDS)
@pytest.mark.parametrize("round_", range(5))
def test_mixed_processes_soak(warehouse: str, kind: str, round_: int) -> None:
    run_mixed_processes(warehouse, kind, writers=4, commits=60, rounds=15)


@pytest.mark.parametrize("kind", ["partitioned", "append-partitioned"])
def test_mixed_threads(warehouse: str, kind: str) -> None:
    """The same in one process, all threads sharing one Table object (and its manifest cache)."""
    run_mixed_threads(warehouse, kind, writers=2, commits=8, rounds=3)


@pytest.mark.slow
@pytest.mark.parametrize("kind", MIXED_KINDS)
def test_mixed_threads_soak(warehouse: str, kind: str) -> None:
    run_mixed_threads(warehouse, kind, writers=4, commits=40, rounds=10)


def run_mixed_threads(warehouse: str, kind: str, writers: int, commits: int, rounds: int) -> None:
    table = create(warehouse, kind)
    q: queue_mod.SimpleQueue[Any] = queue_mod.SimpleQueue()
    stop = threading.Event()
    threads = [threading.Thread(target=rel_workers.mixed_writer, args=(warehouse, table.identifier, kind, w, commits,
                                                                       q), kwargs={"table": table})
               for w in range(writers)]
    if is_partitioned(kind):
        threads.append(threading.Thread(target=rel_workers.overwriter,
                                        args=(warehouse, table.identifier, kind, rounds, q), kwargs={"table": table}))
    others = [threading.Thread(target=rel_workers.compactor, args=(warehouse, table.identifier, stop, q),
                               kwargs={"table": table}),
              threading.Thread(target=rel_workers.expirer, args=(warehouse, table.identifier, stop, q),
                               kwargs={"table": table})]
    for th in threads + others:
        th.start()
    for th in threads:
        th.join()
    stop.set()
    for th in others:
        th.join()
    reports = {}
    while not q.empty():
        status, name, payload = q.get()
        assert status == "ok", f"{name}:\n{payload}"
        reports[name] = payload
    check_mixed(table, kind, reports, writers, commits, rounds)


def test_model_sanity() -> None:
    assert model_rows("partitioned", 2, 5, 2)
    assert len(mixed_ops("append-partitioned", 0, 5)) == 5
    _ = mp  # spawn context comes from test_concurrency
