"""Maintenance commands: what they do, their summaries and JSON shapes, dry runs that change nothing, progress."""

from __future__ import annotations

import datetime as dt
import os
import re

import pytest

from cli.cli_helpers import Run, age_files, tree
from table_format import FileSystemCatalog


def _table(run: Run, name: str = "shop.orders"):  # type: ignore[no-untyped-def]
    return FileSystemCatalog(run.warehouse).load_table(name)


def _rows(run: Run, name: str = "shop.orders") -> list[dict[str, object]]:
    return sorted(_table(run, name).scan().to_arrow().to_pylist(), key=lambda r: str(r))


def test_compact(run: Run) -> None:
    rows = _rows(run)
    doc = run.json("compact", "shop.orders", "--full")
    assert doc == {"table": "shop.orders", "operation": "compact", "snapshot_id": 5,
                   "rewritten_files": doc["rewritten_files"], "upgraded_files": doc["upgraded_files"],
                   "new_files": doc["new_files"], "compacted_buckets": doc["compacted_buckets"], "engine": "local"}
    assert doc["rewritten_files"] + doc["upgraded_files"] >= 2 and doc["compacted_buckets"] >= 2
    assert _table(run).latest_snapshot().commit_kind.value == "COMPACT"
    assert _rows(run) == rows
    again = run("compact", "shop.orders").stdout
    assert again.startswith("shop.orders: ") and ("nothing to compact" in again or "snapshot 6" in again)


def test_compact_one_partition(run: Run) -> None:
    out = run("compact", "shop.orders", "--full", "--partition", "dt=2024-05-15").stdout
    assert "compacted 1 bucket(s)" in out or "compacted 2 bucket(s)" in out
    files = run.json("files", "shop.orders")
    assert {r["level"] for r in files if r["partition"] == "[2024-05-14]"} == {0}
    assert 0 not in {r["level"] for r in files if r["partition"] == "[2024-05-15]"}


def test_rescale(run: Run) -> None:
    rows = _rows(run)
    doc = run.json("rescale", "shop.orders", "--bucket", "3", "-p", "dt=2024-05-15")
    assert doc == {"table": "shop.orders", "operation": "rescale", "snapshot_id": 5, "bucket": 3,
                   "rewritten_partitions": 1, "rewritten_rows": 3, "engine": "local"}
    assert _rows(run) == rows
    assert run.json("describe", "shop.orders")["bucket"] == 3
    out = run("rescale", "shop.orders", "--bucket", "3").stdout
    assert "bucket count 3; rewrote 2 partition(s), 5 row(s); snapshot 6" in out


def test_expire_snapshots_dry_run_then_apply(run: Run) -> None:
    before = tree(run.warehouse)
    dry = run.json("expire-snapshots", "shop.orders", "--retain-min", "1", "--older-than", "0")
    assert dry["dry_run"] is True and dry["expired_snapshots"] == [1, 2, 3]
    assert set(dry) == {"table", "operation", "expired_snapshots", "deleted_files", "dry_run",
                        "earliest_snapshot_id", "engine"}
    assert tree(run.warehouse) == before
    text = run("expire-snapshots", "shop.orders", "--retain-min", "1", "--older-than", "0", "-v").stdout
    assert "dry run: would expire 3 snapshot(s) (1..3)" in text and "pass --apply" in text
    assert all(path in text for path in dry["deleted_files"])
    assert tree(run.warehouse) == before

    rows = _rows(run)
    done = run.json("expire-snapshots", "shop.orders", "--retain-min", "1", "--older-than", "0", "--apply")
    assert done["dry_run"] is False and done["expired_snapshots"] == [1, 2, 3]
    assert sorted(done["deleted_files"]) == sorted(dry["deleted_files"])
    assert not any(os.path.exists(p) for p in done["deleted_files"])
    assert [s.id for s in _table(run).snapshots()] == [4] and _rows(run) == rows
    assert "no snapshot to expire" in run("expire-snapshots", "shop.orders", "--retain-min", "1", "--apply").stdout


