"""jobs.spark.read_table: files that need no merge are read by Spark's own Parquet reader, the rest by
format("paimon") pinned to the same snapshot; the rows always equal the data source's and table_format's."""

from __future__ import annotations

import datetime
import decimal
import shutil
from pathlib import Path

import pyarrow as pa
import pytest

from jobs.spark import read_table
from jobs.spark.native_read import native_plan
from table_format import FileSystemCatalog, SchemaChange, open_table, write_table

pytestmark = pytest.mark.spark

GOLDEN = Path(__file__).resolve().parents[2] / ".." / "shared" / "golden" / "tables"
SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("dt", pa.string()), ("v", pa.string()),
                    ("x", pa.float64())])


def _data(ids, tag="a"):
    return pa.table({"id": pa.array(ids, pa.int64()), "dt": [f"d{i % 3}" for i in ids],
                     "v": [f"{tag}{i}" for i in ids], "x": [i / 4 for i in ids]}, schema=SCHEMA)


def _catalog(warehouse):
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db", exist_ok=True)
    return catalog


def _rows(frame):
    return sorted((tuple(r) for r in frame.collect()), key=repr)


def _scans(frame):
    """(native Parquet scans, paimon data source scans) in the executed plan."""
    plan = frame._jdf.queryExecution().executedPlan().toString()
    return plan.count("FileScan parquet"), plan.count("BatchScan paimon") + plan.count("PythonScan")


def _same_as_data_source(spark, path, **options):
    frame = read_table(spark, path, options=options)
    source = spark.read.format("paimon").options(**options).load(path)
    assert frame.columns == source.columns
    assert _rows(frame) == _rows(source)
    return frame


def test_append_table_is_read_by_spark_parquet_alone(spark, warehouse):
    table = _catalog(warehouse).create_table("db.a", SCHEMA, partition_keys=["dt"])
    write_table(table, _data(range(100)))
    write_table(table, _data(range(100, 150)))
    frame = _same_as_data_source(spark, table.path)
    assert _scans(frame) == (1, 0)
    assert len(frame.inputFiles()) == sum(len(s.files) for s in table.scan().plan())
    assert frame.where("dt = 'd1' and id > 120").count() == len([i for i in range(121, 150) if i % 3 == 1])


def test_primary_key_table_mixes_compacted_files_and_merged_splits(spark, warehouse):
    table = _catalog(warehouse).create_table("db.pk", SCHEMA, primary_keys=["id"], options={"bucket": "4"})
    write_table(table, _data(range(400)))
    table.maintenance.compact(full=True)
    write_table(table, _data(range(0, 400, 7), tag="b"))  # level-0 files overlapping every bucket: merged splits
    writes = table.scan().plan()
    assert not any(s.raw_convertible for s in writes)
    frame = _same_as_data_source(spark, table.path)
    assert _scans(frame) == (0, 1)  # every split needs a merge: nothing for Spark's reader
    table.maintenance.compact(full=True)
    frame = _same_as_data_source(spark, table.path)
    assert _scans(frame) == (1, 0)
    assert dict(frame.select("id", "v").collect())[7] == "b7"


def test_files_with_retractions_or_deletion_vectors_stay_on_the_data_source(spark, warehouse):
    catalog = _catalog(warehouse)
    for name, options in (("del", {"bucket": "2"}), ("dv", {"bucket": "2", "deletion-vectors.enabled": "true"})):
        table = catalog.create_table(f"db.{name}", SCHEMA, primary_keys=["id"], options=options)
        write_table(table, _data(range(200)))
        table.maintenance.compact(full=True)
        deletes = _data(range(0, 200, 5)).append_column("_row_kind", pa.array(["-D"] * 40))
        write_table(table, deletes)
        table.maintenance.compact(full=name == "dv")  # dv: deletion vectors on the compacted files
        store = table.store
        splits = table.scan().plan()
        plan = native_plan(splits, store, SCHEMA.names)
        for split in splits:
            for i, f in enumerate(split.files):
                has_dv = bool(split.deletion_files and split.deletion_files[i] is not None)
                native = (split.partition, split.bucket, f.file_name) in plan.keys
                assert native == (not has_dv and f.delete_row_count == 0 and split.raw_convertible)
        frame = _same_as_data_source(spark, table.path)
        assert frame.count() == 160 and frame.where("id % 5 = 0").count() == 0


