"""Schema evolution: every SchemaChange, every refusal (the table unchanged), and reads across schema versions
(merged primary-key reads, append reads, filters, time travel, changes, system tables, compaction)."""

from __future__ import annotations

import decimal
import json
import os
from collections.abc import Sequence
from typing import Any

import pyarrow as pa
import pytest

from table_format import (
    FileSystemCatalog,
    OptionError,
    SchemaChange,
    SchemaError,
    Table,
    TableFormatError,
    write_table,
)
from table_format.store.schema_manager import SchemaManager
from table_format.write.compact_task import CompactTask, run_compact_task

D = decimal.Decimal
PK_SCHEMA = pa.schema([
    pa.field("id", pa.int32(), nullable=False), ("dt", pa.string()), ("qty", pa.int32()), ("price", pa.decimal128(6, 2)),
    ("ratio", pa.float32()), ("note", pa.string()),
])


@pytest.fixture
def catalog(warehouse: str) -> FileSystemCatalog:
    cat = FileSystemCatalog(warehouse)
    cat.create_database("db")
    return cat


def pk_table(catalog: FileSystemCatalog, **options: str) -> Table:
    return catalog.create_table("db.t", PK_SCHEMA, primary_keys=["id", "dt"], partition_keys=["dt"],
                                options={"bucket": "2", **options})


def pk_rows(ids: Sequence[int], *, qty: int = 1, note: str = "n") -> pa.Table:
    return pa.table({
        "id": pa.array(ids, pa.int32()), "dt": ["d1"] * len(ids), "qty": pa.array([qty] * len(ids), pa.int32()),
        "price": pa.array([D("1.25")] * len(ids), pa.decimal128(6, 2)), "ratio": pa.array([0.5] * len(ids), pa.float32()),
        "note": [f"{note}{i}" for i in ids],
    })


def schema_files(table: Table) -> list[str]:
    return sorted(os.listdir(os.path.join(table.path, "schema")))


def rows_by_id(table: Table, **scan: Any) -> dict[int, dict[str, Any]]:
    return {r["id"]: r for r in table.scan(**scan).to_arrow().to_pylist()}


# ---- each change --------------------------------------------------------------------------------------------


def test_add_column_positions_ids_and_comment(catalog: FileSystemCatalog) -> None:
    table = pk_table(catalog)
    write_table(table, pk_rows([1]))
    table = catalog.alter_table("db.t", [
        SchemaChange.add_column("last", pa.string()),
        SchemaChange.add_column("head", pa.int64(), first=True),
        SchemaChange.add_column("after_qty", pa.float64(), after="qty", comment="a comment"),
        SchemaChange.add_column("nested", pa.struct([("x", pa.int32()), ("y", pa.string())])),
    ])
    schema = table.schema
    assert schema.id == 1 and schema_files(table) == ["schema-0", "schema-1"]
    assert schema.field_names == ["head", "id", "dt", "qty", "after_qty", "price", "ratio", "note", "last", "nested"]
    ids = {f.name: f.id for f in schema.fields}
    assert (ids["last"], ids["head"], ids["after_qty"], ids["nested"]) == (6, 7, 8, 9)
    assert [f.id for f in schema.field("nested").type.fields] == [10, 11]  # type: ignore[attr-defined]
    assert schema.highest_field_id == 11 and schema.field("after_qty").description == "a comment"
    assert all(schema.field(n).type.nullable for n in ("last", "head", "after_qty", "nested"))
    assert table.scan().to_arrow().to_pylist() == [{
        "head": None, "id": 1, "dt": "d1", "qty": 1, "after_qty": None, "price": D("1.25"), "ratio": 0.5,
        "note": "n1", "last": None, "nested": None}]
    # the file is Java's schema JSON: highestFieldId continues, field ids, comment as "description"
    with open(os.path.join(table.path, "schema", "schema-1"), encoding="utf-8") as f:
        raw = json.load(f)
    assert raw["id"] == 1 and raw["highestFieldId"] == 11 and raw["fields"][4]["description"] == "a comment"


def test_field_ids_are_never_reused(catalog: FileSystemCatalog) -> None:
    table = pk_table(catalog)
    write_table(table, pk_rows([1], note="old"))
    catalog.alter_table("db.t", [SchemaChange.drop_column("note")])
    table = catalog.alter_table("db.t", [SchemaChange.add_column("note", pa.string())])
    assert table.schema.field("note").id == 6
    assert rows_by_id(table)[1]["note"] is None  # the dropped column's data does not come back


