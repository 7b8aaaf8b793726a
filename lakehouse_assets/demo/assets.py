"""The demo lakehouse: the table kinds of Paimon's documentation as Dagster assets (database ``shop``).

* ``orders``: CDC orders, primary key (dt, order_id), partitioned by day, 4 buckets, deduplicate, upserts and
  deletes; ``write-only`` so compaction is left to the dedicated ``compact_tables`` job, as Paimon recommends.
* ``payments``, ``shipments``: two event streams (append tables) assembled into ``orders_wide`` by a
  partial-update table with one sequence group per stream. ``payments`` is written with write-audit-publish
  (``"publish": "audit"``): each batch goes into an audit branch, the blocking check ``valid_payments`` reads it, and
  ``payments_published`` fast-forwards main to it only when it passed; ``orders_wide`` reads the published table.
* ``product_sales``: an aggregation table (max price, sum of sales).
* ``clickstream``: an append log partitioned by day, delivered at least once, with Iceberg metadata
  (``metadata.iceberg.storage``: PyIceberg and DuckDB read it); ``user_events`` (polars) deduplicates it with the
  first-row merge engine.
* ``order_changes``: an incremental asset, only the orders' changes since its last run (with row kinds).
* ``daily_revenue``: computed with PySpark from the orders.

Every batch is deterministic (lakehouse_assets/demo/data.py): the n-th materialization of an asset writes batch n.
"""


import dagster as dg
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc
from dagster_pyspark import PySparkResource
from pydantic import Field
from pyspark.sql import DataFrame as SparkDataFrame
from pyspark.sql import functions as F

from lakehouse_assets.audit import AUDIT, PUBLISH, audit_check_result, paimon_publish_asset
from lakehouse_assets.checks import declared_column_schema
from lakehouse_assets.demo import data
from lakehouse_assets.metadata import paimon_kinds

DATABASE = "shop"
GROUP = "demo_lakehouse"
BATCH = "demo/batch"


class BatchConfig(dg.Config):
    batch: int | None = Field(default=None, description="which deterministic batch to write; default: the next one")


def _batch(context: dg.AssetExecutionContext, config: BatchConfig) -> int:
    """The batch to write: as configured, else one past the last batch this asset recorded (0 at first)."""
    if config.batch is not None:
        return config.batch
    records = context.instance.fetch_materializations(context.asset_key, limit=50).records
    for record in records:
        materialization = record.asset_materialization
        if materialization is not None and BATCH in materialization.metadata:
            return int(materialization.metadata[BATCH].value) + 1
    return 0


def _table(schema: pa.Schema, *, primary_keys: tuple[str, ...] = (), partition_keys: tuple[str, ...] = (),
           options: dict[str, str] | None = None, mode: str) -> dict[str, object]:
    """Definition metadata declaring the asset's Paimon table."""
    metadata: dict[str, object] = {"dagster/column_schema": declared_column_schema(schema), "mode": mode,
                                   "table_options": options or {}}
    if primary_keys:
        metadata["primary_keys"] = list(primary_keys)
    if partition_keys:
        metadata["partition_keys"] = list(partition_keys)
    return metadata


@dg.asset(key_prefix=DATABASE, group_name=GROUP, kinds=paimon_kinds("pyarrow"),
          description="CDC orders: upserts and deletes, deduplicated by (dt, order_id); 4 buckets per day",
          metadata=_table(data.ORDERS_SCHEMA, primary_keys=("dt", "order_id"), partition_keys=("dt",), mode="upsert",
                          options={"bucket": "4", "merge-engine": "deduplicate", "changelog-producer": "input",
                                   "write-only": "true"}))
def orders(context: dg.AssetExecutionContext, config: BatchConfig) -> dg.Output[pa.Table]:
    batch = _batch(context, config)
    return dg.Output(data.orders_batch(batch), metadata={BATCH: batch})


class PaymentsConfig(BatchConfig):
    plant_bad_rows: bool = Field(default=False, description="plant a bad batch (negative amounts, orders paid "
                                 "twice): the blocking audit check valid_payments keeps it out of the table")


