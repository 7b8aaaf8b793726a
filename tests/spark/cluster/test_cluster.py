"""jobs.spark on a real standalone cluster (a master and two workers on 127.0.0.1) whose executors' Python does
not have this project: compaction and the data source work only because spark_session() shipped the code."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from table_format import CommitKind, open_table

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # maintenance_tables, beside the local tests
from maintenance_tables import expected_rows, make_table, rows  # noqa: E402

pytestmark = [pytest.mark.spark, pytest.mark.cluster]


def test_compaction_and_reads_on_a_cluster_with_shipped_code(spark_cluster, warehouse, oracle):
    table = make_table(warehouse, "pk", commits=6)
    probe, result, read, native, count = spark_cluster.run_driver([
        {"op": "probe"},
        {"op": "compact", "table": table.path, "full": True},
        {"op": "read", "table": table.path},
        {"op": "read_table", "table": table.path},  # compacted: every file read by the executors' Parquet reader
        {"op": "count", "table": table.path, "filter": "dt = '2024-05-02' AND v > 500000"},
    ])
    # the executors ran the executor venv's Python and imported table_format from the shipped zip
    assert {p["python"] for p in probe} == {str(spark_cluster.executor_python)}
    assert all(".zip/table_format/__init__.py" in p["table_format"] for p in probe)

    assert result["snapshot_id"] is not None and result["compacted_buckets"] == 8
    compacted = open_table(table.path)
    assert compacted.latest_snapshot().commit_kind == CommitKind.COMPACT
    assert {f["level"] for f in compacted.system_table("files").to_pylist()} == {5}
    assert rows(compacted) == expected_rows("pk")
    assert sorted(tuple(r[n] for n in ("dt", "id", "v", "s")) for r in oracle.read(warehouse, "db", "t")) == \
        expected_rows("pk")

    assert [tuple(r) for r in read] == expected_rows("pk")
    assert native["native"] and [tuple(r) for r in native["rows"]] == expected_rows("pk")
    assert count == sum(1 for r in expected_rows("pk") if r[0] == "2024-05-02" and r[2] > 500000)


def test_sql_session_tables_on_a_cluster(spark_cluster, warehouse, oracle):
    table = make_table(warehouse, "pk", commits=2)
    before = expected_rows("pk", commits=2)
    [answer] = spark_cluster.run_driver([{"op": "sql", "warehouse": warehouse, "statements": [
        "INSERT INTO db.t SELECT dt, id + 1000000, v, s FROM db.t",  # a plain write: tasks share buckets
        "SELECT count(*), count(DISTINCT id) FROM db.t",
    ]}])
    assert answer == [[2 * len(before), 2 * len(before)]]
    assert len(rows(open_table(table.path))) == 2 * len(before)
    assert len(oracle.read(warehouse, "db", "t")) == 2 * len(before)


def test_executor_sizing_is_left_to_the_cluster(spark_cluster):
    # no executor size asked for: the 1 GiB workers host Spark's default executors (a fixed 2g never started)
    probe = spark_cluster.run_driver({"conf": {"spark.cores.max": "2", "spark.driver.memory": "1g"},
                                      "ops": [{"op": "probe"}]})[0]
    assert {p["python"] for p in probe} == {str(spark_cluster.executor_python)}


def test_executors_no_worker_can_host_fail_instead_of_hanging(spark_cluster):
    with pytest.raises(AssertionError, match="granted no executor within 10 s.*spark.executor.memory=4g"):
        spark_cluster.run_driver({"conf": {"spark.executor.memory": "4g", "spark.driver.memory": "1g"},
                                  "executor_timeout": 10, "ops": [{"op": "probe"}]}, timeout=240)


def test_streaming_query_on_a_cluster(spark_cluster, warehouse, tmp_path):
    table = make_table(warehouse, "pk", commits=4)
    target = f"{warehouse}/db.db/audit"
    (batches,) = spark_cluster.run_driver([
        {"op": "stream", "table": table.path, "target": target, "checkpoint": str(tmp_path / "ckpt")},
    ])
    assert batches >= 1
    names = ["dt", "id", "v", "s", "_row_kind"]
    expected = sorted(tuple(r[n] for n in names) for r in table.changes(0, 4, merged=False).to_pylist())
    got = open_table(target).scan().to_arrow().rename_columns([*names[:-1], "_row_kind"])
    assert sorted(tuple(r[n] for n in names) for r in got.select(names).to_pylist()) == expected
