"""The demo code location: Definitions load and validate; the demo, rerun over a warehouse and instance already in
use, builds end to end through the code location (twice-materialized assets, write-audit-publish of shop.payments
catching a planted bad batch then publishing the corrected one, each maintenance job once, the health checks after
them) with every table's contents checked against the generated batches, keeps what it did not create (a user's table
in ``shop``, earlier runs), and leaves the UI's truth: every check's latest evaluation passed (the failed audit kept
in the check's history), nothing unsynced, the incremental downstreams registered as Paimon consumers."""

import io
import os
from contextlib import redirect_stdout
from dataclasses import dataclass
from pathlib import Path

import dagster as dg
import polars as pl
import pyarrow as pa
import pytest
import yaml
from dagster_graphql.cli import execute_query

from lakehouse_assets.demo import data
from lakehouse_definitions import build_definitions, build_demo
from lakehouse_definitions.launch import launched_runs
from table_format import FileSystemCatalog, write_table

pytestmark = pytest.mark.dagster
REPO = Path(__file__).resolve().parents[3]
TABLES = ("orders", "payments", "shipments", "orders_wide", "product_sales", "clickstream", "user_events",
          "order_changes", "daily_revenue")
AUDIT = dg.AssetCheckKey(dg.AssetKey(["shop", "payments"]), "valid_payments")
PUBLISHED = dg.AssetKey(["shop", "payments_published"])


def test_definitions_load_and_validate(warehouse):
    defs = build_definitions(warehouse=warehouse)
    dg.Definitions.validate_loadable(defs)
    repo = defs.get_repository_def()
    assert {k.to_user_string() for k in repo.asset_graph.get_all_asset_keys()} == {
        *(f"shop/{t}" for t in TABLES), "shop/payments_published"}
    assert {"compact_tables", "expire_snapshots", "rescale_table", "remove_orphan_files"} <= set(repo.job_names)
    assert sorted(s.name for s in repo.schedule_defs) == ["nightly_expire_snapshots", "remove_orphan_files_schedule"]
    assert len(repo.asset_graph.asset_check_keys) == 4 * len(TABLES) + 1  # + the audit check valid_payments
    assert AUDIT in repo.asset_graph.asset_check_keys
    assert "table_health_checks" in repo.job_names
    assert sorted(s.name for s in repo.sensor_defs) == ["checks_after_maintenance", "compaction_sensor"]
    graph = repo.asset_graph
    parents = {k.to_user_string(): {p.to_user_string() for p in graph.get(k).parent_keys}
               for k in graph.get_all_asset_keys()}
    assert parents["shop/orders_wide"] == {"shop/payments", "shop/shipments", "shop/payments_published"}
    assert parents["shop/payments_published"] == {"shop/payments"}
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


FOREIGN = pa.table({"id": pa.array([1, 2, 3], pa.int64()), "note": ["mine", "not", "the demo's"]})
UI_STATE = """{ assetNodes { assetKey { path } staleStatus assetChecksOrError { ... on AssetChecks {
  checks { name canExecuteIndividually executionForLatestMaterialization { status } } } } } }"""


