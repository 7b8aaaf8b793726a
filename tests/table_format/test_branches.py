"""Branches: Paimon's branch/branch-<name>/ layout, create / read / write / fast-forward / delete, and maintenance
that keeps what a branch uses."""

from __future__ import annotations

import datetime as dt
import os
import re

import pyarrow as pa
import pytest

from table_format import BranchDivergedError, BranchError, FileSystemCatalog, SchemaChange, SchemaError, write_table


def _rows(ids: list[int], tag: str) -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int32()), "v": pa.array([f"{tag}{i}" for i in ids], pa.string())})


def _ids(table) -> list[int]:
    return sorted(table.scan().to_arrow().column("id").to_pylist())


@pytest.fixture
def table(warehouse: str):
    cat = FileSystemCatalog(warehouse)
    cat.create_database("db")
    t = cat.create_table("db.t", _rows([], "").schema, primary_keys=["id"], options={"bucket": "1"})
    write_table(t, _rows([1, 2], "a"))
    write_table(t, _rows([3], "b"))
    return t


def test_layout_and_read_write_on_branch(table, warehouse: str) -> None:
    table.create_tag("t2", snapshot_id=2)
    table.create_branch("dev", tag="t2")
    root = table.path
    assert sorted(os.listdir(f"{root}/branch/branch-dev")) == ["schema", "snapshot", "tag"]
    assert os.listdir(f"{root}/branch/branch-dev/snapshot") == ["snapshot-2"]
    assert os.listdir(f"{root}/branch/branch-dev/tag") == ["tag-t2"]
    assert table.branches() == ["dev"]

    dev = table.branch("dev")
    assert dev.current_branch == "dev" and dev.identifier == "db.t$branch_dev"
    assert _ids(dev) == [1, 2, 3]
    assert write_table(dev, _rows([10], "dev")) == 3
    assert _ids(dev) == [1, 2, 3, 10]
    assert _ids(table) == [1, 2, 3]  # main unchanged
    assert table.latest_snapshot().id == 2
    assert os.listdir(f"{root}/branch/branch-dev/snapshot") != []
    assert not any(n.startswith("data-") for _, _, fs in os.walk(f"{root}/branch") for n in fs)  # data at the root
    by_name = FileSystemCatalog(warehouse).load_table("db.t$branch_dev")
    assert _ids(by_name) == [1, 2, 3, 10] and by_name.current_branch == "dev"
    assert [s.id for s in dev.snapshots()] == [2, 3]
    assert dev.system_table("snapshots").num_rows == 2


def test_empty_branch_has_latest_schema_and_no_snapshot(table) -> None:
    table.create_branch("empty")
    b = table.branch("empty")
    assert b.latest_snapshot() is None and _ids(b) == []
    assert write_table(b, _rows([7], "e")) == 1  # the branch's own first snapshot
    assert _ids(b) == [7] and _ids(table) == [1, 2, 3]


@pytest.mark.parametrize("name", ["", "main", "12", "a$b", "a/b", " x", ".x"])
def test_bad_names(table, name: str) -> None:
    with pytest.raises(BranchError, match=re.escape(repr(name)) if name else "blank"):
        table.create_branch(name)
    assert table.branches() == []


def test_existing_branch_and_unknown_tag(table) -> None:
    table.create_branch("x")
    with pytest.raises(BranchError, match="'x' already exists"):
        table.create_branch("x", from_latest=True)
    with pytest.raises(BranchError, match="tag 'nope'"):
        table.create_branch("y", tag="nope")
    with pytest.raises(BranchError, match="'y' does not exist"):
        table.branch("y")
    with pytest.raises(BranchError, match="'y' does not exist"):
        table.delete_branch("y")
    with pytest.raises(SchemaError, match="branch_"):
        FileSystemCatalog(os.path.dirname(os.path.dirname(table.path))).load_table("db.t$snapshots")


def test_fast_forward_and_keeper_tag(table) -> None:
    table.create_branch("wap", from_latest=True)
    assert table.tags() == {"branch-wap-base": 2}
    wap = table.branch("wap")
    write_table(wap, _rows([4], "w"))
    assert table.fast_forward("wap") == 3
    assert _ids(table) == [1, 2, 3, 4] and table.latest_snapshot().id == 3
    assert table.tags() == {}  # the keeper tag goes with the publication
    write_table(table, _rows([5], "m"))  # main goes on from the branch's snapshot
    assert _ids(table) == [1, 2, 3, 4, 5]
    table.delete_branch("wap")
    assert table.branches() == [] and _ids(table) == [1, 2, 3, 4, 5]


def test_fast_forward_refused_after_main_moved(table) -> None:
    table.create_branch("wap", from_latest=True)
    write_table(table.branch("wap"), _rows([4], "w"))
    write_table(table, _rows([9], "m"))  # main: snapshot 3 of its own
    with pytest.raises(BranchDivergedError, match=r"latest snapshot is 3 but the branch starts at snapshot 2"):
        table.fast_forward("wap")
    assert _ids(table) == [1, 2, 3, 9]
    table.fast_forward("wap", force=True)
    assert _ids(table) == [1, 2, 3, 4]


def test_expire_and_rollback_keep_branch_files(table) -> None:
    table.create_branch("keep", from_latest=True)
    table.delete_tag("branch-keep-base")  # no tag protects the branch point any more
    for i in range(4):
        table.maintenance.compact(full=True)
        write_table(table, _rows([20 + i], "m"))
    res = table.maintenance.expire_snapshots(retain_min=1, retain_max=1, older_than=dt.timedelta(0), dry_run=False)
    assert res.expired_snapshots
    keep = table.branch("keep")
    assert _ids(keep) == [1, 2, 3]
    table.rollback_to(snapshot_id=table.latest_snapshot().id)
    res = table.maintenance.remove_orphan_files(older_than=dt.timedelta(0), dry_run=False)
    assert _ids(keep) == [1, 2, 3]
    # a branch's own expiration keeps what main uses
    for i in range(3):
        write_table(keep, _rows([30 + i], "k"))
        keep.maintenance.compact(full=True)
    keep.maintenance.expire_snapshots(retain_min=1, retain_max=1, older_than=dt.timedelta(0), dry_run=False)
    assert _ids(table) == [1, 2, 3, 20, 21, 22, 23]
    assert _ids(keep) == [1, 2, 3, 30, 31, 32]


def test_catalog_table_exists_for_branches(table, warehouse: str) -> None:
    cat = FileSystemCatalog(warehouse)
    assert not cat.table_exists("db.t$branch_dev")
    table.create_branch("dev")
    assert cat.table_exists("db.t$branch_dev") and cat.table_exists("db.t")


def test_fast_forward_refused_after_main_schema_change(table, warehouse: str) -> None:
    table.create_branch("wap", from_latest=True)
    wap = table.branch("wap")
    FileSystemCatalog(warehouse).alter_table("db.t$branch_wap", [SchemaChange.add_column("b_col", pa.int32())])
    FileSystemCatalog(warehouse).alter_table("db.t", [SchemaChange.add_column("m_col", pa.string())])
    write_table(wap.refresh(), _rows([8], "w").append_column("b_col", pa.array([1], pa.int32())))
    with pytest.raises(BranchDivergedError, match="schema 1"):
        table.fast_forward("wap")
    assert table.refresh().arrow_schema.names == ["id", "v", "m_col"]
