"""Tables written outside Dagster: observations report new snapshots as data versions; eager downstreams run."""

import dagster as dg
import pyarrow as pa

from lakehouse_assets import (
    PaimonCatalogResource,
    PaimonIOManager,
    paimon_external_assets,
    paimon_external_table_sensor,
    paimon_observable_source,
)
from table_format import FileSystemCatalog, write_table


def _observe(source: dg.AssetsDefinition, warehouse: str, instance: dg.DagsterInstance) -> None:
    """Run the source's observation as a job would (``materialize`` skips observable sources)."""
    defs = dg.Definitions(assets=[source], jobs=[dg.define_asset_job("observe", selection=[source.key])],
                          resources={"paimon_catalog": PaimonCatalogResource(warehouse=warehouse)})
    assert defs.resolve_job_def("observe").execute_in_process(instance=instance).success


def _data_version(instance: dg.DagsterInstance, key: dg.AssetKey) -> str | None:
    record = instance.fetch_observations(key, limit=1).records
    observation = record[0].asset_observation if record else None
    return observation.data_version if observation is not None else None


def test_observations_report_each_new_snapshot_and_eager_downstreams_follow(warehouse, instance):
    source = paimon_observable_source("ext.clicks")
    key = dg.AssetKey(["ext", "clicks"])

    @dg.asset(key_prefix="mart", deps=[key], automation_condition=dg.AutomationCondition.eager())
    def click_count() -> pa.Table:
        return pa.table({"n": [1]})

    defs = dg.Definitions(assets=[source, click_count],
                          resources={"io_manager": PaimonIOManager(warehouse=warehouse),
                                     "paimon_catalog": PaimonCatalogResource(warehouse=warehouse)})

    _observe(source, warehouse, instance)  # the table does not exist yet: no data version
    assert _data_version(instance, key) is None
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("ext")
    table = catalog.create_table("ext.clicks", pa.schema([("id", pa.int64())]))
    write_table(table, pa.table({"id": pa.array([1, 2], pa.int64())}))  # an outside writer

    evaluation = dg.evaluate_automation_conditions(defs=defs, instance=instance)
    cursor = evaluation.cursor
    _observe(source, warehouse, instance)
    assert _data_version(instance, key) == "1"
    (observation,) = [r.asset_observation for r in instance.fetch_observations(key, limit=1).records]
    assert observation.metadata["dagster/row_count"].value == 2
    assert observation.metadata["paimon/snapshot_id"].value == 1
    evaluation = dg.evaluate_automation_conditions(defs=defs, instance=instance, cursor=cursor)
    assert evaluation.get_requested_partitions(dg.AssetKey(["mart", "click_count"])) == {None}

    cursor = evaluation.cursor
    _observe(source, warehouse, instance)  # same snapshot: same data version, nothing to do
    (observation,) = [r.asset_observation for r in instance.fetch_observations(key, limit=1).records]
    assert observation.data_version == "1" and "dagster/row_count" not in observation.metadata  # not recomputed
    evaluation = dg.evaluate_automation_conditions(defs=defs, instance=instance, cursor=cursor)
    assert evaluation.total_requested == 0

    write_table(table, pa.table({"id": pa.array([3], pa.int64())}))
    cursor = evaluation.cursor
    _observe(source, warehouse, instance)
    assert _data_version(instance, key) == "2"
    evaluation = dg.evaluate_automation_conditions(defs=defs, instance=instance, cursor=cursor)
    assert evaluation.total_requested == 1


def test_the_external_table_sensor_reports_each_new_snapshot_once_as_an_external_materialization(warehouse, instance):
    sensor = paimon_external_table_sensor(["ext.a", "ext.b"])
    (spec_a, spec_b) = paimon_external_assets(["ext.a", "ext.b"])

    @dg.asset(key_prefix="mart", deps=[spec_a.key], automation_condition=dg.AutomationCondition.eager())
    def a_stats() -> pa.Table:
        return pa.table({"n": [1]})

    defs = dg.Definitions(assets=[spec_a, spec_b, a_stats], sensors=[sensor],
                          resources={"io_manager": PaimonIOManager(warehouse=warehouse),
                                     "paimon_catalog": PaimonCatalogResource(warehouse=warehouse)})
    resources = {"paimon_catalog": PaimonCatalogResource(warehouse=warehouse)}

    def tick(cursor):
        result = sensor(dg.build_sensor_context(instance=instance, cursor=cursor, resources=resources,
                                                definitions=defs))
        for event in result.asset_events:
            instance.report_runless_asset_event(event)  # what the sensor daemon does with them
        return result

    first = tick(None)
    assert first.asset_events == [] and first.cursor == "{}"
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("ext")
    table = catalog.create_table("ext.a", pa.schema([("id", pa.int64())]))
    write_table(table, pa.table({"id": pa.array([1, 2, 3], pa.int64())}))
    evaluation = dg.evaluate_automation_conditions(defs=defs, instance=instance)

    second = tick(first.cursor)
    (event,) = second.asset_events
    assert event.asset_key == spec_a.key and event.tags["dagster/data_version"] == "1"
    assert event.metadata["dagster/row_count"].value == 3
    latest = instance.get_latest_materialization_event(spec_a.key).asset_materialization
    assert latest.tags["dagster/data_version"] == "1"
    evaluation = dg.evaluate_automation_conditions(defs=defs, instance=instance, cursor=evaluation.cursor)
    assert evaluation.get_requested_partitions(dg.AssetKey(["mart", "a_stats"])) == {None}

    assert tick(second.cursor).asset_events == []  # same snapshot: reported once
    write_table(table, pa.table({"id": pa.array([4], pa.int64())}))
    (event,) = tick(second.cursor).asset_events
    assert event.tags["dagster/data_version"] == "2"


def test_a_downstream_reads_an_outside_written_table_incrementally(warehouse, instance):
    source = paimon_observable_source("ext.orders")
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("ext")
    table = catalog.create_table("ext.orders", pa.schema([("id", pa.int64())]))
    seen = []

    @dg.asset(key_prefix="mart", ins={"orders": dg.AssetIn(key=["ext", "orders"], metadata={"incremental": True})})
    def new_orders(orders: pa.Table) -> pa.Table:
        seen.append(sorted(orders["id"].to_pylist()))
        return pa.table({"n": [orders.num_rows]})

    resources = {"io_manager": PaimonIOManager(warehouse=warehouse),
                 "paimon_catalog": PaimonCatalogResource(warehouse=warehouse)}
    for ids in ([1, 2], [3]):
        write_table(table, pa.table({"id": pa.array(ids, pa.int64())}))  # an outside writer
        assert dg.materialize([source, new_orders], selection=[new_orders], resources=resources,
                              instance=instance).success
    assert seen == [[1, 2], [3]]
