"""Code shipping (the zip of table_format + jobs) and the packing of work units; no SparkSession needed."""

from __future__ import annotations

import zipfile

import pytest

from jobs.spark.fan_out import pack
from jobs.spark.shipping import build_code_zip, needs_shipping

pytestmark = pytest.mark.spark


def test_code_zip_holds_both_packages_and_is_cached_by_content(tmp_path, monkeypatch):
    monkeypatch.setenv("LAKEHOUSE_CACHE_DIR", str(tmp_path))
    first = build_code_zip()
    assert first.parent == tmp_path
    names = set(zipfile.ZipFile(first).namelist())
    assert {"table_format/__init__.py", "table_format/py.typed", "jobs/__init__.py", "jobs/spark/maintenance.py",
            "jobs/spark/shipping.py"} <= names
    assert not any("__pycache__" in n or n.endswith(".pyc") for n in names)
    mtime = first.stat().st_mtime_ns
    assert build_code_zip() == first and first.stat().st_mtime_ns == mtime  # reused, not rebuilt
    first.unlink()
    again = build_code_zip()
    assert again == first and zipfile.ZipFile(again).namelist() == sorted(names)  # same name for the same code


def test_shipping_is_for_non_local_masters_unless_told(monkeypatch):
    monkeypatch.delenv("LAKEHOUSE_SHIP_CODE", raising=False)
    assert not needs_shipping("local[2]") and not needs_shipping("local")
    assert needs_shipping("spark://127.0.0.1:7077") and needs_shipping("yarn")
    monkeypatch.setenv("LAKEHOUSE_SHIP_CODE", "1")
    assert needs_shipping("local[2]")
    monkeypatch.setenv("LAKEHOUSE_SHIP_CODE", "0")
    assert not needs_shipping("spark://127.0.0.1:7077")


def test_units_are_packed_by_size():
    weights = [100, 90, 10, 10, 10, 10, 10, 10, 50, 40]
    groups = pack(weights, 3)
    assert sorted(i for g in groups for i in g) == list(range(len(weights)))
    loads = sorted(sum(weights[i] for i in g) for g in groups)
    assert loads == [110, 110, 120]
    assert [sum(weights[i] for i in g) for g in groups] == [120, 110, 110]  # the heaviest scheduled first
    assert pack([5, 5], 8) == [[0], [1]]  # never more groups than units
    assert pack([0, 0, 0], 2) in ([[0, 2], [1]], [[1], [0, 2]])  # empty units still count
