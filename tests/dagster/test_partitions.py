"""Dagster partitions -> Paimon partitions: each run replaces exactly its partitions; mismatches write nothing."""

import datetime as dt
import threading
from concurrent.futures import ThreadPoolExecutor

import dagster as dg
import pyarrow as pa
import pytest

from table_format import FileSystemCatalog
from tests.dagster.helpers import metadata_of, rows, run, snapshot_count

REGIONS = dg.StaticPartitionsDefinition(["eu", "us"])
DAILY = dg.DailyPartitionsDefinition(start_date="2024-05-01")


def test_static_partitions_replace_only_their_partition(warehouse, io_manager, instance):
    version = {"eu": 0, "us": 0}

    @dg.asset(key_prefix="geo", partitions_def=REGIONS, metadata={"partition_expr": "region"})
    def sales(context: dg.AssetExecutionContext) -> pa.Table:
        region = context.partition_key
        version[region] += 1
        return pa.table({"id": [1, 2], "region": [region] * 2, "v": [version[region]] * 2})

    @dg.asset(key_prefix="geo", partitions_def=REGIONS, ins={"sales": dg.AssetIn(key=["geo", "sales"])},
              metadata={"partition_expr": "region"})
    def sales_copy(context: dg.AssetExecutionContext, sales: pa.Table) -> pa.Table:
        assert set(sales.column("region").to_pylist()) == {context.partition_key}
        return sales

    @dg.asset(key_prefix="geo", ins={"sales": dg.AssetIn(key=["geo", "sales"])})
    def total(sales: pa.Table) -> pa.Table:
        return pa.table({"id": [0], "n": [sales.num_rows]})

    run([sales], io_manager, instance, partition_key="eu")
    run([sales], io_manager, instance, partition_key="us")
    result = run([sales, sales_copy], io_manager, instance, partition_key="eu")
    got = rows(warehouse, "geo.sales", sort=["region", "id"])
    assert [(r["region"], r["v"]) for r in got] == [("eu", 2), ("eu", 2), ("us", 1), ("us", 1)]
    meta = metadata_of(result, "geo__sales")
    assert meta["dagster/partition_row_count"] == 2 and meta["dagster/row_count"] == 4
    assert FileSystemCatalog(warehouse).load_table("geo.sales").partition_keys == ["region"]
    assert len(rows(warehouse, "geo.sales_copy")) == 2
    run([sales, total], io_manager, instance, selection=[total])  # unpartitioned downstream reads every partition
    assert rows(warehouse, "geo.total") == [{"id": 0, "n": 4}]


def test_daily_partitions_on_a_date_column_and_a_backfill_range_in_one_run(warehouse, io_manager, instance):
    @dg.asset(key_prefix="web", partitions_def=DAILY, metadata={"partition_expr": "dt"},
              backfill_policy=dg.BackfillPolicy.single_run())
    def visits(context: dg.AssetExecutionContext) -> pa.Table:
        days = [w.start.date() for w in [context.partition_time_window]] if context.partition_key_range.start == \
            context.partition_key_range.end else None
        if days is None:
            start = context.partition_time_window.start.date()
            n = (context.partition_time_window.end.date() - start).days
            days = [start + dt.timedelta(days=i) for i in range(n)]
        return pa.table({"dt": pa.array(days, pa.date32()), "hits": [10] * len(days)})

    run([visits], io_manager, instance, partition_key="2024-05-02")
    run([visits], io_manager, instance, tags={"dagster/asset_partition_range_start": "2024-05-01",
                                              "dagster/asset_partition_range_end": "2024-05-04"})
    got = rows(warehouse, "web.visits", sort=["dt"])
    assert [r["dt"] for r in got] == [dt.date(2024, 5, d) for d in (1, 2, 3, 4)]
    snapshots = FileSystemCatalog(warehouse).load_table("web.visits").snapshots()
    assert [s.commit_kind.value for s in snapshots] == ["OVERWRITE", "OVERWRITE"]