@dg.asset(key_prefix=DATABASE, group_name=GROUP, kinds=paimon_kinds("pyarrow"),
          description="Payment events (append), write-audit-publish: each batch is written into an audit branch, "
                      "checked by valid_payments, and published to main by payments_published only if it passed",
          metadata={**_table(data.PAYMENTS_SCHEMA, mode="append"), PUBLISH: AUDIT})
def payments(context: dg.AssetExecutionContext, config: PaymentsConfig) -> dg.Output[pa.Table]:
    batch = _batch(context, config)
    rows = data.bad_payments(batch) if config.plant_bad_rows else data.payments_batch(batch)
    return dg.Output(rows, metadata={BATCH: batch, "demo/planted_bad_rows": config.plant_bad_rows})


@dg.asset_check(asset=payments, blocking=True, description="The audit of a payments batch before it is published "
                "(blocking): no negative amount, no order paid twice, over the table as the batch leaves it")
def valid_payments(context: dg.AssetCheckExecutionContext, payments: pa.Table) -> dg.AssetCheckResult:
    """Reads the audit branch (the IO manager loads it for this run's check); the result names the branch."""
    negative = pc.sum(pc.less(payments["amount_paid"], 0)).as_py() or 0
    per_order = payments.group_by("order_id").aggregate([([], "count_all")])
    twice = pc.sum(pc.greater(per_order["count_all"], 1)).as_py() or 0
    return audit_check_result(
        context, passed=negative == 0 and twice == 0, description=f"{negative} negative amounts, {twice} orders "
        "paid more than once", metadata={"rows": payments.num_rows, "negative_amounts": negative,
                                         "orders_paid_twice": twice})


payments_published = paimon_publish_asset(payments, group_name=GROUP)


@dg.asset(key_prefix=DATABASE, group_name=GROUP, kinds=paimon_kinds("pyarrow"),
          description="Shipment events (append)", metadata=_table(data.SHIPMENTS_SCHEMA, mode="append"))
def shipments(context: dg.AssetExecutionContext, config: BatchConfig) -> dg.Output[pa.Table]:
    batch = _batch(context, config)
    return dg.Output(data.shipments_batch(batch), metadata={BATCH: batch})


WIDE_SCHEMA = pa.schema([pa.field("order_id", pa.int64(), nullable=False),
                         *data.PAYMENTS_SCHEMA.remove(0), *data.SHIPMENTS_SCHEMA.remove(0)])


@dg.asset(key_prefix=DATABASE, group_name=GROUP, kinds=paimon_kinds("pyarrow"),
          ins={"payments": dg.AssetIn(key=[DATABASE, "payments"]), "shipments": dg.AssetIn(key=[DATABASE, "shipments"])},
          deps=[payments_published],  # reads the payments once published (main), never an unaudited batch
          description="One wide row per order, assembled by partial-update: one sequence group per stream",
          metadata=_table(WIDE_SCHEMA, primary_keys=("order_id",), mode="upsert", options={
              "bucket": "2", "merge-engine": "partial-update",
              "fields.pay_time.sequence-group": "amount_paid,payment_status",
              "fields.ship_time.sequence-group": "carrier,ship_status"}))
def orders_wide(payments: pa.Table, shipments: pa.Table) -> pa.Table:
    """Both streams as rows of the wide table; the merge engine fills each group from its own stream."""
    def widen(events: pa.Table) -> pa.Table:
        return pa.table({f.name: events[f.name] if f.name in events.column_names
                         else pa.nulls(events.num_rows, f.type) for f in WIDE_SCHEMA}, schema=WIDE_SCHEMA)
    return pa.concat_tables([widen(payments), widen(shipments)])


@dg.asset(key_prefix=DATABASE, group_name=GROUP, kinds=paimon_kinds("pyarrow"),
          description="Product sales: aggregation merge engine, max(price) and sum(sales) per product",
          metadata=_table(data.SALES_SCHEMA, primary_keys=("product_id",), mode="upsert", options={
              "bucket": "1", "merge-engine": "aggregation",
              "fields.price.aggregate-function": "max", "fields.sales.aggregate-function": "sum"}))
def product_sales(context: dg.AssetExecutionContext, config: BatchConfig) -> dg.Output[pa.Table]:
    batch = _batch(context, config)
    return dg.Output(data.sales_batch(batch), metadata={BATCH: batch})


