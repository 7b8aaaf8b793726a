"""Fault injection: fail each I/O call in turn (the 1st, the 2nd, ... until the operation gets through) during
write_table, a two-phase commit, compaction, expiration and rescale.

After every failure: the error is a TableFormatError or OSError naming a file; the table is unchanged (same
snapshot and schema files, same rows, no new visible data file, every referenced file present); after
remove_orphan_files(older_than=0) the table directory holds exactly the files it held before; and the same operation
retried on a healthy filesystem succeeds with the same result as a run that never failed.

Modes: "before" (the call fails without effect), "after" (the call takes effect, then raises: a lost reply), and
"crash" (the call and every later one raise SimulatedCrash, a BaseException: no cleanup runs, as in a killed
process; the table must then read the state before or, if the snapshot had landed, after the operation).
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pytest
from faulty_io import ALL_OPS, WRITE_OPS, FaultyFileIO, SimulatedCrash
from rel_helpers import create, missing_files, read_rows, rows, snapshot_state, tree, visible_data_files

from table_format import FileSystemCatalog, Table, TableFormatError, write_table
from table_format.store.schema_manager import SchemaManager

IDENT = "db.t"


@dataclass
class Scenario:
    kind: str
    seed: Callable[[Table], None]  # healthy: put the table in the starting state
    op: Callable[[Table], Any]  # the operation under test (called on a table over the faulty FileIO)
    prepare: Callable[[Table], Any] | None = None  # healthy, per iteration: e.g. write files to commit later
    schema_may_change: bool = False  # rescale commits its new bucket option before the data
    expiring: bool = False  # expiration removes snapshots: compare with the reference outcome instead


def _upserts(kind: str, ids: list[int], w: int) -> pa.Table:
    return rows(kind, ids, w, f"u{w}-")


def _seed_writes(kind: str, n: int, *, per: int = 3, overlap: bool = False) -> Callable[[Table], None]:
    def seed(table: Table) -> None:
        for i in range(n):
            ids = [i * 10 + j for j in range(per)] + ([0, 1] if overlap and i else [])
            write_table(table, _upserts(kind, ids, i))
    return seed


def _two_phase_prepare(kind: str) -> Callable[[Table], Any]:
    def prepare(table: Table) -> Any:
        w = table.new_write()
        w.write(_upserts(kind, [500, 501, 2], 50))
        return w.prepare_commit()
    return prepare


SCENARIOS: dict[str, Scenario] = {
    "write-append": Scenario("append-unaware", _seed_writes("append-unaware", 3),
                             lambda t: write_table(t, _upserts("append-unaware", [100, 101], 9))),
    "write-pk-auto-compaction": Scenario(
        "pk-fixed", _seed_writes("pk-fixed", 2, overlap=True),
        lambda t: write_table(t, _upserts("pk-fixed", [0, 1, 100, 101], 9))),
    "write-pk-dynamic": Scenario("pk-dynamic", _seed_writes("pk-dynamic", 2, overlap=True),
                                 lambda t: write_table(t, _upserts("pk-dynamic", [0, 100, 101], 9))),
    "overwrite-partition": Scenario(
        "partitioned", _seed_writes("partitioned", 3),
        lambda t: write_table(t, rows("partitioned", [7, 8], 9, "ow", dt="b"), mode="overwrite",
                              overwrite_partitions=[{"dt": "b"}])),
    "two-phase-commit": Scenario("pk-fixed-write-only", _seed_writes("pk-fixed-write-only", 2),
                                 lambda t: t.commit(t._prepared), prepare=_two_phase_prepare("pk-fixed-write-only")),
    "compact-pk": Scenario("partitioned", _seed_writes("partitioned", 4, overlap=True),
                           lambda t: t.maintenance.compact(full=True)),
    "compact-append": Scenario("append-unaware", _seed_writes("append-unaware", 6),
                               lambda t: t.maintenance.compact(full=True)),
    "expire": Scenario(
        "pk-fixed", _seed_writes("pk-fixed", 5, overlap=True),
        lambda t: t.maintenance.expire_snapshots(retain_min=2, older_than=dt.timedelta(0), dry_run=False),
        expiring=True),
    "rescale": Scenario("pk-fixed-write-only", _seed_writes("pk-fixed-write-only", 3),
                        lambda t: t.maintenance.rescale(bucket=3), schema_may_change=True),
}
QUICK = {"write-append", "write-pk-auto-compaction", "two-phase-commit", "compact-pk", "expire"}


def _names_a_file(e: BaseException, table_root: str) -> bool:
    """The message (or a cause) shows a path of the table or an OSError's file name."""
    chain: list[BaseException] = []
    cur: BaseException | None = e
    while cur is not None and len(chain) < 5:
        chain.append(cur)
        cur = cur.__cause__ or cur.__context__
    for x in chain:
        if isinstance(x, OSError) and x.filename:
            return True
        if table_root in str(x) or "/" in str(x):
            return True
    return False


