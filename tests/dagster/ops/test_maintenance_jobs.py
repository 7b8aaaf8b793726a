"""The four maintenance jobs executed in process on the local SparkSession against real tables: the tables' state
afterwards (read with table_format) and the observations reported on the tables' assets (maintenance changes no
row, so it never materializes)."""

import os
import time
from pathlib import Path

import dagster as dg
import pyarrow as pa
import pytest

from jobs.maintenance import (
    CompactConfig,
    ExpireSnapshotsConfig,
    RemoveOrphanFilesConfig,
    RescaleConfig,
    RetentionConfig,
    compact_tables,
    expire_snapshots,
    remove_orphan_files,
    rescale_table,
)
from lakehouse_assets import PaimonIOManager
from table_format import FileSystemCatalog
from tests.dagster.ops.conftest import batch

pytestmark = pytest.mark.dagster


def run(job, resources, node, config, *, raise_on_error=True):
    return job.execute_in_process(resources=resources, run_config=dg.RunConfig(ops={node: config}),
                                  instance=dg.DagsterInstance.ephemeral(), raise_on_error=raise_on_error)


def observations(result):
    assert not result.get_asset_materialization_events()
    return {e.event_specific_data.asset_observation.asset_key.to_user_string(): e.event_specific_data.asset_observation
            for e in result.all_events if e.event_type_value == "ASSET_OBSERVATION"}


def changed(result):
    """The observations of the tables the run changed."""
    return {k: o for k, o in observations(result).items() if o.metadata["maintenance/changed"].value}


def rows(catalog: FileSystemCatalog, name: str) -> list[dict]:
    return catalog.load_table(name).scan().to_arrow().sort_by("id").to_pylist()


def meta(event, key):
    return event.metadata[key].value


def test_compact_tables_compacts_every_table_and_reports_each(catalog, make_table, resources):
    pk = make_table("pk", 6)
    log = make_table("log", 6, primary_keys=())
    before = {name: rows(catalog, name) for name in ("db.pk", "db.log")}
    result = run(compact_tables, resources, "compact_tables_op", CompactConfig(full=True))
    assert result.success
    reported = changed(result)
    assert set(reported) == {"db/pk", "db/log"}
    for name, table in (("db.pk", pk), ("db.log", log)):
        table = table.refresh()
        latest = table.latest_snapshot()
        assert latest.commit_kind.value == "COMPACT"
        assert rows(catalog, name) == before[name]
        event = reported[name.replace(".", "/")]
        assert meta(event, "paimon/snapshot_id") == latest.id
        assert meta(event, "paimon/commit_kind") == "COMPACT"
        assert meta(event, "maintenance/files_before") == 6 if name == "db.log" else meta(event, "maintenance/files_before") > 6
        assert meta(event, "maintenance/files_after") == len(table.system_table("files"))
        assert meta(event, "maintenance/files_after") < meta(event, "maintenance/files_before")
    assert meta(reported["db/pk"], "maintenance/max_sorted_runs_after") == 1


def test_compact_selected_table_only_and_noop_is_an_observation(catalog, make_table, resources):
    make_table("pk", 6)
    small = make_table("small", 1)
    untouched = small.latest_snapshot().id
    result = run(compact_tables, resources, "compact_tables_op", CompactConfig(tables=["db.pk", "db.small"]))
    assert set(changed(result)) == {"db/pk"}
    assert "db/small" in observations(result)  # nothing to compact: reported as unchanged
    assert "dagster/row_count" not in observations(result)["db/small"].metadata  # the table metadata: on change
    assert small.refresh().latest_snapshot().id == untouched


def test_unknown_table_fails_before_touching_any_table(catalog, make_table, resources):
    pk = make_table("pk", 6)
    snapshot = pk.latest_snapshot().id
    result = run(compact_tables, resources, "compact_tables_op", CompactConfig(tables=["db.pk", "db.missing"]),
                 raise_on_error=False)
    assert not result.success
    failure = result.failure_data_for_node("compact_tables_op")
    assert "db.missing" in failure.error.message and "no table touched" in failure.error.message
    assert pk.refresh().latest_snapshot().id == snapshot
    assert not observations(result)


def test_expire_snapshots_dry_run_by_default_then_for_real(catalog, make_table, resources):
    pk = make_table("pk", 5, **{"snapshot.num-retained.max": "2"})
    result = run(expire_snapshots, resources, "expire_snapshots_op", ExpireSnapshotsConfig())
    assert len(pk.refresh().snapshots()) == 5
    observed = observations(result)["db/pk"]
    assert meta(observed, "maintenance/dry_run") is True
    assert meta(observed, "maintenance/expired_snapshots") == [1, 2, 3]

    result = run(expire_snapshots, resources, "expire_snapshots_op",
                 ExpireSnapshotsConfig(retention=RetentionConfig(retain_max=3), dry_run=False))
    assert [s.id for s in pk.refresh().snapshots()] == [3, 4, 5]
    event = changed(result)["db/pk"]
    assert meta(event, "maintenance/expired_snapshots") == [1, 2]
    assert meta(event, "maintenance/deleted_files") > 0
    assert meta(event, "maintenance/snapshots_after") == 3


