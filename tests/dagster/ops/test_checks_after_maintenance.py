"""What the Dagster UI reads after maintenance, by Dagster's own APIs on a real instance: each maintenance job keeps
the downstream asset FRESH (no "Unsynced"), the `checks_after_maintenance` sensor requests the health checks of the
tables the job touched, and those checks then count as evaluated against each asset's latest materialization
("Passed", not "Not evaluated"); a real upstream write still makes the downstream STALE."""

import os
import time
from pathlib import Path

import dagster as dg
import pyarrow as pa
import pytest

from jobs.maintenance import (
    MAINTENANCE_JOBS,
    CompactConfig,
    ExpireSnapshotsConfig,
    RemoveOrphanFilesConfig,
    RescaleConfig,
    RetentionConfig,
)
from lakehouse_assets import PaimonIOManager
from lakehouse_assets.checks import CHECK_NAMES, build_table_health_checks
from schedules import checks_after_maintenance, table_health_checks
from table_format import FileSystemCatalog
from tests.dagster.helpers import check_status, stale_status
from tests.dagster.ops.conftest import batch

pytestmark = [pytest.mark.dagster,  # the sensor context gets the repository (a beta parameter)
              pytest.mark.filterwarnings("ignore:Parameter `repository_def`:dagster.BetaWarning")]
SRC, SINK = dg.AssetKey(["db", "src"]), dg.AssetKey(["db", "sink"])


@dg.asset(key=SRC, metadata={"primary_keys": ["id"], "mode": "upsert",
                             "table_options": {"bucket": "1", "write-only": "true", "snapshot.num-retained.min": "1"}})
def src(context: dg.AssetExecutionContext) -> pa.Table:
    runs = len(context.instance.fetch_materializations(context.asset_key, limit=10).records)
    return batch(runs * 10)


@dg.asset(key=SINK, ins={"src": dg.AssetIn(key=SRC, metadata={"incremental": True})},
          metadata={"mode": "append", "table_options": {"snapshot.num-retained.min": "1"}})
def sink(src: pa.Table) -> pa.Table:
    return src.select(["id"]).append_column("kind", src["_row_kind"])


CHECKS = build_table_health_checks([src, sink])
CHECK_KEYS = [k for c in CHECKS for k in c.check_keys]


@pytest.fixture
def lake(warehouse, resources):
    defs = dg.Definitions(assets=[src, sink], asset_checks=CHECKS, jobs=[*MAINTENANCE_JOBS, table_health_checks],
                          sensors=[checks_after_maintenance], executor=dg.in_process_executor,
                          resources={**resources, "io_manager": PaimonIOManager(warehouse=warehouse)})
    instance = dg.DagsterInstance.ephemeral()
    for _ in range(2):
        defs.resolve_implicit_global_asset_job_def().execute_in_process(instance=instance)
    return defs, instance


def run_checks_requested_after(defs, instance, result) -> dg.RunRequest:
    """Evaluate the sensor on the maintenance run's success, then execute the run it requests (as the daemon does)."""
    run = instance.get_run_by_id(result.run_id)
    (success,) = instance.all_logs(run.run_id, of_type=dg.DagsterEventType.RUN_SUCCESS)
    context = dg.build_run_status_sensor_context(sensor_name="checks_after_maintenance", dagster_instance=instance,
                                                 dagster_run=run, dagster_event=success.dagster_event,
                                                 repository_def=defs.get_repository_def())
    request = checks_after_maintenance(context)
    assert isinstance(request, dg.RunRequest), request
    job = defs.resolve_job_def("table_health_checks").get_subset(asset_selection=set(),
                                                                asset_check_selection=set(request.asset_check_keys))
    checked = job.execute_in_process(instance=instance, tags=request.tags)
    assert checked.success
    return request


def test_each_health_check_executes_on_its_own(lake):
    defs, instance = lake
    graph = defs.get_repository_def().asset_graph
    for key in CHECK_KEYS:  # the UI's "Execute" is enabled when a check's execution set is the check alone
        assert graph.get_execution_set_asset_and_check_keys(key) == {key}
    one = dg.AssetCheckKey(SINK, "small_files")
    job = defs.resolve_job_def("table_health_checks").get_subset(asset_selection=set(), asset_check_selection={one})
    result = job.execute_in_process(instance=instance)
    (evaluation,) = result.get_asset_check_evaluations()
    assert evaluation.asset_check_key == one and evaluation.passed
    for name in ("max_small_files_per_bucket", "small_files", "files", "bytes"):  # numbers Dagster plots
        assert isinstance(evaluation.metadata[name], dg.IntMetadataValue), name
    assert not result.get_asset_materialization_events()


