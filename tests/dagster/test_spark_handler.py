"""PySpark DataFrames in and out of the IO manager (through jobs.spark), on the session-wide SparkSession."""

import os
import subprocess
import sys
from pathlib import Path

import dagster as dg
import pyarrow as pa
import pytest
from pyspark.sql import DataFrame

from lakehouse_assets import PaimonIOManager, PaimonPySparkResource, pyspark_resource
from table_format import CommitKind, FileSystemCatalog
from tests.dagster.helpers import metadata_of, rows, snapshot_count

REGIONS = dg.StaticPartitionsDefinition(["eu", "us"])


def _run(assets, warehouse, instance, **kwargs):
    return dg.materialize(assets, instance=instance, resources={
        "io_manager": PaimonIOManager(warehouse=warehouse), "pyspark": pyspark_resource()}, **kwargs)


def test_spark_dataframes_written_and_read_by_partition_with_projection(spark, warehouse, instance):
    @dg.asset(key_prefix="sp", partitions_def=REGIONS, metadata={"partition_expr": "region"})
    def sales(context: dg.AssetExecutionContext, pyspark: PaimonPySparkResource) -> DataFrame:
        region = context.partition_key
        data = pa.table({"id": pa.array([1, 2, 3], pa.int64()), "region": [region] * 3, "amount": [1.0, 2.0, 3.0]})
        return pyspark.spark_session.createDataFrame(data)

    @dg.asset(key_prefix="sp", partitions_def=REGIONS, metadata={"partition_expr": "region"},
              ins={"sales": dg.AssetIn(key=["sp", "sales"], metadata={"columns": ["region", "amount"]})})
    def big_sales(sales: DataFrame) -> DataFrame:
        assert sales.columns == ["region", "amount"]
        return sales.filter("amount > 1.5")

    _run([sales], warehouse, instance, partition_key="eu")
    result = _run([sales, big_sales], warehouse, instance, partition_key="us")
    assert [(r["region"], r["id"]) for r in rows(warehouse, "sp.sales", sort=["region", "id"])] == [
        ("eu", 1), ("eu", 2), ("eu", 3), ("us", 1), ("us", 2), ("us", 3)]
    assert rows(warehouse, "sp.big_sales", sort=["amount"]) == [{"region": "us", "amount": 2.0},
                                                                 {"region": "us", "amount": 3.0}]
    meta = metadata_of(result, "sp__sales")
    assert meta["dagster/partition_row_count"] == 3 and meta["dagster/row_count"] == 6
    assert spark.range(3).count() == 3  # the resource reused the test session and left it running


def test_spark_partition_mismatch_writes_nothing_and_incremental_reads(spark, warehouse, instance):
    @dg.asset(key_prefix="sp", partitions_def=REGIONS, metadata={"partition_expr": "region"})
    def wrong(pyspark: PaimonPySparkResource) -> DataFrame:
        return pyspark.spark_session.createDataFrame(pa.table({"region": ["us"], "v": [1]}))

    with pytest.raises(Exception, match="lie outside"):
        _run([wrong], warehouse, instance, partition_key="eu")
    assert snapshot_count(warehouse, "sp.wrong") == 0

    batches = iter([([1, 2], "append"), ([3], "append"), ([4], "overwrite")])

    @dg.asset(key_prefix="sp")
    def log(pyspark: PaimonPySparkResource) -> dg.Output[DataFrame]:
        ids, mode = next(batches)
        frame = pyspark.spark_session.createDataFrame(pa.table({"id": pa.array(ids, pa.int64())}))
        return dg.Output(frame, metadata={"mode": mode})

    @dg.asset(key_prefix="sp", ins={"log": dg.AssetIn(key=["sp", "log"], metadata={"incremental": True})})
    def log_changes(log: DataFrame) -> pa.Table:
        return log.toArrow().rename_columns(["id", "kind"])

    _run([log], warehouse, instance)
    _run([log, log_changes], warehouse, instance, selection=[log_changes])
    assert rows(warehouse, "sp.log_changes") == [{"id": 1, "kind": "+I"}, {"id": 2, "kind": "+I"}]
    _run([log], warehouse, instance)
    _run([log, log_changes], warehouse, instance, selection=[log_changes])
    assert rows(warehouse, "sp.log_changes") == [{"id": 3, "kind": "+I"}]
    _run([log], warehouse, instance)  # an overwrite: retractions of the old rows, the new row inserted
    _run([log, log_changes], warehouse, instance, selection=[log_changes])
    assert rows(warehouse, "sp.log_changes", sort=["kind", "id"]) == [
        {"id": 4, "kind": "+I"}, {"id": 1, "kind": "-D"}, {"id": 2, "kind": "-D"}, {"id": 3, "kind": "-D"}]


