"""Writes that create their table from the DataFrame's schema: jobs.spark.write and df.write.format("paimon")."""

from __future__ import annotations

import datetime
import os

import pyarrow as pa
import pytest
from pyspark.sql.utils import CapturedException

from jobs.spark import write
from table_format import OptionError, SchemaError, open_table

pytestmark = pytest.mark.spark


def _df(spark, n=20, partitions=3):
    data = pa.table({"id": pa.array(range(n), pa.int64()), "dt": [f"d{i % 2}" for i in range(n)],
                     "v": [f"v{i}" for i in range(n)],
                     "ts": [datetime.datetime(2024, 1, 1, tzinfo=datetime.timezone.utc)] * n})
    return spark.createDataFrame(data).repartition(partitions)


def _sorted(rows):
    return sorted(rows, key=lambda r: (r["id"], r["dt"]))


def test_write_creates_a_primary_key_table_from_the_dataframe(spark, warehouse, oracle):
    path = f"{warehouse}/new.db/orders"
    snapshot = write(_df(spark), path, primary_keys=["dt", "id"], partition_keys=["dt"],
                     table_options={"bucket": "2", "sequence.field": "id"})
    table = open_table(path)
    assert snapshot == 1
    assert (table.primary_keys, table.partition_keys, table.options["bucket"]) == (["dt", "id"], ["dt"], "2")
    assert str(table.arrow_schema.field("ts").type) == "timestamp[us, tz=UTC]"  # TimestampType -> LTZ(6)
    write(_df(spark, 30), path, primary_keys=["dt", "id"])  # the table exists now: an upsert into it
    rows = _sorted(table.scan().to_arrow().to_pylist())
    assert len(rows) == 30
    java = _sorted(oracle.read(warehouse, "new", "orders"))  # Java Paimon reads the created table
    assert [(r["id"], r["dt"], r["v"]) for r in java] == [(r["id"], r["dt"], r["v"]) for r in rows]
    assert {r["ts"] for r in java} == {"2024-01-01T00:00:00.000000"}
    with pytest.raises(SchemaError, match=r"exists with primary keys \['dt', 'id'\], the write asks for \['id'\]"):
        write(_df(spark), path, primary_keys=["id"])


def test_data_source_write_creates_the_table_with_its_options(spark, warehouse):
    path = f"{warehouse}/db.db/events"
    (_df(spark).write.format("paimon").mode("append").option("partition-keys", "dt")
     .option("file.format", "parquet").save(path))
    table = open_table(path)
    assert table.partition_keys == ["dt"] and table.primary_keys == []
    assert table.options["file.format"] == "parquet"
    assert spark.read.format("paimon").load(path).count() == 20
    _df(spark).write.format("paimon").mode("overwrite").save(path)  # no key option: the existing table as it is
    assert open_table(path).scan().to_arrow().num_rows == 20


def test_creation_errors_name_the_path_or_column_and_create_nothing(spark, warehouse):
    with pytest.raises(SchemaError, match=r"primary key columns \['nope'\] are not in the DataFrame"):
        write(_df(spark), f"{warehouse}/db.db/bad", primary_keys=["nope"])
    assert not os.path.exists(f"{warehouse}/db.db/bad")
    with pytest.raises(OptionError, match=r"must look like <warehouse>/<database>.db/<table>"):
        write(_df(spark), f"{warehouse}/plain/bad")
    with pytest.raises(OptionError, match="bucket"):
        write(_df(spark), f"{warehouse}/fresh.db/bad2", primary_keys=["id"], table_options={"bucket": "many"})
    assert not os.path.exists(f"{warehouse}/fresh.db")  # not even the database it would have created
    with pytest.raises(CapturedException, match="primary key columns"):
        _df(spark).write.format("paimon").mode("append").option("primary-key", "missing").save(f"{warehouse}/db.db/bad3")
