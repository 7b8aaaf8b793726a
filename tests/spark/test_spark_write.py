"""df.write.format("paimon") and jobs.spark.write: one commit per job, read identically by us and by Java Paimon."""

from __future__ import annotations

import datetime
import os

import pyarrow as pa
import pytest
from pyspark.sql.utils import CapturedException

from jobs.spark import write
from table_format import FileSystemCatalog, open_table, write_table

pytestmark = pytest.mark.spark

SCHEMA = pa.schema([("id", pa.int64()), ("dt", pa.string()), ("v", pa.string())])


def _create(warehouse, name, **kwargs):
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db", exist_ok=True)
    return catalog.create_table(f"db.{name}", SCHEMA, **kwargs)


def _sorted(rows):
    return sorted(rows, key=lambda r: (r["id"], r["dt"], r["v"] or ""))


def _rows(table_or_path):
    table = open_table(table_or_path) if isinstance(table_or_path, str) else table_or_path
    return _sorted(table.scan().to_arrow().to_pylist())


def _java(oracle, warehouse, name):
    return _sorted(oracle.read(warehouse, "db", name))


def _df(spark, rows, partitions):
    data = pa.table({"id": pa.array([r[0] for r in rows], pa.int64()), "dt": [r[1] for r in rows],
                     "v": [r[2] for r in rows]})
    return spark.createDataFrame(data).repartition(partitions)


def _files(path):
    return sorted(os.path.relpath(os.path.join(d, f), path) for d, _, fs in os.walk(path) for f in fs
                  if not f.startswith("."))


def test_append_and_overwrite_are_one_snapshot_each(spark, warehouse, oracle):
    table = _create(warehouse, "app", partition_keys=["dt"])
    rows = [(i, f"d{i % 3}", f"v{i}") for i in range(60)]
    df = _df(spark, rows, 4)
    df.write.format("paimon").mode("append").save(table.path)
    assert [s.id for s in table.snapshots()] == [1]
    df.write.format("paimon").mode("append").save(table.path)
    assert len(table.snapshots()) == 2
    assert len(_rows(table)) == 120
    assert _rows(table) == _java(oracle, warehouse, "app")

    _df(spark, rows[:5], 2).write.format("paimon").mode("overwrite").save(table.path)
    assert len(table.snapshots()) == 3
    assert _rows(table) == _sorted({"id": i, "dt": d, "v": v} for i, d, v in rows[:5])
    assert _rows(table) == _java(oracle, warehouse, "app")


def test_partition_overwrite_by_option(spark, warehouse, oracle):
    table = _create(warehouse, "part", partition_keys=["dt"])
    write_table(table, pa.table({"id": pa.array([1, 2, 3], pa.int64()), "dt": ["a", "b", "c"], "v": ["1", "2", "3"]}))
    new = _df(spark, [(10, "b", "x"), (11, "b", "y")], 2)
    new.write.format("paimon").mode("overwrite").option("overwrite-partitions", "dt=b").save(table.path)
    expected = [{"id": 1, "dt": "a", "v": "1"}, {"id": 3, "dt": "c", "v": "3"},
                {"id": 10, "dt": "b", "v": "x"}, {"id": 11, "dt": "b", "v": "y"}]
    assert _rows(table) == _sorted(expected)
    assert _rows(table) == _java(oracle, warehouse, "part")

    # the JSON form, several partitions; rows outside them are refused and nothing changes
    before = table.latest_snapshot().id
    outside = _df(spark, [(20, "a", "z"), (21, "zz", "w")], 2)
    with pytest.raises(CapturedException, match="outside overwrite_partitions"):
        outside.write.format("paimon").mode("overwrite").option(
            "overwrite-partitions", '[{"dt": "a"}, {"dt": "c"}]').save(table.path)
    assert table.latest_snapshot().id == before
    assert _rows(table) == _sorted(expected)


def test_primary_key_same_key_in_several_spark_partitions(spark, warehouse, oracle):
    table = _create(warehouse, "pk", primary_keys=["id", "dt"], partition_keys=["dt"],
                    options={"bucket": "3", "sequence.field": "v"})
    write_table(table, pa.table({"id": pa.array([1, 2], pa.int64()), "dt": ["a", "a"], "v": ["00", "00"]}))
    # every key 5 times with increasing v, spread over 4 Spark partitions; sequence.field v decides the winner
    rows = [(i % 40, f"{'ab'[i % 2]}", f"{i:03d}") for i in range(200)]
    df = _df(spark, rows, 4)
    # a plain write: tasks share buckets, each numbers its rows in its own slot (jobs/spark/pk_write.py)
    df.write.format("paimon").mode("append").save(table.path)
    assert table.latest_snapshot().id == 2

    snapshot = write(df, table.path)
    assert snapshot == table.latest_snapshot().id >= 2
    expected = {(1, "a"): "00", (2, "a"): "00"}
    for i, d, v in rows:
        expected[(i, d)] = max(expected.get((i, d), ""), v)
    ours = _rows(table)
    assert ours == _sorted({"id": i, "dt": d, "v": v} for (i, d), v in expected.items())
    assert ours == _java(oracle, warehouse, "pk")


