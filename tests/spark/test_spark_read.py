"""spark.read.format("paimon"): the merged view, pushdown with pruning, projection, time travel, incremental reads."""

from __future__ import annotations

import datetime
import re
from decimal import Decimal

import pyarrow as pa
import pytest
from pyspark.sql.utils import CapturedException

from jobs.spark.types import exchange_schema, to_exchange
from table_format import FileSystemCatalog, iter_split, write_table

pytestmark = pytest.mark.spark


def _catalog(warehouse):
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db", exist_ok=True)
    return catalog


def _key(row):
    return tuple((v is None, str(v)) for v in row.values())


def _comparable(rows):
    """Rows sorted, NaN as a string (NaN != NaN would fail equal rows)."""
    return sorted(({k: "NaN" if isinstance(v, float) and v != v else v for k, v in r.items()} for r in rows),
                  key=_key)


def _spark_rows(df):
    return _comparable(df.toArrow().to_pylist())


def _our_rows(table, **scan):
    return _comparable(table.scan(**scan).to_arrow().to_pylist())


@pytest.fixture
def events(warehouse):
    """A partitioned append table: 4 commits, one file each, ids 0..399, dt d0/d1, a float column."""
    table = _catalog(warehouse).create_table(
        "db.events", pa.schema([("id", pa.int64()), ("dt", pa.string()), ("name", pa.string()), ("x", pa.float64())]),
        partition_keys=["dt"])
    for i in range(4):
        ids = list(range(i * 100, i * 100 + 100))
        write_table(table, pa.table({"id": pa.array(ids, pa.int64()), "dt": [f"d{i % 2}"] * 100,
                                     "name": [f"n{j}" if j % 7 else None for j in ids],
                                     "x": [j / 2 if j % 50 else float("nan") for j in ids]}))
    return table


def test_counts_and_rows_equal_table_format(spark, events):
    df = spark.read.format("paimon").load(events.path)
    assert df.count() == 400
    assert _spark_rows(df) == _our_rows(events)
    assert df.rdd.getNumPartitions() == 2  # four small files packed into min-partitions=2 Spark partitions
    one_each = spark.read.format("paimon").option("min-partitions", "8").load(events.path)
    assert one_each.rdd.getNumPartitions() == 4


def _filter_of_plan(df):
    plan = df._jdf.queryExecution().executedPlan().toString()
    return [line for line in plan.splitlines() if re.search(r"(^|\s)Filter\s", line)]


@pytest.mark.parametrize(("where", "dnf", "files"), [
    ("dt = 'd0'", [("dt", "=", "d0")], 2),  # partition pruning
    ("id >= 350", [("id", ">=", 350)], 1),  # min/max pruning
    ("id in (5, 250) and dt <> 'd1'", [("id", "in", [5, 250]), ("dt", "!=", "d1")], 2),
    ("name like 'n1%'", [("name", "starts_with", "n1")], 2),
    ("name is null and id < 100", [("name", "is null"), ("id", "<", 100)], 1),
    ("not (id <= 10) and id < 20", [("id", ">", 10), ("id", "<", 20)], 1),
])
def test_pushed_filters_prune_and_are_not_applied_again(spark, events, where, dnf, files):
    # one file per Spark partition: the partition count is the number of files left after pruning (of 4)
    df = spark.read.format("paimon").option("pushdown", "true").option("min-partitions", "8").load(
        events.path).where(where)
    assert df.rdd.getNumPartitions() == files
    assert _spark_rows(df) == _our_rows(events, filter=dnf)
    assert not _filter_of_plan(df)  # taken by the data source: Spark has nothing left to filter


@pytest.mark.parametrize("where", [
    "x > 100",  # floats are never taken (NaN orders above every number in Spark)
    "name like '%3'",
    "id < 10 or id > 390",  # OR is not pushed by Spark
    "id + 1 = 5",
])
def test_filters_not_taken_are_applied_by_spark(spark, events, where):
    df = spark.read.format("paimon").option("pushdown", "true").load(events.path).where(where)
    assert _filter_of_plan(df)
    expected = {"x > 100": lambda r: r["x"] > 100 or r["x"] != r["x"],
                "name like '%3'": lambda r: r["name"] is not None and r["name"].endswith("3"),
                "id < 10 or id > 390": lambda r: r["id"] < 10 or r["id"] > 390,
                "id + 1 = 5": lambda r: r["id"] == 4}[where]
    rows = _spark_rows(df)
    assert len(rows) == sum(1 for r in events.scan().to_arrow().to_pylist() if expected(r)) > 0


def test_projection_option(spark, events):
    df = spark.read.format("paimon").option("columns", "name,id").load(events.path)
    assert df.columns == ["name", "id"]
    assert _spark_rows(df.where("id > 300")) == _our_rows(events, columns=["name", "id"], filter=[("id", ">", 300)])
    with pytest.raises(CapturedException, match="unknown columns \\['nope'\\]"):
        spark.read.format("paimon").option("columns", "id,nope").load(events.path).schema  # noqa: B018


