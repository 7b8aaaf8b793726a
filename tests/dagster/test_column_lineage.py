"""``dagster/column_lineage``: computed from a Spark DataFrame asset's analyzed plan, or declared on an asset."""

import dagster as dg
import pyarrow as pa
import pytest
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from lakehouse_assets import PaimonIOManager, pyspark_resource
from lakehouse_assets.lineage import asset_key_of_path, declared_lineage
from lakehouse_assets.table_spec import PaimonAssetError

ORDERS, PAYMENTS = dg.AssetKey(["shop", "orders"]), dg.AssetKey(["shop", "payments"])


def lineage_of(result: dg.ExecuteInProcessResult, node: str) -> dict[str, set[tuple[str, str]]]:
    (materialization,) = result.asset_materializations_for_node(node)
    lineage = materialization.metadata["dagster/column_lineage"].value
    return {column: {(d.asset_key.to_user_string(), d.column_name) for d in deps}
            for column, deps in lineage.deps_by_column.items()}


def test_spark_asset_lineage_from_the_analyzed_plan(spark, warehouse, instance):
    @dg.asset(key=ORDERS, metadata={"primary_keys": ["id"]})
    def orders() -> pa.Table:
        return pa.table({"id": pa.array([1, 2, 3], pa.int64()), "dt": ["a", "a", "b"], "amount": [1.0, 2.0, 4.0]})

    @dg.asset(key=PAYMENTS)
    def payments() -> pa.Table:
        return pa.table({"order_id": pa.array([1, 3], pa.int64()), "paid": [0.5, 1.5]})

    @dg.asset(key=["shop", "revenue"], ins={"orders": dg.AssetIn(ORDERS), "payments": dg.AssetIn(PAYMENTS)})
    def revenue(orders: DataFrame, payments: DataFrame) -> DataFrame:
        joined = orders.join(payments, orders.id == payments.order_id, "left").filter("amount > 0")
        return joined.groupBy("dt").agg((F.sum("amount") + F.coalesce(F.sum("paid"), F.lit(0.0))).alias("total"),
                                        F.count("*").alias("orders"))

    @dg.asset(key=["shop", "order_ids"], ins={"orders": dg.AssetIn(ORDERS, metadata={"incremental": True})})
    def order_ids(orders: DataFrame) -> DataFrame:  # an incremental input: a union of change reads
        return orders.select(F.col("id").alias("order_id"), "_row_kind").withColumnRenamed("_row_kind", "kind")

    resources = {"io_manager": PaimonIOManager(warehouse=warehouse), "pyspark": pyspark_resource()}
    result = dg.materialize([orders, payments, revenue, order_ids], resources=resources, instance=instance)
    assert lineage_of(result, "shop__revenue") == {
        "dt": {("shop/orders", "dt")},
        "total": {("shop/orders", "amount"), ("shop/payments", "paid")},
    }  # count(*) reads no column
    assert lineage_of(result, "shop__order_ids") == {"order_id": {("shop/orders", "id")}}
    (orders_event,) = result.asset_materializations_for_node("shop__orders")
    assert "dagster/column_lineage" not in orders_event.metadata  # pyarrow data: nothing known, nothing claimed


def test_declared_lineage(warehouse, instance):
    @dg.asset(key=["shop", "summary"], metadata={"column_lineage": {"total": ["shop.orders.amount",
                                                                              "shop.payments.paid"]}})
    def summary() -> pa.Table:
        return pa.table({"total": [1.0]})

    result = dg.materialize([summary], resources={"io_manager": PaimonIOManager(warehouse=warehouse)},
                            instance=instance)
    assert lineage_of(result, "shop__summary") == {"total": {("shop/orders", "amount"), ("shop/payments", "paid")}}
    with pytest.raises(PaimonAssetError, match="'shop.orders' is not 'database.table.column'"):
        declared_lineage({"column_lineage": {"total": ["shop.orders"]}}, "asset 'x'")


def test_table_paths_map_to_asset_keys():
    assert asset_key_of_path("s3://bucket/wh/shop.db/orders") == ORDERS
    assert asset_key_of_path("/tmp/wh/shop.db/orders/") == ORDERS
    assert asset_key_of_path("/tmp/elsewhere/orders") is None
