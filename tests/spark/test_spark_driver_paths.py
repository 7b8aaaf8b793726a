"""Small Spark writes and reads on the driver (jobs/spark/driver_write.py, driver_read.py) give what the
distributed data-source paths give: the same rows, snapshot kinds and record counts; thresholds are respected."""

from __future__ import annotations

import pyarrow as pa
import pytest

from jobs.spark import write, write_detailed
from jobs.spark.driver_read import DRIVER_READ_MAX_BYTES_CONF, driver_frame
from jobs.spark.driver_write import DRIVER_MAX_BYTES_CONF
from jobs.spark.types import spark_schema
from table_format import FileSystemCatalog, OptionError, SchemaError, write_table

pytestmark = pytest.mark.spark

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("dt", pa.string()), ("v", pa.string()),
                    ("ts", pa.timestamp("ms"))])
BIG = 1 << 40


def _data(ids, dt=None, tag="a"):
    return pa.table({"id": pa.array(ids, pa.int64()), "dt": [dt or f"d{i % 3}" for i in ids],
                     "v": [f"{tag}{i}" for i in ids],
                     "ts": pa.array([i * 1000 for i in ids], pa.timestamp("ms"))}, schema=SCHEMA)


def _frame(spark, data):
    return spark.createDataFrame(data, schema=spark_schema(SCHEMA, table="t"))  # TIMESTAMP: TimestampNTZType


def _pair(warehouse, name, **kwargs):
    """Two identical tables with the same first commit: one for each path."""
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db", exist_ok=True)
    tables = []
    for suffix in ("driver", "dist"):
        table = catalog.create_table(f"db.{name}_{suffix}", SCHEMA, **kwargs)
        write_table(table, _data(range(30)))
        tables.append(table)
    return tables


def _state(table):
    rows = sorted(table.scan().to_arrow().to_pylist(), key=lambda r: r["id"])
    snapshots = [(str(s.commit_kind), s.total_record_count, s.delta_record_count) for s in table.snapshots()]
    return rows, snapshots


CASES = {
    "pk_append": ({"primary_keys": ["id"], "options": {"bucket": "2"}}, "append", None),
    "pk_overwrite": ({"primary_keys": ["id"], "options": {"bucket": "2"}}, "overwrite", None),
    "pk_partitioned_overwrite_partitions": ({"primary_keys": ["dt", "id"], "partition_keys": ["dt"],
                                             "options": {"bucket": "2"}}, "overwrite", [{"dt": "d1"}]),
    "pk_dynamic_bucket": ({"primary_keys": ["id"], "options": {"bucket": "-1"}}, "append", None),
    "append_table": ({}, "append", None),
    "append_partitioned_overwrite": ({"partition_keys": ["dt"]}, "overwrite", None),
}


@pytest.mark.parametrize("case", list(CASES))
def test_driver_write_equals_distributed_write(spark, warehouse, case):
    kwargs, mode, partitions = CASES[case]
    driver, dist = _pair(warehouse, case, **kwargs)
    ids = list(range(20, 50))
    data = _data(ids, dt="d1", tag="b") if partitions else _data(ids, tag="b")
    df = _frame(spark, data).repartition(3)
    results = [write_detailed(df, t.path, mode=mode, overwrite_partitions=partitions, driver_max_bytes=limit)
               for t, limit in ((driver, BIG), (dist, 0))]
    assert [r.path for r in results] == ["driver", "distributed"]
    assert results[0].estimated_bytes is not None and results[0].estimated_bytes <= BIG
    assert results[0].snapshot_id == results[1].snapshot_id == driver.latest_snapshot().id
    assert _state(driver) == _state(dist)
    assert len(_state(driver)[0]) > 0