def test_schema_changes_read_by_field_id(spark, warehouse):
    catalog = _catalog(warehouse)
    table = catalog.create_table("db.evolve", SCHEMA, partition_keys=["dt"])
    write_table(table, _data(range(30)))
    catalog.alter_table("db.evolve", [SchemaChange.rename_column("v", "label")])
    catalog.alter_table("db.evolve", [SchemaChange.add_column("extra", pa.int32())])
    catalog.alter_table("db.evolve", [SchemaChange.drop_column("x")])
    catalog.alter_table("db.evolve", [SchemaChange.add_column("x", pa.string())])  # same name, new field id
    table = open_table(table.path)
    write_table(table, pa.table({"id": pa.array([100, 101], pa.int64()), "dt": ["d0", "d1"],
                                 "label": ["n100", "n101"], "extra": pa.array([1, None], pa.int32()),
                                 "x": ["s", None]}, schema=table.arrow_schema))
    frame = _same_as_data_source(spark, table.path)
    native, source = _scans(frame)
    assert native == 1 and source == 1  # the new file natively; the old ones (renamed, re-added column) not
    rows = {r["id"]: r for r in frame.collect()}
    assert rows[5]["label"] == "a5" and rows[5]["extra"] is None and rows[5]["x"] is None
    assert rows[100]["x"] == "s" and rows[100]["extra"] == 1
    # only the added column since the old files: they are read natively too (Spark reads nulls for it)
    catalog.create_table("db.added", SCHEMA)
    added = catalog.load_table("db.added")
    write_table(added, _data(range(10)))
    catalog.alter_table("db.added", [SchemaChange.add_column("extra", pa.int32())])
    added = catalog.load_table("db.added")
    write_table(added, _data(range(10, 12)).append_column("extra", pa.array([7, 8], pa.int32())))
    frame = _same_as_data_source(spark, added.path)
    assert _scans(frame) == (1, 0)
    assert sorted(r["extra"] for r in frame.collect() if r["extra"] is not None) == [7, 8]


ALL_TYPES = pa.schema([
    pa.field("id", pa.int32(), nullable=False), ("b", pa.bool_()), ("i8", pa.int8()), ("i16", pa.int16()),
    ("i64", pa.int64()), ("f32", pa.float32()), ("f64", pa.float64()), ("d", pa.date32()),
    ("dec", pa.decimal128(10, 2)), ("wide", pa.decimal128(30, 5)), ("s", pa.string()), ("bin", pa.binary()),
    ("ts3", pa.timestamp("ms")), ("ts6", pa.timestamp("us")), ("ltz", pa.timestamp("us", tz="UTC")),
])


def _all_types_rows(n):
    old = datetime.date(1000, 1, 1)  # before 1582: Spark's rebase check must not trip on our files
    return pa.table({
        "id": pa.array(range(n), pa.int32()),
        "b": [i % 2 == 0 if i % 5 else None for i in range(n)],
        "i8": pa.array([i % 100 - 50 for i in range(n)], pa.int8()),
        "i16": pa.array([i * 3 for i in range(n)], pa.int16()),
        "i64": pa.array([i * 10**12 if i % 4 else None for i in range(n)], pa.int64()),
        "f32": pa.array([i / 8 for i in range(n)], pa.float32()), "f64": [i / 3 for i in range(n)],
        "d": [old + datetime.timedelta(days=i * 400) for i in range(n)],
        "dec": [decimal.Decimal(f"{i}.{i % 100:02d}") for i in range(n)],
        "wide": [decimal.Decimal(f"{i}12345678901234567890.12345") if i % 3 else None for i in range(n)],
        "s": [f"s{i}" if i % 6 else None for i in range(n)], "bin": [bytes([i % 256, 1]) for i in range(n)],
        "ts3": pa.array([i * 86_400_123 for i in range(n)], pa.timestamp("ms")),
        "ts6": pa.array([-10**15 + i * 86_400_123_457 for i in range(n)], pa.timestamp("us")),
        "ltz": pa.array([i * 3_600_000_001 for i in range(n)], pa.timestamp("us", tz="UTC")),
    }, schema=ALL_TYPES)