def test_primary_key_merged_view_time_travel_and_tags(spark, warehouse):
    table = _catalog(warehouse).create_table(
        "db.pk", pa.schema([pa.field("k", pa.int32(), nullable=False), ("v", pa.string())]),
        primary_keys=["k"], options={"bucket": "2"})
    write_table(table, pa.table({"k": pa.array(range(10), pa.int32()), "v": ["a"] * 10}))
    table.create_tag("first")
    write_table(table, pa.table({"k": pa.array([1, 2, 3], pa.int32()), "v": ["b"] * 3,
                                 "_row_kind": ["+U", "-D", "+U"]}))
    write_table(table, pa.table({"k": pa.array([20], pa.int32()), "v": ["c"]}))
    def read():
        return spark.read.format("paimon")

    assert _spark_rows(read().load(table.path)) == _our_rows(table)
    assert len(_our_rows(table)) == 10
    assert _spark_rows(read().option("snapshot-id", "2").load(table.path)) == _our_rows(table, snapshot_id=2)
    assert _spark_rows(read().option("tag", "first").load(table.path)) == _our_rows(table, tag="first")
    one_bucket = read().option("pushdown", "true").option("min-partitions", "8").load(table.path).where("k = 3")
    assert _spark_rows(one_bucket) == [{"k": 3, "v": "b"}]
    assert one_bucket.rdd.getNumPartitions() == 1  # bucket pruning: one of two buckets, merged

    changes = spark.read.format("paimon").option("incremental-between", "1,3").load(table.path)
    assert changes.columns == ["k", "v", "_row_kind"]
    assert _spark_rows(changes) == _comparable(table.changes(1, 3).to_pylist())
    assert {r["_row_kind"] for r in _spark_rows(changes)} >= {"+U", "-D", "+I"}
    with pytest.raises(CapturedException, match="'snapshot-id', 'tag'"):
        read().option("snapshot-id", "1").option("tag", "first").load(table.path).schema  # noqa: B018


def test_a_split_above_the_memory_budget_is_read_in_key_ranges(spark, warehouse):
    """`sort-spill-buffer-size` of 2 kb: each executor merges its split key range by key range (iter_split)."""
    table = _catalog(warehouse).create_table(
        "db.ranges", pa.schema([pa.field("k", pa.int64(), nullable=False), ("v", pa.string())]),
        primary_keys=["k"], options={"bucket": "1", "write-only": "true", "sort-spill-buffer-size": "2 kb"})
    for run in range(3):
        keys = pa.array(range(run, 3000, run + 1), pa.int64())
        write_table(table, pa.table({"k": keys, "v": [f"r{run}"] * len(keys)}))
    table = table.refresh()
    split = table.scan().plan()[0]
    assert len(split.files) == 3 and len(list(iter_split(table, split))) > 10
    assert _spark_rows(spark.read.format("paimon").load(table.path)) == _our_rows(table)
    assert len(_our_rows(table)) == 3000


def test_incremental_reads_split_by_bucket_in_parallel(spark, warehouse):
    """A change set over several partitions and buckets is read as several Spark partitions, with the rows of
    table.changes; a range with no change is empty; a range outside the snapshots fails at load()."""
    table = _catalog(warehouse).create_table(
        "db.inc", pa.schema([("dt", pa.string()), ("k", pa.int64()), ("v", pa.string())]), primary_keys=["dt", "k"],
        partition_keys=["dt"], options={"bucket": "4", "sequence.field": "k"})
    for i in range(3):
        keys = list(range(i * 10, i * 10 + 40))
        write_table(table, pa.table({"dt": [f"d{k % 2}" for k in keys], "k": pa.array(keys, pa.int64()),
                                     "v": [f"v{i}-{k}" for k in keys],
                                     "_row_kind": ["-D" if k % 9 == 0 and i else "+U" for k in keys]}))
    changes = spark.read.format("paimon").option("incremental-between", "1,3").option("min-partitions", "4")
    df = changes.load(table.path)
    assert df.rdd.getNumPartitions() >= 4  # 2 partitions x 4 buckets of changed files, packed into >= 4 groups
    expected = _comparable(table.changes(1, 3).to_pylist())
    assert len(expected) > 40
    assert _spark_rows(df) == expected
    assert len(table.change_splits(1, 3)) == 8
    assert spark.read.format("paimon").option("incremental-between", "3,3").load(table.path).count() == 0
    with pytest.raises(CapturedException, match="no changes between snapshots 2 and 9"):
        spark.read.format("paimon").option("incremental-between", "2,9").load(table.path).count()