OWN_SESSION = """
import dagster as dg, pyarrow as pa
from pyspark import SparkContext
from lakehouse_assets import PaimonIOManager, PaimonPySparkResource, pyspark_resource
from table_format import CommitKind, FileSystemCatalog

@dg.asset
def t(pyspark: PaimonPySparkResource) -> pa.Table:
    return pa.table({"n": [pyspark.spark_session.range(5).count()]})

result = dg.materialize([t], resources={"io_manager": PaimonIOManager(warehouse=WAREHOUSE),
                                        "pyspark": pyspark_resource()})
assert result.success
assert SparkContext._active_spark_context is None, "the session the resource created is still running"
print("stopped")
"""


def test_a_session_the_resource_created_is_stopped_after_the_run(spark, warehouse):
    """In a fresh process (no active session): the resource creates one, and stops it at teardown."""
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2]), "SPARK_MASTER": "local[1]"}
    script = f"WAREHOUSE = {warehouse!r}\n" + OWN_SESSION
    proc = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip().endswith("stopped")


@pytest.mark.parametrize("limit", [None, "0"])  # default (32 MiB): on the driver; 0: distributed data source
def test_small_spark_inputs_and_outputs_on_the_driver_equal_the_distributed_paths(spark, warehouse, instance, limit):
    plans: list[str] = []

    @dg.asset(key_prefix="sp", metadata={"primary_keys": ["id"], "table_options": {"bucket": "2"}, "mode": "upsert"})
    def base(pyspark: PaimonPySparkResource) -> DataFrame:
        data = pa.table({"id": pa.array(range(40), pa.int64()), "dt": [f"d{i % 3}" for i in range(40)],
                         "amount": [i * 1.5 for i in range(40)]})
        return pyspark.spark_session.createDataFrame(data)

    @dg.asset(key_prefix="sp", ins={"base": dg.AssetIn(key=["sp", "base"])},
              metadata={"primary_keys": ["dt"], "table_options": {"bucket": "1"}})
    def per_day(base: DataFrame) -> DataFrame:
        plans.append(base._jdf.queryExecution().analyzed().toString())
        return base.groupBy("dt").agg({"amount": "sum"}).withColumnRenamed("sum(amount)", "amount")

    keys = ("spark.lakehouse.write.driverMaxBytes", "spark.lakehouse.read.driverMaxBytes")
    for key in keys:
        if limit is not None:
            spark.conf.set(key, limit)
    try:
        first = _run([base, per_day], warehouse, instance)
        second = _run([base, per_day], warehouse, instance)  # upsert of the same keys, overwrite of per_day
    finally:
        for key in keys:
            spark.conf.unset(key)
    path = "driver" if limit is None else "distributed"
    for result in (first, second):
        for node in ("sp__base", "sp__per_day"):
            meta = metadata_of(result, node)
            assert meta["paimon/spark_write_path"] == path
            assert meta["paimon/spark_driver_max_bytes"] == (32 << 20 if limit is None else 0)
            assert not any("secret" in str(v) for v in meta.values())
    assert all(("LocalRelation" in p) == (limit is None) for p in plans) and len(plans) == 2
    assert rows(warehouse, "sp.base", sort=["id"])[:2] == [{"id": 0, "dt": "d0", "amount": 0.0},
                                                             {"id": 1, "dt": "d1", "amount": 1.5}]
    totals = {r["dt"]: r["amount"] for r in rows(warehouse, "sp.per_day", sort=["dt"])}
    assert totals == {f"d{k}": sum(i * 1.5 for i in range(40) if i % 3 == k) for k in range(3)}
    kinds = [s.commit_kind for s in FileSystemCatalog(warehouse).load_table("sp.per_day").snapshots()]
    assert kinds == [CommitKind.OVERWRITE, CommitKind.OVERWRITE]  # the same on both paths
