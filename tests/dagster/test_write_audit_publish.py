"""Write-audit-publish with a real Dagster instance: a failing blocking check leaves main untouched (same snapshot id,
downstream not run, the audit branch kept and named); a passing one publishes (main advanced, downstream run, branch
deleted); a writer committing to main during the audit makes the publication fail naming both snapshot ids."""

from typing import Any

import dagster as dg
import pyarrow as pa
import pytest

from lakehouse_assets import PaimonCatalogResource, PaimonIOManager
from lakehouse_assets.audit import BASE_SNAPSHOT, BRANCH, audit_check_result, audited_table, paimon_publish_asset
from table_format import FileSystemCatalog, write_table

BATCH: dict[str, Any] = {"ids": [1, 2], "amounts": [10, 20], "concurrent": False}
DOWNSTREAM_RUNS: list[int] = []


@dg.asset(key=["shop", "orders"], metadata={"publish": "audit", "primary_keys": ["id"], "mode": "upsert",
                                            "table_options": {"bucket": "1"}})
def orders() -> pa.Table:
    return pa.table({"id": pa.array(BATCH["ids"], pa.int64()), "amount": pa.array(BATCH["amounts"], pa.int64())})


@dg.asset_check(asset=orders, blocking=True)
def no_negative_amounts(context: dg.AssetCheckExecutionContext, orders: pa.Table,
                        catalog: PaimonCatalogResource) -> dg.AssetCheckResult:
    branch = audited_table(context, catalog.catalog())  # the same rows the input holds: the audit branch
    assert branch.scan().to_arrow().num_rows == orders.num_rows
    if BATCH["concurrent"]:  # another writer commits to main while the audit runs
        main = catalog.load_table("shop.orders")
        write_table(main, pa.table({"id": pa.array([99], pa.int64()), "amount": pa.array([1], pa.int64())}))
    bad = sum(1 for a in orders.column("amount").to_pylist() if a < 0)
    return audit_check_result(context, passed=bad == 0, description=f"{bad} negative amounts")


orders_published = paimon_publish_asset(orders)


@dg.asset(key=["shop", "order_totals"], deps=[orders_published])
def order_totals(orders: pa.Table) -> pa.Table:
    DOWNSTREAM_RUNS.append(orders.num_rows)
    return pa.table({"total": [sum(orders.column("amount").to_pylist())]})


def _materialize(warehouse: str, instance: dg.DagsterInstance) -> dg.ExecuteInProcessResult:
    return dg.materialize(
        [orders, no_negative_amounts, orders_published, order_totals], instance=instance, raise_on_error=False,
        resources={"io_manager": PaimonIOManager(warehouse=warehouse),
                   "catalog": PaimonCatalogResource(warehouse=warehouse)},
    )


def _main(warehouse: str):
    return FileSystemCatalog(warehouse).load_table("shop.orders")


def _check(result: dg.ExecuteInProcessResult) -> Any:
    (evaluation,) = result.get_asset_check_evaluations()
    return evaluation


@pytest.fixture(autouse=True)
def _reset() -> None:
    BATCH.update(ids=[1, 2], amounts=[10, 20], concurrent=False)
    DOWNSTREAM_RUNS.clear()


def test_passing_then_failing_audit(warehouse: str, instance: dg.DagsterInstance) -> None:
    first = _materialize(warehouse, instance)
    assert first.success and _check(first).passed
    main = _main(warehouse)
    assert main.latest_snapshot().id == 1 and main.branches() == []  # published, branch deleted
    assert DOWNSTREAM_RUNS == [2]

    BATCH.update(ids=[3], amounts=[-5])  # a bad batch
    second = _materialize(warehouse, instance)
    assert not second.success
    evaluation = _check(second)
    assert not evaluation.passed
    (materialization,) = second.asset_materializations_for_node("shop__orders")
    branch = materialization.metadata[BRANCH].value
    assert materialization.metadata[BASE_SNAPSHOT].value == 1
    assert f"audit branch {branch!r} kept" in evaluation.description and "stays at snapshot 1" in evaluation.description
    main = _main(warehouse)
    assert main.latest_snapshot().id == 1  # main untouched
    assert sorted(main.scan().to_arrow().column("id").to_pylist()) == [1, 2]
    assert main.branches() == [branch]  # kept for inspection, with the bad rows
    assert sorted(main.branch(branch).scan().to_arrow().column("id").to_pylist()) == [1, 2, 3]
    assert DOWNSTREAM_RUNS == [2]  # neither the publication nor the downstream ran
    started = {e.step_key for e in second.all_events if e.event_type_value == "STEP_START"}
    assert started == {"shop__orders", "shop__orders_no_negative_amounts"}

    BATCH.update(ids=[3], amounts=[5])  # fixed: the next run publishes
    third = _materialize(warehouse, instance)
    assert third.success
    main = _main(warehouse)
    assert main.latest_snapshot().id == 2 and sorted(main.scan().to_arrow().column("id").to_pylist()) == [1, 2, 3]
    assert main.branches() == [branch]  # the failed audit's branch stays until someone deletes it
    assert DOWNSTREAM_RUNS == [2, 3]