def test_rename_keeps_data_and_renames_options(catalog: FileSystemCatalog) -> None:
    table = catalog.create_table(
        "db.t", PK_SCHEMA, primary_keys=["id", "dt"], partition_keys=["dt"],
        options={"bucket": "1", "merge-engine": "aggregation", "fields.qty.aggregate-function": "sum",
                 "sequence.field": "ratio"})
    write_table(table, pk_rows([1], qty=2))
    table = catalog.alter_table("db.t", [SchemaChange.rename_column("qty", "quantity"),
                                         SchemaChange.rename_column("ratio", "r")])
    assert table.options["fields.quantity.aggregate-function"] == "sum" and table.options["sequence.field"] == "r"
    assert "fields.qty.aggregate-function" not in table.options
    write_table(table, pk_rows([1], qty=3).rename_columns(["id", "dt", "quantity", "price", "r", "note"]))
    assert rows_by_id(table)[1]["quantity"] == 5  # old and new rows aggregate by field id


def test_drop_column(catalog: FileSystemCatalog) -> None:
    table = pk_table(catalog)
    write_table(table, pk_rows([1, 2]))
    table = catalog.alter_table("db.t", [SchemaChange.drop_column("ratio"), SchemaChange.drop_column("note")])
    assert table.schema.field_names == ["id", "dt", "qty", "price"]
    assert rows_by_id(table)[2] == {"id": 2, "dt": "d1", "qty": 1, "price": D("1.25")}


@pytest.mark.parametrize(("column", "new_type", "expected"), [
    ("qty", pa.int64(), 7),
    ("qty", pa.float64(), 7.0),
    ("qty", pa.decimal128(12, 2), D("7.00")),
    ("ratio", pa.float64(), 0.5),
    ("price", "DECIMAL(10, 4)", D("1.2500")),
])
def test_update_column_type_widens_and_old_files_read_cast(catalog: FileSystemCatalog, column: str, new_type: Any,
                                                           expected: Any) -> None:
    table = pk_table(catalog)
    write_table(table, pk_rows([1], qty=7))
    table = catalog.alter_table("db.t", [SchemaChange.update_column_type(column, new_type)])
    assert rows_by_id(table)[1][column] == expected
    assert table.schema.field(column).type.nullable


def test_char_timestamp_and_binary_widenings(catalog: FileSystemCatalog) -> None:
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("ts", pa.timestamp("ms")), ("b", pa.binary(3))])
    table = catalog.create_table("db.w", schema, primary_keys=["id"], options={"bucket": "1"})
    catalog.alter_table("db.w", [SchemaChange.add_column("c", "CHAR(2)"), SchemaChange.add_column("v", "VARCHAR(3)")])
    write_table(catalog.load_table("db.w"), pa.table({
        "id": [1], "ts": pa.array([1_700_000_000_123], pa.timestamp("ms")), "b": pa.array([b"abc"], pa.binary(3)),
        "c": ["x"], "v": ["abc"]}))
    table = catalog.alter_table("db.w", [SchemaChange.update_column_type("ts", "TIMESTAMP(6)"),
                                         SchemaChange.update_column_type("b", "VARBINARY(10)"),
                                         SchemaChange.update_column_type("c", "CHAR(4)"),
                                         SchemaChange.update_column_type("v", "STRING")])
    row = table.scan().to_arrow().to_pylist()[0]
    assert row["ts"].microsecond == 123000 and row["b"] == b"abc" and row["v"] == "abc"
    assert row["c"] == "x   "  # a value read through a widened CHAR is padded to the new length, as Java does


def test_nullability_comment_options_and_move(catalog: FileSystemCatalog) -> None:
    table = pk_table(catalog)
    write_table(table, pk_rows([1]))
    table = catalog.alter_table("db.t", [
        SchemaChange.update_column_nullability("qty", False),  # no nulls in the data: allowed
        SchemaChange.update_column_comment("price", "in EUR"),
        SchemaChange.set_option("snapshot.num-retained.max", 50),
        SchemaChange.update_comment("orders"),
        SchemaChange.move_column("note", after="id"),
    ])
    assert not table.schema.field("qty").type.nullable and not table.arrow_schema.field("qty").nullable
    assert table.schema.field("price").description == "in EUR" and table.schema.comment == "orders"
    assert table.options["snapshot.num-retained.max"] == "50"
    assert table.schema.field_names == ["id", "note", "dt", "qty", "price", "ratio"]
    table = catalog.alter_table("db.t", [SchemaChange.update_column_nullability("qty", True),
                                         SchemaChange.remove_option("snapshot.num-retained.max"),
                                         SchemaChange.move_column("note", first=True)])
    assert table.schema.field("qty").type.nullable and "snapshot.num-retained.max" not in table.options
    assert table.schema.field_names[0] == "note" and schema_files(table) == ["schema-0", "schema-1", "schema-2"]


