"""compaction_sensor and nightly_expire_snapshots evaluated with Dagster's test contexts against real tables."""

import datetime as dt
import json
from pathlib import Path

import dagster as dg
import pytest

from schedules import compaction_sensor, nightly_expire_snapshots
from table_format import write_table
from tests.dagster.ops.conftest import batch

pytestmark = pytest.mark.dagster


def tick(catalog_resource, cursor=None):
    context = dg.build_sensor_context(instance=dg.DagsterInstance.ephemeral(), cursor=cursor,
                                      resources={"paimon_catalog": catalog_resource})
    return compaction_sensor(context)


def test_sensor_requests_one_run_per_table_and_snapshot(make_table, catalog_resource):
    pk = make_table("pk", 6)  # 6 sorted runs per bucket >= num-sorted-run.compaction-trigger 5
    make_table("log", 6, primary_keys=())  # 6 small files in its one bucket >= compaction.min.file-num 5
    make_table("healthy", 2)
    make_table("strict", 4, **{"num-sorted-run.compaction-trigger": "3", "compaction.min.file-num": "50"})

    result = tick(catalog_resource)
    requests = {r.tags["paimon/table"]: r for r in result.run_requests}
    assert set(requests) == {"db.pk", "db.log", "db.strict"}  # thresholds from each table's own options
    assert requests["db.pk"].run_key == f"compact:db.pk@{pk.latest_snapshot().id}"
    assert requests["db.pk"].run_config["ops"] == {"compact_tables_op": {"config": {
        "tables": ["db.pk"], "full": False, "partitions": [], "engine": "auto",  # the engine by the work's size
        "spark_threshold_bytes": 256 << 20, "spark_threshold_files": 10_000, "spark_on_local_master": False}}}
    assert json.loads(result.cursor) == {"db.healthy": 2, "db.log": 6, "db.pk": 6, "db.strict": 4}

    again = tick(catalog_resource, result.cursor)  # nothing new: no request, however often it ticks
    assert not again.run_requests and again.skip_reason is not None
    assert again.cursor == result.cursor

    write_table(pk, batch(100))  # a new snapshot of a table still due: one new request, with a new run key
    third = tick(catalog_resource, again.cursor)
    assert [r.run_key for r in third.run_requests] == [f"compact:db.pk@{pk.latest_snapshot().id}"]


def test_sensor_stays_quiet_after_compaction(make_table, catalog_resource):
    pk = make_table("pk", 6)
    first = tick(catalog_resource)
    assert len(first.run_requests) == 1
    pk.maintenance.compact(full=True)  # what the requested run does
    after = tick(catalog_resource, first.cursor)
    assert not after.run_requests
    assert json.loads(after.cursor)["db.pk"] == pk.refresh().latest_snapshot().id


def test_sensor_on_empty_warehouse(catalog, catalog_resource):
    result = tick(catalog_resource)
    assert not result.run_requests and json.loads(result.cursor) == {}


def schedule_tick(catalog_resource):
    context = dg.build_schedule_context(instance=dg.DagsterInstance.ephemeral(),
                                        scheduled_execution_time=dt.datetime(2024, 5, 15, 2, tzinfo=dt.timezone.utc),
                                        resources={"paimon_catalog": catalog_resource})
    return nightly_expire_snapshots(context)


def test_nightly_schedule_expires_the_tables_beyond_retention(make_table, catalog_resource):
    make_table("busy", 5, **{"snapshot.num-retained.max": "3"})
    make_table("quiet", 2)
    request = schedule_tick(catalog_resource)
    assert isinstance(request, dg.RunRequest)
    assert request.run_key == "expire:2024-05-15"
    config = request.run_config["ops"]["expire_snapshots_op"]["config"]
    assert config["tables"] == ["db.busy"] and config["dry_run"] is False
    assert nightly_expire_snapshots.cron_schedule == "0 2 * * *"


def test_nightly_schedule_skips_when_all_within_retention(make_table, catalog_resource):
    make_table("quiet", 2)
    assert isinstance(schedule_tick(catalog_resource), dg.SkipReason)


def test_sensor_skips_an_unreadable_table_and_serves_the_others(make_table, catalog_resource):
    make_table("pk", 6)
    broken = make_table("broken", 6)
    latest = broken.latest_snapshot().id
    (Path(broken.path) / "snapshot" / f"snapshot-{latest}").write_text("{not json")
    (Path(broken.path) / "snapshot" / "LATEST").write_text(str(latest))
    result = tick(catalog_resource)
    assert [r.tags["paimon/table"] for r in result.run_requests] == ["db.pk"]
    assert "db.broken" not in json.loads(result.cursor)  # looked at again on the next tick
