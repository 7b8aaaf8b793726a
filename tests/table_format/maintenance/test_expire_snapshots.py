"""Snapshot expiration on tables we write: which snapshots go (retain min/max, limit, time, consumers), which files
go with them (exactly the unreferenced ones), tags protecting files, dry runs, hints and argument errors."""

from __future__ import annotations

import datetime as dt
import json
import os
import time
from typing import Any

import pyarrow as pa
import pytest
from maintenance_helpers import (
    assert_no_orphans,
    assert_nothing_missing,
    hint,
    references,
    snapshot_ids,
    tree,
    tree_with_content,
    write_consumer,
)

from table_format import FileSystemCatalog, OptionError, Table, UnsupportedFeatureError, write_table

SCHEMA = pa.schema([("dt", pa.string(), False), ("id", pa.int64(), False), ("v", pa.string())])
NOW = dt.timedelta(0)  # older_than=NOW: time never protects a snapshot


def new_table(warehouse: str, *, pk: bool = True, options: dict[str, str] | None = None, name: str = "t") -> Table:
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db", exist_ok=True)
    # write-only: no automatic COMPACT snapshots, so snapshot ids follow the writes one to one
    opts = {"bucket": "2", "write-only": "true"} if pk else {"bucket": "-1"}
    opts.update(options or {})
    return catalog.create_table(f"db.{name}", SCHEMA, primary_keys=("dt", "id") if pk else (),
                                partition_keys=("dt",), options=opts)


def rows(ids: list[int], v: str, dt_: str = "a") -> pa.Table:
    return pa.table({"dt": [dt_] * len(ids), "id": pa.array(ids, pa.int64()), "v": [f"{v}{i}" for i in ids]},
                    schema=SCHEMA)


def contents(table: Table, **kw: Any) -> list[tuple[Any, ...]]:
    t = table.scan(**kw).to_arrow()
    return sorted(zip(t.column("dt").to_pylist(), t.column("id").to_pylist(), t.column("v").to_pylist(),
                      strict=True))


def history(table: Table, n: int = 8) -> dict[int, list[tuple[Any, ...]]]:
    """n commits: upserts into two partitions and one partition overwrite; the contents after each."""
    states: dict[int, list[tuple[Any, ...]]] = {}
    for i in range(n):
        if i % 4 == 3:
            sid = write_table(table, rows([i], f"o{i}-", "b"), mode="overwrite", overwrite_partitions=[{"dt": "b"}])
        else:
            sid = write_table(table, rows([i, i + 1, 0], f"v{i}-", "ab"[i % 2]))
        assert sid is not None
        states[sid] = contents(table)
    return states


def assert_states(table: Table, states: dict[int, list[tuple[Any, ...]]]) -> None:
    ids = snapshot_ids(table)
    assert ids == list(range(ids[0], ids[-1] + 1))
    for sid in ids:
        assert contents(table, snapshot_id=sid) == states[sid], f"snapshot {sid}"
    assert contents(table) == states[ids[-1]]


@pytest.mark.parametrize("pk", [True, False], ids=["pk", "append"])
def test_retain_min_keeps_the_newest_and_deletes_exactly_the_unused_files(warehouse: str, pk: bool) -> None:
    table = new_table(warehouse, pk=pk)
    states = history(table)
    before = tree(table.path)
    result = table.maintenance.expire_snapshots(retain_min=3, older_than=NOW, dry_run=False)
    assert result.expired_snapshots == (1, 2, 3, 4, 5)
    assert result.earliest_snapshot_id == 6 and not result.dry_run
    assert snapshot_ids(table) == [6, 7, 8]
    assert hint(table, "EARLIEST") == "6"
    assert_states(table, states)
    after = tree(table.path)
    deleted = {os.path.relpath(p, table.path) for p in result.deleted_files}
    assert deleted == before - after  # the result reports exactly what went
    assert {f"snapshot/snapshot-{i}" for i in range(1, 6)} <= deleted
    assert_no_orphans(table)  # and nothing unreferenced is left behind


