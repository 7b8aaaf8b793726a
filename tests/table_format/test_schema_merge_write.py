"""write_table / new_write with schema_mode: "strict" refuses new input columns; "merge" evolves the table,
publishing the new schema only once every data file is written."""

from __future__ import annotations

import os
import pickle

import polars as pl
import pyarrow as pa
import pytest

from table_format import (
    CommitConflictError,
    CommitFailedError,
    FileSystemCatalog,
    SchemaChange,
    SchemaError,
    Table,
    write_table,
)
from table_format.errors import SchemaConflictError

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("qty", pa.int32()), ("price", pa.float32())])


@pytest.fixture
def catalog(warehouse: str) -> FileSystemCatalog:
    cat = FileSystemCatalog(warehouse)
    cat.create_database("db")
    return cat


@pytest.fixture
def table(catalog: FileSystemCatalog) -> Table:
    t = catalog.create_table("db.t", SCHEMA, primary_keys=["id"], options={"bucket": "1"})
    write_table(t, pa.table({"id": [1, 2], "qty": pa.array([1, 2], pa.int32()), "price": pa.array([1.5, 2.5], pa.float32())}))
    return t


def schema_files(table: Table) -> list[str]:
    return sorted(os.listdir(os.path.join(table.path, "schema")))


def test_strict_mode_refuses_new_columns_and_suggests_merge(table: Table) -> None:
    data = pa.table({"id": [3], "qty": pa.array([3], pa.int32()), "price": pa.array([1.0], pa.float32()),
                     "colour": ["red"], "size": [1]})
    with pytest.raises(SchemaError, match=r"'db.t'.*\['colour', 'size'\].*schema_mode='merge'"):
        write_table(table, data)
    with pytest.raises(SchemaError, match=r"int64.*schema_mode='merge' widens 'qty' \(INT -> BIGINT\)"):
        write_table(table, pa.table({"id": [3], "qty": [2**40], "price": pa.array([1.0], pa.float32())}))
    with pytest.raises(SchemaError, match="schema_mode must be"):
        write_table(table, data, schema_mode="lenient")
    assert len(table.snapshots()) == 1 and schema_files(table) == ["schema-0"]


def test_merge_adds_columns_widens_and_fills_missing(catalog: FileSystemCatalog, table: Table) -> None:
    data = pl.DataFrame({"id": [2, 3], "qty": [20, 2**40], "colour": ["red", None], "price": [0.1, 0.2]})
    snapshot = write_table(table, data, schema_mode="merge")
    assert snapshot == 2 and schema_files(table) == ["schema-0", "schema-1"]
    assert table.arrow_schema.names == ["id", "qty", "price", "colour"]  # the table object follows
    fields = {f.name: f for f in table.schema.fields}
    assert str(fields["qty"].type) == "BIGINT" and str(fields["price"].type) == "DOUBLE"
    assert fields["colour"].id == 3 and table.latest_snapshot().schema_id == 1  # type: ignore[union-attr]
    rows = sorted(table.scan().to_arrow().to_pylist(), key=lambda r: r["id"])
    assert rows == [{"id": 1, "qty": 1, "price": 1.5, "colour": None},
                    {"id": 2, "qty": 20, "price": 0.1, "colour": "red"},
                    {"id": 3, "qty": 2**40, "price": 0.2, "colour": None}]
    # a later input without `colour` and `price` writes nulls there; the schema stays
    write_table(table, pa.table({"id": [4], "qty": [4]}), schema_mode="merge")
    assert schema_files(table) == ["schema-0", "schema-1"]
    assert catalog.load_table("db.t").scan(filter=[("id", "=", 4)]).to_arrow().to_pylist() == [
        {"id": 4, "qty": 4, "price": None, "colour": None}]


def test_merge_never_widens_key_columns_and_still_refuses_missing_keys(table: Table) -> None:
    with pytest.raises(SchemaError, match="id"):
        write_table(table, pa.table({"qty": [1], "new": [1]}), schema_mode="merge")
    assert schema_files(table) == ["schema-0"] and len(table.snapshots()) == 1


def test_failed_merge_write_leaves_no_schema_no_snapshot_no_files(table: Table) -> None:
    data_dir = os.path.join(table.path, "bucket-0")
    files_before = sorted(os.listdir(data_dir))
    bad = pa.table({"id": pa.array([None, 5], pa.int64()), "qty": [1, 2], "extra": ["a", "b"]})
    with pytest.raises(SchemaError, match="'id' is NOT NULL"):
        write_table(table, bad, schema_mode="merge")
    assert schema_files(table) == ["schema-0"] and len(table.snapshots()) == 1
    assert sorted(os.listdir(data_dir)) == files_before
    assert table.scan().to_arrow().schema.names == ["id", "qty", "price"]


def test_failed_commit_of_a_merge_write_leaves_no_data(table: Table, monkeypatch: pytest.MonkeyPatch) -> None:
    """The documented residue: the schema is published right before the snapshot; when the snapshot commit itself
    fails, the new (nullable) column stays, and no row, file or snapshot of the write does."""
    from table_format.write.commit import FileStoreCommit

    data_dir = os.path.join(table.path, "bucket-0")
    files_before = sorted(os.listdir(data_dir))
    rows_before = table.scan().to_arrow().to_pylist()

    def refuse(*args: object, **kwargs: object) -> None:
        raise CommitFailedError("storage unavailable")

    monkeypatch.setattr(FileStoreCommit, "commit", refuse)
    with pytest.raises(CommitFailedError):
        write_table(table, pa.table({"id": [9], "extra": ["a"]}), schema_mode="merge")
    assert len(table.snapshots()) == 1 and sorted(os.listdir(data_dir)) == files_before
    assert schema_files(table) == ["schema-0", "schema-1"]
    assert table.refresh().scan().to_arrow().to_pylist() == [{**r, "extra": None} for r in rows_before]


