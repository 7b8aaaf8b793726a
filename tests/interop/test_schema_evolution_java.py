"""Schema evolution against real Java Paimon 0.9 (the oracle's `alter`, `write`, `read`, `meta` verbs).

* we alter and write, Java reads every snapshot (time travel shows each snapshot's own schema on both sides);
* Java alters and writes, we read every snapshot;
* Java keeps writing and compacting a table we altered, and a mixed history of add, rename, drop and widen with
  upserts on a primary-key table ends with one row per key on both sides;
* our schema files equal Java's for the same changes (field ids from highestFieldId, types, comments, options);
* where Java 0.9 is laxer (STRING -> INT, BIGINT -> INT, a new 'bucket'): our refusal beside Java's acceptance
  and what it leads to;
* pypaimon 2.1 reads our altered tables (latest and time travel) as we do.
"""

from __future__ import annotations

import decimal
import json
import os
import shutil
from typing import Any

import pyarrow as pa
import pytest

from table_format import (
    CorruptMetadataError,
    FileSystemCatalog,
    OptionError,
    SchemaChange,
    SchemaError,
    Table,
    write_table,
)
from table_format.types import DataField, VarCharType
from tests.interop.interop_cases import files_rows
from tests.interop.oracle_values import oracle_lines, ours_as_oracle

pytestmark = pytest.mark.interop
D = decimal.Decimal


def catalog(warehouse: str) -> FileSystemCatalog:
    cat = FileSystemCatalog(warehouse)
    cat.create_database("db", exist_ok=True)
    return cat


def ours(table: Table, snapshot_id: int | None = None) -> list[str]:
    scan = table.scan(snapshot_id=snapshot_id)
    return ours_as_oracle(scan.to_arrow(), list(scan.store.schema.fields))


def java(oracle: Any, warehouse: str, name: str, snapshot_id: int | None = None) -> list[str]:
    flags = [] if snapshot_id is None else ["--snapshot", str(snapshot_id)]
    return oracle_lines(oracle.read(warehouse, "db", name, *flags))


def assert_every_snapshot_agrees(oracle: Any, warehouse: str, name: str) -> Table:
    table = catalog(warehouse).load_table(f"db.{name}")
    for s in table.snapshots():
        assert ours(table, s.id) == java(oracle, warehouse, name, s.id), f"snapshot {s.id} (schema {s.schema_id})"
    return table


def ours_changes(table: Table, a: int, b: int) -> list[str]:
    """Our changes rendered like Java's `t$audit_log` (a `rowkind` column beside the data columns)."""
    changes = table.changes(a, b)
    fields = [*table.schema.fields, DataField(-1, "rowkind", VarCharType())]
    return ours_as_oracle(changes.rename_columns([*changes.column_names[:-1], "rowkind"]), fields)


def assert_files_tables_agree(oracle: Any, warehouse: str, name: str) -> None:
    table = catalog(warehouse).load_table(f"db.{name}")
    theirs = [json.loads(line) for line in oracle.call(["sys", warehouse, "db", name, "files"]).splitlines() if line]
    assert files_rows(table.system_table("files").to_pylist()) == files_rows(theirs)


def java_alter(oracle: Any, warehouse: str, name: str, changes: list[dict[str, Any]]) -> int:
    return int(json.loads(oracle.call(["alter", warehouse, "db", name, changes]))["schema_id"])


def java_write(oracle: Any, warehouse: str, name: str, rows: list[dict[str, Any]], *, compact: bool = False) -> None:
    oracle.write_spec({"warehouse": warehouse, "database": "db", "table": name, "if_exists": "append",
                       "batches": [rows], "compact": compact})


def schema_json(table_path: str, schema_id: int) -> dict[str, Any]:
    with open(os.path.join(table_path, "schema", f"schema-{schema_id}"), encoding="utf-8") as f:
        return json.load(f)


ORDERS = pa.schema([pa.field("id", pa.int32(), nullable=False), pa.field("dt", pa.string(), nullable=False),
                    ("qty", pa.int32()), ("price", pa.decimal128(6, 2)), ("ratio", pa.float32()), ("note", pa.string())])


