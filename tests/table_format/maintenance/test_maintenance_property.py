"""Property: random histories of writes (appends, PK upserts and deletes, whole and partition overwrites,
compactions when available), tags, expirations, tag deletions, rollbacks and orphan removals, checked against a
plain Python model of the table contents per snapshot and per tag.

After every operation: the snapshots on disk are exactly the model's, the latest snapshot, every retained
snapshot and every tag read as the model says, and no file a snapshot or tag needs is missing. After an orphan
removal nothing unreferenced is left.
"""

from __future__ import annotations

import datetime as dt
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from maintenance_helpers import assert_no_orphans, assert_nothing_missing, snapshot_ids

from table_format import FileSystemCatalog, Table, write_table

SCHEMA = pa.schema([("dt", pa.string(), False), ("id", pa.int64(), False), ("v", pa.string())])
KINDS = {
    "append": ((), {"bucket": "-1"}),
    # write-only: the model counts one snapshot per write; compaction is its own operation here
    "pk": (("dt", "id"), {"bucket": "2", "write-only": "true"}),
    "pk-dynamic": (("dt", "id"), {"bucket": "-1", "dynamic-bucket.target-row-num": "2", "write-only": "true"}),
}
Row = tuple[str, int, str]

# ---- operations -----------------------------------------------------------------------------------------------

_key = st.tuples(st.sampled_from(["a", "b"]), st.integers(0, 5))
write_op = st.tuples(st.just("write"), st.dictionaries(_key, st.sampled_from(["+I", "+I", "-D"]), min_size=1,
                                                       max_size=5))
overwrite_op = st.tuples(st.just("overwrite"), st.sampled_from([None, "a", "b"]),
                         st.dictionaries(_key, st.just("+I"), max_size=3))
tag_op = st.tuples(st.just("tag"), st.integers(0, 10))
expire_op = st.tuples(st.just("expire"), st.integers(1, 4), st.sampled_from([None, 2, 4, 6]),
                      st.sampled_from([None, 1, 3]))
rollback_op = st.tuples(st.just("rollback"), st.integers(0, 10), st.booleans())
delete_tag_op = st.tuples(st.just("delete_tag"), st.integers(0, 10))
orphan_op = st.tuples(st.just("orphan"))
compact_op = st.tuples(st.just("compact"), st.booleans())
operation = st.one_of(write_op, write_op, overwrite_op, tag_op, expire_op, expire_op, rollback_op, delete_tag_op,
                      orphan_op, compact_op)


@dataclass
class Model:
    pk: bool
    snapshots: dict[int, list[Row]] = field(default_factory=dict)
    tags: dict[str, tuple[int, list[Row]]] = field(default_factory=dict)
    tag_counter: int = 0

    @property
    def latest(self) -> list[Row]:
        return self.snapshots[max(self.snapshots)] if self.snapshots else []

    def after_write(self, changes: dict[tuple[str, int], str], stamp: str, overwrite: object = False) -> list[Row]:
        rows = list(self.latest)
        if overwrite is None:  # whole table
            rows = []
        elif overwrite:
            rows = [r for r in rows if r[0] != overwrite]
        for (d, i), kind in sorted(changes.items()):
            if self.pk:
                rows = [r for r in rows if (r[0], r[1]) != (d, i)]
            if kind == "+I":
                rows.append((d, i, f"{stamp}-{i}"))
        return sorted(rows)


def _data(changes: dict[tuple[str, int], str], stamp: str, pk: bool) -> pa.Table:
    keys = sorted(changes)
    data: dict[str, Any] = {
        "dt": [d for d, _ in keys],
        "id": pa.array([i for _, i in keys], pa.int64()),
        "v": [f"{stamp}-{i}" for _, i in keys],
    }
    table = pa.table(data, schema=SCHEMA)
    if pk:
        table = table.append_column("_row_kind", pa.array([changes[k] for k in keys], pa.string()))
    return table


def _rows(t: pa.Table) -> list[Row]:
    return sorted(zip(t.column("dt").to_pylist(), t.column("id").to_pylist(), t.column("v").to_pylist(),
                      strict=True))


def check(table: Table, model: Model) -> None:
    assert snapshot_ids(table) == sorted(model.snapshots)
    assert _rows(table.scan().to_arrow()) == model.latest
    for sid, rows in model.snapshots.items():
        assert _rows(table.scan(snapshot_id=sid).to_arrow()) == rows, f"snapshot {sid}"
    assert table.tags() == {n: sid for n, (sid, _) in model.tags.items()}
    for name, (_, rows) in model.tags.items():
        assert _rows(table.scan(tag=name).to_arrow()) == rows, f"tag {name}"
    assert_nothing_missing(table)