def test_two_phase_merge_writers_publish_at_prepare_commit(table: Table) -> None:
    first, second = table.new_write(schema_mode="merge"), table.new_write(schema_mode="merge")
    first.write(pa.table({"id": [10], "note": ["a"]}))
    second.write(pa.table({"id": [11], "note": ["b"]}))  # an identical evolution (executors of one write)
    assert schema_files(table) == ["schema-0"]  # nothing visible while writing
    messages = pickle.loads(pickle.dumps(first.prepare_commit())) + second.prepare_commit()
    assert schema_files(table) == ["schema-0", "schema-1"]
    table.commit(messages)
    assert table.arrow_schema.names == ["id", "qty", "price", "note"]
    assert {r["id"]: r["note"] for r in table.scan().to_arrow().to_pylist()} == {1: None, 2: None, 10: "a", 11: "b"}


def test_two_phase_merge_writer_conflicting_with_another_schema(catalog: FileSystemCatalog, table: Table) -> None:
    writer = table.new_write(schema_mode="merge")
    writer.write(pa.table({"id": [10], "note": ["a"]}))
    catalog.alter_table("db.t", [SchemaChange.add_column("other", pa.int32())])  # takes schema-1 first
    with pytest.raises(SchemaConflictError, match="write again") as info:
        writer.prepare_commit()
    assert isinstance(info.value, CommitConflictError)
    writer.abort()
    assert catalog.load_table("db.t").arrow_schema.names == ["id", "qty", "price", "other"]


def test_write_table_merge_redoes_the_write_after_a_concurrent_schema_change(
        catalog: FileSystemCatalog, table: Table, monkeypatch: pytest.MonkeyPatch) -> None:
    from table_format.write.schema_merge import SchemaMerger

    real_publish = SchemaMerger.publish
    calls = []

    def publish_after_a_rival(self: SchemaMerger, store: object) -> None:
        if not calls:
            catalog.alter_table("db.t", [SchemaChange.add_column("rival", pa.string())])
        calls.append(1)
        real_publish(self, store)  # type: ignore[arg-type]

    monkeypatch.setattr(SchemaMerger, "publish", publish_after_a_rival)
    reader = pa.RecordBatchReader.from_batches(
        pa.schema([("id", pa.int64()), ("note", pa.string())]),
        pa.table({"id": [7], "note": ["x"]}).to_batches())
    assert write_table(table, reader, schema_mode="merge") == 2 and len(calls) == 2
    assert table.arrow_schema.names == ["id", "qty", "price", "rival", "note"]
    assert schema_files(table) == ["schema-0", "schema-1", "schema-2"]
    assert table.scan(filter=[("id", "=", 7)]).to_arrow().to_pylist() == [
        {"id": 7, "qty": None, "price": None, "rival": None, "note": "x"}]


def test_merge_widening_on_append_table_and_buffered_rows(catalog: FileSystemCatalog) -> None:
    t = catalog.create_table("db.a", pa.schema([("k", pa.int16()), ("v", pa.string())]))
    writer = t.new_write(schema_mode="merge")
    writer.write(pa.table({"k": pa.array([1], pa.int16()), "v": ["a"]}))
    writer.write(pa.table({"k": pa.array([70000], pa.int32()), "w": [1.5]}))  # widens k, adds w; buffer follows
    t.commit(writer.prepare_commit())
    assert t.schema.id == 1 and str(t.schema.field("k").type) == "INT"
    assert sorted(t.scan().to_arrow().to_pylist(), key=lambda r: r["k"]) == [
        {"k": 1, "v": "a", "w": None}, {"k": 70000, "v": None, "w": 1.5}]


def test_merge_leaves_types_without_a_paimon_type_to_the_conversion(table: Table) -> None:
    with pytest.raises(SchemaError, match="cannot add column 'u'.*uint32"):
        write_table(table, pa.table({"id": [5], "u": pa.array([1], pa.uint32())}), schema_mode="merge")
    with pytest.raises(SchemaError, match="'qty'.*uint32"):  # an existing column: the strict conversion refuses it
        write_table(table, pa.table({"id": [5], "qty": pa.array([1], pa.uint32())}), schema_mode="merge")
    assert schema_files(table) == ["schema-0"] and len(table.snapshots()) == 1


def test_merge_with_overwrite_replaces_the_rows_and_evolves_the_schema(catalog: FileSystemCatalog) -> None:
    t = catalog.create_table("db.o", pa.schema([("p", pa.string()), ("k", pa.int32())]), partition_keys=["p"])
    write_table(t, pa.table({"p": ["a", "b"], "k": pa.array([1, 2], pa.int32())}))
    write_table(t, pa.table({"p": ["a"], "k": [10], "extra": [True]}), mode="overwrite",
                overwrite_partitions=[{"p": "a"}], schema_mode="merge")
    assert str(t.schema.field("k").type) == "BIGINT"
    assert sorted(t.scan().to_arrow().to_pylist(), key=lambda r: r["p"]) == [
        {"p": "a", "k": 10, "extra": True}, {"p": "b", "k": 2, "extra": None}]