def test_hourly_partitions_on_a_timestamp_column_and_daily_on_a_string_column(warehouse, io_manager, instance):
    hourly = dg.HourlyPartitionsDefinition(start_date="2024-05-01-00:00")

    @dg.asset(key_prefix="iot", partitions_def=hourly, metadata={"partition_expr": "hour"})
    def readings(context: dg.AssetExecutionContext) -> pa.Table:
        start = context.partition_time_window.start.replace(tzinfo=None)
        return pa.table({"hour": pa.array([start, start], pa.timestamp("us")), "value": [1.0, 2.0]})

    @dg.asset(key_prefix="iot", partitions_def=DAILY, metadata={"partition_expr": "day"})
    def daily(context: dg.AssetExecutionContext) -> pa.Table:
        return pa.table({"day": [context.partition_key], "value": [3.0]})

    run([readings], io_manager, instance, partition_key="2024-05-01-03:00")
    run([readings], io_manager, instance, partition_key="2024-05-01-04:00")
    run([readings], io_manager, instance, partition_key="2024-05-01-03:00")
    assert [r["hour"].hour for r in rows(warehouse, "iot.readings", sort=["hour"])] == [3, 3, 4, 4]
    run([daily], io_manager, instance, partition_key="2024-05-03")
    assert rows(warehouse, "iot.daily", sort=["day"]) == [{"day": "2024-05-03", "value": 3.0}]


def test_multi_partitions_map_each_dimension_to_a_column(warehouse, io_manager, instance):
    multi = dg.MultiPartitionsDefinition({"date": DAILY, "region": REGIONS})
    expr = {"date": "dt", "region": "region"}

    @dg.asset(key_prefix="m", partitions_def=multi, metadata={"partition_expr": expr})
    def orders(context: dg.AssetExecutionContext) -> pa.Table:
        keys = context.partition_key.keys_by_dimension
        day = dt.date.fromisoformat(keys["date"])
        return pa.table({"dt": pa.array([day], pa.date32()), "region": [keys["region"]], "n": [len(keys["region"])]})

    @dg.asset(key_prefix="m", partitions_def=multi, metadata={"partition_expr": expr},
              ins={"orders": dg.AssetIn(key=["m", "orders"])})
    def orders_copy(orders: pa.Table) -> pa.Table:
        assert orders.num_rows == 1
        return orders

    for key in ("2024-05-01|eu", "2024-05-01|us", "2024-05-02|eu", "2024-05-01|eu"):
        run([orders, orders_copy], io_manager, instance,
            partition_key=dg.MultiPartitionKey(dict(zip(("date", "region"), key.split("|"), strict=True))))
    got = rows(warehouse, "m.orders", sort=["dt", "region"])
    assert [(r["dt"].isoformat(), r["region"]) for r in got] == [
        ("2024-05-01", "eu"), ("2024-05-01", "us"), ("2024-05-02", "eu")]
    assert FileSystemCatalog(warehouse).load_table("m.orders").partition_keys == ["dt", "region"]
    assert len(rows(warehouse, "m.orders_copy", sort=["dt", "region"])) == 3


@pytest.mark.parametrize(
    ("partitions_def", "metadata", "data", "message"),
    [
        (REGIONS, {"partition_expr": "region"}, {"region": ["us"]}, r"rows of partition \{'region': 'us'\} lie outside"),
        (REGIONS, {"partition_expr": "region"}, {"region": pa.array(["eu", None], pa.string())},
         r"\{'region': None\} lie outside the materialized partition"),
        (REGIONS, {}, {"region": ["eu"]}, "no 'partition_expr'"),
        (REGIONS, {"partition_expr": "nope"}, {"region": ["eu"]}, "column 'nope' is not a column"),
        (REGIONS, {"partition_expr": "region", "partition_keys": ["other"]}, {"region": ["eu"], "other": ["x"]},
         "'region' is not a partition key of the table"),
        (REGIONS, {"partition_expr": "n"}, {"n": [1]}, "is int64, but static and dynamic partition keys need a string"),
        (DAILY, {"partition_expr": "n"}, {"n": [1.0]}, "time-window partitions need a date, timestamp or string"),
        (dg.HourlyPartitionsDefinition(start_date="2024-05-01-00:00"), {"partition_expr": "d"},
         {"d": pa.array([dt.date(2024, 5, 1)], pa.date32())}, "shorter than a day"),
        (DAILY, {"partition_expr": "d"}, {"d": pa.array([dt.date(2024, 5, 2)], pa.date32())}, "lie outside"),
    ],
)
def test_partition_mismatches_raise_and_write_nothing(warehouse, io_manager, instance, partitions_def, metadata,
                                                      data, message):
    @dg.asset(key_prefix="bad", partitions_def=partitions_def, metadata=metadata)
    def target() -> pa.Table:
        return pa.table(data)

    key = partitions_def.get_first_partition_key()
    with pytest.raises(Exception, match=message):
        run([target], io_manager, instance, partition_key=key)
    assert not FileSystemCatalog(warehouse).table_exists("bad.target")