def test_a_dataframe_reads_the_snapshot_latest_at_load_like_spark_file_sources(spark, events, tmp_path):
    """load() pins the latest snapshot: commits after it are not seen by that DataFrame, before or after its first
    action (as Spark's own Parquet source lists its files at load()); a new load() sees them."""
    more = pa.table({"id": pa.array([900], pa.int64()), "dt": ["d0"], "name": ["late"], "x": [1.0]})
    df = spark.read.format("paimon").load(events.path)
    write_table(events, more)  # before the first action
    assert df.count() == 400
    write_table(events, more)  # after it
    assert df.count() == 400 and df.where("id = 900").count() == 0
    assert spark.read.format("paimon").load(events.path).count() == 402
    parquet = tmp_path / "p"
    spark.range(3).write.parquet(str(parquet))
    files = spark.read.parquet(str(parquet))
    spark.range(5).write.mode("append").parquet(str(parquet))
    assert files.count() == 3  # Spark's file source: the listing of load()
    assert spark.read.parquet(str(parquet)).count() == 8


def test_load_by_warehouse_and_identifier(spark, events, warehouse):
    df = spark.read.format("paimon").option("warehouse", warehouse).load("db.events")
    assert df.count() == 400


ALL_TYPES = pa.schema([
    ("b", pa.bool_()), ("i8", pa.int8()), ("i16", pa.int16()), ("i32", pa.int32()), ("i64", pa.int64()),
    ("f32", pa.float32()), ("f64", pa.float64()), ("dec", pa.decimal128(12, 3)), ("s", pa.string()),
    ("bin", pa.binary()), ("d", pa.date32()), ("ts", pa.timestamp("us")), ("ts3", pa.timestamp("ms")),
    ("ltz", pa.timestamp("us", tz="UTC")), ("arr", pa.list_(pa.int32())), ("m", pa.map_(pa.string(), pa.int64())),
    ("row", pa.struct([("x", pa.int32()), ("y", pa.string())])),
])


def _all_types_data():
    ts = datetime.datetime(2024, 5, 14, 12, 30, 1, 123456)
    return pa.table({
        "b": [True, None], "i8": [1, -128], "i16": [2, None], "i32": [3, 2**31 - 1], "i64": [4, -(2**63)],
        "f32": [1.5, None], "f64": [2.25, -0.0], "dec": [Decimal("123456789.123"), None], "s": ["é", ""],
        "bin": [b"\x00\xff", None], "d": [datetime.date(2024, 5, 14), None], "ts": [ts, None],
        "ts3": [ts.replace(microsecond=123000), None], "ltz": [ts.replace(tzinfo=datetime.timezone.utc), None],
        "arr": [[1, None, 3], None], "m": [[("a", 1)], None], "row": [{"x": 1, "y": "z"}, None],
    }, schema=ALL_TYPES)


def test_every_type_reads_and_writes_back(spark, warehouse, oracle):
    catalog = _catalog(warehouse)
    source = catalog.create_table("db.types", ALL_TYPES)
    write_table(source, _all_types_data())
    df = spark.read.format("paimon").load(source.path)
    ours = source.scan().to_arrow()
    assert df.toArrow().to_pylist() == to_exchange(ours, exchange_schema(df.schema)).to_pylist()

    copy = catalog.create_table("db.types_copy", ALL_TYPES)
    df.write.format("paimon").mode("append").save(copy.path)
    assert copy.scan().to_arrow().equals(ours)
    assert oracle.read(warehouse, "db", "types_copy") == oracle.read(warehouse, "db", "types")


def test_write_refuses_a_timestamp_with_the_wrong_time_zone_kind(spark, warehouse):
    table = _catalog(warehouse).create_table("db.ts", pa.schema([("ts", pa.timestamp("us"))]))
    df = spark.sql("select timestamp'2024-05-14 10:00:00' as ts")  # TimestampType: with a time zone
    with pytest.raises(CapturedException, match="column 'ts': needs Spark TimestampNTZType"):
        df.write.format("paimon").mode("append").save(table.path)
    spark.sql("select timestamp_ntz'2024-05-14 10:00:00' as ts").write.format("paimon").mode("append").save(
        table.path)
    assert table.scan().to_arrow().column("ts").to_pylist() == [datetime.datetime(2024, 5, 14, 10)]

    millis = _catalog(warehouse).create_table("db.ts3", pa.schema([("ts", pa.timestamp("ms"))]))
    spark.sql("select timestamp_ntz'2024-05-14 10:00:00.123' as ts").write.format("paimon").mode("append").save(
        millis.path)  # Spark's microseconds fit TIMESTAMP(3) when no value has finer digits
    with pytest.raises(CapturedException, match="column 'ts': a Spark timestamp has more precision"):
        spark.sql("select timestamp_ntz'2024-05-14 10:00:00.123456' as ts").write.format("paimon").mode(
            "append").save(millis.path)
    assert millis.scan().to_arrow().column("ts").to_pylist() == [datetime.datetime(2024, 5, 14, 10, 0, 0, 123000)]