def test_options_java_locks_once_data_exists_can_change_before(catalog: FileSystemCatalog) -> None:
    pk_table(catalog)
    table = catalog.alter_table("db.t", [SchemaChange.set_option("merge-engine", "first-row"),
                                         SchemaChange.set_option("bucket", "4")])
    assert table.options["merge-engine"] == "first-row" and table.options["bucket"] == "4"


# ---- refusals: a clear error and no new schema file -----------------------------------------------------------


REFUSED: list[tuple[str, list[Any], type[TableFormatError], str]] = [
    ("drop primary key", [SchemaChange.drop_column("id")], SchemaError, "primary key"),
    ("rename primary key", [SchemaChange.rename_column("id", "key")], SchemaError, "primary key"),
    ("drop partition", [SchemaChange.drop_column("dt")], SchemaError, "partition key"),
    ("rename partition", [SchemaChange.rename_column("dt", "day")], SchemaError, "partition key"),
    ("partition type", [SchemaChange.update_column_type("dt", "VARCHAR(20)")], SchemaError, "partition column"),
    ("primary key type", [SchemaChange.update_column_type("id", pa.int64())], SchemaError, "bucket"),
    ("primary key nullable", [SchemaChange.update_column_nullability("id", True)], SchemaError, "primary-key"),
    ("STRING -> INT", [SchemaChange.update_column_type("note", pa.int32())], SchemaError, "not a widening"),
    ("widen then narrow", [SchemaChange.update_column_type("qty", pa.int64()),
                           SchemaChange.update_column_type("qty", pa.int32())], SchemaError, "BIGINT -> INT narrows"),
    ("DECIMAL scale down", [SchemaChange.update_column_type("price", "DECIMAL(10, 1)")], SchemaError,
     "not a widening"),
    ("DECIMAL precision down", [SchemaChange.update_column_type("price", "DECIMAL(5, 2)")], SchemaError, "narrows"),
    ("DECIMAL integer digits down", [SchemaChange.update_column_type("price", "DECIMAL(6, 3)")], SchemaError,
     "not a widening"),
    ("FLOAT -> INT", [SchemaChange.update_column_type("ratio", pa.int32())], SchemaError, "not a widening"),
    ("SMALLINT from INT", [SchemaChange.update_column_type("qty", pa.int16())], SchemaError, "narrows"),
    ("INT -> FLOAT (inexact)", [SchemaChange.update_column_type("qty", pa.float32())], SchemaError, "widening"),
    ("INT -> STRING", [SchemaChange.update_column_type("qty", pa.string())], SchemaError, "not a widening"),
    ("nested type", [SchemaChange.update_column_type("qty", pa.list_(pa.int32()))], SchemaError, "nested"),
    ("unknown column", [SchemaChange.drop_column("nope")], SchemaError, "no column 'nope'"),
    ("unknown type target", [SchemaChange.update_column_type("nope", pa.int64())], SchemaError, "no column 'nope'"),
    ("add existing", [SchemaChange.add_column("qty", pa.int64())], SchemaError, "already exists"),
    ("rename onto existing", [SchemaChange.rename_column("qty", "note")], SchemaError, "already exists"),
    ("add NOT NULL", [SchemaChange.add_column("n", "INT NOT NULL")], SchemaError, "NOT NULL"),
    ("add after unknown", [SchemaChange.add_column("n", pa.int32(), after="nope")], SchemaError, "nope"),
    ("reserved name", [SchemaChange.add_column("_SEQUENCE_NUMBER", pa.int64())], SchemaError, "reserved"),
    ("NOT NULL over nulls", [SchemaChange.update_column_nullability("ratio", False)], SchemaError, "null value"),
    ("add then NOT NULL", [SchemaChange.add_column("n", pa.int32()), SchemaChange.update_column_nullability("n", False)],
     SchemaError, "no value"),
    ("bucket change", [SchemaChange.set_option("bucket", "4")], OptionError, "maintenance.rescale"),
    ("bucket removal", [SchemaChange.remove_option("bucket")], OptionError, "bucket"),
    ("immutable option", [SchemaChange.set_option("merge-engine", "first-row")], OptionError, "merge-engine"),
    ("invalid option", [SchemaChange.set_option("changelog-producer", "sometimes")], TableFormatError,
     "changelog-producer"),
    ("path option", [SchemaChange.set_option("path", "/elsewhere")], OptionError, "path"),
    ("option typo", [SchemaChange.set_option("snapshot.num-retained.mx", "5")], OptionError,
     "did you mean 'snapshot.num-retained.max'"),
    ("option of an unknown column", [SchemaChange.set_option("fields.nope.aggregate-function", "sum")], OptionError,
     "nope"),
    ("drop referenced", [SchemaChange.drop_column("note")], SchemaError, "fields.note.ignore-retract"),
    ("move unknown", [SchemaChange.move_column("qty", after="nope")], SchemaError, "nope"),
    # a change refused late in a list leaves nothing of the earlier ones
    ("second change bad", [SchemaChange.add_column("ok", pa.int32()), SchemaChange.drop_column("id")], SchemaError,
     "primary key"),
]


