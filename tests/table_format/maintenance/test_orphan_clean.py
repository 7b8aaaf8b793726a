"""Orphan-file removal: unreferenced files in every kind of directory go (only when old enough), referenced and
metadata files never do, dry runs change nothing, empty bucket/partition directories are removed."""

from __future__ import annotations

import datetime as dt
import os
import shutil
import time

import pytest
from maintenance_helpers import assert_no_orphans, assert_nothing_missing, tree, tree_with_content
from test_expire_snapshots import NOW, assert_states, contents, history, new_table, rows

from table_format import CorruptMetadataError, OptionError, write_table


def _touch(path: str, data: bytes = b"junk", age: dt.timedelta | None = None) -> str:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)
    if age is not None:
        t = time.time() - age.total_seconds()
        os.utime(path, (t, t))
    return path


def _junk(table_path: str, age: dt.timedelta | None) -> dict[str, bool]:
    """Junk files -> whether orphan removal may delete them."""
    files = {
        "manifest/manifest-00000000-0000-0000-0000-000000000000-0": True,
        "manifest/manifest-list-00000000-0000-0000-0000-000000000000-9": True,
        "manifest/.manifest-x.tmp": True,
        "index/index-00000000-0000-0000-0000-000000000000-0": True,
        "statistics/stat-00000000-0000-0000-0000-000000000000-0": True,
        "dt=a/bucket-0/data-00000000-0000-0000-0000-000000000000-0.parquet": True,
        "dt=a/bucket-1/changelog-00000000-0000-0000-0000-000000000000-0.parquet": True,
        "dt=zz/bucket-0/data-00000000-0000-0000-0000-000000000001-0.parquet": True,
        "snapshot/.snapshot-9.1234.tmp": True,
        "snapshot/stray": True,
        "schema/.schema-1.5678.tmp": True,
        "tag/.tag-x.99.tmp": True,
        # never touched: metadata files, unknown directories and files outside the data layout
        "schema/schema-7": False,
        "tag/tag-junk-looking": False,
        "consumer/consumer-c": False,
        "dt=a/_SUCCESS": False,
        "dt=a/unknown/data-x.parquet": False,
        "README": False,
    }
    for rel in files:
        data = b'{"nextSnapshot": 1}' if rel.startswith("consumer/") else b"junk"
        if rel == "tag/tag-junk-looking":
            continue
        _touch(os.path.join(table_path, rel), data, age)
    return {k: v for k, v in files.items() if k != "tag/tag-junk-looking"}


def test_removes_only_unreferenced_old_files(warehouse: str) -> None:
    table = new_table(warehouse)
    states = history(table, 6)
    table.create_tag("t2", snapshot_id=2)
    time.sleep(0.01)  # every snapshot strictly older than the cut-off (Paimon keeps one of the same ms)
    table.maintenance.expire_snapshots(retain_min=2, older_than=NOW, dry_run=False)
    junk = _junk(table.path, dt.timedelta(days=2))
    young = _touch(os.path.join(table.path, "manifest", "manifest-young-0"))
    before = tree_with_content(table.path)

    dry = table.maintenance.remove_orphan_files(dry_run=True)  # default: older than a day
    assert tree_with_content(table.path) == before
    expected = {k for k, v in junk.items() if v}
    assert {os.path.relpath(p, table.path) for p in dry.orphan_files} == expected
    assert dry.deleted_files == dry.orphan_files and dry.bytes_freed == 4 * len(expected)

    real = table.maintenance.remove_orphan_files(dry_run=False)
    assert sorted(real.deleted_files) == sorted(dry.deleted_files)
    left = tree(table.path)
    assert not expected & left
    assert {k for k, v in junk.items() if not v} <= left
    assert os.path.exists(young)  # too young
    assert not os.path.exists(os.path.join(table.path, "dt=zz"))  # emptied partition directory removed
    assert os.path.exists(os.path.join(table.path, "dt=a", "unknown"))
    assert_states(table, {k: v for k, v in states.items() if k >= 5})
    assert contents(table, tag="t2") == states[2]
    assert_nothing_missing(table)


