"""The maintenance jobs' engine (run config ``engine: auto | local | spark``): auto picks local below the threshold
and Spark from it (on a local[...] master only with spark_on_local_master), local/spark force it, the Spark path of
every job still works, and a local run starts no JVM."""

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import dagster as dg
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
from jobs.maintenance.engine import DEFAULT_SPARK_THRESHOLD_BYTES
from lakehouse_assets import pyspark_resource

pytestmark = pytest.mark.dagster
ROOT = Path(__file__).resolve().parents[3]


def run(job, resources, node, config):
    return job.execute_in_process(resources=resources, run_config=dg.RunConfig(ops={node: config}),
                                  instance=dg.DagsterInstance.ephemeral())


def reported(result, key="db/pk"):
    """The maintenance metadata of the table's materialization or observation in this run."""
    for event in result.all_events:
        data = event.event_specific_data
        found = getattr(data, "materialization", None) or getattr(data, "asset_observation", None)
        if found is not None and found.asset_key.to_user_string() == key:
            return {k: getattr(v, "value", v) for k, v in found.metadata.items()}
    raise AssertionError(f"nothing reported for {key}")


def output_metadata(result, node):
    (event,) = [e for e in result.all_events if e.event_type_value == "STEP_OUTPUT" and e.step_key == node]
    return {k: getattr(v, "value", v) for k, v in event.event_specific_data.metadata.items()}


def test_auto_compacts_a_small_table_in_process_and_a_large_one_on_spark(catalog, make_table, resources):
    make_table("pk", 6)
    result = run(compact_tables, resources, "compact_tables_op", CompactConfig(tables=["db.pk"]))
    local = reported(result)
    assert local["maintenance/engine"] == "local" and local["maintenance/changed"] is True
    assert f"< threshold {DEFAULT_SPARK_THRESHOLD_BYTES}" in local["maintenance/engine_reason"]
    assert 0 < local["maintenance/work_bytes"] < DEFAULT_SPARK_THRESHOLD_BYTES
    assert output_metadata(result, "compact_tables_op")["maintenance/engines"] == {"db.pk": "local"}

    make_table("big", 6)  # "big": above a threshold of 1 byte, but the master is local[...]: still in process
    result = run(compact_tables, resources, "compact_tables_op",
                 CompactConfig(tables=["db.big"], spark_threshold_bytes=1))
    stay = reported(result, "db/big")
    assert stay["maintenance/engine"] == "local" and ">= threshold 1, but Spark master local[" in stay[
        "maintenance/engine_reason"]
    assert "spark_on_local_master: true" in stay["maintenance/engine_reason"]
    make_table("big2", 6)  # the same, with spark_on_local_master: Spark
    result = run(compact_tables, resources, "compact_tables_op",
                 CompactConfig(tables=["db.big2"], spark_threshold_bytes=1, spark_on_local_master=True))
    spark = reported(result, "db/big2")
    assert spark["maintenance/engine"] == "spark" and spark["paimon/commit_kind"] == "COMPACT"
    assert spark["maintenance/work_bytes"] >= 1 and ">= threshold 1" in spark["maintenance/engine_reason"]
    assert output_metadata(result, "compact_tables_op")["maintenance/engine"] == "spark"
    rows = {name: catalog.load_table(f"db.{name}").scan().to_arrow().sort_by("id") for name in ("pk", "big", "big2")}
    assert rows["big"].equals(rows["pk"]) and rows["big2"].equals(rows["pk"])  # the same data, either engine


def test_forced_engines_override_the_threshold(catalog, make_table, resources):
    make_table("pk", 6)
    result = run(compact_tables, resources, "compact_tables_op",
                 CompactConfig(engine="local", spark_threshold_bytes=1))
    assert reported(result)["maintenance/engine"] == "local"
    assert reported(result)["maintenance/engine_reason"] == "engine: local in run config"
    make_table("pk2", 6)
    result = run(compact_tables, resources, "compact_tables_op", CompactConfig(tables=["db.pk2"], engine="spark"))
    assert reported(result, "db/pk2")["maintenance/engine"] == "spark"