def test_dry_run_changes_nothing_and_reports_the_same_files(warehouse: str) -> None:
    table = new_table(warehouse)
    history(table, 6)
    before = tree_with_content(table.path)
    dry = table.maintenance.expire_snapshots(retain_min=2, older_than=NOW)  # dry_run defaults to True
    assert dry.dry_run and dry.expired_snapshots == (1, 2, 3, 4)
    assert tree_with_content(table.path) == before
    real = table.maintenance.expire_snapshots(retain_min=2, older_than=NOW, dry_run=False)
    assert real.expired_snapshots == dry.expired_snapshots
    assert sorted(real.deleted_files) == sorted(dry.deleted_files)


def test_retain_max_and_limit(warehouse: str) -> None:
    table = new_table(warehouse)
    states = history(table, 9)
    # retain_max forces expiry even if young (time limit of 1 day protects everything else)
    r = table.maintenance.expire_snapshots(retain_min=1, retain_max=6, older_than=dt.timedelta(days=1),
                                           dry_run=False)
    assert r.expired_snapshots == (1, 2, 3)
    # the limit bounds one run
    r = table.maintenance.expire_snapshots(retain_min=1, older_than=NOW, max_deletes=2, dry_run=False)
    assert r.expired_snapshots == (4, 5)
    r = table.maintenance.expire_snapshots(retain_min=1, older_than=NOW, max_deletes=0, dry_run=False)
    assert r.expired_snapshots == ()
    assert_states(table, states)
    assert_no_orphans(table)


def test_defaults_come_from_table_options(warehouse: str) -> None:
    table = new_table(warehouse, options={"snapshot.num-retained.min": "2", "snapshot.time-retained": "1 ms",
                                          "snapshot.expire.limit": "3"})
    states = history(table, 7)
    time.sleep(0.01)
    assert table.maintenance.expire_snapshots(dry_run=False).expired_snapshots == (1, 2, 3)
    assert table.maintenance.expire_snapshots(dry_run=False).expired_snapshots == (4, 5)
    assert table.maintenance.expire_snapshots(dry_run=False).expired_snapshots == ()
    assert_states(table, states)
    # the default time-retained (1 h) keeps young snapshots, the default num-retained.min is 10
    other = new_table(warehouse, name="u")
    history(other, 12)
    assert other.maintenance.expire_snapshots(dry_run=False).expired_snapshots == ()
    assert other.maintenance.expire_snapshots(older_than=NOW, dry_run=False).expired_snapshots == (1, 2)


def test_time_rule_looks_at_the_successor(warehouse: str) -> None:
    table = new_table(warehouse)
    history(table, 3)
    time.sleep(0.05)
    cutoff = dt.datetime.now()
    time.sleep(0.05)
    history(table, 2)  # snapshots 4 and 5 are younger than the cut-off
    # snapshot 3 is older than the cut-off but its successor is not: it stays (Paimon >= 1.0 rule)
    r = table.maintenance.expire_snapshots(retain_min=1, older_than=cutoff, dry_run=False)
    assert r.expired_snapshots == (1, 2)
    r = table.maintenance.expire_snapshots(retain_min=1, older_than=dt.timedelta(days=1), dry_run=False)
    assert r.expired_snapshots == ()
    aware = dt.datetime.now(dt.timezone.utc) + dt.timedelta(seconds=1)
    assert table.maintenance.expire_snapshots(retain_min=1, older_than=aware, dry_run=False).expired_snapshots == (
        3, 4)


def test_tags_protect_their_files(warehouse: str) -> None:
    table = new_table(warehouse)
    states = history(table, 8)
    table.create_tag("two", snapshot_id=2)
    table.create_tag("five", snapshot_id=5)
    table.maintenance.expire_snapshots(retain_min=1, older_than=NOW, dry_run=False)
    assert snapshot_ids(table) == [8]
    assert contents(table, tag="two") == states[2]
    assert contents(table, tag="five") == states[5]
    assert contents(table) == states[8]
    assert_no_orphans(table)
    # deleting a tag of an expired snapshot deletes what only it used
    before = tree(table.path)
    result = table.delete_tag("two")
    assert set(before - tree(table.path)) == {os.path.relpath(p, table.path) for p in result.deleted_files}
    assert len(result.deleted_files) > 1
    assert contents(table, tag="five") == states[5]
    assert_no_orphans(table)
    table.delete_tag("five")
    assert contents(table) == states[8]
    assert_no_orphans(table)