def test_rescale_table_rewrites_with_the_new_bucket_count(catalog, make_table, resources):
    pk = make_table("pk", 3)
    before = rows(catalog, "db.pk")
    result = run(rescale_table, resources, "rescale_table_op", RescaleConfig(table="db.pk", bucket=4))
    table = pk.refresh()
    assert table.options["bucket"] == "4"
    assert rows(catalog, "db.pk") == before
    assert sorted(set(table.system_table("files")["bucket"].to_pylist())) == [0, 1, 2, 3]
    event = changed(result)["db/pk"]
    assert meta(event, "maintenance/bucket") == 4
    assert meta(event, "paimon/commit_kind") == "OVERWRITE"

    bad = run(rescale_table, resources, "rescale_table_op", RescaleConfig(table="db.pk", bucket=0),
              raise_on_error=False)
    assert not bad.success and "bucket must be a positive count" in bad.failure_data_for_node(
        "rescale_table_op").error.message
    assert table.refresh().latest_snapshot().id == table.latest_snapshot().id


def test_remove_orphan_files_dry_run_then_delete(catalog, make_table, resources):
    pk = make_table("pk", 2)
    orphan = Path(pk.path) / "bucket-0" / "data-orphan-0.parquet"
    orphan.write_bytes(b"left behind by a crashed writer")
    old = time.time() - 3 * 86400
    os.utime(orphan, (old, old))
    files = len(pk.system_table("files"))

    result = run(remove_orphan_files, resources, "remove_orphan_files_op", RemoveOrphanFilesConfig())
    assert orphan.exists()
    assert meta(observations(result)["db/pk"], "maintenance/orphan_files") == 1

    result = run(remove_orphan_files, resources, "remove_orphan_files_op", RemoveOrphanFilesConfig(dry_run=False))
    assert not orphan.exists()
    event = changed(result)["db/pk"]
    assert meta(event, "maintenance/deleted_files") == 1
    assert len(pk.refresh().system_table("files")) == files


def test_bad_run_config_fails_before_any_write(catalog, make_table, resources):
    pk = make_table("pk", 6)
    log = make_table("log", 6, primary_keys=())
    snapshots = {t.identifier: t.latest_snapshot().id for t in (pk, log)}
    bad_partitions = run(compact_tables, resources, "compact_tables_op",
                         CompactConfig(partitions=[{"dt": "2024-05-14"}]), raise_on_error=False)
    message = bad_partitions.failure_data_for_node("compact_tables_op").error.message
    assert "'partitions'" in message and "db." in message and "no table touched" in message
    bad_retention = run(expire_snapshots, resources, "expire_snapshots_op",
                        ExpireSnapshotsConfig(retention=RetentionConfig(retain_min=5, retain_max=2), dry_run=False),
                        raise_on_error=False)
    assert "retain_min (5)" in bad_retention.failure_data_for_node("expire_snapshots_op").error.message
    bad_age = run(remove_orphan_files, resources, "remove_orphan_files_op",
                  RemoveOrphanFilesConfig(older_than="three days", dry_run=False), raise_on_error=False)
    assert "older_than" in bad_age.failure_data_for_node("remove_orphan_files_op").error.message
    for result in (bad_partitions, bad_retention, bad_age):
        assert not result.success and not observations(result)
    assert {t.identifier: t.refresh().latest_snapshot().id for t in (pk, log)} == snapshots


def test_maintenance_keeps_the_data_version_and_the_incremental_cursor(catalog, warehouse, resources):
    @dg.asset(key=["db", "src"], metadata={"primary_keys": ["id"], "mode": "upsert",
                                           "table_options": {"bucket": "1", "write-only": "true"}})
    def src(context: dg.AssetExecutionContext) -> pa.Table:
        runs = len(context.instance.fetch_materializations(context.asset_key, limit=10).records)
        return batch(runs * 10)

    @dg.asset(key=["db", "sink"], ins={"src": dg.AssetIn(key=["db", "src"], metadata={"incremental": True})},
              metadata={"mode": "append"})
    def sink(src: pa.Table) -> pa.Table:
        return src.select(["id"]).append_column("kind", src["_row_kind"])

    instance = dg.DagsterInstance.ephemeral()
    assets_resources = {"io_manager": PaimonIOManager(warehouse=warehouse)}
    for _ in range(2):
        dg.materialize([src, sink], instance=instance, resources=assets_resources)
    before = {k: instance.get_latest_data_version_record(dg.AssetKey(["db", k])) for k in ("src", "sink")}
    result = compact_tables.execute_in_process(
        resources=resources, instance=instance,
        run_config=dg.RunConfig(ops={"compact_tables_op": CompactConfig(tables=["db.sink", "db.src"], full=True)}))
    reported = changed(result)
    assert set(reported) == {"db/sink", "db/src"}
    for name, record in before.items():
        after = instance.get_latest_data_version_record(dg.AssetKey(["db", name]))
        assert after.storage_id == record.storage_id  # the latest materialization is still the asset's own
        version = record.event_log_entry.tags["dagster/data_version"]
        assert reported[f"db/{name}"].tags["dagster/data_version"] == version  # the observation names it too
    assert meta(reported["db/src"], "paimon/commit_kind") == "COMPACT"

    dg.materialize([src, sink], instance=instance, resources=assets_resources)  # 10 more rows upstream
    assert catalog.load_table("db.sink").scan().to_arrow().num_rows == 30  # only the new changes were read