def test_a_mismatch_on_an_existing_table_leaves_it_unchanged(warehouse, io_manager, instance):
    regions = iter(["eu", "us"])

    @dg.asset(key_prefix="geo", partitions_def=REGIONS, metadata={"partition_expr": "region"})
    def sales() -> pa.Table:
        return pa.table({"region": [next(regions)], "v": [1]})

    run([sales], io_manager, instance, partition_key="eu")
    with pytest.raises(Exception, match="lie outside"):
        run([sales], io_manager, instance, partition_key="eu")  # returns a "us" row for partition "eu"
    assert snapshot_count(warehouse, "geo.sales") == 1
    assert rows(warehouse, "geo.sales", sort=["region"]) == [{"region": "eu", "v": 1}]


def test_a_partitioned_asset_cannot_write_into_an_unpartitioned_table(warehouse, io_manager, instance):
    @dg.asset(key_prefix="sw", name="t")
    def unpartitioned() -> pa.Table:
        return pa.table({"region": ["eu"]})

    @dg.asset(key_prefix="sw", name="t", partitions_def=REGIONS, metadata={"partition_expr": "region"})
    def partitioned() -> pa.Table:
        return pa.table({"region": ["eu"]})

    run([unpartitioned], io_manager, instance)
    with pytest.raises(Exception, match=r"not a partition key of the table \(partition keys: \[\]\)"):
        run([partitioned], io_manager, instance, partition_key="eu")
    assert snapshot_count(warehouse, "sw.t") == 1


def test_a_dagster_partition_over_a_coarser_table_partition_replaces_all_its_sub_partitions(
        warehouse, io_manager, instance):
    regions = iter([["eu", "us"], ["eu"]])

    @dg.asset(key_prefix="sub", partitions_def=DAILY,
              metadata={"partition_expr": "dt", "partition_keys": ["dt", "region"]})
    def sales(context: dg.AssetExecutionContext) -> pa.Table:
        names = next(regions, ["us"])
        return pa.table({"dt": [context.partition_key] * len(names), "region": names, "v": [len(names)] * len(names)})

    run([sales], io_manager, instance, partition_key="2024-05-01")
    run([sales], io_manager, instance, partition_key="2024-05-02")
    run([sales], io_manager, instance, partition_key="2024-05-01")  # only "us" now: the "eu" rows of that day go
    got = rows(warehouse, "sub.sales", sort=["dt", "region"])
    assert [(r["dt"], r["region"]) for r in got] == [("2024-05-01", "us"), ("2024-05-02", "eu")]
    assert FileSystemCatalog(warehouse).load_table("sub.sales").partition_keys == ["dt", "region"]


def test_hourly_partitions_on_a_local_zoned_timestamp_column(warehouse, io_manager, instance):
    hourly = dg.HourlyPartitionsDefinition(start_date="2024-05-01-00:00", timezone="Europe/Paris")

    @dg.asset(key_prefix="tz", partitions_def=hourly, metadata={"partition_expr": "hour"})
    def readings(context: dg.AssetExecutionContext) -> pa.Table:
        start = context.partition_time_window.start
        return pa.table({"hour": pa.array([start], pa.timestamp("us", tz="UTC")), "value": [1.0]})

    run([readings], io_manager, instance, partition_key="2024-05-01-05:00")
    run([readings], io_manager, instance, partition_key="2024-05-01-05:00")
    (row,) = rows(warehouse, "tz.readings", sort=["hour"])
    assert row["hour"].isoformat() == "2024-05-01T03:00:00+00:00"  # 05:00 in Paris


def test_concurrent_partitions_of_a_new_table_both_land(warehouse, io_manager):
    """Two partitions' runs at once (a multiprocess backfill): one creates the table, both commit their partition."""
    days = [f"2024-05-0{d}" for d in range(1, 7)]
    barrier = threading.Barrier(len(days))

    contexts = {day: dg.build_output_context(name="result", asset_key=["conc", "t"], partition_key=day,
                                             asset_partitions_def=DAILY, definition_metadata={"partition_expr": "dt"})
                for day in days}

    def write(day: str) -> None:
        barrier.wait()
        io_manager.handle_output(contexts[day], pa.table({"dt": [day], "v": [1]}))

    with ThreadPoolExecutor(len(days)) as pool:
        list(pool.map(write, days))
    assert [r["dt"] for r in rows(warehouse, "conc.t", sort=["dt"])] == days
    assert snapshot_count(warehouse, "conc.t") == len(days)
