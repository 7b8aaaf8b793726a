"""The demo code location: Definitions load and validate, and the demo builds end to end (twice-materialized assets,
each maintenance job once) with every table's contents checked against the generated batches."""

import io
from contextlib import redirect_stdout
from pathlib import Path

import dagster as dg
import polars as pl
import pytest
import yaml

from lakehouse_assets.demo import data
from lakehouse_definitions import build_definitions, build_demo
from table_format import FileSystemCatalog

pytestmark = pytest.mark.dagster
REPO = Path(__file__).resolve().parents[3]
TABLES = ("orders", "payments", "shipments", "orders_wide", "product_sales", "clickstream", "user_events",
          "order_changes", "daily_revenue")


def test_definitions_load_and_validate(warehouse):
    defs = build_definitions(warehouse=warehouse)
    dg.Definitions.validate_loadable(defs)
    repo = defs.get_repository_def()
    assert {k.to_user_string() for k in repo.asset_graph.get_all_asset_keys()} == {f"shop/{t}" for t in TABLES}
    assert {"compact_tables", "expire_snapshots", "rescale_table", "remove_orphan_files"} <= set(repo.job_names)
    assert [s.name for s in repo.sensor_defs] == ["compaction_sensor"]
    assert sorted(s.name for s in repo.schedule_defs) == ["nightly_expire_snapshots", "remove_orphan_files_schedule"]
    assert len(repo.asset_graph.asset_check_keys) == 4 * len(TABLES)
    graph = repo.asset_graph
    parents = {k.to_user_string(): {p.to_user_string() for p in graph.get(k).parent_keys}
               for k in graph.get_all_asset_keys()}
    assert parents["shop/orders_wide"] == {"shop/payments", "shop/shipments"}
    assert parents["shop/order_changes"] == parents["shop/daily_revenue"] == {"shop/orders"}
    assert parents["shop/user_events"] == {"shop/clickstream"}


def test_workspace_yaml_loads_the_code_location():
    workspace = yaml.safe_load((REPO / "workspace.yaml").read_text())
    (location,) = workspace["load_from"]
    module = location["python_module"]
    assert (module["module_name"], module["attribute"]) == ("lakehouse_definitions", "defs")
    import lakehouse_definitions

    assert isinstance(lakehouse_definitions.defs, dg.Definitions)


def frame(catalog: FileSystemCatalog, name: str) -> pl.DataFrame:
    return catalog.load_table(f"shop.{name}").scan().to_polars()


def test_demo_builds_end_to_end(tmp_path, monkeypatch, spark):
    warehouse = tmp_path / "warehouse"
    monkeypatch.setenv("LAKEHOUSE_WAREHOUSE", str(warehouse))
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "dagster_home"))
    (tmp_path / "dagster_home").mkdir()
    out = io.StringIO()
    with redirect_stdout(out):
        assert build_demo.main() == 0
    printed = out.getvalue()
    print(printed)
    for job in ("compact_tables", "rescale_table", "expire_snapshots", "remove_orphan_files"):
        assert f"{job}: ok" in printed
    catalog = FileSystemCatalog(str(warehouse))
    assert sorted(catalog.list_tables("shop")) == sorted(TABLES)

    batches = [data.orders_batch(b) for b in (0, 1)]
    cdc = pl.concat([pl.from_arrow(b) for b in batches])
    deleted = set(cdc.filter(pl.col("_row_kind") == "-D")["order_id"].to_list())
    orders = frame(catalog, "orders")
    assert orders.height == 2 * data.ORDERS_PER_BATCH - len(deleted)
    assert deleted.isdisjoint(orders["order_id"].to_list())
    latest = cdc.unique("order_id", keep="last", maintain_order=True).filter(pl.col("_row_kind") != "-D")
    latest = latest.sort("order_id")
    assert orders.sort("order_id")["status"].to_list() == latest["status"].to_list()

    changes = frame(catalog, "order_changes")  # incremental: every change exactly once, across both runs
    assert changes.height == cdc.height
    assert dict(changes.group_by("change_kind").len().iter_rows()) == dict(cdc.group_by("_row_kind").len().iter_rows())

    sales = pl.concat([pl.from_arrow(data.sales_batch(b)) for b in (0, 1)])
    expected = sales.group_by("product_id").agg(pl.col("price").max(), pl.col("sales").sum()).sort("product_id")
    assert frame(catalog, "product_sales").sort("product_id").equals(expected.select(["product_id", "price", "sales"]))

    clicks = pl.concat([pl.from_arrow(data.clickstream_batch(b)) for b in (0, 1)])
    events = frame(catalog, "user_events")
    assert events.height == clicks["event_id"].n_unique()
    first = clicks.sort("received_at").unique("event_id", keep="first").sort("event_id")
    assert events.sort("event_id")["received_at"].to_list() == first["received_at"].to_list()
    assert catalog.load_table("shop.user_events").options["bucket"] == "4"  # rescaled by rescale_table

    payments = pl.concat([pl.from_arrow(data.payments_batch(b)) for b in (0, 1)])
    shipments = pl.concat([pl.from_arrow(data.shipments_batch(b)) for b in (0, 1)])
    wide = frame(catalog, "orders_wide")
    both = set(payments["order_id"].to_list()) & set(shipments["order_id"].to_list())
    assert wide.height == len(set(payments["order_id"].to_list()) | set(shipments["order_id"].to_list()))
    merged = wide.filter(pl.col("order_id").is_in(list(both)))
    assert merged["amount_paid"].null_count() == 0 and merged["carrier"].null_count() == 0

    revenue = frame(catalog, "daily_revenue").sort("dt")
    live = orders.filter(pl.col("status") != "cancelled")
    assert revenue["orders"].to_list() == live.group_by("dt").len().sort("dt")["len"].to_list()
    assert len(catalog.load_table("shop.orders").snapshots()) <= 2  # expired by expire_snapshots (retain_max 2)