def apply(table: Table, model: Model, op: tuple[Any, ...], step: int) -> None:
    kind = op[0]
    if kind == "write":
        changes = op[1] if model.pk else dict.fromkeys(op[1], "+I")
        expected = model.after_write(changes, f"w{step}")
        sid = write_table(table, _data(changes, f"w{step}", model.pk))
        _committed(model, sid, expected)
    elif kind == "overwrite":
        partition, changes = op[1], op[2]
        changes = {k: v for k, v in changes.items() if partition is None or k[0] == partition}
        expected = model.after_write(changes, f"o{step}", overwrite=partition if partition else None)
        spec = None if partition is None else [{"dt": partition}]
        sid = write_table(table, _data(changes, f"o{step}", model.pk), mode="overwrite", overwrite_partitions=spec)
        _committed(model, sid, expected)
    elif kind == "compact":
        compact: Callable[..., Any] | None = getattr(table.maintenance, "compact", None)
        if compact is None or not model.pk:
            return
        sid = compact(full=op[1]).snapshot_id
        _committed(model, sid, model.latest)
    elif kind == "tag":
        choices = sorted(set(model.snapshots) | {sid for sid, _ in model.tags.values()})
        if not choices:
            return
        sid = choices[op[1] % len(choices)]
        name = f"t{model.tag_counter}"
        model.tag_counter += 1
        rows = model.snapshots[sid] if sid in model.snapshots else next(
            r for s, r in model.tags.values() if s == sid)
        assert table.create_tag(name, snapshot_id=sid) == sid
        model.tags[name] = (sid, rows)
    elif kind == "delete_tag":
        if not model.tags:
            return
        name = sorted(model.tags)[op[1] % len(model.tags)]
        table.delete_tag(name)
        del model.tags[name]
    elif kind == "expire":
        _, rmin, rmax, limit = op
        rmax = None if rmax is None else max(rmax, rmin)
        ids = sorted(model.snapshots)
        future = dt.datetime.now() + dt.timedelta(seconds=5)  # time never protects
        result = table.maintenance.expire_snapshots(retain_min=rmin, retain_max=rmax, older_than=future,
                                                    max_deletes=limit, dry_run=False)
        expected: tuple[int, ...] = ()
        if ids:
            earliest, latest = ids[0], ids[-1]
            end = min(latest - rmin + 1, earliest + (10 if limit is None else limit))
            expected = tuple(range(earliest, max(earliest, end)))
        assert result.expired_snapshots == expected
        for sid in expected:
            del model.snapshots[sid]
    elif kind == "rollback":
        _, index, to_tag = op
        if to_tag and model.tags:
            name = sorted(model.tags)[index % len(model.tags)]
            target, rows = model.tags[name]
            table.rollback_to(tag=name)
            restored = {target: rows} if target not in model.snapshots else {}
        elif model.snapshots:
            ids = sorted(model.snapshots)
            target = ids[index % len(ids)]
            table.rollback_to(snapshot_id=target)
            restored = {}
        else:
            return
        model.snapshots = {s: r for s, r in model.snapshots.items() if s <= target} | restored
        model.tags = {n: t for n, t in model.tags.items() if t[0] <= target}
    elif kind == "orphan":
        time.sleep(0.005)
        table.maintenance.remove_orphan_files(older_than=dt.timedelta(0), dry_run=False)
        assert_no_orphans(table)
    else:  # pragma: no cover
        raise AssertionError(op)


def _committed(model: Model, sid: int | None, expected: list[Row]) -> None:
    if sid is None:
        assert expected == model.latest
        return
    assert sid == (max(model.snapshots) + 1 if model.snapshots else _next_id(model)), sid
    model.snapshots[sid] = expected


def _next_id(model: Model) -> int:
    # no snapshot in the model: only possible before the first commit
    return 1


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kind=st.sampled_from(sorted(KINDS)), ops=st.lists(operation, min_size=3, max_size=16))
def test_random_histories_match_the_model(kind: str, ops: list[tuple[Any, ...]]) -> None:
    primary_keys, options = KINDS[kind]
    with tempfile.TemporaryDirectory() as warehouse:
        catalog = FileSystemCatalog(warehouse)
        catalog.create_database("db")
        table = catalog.create_table("db.t", SCHEMA, primary_keys=primary_keys, partition_keys=("dt",),
                                     options=options)
        model = Model(pk=bool(primary_keys))
        for step, op in enumerate(ops):
            apply(table, model, op, step)
            check(table, model)
        time.sleep(0.005)
        table.maintenance.remove_orphan_files(older_than=dt.timedelta(0), dry_run=False)
        assert_no_orphans(table)
        check(table, model)
