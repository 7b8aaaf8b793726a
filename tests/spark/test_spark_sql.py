"""spark.sql over Paimon tables: session tables (CREATE TABLE ... USING paimon), INSERT INTO / OVERWRITE, time
travel, and register_warehouse joining two tables of a warehouse."""

from __future__ import annotations

import pyarrow as pa
import pytest
from pyspark.errors import AnalysisException
from pyspark.sql.utils import CapturedException

from jobs.spark import register_table, register_warehouse
from table_format import FileSystemCatalog, open_table, write_table

pytestmark = pytest.mark.spark

SCHEMA = pa.schema([("id", pa.int64(), False), ("dt", pa.string(), False), ("v", pa.string())])


def _table(warehouse: str, name: str, rows: list[tuple[int, str, str]], **kwargs):
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db", exist_ok=True)
    table = catalog.create_table(f"db.{name}", SCHEMA, **kwargs)
    if rows:
        write_table(table, _arrow(rows))
    return table


def _arrow(rows):
    return pa.table({"id": pa.array([r[0] for r in rows], pa.int64()), "dt": [r[1] for r in rows],
                     "v": [r[2] for r in rows]}, schema=SCHEMA)


def _ours(table, **scan):
    return sorted(tuple(r.values()) for r in open_table(table.path).scan(**scan).to_arrow().to_pylist())


def _sql(spark, query):
    return sorted(tuple(r) for r in spark.sql(query).collect())


def test_session_table_select_insert_overwrite(spark, warehouse, oracle):
    table = _table(warehouse, "orders", [(1, "a", "x"), (2, "a", "y"), (3, "b", "z")],
                   primary_keys=["dt", "id"], partition_keys=["dt"], options={"bucket": "2"})
    write_table(table, _arrow([(2, "a", "y2")]))  # an update: SELECT reads the merged view
    spark.sql("DROP TABLE IF EXISTS sql_orders")
    spark.sql(f"CREATE TABLE sql_orders USING paimon OPTIONS (path '{table.path}')")
    assert _sql(spark, "SELECT * FROM sql_orders") == [(1, "a", "x"), (2, "a", "y2"), (3, "b", "z")]
    assert _sql(spark, "SELECT dt, count(*) FROM sql_orders GROUP BY dt") == [("a", 2), ("b", 1)]

    before = table.latest_snapshot().id
    spark.sql("INSERT INTO sql_orders VALUES (4, 'b', 'w'), (1, 'a', 'x2')")
    assert table.latest_snapshot().id == before + 1  # one commit
    assert _sql(spark, "SELECT * FROM sql_orders") == [(1, "a", "x2"), (2, "a", "y2"), (3, "b", "z"), (4, "b", "w")]

    # a PARTITION clause is refused by Spark for Python data sources (their tables report no partitioning, see
    # docs/spark.md); overwrite-partitions does it. Both refusals are canaries: a PySpark that lifts them fails here
    for statement in ("INSERT OVERWRITE sql_orders PARTITION (dt='b') SELECT 9, 'q'",
                      "INSERT INTO sql_orders PARTITION (dt='b') SELECT 9, 'q'"):
        with pytest.raises(AnalysisException, match="NON_PARTITION_COLUMN.*`dt`"):
            spark.sql(statement)
    assert table.latest_snapshot().id == before + 1  # nothing committed
    spark.sql("INSERT OVERWRITE sql_orders WITH ('overwrite-partitions' = 'dt=b') SELECT 9, 'b', 'q'")
    assert _sql(spark, "SELECT * FROM sql_orders") == [(1, "a", "x2"), (2, "a", "y2"), (9, "b", "q")]
    spark.sql("INSERT OVERWRITE sql_orders SELECT 5, 'c', 'only'")
    after_overwrite = table.latest_snapshot().id
    assert _sql(spark, "SELECT * FROM sql_orders") == [(5, "c", "only")] == _ours(table)
    assert sorted(tuple(r.values()) for r in oracle.read(warehouse, "db", "orders")) == [(5, "c", "only")]

    # time travel: per query (WITH) or a read-only session table created with the option
    assert _sql(spark, f"SELECT * FROM sql_orders WITH ('snapshot-id' = '{before}')") == \
        [(1, "a", "x"), (2, "a", "y2"), (3, "b", "z")]
    table.create_tag("v1", snapshot_id=before)
    spark.sql("DROP TABLE IF EXISTS sql_orders_v1")
    spark.sql(f"CREATE TABLE sql_orders_v1 USING paimon OPTIONS (path 'file://{table.path}', 'tag' 'v1')")
    assert _sql(spark, "SELECT * FROM sql_orders_v1") == _ours(table, tag="v1")
    with pytest.raises(CapturedException, match="time-travel"):
        spark.sql("INSERT INTO sql_orders_v1 VALUES (7, 'a', 'no')")
    assert table.latest_snapshot().id == after_overwrite