def test_primary_key_without_sequence_field_agrees_with_java(spark, warehouse, oracle):
    table = _create(warehouse, "pk2", primary_keys=["id"], options={"bucket": "2"})
    rows = [(i % 25, "d", f"{i}") for i in range(100)]
    snapshot = write(_df(spark, rows, 3), table.path, num_partitions=3)
    assert snapshot is not None
    ours = _rows(table)
    assert [r["id"] for r in ours] == list(range(25))
    assert all(r["v"] in {f"{i}" for i in range(r["id"], 100, 25)} for r in ours)
    assert ours == _java(oracle, warehouse, "pk2")

    replacement = [(i, "d", f"r{i}") for i in range(0, 30, 3)]
    assert write(_df(spark, replacement, 3), table.path, mode="overwrite", num_partitions=3) == snapshot + 1
    assert _rows(table) == _sorted({"id": i, "dt": d, "v": v} for i, d, v in replacement)
    assert _rows(table) == _java(oracle, warehouse, "pk2")


def test_dynamic_bucket_table(spark, warehouse, oracle):
    table = _create(warehouse, "dyn", primary_keys=["id", "dt"], partition_keys=["dt"],
                    options={"bucket": "-1", "dynamic-bucket.target-row-num": "10"})
    rows = [(i % 50, f"d{i % 2}", f"{i:03d}") for i in range(150)]
    write(_df(spark, rows, 3), table.path)
    write(_df(spark, [(i, "d0", "new") for i in range(0, 60, 2)], 2), table.path)
    ours = _rows(table)
    keys = [(r["id"], r["dt"]) for r in ours]
    assert len(keys) == len(set(keys))  # no key was given two buckets
    assert {(i, "d0") for i in range(0, 60, 2)} <= set(keys)
    assert all(r["v"] == "new" for r in ours if r["dt"] == "d0" and r["id"] % 2 == 0)
    assert ours == _java(oracle, warehouse, "dyn")


def test_failed_task_commits_nothing_and_leaves_no_files(spark, warehouse):
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db", exist_ok=True)
    strict = pa.schema([pa.field("id", pa.int64(), nullable=False), ("dt", pa.string()), ("v", pa.string())])
    table = catalog.create_table("db.fail", strict)
    write_table(table, pa.table({"id": pa.array([1], pa.int64()), "dt": ["a"], "v": ["x"]}, schema=strict))
    files_before = _files(table.path)
    # three tasks; the last one meets a null in the NOT NULL column after the others wrote their files
    good = [(i, "a", "v") for i in range(300)]
    bad = spark.createDataFrame(good + [(None, "a", "v")], "id long, dt string, v string").coalesce(1)
    three = spark.createDataFrame(good, "id long, dt string, v string").repartition(2).union(bad)
    assert three.rdd.getNumPartitions() == 3
    with pytest.raises(CapturedException, match="column 'id' is NOT NULL but the input has 1 null"):
        three.write.format("paimon").mode("append").save(table.path)
    assert [s.id for s in table.snapshots()] == [1]
    assert _rows(table) == [{"id": 1, "dt": "a", "v": "x"}]
    # abort deleted the files of the tasks Spark reported; a task cancelled mid-write (or finished after the failure)
    # may leave files that no snapshot references: orphans, which remove_orphan_files takes
    left = set(_files(table.path)) - set(files_before)
    assert all(f.startswith("bucket-0/data-") for f in left)
    table.maintenance.remove_orphan_files(older_than=datetime.timedelta(0), dry_run=False)
    assert _files(table.path) == files_before

    # a type the table cannot hold is refused on the driver, before any task runs
    with pytest.raises(CapturedException, match="column 'id'"):
        spark.createDataFrame([("x", "a", "v")], "id string, dt string, v string").write.format("paimon").mode(
            "append").save(table.path)
    assert _files(table.path) == files_before


def test_primary_key_nulls_are_refused_with_the_column(spark, warehouse):
    table = _create(warehouse, "pknull", primary_keys=["id"], options={"bucket": "1"})
    df = spark.createDataFrame([(1, "a", "v"), (None, "a", "w")], "id long, dt string, v string").coalesce(1)
    with pytest.raises(CapturedException, match="'id' is NOT NULL|primary key column 'id'"):
        write(df, table.path)
    assert table.latest_snapshot() is None
    assert not any("bucket-" in f for f in _files(table.path))


def test_session_s3_defaults_leave_local_tables_alone(spark, tmp_path):
    """register_warehouse(options=) / spark_session's s3.* catalog options apply to s3:// tables only: in the same
    session a local table is written and read (batch and stream schema) without them."""
    from jobs.spark import register_data_source

    path = str(tmp_path / "wh" / "db.db" / "local")
    register_data_source(spark, defaults={"s3.endpoint": "http://127.0.0.1:1", "s3.access-key": "k",
                                          "s3.secret-key": "s", "s3.region": "us-east-1"})
    try:
        spark.range(5).selectExpr("id", "id * 2 AS v").write.format("paimon").mode("append").save(path)
        assert sorted(r.v for r in spark.read.format("paimon").load(path).collect()) == [0, 2, 4, 6, 8]
        assert spark.readStream.format("paimon").load(path).isStreaming
    finally:
        register_data_source(spark)
    assert open_table(path).scan().to_arrow().num_rows == 5