def test_consumers_protect_snapshots(warehouse: str) -> None:
    table = new_table(warehouse)
    states = history(table, 8)
    write_consumer(table, "reader-1", 4)
    write_consumer(table, "reader-2", 6)
    r = table.maintenance.expire_snapshots(retain_min=1, older_than=NOW, dry_run=False)
    assert r.expired_snapshots == (1, 2, 3)
    assert_states(table, states)
    os.remove(os.path.join(table.path, "consumer", "consumer-reader-1"))
    assert table.maintenance.expire_snapshots(retain_min=1, older_than=NOW, dry_run=False).expired_snapshots == (
        4, 5)
    assert_nothing_missing(table)


def test_nothing_to_expire(warehouse: str) -> None:
    table = new_table(warehouse)
    r = table.maintenance.expire_snapshots(retain_min=1, older_than=NOW, dry_run=False)
    assert r.expired_snapshots == () and r.earliest_snapshot_id is None
    history(table, 2)
    os.remove(os.path.join(table.path, "snapshot", "EARLIEST"))
    r = table.maintenance.expire_snapshots(retain_min=5, older_than=NOW, dry_run=False)
    assert r.expired_snapshots == () and r.deleted_files == () and r.earliest_snapshot_id == 1
    assert hint(table, "EARLIEST") == "1"  # written when missing, like Java


def test_repeated_and_interrupted_expiration(warehouse: str) -> None:
    table = new_table(warehouse)
    states = history(table, 8)
    table.maintenance.expire_snapshots(retain_min=6, older_than=NOW, dry_run=False)
    # simulate a run that died after deleting some metadata of snapshot 3 but not the snapshot file
    plan = table.maintenance.expire_snapshots(retain_min=5, older_than=NOW).deleted_files
    manifests = [p for p in plan if "/manifest/" in p]
    os.remove(manifests[0])
    r = table.maintenance.expire_snapshots(retain_min=3, older_than=NOW, dry_run=False)
    assert r.expired_snapshots == (3, 4, 5)
    assert_states(table, states)
    assert_no_orphans(table)


def test_dynamic_bucket_index_files_expire(warehouse: str) -> None:
    table = new_table(warehouse, options={"bucket": "-1", "dynamic-bucket.target-row-num": "2"})
    states = history(table, 8)
    index_before = {p for p in tree(table.path) if p.startswith("index/")}
    assert len(index_before) > 2
    table.maintenance.expire_snapshots(retain_min=1, older_than=NOW, dry_run=False)
    index_after = {p for p in tree(table.path) if p.startswith("index/")}
    assert index_after < index_before
    assert index_after == {p for p in references(table).needed if p.startswith("index/")}
    assert_states(table, states)
    assert_no_orphans(table)
    write_table(table, rows([100, 1], "after"))
    expected = {(d, i): v for d, i, v in states[8]} | {("a", 100): "after100", ("a", 1): "after1"}
    assert contents(table) == sorted((d, i, v) for (d, i), v in expected.items())


def test_clean_empty_directories_option(warehouse: str) -> None:
    table = new_table(warehouse, options={"snapshot.clean-empty-directories": "true"})
    write_table(table, rows([1, 2], "x", "gone"))
    write_table(table, rows([1], "y", "kept"))
    write_table(table, rows([], "z", "gone"), mode="overwrite", overwrite_partitions=[{"dt": "gone"}])
    assert os.path.isdir(os.path.join(table.path, "dt=gone"))
    time.sleep(0.01)  # older_than=NOW keeps a successor committed in this very millisecond, as Java does
    table.maintenance.expire_snapshots(retain_min=1, older_than=NOW, dry_run=False)
    assert not os.path.exists(os.path.join(table.path, "dt=gone"))
    assert os.path.isdir(os.path.join(table.path, "dt=kept"))


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"retain_min": 0}, "retain_min"),
        ({"retain_min": 5, "retain_max": 3}, "retain_max"),
        ({"max_deletes": -1}, "max_deletes"),
        ({"older_than": dt.timedelta(seconds=-1)}, "older_than"),
        ({"older_than": "yesterday"}, "older_than"),
        ({"retain_min": "3"}, "retain_min"),
    ],
)
def test_bad_arguments(warehouse: str, kwargs: dict[str, Any], match: str) -> None:
    table = new_table(warehouse)
    with pytest.raises(OptionError, match=match):
        table.maintenance.expire_snapshots(**kwargs)