def test_driver_write_of_a_branch_and_of_no_rows(spark, warehouse):
    driver, dist = _pair(warehouse, "br", primary_keys=["id"], options={"bucket": "1"})
    for t in (driver, dist):
        t.create_branch("dev")
    df = _frame(spark, _data([1, 2, 99], tag="x"))
    for t, limit in ((driver, BIG), (dist, 0)):
        write(df, t.path, branch="dev", driver_max_bytes=limit)
    assert _state(driver.branch("dev")) == _state(dist.branch("dev"))
    assert _state(driver) == _state(dist)  # main untouched
    empty = _frame(spark, _data([]))
    results = [write_detailed(empty, t.path, mode="overwrite", driver_max_bytes=limit)
               for t, limit in ((driver, BIG), (dist, 0))]
    assert results[0].path == "driver"
    assert _state(driver) == _state(dist) and _state(driver)[0] == []


def test_threshold_option_and_conf(spark, warehouse):
    (table, _) = _pair(warehouse, "thr", primary_keys=["id"], options={"bucket": "1"})
    df = _frame(spark, _data([1, 2, 3], tag="c"))
    assert write_detailed(df, table.path).path == "driver"  # default 32 MiB
    assert write_detailed(df, table.path, driver_max_bytes=0).path == "distributed"
    assert write_detailed(df, table.path, driver_max_bytes=1).path == "distributed"  # above the threshold
    spark.conf.set(DRIVER_MAX_BYTES_CONF, "0")
    try:
        assert write_detailed(df, table.path).path == "distributed"
        assert write_detailed(df, table.path, driver_max_bytes=BIG).path == "driver"  # the keyword wins
    finally:
        spark.conf.unset(DRIVER_MAX_BYTES_CONF)
    with pytest.raises(OptionError, match="driver_max_bytes"):
        write(df, table.path, driver_max_bytes=-1)


def test_a_plan_spark_cannot_size_is_written_distributed(spark, warehouse):
    (table, _) = _pair(warehouse, "unsized", primary_keys=["id"], options={"bucket": "1"})
    source = spark.read.format("paimon").load(table.path)  # a Python data source: no statistics
    result = write_detailed(source, table.path, mode="overwrite")
    assert (result.path, result.estimated_bytes) == ("distributed", None)
    assert len(table.scan().to_arrow()) == 30


def test_driver_write_refuses_a_mismatching_frame_and_writes_nothing(spark, warehouse):
    (table, _) = _pair(warehouse, "bad", primary_keys=["id"], options={"bucket": "1"})
    before = _state(table)
    df = _frame(spark, _data([1, 2])).withColumnRenamed("v", "w")
    with pytest.raises(SchemaError, match="unknown columns \\['w'\\]"):
        write(df, table.path)
    assert _state(table) == before


def test_driver_read_equals_the_data_source(spark, warehouse):
    (table, _) = _pair(warehouse, "rd", primary_keys=["dt", "id"], partition_keys=["dt"], options={"bucket": "2"})
    write_table(table, _data(range(10, 40), tag="u"))
    for kwargs in ({}, {"columns": ["id", "v"]}, {"filter": [("dt", "in", ["d1"])]}, {"snapshot_id": 1}):
        local = driver_frame(spark, table.scan(**kwargs))
        assert local is not None
        reader = spark.read.format("paimon")
        if "columns" in kwargs:
            reader = reader.option("columns", ",".join(kwargs["columns"]))
        if "snapshot_id" in kwargs:
            reader = reader.option("snapshot-id", "1")
        remote = reader.load(table.path)
        if "filter" in kwargs:
            remote = remote.where("dt = 'd1'")
        assert local.schema == remote.schema
        assert sorted(local.collect()) == sorted(remote.collect())
    assert driver_frame(spark, table.scan(), max_bytes=0) is None
    assert driver_frame(spark, table.scan(), max_bytes=1) is None  # its files are larger
    spark.conf.set(DRIVER_READ_MAX_BYTES_CONF, "0")
    try:
        assert driver_frame(spark, table.scan()) is None
    finally:
        spark.conf.unset(DRIVER_READ_MAX_BYTES_CONF)
