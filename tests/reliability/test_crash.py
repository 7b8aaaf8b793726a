"""Crash safety: a writer process is SIGKILLed at random moments while it writes, deletes, overwrites, compacts
and expires in a loop. After every kill the table loads and reads exactly the last committed state (the parent
keeps a model from the child's "done" reports; a write killed after its snapshot landed but before it was
reported counts as committed only if the table shows all of it), every file of every snapshot exists, and
remove_orphan_files(older_than=0) removes the leftovers without changing what the table reads.

Default: 3 table kinds x 6 kills. Soak (`-m slow`): 3 kinds x 60 kills.
"""

from __future__ import annotations

import datetime as dt
import multiprocessing as mp
import random
import time
import zlib
from typing import Any

import pytest
import rel_workers
from rel_helpers import create, is_pk, missing_files, read_rows, read_text, reload, row_tuples, rows, tree
from rel_workers import crash_op

CRASH_KINDS = ["partitioned", "append-unaware", "pk-dynamic"]
CTX = mp.get_context("forkserver")
CTX.set_forkserver_preload(["rel_workers"])


class Model:
    """What the table must read after the committed steps."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.keyed: dict[Any, dict[str, Any]] = {}
        self.appended: list[dict[str, Any]] = []

    def copy(self) -> Model:
        m = Model(self.kind)
        m.keyed = dict(self.keyed)
        m.appended = list(self.appended)
        return m

    def apply(self, step: int) -> None:
        op, keys = crash_op(self.kind, step)
        if op in ("compact", "expire"):
            return
        data = rel_workers.crash_data(self.kind, step, op, keys).to_pylist()
        if op == "overwrite":
            self.keyed = {k: r for k, r in self.keyed.items() if r.get("dt") != "c"}
            self.appended = [r for r in self.appended if r.get("dt") != "c"]
        for r in data:
            r.pop("_row_kind", None)
            key = (r.get("dt"), r["id"])
            if op == "delete":
                self.keyed.pop(key, None)
            elif is_pk(self.kind):
                self.keyed[key] = r
            else:
                self.appended.append(r)

    def rows(self) -> list[tuple[Any, ...]]:
        return row_tuples(self.kind, list(self.keyed.values()) + self.appended)


def parse(report: str) -> tuple[list[int], int | None]:
    done: list[int] = []
    pending = None
    with open(report) as f:
        for line in f.read().splitlines():
            parts = line.split()
            if parts and parts[0] == "intent":
                pending = int(parts[1])
            elif parts and parts[0] == "done":
                done.append(int(parts[1]))
                pending = None
    return done, pending


def crash_loop(tmp_path: Any, kind: str, kills: int, seed: int) -> dict[str, int]:
    warehouse = str(tmp_path / "warehouse")
    table = create(warehouse, kind)
    rnd = random.Random(seed)
    model = Model(kind)
    step = 0
    window = 0.6  # seconds after "ready" to kill within; doubles after a kill that landed no step (a slow machine)
    stats = {"kills": 0, "steps": 0, "in_flight_landed": 0, "in_flight_lost": 0, "orphans_removed": 0}
    for k in range(kills):
        report = str(tmp_path / f"report-{k}")
        with open(report, "w"):
            pass
        child = CTX.Process(target=rel_workers.crash_child, args=(warehouse, table.identifier, kind, step, report))
        child.start()
        deadline = time.monotonic() + 120
        while "ready" not in read_text(report):
            assert child.is_alive() and time.monotonic() < deadline, f"crash child did not start: {read_text(report)}"
            time.sleep(0.01)
        time.sleep(rnd.uniform(0.0, window))
        child.kill()  # SIGKILL
        child.join()
        stats["kills"] += 1
        assert child.exitcode == -9, read_text(report)  # it was still running: it died, it did not fail
        done, pending = parse(report)
        window = 0.6 if done else min(window * 2, 20.0)
        for s in done:
            model.apply(s)
        fresh = reload(table)
        got = read_rows(fresh)
        if pending is not None and got != model.rows():
            landed = model.copy()
            landed.apply(pending)
            assert got == landed.rows(), f"kill {k}: the table is neither before nor after step {pending}"
            model = landed
            stats["in_flight_landed"] += 1
            pending_done = True
        else:
            assert got == model.rows(), f"kill {k} during step {pending}"
            stats["in_flight_lost"] += pending is not None
            pending_done = False
        assert missing_files(fresh) == [], f"kill {k} during step {pending}"
        ids = [s.id for s in fresh.snapshots()]
        assert ids == list(range(ids[0], ids[0] + len(ids))) if ids else True
        step = (done[-1] + 1 if done else step) + (1 if pending_done else 0)
        if pending is not None and not pending_done:
            step = pending  # redo the step that did not land
        stats["steps"] = step
        if k % 3 == 2 or k == kills - 1:
            before = tree(fresh.path)
            result = fresh.maintenance.remove_orphan_files(older_than=dt.timedelta(0), dry_run=False)
            stats["orphans_removed"] += len(result.deleted_files)
            fresh = reload(table)
            assert read_rows(fresh) == model.rows()
            assert missing_files(fresh) == []
            assert fresh.maintenance.remove_orphan_files(older_than=dt.timedelta(0), dry_run=True).orphan_files == ()
            assert set(tree(fresh.path)) <= set(before)
    # the table keeps working after all that
    final = reload(table)
    from table_format import write_table

    write_table(final, rows(kind, [999_999], 0, dt="a") if "dt" in final.arrow_schema.names else
                rows(kind, [999_999], 0))
    assert len(read_rows(final)) == len(model.rows()) + 1
    return stats


@pytest.mark.parametrize("kind", CRASH_KINDS)
def test_sigkill_in_a_loop_of_writes(tmp_path: Any, kind: str) -> None:
    stats = crash_loop(tmp_path, kind, kills=6, seed=zlib.crc32(kind.encode()) % 1000)
    print(kind, stats)
    assert stats["steps"] > 0


@pytest.mark.slow
@pytest.mark.parametrize("kind", CRASH_KINDS)
def test_sigkill_soak(tmp_path: Any, kind: str) -> None:
    print(kind, crash_loop(tmp_path, kind, kills=60, seed=7))