def test_concurrent_writer_fails_publication(warehouse: str, instance: dg.DagsterInstance) -> None:
    assert _materialize(warehouse, instance).success  # main at snapshot 1
    BATCH.update(ids=[4], amounts=[4], concurrent=True)
    result = _materialize(warehouse, instance)
    assert not result.success and _check(result).passed
    failures = [e for e in result.all_events if e.event_type_value == "STEP_FAILURE"]
    assert [e.step_key for e in failures] == ["shop__orders_published"]
    message = str(failures[0].event_specific_data.error.cause or failures[0].event_specific_data.error)
    assert "latest snapshot is 2 but the branch starts at snapshot 1" in message
    main = _main(warehouse)
    assert main.latest_snapshot().id == 2  # the concurrent commit stays, nothing lost
    assert sorted(main.scan().to_arrow().column("id").to_pylist()) == [1, 2, 99]
    assert len(main.branches()) == 1 and DOWNSTREAM_RUNS == [2]


REGIONS = dg.StaticPartitionsDefinition(["eu", "us"])
AMOUNTS: dict[str, list[int]] = {"eu": [1, 2], "us": [3, -4]}


@dg.asset(key=["shop", "sales"], partitions_def=REGIONS,
          metadata={"publish": "audit", "partition_expr": "region", "table_options": {"bucket": "-1"}})
def sales(context: dg.AssetExecutionContext) -> pa.Table:
    amounts = AMOUNTS[context.partition_key]
    return pa.table({"region": [context.partition_key] * len(amounts), "amount": pa.array(amounts, pa.int64())})


@dg.asset_check(asset=sales, blocking=True)
def sales_not_negative(context: dg.AssetCheckExecutionContext, sales: pa.Table) -> dg.AssetCheckResult:
    bad = sum(1 for a in sales.column("amount").to_pylist() if a < 0)
    return audit_check_result(context, passed=bad == 0, description=f"{bad} negative amounts")


sales_published = paimon_publish_asset(sales)


def test_partitions_audited_alone(warehouse: str, instance: dg.DagsterInstance) -> None:
    def run(region: str) -> dg.ExecuteInProcessResult:
        return dg.materialize([sales, sales_not_negative, sales_published], instance=instance, partition_key=region,
                              raise_on_error=False, resources={"io_manager": PaimonIOManager(warehouse=warehouse)})

    assert run("eu").success
    table = FileSystemCatalog(warehouse).load_table("shop.sales")
    assert table.latest_snapshot().id == 1
    result = run("us")
    assert not result.success and not _check(result).passed
    table = FileSystemCatalog(warehouse).load_table("shop.sales")
    assert table.latest_snapshot().id == 1  # main untouched: only eu
    assert sorted(table.scan().to_arrow().column("amount").to_pylist()) == [1, 2]
    (branch,) = table.branches()
    assert sorted(table.branch(branch).scan().to_arrow().column("amount").to_pylist()) == [-4, 1, 2, 3]
    AMOUNTS["us"] = [3, 4]
    assert run("us").success
    assert sorted(FileSystemCatalog(warehouse).load_table("shop.sales").scan().to_arrow()
                  .column("amount").to_pylist()) == [1, 2, 3, 4]


def test_failed_write_leaves_no_branch(warehouse: str, instance: dg.DagsterInstance) -> None:
    assert _materialize(warehouse, instance).success
    BATCH.update(ids=[None], amounts=[1])  # a null primary key: the write into the branch fails
    result = _materialize(warehouse, instance)
    assert not result.success
    main = _main(warehouse)
    assert main.latest_snapshot().id == 1 and main.branches() == [] and main.tags() == {}


def test_check_executed_alone_audits_main(warehouse: str, instance: dg.DagsterInstance) -> None:
    """The demo's audit check executed without a materialization (the UI's Execute): it read main and says so,
    naming no audit branch (the last one was published and deleted)."""
    from lakehouse_assets.demo.assets import payments, payments_published, valid_payments

    io = {"io_manager": PaimonIOManager(warehouse=warehouse)}
    audited = dg.materialize([payments, valid_payments, payments_published], instance=instance, resources=io)
    assert audited.success and BRANCH in _check(audited).metadata
    alone = dg.materialize([payments, valid_payments], selection=dg.AssetSelection.checks(valid_payments),
                           instance=instance, resources=io)
    evaluation = _check(alone)
    assert evaluation.passed and BRANCH not in evaluation.metadata
    assert evaluation.description.endswith("audited main of shop.payments (this run materialized nothing into an "
                                           "audit branch)")
    main = FileSystemCatalog(warehouse).load_table("shop.payments")
    assert evaluation.metadata["rows"].value == main.scan().to_arrow().num_rows