def orders(ids: list[int], *, qty: int, kinds: list[str] | None = None) -> pa.Table:
    t = pa.table({"id": pa.array(ids, pa.int32()), "dt": ["d1"] * len(ids), "qty": pa.array([qty] * len(ids), pa.int32()),
                  "price": pa.array([D("1.25")] * len(ids), pa.decimal128(6, 2)),
                  "ratio": pa.array([0.5] * len(ids), pa.float32()), "note": [f"n{i}" for i in ids]}, schema=ORDERS)
    return t.append_column("_row_kind", pa.array(kinds)) if kinds else t


@pytest.mark.parametrize(("file_format", "primary_keys"), [("parquet", ["id", "dt"]), ("orc", ["id", "dt"]),
                                                           ("avro", [])])
def test_we_alter_and_write_java_reads_every_snapshot(oracle: Any, warehouse: str, file_format: str,
                                                      primary_keys: list[str]) -> None:
    cat = catalog(warehouse)
    table = cat.create_table("db.t", ORDERS, primary_keys=primary_keys, partition_keys=["dt"],
                             options={"bucket": "2" if primary_keys else "-1", "file.format": file_format})
    write_table(table, orders([1, 2, 3], qty=1))
    table = cat.alter_table("db.t", [SchemaChange.add_column("tag", pa.string(), comment="new"),
                                     SchemaChange.rename_column("qty", "quantity"),
                                     SchemaChange.update_column_type("quantity", pa.int64()),
                                     SchemaChange.update_column_type("price", "DECIMAL(12, 3)")])
    second = orders([2, 4], qty=2).rename_columns(["id", "dt", "quantity", "price", "ratio", "note"])
    write_table(table, second.append_column("tag", pa.array(["t2", "t4"])), schema_mode="merge")
    table = cat.alter_table("db.t", [SchemaChange.drop_column("note"), SchemaChange.update_column_type("ratio", pa.float64()),
                                     SchemaChange.add_column("first", pa.int16(), first=True)])
    third = {"first": pa.array([7], pa.int16()), "id": pa.array([3], pa.int32()), "dt": ["d1"], "quantity": [2**40],
             "price": pa.array([D("123456789.125")], pa.decimal128(12, 3)), "ratio": [0.25], "tag": ["t3"]}
    if primary_keys:
        third["_row_kind"] = ["+U"]
    write_table(table, pa.table(third))
    if primary_keys:
        write_table(table, pa.table({"first": pa.array([None], pa.int16()), "id": pa.array([1], pa.int32()), "dt": ["d1"],
                                     "quantity": [1], "price": pa.array([None], pa.decimal128(12, 3)), "ratio": [None],
                                     "tag": [None], "_row_kind": ["-D"]}))
    table.maintenance.compact(full=True)
    table = assert_every_snapshot_agrees(oracle, warehouse, "t")
    assert [s.schema_id for s in table.snapshots()] == ([0, 1, 2, 2, 2] if primary_keys else [0, 1, 2, 2])
    if primary_keys:  # one row per key, in the latest schema
        latest = {r["id"]: r for r in table.scan().to_arrow().to_pylist()}
        assert sorted(latest) == [2, 3, 4] and latest[3]["quantity"] == 2**40 and latest[2]["tag"] == "t2"


@pytest.mark.parametrize("primary_keys", [["id"], []])
def test_files_system_table_shows_old_files_in_the_latest_schema_as_java(oracle: Any, warehouse: str,
                                                                         primary_keys: list[str]) -> None:
    """Stats of old files by field id under the current names and types; a column added later shows null with
    every row null. (Java 0.9's files table has two bugs we do not copy: it fails with a NullPointerException on
    the null stats of an added INT/SMALLINT/DOUBLE column, and it leaves out the last current columns when a
    file has fewer columns than the current schema; so this history keeps the column count.)"""
    cat = catalog(warehouse)
    schema = pa.schema([pa.field("id", pa.int32(), nullable=False), ("v", pa.int32()), ("s", pa.string()),
                        ("g", pa.string())])
    table = cat.create_table("db.f", schema, primary_keys=primary_keys,
                             options={"bucket": "1" if primary_keys else "-1"})
    write_table(table, pa.table({"id": pa.array([1, 2], pa.int32()), "v": pa.array([1, 2], pa.int32()),
                                 "s": ["a", "b"], "g": ["x", "y"]}))
    table = cat.alter_table("db.f", [SchemaChange.add_column("n", pa.string()), SchemaChange.rename_column("s", "s2"),
                                     SchemaChange.update_column_type("v", pa.int64()), SchemaChange.drop_column("g")])
    write_table(table, pa.table({"id": pa.array([2, 3], pa.int32()), "v": [20, 2**40], "s2": ["bb", "c"],
                                 "n": ["x", None]}))
    assert_files_tables_agree(oracle, warehouse, "f")


