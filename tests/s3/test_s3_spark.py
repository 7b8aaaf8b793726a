"""The Spark data source on an s3:// warehouse: a Spark job writes a table on S3 and reads it back."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pytest

from jobs.spark import write
from jobs.spark.data_source import register_data_source
from table_format import FileSystemCatalog

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