@pytest.mark.parametrize(("changes", "error", "message"), [r[1:] for r in REFUSED], ids=[r[0] for r in REFUSED])
def test_refused_changes_leave_the_table_unchanged(catalog: FileSystemCatalog, changes: list[Any],
                                                    error: type[TableFormatError], message: str) -> None:
    table = pk_table(catalog, **{"fields.note.ignore-retract": "false"})
    write_table(table, pk_rows([1, 2]).set_column(4, "ratio", pa.array([None, 0.5], pa.float32())))
    before = (schema_files(table), table.scan().to_arrow())
    with pytest.raises(error, match=message) as info:
        catalog.alter_table("db.t", changes)
    assert "db.t" in str(info.value) or error is TableFormatError
    after = catalog.load_table("db.t")
    assert (schema_files(after), after.scan().to_arrow()) == before


def test_alter_works_on_tables_holding_option_keys_we_do_not_know(catalog: FileSystemCatalog) -> None:
    table = pk_table(catalog)
    path = os.path.join(table.path, "schema", "schema-0")  # as another engine (a newer Paimon) may have stored it
    with open(path, encoding="utf-8") as f:
        raw = json.load(f)
    raw["options"]["some.future-option"] = "x"
    with open(path, "w", encoding="utf-8") as f:
        json.dump(raw, f)
    table = catalog.alter_table("db.t", [SchemaChange.set_option("snapshot.num-retained.max", "90")])
    assert table.options["some.future-option"] == "x" and table.options["snapshot.num-retained.max"] == "90"


def test_cannot_drop_every_column(catalog: FileSystemCatalog) -> None:
    catalog.create_table("db.a", pa.schema([("x", pa.int32()), ("y", pa.int32())]))
    with pytest.raises(SchemaError, match="every column"):
        catalog.alter_table("db.a", [SchemaChange.drop_column("x"), SchemaChange.drop_column("y")])


def test_constructors_check_their_arguments() -> None:
    with pytest.raises(SchemaError, match="first=True or after"):
        SchemaChange.add_column("x", pa.int32(), first=True, after="y")
    with pytest.raises(SchemaError, match="no Paimon equivalent|Paimon type"):
        SchemaChange.add_column("x", pa.null())
    with pytest.raises(SchemaError, match="exactly one"):
        SchemaChange.move_column("x")
    with pytest.raises(SchemaError, match="True or False"):
        SchemaChange.update_column_nullability("x", "yes")  # type: ignore[arg-type]
    with pytest.raises(SchemaError, match="remove_option"):
        SchemaChange.set_option("k", None)
    change = SchemaChange.rename_column("a", "b")
    with pytest.raises(AttributeError):
        change.name = "c"  # type: ignore[misc]


# ---- concurrency ------------------------------------------------------------------------------------------------


