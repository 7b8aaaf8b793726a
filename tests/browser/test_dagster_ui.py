"""End to end in a real headless Chromium (Debian's, driven by Playwright) against `dagster dev` on loopback.

The demo lakehouse is built first (`lakehouse_definitions.build_demo`: its runs launched through the code location,
every asset materialized twice, each maintenance job run once, the health checks after them) into a temporary
warehouse and DAGSTER_HOME; then `dagster dev -w workspace.yaml` serves it on a free 127.0.0.1 port. Checked in the
browser, in this order: the asset graph shows the demo tables, their lineage, every asset's checks passed ("4 / 4";
"5 / 5" for shop.payments with its audit check) and no "Unsynced" badge anywhere; the Overview timeline shows the demo's
runs; an asset's page shows the Paimon metadata and the maintenance history; shop.payments (write-audit-publish) shows
the planted bad batch's failed audit in its check's history (naming the kept branch and main's unchanged snapshot),
main published three times, never by the failed run, which the run list shows as a failure; the health check of
shop.orders shows its consumer (the incremental order_changes) and its lag; a check executed again from the UI passes; a materialization launched from the UI lands
a new snapshot (read back with table_format) and makes the downstream assets "Unsynced". Screenshots go to
.cache/artifacts/browser/ (paths printed). Without chromium or Playwright the tests skip, and fail under CI=true.
"""

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import dagster as dg
import pytest

from lakehouse_definitions import build_demo
from lakehouse_definitions.launch import LAUNCH
from table_format import FileSystemCatalog

pytestmark = pytest.mark.browser
REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / ".cache" / "artifacts" / "browser"
DEMO_TABLES = ("orders", "payments", "shipments", "orders_wide", "product_sales", "clickstream", "user_events",
               "order_changes", "daily_revenue")
PLANTED = {"demo/audit": "planted bad batch"}  # the tag of the demo's run with the planted bad payments


def all_checks_passed(body: str) -> bool:
    """Every table's checks passed in the asset graph: four health checks each, five on the audited shop.payments."""
    return body.count("4 / 4") == len(DEMO_TABLES) - 1 and body.count("5 / 5") == 1


def _missing(reason: str) -> None:
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(f"browser test prerequisites missing under CI=true: {reason} (run scripts/bootstrap.sh)")
    pytest.skip(reason)


def _chromium() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        _missing("no chromium on PATH (Debian package `chromium`)")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        _missing("playwright is not installed (dev extra)")
    return path


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status
    except OSError:
        return 0