def test_after_expiration_nothing_unreferenced_is_left(warehouse: str) -> None:
    table = new_table(warehouse, options={"bucket": "-1", "dynamic-bucket.target-row-num": "2"})
    states = history(table, 8)
    table.create_tag("t4", snapshot_id=4)
    # files of a writer that died before committing
    _touch(os.path.join(table.path, "dt=a", "bucket-0", "data-dead-0.parquet"))
    _touch(os.path.join(table.path, "index", "index-dead-0"))
    time.sleep(0.01)  # every snapshot strictly older than the cut-off (Paimon keeps one of the same ms)
    table.maintenance.expire_snapshots(retain_min=3, older_than=NOW, dry_run=False)
    time.sleep(0.01)
    result = table.maintenance.remove_orphan_files(older_than=dt.timedelta(0), dry_run=False)
    assert any(p.endswith("data-dead-0.parquet") for p in result.deleted_files)
    assert_no_orphans(table)
    assert_states(table, {k: v for k, v in states.items() if k >= 6})
    assert contents(table, tag="t4") == states[4]
    # a second run finds nothing
    again = table.maintenance.remove_orphan_files(older_than=dt.timedelta(0), dry_run=False)
    assert again.orphan_files == () and again.bytes_freed == 0


def test_empty_bucket_directories_are_removed(warehouse: str) -> None:
    table = new_table(warehouse)
    write_table(table, rows([1, 2, 3, 4], "x", "p1"))
    write_table(table, rows([5], "y", "p2"))
    write_table(table, rows([], "z", "p1"), mode="overwrite", overwrite_partitions=[{"dt": "p1"}])
    time.sleep(0.01)  # every snapshot strictly older than the cut-off (Paimon keeps one of the same ms)
    table.maintenance.expire_snapshots(retain_min=1, older_than=NOW, dry_run=False)
    assert os.path.isdir(os.path.join(table.path, "dt=p1"))  # expiration leaves empty directories by default
    time.sleep(0.01)
    result = table.maintenance.remove_orphan_files(older_than=dt.timedelta(0), dry_run=False)
    assert not os.path.exists(os.path.join(table.path, "dt=p1"))
    assert os.path.join(table.path, "dt=p1") in result.removed_directories
    assert os.path.isdir(os.path.join(table.path, "dt=p2"))
    assert contents(table) == [("p2", 5, "y5")]


def test_bad_arguments_and_unreadable_metadata(warehouse: str) -> None:
    table = new_table(warehouse)
    history(table, 3)
    with pytest.raises(OptionError, match="future"):
        table.maintenance.remove_orphan_files(older_than=dt.datetime.now() + dt.timedelta(hours=1))
    with pytest.raises(OptionError, match="negative"):
        table.maintenance.remove_orphan_files(older_than=dt.timedelta(seconds=-1))
    with pytest.raises(OptionError, match="timedelta"):
        table.maintenance.remove_orphan_files(older_than=3600)  # type: ignore[arg-type]
    # a snapshot whose manifest list is gone: refuse to guess rather than delete what it may use
    snap = table.snapshots()[1]
    os.remove(os.path.join(table.path, "manifest", snap.delta_manifest_list))
    time.sleep(0.01)
    with pytest.raises(CorruptMetadataError, match="snapshot-2"):
        table.maintenance.remove_orphan_files(older_than=dt.timedelta(0), dry_run=False)


def test_branch_without_schema_aborts(warehouse: str) -> None:
    table = new_table(warehouse)
    history(table, 1)
    os.makedirs(os.path.join(table.path, "branch", "branch-b1", "snapshot"))
    with pytest.raises(CorruptMetadataError, match="branch-b1"):
        table.maintenance.remove_orphan_files(older_than=dt.timedelta(0))


def test_branch_snapshots_and_tags_protect_files(warehouse: str) -> None:
    """Branch metadata lives under branch/branch-<name>/, its data and manifests at the table root."""
    table = new_table(warehouse)
    states = history(table, 4)
    table.create_tag("t2", snapshot_id=2)
    time.sleep(0.01)  # every snapshot strictly older than the cut-off (Paimon keeps one of the same ms)
    table.maintenance.expire_snapshots(retain_min=1, older_than=NOW, dry_run=False)
    branch = os.path.join(table.path, "branch", "branch-b1")
    with open(os.path.join(table.path, "schema", "schema-0"), "rb") as f:
        _touch(os.path.join(branch, "schema", "schema-0"), f.read())
    # move the tag into the branch (by hand: no file is deleted), so that only the branch references snapshot 2
    os.makedirs(os.path.join(branch, "tag"))
    os.rename(os.path.join(table.path, "tag", "tag-t2"), os.path.join(branch, "tag", "tag-t2"))
    time.sleep(0.01)
    table.maintenance.remove_orphan_files(older_than=dt.timedelta(0), dry_run=False)
    os.rename(os.path.join(branch, "tag", "tag-t2"), os.path.join(table.path, "tag", "tag-t2"))
    assert contents(table, tag="t2") == states[2]
    assert contents(table) == states[4]
    shutil.rmtree(os.path.join(table.path, "branch"))
    assert_no_orphans(table)
