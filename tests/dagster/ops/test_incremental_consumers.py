"""Incremental inputs are Paimon consumers: a paused downstream keeps what it has not read through the nightly
expiry (our job on Spark, and Java Paimon's own expiration), then reads exactly the changes it missed."""

import datetime as dt
import json
import os

import dagster as dg
import pyarrow as pa
import pytest

from jobs.maintenance import RetentionConfig, expire_snapshots
from lakehouse_assets import PaimonIOManager
from lakehouse_assets.checks import evaluate_table_checks
from lakehouse_assets.health import ConsumerLag, table_health
from lakehouse_assets.incremental import consumer_id
from schedules import build_expire_schedule
from table_format import FileSystemCatalog

UPSTREAM = dg.AssetKey(["inc", "events"])
DOWNSTREAM = dg.AssetKey(["inc", "event_log"])
CONSUMER = "dagster-inc.event_log"
SCHEMA = pa.schema([("id", pa.int64()), ("dt", pa.string()), ("v", pa.string())])  # the oracle's FIELDS


def batch(ids: list[int]) -> pa.Table:
    return pa.table({"id": ids, "dt": ["2999-01-01"] * len(ids), "v": [f"v{i}" for i in ids]}, schema=SCHEMA)


class Pipeline:
    """An upstream table (append) and its incremental downstream; `seen` holds each downstream run's ids."""

    def __init__(self, warehouse: str, instance: dg.DagsterInstance):
        self.warehouse, self.instance = warehouse, instance
        self.next_batch: list[int] = []
        self.fail = False
        self.seen: list[list[int]] = []

        @dg.asset(key=UPSTREAM, metadata={"mode": "append", "table_options": {"bucket": "-1"}})
        def events() -> pa.Table:
            return batch(self.next_batch)

        @dg.asset(key=DOWNSTREAM, metadata={"mode": "append"},
                  ins={"events": dg.AssetIn(key=UPSTREAM, metadata={"incremental": True})})
        def event_log(events: pa.Table) -> pa.Table:
            if self.fail:
                raise RuntimeError("the downstream failed after loading its input")
            self.seen.append(sorted(events["id"].to_pylist()))
            return events.select(["id"])

        self.assets = [events, event_log]
        self.resources = {"io_manager": PaimonIOManager(warehouse=warehouse)}

    def upstream(self, ids: list[int]) -> None:
        self.next_batch = ids
        assert dg.materialize(self.assets, selection=[UPSTREAM], resources=self.resources,
                              instance=self.instance).success

    def downstream(self) -> bool:
        return dg.materialize(self.assets, selection=[DOWNSTREAM], resources=self.resources, instance=self.instance,
                              raise_on_error=not self.fail).success

    @property
    def table(self):
        return FileSystemCatalog(self.warehouse).load_table("inc.events")


def test_consumer_id_from_the_downstream_key():
    assert consumer_id(DOWNSTREAM) == CONSUMER
    assert consumer_id(dg.AssetKey(["a b", "c/d"])) == "dagster-a_b.c_d"


def test_paused_downstream_survives_the_nightly_expiry(warehouse, instance, resources):
    p = Pipeline(warehouse, instance)
    for ids in ([1], [2], [3]):
        p.upstream(ids)
    assert p.downstream()
    assert p.table.consumer(CONSUMER).next_snapshot == 3
    assert p.table.consumer(CONSUMER).pins_last_read  # table_format counts what it has not read after snapshot 3

    p.upstream([4])
    p.fail = True
    assert not p.downstream()  # loaded snapshot 4, failed: the consumer stays where the last success left it
    p.fail = False
    assert p.table.consumer(CONSUMER).next_snapshot == 3
    for ids in ([5], [6]):  # the downstream is paused
        p.upstream(ids)
    health = table_health(p.table)
    assert health.consumers == (ConsumerLag(CONSUMER, 3, 3),)
    retention = {c.check_name: c for c in evaluate_table_checks(UPSTREAM, p.table, None)}["snapshots_within_retention"]
    assert retention.metadata["consumers"].value == {CONSUMER: {"next_snapshot": 3, "snapshots_behind": 3}}

    # the nightly expiry with retain_min=retain_max=1: everything the consumer has not read stays
    nightly = build_expire_schedule(retention=RetentionConfig(retain_min=1, retain_max=1))
    context = dg.build_schedule_context(instance=instance, resources={"paimon_catalog": resources["paimon_catalog"]},
                                        scheduled_execution_time=dt.datetime(2026, 5, 1, 2, tzinfo=dt.timezone.utc))
    request = nightly(context)
    assert request.run_config["ops"]["expire_snapshots_op"]["config"]["tables"] == ["inc.events"]
    result = expire_snapshots.execute_in_process(run_config=request.run_config, instance=instance,
                                                 resources=resources)
    assert result.success
    assert [s.id for s in p.table.snapshots()] == [3, 4, 5, 6]

    assert p.downstream()  # resumes: exactly the changes it missed, the failed run's batch included
    assert p.seen == [[1, 2, 3], [4, 5, 6]]
    assert p.table.consumer(CONSUMER).next_snapshot == 6
    assert table_health(p.table).consumers == (ConsumerLag(CONSUMER, 6, 0),)
    log = FileSystemCatalog(warehouse).load_table("inc.event_log").scan().to_arrow()
    assert sorted(log["id"].to_pylist()) == [1, 2, 3, 4, 5, 6]


@pytest.mark.interop
def test_java_expiration_keeps_what_the_downstream_has_not_read(warehouse, instance, oracle_each):
    oracle = oracle_each  # Java Paimon 0.9 and 2.0
    p = Pipeline(warehouse, instance)
    p.upstream([1])
    assert p.downstream()
    retained = {"snapshot.num-retained.min": "1", "snapshot.num-retained.max": "1"}

    def java_commit(ids: list[int]) -> None:  # Java's BatchTableCommit expires by these options after its commit
        oracle.write_spec({
            "warehouse": warehouse, "database": "inc", "table": "events", "if_exists": "append",
            "schema": {"fields": [{"name": "id", "type": "BIGINT"}, {"name": "dt", "type": "STRING"},
                                  {"name": "v", "type": "STRING"}], "primary_keys": [], "partition_keys": [],
                       "options": {"bucket": "-1"}},
            "batches": [{"rows": [["+I", i, "2999-01-01", f"v{i}"] for i in ids]}],
            "dynamic_options": retained,
        })

    for ids in ([2], [3, 4], [5]):
        java_commit(ids)
    snapshot_dir = os.path.join(warehouse, "inc.db", "events", "snapshot")
    on_disk = sorted(int(f.split("-")[1]) for f in os.listdir(snapshot_dir) if f.startswith("snapshot-"))
    assert on_disk == [1, 2, 3, 4]  # the consumer (nextSnapshot 1) kept them all
    consumer_file = os.path.join(warehouse, "inc.db", "events", "consumer", f"consumer-{CONSUMER}")
    with open(consumer_file) as f:
        assert json.load(f) == {"nextSnapshot": 1}

    assert p.downstream()
    assert p.seen == [[1], [2, 3, 4, 5]]
    java_commit([6])  # the consumer moved to 4: Java now expires up to it
    on_disk = sorted(int(f.split("-")[1]) for f in os.listdir(snapshot_dir) if f.startswith("snapshot-"))
    assert on_disk == [4, 5]
    assert p.downstream()
    assert p.seen == [[1], [2, 3, 4, 5], [6]]