def test_decoupled_changelog_lifecycle_is_refused(warehouse: str) -> None:
    table = new_table(warehouse, options={"changelog.num-retained.min": "20"})
    history(table, 2)
    with pytest.raises(UnsupportedFeatureError, match="changelog.num-retained.min"):
        table.maintenance.expire_snapshots(retain_min=1, older_than=NOW)


def test_consumer_api_registers_advances_and_unregisters(warehouse: str) -> None:
    table = new_table(warehouse)
    states = history(table, 6)
    assert table.consumers() == [] and table.consumer("etl") is None
    table.set_consumer("etl", next_snapshot=3)
    assert [(c.consumer_id, c.next_snapshot) for c in table.consumers()] == [("etl", 3)]
    with open(os.path.join(table.path, "consumer", "consumer-etl")) as f:  # Java's file and key
        assert json.load(f) == {"nextSnapshot": 3}
    assert table.maintenance.expire_snapshots(retain_min=1, older_than=NOW, dry_run=False).expired_snapshots == (1, 2)
    table.set_consumer("etl", next_snapshot=5)
    assert table.consumer("etl").next_snapshot == 5
    assert table.maintenance.expire_snapshots(retain_min=1, older_than=NOW, dry_run=False).expired_snapshots == (3, 4)
    assert_states(table, states)
    assert table.delete_consumer("etl") and not table.delete_consumer("etl")
    assert table.consumers() == []


def test_a_consumer_counts_unread_row_changes_not_compactions(warehouse: str) -> None:
    """Consumer.unread: the APPEND and OVERWRITE snapshots from the one a consumer reads next (after the one it read
    last, for the Dagster inputs' ``dagster-`` consumers); a compaction changes no row, so it leaves none unread."""
    table = new_table(warehouse)
    write_table(table, rows([1, 2], "a"))  # 1 APPEND
    write_table(table, rows([2, 3], "b"))  # 2 APPEND
    table.maintenance.compact(full=True)  # 3 COMPACT
    table = table.refresh()
    kinds = [s.commit_kind.value for s in table.snapshots()]
    assert kinds == ["APPEND", "APPEND", "COMPACT"]
    paimon, dagster = table.set_consumer("etl", next_snapshot=3), table.set_consumer("dagster-db.x", next_snapshot=2)
    assert not paimon.pins_last_read and dagster.pins_last_read
    assert paimon.unread(table.snapshots()) == 0 and dagster.unread(table.snapshots()) == 0
    write_table(table, rows([9], "o", "b"), mode="overwrite", overwrite_partitions=[{"dt": "b"}])  # 4 OVERWRITE
    assert [c.unread(table.snapshots()) for c in table.consumers()] == [1, 1]  # dagster-db.x, etl
    assert table.set_consumer("etl", next_snapshot=1).unread(table.snapshots()) == 3  # 1, 2 and 4


@pytest.mark.parametrize("bad", ["", "a/b", "../x", "a b"])
def test_consumer_id_is_checked(warehouse: str, bad: str) -> None:
    table = new_table(warehouse)
    with pytest.raises(OptionError, match="consumer id"):
        table.set_consumer(bad, next_snapshot=1)
    assert not os.path.exists(os.path.join(table.path, "consumer"))


def test_consumer_next_snapshot_is_checked(warehouse: str) -> None:
    table = new_table(warehouse)
    with pytest.raises(OptionError, match="next_snapshot"):
        table.set_consumer("etl", next_snapshot=0)