class Sweep:
    """Runs one scenario with the fault at call 1, 2, ... on fresh copies of a seeded warehouse."""

    def __init__(self, tmp_path: Any, name: str) -> None:
        self.sc = SCENARIOS[name]
        self.tmp = tmp_path
        self.pristine = str(tmp_path / "pristine")
        table = create(self.pristine, self.sc.kind, "t")
        self.sc.seed(table)
        self.n = 0
        self.reference = self._reference()

    def _copy(self, label: str) -> str:
        self.n += 1
        dst = str(self.tmp / f"{label}-{self.n}")
        shutil.copytree(self.pristine, dst)
        return dst

    def _load(self, warehouse: str, io: FaultyFileIO | None = None) -> Table:
        table = FileSystemCatalog(warehouse, file_io=io).load_table(IDENT)
        if self.sc.prepare is not None:
            healthy = FileSystemCatalog(warehouse).load_table(IDENT)
            table._prepared = self.sc.prepare(healthy)  # type: ignore[attr-defined]
        return table

    def _outcome(self, warehouse: str) -> dict[str, Any]:
        table = FileSystemCatalog(warehouse).load_table(IDENT)
        return {"rows": read_rows(table), "snapshots": [s.id for s in table.snapshots()],
                "schemas": SchemaManager(table.store.file_io, table.store.paths).list_ids()}

    def _reference(self) -> dict[str, Any]:
        wh = self._copy("reference")
        self.sc.op(self._load(wh))
        return self._outcome(wh)

    def run(self, *, ops: frozenset[str] = ALL_OPS, when: str = "before", crash: bool = False,
            limit: int = 400) -> dict[str, int]:
        stats = {"faults": 0, "failed": 0, "absorbed": 0}
        for n in range(1, limit + 1):
            wh = self._copy(f"{when}{'-crash' if crash else ''}")
            io = FaultyFileIO.on_local_disk()
            table = self._load(wh, io)
            root = table.path
            before_state = snapshot_state(table)
            before_rows = read_rows(FileSystemCatalog(wh).load_table(IDENT))
            before_visible = visible_data_files(table)
            before_tree = set(tree(root))
            prepared_files = [table.store.data_file_path(m.partition, m.bucket, f.file_name)
                              for m in getattr(table, "_prepared", []) for f in m.new_files]
            io.arm(n, ops=ops, when=when, crash=crash)
            error: BaseException | None = None
            try:
                self.sc.op(table)
            except (Exception, SimulatedCrash) as e:  # noqa: B902 - SimulatedCrash is the crash we injected
                error = e
            fired = io.fired
            io.disarm()
            if fired is None:
                assert error is None, error
                assert self._outcome(wh) == self.reference
                stats["calls"] = n - 1
                return stats
            stats["faults"] += 1
            where = f"fault at call {n}: {fired}"
            healthy = FileSystemCatalog(wh).load_table(IDENT)
            assert missing_files(healthy) == [], where
            if error is None:  # the operation got through despite the fault (retried, or a quiet delete)
                stats["absorbed"] += 1
                got = self._outcome(wh)
                assert got["rows"] == self.reference["rows"], where
                # a write whose automatic compaction failed commits the data alone (one snapshot less)
                ref_ids = self.reference["snapshots"]
                assert got["snapshots"] == ref_ids or (not self.sc.expiring
                                                       and got["snapshots"] == ref_ids[: len(got["snapshots"])]), where
                continue
            stats["failed"] += 1
            if not crash:
                assert isinstance(error, (TableFormatError, OSError)), (where, repr(error))
                assert _names_a_file(error, root), (where, repr(error))
            before_ids = before_state_ids(before_state)
            new_ids = {s.id for s in healthy.snapshots()} - set(before_ids)
            landed = bool(new_ids)
            if landed:  # only a crash may leave a published snapshot behind an error
                assert crash, (where, repr(error))
                assert read_rows(healthy) == self.reference["rows"], where
            if landed:
                pass  # killed after the snapshot was published: the operation took effect
            elif self.sc.expiring:
                # expiration deletes snapshot files first: what is left is a suffix of the snapshots, complete
                assert read_rows(healthy) == before_rows, where
                after = [s.id for s in healthy.snapshots()]
                assert after == before_ids[-len(after):], where
            else:
                state = snapshot_state(healthy)
                if self.sc.schema_may_change:
                    state = {k: v for k, v in state.items() if not k.startswith("schema/")}
                    before_cmp = {k: v for k, v in before_state.items() if not k.startswith("schema/")}
                else:
                    before_cmp = before_state
                assert state == before_cmp, where
                assert read_rows(healthy) == before_rows, where
                assert visible_data_files(healthy) == before_visible, where
                for p in prepared_files:  # a failed commit keeps the files it was given
                    assert os.path.exists(p), (where, p)
            # and a retry on a healthy filesystem does the job (a two-phase commit retries with the same messages:
            # its files are not orphans, so that retry comes before the orphan removal)
            if not landed and self.sc.prepare is not None:
                retry = FileSystemCatalog(wh).load_table(IDENT)
                retry._prepared = table._prepared  # type: ignore[attr-defined]
                self.sc.op(retry)
            # leftovers are orphans; removing them restores the directory
            healthy = FileSystemCatalog(wh).load_table(IDENT)
            healthy.maintenance.remove_orphan_files(older_than=dt.timedelta(0), dry_run=False)
            healthy = FileSystemCatalog(wh).load_table(IDENT)
            assert missing_files(healthy) == [], where
            if not landed and not self.sc.expiring and self.sc.prepare is None:
                left = set(tree(root)) - before_tree
                if self.sc.schema_may_change:
                    left = {p for p in left if not p.startswith("schema/schema-")}
                assert left == set(), (where, left)
            if not landed and self.sc.prepare is None:
                self.sc.op(FileSystemCatalog(wh).load_table(IDENT))
            assert self._outcome(wh)["rows"] == self.reference["rows"], where
        raise AssertionError(f"the operation still hits a fault after {limit} calls")


