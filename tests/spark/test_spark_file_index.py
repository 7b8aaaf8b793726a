"""Spark writes (df.write.format("paimon"), one task per partition) give every data file Paimon's bloom-filter file
index, which our scans and Java Paimon's reads then use (tests/table_format/test_file_index.py has the details)."""

from __future__ import annotations

import pyarrow as pa
import pytest

from table_format import FileSystemCatalog

pytestmark = pytest.mark.spark


def test_spark_tasks_write_the_file_index(spark, warehouse, oracle):
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db", exist_ok=True)
    schema = pa.schema([("id", pa.int64()), ("s", pa.string())])
    table = catalog.create_table("db.idx", schema, options={
        "bucket": "-1", "file-index.bloom-filter.columns": "s", "file-index.bloom-filter.s.items": "50"})
    rows = pa.table({"id": pa.array(range(40), pa.int64()), "s": [f"v{i % 4}-{i}" for i in range(40)]})
    spark.createDataFrame(rows).repartition(4, "id").write.format("paimon").mode("append").save(table.path)
    table = table.refresh()
    entries = table.store.manifests.live_files(table.store.snapshots.latest())
    assert len(entries) == 4 and all(e.file.embedded_index is not None for e in entries)
    plan = table.scan(filter=[("s", "=", "v1-13")]).plan()
    assert sum(len(s.files) for s in plan) == 1
    assert table.scan(filter=[("s", "=", "v1-13")]).to_arrow().column("id").to_pylist() == [13]
    assert sorted(r["id"] for r in oracle.read(warehouse, "db", "idx")) == list(range(40))