def test_location_and_errors(spark, warehouse):
    table = _table(warehouse, "app", [(1, "a", "x")])
    spark.sql("DROP TABLE IF EXISTS sql_app")
    spark.sql(f"CREATE TABLE sql_app USING paimon LOCATION 'file:{table.path}'")
    spark.sql("INSERT INTO sql_app SELECT id + 10, dt, v FROM sql_app")
    assert _sql(spark, "SELECT id FROM sql_app") == [(1,), (11,)] == [(r[0],) for r in _ours(table)]
    with pytest.raises(CapturedException, match="DELETE|does not support deletes"):
        spark.sql("DELETE FROM sql_app WHERE id = 1")
    spark.sql("DROP TABLE sql_app")  # an external table: the Paimon table stays
    assert len(_ours(table)) == 2
    # a column list gives PySpark's data source no path: the read fails naming what to do
    spark.sql("DROP TABLE IF EXISTS sql_cols")
    spark.sql(f"CREATE TABLE sql_cols (id BIGINT, dt STRING, v STRING) USING paimon OPTIONS (path '{table.path}')")
    with pytest.raises(CapturedException, match="without columns"):
        spark.sql("SELECT * FROM sql_cols").collect()
    spark.sql("DROP TABLE sql_cols")


def test_register_warehouse_joins_two_tables(spark, tmp_path):
    warehouse = str(tmp_path / "wh")
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("shop")
    catalog.create_database("other")
    orders = catalog.create_table("shop.orders", pa.schema([("order_id", pa.int64(), False), ("amount", pa.float64())]),
                                  primary_keys=["order_id"], options={"bucket": "2"})
    payments = catalog.create_table("shop.payments", pa.schema([("order_id", pa.int64()), ("paid", pa.float64())]))
    catalog.create_table("other.t", pa.schema([("x", pa.int64())]))
    write_table(orders, pa.table({"order_id": pa.array([1, 2, 3], pa.int64()), "amount": [10.0, 20.0, 30.0]}))
    write_table(payments, pa.table({"order_id": pa.array([1, 1, 3], pa.int64()), "paid": [4.0, 6.0, 30.0]}))

    names = register_warehouse(spark, warehouse, databases=["shop"])
    assert names == ["shop.orders", "shop.payments"]
    query = ("SELECT o.order_id, o.amount - coalesce(sum(p.paid), 0) AS due FROM shop.orders o "
             "LEFT JOIN shop.payments p ON o.order_id = p.order_id GROUP BY o.order_id, o.amount")
    assert _sql(spark, query) == [(1, 0.0), (2, 20.0), (3, 0.0)]
    assert not (tmp_path / "spark-warehouse").exists()

    # the library's calls change the tables (an update); the next query sees it, a second call is idempotent
    write_table(orders, pa.table({"order_id": pa.array([2], pa.int64()), "amount": [5.0]}))
    assert register_warehouse(spark, warehouse, databases=["shop"]) == names
    assert _sql(spark, query) == [(1, 0.0), (2, 5.0), (3, 0.0)]
    spark.sql("INSERT INTO shop.payments VALUES (2, 5.0)")
    assert _sql(spark, query) == [(1, 0.0), (2, 0.0), (3, 0.0)]
    register_table(spark, "shop.orders_at_1", catalog.table_uri("shop.orders"), options={"snapshot-id": "1"})
    assert _sql(spark, "SELECT amount FROM shop.orders_at_1 WHERE order_id = 2") == [(20.0,)]
    with pytest.raises(Exception, match="no databases"):
        register_warehouse(spark, warehouse, databases=["missing"])