@dataclass(frozen=True)
class Demo:
    warehouse: Path
    printed: str
    earlier_run: str
    ui: dict  # what the UI's GraphQL reads after the demo: asset -> (staleStatus, {check: status})
    runs: list
    audits: list  # the evaluations of valid_payments, oldest first
    published: list  # the materializations of payments_published (their metadata), oldest first
    materialized: dict  # run id -> the asset keys it materialized (with their metadata)
    retention: dict  # the latest evaluation of each table's snapshots_within_retention: its metadata


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Demo:
    """A rerun of the demo: the warehouse already holds a stale demo table and a user's table in ``shop``, the
    instance a user's run and a materialization of a demo asset (an incremental cursor far ahead)."""
    root = tmp_path_factory.mktemp("demo")
    warehouse, home = root / "warehouse", root / "dagster_home"
    home.mkdir()
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    catalog = FileSystemCatalog(str(warehouse))
    catalog.create_database("shop")
    write_table(catalog.create_table("shop.copy", FOREIGN.schema), FOREIGN)
    write_table(catalog.create_table("shop.orders", FOREIGN.schema), FOREIGN)  # the demo's name: replaced
    saved = {k: os.environ.get(k) for k in ("LAKEHOUSE_WAREHOUSE", "DAGSTER_HOME")}
    os.environ.update(LAKEHOUSE_WAREHOUSE=str(warehouse), DAGSTER_HOME=str(home))
    try:
        with dg.DagsterInstance.get() as instance:
            @dg.op
            def hello() -> None: ...

            earlier = dg.GraphDefinition("users_job", node_defs=[hello]).to_job().execute_in_process(
                instance=instance).run_id
            instance.report_runless_asset_event(dg.AssetMaterialization(
                ["shop", "order_changes"], metadata={"paimon/consumed_snapshot/shop/orders": 99}))
        out = io.StringIO()
        with redirect_stdout(out):
            assert build_demo.main() == 0
        with dg.DagsterInstance.get() as instance, launched_runs(instance, output=root / "query.log") as runs:
            nodes = execute_query(runs.context, UI_STATE)["data"]["assetNodes"]
            all_runs = list(instance.get_runs())
            audits = [r.evaluation for r in reversed(
                instance.event_log_storage.get_asset_check_execution_history(AUDIT, limit=20))]
            published = [r.asset_materialization.metadata for r in reversed(
                instance.fetch_materializations(PUBLISHED, limit=20).records)]
            materialized = {run.run_id: {e.dagster_event.asset_key: e.asset_materialization.metadata
                                         for e in instance.all_logs(
                                             run.run_id, of_type=dg.DagsterEventType.ASSET_MATERIALIZATION)}
                            for run in all_runs}
            retention = {t: instance.event_log_storage.get_asset_check_execution_history(
                dg.AssetCheckKey(dg.AssetKey(["shop", t]), "snapshots_within_retention"), limit=1)[0].evaluation.metadata
                for t in TABLES}
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    ui = {"/".join(n["assetKey"]["path"]): (n["staleStatus"], {
        c["name"]: (c["canExecuteIndividually"], (c["executionForLatestMaterialization"] or {}).get("status"))
        for c in n["assetChecksOrError"]["checks"]}) for n in nodes}
    print(out.getvalue())
    return Demo(warehouse=warehouse, printed=out.getvalue(), earlier_run=earlier, ui=ui, runs=all_runs,
                audits=audits, published=published, materialized=materialized, retention=retention)


def test_demo_rerun_keeps_foreign_tables_and_earlier_runs(demo):
    catalog = FileSystemCatalog(str(demo.warehouse))
    assert sorted(catalog.list_tables("shop")) == sorted([*TABLES, "copy"])
    copy = catalog.load_table("shop.copy")
    assert copy.scan().to_arrow().equals(FOREIGN) and [s.id for s in copy.snapshots()] == [1]  # untouched
    assert "shop/copy" not in demo.printed  # not maintained either: the jobs ran on the demo's tables by name
    assert "dropped the demo's tables shop.orders" in demo.printed and "kept the other tables of shop: shop.copy" \
        in demo.printed
    assert "wiped the materialization history of 1 demo assets (runs kept)" in demo.printed
    assert demo.earlier_run in {r.run_id for r in demo.runs}  # the instance's history is kept


def test_demo_runs_go_through_the_code_location(demo):
    launched = [r for r in demo.runs if r.job_name != "users_job"]
    names = [r.job_name for r in reversed(launched)]
    assert names == ["__ASSET_JOB"] * 4 + ["compact_tables", "rescale_table", "expire_snapshots",
                                           "remove_orphan_files", "table_health_checks"]
    statuses = [r.status for r in reversed(launched)]
    assert statuses[2] == dg.DagsterRunStatus.FAILURE  # the planted bad batch, caught by its audit
    assert statuses[:2] + statuses[3:] == [dg.DagsterRunStatus.SUCCESS] * 8
    for run in launched:  # an origin: the timeline and the job pages show the run
        assert run.remote_job_origin is not None
        assert run.remote_job_origin.repository_origin.code_location_origin.location_name.startswith(
            "lakehouse_definitions")
    asset_runs = [r for r in reversed(launched) if r.job_name == "__ASSET_JOB"]
    # the runs' target: the demo's assets (+ the publish step); then payments, its publication and orders_wide
    assert [len(r.asset_selection) for r in asset_runs] == [len(TABLES) + 1] * 2 + [3] * 2
    assert len(launched[0].asset_check_selection) == 4 * len(TABLES)  # the checks after maintenance: all tables


def test_after_the_demo_every_check_passed_and_nothing_is_unsynced(demo):
    assert set(demo.ui) == {f"shop/{t}" for t in TABLES} | {"shop/payments_published"}
    for asset, (stale, checks) in demo.ui.items():
        assert stale == "FRESH", asset  # no "Unsynced" badge after the maintenance jobs
        # four health checks per table, the audit check on payments too, none on the publish step
        assert len(checks) == {"shop/payments": 5, "shop/payments_published": 0}.get(asset, 4), asset
        for name, (executable, status) in checks.items():
            assert (executable, status) == ("CAN_EXECUTE", "SUCCEEDED"), (asset, name)
    assert "health checks after maintenance" in demo.printed and "checks: 36 passed, 0 failed" in demo.printed