def test_java_alters_and_writes_we_read_every_snapshot(oracle: Any, warehouse: str) -> None:
    oracle.write_spec({
        "warehouse": warehouse, "database": "db", "table": "j", "if_exists": "drop",
        "schema": {"fields": [{"name": "id", "type": "INT NOT NULL"}, {"name": "v", "type": "INT"},
                              {"name": "s", "type": "STRING"}, {"name": "c", "type": "CHAR(3)"},
                              {"name": "ts", "type": "TIMESTAMP(3)"}, {"name": "gone", "type": "STRING"}],
                   "primary_keys": ["id"], "options": {"bucket": "2", "file.format": "orc"}},
        "batches": [[{"id": 1, "v": 1, "s": "a", "c": "ab", "ts": "2024-01-01T00:00:00.123", "gone": "x"},
                     {"id": 2, "v": 2, "s": "b", "c": "x", "gone": "y"}]]})
    java_alter(oracle, warehouse, "j", [
        {"op": "add_column", "name": "n", "type": "DOUBLE", "after": "id"},
        {"op": "rename_column", "name": "s", "new_name": "s2"},
        {"op": "update_column_type", "name": "v", "type": "BIGINT"},
        {"op": "update_column_type", "name": "c", "type": "CHAR(5)"},
        {"op": "update_column_type", "name": "ts", "type": "TIMESTAMP(6)"}])
    java_write(oracle, warehouse, "j", [{"id": 2, "v": 2**40, "s2": "bb", "c": "yy", "ts": "2024-01-01T00:00:00.123456",
                                        "n": 2.5, "gone": "z"}, {"id": 3, "v": 3, "s2": "c", "c": "z"}])
    java_alter(oracle, warehouse, "j", [{"op": "drop_column", "name": "gone"},
                                        {"op": "drop_column", "name": "n"},
                                        {"op": "add_column", "name": "n", "type": "STRING"}])
    java_write(oracle, warehouse, "j", [{"id": 1, "v": 10, "s2": "aa", "c": "q", "n": "again"},
                                        {"_kind": "-D", "id": 3}], compact=True)
    table = assert_every_snapshot_agrees(oracle, warehouse, "j")
    assert [s.schema_id for s in table.snapshots()] == [0, 1, 2, 2]
    latest = {r["id"]: r for r in table.scan().to_arrow().to_pylist()}
    assert latest == {  # CHAR values are stored as written: only old CHAR(3) values read padded to 5
        1: {"id": 1, "v": 10, "s2": "aa", "c": "q", "ts": None, "n": "again"},
        2: {"id": 2, "v": 2**40, "s2": "bb", "c": "yy", "ts": latest[2]["ts"], "n": None}}
    assert {r["id"]: r["c"] for r in table.scan(snapshot_id=2).to_arrow().to_pylist()}[1] == "ab   "


@pytest.mark.parametrize("options", [{"changelog-producer": "lookup"}, {"deletion-vectors.enabled": "true"}],
                         ids=["lookup", "deletion-vectors"])
