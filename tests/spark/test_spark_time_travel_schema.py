"""Time travel across schema evolution: Spark reads a snapshot with the schema it was written with, as table.scan."""

from __future__ import annotations

import pyarrow as pa
import pytest
from pyspark.sql.utils import CapturedException

from jobs.spark.types import spark_schema
from table_format import FileSystemCatalog, SchemaChange, write_table

pytestmark = pytest.mark.spark

BEFORE = pa.schema([pa.field("id", pa.int64(), nullable=False), ("name", pa.string()), ("qty", pa.int32()),
                    ("note", pa.string())])

# change, the rows written after it (in the new schema), the old columns the "columns" option names
EVOLUTIONS = {
    "rename": (SchemaChange.rename_column("name", "label"),
               {"id": [10, 11], "label": ["x", None], "qty": [7, 8], "note": ["p", "q"]}, "name,id"),
    "add": (SchemaChange.add_column("extra", pa.float64()),
            {"id": [10, 11], "name": ["x", "y"], "qty": [7, None], "note": ["p", "q"], "extra": [0.5, None]},
            "note,qty"),
    "drop": (SchemaChange.drop_column("note"), {"id": [10, 11], "name": ["x", "y"], "qty": [7, 8]}, "note,id"),
    "widen": (SchemaChange.update_column_type("qty", pa.int64()),
              {"id": [10, 11], "name": ["x", "y"], "qty": [2**40, -1], "note": ["p", None]}, "qty"),
}


def _sorted(rows):
    return sorted(rows, key=lambda r: tuple((v is None, str(v)) for v in r.values()))


def _assert_same(df, ours: pa.Table, *, table: str) -> None:
    """Spark's columns, names, types and rows are those of table_format's read."""
    assert df.schema == spark_schema(ours.schema, table=table)
    assert _sorted(df.toArrow().to_pylist()) == _sorted(ours.to_pylist())


@pytest.fixture(params=sorted(EVOLUTIONS))
def evolved(request, warehouse):
    """Snapshot 1 (tagged "v1") in the first schema, then one schema change, then snapshot 2 in the new schema."""
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db", exist_ok=True)
    table = catalog.create_table(f"db.{request.param}", BEFORE)
    write_table(table, pa.table({"id": [1, 2, 3], "name": ["a", "b", None], "qty": [1, None, 3],
                                 "note": ["n1", None, "n3"]}, schema=BEFORE))
    table.create_tag("v1")
    change, rows, old_columns = EVOLUTIONS[request.param]
    table = catalog.alter_table(f"db.{request.param}", [change])
    write_table(table, pa.table(rows, schema=table.arrow_schema))
    return table, old_columns


def test_snapshot_id_and_tag_read_that_snapshots_schema(spark, evolved):
    table, _ = evolved

    def read():
        return spark.read.format("paimon")

    old = table.scan(snapshot_id=1).to_arrow()
    assert old.schema.names == BEFORE.names and old.num_rows == 3
    _assert_same(read().option("snapshot-id", "1").load(table.path), old, table=table.identifier)
    _assert_same(read().option("tag", "v1").load(table.path), table.scan(tag="v1").to_arrow(), table=table.identifier)
    _assert_same(read().option("snapshot-id", "2").load(table.path), table.scan(snapshot_id=2).to_arrow(),
                 table=table.identifier)
    latest = table.scan().to_arrow()
    assert latest.schema.names == table.arrow_schema.names and latest.num_rows == 5
    _assert_same(read().load(table.path), latest, table=table.identifier)


def test_columns_option_names_the_snapshots_columns(spark, evolved):
    table, old_columns = evolved
    columns = old_columns.split(",")
    for travel in ({"snapshot-id": "1"}, {"tag": "v1"}):
        df = spark.read.format("paimon").options(**travel).option("columns", old_columns).load(table.path)
        assert df.columns == columns
        scan = {"snapshot_id": 1} if "snapshot-id" in travel else {"tag": "v1"}
        _assert_same(df, table.scan(columns=columns, **scan).to_arrow(), table=table.identifier)
    missing = sorted(set(table.arrow_schema.names) - set(BEFORE.names))
    if missing:  # a column added or renamed later is unknown at snapshot 1
        with pytest.raises(CapturedException, match=f"unknown columns \\[{missing[0]!r}\\]"):
            spark.read.format("paimon").option("snapshot-id", "1").option("columns", missing[0]) \
                .load(table.path).schema  # noqa: B018


def test_pushed_filter_on_an_old_column(spark, evolved):
    table, _ = evolved
    df = (spark.read.format("paimon").option("pushdown", "true").option("snapshot-id", "1").load(table.path)
          .where("qty >= 1 AND name IS NOT NULL"))
    ours = table.scan(snapshot_id=1, filter=[("qty", ">=", 1), ("name", "is_not_null")]).to_arrow()
    assert ours.num_rows == 1
    _assert_same(df, ours, table=table.identifier)


def test_incremental_across_the_change_has_the_current_schema_as_table_changes(spark, evolved):
    table, _ = evolved
    for start in (0, 1):
        df = spark.read.format("paimon").option("incremental-between", f"{start},2").load(table.path)
        ours = table.changes(start, 2)
        assert df.columns == ours.schema.names == [*table.arrow_schema.names, "_row_kind"]
        assert _sorted(df.toArrow().to_pylist()) == _sorted(ours.to_pylist())
