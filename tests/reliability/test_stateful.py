"""A hypothesis state machine against a plain Python model: writes, upserts, deletes, partition overwrites,
compactions, expirations, tags, rollbacks and time-travel reads in any order.

Invariants after every step: the table (opened afresh) reads what the model says, and every file referenced by
every snapshot and tag exists. Time travel to any retained snapshot or tag reads what the model said back then.

Default: 2 machines x 15 examples x up to 20 steps. Soak (`-m slow`): 2 x 200 x 40.
"""

from __future__ import annotations

import datetime as dt
import shutil
import tempfile
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule
from rel_helpers import create, is_pk, missing_files, read_rows, reload, row_tuples, rows

from table_format import write_table

KEYS = st.lists(st.integers(0, 12), min_size=1, max_size=5, unique=True)
PARTS = st.sampled_from("abc")


class TableMachine(RuleBasedStateMachine):
    kind = "partitioned"
    options: dict[str, str] = {"num-sorted-run.compaction-trigger": "3"}

    @initialize()
    def setup(self) -> None:
        self.dir = tempfile.mkdtemp(prefix="stateful-")
        self.table = create(self.dir, self.kind, extra_options=self.options)
        self.keyed: dict[Any, dict[str, Any]] = {}
        self.appended: list[dict[str, Any]] = []
        self.history: dict[int, list[tuple[Any, ...]]] = {}
        self.tags: dict[str, tuple[int, list[tuple[Any, ...]]]] = {}
        self.latest = 0
        self.step = 0

    def teardown(self) -> None:
        if hasattr(self, "dir"):
            shutil.rmtree(self.dir, ignore_errors=True)

    # ---- model --------------------------------------------------------------------------------------------------
    def expected(self) -> list[tuple[Any, ...]]:
        return row_tuples(self.kind, list(self.keyed.values()) + self.appended)

    def _set_state(self, expected: list[tuple[Any, ...]]) -> None:
        names = self.table.arrow_schema.names
        records = [dict(zip(names, r, strict=True)) for r in expected]
        if is_pk(self.kind):
            self.keyed = {(r["dt"], r["id"]): r for r in records}
            self.appended = []
        else:
            self.keyed, self.appended = {}, records

    def _committed(self) -> None:
        """Record the rows of every snapshot created since the last step."""
        snap = self.table.latest_snapshot()
        new_latest = snap.id if snap is not None else 0
        for sid in range(self.latest + 1, new_latest + 1):
            self.history[sid] = self.expected()
        self.latest = new_latest

    def _rows(self, ids: list[int], part: str, *, row_kind: str | None = None) -> Any:
        self.step += 1
        return rows(self.kind, ids, self.step, f"s{self.step}-", dt=part, row_kind=row_kind)

    # ---- rules --------------------------------------------------------------------------------------------------
    @rule(ids=KEYS, part=PARTS)
    def write(self, ids: list[int], part: str) -> None:
        data = self._rows(ids, part)
        write_table(self.table, data)
        for r in data.to_pylist():
            if is_pk(self.kind):
                self.keyed[(r["dt"], r["id"])] = r
            else:
                self.appended.append(r)
        self._committed()

    @precondition(lambda self: is_pk(self.kind))
    @rule(ids=KEYS, part=PARTS)
    def delete(self, ids: list[int], part: str) -> None:
        write_table(self.table, self._rows(ids, part, row_kind="-D"))
        for i in ids:
            self.keyed.pop((part, i), None)
        self._committed()

    @rule(ids=st.lists(st.integers(0, 12), max_size=4, unique=True), part=PARTS)
    def overwrite_partition(self, ids: list[int], part: str) -> None:
        data = self._rows(ids, part)
        write_table(self.table, data, mode="overwrite", overwrite_partitions=[{"dt": part}])
        self.keyed = {k: r for k, r in self.keyed.items() if r["dt"] != part}
        self.appended = [r for r in self.appended if r["dt"] != part]
        for r in data.to_pylist():
            (self.keyed.__setitem__((r["dt"], r["id"]), r) if is_pk(self.kind) else self.appended.append(r))
        self._committed()

    @rule(full=st.booleans())
    def compact(self, full: bool) -> None:
        self.table.maintenance.compact(full=full)
        self._committed()

    @rule(retain=st.integers(1, 3))
    def expire(self, retain: int) -> None:
        self.table.maintenance.expire_snapshots(retain_min=retain, older_than=dt.timedelta(0), dry_run=False)
        remaining = {s.id for s in self.table.snapshots()}
        self.history = {sid: r for sid, r in self.history.items() if sid in remaining}

    @precondition(lambda self: self.latest > 0)
    @rule()
    def tag(self) -> None:
        name = f"t{len(self.tags)}-{self.step}"
        sid = self.table.create_tag(name)
        self.tags[name] = (sid, self.history[sid])

    @precondition(lambda self: bool(self.history) or bool(self.tags))
    @rule(data=st.data())
    def rollback(self, data: st.DataObject) -> None:
        targets = [("snapshot", sid) for sid in sorted(self.history)] + [("tag", n) for n in sorted(self.tags)]
        what, target = data.draw(st.sampled_from(targets))
        if what == "snapshot":
            sid, expected = target, self.history[target]
            self.table.rollback_to(snapshot_id=sid)
        else:
            sid, expected = self.tags[target]
            self.table.rollback_to(tag=target)
        self._set_state(expected)
        self.history = {s: r for s, r in self.history.items() if s <= sid}
        self.history[sid] = expected
        self.tags = {n: v for n, v in self.tags.items() if v[0] <= sid}
        self.latest = sid

    @precondition(lambda self: bool(self.history) or bool(self.tags))
    @rule(data=st.data())
    def time_travel(self, data: st.DataObject) -> None:
        targets = [("snapshot", sid) for sid in sorted(self.history)] + [("tag", n) for n in sorted(self.tags)]
        what, target = data.draw(st.sampled_from(targets))
        fresh = reload(self.table)
        if what == "snapshot":
            assert read_rows(fresh, snapshot_id=target) == self.history[target]
        else:
            got = fresh.scan(tag=target).to_arrow()
            names = got.column_names
            assert sorted(tuple(r[n] for n in names) for r in got.to_pylist()) == self.tags[target][1]

    # ---- invariants ---------------------------------------------------------------------------------------------
    @invariant()
    def reads_as_the_model_says(self) -> None:
        if not hasattr(self, "table"):
            return
        assert read_rows(reload(self.table)) == self.expected()

    @invariant()
    def every_referenced_file_exists(self) -> None:
        if not hasattr(self, "table"):
            return
        assert missing_files(self.table) == []


class AppendTableMachine(TableMachine):
    kind = "append-partitioned"
    options = {"compaction.min.file-num": "2"}


_QUICK = settings(max_examples=15, stateful_step_count=20, deadline=None,
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
_SOAK = settings(max_examples=200, stateful_step_count=40, deadline=None,
                 suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


def test_primary_key_table_against_model() -> None:
    TableMachine.TestCase.settings = _QUICK
    TableMachine.TestCase().runTest()


def test_append_table_against_model() -> None:
    AppendTableMachine.TestCase.settings = _QUICK
    AppendTableMachine.TestCase().runTest()


@pytest.mark.slow
@pytest.mark.parametrize("machine", [TableMachine, AppendTableMachine], ids=["pk", "append"])
def test_state_machine_soak(machine: type[TableMachine]) -> None:
    machine.TestCase.settings = _SOAK
    machine.TestCase().runTest()