def test_mixed_history_java_keeps_writing_and_compacting_a_table_we_altered(oracle: Any, warehouse: str,
                                                                           options: dict[str, str]) -> None:
    """Add, rename, drop and widen on both sides with upserts and deletes: one row per key on both sides."""
    cat = catalog(warehouse)
    table = cat.create_table("db.m", ORDERS, primary_keys=["id", "dt"], partition_keys=["dt"],
                             options={"bucket": "2", **options})
    write_table(table, orders([1, 2, 3, 4], qty=1))
    cat.alter_table("db.m", [SchemaChange.add_column("tag", pa.string()), SchemaChange.rename_column("qty", "quantity")])
    java_write(oracle, warehouse, "m", [
        {"id": 2, "dt": "d1", "quantity": 20, "price": "2.00", "ratio": 2.0, "note": "java", "tag": "j2"},
        {"id": 5, "dt": "d1", "quantity": 50, "tag": "j5"}, {"_kind": "-D", "id": 4, "dt": "d1"}])
    java_alter(oracle, warehouse, "m", [{"op": "drop_column", "name": "note"},
                                        {"op": "update_column_type", "name": "quantity", "type": "BIGINT"}])
    table = cat.load_table("db.m")
    write_table(table, pa.table({"id": pa.array([3, 6], pa.int32()), "dt": ["d1", "d1"], "quantity": [2**40, 6],
                                 "extra": ["e3", "e6"]}), schema_mode="merge")  # adds `extra`, fills the rest null
    cat.alter_table("db.m", [SchemaChange.update_column_type("ratio", pa.float64()),
                             SchemaChange.rename_column("tag", "label")])
    java_write(oracle, warehouse, "m", [{"id": 1, "dt": "d1", "quantity": 11, "label": "j1", "extra": "je1"}],
               compact=True)
    table = assert_every_snapshot_agrees(oracle, warehouse, "m")
    final = table.scan().to_arrow().to_pylist()
    assert sorted(r["id"] for r in final) == [1, 2, 3, 5, 6]  # one row per key, 4 deleted
    assert {r["id"]: (r["quantity"], r["label"], r["extra"]) for r in final} == {
        1: (11, "j1", "je1"), 2: (20, "j2", None), 3: (2**40, None, "e3"), 5: (50, "j5", None), 6: (6, None, "e6")}
    assert ours(table) == java(oracle, warehouse, "m")
    # the changes between any two snapshots agree with Java's audit log, read in the latest schema
    last = table.snapshots()[-1].id
    for a in range(1, last):
        for b in range(a + 1, last + 1):
            theirs = oracle_lines(oracle.read(warehouse, "db", "m$audit_log", "--option", f"incremental-between={a},{b}"))
            assert ours_changes(table, a, b) == theirs, f"changes({a}, {b})"


def test_our_schema_files_equal_javas_for_the_same_changes(oracle: Any, warehouse: str) -> None:
    cat = catalog(warehouse)
    table = cat.create_table("db.a", ORDERS, primary_keys=["id", "dt"], partition_keys=["dt"],
                             options={"bucket": "1"}, comment="orders")
    write_table(table, orders([1], qty=1))
    shutil.copytree(table.path, table.path.replace("/a", "/b"))
    ours_changes = [SchemaChange.add_column("row", pa.struct([("x", pa.int32()), ("y", pa.string())]), comment="r"),
                    SchemaChange.add_column("head", pa.int64(), first=True),
                    SchemaChange.rename_column("note", "remark"), SchemaChange.drop_column("ratio"),
                    SchemaChange.update_column_type("qty", pa.int64()),
                    SchemaChange.update_column_nullability("price", False),
                    SchemaChange.update_column_comment("price", "EUR"), SchemaChange.update_comment("v2"),
                    SchemaChange.set_option("snapshot.num-retained.min", "5"),
                    SchemaChange.add_column("tail", pa.int8(), after="qty"),
                    SchemaChange.move_column("price", before="id"), SchemaChange.move_column("head", after="remark")]
    java_changes = [
        {"op": "add_column", "name": "row", "comment": "r",
         "type": {"type": "ROW", "fields": [{"id": 0, "name": "x", "type": "INT"}, {"id": 1, "name": "y", "type": "STRING"}]}},
        {"op": "add_column", "name": "head", "type": "BIGINT", "first": True},
        {"op": "rename_column", "name": "note", "new_name": "remark"}, {"op": "drop_column", "name": "ratio"},
        {"op": "update_column_type", "name": "qty", "type": "BIGINT"},
        {"op": "update_column_nullability", "name": "price", "nullable": False},
        {"op": "update_column_comment", "name": "price", "comment": "EUR"}, {"op": "update_comment", "comment": "v2"},
        {"op": "set_option", "key": "snapshot.num-retained.min", "value": "5"},
        {"op": "add_column", "name": "tail", "type": "TINYINT", "after": "qty"},
        {"op": "move_column", "name": "price", "before": "id"}, {"op": "move_column", "name": "head", "after": "remark"}]
    cat.alter_table("db.a", ours_changes)
    assert java_alter(oracle, warehouse, "b", java_changes) == 1
    mine, theirs = schema_json(table.path, 1), schema_json(table.path.replace("/a", "/b"), 1)
    mine.pop("timeMillis"), theirs.pop("timeMillis")
    assert mine == theirs
    assert java(oracle, warehouse, "a") == java(oracle, warehouse, "b") == ours(cat.load_table("db.b"))