def _graphql(base: str, query: str) -> bytes:
    request = urllib.request.Request(f"{base}/graphql", data=f'{{"query": "{query}"}}'.encode(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.read()


@dataclass(frozen=True)
class DagsterUI:
    base: str
    warehouse: Path
    home: Path
    chromium: str


@pytest.fixture(scope="module")
def dagster_ui(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DagsterUI]:
    chromium = _chromium()
    root = tmp_path_factory.mktemp("dagster-ui")
    warehouse, home = root / "warehouse", root / "dagster_home"
    home.mkdir()
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    env = {**os.environ, "LAKEHOUSE_WAREHOUSE": str(warehouse), "DAGSTER_HOME": str(home),
           "SPARK_LOCAL_IP": "127.0.0.1"}
    saved = {k: os.environ.get(k) for k in ("LAKEHOUSE_WAREHOUSE", "DAGSTER_HOME")}
    os.environ.update(LAKEHOUSE_WAREHOUSE=str(warehouse), DAGSTER_HOME=str(home))
    try:  # the demo, its runs launched through the code location, into this warehouse and instance
        assert build_demo.main() == 0
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    log = open(root / "dagster-dev.log", "w")  # noqa: SIM115 - lives as long as the server
    dagster = Path(sys.executable).parent / "dagster"
    server = subprocess.Popen([str(dagster), "dev", "-w", "workspace.yaml", "-h", "127.0.0.1", "-p", str(port)],
                              cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 240
        while _get(f"{base}/server_info") != 200:
            assert server.poll() is None, (root / "dagster-dev.log").read_text()[-3000:]
            assert time.monotonic() < deadline, "dagster dev did not answer within 240 s"
            time.sleep(1)
        _graphql(base, "mutation { setNuxSeen }")  # the community modal would cover the screenshots
        yield DagsterUI(base=base, warehouse=warehouse, home=home, chromium=chromium)
    finally:
        os.killpg(server.pid, signal.SIGINT)  # its own session: SIGINT is not ignored, and reaches the daemon
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait(timeout=10)
        log.close()


@pytest.fixture
def page(dagster_ui: DagsterUI) -> Iterator["object"]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=dagster_ui.chromium,
                                    args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"])
        page = browser.new_page(viewport={"width": 1700, "height": 1800})
        page.set_default_timeout(60_000)
        yield page
        browser.close()


def loaded(page) -> None:
    """Wait until the asset nodes and panels have fetched their status (no "Loading..." left)."""
    page.wait_for_function("() => !document.body.innerText.includes('Loading')", timeout=60_000)
    page.wait_for_timeout(500)


def shot(page, name: str) -> Path:
    loaded(page)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    print(f"screenshot: {path}")
    return path


def test_asset_graph_shows_the_demo_tables_checks_passed_and_nothing_unsynced(dagster_ui, page):
    page.goto(f"{dagster_ui.base}/asset-groups/demo_lakehouse")
    page.get_by_text("daily_revenue").first.wait_for()
    page.get_by_text("Materialized").first.wait_for()
    loaded(page)
    body = page.inner_text("body")
    for name in (*DEMO_TABLES, "payments_published"):
        assert name in body, name
    assert body.count("Materialized") >= len(DEMO_TABLES)  # every node's status: materialized by the demo
    assert all_checks_passed(body), body  # every node: its checks passed
    assert "Not evaluated" not in body and "Unsynced" not in body, body
    shot(page, "01-asset-graph")

    page.goto(f"{dagster_ui.base}/assets")
    page.get_by_text("daily_revenue").first.wait_for()
    loaded(page)
    assert "Unsynced" not in page.inner_text("body")
    shot(page, "01b-assets-list")

    page.goto(f"{dagster_ui.base}/assets/shop/orders_wide?view=lineage")
    page.get_by_text("payments").first.wait_for()
    page.get_by_text("shipments").first.wait_for()
    lineage = page.inner_text("body")
    assert "clickstream" not in lineage and "product_sales" not in lineage
    assert "Unsynced" not in lineage
    shot(page, "02-orders-wide-lineage")


def test_overview_timeline_shows_the_demo_runs(dagster_ui, page):
    page.goto(f"{dagster_ui.base}/overview/activity/timeline")
    page.get_by_text("compact_tables").first.wait_for()
    loaded(page)
    body = page.inner_text("body")
    assert "No runs or scheduled ticks" not in body
    for job in ("compact_tables", "rescale_table", "expire_snapshots", "remove_orphan_files", "table_health_checks"):
        assert job in body, job
    shot(page, "03-overview-timeline")

    page.goto(f"{dagster_ui.base}/jobs")
    page.get_by_text("compact_tables").first.wait_for()
    loaded(page)
    shot(page, "03b-jobs")


def test_asset_page_shows_paimon_metadata_and_maintenance_history(dagster_ui, page):
    page.goto(f"{dagster_ui.base}/assets/shop/orders")
    page.get_by_text("paimon/snapshot_id").first.wait_for()
    overview = page.inner_text("body")
    for key in ("paimon/commit_kind", "paimon/max_sorted_runs_per_bucket", "Row count"):
        assert key in overview, key
    shot(page, "04-orders-overview")

    page.goto(f"{dagster_ui.base}/assets/shop/orders?view=events")
    page.get_by_text("Description").first.wait_for()
    events = page.locator("[data-index]")  # the asset's event history, newest first
    history = {}
    for i in range(events.count()):
        events.nth(i).click()
        page.wait_for_timeout(500)
        found = re.search(r"Description\s*\n+\s*(\S+): (.+)", page.inner_text("body"))
        if found:
            history[found.group(1)] = (i, found.group(2))
    assert history["compact_tables"][1].startswith("changed")  # full compaction: a new COMPACT snapshot
    assert history["expire_snapshots"][1].startswith("changed")
    assert "remove_orphan_files" in history and "rescale_table" not in history
    events.nth(history["compact_tables"][0]).click()
    page.get_by_text("maintenance/files_before").first.wait_for()
    assert "COMPACT" in page.inner_text("body")
    shot(page, "05-orders-maintenance-history")


@dataclass(frozen=True)
class PlantedRun:
    run_id: str
    branch: str  # the audit branch kept for inspection
    main_snapshot: int  # main's snapshot id, which the run left as it was


def _planted_run(home: Path) -> PlantedRun:
    with dg.DagsterInstance.from_config(str(home)) as instance:
        (run,) = instance.get_runs(dg.RunsFilter(tags=PLANTED))
        (entry,) = [e for e in instance.all_logs(run.run_id, of_type=dg.DagsterEventType.ASSET_CHECK_EVALUATION)
                    if e.dagster_event.event_specific_data.check_name == "valid_payments"]
        evaluation = entry.dagster_event.event_specific_data
        (materialization,) = instance.all_logs(run.run_id, of_type=dg.DagsterEventType.ASSET_MATERIALIZATION)
        metadata = materialization.asset_materialization.metadata
    assert run.status == dg.DagsterRunStatus.FAILURE and not evaluation.passed
    return PlantedRun(run.run_id, evaluation.metadata["paimon/branch"].value,
                      metadata["paimon/main_snapshot_id"].value)


def _event_details(page) -> list[str]:
    """The text of each event of an asset's Events tab (newest first), as shown when selected."""
    events = page.locator("[data-index]")
    details = []
    for i in range(events.count()):
        events.nth(i).click()
        page.wait_for_timeout(500)
        details.append(page.inner_text("body"))
    return details


def test_failed_audit_on_the_payments_page(dagster_ui, page):
    """The planted bad batch: its audit failed in the check's history, main untouched, the run listed as a failure."""
    planted = _planted_run(dagster_ui.home)
    main = FileSystemCatalog(str(dagster_ui.warehouse)).load_table("shop.payments")
    assert planted.branch in main.branches()  # kept for inspection
    page.goto(f"{dagster_ui.base}/assets/shop/payments?view=checks&checkDetail=valid_payments")
    page.get_by_text("Execution history").first.click()
    page.get_by_text("Failed").first.wait_for()
    loaded(page)
    history = page.inner_text("body")
    failed = (f"5 negative amounts, 5 orders paid more than once. audit branch '{planted.branch}' kept for inspection "
              f"(shop.payments$branch_{planted.branch}); main of shop.payments stays at snapshot "
              f"{planted.main_snapshot}")
    assert failed in history, history
    assert history.count("audit branch") == 4 and history.count("' passed") == 3  # rounds 1, 2 and the corrected one
    shot(page, "05a-payments-failed-audit")

    page.goto(f"{dagster_ui.base}/assets/shop/payments?view=events")
    page.get_by_text("Description").first.wait_for()
    bad = [i for i, d in enumerate(_event_details(page)) if f"Materialized in run {planted.run_id[:8]}" in d]
    assert len(bad) == 1, bad
    page.locator("[data-index]").nth(bad[0]).click()
    page.wait_for_timeout(500)
    event = page.inner_text("body")  # written into the audit branch, based on main's unchanged snapshot
    assert re.search(rf"paimon/branch\s+{planted.branch}\b", event), event
    assert re.search(rf"paimon/main_snapshot_id\s+{planted.main_snapshot}\b", event), event
    shot(page, "05b-payments-planted-batch-in-its-branch")

    page.goto(f"{dagster_ui.base}/assets/shop/payments_published?view=events")
    page.get_by_text("paimon/published_snapshot_id").first.wait_for()
    published = _event_details(page)  # main moved three times (rounds 1, 2, the corrected batch), never by that run
    ids = [int(m.group(1)) for d in published for m in [re.search(r"paimon/published_snapshot_id\s+(\d+)", d)] if m]
    assert ids == [planted.main_snapshot + 1, planted.main_snapshot, planted.main_snapshot - 1], ids
    assert not any(planted.run_id[:8] in d for d in published)
    shot(page, "05c-payments-published-events")

    page.goto(f"{dagster_ui.base}/runs")
    page.get_by_text("planted bad batch").first.wait_for()
    loaded(page)
    runs = page.inner_text("body")
    assert planted.run_id[:8] in runs and runs.count("Failure") == 1  # the one failed run: the bad batch caught
    shot(page, "05d-runs-with-the-caught-bad-batch")


def test_health_check_shows_the_tables_consumers(dagster_ui, page):
    """shop.orders' consumer: the incremental order_changes, where it reads next and how far behind it is."""
    (consumer,) = FileSystemCatalog(str(dagster_ui.warehouse)).load_table("shop.orders").consumers()
    page.goto(f"{dagster_ui.base}/assets/shop/orders?view=checks&checkDetail=snapshots_within_retention")
    page.get_by_text("max_consumer_lag").first.wait_for()
    loaded(page)
    page.locator("tr", has_text="consumers").get_by_text("[Show JSON]").click()
    dialog = page.get_by_role("dialog")
    dialog.get_by_text("dagster-shop.order_changes").wait_for()
    shown = dialog.inner_text()
    assert consumer.consumer_id == "dagster-shop.order_changes"
    assert f'"next_snapshot": {consumer.next_snapshot}' in shown and '"snapshots_behind"' in shown, shown
    shot(page, "05e-orders-consumers")


def _check_executions(home: Path, key: dg.AssetCheckKey) -> list:
    with dg.DagsterInstance.from_config(str(home)) as instance:
        return list(instance.event_log_storage.get_asset_check_execution_history(key, limit=20))


def test_check_executed_from_the_ui_passes(dagster_ui, page):
    key = dg.AssetCheckKey(dg.AssetKey(["shop", "orders"]), "small_files")
    before = len(_check_executions(dagster_ui.home, key))
    page.goto(f"{dagster_ui.base}/assets/shop/orders?view=checks")
    page.get_by_text("small_files").first.wait_for()
    loaded(page)
    shot(page, "06-orders-checks")
    button = page.locator("button", has_text="Execute all").first
    button.wait_for()
    assert button.is_enabled()  # no longer "This check cannot execute without materializing the asset"
    button.click()
    deadline = time.monotonic() + 300
    while True:
        executions = _check_executions(dagster_ui.home, key)
        if len(executions) > before and executions[0].status.value in ("SUCCEEDED", "FAILED"):
            break
        assert time.monotonic() < deadline, "the check executed from the UI did not finish within 300 s"
        time.sleep(2)
    assert executions[0].status.value == "SUCCEEDED"
    page.reload()
    page.get_by_text("small_files").first.wait_for()
    loaded(page)
    assert "Passed" in page.inner_text("body")
    page.get_by_text("sorted_runs_below_stop_trigger").first.click()  # its numbers, plotted by Dagster
    page.get_by_text("max_sorted_runs_per_bucket").first.wait_for()
    shot(page, "07-orders-checks-after-ui-execution")


def test_maintenance_launched_in_the_ui_is_followed_by_the_checks(dagster_ui, page):
    """A compaction launched like the Launchpad does: the daemon of `dagster dev` runs the checks_after_maintenance
    sensor, whose table_health_checks run leaves every check of the graph "Passed"."""
    import json

    params = {"selector": {"repositoryLocationName": "lakehouse_definitions:defs", "repositoryName": "__repository__",
                           "jobName": "compact_tables"},
              "runConfigData": {"ops": {"compact_tables_op": {"config": {"tables": ["shop.orders"], "full": True}}}}}
    request = urllib.request.Request(f"{dagster_ui.base}/graphql", headers={"Content-Type": "application/json"},
                                     data=json.dumps({"query": LAUNCH, "variables": {"params": params}}).encode())
    with urllib.request.urlopen(request, timeout=30) as response:
        launched = json.loads(response.read())["data"]["launchPipelineExecution"]
    assert launched["__typename"] == "LaunchRunSuccess", launched
    run_id = launched["run"]["runId"]
    deadline = time.monotonic() + 420
    with dg.DagsterInstance.from_config(str(dagster_ui.home)) as instance:
        while True:
            checks = instance.get_runs(dg.RunsFilter(job_name="table_health_checks", tags={"paimon/after_run": run_id}))
            if checks and checks[0].is_finished:
                break
            assert time.monotonic() < deadline, "no checks run after the compaction within 420 s"
            time.sleep(3)
        assert checks[0].status == dg.DagsterRunStatus.SUCCESS
    page.goto(f"{dagster_ui.base}/asset-groups/demo_lakehouse")
    page.get_by_text("daily_revenue").first.wait_for()
    loaded(page)
    body = page.inner_text("body")
    assert all_checks_passed(body) and "Unsynced" not in body, body
    shot(page, "08-asset-graph-after-ui-compaction")


def test_materialization_launched_from_the_ui_makes_its_downstream_unsynced(dagster_ui, page):
    table = FileSystemCatalog(str(dagster_ui.warehouse)).load_table("shop.orders")
    before = table.latest_snapshot().id
    page.goto(f"{dagster_ui.base}/assets/shop/orders")
    button = page.locator("button", has_text="Materialize").first
    button.wait_for()
    button.click()
    page.get_by_text("Launched run").first.wait_for()
    shot(page, "09-materialize-launched")
    deadline = time.monotonic() + 300
    while table.refresh().latest_snapshot().id == before:
        assert time.monotonic() < deadline, "no new snapshot of shop.orders within 300 s"
        time.sleep(2)
    new = [s for s in table.refresh().snapshots() if s.id > before]
    assert "APPEND" in [s.commit_kind.value for s in new]
    page.goto(f"{dagster_ui.base}/asset-groups/demo_lakehouse")
    page.get_by_text("Unsynced").first.wait_for(timeout=180_000)  # the badge still means something
    loaded(page)
    body = page.inner_text("body")
    assert "Unsynced" in body
    shot(page, "10-asset-graph-after-upstream-write")
    page.goto(f"{dagster_ui.base}/assets/shop/daily_revenue")
    page.get_by_text("Unsynced").first.wait_for(timeout=60_000)
    shot(page, "11-daily-revenue-unsynced")