def test_expire_snapshots_by_table_options_keeps_young_snapshots(run: Run) -> None:
    before = tree(run.warehouse)
    assert "no snapshot to expire (dry run)" in run("expire-snapshots", "shop.orders").stdout
    assert run.json("expire-snapshots", "shop.orders", "--apply")["expired_snapshots"] == []  # all < 1 h old
    assert tree(run.warehouse) == before


def test_remove_orphan_files_dry_run_then_apply(run: Run) -> None:
    table_dir = os.path.join(run.warehouse, "shop.db", "orders")
    strays = [os.path.join(table_dir, "dt=2024-05-14", "bucket-0", "stray.parquet"),
              os.path.join(table_dir, "manifest", "manifest-stray")]
    for path in strays:
        with open(path, "wb") as f:
            f.write(b"x" * 512)
    age_files(table_dir)
    before = tree(run.warehouse)
    assert run.json("remove-orphan-files", "shop.orders", "--older-than", "4d")["orphan_files"] == []
    dry = run.json("remove-orphan-files", "shop.orders")
    assert sorted(dry["orphan_files"]) == sorted(strays) and dry["bytes_freed"] == 1024 and dry["dry_run"]
    assert set(dry) == {"table", "operation", "orphan_files", "deleted_files", "bytes_freed", "dry_run",
                        "removed_directories", "abandoned_uploads", "aborted_uploads", "engine"}
    assert dry["abandoned_uploads"] == dry["aborted_uploads"] == []  # a local warehouse has no multipart uploads
    assert "dry run: would delete 2 orphan file(s) (1.0 KiB)" in run("remove-orphan-files", "shop.orders").stdout
    assert tree(run.warehouse) == before
    rows = _rows(run)
    out = run("remove-orphan-files", "shop.orders", "--apply").stdout
    assert "deleted 2 orphan file(s) (1.0 KiB)" in out
    assert not any(os.path.exists(p) for p in strays) and _rows(run) == rows


def test_tags_create_delete(run: Run) -> None:
    assert run.json("create-tag", "shop.orders", "t2", "--snapshot", "2") == {
        "table": "shop.orders", "operation": "create_tag", "tag": "t2", "snapshot_id": 2}
    assert "tag 'latest' -> snapshot 4" in run("create-tag", "shop.orders", "latest", "--time-retained", "7d").stdout
    assert _table(run).tags() == {"first": 1, "t2": 2, "latest": 4}
    assert "already exists" in run("create-tag", "shop.orders", "t2", code=1).stderr

    before = tree(run.warehouse)
    dry = run.json("delete-tag", "shop.orders", "t2")
    assert dry["dry_run"] is True and dry["tag"] == "t2" and dry["snapshot_id"] == 2
    assert dry["deleted_files"] == [os.path.join(run.warehouse, "shop.db", "orders", "tag", "tag-t2")]
    assert tree(run.warehouse) == before
    assert "dry run: would delete tag 't2'" in run("delete-tag", "shop.orders", "t2").stdout
    assert "deleted tag 't2' (snapshot 2)" in run("delete-tag", "shop.orders", "t2", "--apply").stdout
    assert _table(run).tags() == {"first": 1, "latest": 4}
    assert "tag 't2'" in run("delete-tag", "shop.orders", "t2", code=1).stderr