def test_concurrent_alter_is_applied_on_the_new_latest(catalog: FileSystemCatalog,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    pk_table(catalog)
    real_commit = SchemaManager.commit
    raced = []

    def commit_after_a_rival(self: SchemaManager, schema: Any) -> bool:
        if not raced:  # another writer publishes the same schema id first
            raced.append(True)
            rival = self.latest()
            assert rival is not None
            from table_format.schema_evolution import apply_changes

            assert real_commit(self, apply_changes(rival, [SchemaChange.add_column("rival", pa.int32())],
                                                   table="db.t", has_snapshots=False))
        return real_commit(self, schema)

    monkeypatch.setattr(SchemaManager, "commit", commit_after_a_rival)
    table = catalog.alter_table("db.t", [SchemaChange.add_column("mine", pa.string())])
    assert table.schema.id == 2 and table.schema.field_names[-2:] == ["rival", "mine"]
    monkeypatch.setattr(SchemaManager, "commit", real_commit)
    raced.clear()
    with pytest.raises(SchemaError, match="already exists"):  # re-applied on the new latest, it is refused
        catalog.alter_table("db.t", [SchemaChange.add_column("rival", pa.int32())])


# ---- reads across schema versions -------------------------------------------------------------------------------


def evolved_pk_table(catalog: FileSystemCatalog) -> Table:
    """schema 0: rows 1..3; schema 1 (add `tag`, rename qty -> quantity, widen qty): upsert 2, insert 4;
    schema 2 (drop `note`): upsert 3."""
    table = pk_table(catalog)
    write_table(table, pk_rows([1, 2, 3], qty=1))
    table = catalog.alter_table("db.t", [SchemaChange.add_column("tag", pa.string()),
                                         SchemaChange.rename_column("qty", "quantity"),
                                         SchemaChange.update_column_type("quantity", pa.int64())])
    rows = pk_rows([2, 4], qty=2).rename_columns(["id", "dt", "quantity", "price", "ratio", "note"])
    write_table(table, rows.append_column("tag", pa.array(["t2", "t4"])).set_column(
        2, "quantity", pa.array([2, 2**40])))
    table = catalog.alter_table("db.t", [SchemaChange.drop_column("note")])
    write_table(table, pa.table({"id": pa.array([3], pa.int32()), "dt": ["d1"], "quantity": [3],
                                 "price": pa.array([D("3.00")], pa.decimal128(6, 2)),
                                 "ratio": pa.array([3.0], pa.float32()), "tag": ["t3"]}))
    return table


EXPECTED_LATEST = {
    1: {"id": 1, "dt": "d1", "quantity": 1, "price": D("1.25"), "ratio": 0.5, "tag": None},
    2: {"id": 2, "dt": "d1", "quantity": 2, "price": D("1.25"), "ratio": 0.5, "tag": "t2"},
    3: {"id": 3, "dt": "d1", "quantity": 3, "price": D("3.00"), "ratio": 3.0, "tag": "t3"},
    4: {"id": 4, "dt": "d1", "quantity": 2**40, "price": D("1.25"), "ratio": 0.5, "tag": "t4"},
}


def test_merged_reads_time_travel_and_changes_across_versions(catalog: FileSystemCatalog) -> None:
    table = evolved_pk_table(catalog)
    assert rows_by_id(table) == EXPECTED_LATEST
    assert table.scan().to_arrow().schema.field("quantity").type == pa.int64()
    # time travel shows each snapshot with its own schema, as Java does
    first = table.scan(snapshot_id=1)
    assert first.arrow_schema.names == ["id", "dt", "qty", "price", "ratio", "note"]
    assert rows_by_id(table, snapshot_id=1)[2]["qty"] == 1 and rows_by_id(table, snapshot_id=1)[2]["note"] == "n2"
    assert rows_by_id(table, snapshot_id=2)[4]["note"] == "n4"
    table.create_tag("v1", snapshot_id=1)
    assert table.scan(tag="v1", filter=[("qty", "=", 1)]).to_arrow().num_rows == 3
    splits = first.plan()
    from table_format import read_split

    assert read_split(table, splits[0]).schema.names == first.arrow_schema.names
    changes = table.changes(1).to_pylist()
    assert sorted((r["id"], r["_row_kind"], r["tag"]) for r in changes) == [
        (2, "+I", "t2"), (3, "+I", "t3"), (4, "+I", "t4")]


def test_a_stale_table_object_reads_the_latest_snapshot_with_its_schema(catalog: FileSystemCatalog) -> None:
    stale = pk_table(catalog)
    write_table(stale, pk_rows([1]))
    fresh = catalog.alter_table("db.t", [SchemaChange.update_column_type("qty", pa.int64()),
                                         SchemaChange.add_column("extra", pa.string())])
    write_table(fresh, pk_rows([2]).set_column(2, "qty", pa.array([2**40])).append_column("extra", pa.array(["e"])))
    assert rows_by_id(stale)[2]["qty"] == 2**40 and rows_by_id(stale)[2]["extra"] == "e"


def test_filters_on_renamed_and_added_columns(catalog: FileSystemCatalog) -> None:
    table = evolved_pk_table(catalog)
    assert set(rows_by_id(table, filter=[("quantity", ">", 100)])) == {4}
    assert set(rows_by_id(table, filter=[("tag", "=", "t3")])) == {3}


def test_append_table_filters_prune_old_files_by_field_id(catalog: FileSystemCatalog) -> None:
    table = catalog.create_table("db.a", pa.schema([("k", pa.int32()), ("v", pa.string())]))
    write_table(table, pa.table({"k": pa.array([1, 2], pa.int32()), "v": ["a", "b"]}))
    write_table(table, pa.table({"k": pa.array([10, 20], pa.int32()), "v": ["c", "d"]}))
    table = catalog.alter_table("db.a", [SchemaChange.rename_column("k", "key"), SchemaChange.add_column("n", pa.int64()),
                                         SchemaChange.update_column_type("key", pa.int64())])
    write_table(table, pa.table({"key": [100], "v": ["e"], "n": [5]}))
    scan = table.scan(filter=[("key", ">=", 10), ("key", "<", 50)])
    assert sum(len(s.files) for s in scan.plan()) == 1  # the renamed column's old stats prune by field id
    assert scan.to_arrow().column("key").to_pylist() == [10, 20]
    new_only = table.scan(filter=[("n", "=", 5)])
    assert sum(len(s.files) for s in new_only.plan()) == 1  # files older than `n` hold only nulls there
    assert new_only.to_arrow().to_pylist() == [{"key": 100, "v": "e", "n": 5}]
    assert table.scan(filter=[("n", "is_null", None)]).to_arrow().num_rows == 4


def test_system_tables_across_versions(catalog: FileSystemCatalog) -> None:
    table = evolved_pk_table(catalog)
    schemas = table.system_table("schemas").to_pylist()
    assert [s["schema_id"] for s in schemas] == [0, 1, 2]
    files = table.system_table("files").to_pylist()
    assert sorted({f["schema_id"] for f in files}) == [0, 1, 2]
    oldest = next(f for f in files if f["schema_id"] == 0)  # shown in the latest schema, by field id
    assert "quantity=1" in oldest["min_value_stats"] and "tag=null" in oldest["min_value_stats"]
    assert "qty" not in oldest["min_value_stats"] and "note" not in oldest["min_value_stats"]
    assert f"tag={oldest['record_count']}" in oldest["null_value_counts"]
    assert {s["schema_id"] for s in table.system_table("snapshots").to_pylist()} == {0, 1, 2}


def test_compaction_rewrites_into_the_latest_schema(catalog: FileSystemCatalog) -> None:
    table = evolved_pk_table(catalog)
    catalog.alter_table("db.t", [SchemaChange.add_column("later", pa.int32())])
    table.maintenance.compact(full=True)  # a table object from before the last alter
    table = catalog.load_table("db.t")
    assert {f["schema_id"] for f in table.system_table("files").to_pylist()} == {3}
    assert rows_by_id(table) == {k: {**v, "later": None} for k, v in EXPECTED_LATEST.items()}


def test_a_stale_writer_never_rewrites_newer_files_into_its_old_schema(catalog: FileSystemCatalog) -> None:
    stale = pk_table(catalog, bucket="1")
    write_table(stale, pk_rows([1]))
    fresh = catalog.alter_table("db.t", [SchemaChange.add_column("extra", pa.string())])
    write_table(fresh, pk_rows([2]).append_column("extra", pa.array(["kept"])))
    snapshot = stale.latest_snapshot()
    assert snapshot is not None
    entries = stale.store.manifests.live_files(snapshot)
    task = CompactTask(entries[0].partition, 0, 1, tuple(e.file for e in entries), full=True)
    outcome = run_compact_task(stale.store, task)
    assert outcome.message is not None
    stale.commit([outcome.message])
    table = catalog.load_table("db.t")
    assert rows_by_id(table)[2]["extra"] == "kept"


def test_filter_on_a_widened_char_column_matches_the_padded_values(catalog: FileSystemCatalog) -> None:
    table = catalog.create_table("db.c", pa.schema([("k", pa.int32())]))
    table = catalog.alter_table("db.c", [SchemaChange.add_column("c", "CHAR(2)")])
    write_table(table, pa.table({"k": pa.array([1], pa.int32()), "c": ["x"]}))
    table = catalog.alter_table("db.c", [SchemaChange.update_column_type("c", "CHAR(4)")])
    assert table.scan(filter=[("c", "=", "x   ")]).to_arrow().to_pylist() == [{"k": 1, "c": "x   "}]
