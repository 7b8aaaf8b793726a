"""`--spark`: maintenance through jobs.spark on a real SparkSession, and the errors when it cannot run."""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any

import pytest

from cli.cli_helpers import Run, age_files, tree
from table_format import FileSystemCatalog


def _require_spark_maintenance() -> None:
    if not hasattr(importlib.import_module("jobs.spark"), "compact"):
        pytest.skip("jobs.spark has no distributed maintenance yet (branch spark-maint)")


def test_without_pyspark_the_error_says_what_to_install(run: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [m for m in sys.modules if m == "pyspark" or m.startswith(("pyspark.", "jobs.spark"))]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.delitem(sys.modules, "lakehouse_cli.spark_runner", raising=False)
    monkeypatch.setitem(sys.modules, "pyspark", None)  # as if pyspark were not installed
    before = tree(run.warehouse)
    err = run("compact", "shop.orders", "--spark", code=1).stderr
    assert err == "Error: --spark needs pyspark: install the spark extra (pip install 'lakehouse[spark]')\n"
    assert tree(run.warehouse) == before


def test_unknown_table_fails_before_any_spark_session(run: Run) -> None:
    err = run("expire-snapshots", "shop.nope", "--spark", code=1).stderr
    assert "table 'shop.nope' does not exist" in err


@pytest.mark.spark
def test_maintenance_on_spark(run: Run, request: pytest.FixtureRequest) -> None:
    _require_spark_maintenance()
    spark: Any = request.getfixturevalue("spark")  # after the check: no JVM for a skipped test
    table = FileSystemCatalog(run.warehouse).load_table("shop.orders")
    rows = sorted(table.scan().to_arrow().to_pylist(), key=str)

    doc = run.json("compact", "shop.orders", "--full", "--spark")
    assert doc["engine"] == "spark" and doc["snapshot_id"] == 5 and doc["compacted_buckets"] >= 2
    assert table.latest_snapshot().commit_kind.value == "COMPACT"
    assert sorted(table.scan().to_arrow().to_pylist(), key=str) == rows

    doc = run.json("rescale", "shop.orders", "--bucket", "3", "--spark")
    assert (doc["engine"], doc["bucket"], doc["rewritten_rows"]) == ("spark", 3, 5)
    table.refresh()
    assert sorted(table.scan().to_arrow().to_pylist(), key=str) == rows

    age_files(table.path)
    with open(os.path.join(table.path, "manifest", "manifest-stray"), "wb") as f:
        f.write(b"x" * 10)
    os.utime(os.path.join(table.path, "manifest", "manifest-stray"), (0, 0))
    before = tree(run.warehouse)
    dry = run.json("expire-snapshots", "shop.orders", "--retain-min", "1", "--older-than", "0", "--spark")
    assert dry["dry_run"] and dry["expired_snapshots"] == [1, 2, 3, 4, 5]
    orphans = run.json("remove-orphan-files", "shop.orders", "--spark")
    assert orphans["dry_run"] and orphans["orphan_files"] == [os.path.join(table.path, "manifest", "manifest-stray")]
    assert tree(run.warehouse) == before

    done = run.json("expire-snapshots", "shop.orders", "--retain-min", "1", "--older-than", "0", "--apply", "--spark")
    assert sorted(done["deleted_files"]) == sorted(dry["deleted_files"])
    assert [s.id for s in table.snapshots()] == [6]
    assert sorted(table.scan().to_arrow().to_pylist(), key=str) == rows
    assert spark.sparkContext._jsc is not None  # the test's session was used and left running