def test_demo_builds_end_to_end(demo):
    printed = demo.printed
    for job in ("compact_tables", "rescale_table", "expire_snapshots", "remove_orphan_files"):
        assert f"{job}: ok" in printed
    catalog = FileSystemCatalog(str(demo.warehouse))

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
    # the clickstream carries Iceberg metadata for its latest snapshot (tests/iceberg reads such tables with
    # PyIceberg and DuckDB), and the demo says where and how to query it
    clickstream = catalog.load_table("shop.clickstream")
    hint = (Path(clickstream.iceberg_metadata_dir()) / "version-hint.text").read_text().strip()
    assert hint == str(clickstream.latest_snapshot().id)
    assert f"iceberg_scan('{clickstream.path}')" in printed

    payments = pl.concat([pl.from_arrow(data.payments_batch(b)) for b in (0, 1, build_demo.AUDIT_BATCH)])
    assert frame(catalog, "payments").sort("order_id").equals(payments.sort("order_id"))  # the corrected batch only
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


def test_demo_audit_catches_the_planted_bad_batch(demo):
    """shop.payments (write-audit-publish): the planted bad batch fails its blocking audit (main unchanged, the branch
    kept and named, the publish step and orders_wide not run); the corrected batch passes and is published."""
    runs = [r for r in reversed(demo.runs) if r.job_name == "__ASSET_JOB"]
    bad, corrected = runs[2], runs[3]
    assert bad.tags["demo/audit"] == "planted bad batch" and corrected.tags["demo/audit"] == "corrected batch"
    assert [e.passed for e in demo.audits] == [True, True, False, True]  # the failure stays in the check's history
    failed = demo.audits[2]
    branch = failed.metadata["paimon/branch"].value
    assert failed.metadata["negative_amounts"].value == 5 and failed.metadata["orders_paid_twice"].value == 5
    assert f"audit branch '{branch}' kept for inspection (shop.payments$branch_{branch}); main of shop.payments " \
           "stays at snapshot 2" in failed.description
    written = demo.materialized[bad.run_id]  # only payments, into its branch; downstream not run
    assert set(written) == {dg.AssetKey(["shop", "payments"])}
    (metadata,) = written.values()
    assert metadata["paimon/branch"].value == branch and metadata["paimon/main_snapshot_id"].value == 2
    assert PUBLISHED in demo.materialized[corrected.run_id]
    assert [m["paimon/published_snapshot_id"].value for m in demo.published] == [1, 2, 3]  # never by the bad run

    catalog = FileSystemCatalog(str(demo.warehouse))
    payments = catalog.load_table("shop.payments")
    assert payments.branches() == [branch]  # kept for inspection; the published branches were deleted
    planted = payments.branch(branch).scan().to_polars()
    assert planted.filter(pl.col("amount_paid") < 0).height == 5  # the bad rows: in the branch only
    assert frame(catalog, "payments").filter(pl.col("amount_paid") < 0).height == 0

    printed = demo.printed
    assert "write-audit-publish on shop.payments (main at snapshot 2): batch 2 with planted bad rows" in printed
    assert (f"the bad batch was caught, as intended (run {bad.run_id[:8]} FAILURE, " in printed and
            "blocking check valid_payments failed (5 negative amounts, 5 orders paid twice)" in printed)
    assert (f"main of shop.payments unchanged at snapshot 2; branch '{branch}' kept (shop.payments$branch_{branch}); "
            "not run: shop/payments_published, shop/orders_wide") in printed
    assert "published: main of shop.payments 2 -> 3" in printed and "FAILED" not in printed


def test_demo_incremental_downstreams_are_consumers(demo):
    """order_changes and user_events read incrementally: Paimon consumers of their upstream tables, printed with
    their lag (the health check snapshots_within_retention carries the same)."""
    catalog = FileSystemCatalog(str(demo.warehouse))
    for upstream, downstream in (("orders", "order_changes"), ("clickstream", "user_events")):
        table = catalog.load_table(f"shop.{upstream}")
        (consumer,) = table.consumers()
        assert consumer.consumer_id == f"dagster-shop.{downstream}"
        # it read snapshot next_snapshot; what came after it that changed rows (the maintenance compaction did not)
        behind = sum(s.id > consumer.next_snapshot and s.commit_kind.value in ("APPEND", "OVERWRITE")
                     for s in table.snapshots())
        assert (f"shop.{upstream:13} dagster-shop.{downstream:15} read snapshot {consumer.next_snapshot}, "
                f"{behind} with new rows unread") in demo.printed
        metadata = demo.retention[upstream]  # the health check's metadata: what the UI shows
        assert metadata["consumers"].value == {consumer.consumer_id: {"next_snapshot": consumer.next_snapshot,
                                                                      "snapshots_behind": behind}}
        assert metadata["max_consumer_lag"].value == behind
    assert demo.retention["payments"]["consumers"].value == {}  # no incremental reader