def test_every_job_runs_on_spark_when_asked(catalog, make_table, resources):
    pk = make_table("pk", 5, **{"snapshot.num-retained.max": "2"})
    result = run(expire_snapshots, resources, "expire_snapshots_op",
                 ExpireSnapshotsConfig(engine="spark", dry_run=False, retention=RetentionConfig(retain_max=3)))
    assert reported(result)["maintenance/engine"] == "spark"
    assert [s.id for s in pk.refresh().snapshots()] == [3, 4, 5]

    result = run(rescale_table, resources, "rescale_table_op", RescaleConfig(table="db.pk", bucket=3, engine="spark"))
    assert reported(result)["maintenance/engine"] == "spark" and pk.refresh().options["bucket"] == "3"

    orphan = Path(pk.path) / "bucket-0" / "data-orphan-0.parquet"
    orphan.write_bytes(b"left behind")
    os.utime(orphan, (time.time() - 3 * 86400,) * 2)
    result = run(remove_orphan_files, resources, "remove_orphan_files_op",
                 RemoveOrphanFilesConfig(engine="spark", dry_run=False))
    assert reported(result)["maintenance/engine"] == "spark" and not orphan.exists()


def test_auto_measures_files_for_expiration_and_orphans(catalog, make_table, resources):
    pk = make_table("pk", 4, **{"snapshot.num-retained.max": "2"})
    result = run(expire_snapshots, resources, "expire_snapshots_op", ExpireSnapshotsConfig())
    meta = reported(result)
    assert meta["maintenance/engine"] == "local" and meta["maintenance/work_files"] > 0
    result = run(expire_snapshots, resources, "expire_snapshots_op",
                 ExpireSnapshotsConfig(spark_threshold_files=meta["maintenance/work_files"],
                                       spark_on_local_master=True))
    assert reported(result)["maintenance/engine"] == "spark"
    result = run(remove_orphan_files, resources, "remove_orphan_files_op", RemoveOrphanFilesConfig())
    assert reported(result)["maintenance/work_files"] == len(pk.system_table("files"))
    assert reported(result)["maintenance/engine"] == "local"


LOCAL_RUN = textwrap.dedent("""
    import json, sys, time
    import dagster as dg, pyarrow as pa
    from pyspark import SparkContext
    from pyspark.sql import SparkSession
    from jobs.maintenance import CompactConfig, compact_tables
    from lakehouse_assets import PaimonCatalogResource, pyspark_resource
    from table_format import FileSystemCatalog, write_table

    catalog = FileSystemCatalog(sys.argv[1])
    catalog.create_database("db")
    table = catalog.create_table("db.t", pa.schema([pa.field("id", pa.int64(), nullable=False)]),
                                 primary_keys=["id"], options={"bucket": "1", "write-only": "true"})
    for i in range(6):
        write_table(table, pa.table({"id": pa.array([i, i + 1], pa.int64())}))
    resources = {"pyspark": pyspark_resource(), "paimon_catalog": PaimonCatalogResource(warehouse=sys.argv[1])}
    timings = {}
    for name in ("compact", "no-op"):
        start = time.perf_counter()
        result = compact_tables.execute_in_process(resources=resources, instance=dg.DagsterInstance.ephemeral())
        timings[name] = time.perf_counter() - start
        assert result.success
    print(json.dumps({"seconds": timings, "snapshot": catalog.load_table("db.t").latest_snapshot().commit_kind.value,
                      "session": SparkSession.getActiveSession() is not None,
                      "jvm": SparkContext._gateway is not None}))
""")


def test_a_local_run_starts_no_spark_session(tmp_path):
    """In a fresh process: a compaction and a no-op compaction on the local engine, and no JVM ever started."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "SPARK_LOCAL_IP": "127.0.0.1"}
    out = subprocess.run([sys.executable, "-c", LOCAL_RUN, str(tmp_path / "wh")], env=env, cwd=tmp_path,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert report["snapshot"] == "COMPACT"
    assert report["session"] is False and report["jvm"] is False
    print(f"local compact_tables runs: {report['seconds']}")


def test_the_resource_creates_its_session_on_first_use_only(spark):
    resource = pyspark_resource()
    with dg.build_resources({"pyspark": resource}) as resources:
        assert resources.pyspark._spark_session is None  # set up, nothing started
        assert resources.pyspark.spark_session is spark  # the active session is reused, not stopped at teardown
    assert spark.range(3).count() == 3
