"""Tags (create, list, delete, time travel) and rollback (to a snapshot, to a tag, to a tag of an expired snapshot),
on tables we write."""

from __future__ import annotations

import datetime as dt
import json
import os

import pytest
from maintenance_helpers import assert_no_orphans, assert_nothing_missing, hint, snapshot_ids, tree
from test_expire_snapshots import NOW, assert_states, contents, history, new_table, rows

from table_format import SchemaError, SnapshotNotFoundError, TableFormatError, write_table
from table_format.errors import TagAlreadyExistsError
from table_format.meta.snapshot import Snapshot, tag_from_json


def test_create_list_and_read_tags(warehouse: str) -> None:
    table = new_table(warehouse)
    states = history(table, 4)
    assert table.tags() == {}
    assert table.create_tag("latest") == 4
    assert table.create_tag("2024-01-01 10", snapshot_id=2) == 2
    assert table.create_tag("v1.0", snapshot_id=2) == 2
    assert table.tags() == {"2024-01-01 10": 2, "v1.0": 2, "latest": 4}
    assert contents(table, tag="v1.0") == states[2]
    assert contents(table, tag="latest") == states[4]
    # without a retention the tag file is the snapshot's JSON, byte for byte (what Java 0.9 writes)
    with open(os.path.join(table.path, "tag", "tag-latest"), "rb") as f:
        tag_bytes = f.read()
    with open(os.path.join(table.path, "snapshot", "snapshot-4"), "rb") as f:
        assert tag_bytes == f.read()
    system = table.system_table("tags").to_pylist()
    assert {(r["tag_name"], r["snapshot_id"]) for r in system} == {("2024-01-01 10", 2), ("v1.0", 2), ("latest", 4)}


def test_tag_with_time_retained(warehouse: str) -> None:
    table = new_table(warehouse)
    history(table, 2)
    table.create_tag("kept", time_retained=dt.timedelta(days=2, seconds=5))
    with open(os.path.join(table.path, "tag", "tag-kept")) as f:
        text = f.read()
    tag = tag_from_json(text)
    with open(os.path.join(table.path, "snapshot", "snapshot-2")) as f:
        assert tag.snapshot == Snapshot.from_json(f.read())
    assert tag.time_retained == dt.timedelta(days=2, seconds=5)
    assert '"tagTimeRetained" : 172805.000000000' in text
    assert abs(tag.create_time - dt.datetime.now()) < dt.timedelta(minutes=1)
    # the table option gives the default
    other = new_table(warehouse, name="u", options={"tag.default-time-retained": "1 h"})
    history(other, 1)
    other.create_tag("t")
    with open(os.path.join(other.path, "tag", "tag-t")) as f:
        assert json.loads(f.read())["tagTimeRetained"] == 3600.0


@pytest.mark.parametrize("name", ["", "  ", "a/b", "..", ".hidden", " x", "x\n", "a\\b", "x" * 201])
def test_bad_tag_names(warehouse: str, name: str) -> None:
    table = new_table(warehouse)
    history(table, 1)
    with pytest.raises(SchemaError, match="tag name"):
        table.create_tag(name)
    assert not os.path.exists(os.path.join(table.path, "tag")) or not os.listdir(os.path.join(table.path, "tag"))


def test_tag_errors(warehouse: str) -> None:
    table = new_table(warehouse)
    with pytest.raises(SnapshotNotFoundError, match="no snapshot"):
        table.create_tag("t")
    history(table, 3)
    table.create_tag("t", snapshot_id=1)
    with pytest.raises(TagAlreadyExistsError, match="'t' already exists"):
        table.create_tag("t", snapshot_id=1)
    with pytest.raises(TagAlreadyExistsError):
        table.create_tag("t")
    with pytest.raises(SnapshotNotFoundError, match="snapshot 9"):
        table.create_tag("u", snapshot_id=9)
    with pytest.raises(SnapshotNotFoundError, match="'nope'"):
        table.delete_tag("nope")
    with pytest.raises(SnapshotNotFoundError, match="'nope'"):
        table.rollback_to(tag="nope")
    with pytest.raises(SnapshotNotFoundError, match="rollback snapshot 7"):
        table.rollback_to(snapshot_id=7)
    with pytest.raises(SchemaError, match="exactly one"):
        table.rollback_to()
    with pytest.raises(SchemaError, match="exactly one"):
        table.rollback_to(snapshot_id=1, tag="t")
    assert isinstance(TagAlreadyExistsError("x"), TableFormatError)


