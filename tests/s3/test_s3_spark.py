"""The Spark data source on an s3:// warehouse: a Spark job writes a table on S3 and reads it back."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pytest

from jobs.spark import register_warehouse, write
from jobs.spark.data_source import register_data_source
from table_format import FileSystemCatalog, write_table

pytestmark = [pytest.mark.s3, pytest.mark.spark]

SCHEMA = pa.schema([("id", pa.int64(), False), ("dt", pa.string()), ("v", pa.string())])


@pytest.fixture
def spark_on_s3(spark: Any, s3_server: Any) -> Iterator[Any]:
    """The session's Spark with the AWS variables of the test server in its Python workers' environment (what
    `spark.executorEnv.AWS_*` does on a cluster): Python functions capture `sc.environment` when registered."""
    env = spark.sparkContext.environment
    env.update(s3_server.env())
    register_data_source(spark)
    try:
        yield spark
    finally:
        for name in s3_server.env():
            env.pop(name, None)
        register_data_source(spark)


def test_spark_job_writes_and_reads_an_s3_table(s3_warehouse: str, spark_on_s3: Any) -> None:
    catalog = FileSystemCatalog(s3_warehouse)
    catalog.create_database("db")
    table = catalog.create_table("db.t", SCHEMA, primary_keys=["id", "dt"], partition_keys=["dt"],
                                 options={"bucket": "2"})
    uri = f"{s3_warehouse}/db.db/t"
    def job(ids: range, tag: str) -> pa.Table:  # keys are unique within a job; the second job updates 30..59
        return pa.table({"id": pa.array(list(ids), pa.int64()), "dt": [f"d{i % 2}" for i in ids],
                         "v": [f"{tag}{i}" for i in ids]})

    # jobs.spark.write routes the rows of a primary-key table by bucket (df.write would need one task per bucket)
    write(spark_on_s3.createDataFrame(job(range(60), "a")).repartition(3), uri)
    write(spark_on_s3.createDataFrame(job(range(30, 90), "b")).repartition(2), uri)
    assert len(table.snapshots()) >= 2
    expected = {(i, f"d{i % 2}"): f"a{i}" for i in range(30)} | {(i, f"d{i % 2}"): f"b{i}" for i in range(30, 90)}
    got = spark_on_s3.read.format("paimon").load(uri).collect()
    assert sorted((r["id"], r["dt"], r["v"]) for r in got) == sorted((i, d, v) for (i, d), v in expected.items())
    ours = table.scan().to_arrow().to_pylist()
    assert sorted((r["id"], r["dt"], r["v"]) for r in ours) == sorted((i, d, v) for (i, d), v in expected.items())


def test_spark_sql_session_tables_on_s3(s3_warehouse: str, s3_server: Any, spark_on_s3: Any) -> None:
    """register_warehouse over an s3a:// spelling of the warehouse with catalog options (secrets kept out of
    Spark's catalog), a join, INSERT INTO, and a session table made with CREATE TABLE ... USING paimon."""
    catalog = FileSystemCatalog(s3_warehouse)
    catalog.create_database("s3shop")
    orders = catalog.create_table("s3shop.orders", SCHEMA, primary_keys=["id"], options={"bucket": "2"})
    payments = catalog.create_table("s3shop.payments", pa.schema([("id", pa.int64()), ("paid", pa.int64())]))
    write_table(orders, pa.table({"id": pa.array([1, 2], pa.int64()), "dt": ["a", "b"], "v": ["x", "y"]},
                                 schema=SCHEMA))
    write_table(payments, pa.table({"id": pa.array([1], pa.int64()), "paid": pa.array([5], pa.int64())}))
    s3a = s3_warehouse.replace("s3://", "s3a://", 1)
    assert register_warehouse(spark_on_s3, s3a, databases=["s3shop"], options=s3_server.options()) == \
        ["s3shop.orders", "s3shop.payments"]
    statement = "".join(str(r) for r in spark_on_s3.sql("DESCRIBE TABLE EXTENDED s3shop.orders").collect())
    assert s3_server.secret_key not in statement
    spark_on_s3.sql("INSERT INTO s3shop.orders VALUES (2, 'b', 'y2'), (3, 'c', 'z')")
    query = ("SELECT o.id, o.v, p.paid FROM s3shop.orders o LEFT JOIN s3shop.payments p ON o.id = p.id "
             "ORDER BY o.id")
    assert [tuple(r) for r in spark_on_s3.sql(query).collect()] == [(1, "x", 5), (2, "y2", None), (3, "z", None)]
    assert len(orders.snapshots()) == 2
    spark_on_s3.sql("DROP TABLE IF EXISTS s3_orders_v1")
    spark_on_s3.sql(f"CREATE TABLE s3_orders_v1 USING paimon OPTIONS (path '{s3a}/s3shop.db/orders', "
                    "'snapshot-id' '1')")
    assert sorted(tuple(r) for r in spark_on_s3.sql("SELECT id, v FROM s3_orders_v1").collect()) == \
        [(1, "x"), (2, "y")]
    # CREATE TABLE over an s3:// path, then INSERT INTO and INSERT OVERWRITE through it (one commit each)
    spark_on_s3.sql("DROP TABLE IF EXISTS s3_payments")
    spark_on_s3.sql(f"CREATE TABLE s3_payments USING paimon OPTIONS (path '{s3_warehouse}/s3shop.db/payments')")
    spark_on_s3.sql("INSERT INTO s3_payments VALUES (2, 7)")
    assert sorted(tuple(r) for r in spark_on_s3.sql("SELECT * FROM s3_payments").collect()) == [(1, 5), (2, 7)]
    spark_on_s3.sql("INSERT OVERWRITE s3_payments SELECT 3, 9")
    assert [tuple(r) for r in spark_on_s3.sql("SELECT * FROM s3_payments").collect()] == [(3, 9)]
    assert [tuple(r.values()) for r in payments.refresh().scan().to_arrow().to_pylist()] == [(3, 9)]
    assert len(payments.snapshots()) == 3
    # a partition overwrite through SQL (Spark refuses a static PARTITION clause on Python data sources:
    # docs/spark.md): only partition dt=b is replaced, in one commit
    events = catalog.create_table("s3shop.events", SCHEMA, partition_keys=["dt"])
    write_table(events, pa.table({"id": pa.array([1, 2, 3], pa.int64()), "dt": ["a", "b", "b"], "v": ["x", "y", "z"]},
                                 schema=SCHEMA))
    spark_on_s3.sql("DROP TABLE IF EXISTS s3_events")
    spark_on_s3.sql(f"CREATE TABLE s3_events USING paimon OPTIONS (path '{s3a}/s3shop.db/events')")
    spark_on_s3.sql("INSERT OVERWRITE s3_events WITH ('overwrite-partitions' = 'dt=b') SELECT 9, 'b', 'q'")
    assert sorted(tuple(r.values()) for r in events.refresh().scan().to_arrow().to_pylist()) == [
        (1, "a", "x"), (9, "b", "q")]
    assert len(events.snapshots()) == 2