def test_rollback_dry_run_then_apply(run: Run) -> None:
    run("create-tag", "shop.orders", "late")
    before = tree(run.warehouse)
    dry = run.json("rollback", "shop.orders", "--snapshot", "2")
    assert (dry["dry_run"], dry["snapshot_id"], dry["removed_snapshots"], dry["removed_tags"]) == (
        True, 2, [3, 4], ["late"])
    assert set(dry) == {"table", "operation", "snapshot_id", "removed_snapshots", "removed_tags", "deleted_files",
                        "dry_run"}
    assert tree(run.warehouse) == before
    text = run("rollback", "shop.orders", "--tag", "first").stdout
    assert "dry run: would roll back to snapshot 1 and remove snapshots 2..4, tags ['late']" in text
    assert tree(run.warehouse) == before

    done = run.json("rollback", "shop.orders", "--tag", "first", "--apply")
    assert done["dry_run"] is False and done["removed_snapshots"] == [2, 3, 4]
    assert [s.id for s in _table(run).snapshots()] == [1]
    assert sorted(r["id"] for r in _rows(run)) == [1, 2, 3]


@pytest.mark.parametrize("args", [
    ["expire-snapshots", "shop.orders", "--retain-min", "1", "--older-than", "0"],
    ["remove-orphan-files", "shop.orders", "--older-than", "0"],
    ["delete-tag", "shop.orders", "first"],
    ["rollback", "shop.orders", "--snapshot", "1"],
    ["expire-snapshots", "shop.orders", "--retain-min", "1", "--older-than", "0", "--dry-run"],
])
def test_dry_runs_change_nothing(run: Run, args: list[str]) -> None:
    age_files(run.warehouse)
    before = tree(run.warehouse)
    snapshots = [s.id for s in _table(run).snapshots()]
    run(*args)
    run(*args, "--json")
    assert tree(run.warehouse) == before
    assert [s.id for s in _table(run).snapshots()] == snapshots


def test_progress_bar_on_stderr(run: Run) -> None:
    result = run("--progress", "compact", "shop.orders", "--full")
    assert "files" in result.stderr and "compact shop.orders" in result.stderr
    assert re.search(r"\d+(\.\d)? KiB / \d+(\.\d)? KiB", result.stderr)  # bytes done / total
    assert "compacted" in result.stdout  # the summary stays on stdout
    quiet = run("--no-progress", "rescale", "shop.orders", "--bucket", "3")
    assert quiet.stderr == ""


def test_maintenance_errors(run: Run) -> None:
    assert "retain_min must be at least 1" in run("expire-snapshots", "shop.orders", "--retain-min", "0",
                                                  code=1).stderr
    err = run("rescale", "shop.events", "--bucket", "2", code=1).stderr
    assert "shop.events" in err and "fixed-bucket" in err
    assert "non-partition columns ['nope']" in run("compact", "shop.orders", "-p", "nope=1", code=1).stderr
    assert "is not a partition spec" in run("compact", "shop.orders", "-p", "dt", code=2).stderr
    assert "is not an age" in run("remove-orphan-files", "shop.orders", "--older-than", "soon", code=2).stderr
    assert "in the future" in run("remove-orphan-files", "shop.orders", "--older-than", "2999-01-01T00:00:00",
                                  code=1).stderr
    assert "Missing option '--bucket'" in run("rescale", "shop.orders", code=2).stderr
    assert "exactly one of --snapshot and --tag" in run("rollback", "shop.orders", code=2).stderr
    assert "rollback snapshot 42 does not exist" in run("rollback", "shop.orders", "--snapshot", "42",
                                                        code=1).stderr


def test_expire_snapshots_by_instant_and_limit(run: Run) -> None:
    later = (dt.datetime.now() + dt.timedelta(days=1)).replace(microsecond=0).isoformat()
    assert run.json("expire-snapshots", "shop.orders", "--retain-min", "1", "--older-than", later)[
        "expired_snapshots"] == [1, 2, 3]
    assert run.json("expire-snapshots", "shop.orders", "--retain-min", "1", "--older-than", "0",
                    "--max-deletes", "1")["expired_snapshots"] == [1]
    assert run.json("expire-snapshots", "shop.orders", "--retain-max", "2", "--older-than", "1d")[
        "expired_snapshots"] == [1, 2]  # retain-max forces expiry whatever the age
    assert "is not an ISO instant" in run("expire-snapshots", "shop.orders", "--older-than", "2024-13-45",
                                          code=2).stderr