@pytest.mark.parametrize("keys", [[], ["id"]])
def test_every_atomic_type_reads_the_same(spark, warehouse, keys):
    table = _catalog(warehouse).create_table(f"db.types{len(keys)}", ALL_TYPES, primary_keys=keys,
                                             options={"bucket": "1"} if keys else {})
    write_table(table, _all_types_rows(60))
    frame = _same_as_data_source(spark, table.path)
    assert _scans(frame) == (1, 0)
    assert frame.schema.simpleString() == spark.read.format("paimon").load(table.path).schema.simpleString()


def test_a_type_spark_parquet_cannot_map_keeps_the_data_source(spark, warehouse):
    schema = pa.schema([("id", pa.int64()), ("tags", pa.list_(pa.string())), ("t9", pa.timestamp("ns"))])
    table = _catalog(warehouse).create_table("db.nested", schema)
    write_table(table, pa.table({"id": [1, 2], "tags": [["a"], None],
                                 "t9": pa.array([1, 2], pa.timestamp("ns"))}, schema=schema))
    frame = _same_as_data_source(spark, table.path)
    assert _scans(frame) == (0, 1)
    projected = _same_as_data_source(spark, table.path, columns="id")  # only native types read: native
    assert _scans(projected) == (1, 0)


def test_projection_time_travel_and_empty(spark, warehouse):
    catalog = _catalog(warehouse)
    table = catalog.create_table("db.tt", SCHEMA, primary_keys=["id"], options={"bucket": "2"})
    empty = read_table(spark, table.path)
    assert empty.count() == 0 and empty.columns == SCHEMA.names
    first = write_table(table, _data(range(50)))
    table.create_tag("t1", snapshot_id=first)
    write_table(table, _data(range(25, 75), tag="b"))
    _same_as_data_source(spark, table.path, columns="v,id")
    assert read_table(spark, table.path, options={"Columns": "v"}).columns == ["v"]  # option names ignore case
    assert _rows(_same_as_data_source(spark, table.path, **{"snapshot-id": str(first)})) == _rows(
        _same_as_data_source(spark, table.path, tag="t1"))
    assert read_table(spark, table.path, options={"tag": "t1"}).count() == 50
    changes = read_table(spark, table.path, options={"incremental-between": f"{first},{first + 1}"})
    assert "_row_kind" in changes.columns
    kinds = _same_as_data_source(spark, table.path, **{"read.changelog": "true"})
    assert kinds.columns[-1] == "_row_kind" and _scans(kinds) == (0, 1)


def test_partition_values_escaped_in_paths(spark, warehouse):
    table = _catalog(warehouse).create_table("db.odd", SCHEMA, partition_keys=["dt"])
    data = _data(range(12))
    odd = ["a/b c", "x:y=z", "50%", "d1"]
    write_table(table, data.set_column(1, "dt", pa.array([odd[i % 4] for i in range(12)])))
    frame = _same_as_data_source(spark, table.path)
    native, _ = _scans(frame)
    assert native == 1 and sorted(r["dt"] for r in frame.select("dt").distinct().collect()) == sorted(odd)


@pytest.mark.parametrize("name", ["pk_partitioned_compacted", "append_unaware"])
def test_java_written_tables(spark, tmp_path, name):
    source = GOLDEN / name
    if not source.exists():
        pytest.skip(f"golden table {name} absent")
    path = tmp_path / name
    shutil.copytree(source, path)
    frame = _same_as_data_source(spark, str(path))
    expected = open_table(str(path)).scan().to_arrow().to_pylist()
    assert _rows(frame) == sorted((tuple(r.values()) for r in expected), key=repr)
    assert _scans(frame)[0] >= 1
