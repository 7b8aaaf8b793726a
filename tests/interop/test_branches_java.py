"""Branches both ways with Java Paimon 0.9 and 2.0 (the oracle's `branch` verb; a branch is read and written as the
table `t$branch_<name>`): our branches read by Java, Java's by us, fast-forward both ways, delete, and expiration and
orphan removal with a branch present."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import pyarrow as pa
import pytest

from table_format import FileSystemCatalog, write_table

pytestmark = pytest.mark.interop

FIELDS = [{"name": "id", "type": "INT NOT NULL"}, {"name": "v", "type": "STRING"}]


@pytest.fixture
def oracle(oracle_each: Any) -> Any:
    return oracle_each


def _arrow(ids: list[int], tag: str) -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int32()), "v": pa.array([f"{tag}{i}" for i in ids], pa.string())})


def _ours(warehouse: str, name: str) -> list[dict]:
    t = FileSystemCatalog(warehouse).load_table(f"db.{name}")
    return sorted(t.scan().to_arrow().to_pylist(), key=lambda r: r["id"])


def _java(oracle: Any, warehouse: str, name: str) -> list[dict]:
    return sorted(oracle.read(warehouse, "db", name), key=lambda r: r["id"])


def _java_write(oracle: Any, warehouse: str, name: str, rows: list[list], *, create: bool = False) -> None:
    spec: dict[str, Any] = {"warehouse": warehouse, "database": "db", "table": name,
                            "if_exists": "drop" if create else "append", "batches": [rows]}
    if create:
        spec["schema"] = {"fields": FIELDS, "primary_keys": ["id"], "options": {"bucket": "2"}}
    oracle.write_spec(spec)


def _branch(oracle: Any, warehouse: str, *args: str) -> dict:
    return json.loads(oracle.call(["branch", warehouse, "db", "t", *args]))


def _our_table(warehouse: str):
    cat = FileSystemCatalog(warehouse)
    cat.create_database("db", exist_ok=True)
    t = cat.create_table("db.t", _arrow([], "").schema, primary_keys=["id"], options={"bucket": "2"})
    write_table(t, _arrow([1, 2], "a"))
    write_table(t, _arrow([3], "b"))
    return t


def test_java_reads_our_branch_from_tag(oracle: Any, warehouse: str) -> None:
    t = _our_table(warehouse)
    t.create_tag("t1", snapshot_id=1)
    t.create_branch("dev", tag="t1")
    write_table(t.branch("dev"), _arrow([2, 10], "dev"))
    ours = _ours(warehouse, "t$branch_dev")
    assert [r["id"] for r in ours] == [1, 2, 10] and ours[1]["v"] == "dev2"
    assert _java(oracle, warehouse, "t$branch_dev") == ours
    assert _java(oracle, warehouse, "t") == _ours(warehouse, "t")  # main unchanged
    assert [r["id"] for r in _ours(warehouse, "t")] == [1, 2, 3]
    assert _branch(oracle, warehouse, "list") == {"branches": ["dev"]}
    # Java writes on our branch, we read its commit
    _java_write(oracle, warehouse, "t$branch_dev", [["+I", 11, "java"]])
    assert _ours(warehouse, "t$branch_dev") == _java(oracle, warehouse, "t$branch_dev")
    assert [r["id"] for r in _ours(warehouse, "t$branch_dev")] == [1, 2, 10, 11]
    # compaction and rollback act on the branch only
    dev = FileSystemCatalog(warehouse).load_table("db.t$branch_dev")
    assert dev.maintenance.compact(full=True).snapshot_id is not None
    assert _java(oracle, warehouse, "t$branch_dev") == _ours(warehouse, "t$branch_dev")
    dev.rollback_to(snapshot_id=2)
    assert [r["id"] for r in _java(oracle, warehouse, "t$branch_dev")] == [1, 2, 10]
    assert [r["id"] for r in _java(oracle, warehouse, "t")] == [1, 2, 3]


def test_we_read_java_branches(oracle: Any, warehouse: str) -> None:
    _java_write(oracle, warehouse, "t", [["+I", 1, "a"], ["+I", 2, "b"]], create=True)
    _java_write(oracle, warehouse, "t", [["+I", 3, "c"]])
    FileSystemCatalog(warehouse).load_table("db.t").create_tag("t1", snapshot_id=1)
    _branch(oracle, warehouse, "create", "dev", "t1")
    _branch(oracle, warehouse, "create", "empty")
    _java_write(oracle, warehouse, "t$branch_dev", [["+I", 7, "dev"]])
    t = FileSystemCatalog(warehouse).load_table("db.t")
    assert t.branches() == ["dev", "empty"]
    assert _ours(warehouse, "t$branch_dev") == _java(oracle, warehouse, "t$branch_dev")
    assert [r["id"] for r in _ours(warehouse, "t$branch_dev")] == [1, 2, 7]
    assert t.branch("empty").latest_snapshot() is None
    write_table(t.branch("empty"), _arrow([5], "e"))  # our first snapshot on Java's empty branch
    assert _java(oracle, warehouse, "t$branch_empty") == [{"id": 5, "v": "e5"}]
    # Java fast-forwards main to its branch; we read main as Java does
    _branch(oracle, warehouse, "fast_forward", "dev")
    assert _ours(warehouse, "t") == _java(oracle, warehouse, "t")
    assert [r["id"] for r in _ours(warehouse, "t")] == [1, 2, 7]
    _branch(oracle, warehouse, "delete", "dev")
    assert FileSystemCatalog(warehouse).load_table("db.t").branches() == ["empty"]


def test_our_fast_forward_and_delete_read_by_java(oracle: Any, warehouse: str) -> None:
    t = _our_table(warehouse)
    t.create_branch("wap", from_latest=True)
    write_table(t.branch("wap"), _arrow([4], "w"))
    assert t.fast_forward("wap") == 3
    assert _java(oracle, warehouse, "t") == _ours(warehouse, "t")
    assert [r["id"] for r in _java(oracle, warehouse, "t")] == [1, 2, 3, 4]
    _java_write(oracle, warehouse, "t", [["+I", 5, "java"]])  # Java commits on after our fast-forward
    assert [r["id"] for r in _ours(warehouse, "t")] == [1, 2, 3, 4, 5]
    t.delete_branch("wap")
    assert _branch(oracle, warehouse, "list") == {"branches": []}
    assert t.tags() == {}


def test_expire_and_orphans_with_branch_keep_it_readable_by_java(oracle: Any, warehouse: str) -> None:
    t = _our_table(warehouse)
    t.create_tag("base", snapshot_id=2)
    _branch(oracle, warehouse, "create", "dev", "base")  # Java's branch from our tag
    _java_write(oracle, warehouse, "t$branch_dev", [["+I", 8, "dev"]])
    t.delete_tag("base")  # only the branch's own copy of the tag is left
    for i in range(3):
        write_table(t, _arrow([1, 20 + i], f"m{i}"))
        t.maintenance.compact(full=True)
    expired = t.maintenance.expire_snapshots(retain_min=1, retain_max=1, older_than=dt.timedelta(0), dry_run=False)
    assert 2 in expired.expired_snapshots
    t.maintenance.remove_orphan_files(older_than=dt.timedelta(0), dry_run=False)
    dev = _java(oracle, warehouse, "t$branch_dev")
    assert [r["id"] for r in dev] == [1, 2, 3, 8] and dev == _ours(warehouse, "t$branch_dev")
    assert _java(oracle, warehouse, "t") == _ours(warehouse, "t")
    assert [r["id"] for r in _ours(warehouse, "t")] == [1, 2, 3, 20, 21, 22]