def test_tag_of_an_expired_snapshot_from_another_tag(warehouse: str) -> None:
    table = new_table(warehouse)
    states = history(table, 5)
    table.create_tag("first", snapshot_id=2)
    table.maintenance.expire_snapshots(retain_min=1, older_than=NOW, dry_run=False)
    assert table.create_tag("second", snapshot_id=2) == 2  # AbstractFileStoreTable.findSnapshot: via the tag
    table.delete_tag("first")  # another tag of the same snapshot: no file goes
    assert contents(table, tag="second") == states[2]
    assert_nothing_missing(table)
    table.delete_tag("second")
    assert table.tags() == {}
    assert_no_orphans(table)


def test_delete_tag_of_a_live_snapshot_only_deletes_the_tag_file(warehouse: str) -> None:
    table = new_table(warehouse)
    history(table, 3)
    table.create_tag("t", snapshot_id=2)
    before = tree(table.path)
    result = table.delete_tag("t")
    assert result.deleted_files == (os.path.join(table.path, "tag", "tag-t"),)
    assert before - tree(table.path) == {"tag/tag-t"}


def test_rollback_to_snapshot_then_write(warehouse: str) -> None:
    table = new_table(warehouse)
    states = history(table, 8)
    table.create_tag("t3", snapshot_id=3)
    table.create_tag("t6", snapshot_id=6)
    result = table.rollback_to(snapshot_id=4)
    assert result.snapshot_id == 4
    assert result.removed_snapshots == (5, 6, 7, 8)
    assert result.removed_tags == ("t6",)
    assert snapshot_ids(table) == [1, 2, 3, 4]
    assert hint(table, "LATEST") == "4"
    assert table.tags() == {"t3": 3}
    assert contents(table) == states[4]
    assert_states(table, {k: v for k, v in states.items() if k <= 4})
    assert_no_orphans(table)  # every file the removed snapshots added went with them
    sid = write_table(table, rows([50], "new"))
    assert sid == 5
    assert contents(table) == sorted(states[4] + [("a", 50, "new50")])
    assert contents(table, tag="t3") == states[3]


def test_rollback_after_compaction_keeps_upgraded_files(warehouse: str) -> None:
    """A compaction may move a file to another level without rewriting it (DELETE + ADD of the same file in one
    delta). Paimon 0.9's RollbackHelper deletes every file ADDed after the target, including such a file that the
    target still reads; we keep files live in the target."""
    table = new_table(warehouse)
    states = history(table, 3)
    compact = getattr(table.maintenance, "compact", None)
    if compact is None:
        pytest.skip("no compaction in this build")
    cid = compact(full=True).snapshot_id
    assert cid == 4
    table.rollback_to(snapshot_id=3)
    assert contents(table) == states[3]
    assert_no_orphans(table)


def test_rollback_to_tag_of_expired_snapshot(warehouse: str) -> None:
    table = new_table(warehouse)
    states = history(table, 8)
    table.create_tag("two", snapshot_id=2)
    table.create_tag("seven", snapshot_id=7)
    table.maintenance.expire_snapshots(retain_min=2, older_than=NOW, dry_run=False)
    assert snapshot_ids(table) == [7, 8]
    result = table.rollback_to(tag="two")
    assert result.removed_snapshots == (7, 8) and result.removed_tags == ("seven",)
    assert snapshot_ids(table) == [2]
    assert hint(table, "EARLIEST") == "2" and hint(table, "LATEST") == "2"
    assert contents(table) == states[2] == contents(table, tag="two")
    assert_no_orphans(table)
    assert write_table(table, rows([9], "w")) == 3
    assert contents(table) == sorted(states[2] + [("a", 9, "w9")])
    # the restored snapshot and the tag expire/delete normally afterwards
    table.maintenance.expire_snapshots(retain_min=1, older_than=NOW, dry_run=False)
    table.delete_tag("two")
    assert contents(table) == sorted(states[2] + [("a", 9, "w9")])
    assert_no_orphans(table)


def test_rollback_to_latest_and_to_tag_of_live_snapshot(warehouse: str) -> None:
    table = new_table(warehouse)
    states = history(table, 4)
    before = tree(table.path)
    assert table.rollback_to(snapshot_id=4).deleted_files == ()
    assert tree(table.path) == before
    table.create_tag("t", snapshot_id=3)
    result = table.rollback_to(tag="t")
    assert result.removed_snapshots == (4,) and result.removed_tags == ()
    assert contents(table) == states[3]
    assert table.tags() == {"t": 3}
    assert_no_orphans(table)