@dg.asset(key_prefix=DATABASE, group_name=GROUP, kinds=paimon_kinds("pyarrow"),
          description="Page views, an append log partitioned by day (delivered at least once); with Iceberg metadata, "
                      "so Iceberg readers (PyIceberg, DuckDB) read it too",
          metadata=_table(data.CLICKSTREAM_SCHEMA, partition_keys=("dt",), mode="append",
                          options={"metadata.iceberg.storage": "table-location"}))
def clickstream(context: dg.AssetExecutionContext, config: BatchConfig) -> dg.Output[pa.Table]:
    batch = _batch(context, config)
    return dg.Output(data.clickstream_batch(batch), metadata={BATCH: batch})


USER_EVENTS_SCHEMA = pa.schema([pa.field("event_id", pa.int64(), nullable=False), ("user_id", pa.int64()),
                                ("page", pa.string()), ("event_time", pa.timestamp("us")),
                                ("received_at", pa.timestamp("us"))])


@dg.asset(key_prefix=DATABASE, group_name=GROUP, kinds=paimon_kinds("polars"),
          ins={"clickstream": dg.AssetIn(key=[DATABASE, "clickstream"], metadata={"incremental": True})},
          description="Each event once, as first delivered (first-row merge engine), computed with polars",
          metadata=_table(USER_EVENTS_SCHEMA, primary_keys=("event_id",), mode="upsert",
                          options={"bucket": "2", "merge-engine": "first-row"}))
def user_events(clickstream: pl.DataFrame) -> pl.DataFrame:
    """The new clickstream rows (an append log's changes are inserts), in delivery order."""
    return clickstream.sort("received_at").select(USER_EVENTS_SCHEMA.names)


ORDER_CHANGES_SCHEMA = pa.schema([pa.field("dt", pa.string(), nullable=False), ("order_id", pa.int64()),
                                  ("status", pa.string()), ("amount", pa.float64()), ("change_kind", pa.string())])


@dg.asset(key_prefix=DATABASE, group_name=GROUP, kinds=paimon_kinds("pyarrow"),
          ins={"orders": dg.AssetIn(key=[DATABASE, "orders"], metadata={"incremental": True})},
          description="The orders' changes since this asset last ran (incremental input), appended with their kind",
          metadata=_table(ORDER_CHANGES_SCHEMA, partition_keys=("dt",), mode="append"))
def order_changes(orders: pa.Table) -> dg.Output[pa.Table]:
    changes = orders.select(["dt", "order_id", "status", "amount"]).append_column("change_kind", orders["_row_kind"])
    kinds = changes.group_by("change_kind").aggregate([([], "count_all")])
    counts = dict(zip(kinds["change_kind"].to_pylist(), kinds["count_all"].to_pylist(), strict=True))
    return dg.Output(changes.cast(ORDER_CHANGES_SCHEMA),
                     metadata={"changes": len(changes), **{f"changes/{k}": v for k, v in sorted(counts.items())}})


DAILY_REVENUE_SCHEMA = pa.schema([pa.field("dt", pa.string(), nullable=False), ("orders", pa.int64()),
                                  ("revenue", pa.float64())])


@dg.asset(key_prefix=DATABASE, group_name=GROUP, kinds=paimon_kinds("pyspark"),
          ins={"orders": dg.AssetIn(key=[DATABASE, "orders"])},
          description="Revenue per day of the live orders, computed with PySpark",
          metadata=_table(DAILY_REVENUE_SCHEMA, primary_keys=("dt",), mode="overwrite", options={"bucket": "1"}))
def daily_revenue(orders: SparkDataFrame, pyspark: PySparkResource) -> SparkDataFrame:
    live = orders.where(F.col("status") != F.lit("cancelled"))
    return (live.groupBy("dt").agg(F.count("order_id").cast("long").alias("orders"),
                                   F.round(F.sum("amount"), 2).alias("revenue"))
            .select("dt", "orders", "revenue"))


DEMO_ASSETS = (orders, payments, shipments, orders_wide, product_sales, clickstream, user_events, order_changes,
               daily_revenue)  # the tables (each one with the table health checks)
AUDIT_ASSETS = (payments_published,)  # write-audit-publish of shop.payments: its publish step and audit check
AUDIT_CHECKS = (valid_payments,)
