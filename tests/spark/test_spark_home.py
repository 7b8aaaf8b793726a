"""spark_session()'s SPARK_HOME for local masters (jobs/spark/spark_home.py): Python workers import the installed
PySpark (cached bytecode), not a copy compiled from python/lib/pyspark.zip at every worker start."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pyspark
import pytest

from jobs.spark.spark_home import worker_friendly_spark_home

pytestmark = pytest.mark.spark

PACKAGE = Path(pyspark.__file__).resolve().parent


@pytest.mark.skipif(not (PACKAGE / "python" / "lib" / "pyspark.zip").is_file(), reason="PySpark not pip-installed")
def test_links_every_entry_of_the_package_but_python_and_only_when_spark_home_is_ours_to_set(monkeypatch, tmp_path):
    monkeypatch.delenv("SPARK_HOME", raising=False)
    monkeypatch.delenv("PYSPARK_PYTHON", raising=False)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    home = Path(worker_friendly_spark_home("local[2]") or "")
    assert home.parent == tmp_path
    assert sorted(p.name for p in home.iterdir()) == sorted(p.name for p in PACKAGE.iterdir() if p.name != "python")
    assert (home / "bin" / "spark-submit").resolve() == PACKAGE / "bin" / "spark-submit"
    assert (home / "jars").resolve() == PACKAGE / "jars"
    assert worker_friendly_spark_home("local[1]") == str(home)  # built once, reused
    assert worker_friendly_spark_home("spark://127.0.0.1:7077") is None  # executors have their own Spark
    monkeypatch.setenv("PYSPARK_PYTHON", "/usr/bin/python3")  # workers in another interpreter: maybe no pyspark
    assert worker_friendly_spark_home("local[2]") is None
    monkeypatch.setenv("SPARK_HOME", str(PACKAGE))  # the user's choice stands
    monkeypatch.delenv("PYSPARK_PYTHON")
    assert worker_friendly_spark_home("local[2]") is None


def test_python_workers_import_the_installed_pyspark(spark):
    jvm_home = spark.sparkContext._jvm.System.getenv("SPARK_HOME") or ""
    if "lakehouse-spark-home-" not in jvm_home:
        pytest.skip("SPARK_HOME was set before the session: Spark's own layout, left alone")
    files = spark.sparkContext.parallelize([0], 1).map(lambda _: __import__("pyspark").__file__).collect()
    assert files == [pyspark.__file__]  # not .../python/lib/pyspark.zip/pyspark/__init__.py
    # the links are the JVM's only: this process's own subprocesses (a cluster driver, another Spark
    # application on a spark:// master) do not inherit a SPARK_HOME without python/
    assert "lakehouse-spark-home-" not in os.environ.get("SPARK_HOME", "")