MAINTENANCE = (
    ("compact_tables", "compact_tables_op", CompactConfig(full=True)),
    ("rescale_table", "rescale_table_op", RescaleConfig(table="db.src", bucket=2)),
    ("expire_snapshots", "expire_snapshots_op",
     ExpireSnapshotsConfig(retention=RetentionConfig(retain_min=1, retain_max=1), dry_run=False)),
    ("remove_orphan_files", "remove_orphan_files_op", RemoveOrphanFilesConfig(dry_run=False)),
)


@pytest.mark.parametrize(("job_name", "node", "config"), MAINTENANCE, ids=[m[0] for m in MAINTENANCE])
def test_maintenance_keeps_downstream_fresh_and_its_checks_evaluated(lake, warehouse, job_name, node, config):
    defs, instance = lake
    assert stale_status(instance, defs, SINK) == "FRESH"
    assert all(check_status(instance, k) == "SUCCEEDED" for k in CHECK_KEYS)
    if job_name == "remove_orphan_files":
        orphan = Path(FileSystemCatalog(warehouse).load_table("db.src").path) / "bucket-0" / "data-orphan.parquet"
        orphan.write_bytes(b"left behind by a crashed writer")
        os.utime(orphan, (time.time() - 3 * 86400,) * 2)
    latest = {k: instance.get_latest_materialization_event(k).run_id for k in (SRC, SINK)}

    result = defs.resolve_job_def(job_name).execute_in_process(
        instance=instance, run_config=dg.RunConfig(ops={node: config}))
    observed = {e.asset_key for e in result.all_events if e.event_type_value == "ASSET_OBSERVATION"}
    assert SRC in observed
    assert not result.get_asset_materialization_events()  # maintenance changes no row: no new materialization
    assert {k: instance.get_latest_materialization_event(k).run_id for k in (SRC, SINK)} == latest
    assert stale_status(instance, defs, SINK) == "FRESH"  # no "Unsynced" badge after maintenance

    request = run_checks_requested_after(defs, instance, result)
    assert set(request.asset_check_keys) == {k for k in CHECK_KEYS if k.asset_key in observed}
    assert all(check_status(instance, k) == "SUCCEEDED" for k in CHECK_KEYS)  # "Passed", evaluated again
    latest_runs = {instance.event_log_storage.get_latest_asset_check_execution_by_key([k])[k].run_id
                   for k in request.asset_check_keys}
    assert latest_runs == {instance.get_runs(limit=1)[0].run_id}  # the checks run after the maintenance run

    defs.resolve_implicit_global_asset_job_def().get_subset(asset_selection={SRC}).execute_in_process(
        instance=instance)  # a real write upstream
    assert stale_status(instance, defs, SINK) == "STALE"


def test_checks_after_compaction_show_the_compacted_layout(lake):
    defs, instance = lake
    for _ in range(3):
        defs.resolve_implicit_global_asset_job_def().execute_in_process(instance=instance)
    key = dg.AssetCheckKey(SRC, "sorted_runs_below_stop_trigger")
    before = instance.event_log_storage.get_latest_asset_check_execution_by_key([key])[key]
    assert before.evaluation.metadata["max_sorted_runs_per_bucket"].value == 5
    result = defs.resolve_job_def("compact_tables").execute_in_process(
        instance=instance, run_config=dg.RunConfig(ops={"compact_tables_op": CompactConfig(full=True)}))
    run_checks_requested_after(defs, instance, result)
    after = instance.event_log_storage.get_latest_asset_check_execution_by_key([key])[key]
    assert after.evaluation.metadata["max_sorted_runs_per_bucket"].value == 1
    assert {n: check_status(instance, dg.AssetCheckKey(SRC, n)) for n in CHECK_NAMES} == dict.fromkeys(
        CHECK_NAMES, "SUCCEEDED")