def test_where_java_09_is_laxer_we_refuse(oracle: Any, warehouse: str) -> None:
    """Java 0.9 accepts STRING -> INT (then its own read fails), BIGINT -> INT (then it reads wrapped values) and
    a new 'bucket' (then its next write fails); we refuse each with no new schema file, and reading a table Java
    altered that way fails loudly instead of returning changed values."""
    spec = {"warehouse": warehouse, "database": "db", "if_exists": "drop",
            "schema": {"fields": [{"name": "id", "type": "INT NOT NULL"}, {"name": "b", "type": "BIGINT"},
                                  {"name": "s", "type": "STRING"}], "primary_keys": ["id"],
                       "options": {"bucket": "1"}},
            "batches": [[{"id": 1, "b": 5_000_000_000, "s": "abc"}]]}
    cases = [
        ("s_to_int", SchemaChange.update_column_type("s", pa.int32()), SchemaError, "not a widening",
         {"op": "update_column_type", "name": "s", "type": "INT"}),
        ("b_to_int", SchemaChange.update_column_type("b", pa.int32()), SchemaError, "narrows",
         {"op": "update_column_type", "name": "b", "type": "INT"}),
        ("bucket", SchemaChange.set_option("bucket", "4"), OptionError, "rescale",
         {"op": "set_option", "key": "bucket", "value": "4"}),
    ]
    cat = catalog(warehouse)
    for name, ours_change, error, message, java_change in cases:
        oracle.write_spec({**spec, "table": name})
        table = cat.load_table(f"db.{name}")
        with pytest.raises(error, match=message):
            cat.alter_table(f"db.{name}", [ours_change])
        assert sorted(os.listdir(os.path.join(table.path, "schema"))) == ["schema-0"]
        assert java_alter(oracle, warehouse, name, [java_change]) == 1  # Java accepts
    with pytest.raises(oracle.Error):
        oracle.read(warehouse, "db", "s_to_int")  # NumberFormatException for 'abc'
    with pytest.raises(CorruptMetadataError, match="'s'.*does not read as int32"):
        cat.load_table("db.s_to_int").scan().to_arrow()
    assert oracle.read(warehouse, "db", "b_to_int") == [{"id": 1, "b": 705032704, "s": "abc"}]  # silently wrapped
    with pytest.raises(CorruptMetadataError, match="'b'.*does not read as int32"):
        cat.load_table("db.b_to_int").scan().to_arrow()
    with pytest.raises(oracle.Error):  # "Try to write table with a new bucket num 4, but the previous bucket num is 1"
        java_write(oracle, warehouse, "bucket", [{"id": 2, "b": 1, "s": "x"}])


@pytest.mark.parametrize("primary_keys", [["id"], []])
def test_pypaimon_reads_our_altered_tables(pypaimon: Any, warehouse: str, primary_keys: list[str]) -> None:
    cat = catalog(warehouse)
    schema = pa.schema([pa.field("id", pa.int32(), nullable=False), ("v", pa.int32()), ("s", pa.string()),
                        ("g", pa.string())])
    table = cat.create_table("db.p", schema, primary_keys=primary_keys,
                             options={"bucket": "1" if primary_keys else "-1"})
    write_table(table, pa.table({"id": pa.array([1, 2], pa.int32()), "v": pa.array([1, 2], pa.int32()),
                                 "s": ["a", "b"], "g": ["x", "y"]}))
    table = cat.alter_table("db.p", [SchemaChange.add_column("n", pa.float64()), SchemaChange.rename_column("s", "s2"),
                                     SchemaChange.update_column_type("v", pa.int64()), SchemaChange.drop_column("g")])
    write_table(table, pa.table({"id": pa.array([2, 3], pa.int32()), "v": [20, 2**40], "s2": ["bb", "c"],
                                 "n": [1.5, None]}))
    latest, first = pypaimon.batch(warehouse, [{"op": "read", "identifier": "db.p", "snapshot_id": None},
                                               {"op": "read", "identifier": "db.p", "snapshot_id": 1}])
    key = ("id", "v")
    for theirs, snapshot_id in ((latest, None), (first, 1)):
        mine = table.scan(snapshot_id=snapshot_id).to_arrow()
        assert theirs.column_names == mine.column_names
        assert sorted(pypaimon.batch_result(theirs).to_pylist(), key=lambda r: [r[k] for k in key]) == sorted(
            mine.to_pylist(), key=lambda r: [r[k] for k in key])
