"""A table built by Dagster materializations (partition overwrite and upsert) reads the same in Java Paimon 0.9."""

import datetime as dt

import dagster as dg
import pyarrow as pa

from lakehouse_assets import PaimonIOManager
from tests.dagster.helpers import rows, run

DAILY = dg.DailyPartitionsDefinition(start_date="2024-05-01")


def test_java_paimon_reads_what_the_io_manager_wrote(warehouse, instance, oracle):
    version = {"n": 0}

    @dg.asset(key_prefix="db", partitions_def=DAILY,
              metadata={"partition_expr": "dt", "primary_keys": ["dt", "id"], "mode": "upsert",
                        "table_options": {"bucket": "2"}})
    def orders(context: dg.AssetExecutionContext) -> pa.Table:
        version["n"] += 1
        day = context.partition_time_window.start.date()
        return pa.table({"dt": pa.array([day] * 2, pa.date32()), "id": pa.array([1, version["n"] + 1], pa.int32()),
                         "amount": pa.array([float(version["n"])] * 2, pa.float64())})

    io_manager = PaimonIOManager(warehouse=warehouse)
    for key in ("2024-05-01", "2024-05-02", "2024-05-01"):
        run([orders], io_manager, instance, partition_key=key)
    ours = rows(warehouse, "db.orders", sort=["dt", "id"])
    assert [(r["dt"], r["id"], r["amount"]) for r in ours] == [
        (dt.date(2024, 5, 1), 1, 3.0), (dt.date(2024, 5, 1), 2, 1.0), (dt.date(2024, 5, 1), 4, 3.0),
        (dt.date(2024, 5, 2), 1, 2.0), (dt.date(2024, 5, 2), 3, 2.0)]
    java = oracle.read(warehouse, "db", "orders")
    assert sorted((str(r["dt"]), int(r["id"]), float(r["amount"])) for r in java) == [
        (r["dt"].isoformat(), r["id"], r["amount"]) for r in ours]
