"""Never stale: every writer of ours keeps a table's Iceberg metadata current, in commit order: the Spark data
source and distributed compaction, the Dagster IO manager (and the S3 store, with s3:// paths in the metadata)."""

from __future__ import annotations

from typing import Any

import dagster as dg
import pyarrow as pa
from test_iceberg_metadata import ICEBERG, SCHEMA, assert_readers_agree, batch, rows

from lakehouse_assets import PaimonIOManager
from table_format import FileSystemCatalog, write_table


def test_spark_writes_and_compaction(spark: Any, warehouse: str, iceberg_readers: Any) -> None:
    from jobs.spark import compact, write

    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db")
    t = catalog.create_table("db.sp", SCHEMA, primary_keys=["dt", "id"], partition_keys=["dt"],
                             options={**ICEBERG, "bucket": "2"})
    ddl = "id bigint, dt string, v double, s string"
    write(spark.createDataFrame(batch([1, 2, 3]).to_pylist(), ddl), t.path)  # routed: one task per bucket
    spark.createDataFrame(batch([3, 4]).to_pylist(), ddl).coalesce(1).write.format("paimon").mode("append").save(t.path)
    compact(spark, t.path, full=True)
    t = catalog.load_table("db.sp")
    assert_readers_agree(iceberg_readers, t)
    assert sorted(r["id"] for r in rows(t.scan().to_arrow())) == [1, 2, 3, 4]


def test_dagster_io_manager(warehouse: str, iceberg_readers: Any) -> None:
    @dg.asset(key_prefix=["shop"], metadata={"table_options": ICEBERG, "partition_keys": ["dt"]})
    def visits() -> pa.Table:
        return batch([1, 2, 3, 4])

    result = dg.materialize([visits], resources={"io_manager": PaimonIOManager(warehouse=warehouse, mode="append")})
    assert result.success
    t = FileSystemCatalog(warehouse).load_table("shop.visits")
    assert_readers_agree(iceberg_readers, t)


def test_s3_warehouse(s3_server: Any, s3_warehouse: str, iceberg_readers: Any) -> None:
    catalog = FileSystemCatalog(s3_warehouse)
    catalog.create_database("db")
    t = catalog.create_table("db.s3", SCHEMA, partition_keys=["dt"], options=ICEBERG)
    write_table(t, batch([1, 2]))
    write_table(t, batch([3], "2024-01-02"))
    hint = t.store.file_io.read_bytes(f"{t.store.paths.root}/metadata/version-hint.text").decode()
    assert hint == "2"
    location = f"{t.store.file_io.uri(t.store.paths.root)}/metadata/v{hint}.metadata.json"
    assert location.startswith("s3://")
    properties = {"s3.endpoint": s3_server.endpoint, "s3.access-key-id": s3_server.access_key,
                  "s3.secret-access-key": s3_server.secret_key, "s3.region": s3_server.region}
    got = iceberg_readers.read("pyiceberg", location, properties=properties)
    assert got["rows"] == rows(t.scan().to_arrow())
