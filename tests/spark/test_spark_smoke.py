"""The session fixture and the data source on the smallest table."""

from __future__ import annotations

import pyarrow as pa
import pytest

from table_format import FileSystemCatalog, write_table

pytestmark = pytest.mark.spark


def test_read_small_table(spark, warehouse):
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db")
    table = catalog.create_table("db.t", pa.schema([("id", pa.int64()), ("name", pa.string())]))
    write_table(table, pa.table({"id": [1, 2, 3], "name": ["a", "b", "c"]}))
    df = spark.read.format("paimon").load(table.path)
    assert sorted(df.toArrow().to_pylist(), key=lambda r: r["id"]) == [
        {"id": 1, "name": "a"}, {"id": 2, "name": "b"}, {"id": 3, "name": "c"}]
