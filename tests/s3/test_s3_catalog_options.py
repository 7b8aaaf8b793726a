"""s3:// warehouses configured by catalog options only (``s3.*``), with no usable AWS variables anywhere: the Spark
data source and ``jobs.spark.write`` (driver and executors), the Dagster IO manager (Arrow and PySpark DataFrame
assets), and the ``compact_tables`` job."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import dagster as dg
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from jobs.maintenance import CompactConfig, compact_tables
from jobs.spark import write
from jobs.spark.data_source import register_data_source
from lakehouse_assets import PaimonCatalogResource, PaimonIOManager, pyspark_resource
from table_format import FileSystemCatalog, OptionError, write_table

pytestmark = [pytest.mark.s3]

SCHEMA = pa.schema([("id", pa.int64(), False), ("dt", pa.string()), ("v", pa.string())])
AWS_VARIABLES = ("AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY",
                 "AWS_SESSION_TOKEN", "AWS_REGION", "AWS_DEFAULT_REGION")
# What the executors' Python workers see instead: a closed port and a wrong key, so that only the options can work
WRONG_ENV = {"AWS_ENDPOINT_URL": "http://127.0.0.1:9", "AWS_ACCESS_KEY_ID": "wrong", "AWS_SECRET_ACCESS_KEY": "wrong",
             "AWS_REGION": "us-east-1"}


@pytest.fixture
def no_aws_env(s3_warehouse: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """The warehouse, with every AWS variable removed from this process (and so from the children it starts)."""
    for name in AWS_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    return s3_warehouse


@pytest.fixture
def spark_wrong_env(spark: Any, no_aws_env: str) -> Iterator[Any]:
    """The session's Spark whose Python workers get wrong AWS variables (``sc.environment``, captured when the data
    source is registered): the JVM, and so its workers, may have inherited the test server's variables from a test
    that started the session, so deleting them here would not reach the workers; overriding them does."""
    env = spark.sparkContext.environment
    saved = {name: env.get(name) for name in WRONG_ENV}
    env.update(WRONG_ENV)
    register_data_source(spark)
    try:
        yield spark
    finally:
        for name, value in saved.items():
            if value is None:
                env.pop(name, None)
            else:
                env[name] = value
        register_data_source(spark)


def _rows(ids: range, tag: str) -> pa.Table:
    return pa.table({"id": pa.array(list(ids), pa.int64()), "dt": [f"d{i % 2}" for i in ids],
                     "v": [f"{tag}{i}" for i in ids]}, schema=SCHEMA)


@pytest.mark.spark
def test_spark_reads_and_writes_s3_with_options_only(no_aws_env: str, spark_wrong_env: Any, s3_server: Any) -> None:
    spark = spark_wrong_env
    workers = spark.sparkContext.parallelize(range(2), 2).map(lambda _: os.environ.get("AWS_ENDPOINT_URL")).collect()
    assert workers == [WRONG_ENV["AWS_ENDPOINT_URL"]] * 2  # the executors' variables point nowhere
    options = s3_server.options()
    catalog = FileSystemCatalog(no_aws_env, options=options)
    catalog.create_database("db")
    pk = catalog.create_table("db.pk", SCHEMA, primary_keys=["id", "dt"], partition_keys=["dt"],
                              options={"bucket": "2"})
    log = catalog.create_table("db.log", SCHEMA)
    pk_uri, log_uri = catalog.table_uri("db.pk"), catalog.table_uri("db.log")
    assert pk_uri == f"{no_aws_env}/db.db/pk"

    # jobs.spark.write (routed by bucket on the executors), then an upsert of 30..59
    write(spark.createDataFrame(_rows(range(60), "a")).repartition(3), pk_uri, options=options)
    write(spark.createDataFrame(_rows(range(30, 90), "b")).repartition(2), pk_uri, options=options)
    # the data source's writer, options given as Spark options (keys are case-insensitive)
    (spark.createDataFrame(_rows(range(10), "c")).repartition(2).write.format("paimon").mode("append")
     .option("S3.Endpoint", options["s3.endpoint"])
     .options(**{k: v for k, v in options.items() if k != "s3.endpoint"}).save(log_uri))

    expected = sorted([(i, f"d{i % 2}", f"a{i}") for i in range(30)] + [(i, f"d{i % 2}", f"b{i}") for i in range(30, 90)])
    got = spark.read.format("paimon").options(**options).option("min-partitions", "2").load(pk_uri).collect()
    assert sorted((r["id"], r["dt"], r["v"]) for r in got) == expected
    filtered = (spark.read.format("paimon").options(**options).option("pushdown", "true")
                .option("warehouse", no_aws_env).load("db.pk").filter("dt = 'd1'").collect())
    assert sorted((r["id"], r["dt"], r["v"]) for r in filtered) == [e for e in expected if e[1] == "d1"]
    logged = spark.read.format("paimon").options(**options).load(log_uri).collect()
    assert sorted(r["v"] for r in logged) == sorted(f"c{i}" for i in range(10))
    assert len(pk.snapshots()) == 2 and len(log.snapshots()) == 1
    ours = pk.scan().to_arrow()
    assert sorted(zip(*(ours[c].to_pylist() for c in ("id", "dt", "v")), strict=True)) == expected


@pytest.mark.spark
def test_spark_without_options_reaches_no_s3(no_aws_env: str, spark_wrong_env: Any, s3_server: Any) -> None:
    """The control: without the options the driver has no endpoint and no key, and the write names no secret."""
    catalog = FileSystemCatalog(no_aws_env, options=s3_server.options())
    catalog.create_database("db")
    catalog.create_table("db.t", SCHEMA)
    frame = spark_wrong_env.createDataFrame(_rows(range(3), "x"))
    with pytest.raises(Exception) as failure:
        frame.write.format("paimon").mode("append").save(catalog.table_uri("db.t"))
    assert s3_server.secret_key not in str(failure.value)
    assert catalog.load_table("db.t").latest_snapshot() is None


def test_s3_options_on_a_local_table_are_refused(tmp_path: Any, s3_server: Any) -> None:
    catalog = FileSystemCatalog(str(tmp_path / "wh"))
    catalog.create_database("db")
    catalog.create_table("db.t", SCHEMA)
    with pytest.raises(OptionError, match="s3:// warehouses only"):
        FileSystemCatalog(str(tmp_path / "wh"), options=s3_server.options())


@pytest.mark.dagster
def test_materialize_with_io_manager_options_only(no_aws_env: str, s3_server: Any) -> None:
    @dg.asset(key_prefix="sales")
    def orders() -> pa.Table:
        return pa.table({"id": pa.array([1, 2, 3, 4], pa.int64()), "amount": [1.5, 2.5, 3.5, 4.5]})

    @dg.asset(key_prefix="sales")
    def big_orders(orders: pa.Table) -> pa.Table:  # loaded from S3 by the IO manager
        return orders.filter(pc.greater(orders["amount"], 2.0))

    io_manager = PaimonIOManager(warehouse=no_aws_env, options=s3_server.options())
    result = dg.materialize([orders, big_orders], resources={"io_manager": io_manager},
                            instance=dg.DagsterInstance.ephemeral())
    assert result.success
    table = FileSystemCatalog(no_aws_env, options=s3_server.options()).load_table("sales.big_orders")
    assert sorted(table.scan().to_arrow().column("id").to_pylist()) == [2, 3, 4]
    without = dg.materialize([orders], resources={"io_manager": PaimonIOManager(warehouse=no_aws_env)},
                             instance=dg.DagsterInstance.ephemeral(), raise_on_error=False)
    assert not without.success  # the same without options: no endpoint, no key
    assert len(FileSystemCatalog(no_aws_env, options=s3_server.options()).load_table("sales.orders").snapshots()) == 1


@pytest.mark.dagster
@pytest.mark.spark
def test_compact_tables_job_on_s3_with_catalog_options(no_aws_env: str, spark_wrong_env: Any,
                                                       s3_server: Any) -> None:
    catalog_resource = PaimonCatalogResource(warehouse=no_aws_env, options=s3_server.options())
    catalog = catalog_resource.catalog()
    catalog.create_database("db")
    table = catalog.create_table("db.pk", SCHEMA, primary_keys=["id", "dt"], partition_keys=["dt"],
                                 options={"bucket": "2"})
    for start in range(0, 40, 10):  # four commits: several sorted runs per bucket
        write_table(table, _rows(range(start, start + 20), f"r{start}"))
    before = table.scan().to_arrow().sort_by("id").to_pylist()

    result = compact_tables.execute_in_process(
        resources={"pyspark": pyspark_resource(), "paimon_catalog": catalog_resource},
        instance=dg.DagsterInstance.ephemeral(),
        run_config=dg.RunConfig(ops={"compact_tables_op": CompactConfig(full=True)}))
    assert result.success
    observed = [e.event_specific_data.asset_observation for e in result.events_for_node("compact_tables_op")
                if e.event_type_value == "ASSET_OBSERVATION"]  # maintenance reports observations (rows unchanged)
    assert [o.asset_key.to_user_string() for o in observed] == ["db/pk"]
    assert observed[0].metadata["maintenance/changed"].value is True
    latest = table.latest_snapshot()
    assert latest is not None and latest.commit_kind == "COMPACT"
    assert table.scan().to_arrow().sort_by("id").to_pylist() == before


@pytest.mark.dagster
@pytest.mark.spark
def test_spark_dataframe_assets_on_s3_with_io_manager_options_only(no_aws_env: str, spark_wrong_env: Any,
                                                                   s3_server: Any) -> None:
    """The IO manager's PySpark handler: partitioned DataFrame assets written to S3 by the executors, loaded back
    as DataFrames (with a projection, and incrementally), the store reached through the IO manager's options."""
    regions = dg.StaticPartitionsDefinition(["eu", "us"])

    @dg.asset(key_prefix="sp", partitions_def=regions, metadata={"partition_expr": "dt", "primary_keys": ["id", "dt"]})
    def sales(context) -> DataFrame:  # noqa: ANN001 - dagster refuses the string annotation (future import)
        start = 0 if context.partition_key == "eu" else 100
        return spark_wrong_env.createDataFrame(_rows(range(start, start + 6), "s")).withColumn("dt", F.lit(
            context.partition_key)).repartition(2)

    @dg.asset(key_prefix="sp", partitions_def=regions, metadata={"partition_expr": "dt"},
              ins={"sales": dg.AssetIn(key=["sp", "sales"], metadata={"columns": ["id", "dt"]})})
    def even_sales(sales: DataFrame) -> DataFrame:
        assert sales.columns == ["id", "dt"]
        return sales.filter("id % 2 = 0")

    @dg.asset(key_prefix="sp", ins={"sales": dg.AssetIn(key=["sp", "sales"], metadata={"incremental": True})})
    def sales_changes(sales: DataFrame) -> pa.Table:
        return sales.select("id", "_row_kind").toArrow().rename_columns(["id", "kind"])

    io_manager = PaimonIOManager(warehouse=no_aws_env, options=s3_server.options())
    instance = dg.DagsterInstance.ephemeral()
    for region in ("eu", "us"):
        result = dg.materialize([sales, even_sales], resources={"io_manager": io_manager}, instance=instance,
                                partition_key=region)
        assert result.success
    result = dg.materialize([sales, sales_changes], resources={"io_manager": io_manager}, instance=instance,
                            selection=[sales_changes])
    assert result.success

    catalog = FileSystemCatalog(no_aws_env, options=s3_server.options())
    written = catalog.load_table("sp.sales")
    assert written.path.startswith(no_aws_env.removeprefix("s3://"))  # on S3, under the warehouse
    ids = [*range(6), *range(100, 106)]
    assert sorted(written.scan().to_arrow().column("id").to_pylist()) == ids
    assert len(written.snapshots()) == 2
    even = catalog.load_table("sp.even_sales").scan().to_arrow().sort_by("id")
    assert even.column("id").to_pylist() == [i for i in ids if i % 2 == 0]
    assert even.column("dt").to_pylist() == ["eu" if i < 100 else "us" for i in ids if i % 2 == 0]
    changes = catalog.load_table("sp.sales_changes").scan().to_arrow().sort_by("id")
    assert changes.column("id").to_pylist() == ids and set(changes.column("kind").to_pylist()) == {"+I"}
