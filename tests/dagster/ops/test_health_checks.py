"""The table-health asset checks against healthy and unhealthy tables, through `materialize` with the IO manager."""

import os
import time
from pathlib import Path

import dagster as dg
import pyarrow as pa
import pytest

from lakehouse_assets import PaimonIOManager
from lakehouse_assets.checks import build_table_health_checks, declared_column_schema
from tests.dagster.ops.conftest import SCHEMA, batch

pytestmark = pytest.mark.dagster


def table_asset(*, options: dict[str, str], declared: pa.Schema = SCHEMA):
    @dg.asset(key=["db", "events"], metadata={"primary_keys": ["id"], "mode": "upsert", "table_options": options,
                                              "dagster/column_schema": declared_column_schema(declared)})
    def events(context: dg.AssetExecutionContext) -> pa.Table:
        n = context.instance.get_latest_materialization_event(context.asset_key)
        return batch(0 if n is None else 50)

    return events


def materialize(asset, warehouse, instance, catalog_resource):
    checks = build_table_health_checks([asset])
    result = dg.materialize([asset, *checks], instance=instance, resources={
        "io_manager": PaimonIOManager(warehouse=warehouse), "paimon_catalog": catalog_resource})
    return {e.check_name: e for e in result.get_asset_check_evaluations()}


def test_healthy_table_passes_every_check(warehouse, catalog_resource):
    asset = table_asset(options={"bucket": "2"})
    checks = materialize(asset, warehouse, dg.DagsterInstance.ephemeral(), catalog_resource)
    assert set(checks) == {"sorted_runs_below_stop_trigger", "small_files", "snapshots_within_retention",
                           "schema_as_declared"}
    assert all(c.passed for c in checks.values()), {n: c.metadata for n, c in checks.items()}


def test_unhealthy_table_fails_the_checks(warehouse, catalog_resource):
    asset = table_asset(options={"bucket": "1", "write-only": "true", "num-sorted-run.stop-trigger": "3",
                                 "compaction.min.file-num": "3", "snapshot.num-retained.min": "1",
                                 "snapshot.num-retained.max": "2"})
    instance = dg.DagsterInstance.ephemeral()
    for _ in range(3):
        checks = materialize(asset, warehouse, instance, catalog_resource)
    assert not checks["sorted_runs_below_stop_trigger"].passed
    assert checks["sorted_runs_below_stop_trigger"].severity == dg.AssetCheckSeverity.ERROR
    assert checks["sorted_runs_below_stop_trigger"].metadata["max_sorted_runs_per_bucket"].value == 3
    assert not checks["small_files"].passed
    assert not checks["snapshots_within_retention"].passed
    assert checks["snapshots_within_retention"].metadata["expirable"].value == [1]
    assert checks["schema_as_declared"].passed


def test_schema_drift_fails_schema_as_declared(warehouse, catalog_resource):
    materialize(table_asset(options={"bucket": "1"}), warehouse, dg.DagsterInstance.ephemeral(), catalog_resource)
    declared = pa.schema([SCHEMA.field("id"), ("name", pa.int32()), ("country", pa.string())])
    drifted = table_asset(options={"bucket": "1"}, declared=declared)
    checks = build_table_health_checks([drifted])
    result = dg.materialize([drifted, *checks], instance=dg.DagsterInstance.ephemeral(),
                            selection=dg.AssetSelection.checks_for_assets(drifted), resources={
                                "io_manager": PaimonIOManager(warehouse=warehouse),
                                "paimon_catalog": catalog_resource})
    (schema_check,) = [e for e in result.get_asset_check_evaluations() if e.check_name == "schema_as_declared"]
    assert not schema_check.passed
    assert schema_check.metadata["missing_columns"].value == ["country"]
    assert schema_check.metadata["undeclared_columns"].value == ["amount"]
    assert "name" in schema_check.metadata["type_mismatches"].value


def test_checks_of_a_missing_table_warn(warehouse, catalog_resource):
    asset = table_asset(options={"bucket": "1"})
    checks = build_table_health_checks([asset])
    result = dg.materialize([asset, *checks], instance=dg.DagsterInstance.ephemeral(),
                            selection=dg.AssetSelection.checks_for_assets(asset), resources={
                                "io_manager": PaimonIOManager(warehouse=warehouse),
                                "paimon_catalog": catalog_resource})
    evaluations = result.get_asset_check_evaluations()
    assert len(evaluations) == 4
    assert all(not e.passed and e.severity == dg.AssetCheckSeverity.WARN for e in evaluations)


def test_retention_check_counts_orphan_files_and_bytes(warehouse, catalog_resource):
    asset = table_asset(options={"bucket": "1"})
    instance = dg.DagsterInstance.ephemeral()
    materialize(asset, warehouse, instance, catalog_resource)
    table = catalog_resource.load_table("db.events")
    orphan = Path(table.path) / "bucket-0" / "data-orphan.parquet"
    orphan.write_bytes(b"x" * 1234)
    os.utime(orphan, (time.time() - 3 * 86400,) * 2)
    checks = materialize(asset, warehouse, instance, catalog_resource)
    retention = checks["snapshots_within_retention"]
    assert retention.passed  # orphans are reported, not failed: remove_orphan_files deletes them
    assert {k: retention.metadata[k].value for k in ("orphan_files", "orphan_bytes", "expirable_snapshots")} == {
        "orphan_files": 1, "orphan_bytes": 1234, "expirable_snapshots": 0}
    assert isinstance(retention.metadata["snapshots"], dg.IntMetadataValue)