def before_state_ids(state: dict[str, bytes]) -> list[int]:
    return sorted(int(k.split("-")[1]) for k in state if k.startswith("snapshot/snapshot-"))


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_fail_each_call_in_turn(tmp_path: Any, name: str) -> None:
    stats = Sweep(tmp_path, name).run()
    print(name, "before", stats)
    assert stats["failed"] > 0


@pytest.mark.parametrize("name", sorted(QUICK))
def test_lost_reply_of_each_write(tmp_path: Any, name: str) -> None:
    """Each write-like call takes effect and then raises (a timeout after the store did the work)."""
    stats = Sweep(tmp_path, name).run(ops=WRITE_OPS, when="after")
    print(name, "after", stats)


@pytest.mark.parametrize("name", sorted(QUICK))
def test_crash_at_each_call(tmp_path: Any, name: str) -> None:
    """A crash at a read leaves the files a crash at the next write-like call leaves: sweeping those covers all."""
    stats = Sweep(tmp_path, name).run(ops=WRITE_OPS, crash=True)
    print(name, "crash", stats)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(set(SCENARIOS) - QUICK))
@pytest.mark.parametrize("mode", ["after", "crash"])
def test_every_mode_every_scenario(tmp_path: Any, name: str, mode: str) -> None:
    sweep = Sweep(tmp_path, name)
    stats = sweep.run(ops=WRITE_OPS, when="after") if mode == "after" else sweep.run(ops=WRITE_OPS, crash=True)
    print(name, mode, stats)


class _RetriedCreateIO(FaultyFileIO):
    """A store whose create succeeds but reports "already exists" (NFS: a LINK retransmitted after a lost reply)."""

    def try_create(self, path: str, data: bytes) -> bool:
        super().try_create(path, data)
        return False


def test_create_reported_as_existing_but_ours_is_a_success(warehouse: str) -> None:
    table = create(warehouse, "append-unaware")
    write_table(table, rows("append-unaware", [1], 1))
    io = _RetriedCreateIO.on_local_disk()
    flaky = FileSystemCatalog(warehouse, file_io=io).load_table(table.identifier)
    assert write_table(flaky, rows("append-unaware", [2], 2)) == 2
    fresh = FileSystemCatalog(warehouse).load_table(table.identifier)
    assert [r[0] for r in read_rows(fresh)] == [1, 2]
    assert missing_files(fresh) == []
