"""A plain df.write into a primary-key table from Spark partitions that share buckets and keys: each task numbers
its rows in a sequence slot of its own (jobs/spark/pk_write.py); read identically by us and by Java Paimon 0.9 and
2.0, then compacted."""

from __future__ import annotations

import pyarrow as pa
import pytest

from jobs.spark import compact
from jobs.spark.pk_write import SLOTS
from table_format import FileSystemCatalog, open_table, write_table

pytestmark = pytest.mark.spark

SCHEMA = pa.schema([("id", pa.int64(), False), ("dt", pa.string(), False), ("v", pa.string())])
TASKS = 4
KEYS = 30


def _task_rows(tag: str) -> list[tuple[int, str, str]]:
    """TASKS contiguous slices (sc.parallelize keeps them as partitions, in order); every task holds every key
    twice: its second version must replace its first, whichever task wins across tasks."""
    return [(k, "d", f"{tag}{t}-{k}-{j}") for t in range(TASKS) for j in range(2) for k in range(KEYS)]


def _df(spark, rows):
    return spark.sparkContext.parallelize(rows, TASKS).toDF("id long, dt string, v string")


def _rows(table_rows):
    return sorted((r["id"], r["dt"], r["v"]) for r in table_rows)


def _files(table):
    return table.system_table("files").to_pylist()


def test_plain_write_of_overlapping_keys_from_four_tasks(spark, warehouse, oracle, oracle2):
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db")
    table = catalog.create_table("db.pk", SCHEMA, primary_keys=["dt", "id"], partition_keys=["dt"],
                                 options={"bucket": "2"})
    write_table(table, pa.table({"id": pa.array(range(KEYS + 5), pa.int64()), "dt": ["d"] * (KEYS + 5),
                                 "v": ["old"] * (KEYS + 5)}, schema=SCHEMA))
    base = max(f["max_sequence_number"] for f in _files(table)) + 1

    for tag in ("a", "b"):  # the second write replaces every key of the first: its numbers start above them
        _df(spark, _task_rows(tag)).write.format("paimon").mode("append").save(table.path)
        table = open_table(table.path)
        ours = _rows(table.scan().to_arrow().to_pylist())
        winners = {k: v for k, _, v in ours if k < KEYS}
        assert sorted(winners) == list(range(KEYS))
        # each key's winner is the last version of one task (within a task, input order holds)
        assert all(v.startswith(tag) and v.endswith(f"-{k}-1") for k, v in winners.items()), winners
        assert [r for r in ours if r[0] >= KEYS] == [(k, "d", "old") for k in range(KEYS, KEYS + 5)]
        assert ours == _rows(oracle.read(warehouse, "db", "pk"))
        assert ours == _rows(oracle2.read(warehouse, "db", "pk"))

    files = _files(table)
    level0 = [f for f in files if f["level"] == 0]
    assert len({(f["bucket"], f["min_sequence_number"]) for f in level0}) > 2  # several tasks wrote each bucket
    # numbers: task p's i-th row of a bucket is base + i * SLOTS + p; the second write starts above the first
    assert max(f["max_sequence_number"] for f in files) < base + 2 * (2 * KEYS) * SLOTS
    before = ours
    compact(spark, table.path, full=True)
    table = open_table(table.path)
    assert all(f["level"] > 0 for f in _files(table))
    assert _rows(table.scan().to_arrow().to_pylist()) == before
    assert _rows(oracle.read(warehouse, "db", "pk")) == before
    assert _rows(oracle2.read(warehouse, "db", "pk")) == before


def test_plain_write_of_a_dynamic_bucket_table_from_four_tasks(spark, warehouse, oracle, oracle2):
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db")
    table = catalog.create_table("db.dyn", SCHEMA, primary_keys=["dt", "id"], partition_keys=["dt"],
                                 options={"bucket": "-1", "dynamic-bucket.target-row-num": "10"})
    write_table(table, pa.table({"id": pa.array(range(25), pa.int64()), "dt": ["d"] * 25, "v": ["old"] * 25},
                                schema=SCHEMA))
    # every task holds keys 10..49 twice: 10..24 are in the index, 25..49 are new to it (and to every task)
    rows = [(k, "d", f"a{t}-{k}-{j}") for t in range(TASKS) for j in range(2) for k in range(10, 50)]
    _df(spark, rows).write.format("paimon").mode("append").save(table.path)
    table = open_table(table.path)
    ours = _rows(table.scan().to_arrow().to_pylist())
    assert [r[0] for r in ours] == list(range(50))  # no key in two buckets
    assert all(v == "old" if k < 10 else v.endswith(f"-{k}-1") for k, _, v in ours)
    assert ours == _rows(oracle.read(warehouse, "db", "dyn"))
    assert ours == _rows(oracle2.read(warehouse, "db", "dyn"))
    index = [e for e in table.system_table("files").to_pylist() if e["level"] == 0]
    assert len({f["bucket"] for f in index}) >= 2

    # the merged HASH index knows every key: a later write of old and new keys replaces them, never duplicates
    write_table(table, pa.table({"id": pa.array([3, 30, 49], pa.int64()), "dt": ["d"] * 3, "v": ["z"] * 3},
                                schema=SCHEMA))
    after = _rows(open_table(table.path).scan().to_arrow().to_pylist())
    assert [r[0] for r in after] == list(range(50))
    assert {k: v for k, _, v in after if v == "z"} == {3: "z", 30: "z", 49: "z"}
    compact(spark, table.path, full=True)
    assert _rows(open_table(table.path).scan().to_arrow().to_pylist()) == after
    assert _rows(oracle2.read(warehouse, "db", "dyn")) == after
