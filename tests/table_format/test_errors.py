"""Errors: every rejection derives from TableFormatError, names the table / field / option / file at fault, and
leaves the table exactly as it was (same snapshots, no new files)."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import polars as pl
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from table_format import (
    CorruptMetadataError,
    FileSystemCatalog,
    OptionError,
    SchemaError,
    SnapshotNotFoundError,
    Table,
    TableFormatError,
    UnsupportedFeatureError,
    write_table,
)

SCHEMA = pa.schema([("id", pa.int64(), False), ("name", pa.string()), ("qty", pa.int32(), False)])
PSCHEMA = pa.schema([("dt", pa.string(), False), ("id", pa.int64(), False), ("v", pa.int32())])

_n = [0]


def catalog_for(warehouse: str) -> FileSystemCatalog:
    c = FileSystemCatalog(warehouse)
    c.create_database("db", exist_ok=True)
    return c


def new_table(warehouse: str, schema: pa.Schema = SCHEMA, **kw: Any) -> Table:
    _n[0] += 1
    return catalog_for(warehouse).create_table(f"db.e{_n[0]}", schema, **kw)


def tree(path: str) -> dict[str, tuple[int, int]]:
    out = {}
    for dirpath, _, names in os.walk(path):
        for n in names:
            full = os.path.join(dirpath, n)
            st_ = os.stat(full)
            out[os.path.relpath(full, path)] = (st_.st_size, st_.st_mtime_ns)
    return out


def good(ids: list[int]) -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64()), "name": [f"n{i}" for i in ids],
                     "qty": pa.array([1] * len(ids), pa.int32())})


def seeded(warehouse: str, **kw: Any) -> Table:
    """A table with two snapshots, so 'unchanged' is checked against real content."""
    table = new_table(warehouse, **kw)
    write_table(table, good([1, 2]))
    write_table(table, good([3]))
    return table


def assert_rejected(table: Table, call: Callable[[], Any], exc: type[TableFormatError], *names: str) -> str:
    """call() raises exc (a TableFormatError) naming the table and `names`; the table is unchanged."""
    before_files = tree(table.path)
    before_snaps = [s.id for s in table.snapshots()]
    before_rows = sorted(map(str, table.scan().to_arrow().to_pylist()))
    with pytest.raises(exc) as info:
        call()
    err = info.value
    assert isinstance(err, TableFormatError)
    msg = str(err)
    assert table.identifier in msg, msg
    for n in names:
        assert n in msg, (n, msg)
    assert tree(table.path) == before_files
    assert [s.id for s in table.snapshots()] == before_snaps
    assert sorted(map(str, table.scan().to_arrow().to_pylist())) == before_rows
    return msg


KINDS = {
    "append": {},
    "append-fixed": {"options": {"bucket": "2", "bucket-key": "id"}},
    "pk": {"primary_keys": ["id"], "options": {"bucket": "2"}},
}


# ---- data that does not fit ------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", list(KINDS))
def test_missing_column(warehouse: str, kind: str) -> None:
    table = seeded(warehouse, **KINDS[kind])
    data = good([5]).drop_columns(["name"])
    assert_rejected(table, lambda: write_table(table, data), SchemaError, "missing columns ['name']")


@pytest.mark.parametrize("kind", list(KINDS))
def test_extra_column(warehouse: str, kind: str) -> None:
    table = seeded(warehouse, **KINDS[kind])
    data = good([5]).append_column("bogus", pa.array([1]))
    assert_rejected(table, lambda: write_table(table, data), SchemaError, "'bogus'")
    frame = pl.from_arrow(data)
    assert_rejected(table, lambda: write_table(table, frame), SchemaError, "'bogus'")


def test_duplicate_input_columns(warehouse: str) -> None:
    table = seeded(warehouse)
    data = pa.Table.from_arrays([pa.array([1], pa.int64()), pa.array(["a"]), pa.array([1], pa.int32()),
                                 pa.array(["b"])], names=["id", "name", "qty", "name"])
    assert_rejected(table, lambda: write_table(table, data), SchemaError, "'name'")


@pytest.mark.parametrize(
    "column,values,arrow_type",
    [
        ("id", ["abc"], pa.string()),
        ("qty", [1.5], pa.float64()),  # lossy
        ("qty", [2**40], pa.int64()),  # overflow
        ("name", [[1, 2]], pa.list_(pa.int64())),
        ("id", [{"a": 1}], pa.struct([("a", pa.int64())])),
        ("qty", [b"\x01"], pa.binary()),
    ],
)
def test_uncastable_types(warehouse: str, column: str, values: list[Any], arrow_type: pa.DataType) -> None:
    table = seeded(warehouse)
    data = good([9]).set_column(SCHEMA.get_field_index(column), column, pa.array(values, arrow_type))
    assert_rejected(table, lambda: write_table(table, data), SchemaError, repr(column))


def test_castable_types_are_accepted(warehouse: str) -> None:
    table = seeded(warehouse)
    data = pa.table({"id": pa.array([9], pa.int8()), "name": pa.array(["x"], pa.large_string()),
                     "qty": pa.array([7], pa.int16())})
    assert write_table(table, data) == 3


def test_timestamp_time_zone_mismatch(warehouse: str) -> None:
    schema = pa.schema([("id", pa.int64()), ("ts", pa.timestamp("us"))])
    table = new_table(warehouse, schema)
    write_table(table, pa.table({"id": [1], "ts": pa.array([0], pa.timestamp("us"))}))
    data = pa.table({"id": [2], "ts": pa.array([0], pa.timestamp("us", tz="UTC"))})
    assert_rejected(table, lambda: write_table(table, data), SchemaError, "'ts'")


@pytest.mark.parametrize("kind", ["pk"])
def test_null_in_primary_key(warehouse: str, kind: str) -> None:
    table = seeded(warehouse, **KINDS[kind])
    data = pa.table({"id": pa.array([7, None], pa.int64()), "name": ["a", "b"], "qty": pa.array([1, 1], pa.int32())})
    assert_rejected(table, lambda: write_table(table, data), SchemaError, "'id'")


def test_null_in_composite_primary_key(warehouse: str) -> None:
    schema = pa.schema([("a", pa.string()), ("b", pa.int32()), ("v", pa.int64())])
    table = new_table(warehouse, schema, primary_keys=["a", "b"], options={"bucket": "1"})
    write_table(table, pa.table({"a": ["x"], "b": pa.array([1], pa.int32()), "v": [1]}))
    data = pa.table({"a": ["x", "y"], "b": pa.array([2, None], pa.int32()), "v": [1, 2]})
    assert_rejected(table, lambda: write_table(table, data), SchemaError, "'b'")


@pytest.mark.parametrize("kind", list(KINDS))
def test_null_in_not_null_column(warehouse: str, kind: str) -> None:
    table = seeded(warehouse, **KINDS[kind])
    data = pa.table({"id": pa.array([7, 8], pa.int64()), "name": ["a", "b"], "qty": pa.array([1, None], pa.int32())})
    assert_rejected(table, lambda: write_table(table, data), SchemaError, "'qty'", "NOT NULL")


def test_null_in_not_null_nested_field(warehouse: str) -> None:
    schema = pa.schema([("id", pa.int64()), ("s", pa.struct([pa.field("x", pa.int32(), nullable=False)]))])
    table = new_table(warehouse, schema)
    write_table(table, pa.table({"id": [1], "s": pa.array([{"x": 1}], schema.field("s").type)}))
    write_table(table, pa.table({"id": [2], "s": pa.array([None], schema.field("s").type)}))  # a null struct is fine
    data = pa.table({"id": [3], "s": pa.array([{"x": None}], pa.struct([("x", pa.int32())]))})
    assert_rejected(table, lambda: write_table(table, data), SchemaError, "'s'", "'x'")


@pytest.mark.parametrize(
    "values,arrow_type,shown",
    [
        (["+I", "+X"], pa.string(), "'+X'"),
        (["+I", "D"], pa.string(), "'D'"),
        (["+I", ""], pa.string(), "''"),
        ([0, 4], pa.int8(), "4"),
        ([0, -1], pa.int8(), "-1"),
        ([0, 200], pa.int32(), "200"),
        (["+I", None], pa.string(), "nulls"),
        ([0.0, 1.0], pa.float64(), "double"),
        ([True, False], pa.bool_(), "bool"),
    ],
)
def test_unknown_row_kinds(warehouse: str, values: list[Any], arrow_type: pa.DataType, shown: str) -> None:
    table = seeded(warehouse, **KINDS["pk"])
    data = good([10, 11]).append_column("_row_kind", pa.array(values, arrow_type))
    assert_rejected(table, lambda: write_table(table, data), SchemaError, "'_row_kind'", shown)


@pytest.mark.parametrize("kind", ["append", "append-fixed"])
@pytest.mark.parametrize("row_kind", ["-D", "-U", "+U", 3])
def test_non_insert_rows_on_append_table(warehouse: str, kind: str, row_kind: Any) -> None:
    table = seeded(warehouse, **KINDS[kind])
    arrow_type = pa.int8() if isinstance(row_kind, int) else pa.string()
    ok_kind = 0 if isinstance(row_kind, int) else "+I"
    data = good([10, 11]).append_column("_row_kind", pa.array([ok_kind, row_kind], arrow_type))
    assert_rejected(table, lambda: write_table(table, data), SchemaError, "'_row_kind'", "append table")


def test_unsupported_input_type(warehouse: str) -> None:
    table = seeded(warehouse)
    assert_rejected(table, lambda: write_table(table, [{"id": 1}]), SchemaError, "list")
    assert_rejected(table, lambda: write_table(table, "not data"), SchemaError, "str")


def test_bad_write_mode(warehouse: str) -> None:
    table = seeded(warehouse)
    assert_rejected(table, lambda: write_table(table, good([5]), mode="upsert"), SchemaError, "'upsert'")
    assert_rejected(table, lambda: write_table(table, good([5]), overwrite_partitions=[{}]), SchemaError,
                    "overwrite_partitions")


def test_bad_data_in_two_phase_write_leaves_earlier_writes_committable(warehouse: str) -> None:
    table = seeded(warehouse, **KINDS["pk"])
    w = table.new_write()
    w.write(good([20]))
    with pytest.raises(SchemaError, match="'qty'"):
        w.write(pa.table({"id": pa.array([21], pa.int64()), "name": ["x"], "qty": pa.array([None], pa.int32())}))
    assert table.commit(w.prepare_commit()) == 3
    assert sorted(r["id"] for r in table.scan().to_arrow().to_pylist()) == [1, 2, 3, 20]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    bad_at=st.integers(0, 9),
    problem=st.sampled_from(["null-pk", "null-not-null", "bad-kind", "bad-type"]),
)
def test_one_bad_row_anywhere_rejects_the_whole_write(warehouse: str, bad_at: int, problem: str) -> None:
    table = seeded(warehouse, **KINDS["pk"])
    ids: list[Any] = list(range(100, 110))
    qty: list[Any] = [1] * 10
    kinds: list[Any] = ["+I"] * 10
    name: list[Any] = [f"n{i}" for i in range(10)]
    if problem == "null-pk":
        ids[bad_at] = None
    elif problem == "null-not-null":
        qty[bad_at] = None
    elif problem == "bad-kind":
        kinds[bad_at] = "?"
    else:
        name = [str(n) for n in name]
        qty = [str(q) for q in qty]
        qty[bad_at] = "not a number"
    data = pa.table({"id": pa.array(ids, pa.int64()), "name": name,
                     "qty": pa.array(qty, pa.string() if problem == "bad-type" else pa.int32()), "_row_kind": kinds})
    assert_rejected(table, lambda: write_table(table, data), SchemaError)


# ---- bad options and schemas at create_table ----------------------------------------------------------------


@pytest.mark.parametrize(
    "kw,exc,names",
    [
        ({"options": {"bucket": "0"}}, OptionError, ["'bucket'"]),
        ({"options": {"bucket": "-5"}}, OptionError, ["'bucket'"]),
        ({"options": {"bucket": "many"}}, OptionError, ["'bucket'", "'many'"]),
        ({"options": {"bucket": "0"}, "primary_keys": ["id"]}, OptionError, ["'bucket'"]),
        ({"options": {"merge-engine": "newest"}, "primary_keys": ["id"]}, OptionError, ["'merge-engine'", "'newest'"]),
        ({"options": {"file.format": "csv"}}, OptionError, ["'file.format'", "'csv'"]),
        ({"options": {"changelog-producer": "magic"}, "primary_keys": ["id"]}, OptionError,
         ["'changelog-producer'", "'magic'"]),
        ({"options": {"sequence.field": "nope"}, "primary_keys": ["id"]}, SchemaError, ["'sequence.field'", "'nope'"]),
        ({"options": {"bucket": "2", "bucket-key": "name"}, "primary_keys": ["id"]}, SchemaError,
         ["bucket-key", "'name'"]),
        ({"options": {"bucket": "2", "bucket-key": "ghost"}}, SchemaError, ["bucket-key", "'ghost'"]),
        ({"options": {"bucket": "4"}}, SchemaError, ["'bucket-key'"]),
        ({"options": {"target-file-size": "huge"}}, OptionError, ["'target-file-size'", "'huge'"]),
        ({"options": {"deletion-vectors.enabled": "maybe"}}, OptionError, ["'deletion-vectors.enabled'"]),
        ({"options": {"snapshot.num-retained.min": "0"}}, OptionError, ["'snapshot.num-retained.min'"]),
        ({"options": {"commit.min-retry-wait": "soon"}}, OptionError, ["'commit.min-retry-wait'"]),
        ({"options": {"merge-engine": "partial-update", "fields.ghost.sequence-group": "name"}, "primary_keys": ["id"]},
         OptionError, ["fields.ghost.sequence-group", "'ghost'"]),
        ({"options": {"merge-engine": "partial-update", "fields.qty.sequence-group": "ghost"}, "primary_keys": ["id"]},
         SchemaError, ["fields.qty.sequence-group", "'ghost'"]),
        ({"options": {"merge-engine": "aggregation", "fields.name.aggregate-function": "sum"}, "primary_keys": ["id"]},
         SchemaError, ["fields.name.aggregate-function", "'name'"]),
        ({"options": {"merge-engine": "aggregation", "fields.qty.aggregate-function": "median"},
          "primary_keys": ["id"]}, OptionError, ["fields.qty.aggregate-function", "'median'"]),
        ({"options": {"bucket": "2", "bucket-key": "qty"}, "primary_keys": ["id"]}, SchemaError,
         ["bucket-key", "'qty'"]),
    ],
)
def test_bad_options_rejected_at_create(warehouse: str, kw: dict[str, Any], exc: type[TableFormatError],
                                        names: list[str]) -> None:
    catalog = catalog_for(warehouse)
    before = tree(warehouse)
    with pytest.raises(exc) as info:
        catalog.create_table("db.bad", SCHEMA, **kw)
    msg = str(info.value)
    assert isinstance(info.value, TableFormatError)
    assert "db.bad" in msg, msg
    for n in names:
        assert n in msg, (n, msg)
    assert tree(warehouse) == before
    assert catalog.list_tables("db") == []
    assert not catalog.table_exists("db.bad")


def test_postpone_bucket_is_refused(warehouse: str) -> None:
    catalog = catalog_for(warehouse)
    with pytest.raises((OptionError, UnsupportedFeatureError), match="'bucket'"):
        catalog.create_table("db.bad", SCHEMA, primary_keys=["id"], options={"bucket": "-2"})
    assert catalog.list_tables("db") == []


def test_bucket_key_with_partition_key(warehouse: str) -> None:
    catalog = catalog_for(warehouse)
    with pytest.raises(SchemaError, match="bucket-key.*'dt'"):
        catalog.create_table("db.bad", PSCHEMA, partition_keys=["dt"], options={"bucket": "2", "bucket-key": "dt"})
    assert catalog.list_tables("db") == []


def test_fixed_bucket_primary_key_without_partition_key(warehouse: str) -> None:
    catalog = catalog_for(warehouse)
    before = tree(warehouse)
    with pytest.raises(SchemaError, match=r"db.bad.*'bucket' = 2.*\['id'\].*partition key.*\['dt'\]"):
        catalog.create_table("db.bad", PSCHEMA, primary_keys=["id"], partition_keys=["dt"], options={"bucket": "2"})
    assert tree(warehouse) == before
    assert catalog.list_tables("db") == []


def test_options_are_kept_as_strings(warehouse: str) -> None:
    table = new_table(warehouse, options={"bucket": 3, "bucket-key": "id", "sink.parallelism": 4})
    assert table.options == {"bucket": "3", "bucket-key": "id", "sink.parallelism": "4"}


# ---- overwrite_partitions -------------------------------------------------------------------------------


def _pseeded(warehouse: str) -> Table:
    table = new_table(warehouse, PSCHEMA, partition_keys=["dt"])
    write_table(table, pa.table({"dt": ["a", "b"], "id": pa.array([1, 2], pa.int64()),
                                 "v": pa.array([1, 2], pa.int32())}))
    return table


def _prow(dt: str, i: int) -> pa.Table:
    return pa.table({"dt": [dt], "id": pa.array([i], pa.int64()), "v": pa.array([0], pa.int32())})


def test_overwrite_partitions_unknown_key(warehouse: str) -> None:
    table = _pseeded(warehouse)
    assert_rejected(
        table,
        lambda: write_table(table, _prow("a", 5), mode="overwrite", overwrite_partitions=[{"day": "a"}]),
        SchemaError, "'day'",
    )
    assert_rejected(
        table,
        lambda: write_table(table, _prow("a", 5), mode="overwrite", overwrite_partitions=[{"dt": "a", "id": 1}]),
        SchemaError, "'id'",
    )


def test_overwrite_partitions_rows_outside(warehouse: str) -> None:
    table = _pseeded(warehouse)
    data = pa.concat_tables([_prow("a", 5), _prow("c", 6)])
    assert_rejected(
        table, lambda: write_table(table, data, mode="overwrite", overwrite_partitions=[{"dt": "a"}]),
        SchemaError, "'c'", "overwrite_partitions",
    )


def test_overwrite_partitions_value_of_wrong_type(warehouse: str) -> None:
    schema = pa.schema([("y", pa.int32()), ("id", pa.int64())])
    table = new_table(warehouse, schema, partition_keys=["y"])
    write_table(table, pa.table({"y": pa.array([1], pa.int32()), "id": [1]}))
    data = pa.table({"y": pa.array([1], pa.int32()), "id": [2]})
    assert_rejected(
        table, lambda: write_table(table, data, mode="overwrite", overwrite_partitions=[{"y": "not-int"}]),
        SchemaError, "'y'", "'not-int'",
    )


def test_overwrite_partitions_on_unpartitioned_table(warehouse: str) -> None:
    table = seeded(warehouse)
    assert_rejected(
        table, lambda: write_table(table, good([9]), mode="overwrite", overwrite_partitions=[{"id": 1}]),
        SchemaError, "not partitioned",
    )


# ---- read-side errors --------------------------------------------------------------------------------------


def test_bad_filters_and_columns(warehouse: str) -> None:
    table = seeded(warehouse)
    for filt, name in [
        ([("nope", "=", 1)], "'nope'"),
        ([("id", "~", 1)], "'~'"),
        ([("id", "=", "abc")], "'id'"),
        ("id = 1", "filter"),
        ([[("id", "=", 1)], ("id", "=", 2)], "mixes"),
    ]:
        assert_rejected(table, lambda f=filt: table.scan(filter=f), SchemaError, name)
    assert_rejected(table, lambda: table.scan(columns=["id", "ghost"]), SchemaError, "'ghost'")


def test_missing_snapshot_and_tag(warehouse: str) -> None:
    table = seeded(warehouse)
    assert_rejected(table, lambda: table.scan(snapshot_id=7), SnapshotNotFoundError, "7")
    assert_rejected(table, lambda: table.scan(tag="nightly"), SnapshotNotFoundError, "'nightly'")


# ---- corrupted metadata ---------------------------------------------------------------------------------


def _corrupt(path: str, data: bytes) -> None:
    with open(path, "wb") as f:
        f.write(data)


@pytest.mark.parametrize("content", [b"{not json", b"", b"[]", b'{"version": 3}', b"\xff\xfe\x00garbage",
                                     b'{"version":3,"id":2,"schemaId":"zero"}'])
def test_corrupt_snapshot_json(warehouse: str, content: bytes) -> None:
    table = seeded(warehouse)
    path = os.path.join(table.path, "snapshot", "snapshot-2")
    _corrupt(path, content)
    fresh = catalog_for(warehouse).load_table(table.identifier)
    for call in (fresh.latest_snapshot, lambda: fresh.scan().to_arrow(), fresh.snapshots,
                 lambda: fresh.system_table("snapshots")):
        with pytest.raises(CorruptMetadataError) as info:
            call()
        assert path in str(info.value) or "snapshot-2" in str(info.value)
    # the older snapshot stays readable
    assert sorted(r["id"] for r in fresh.scan(snapshot_id=1).to_arrow().to_pylist()) == [1, 2]
    # writing on top of a corrupt latest snapshot fails without adding a snapshot or leaving files behind
    before = tree(fresh.path)
    with pytest.raises(CorruptMetadataError, match="snapshot-2"):
        write_table(fresh, good([9]))
    assert tree(fresh.path) == before


def test_snapshot_with_wrong_id(warehouse: str) -> None:
    table = seeded(warehouse)
    snap_dir = os.path.join(table.path, "snapshot")
    with open(os.path.join(snap_dir, "snapshot-1"), "rb") as f:
        first = f.read()
    _corrupt(os.path.join(snap_dir, "snapshot-2"), first)
    with pytest.raises(CorruptMetadataError, match="snapshot-2"):
        catalog_for(warehouse).load_table(table.identifier).latest_snapshot()


def _manifest_names(table: Table) -> tuple[list[str], str, str]:
    snap = table.latest_snapshot()
    metas = table.store.manifests.data_manifests(snap)
    return [m.file_name for m in metas], snap.base_manifest_list, snap.delta_manifest_list


@pytest.mark.parametrize("cut", [0, 10, 0.5, -3])
def test_truncated_manifest(warehouse: str, cut: float) -> None:
    table = seeded(warehouse)
    names, _, _ = _manifest_names(table)
    path = os.path.join(table.path, "manifest", names[-1])
    with open(path, "rb") as f:
        data = f.read()
    n = int(len(data) * cut) if isinstance(cut, float) else cut if cut >= 0 else len(data) + cut
    _corrupt(path, data[:n])
    fresh = catalog_for(warehouse).load_table(table.identifier)  # no manifest cache
    with pytest.raises(CorruptMetadataError) as info:
        fresh.scan().to_arrow()
    assert names[-1] in str(info.value)
    with pytest.raises(CorruptMetadataError, match=names[-1]):
        fresh.system_table("files")
    before = tree(fresh.path)
    with pytest.raises(CorruptMetadataError, match=names[-1]):
        write_table(fresh, good([9]), mode="overwrite")
    assert tree(fresh.path) == before
    assert len(fresh.snapshots()) == 2


@pytest.mark.parametrize("which", ["base", "delta"])
def test_truncated_manifest_list(warehouse: str, which: str) -> None:
    table = seeded(warehouse)
    _, base, delta = _manifest_names(table)
    name = base if which == "base" else delta
    path = os.path.join(table.path, "manifest", name)
    with open(path, "rb") as f:
        data = f.read()
    _corrupt(path, data[: len(data) // 2])
    fresh = catalog_for(warehouse).load_table(table.identifier)
    with pytest.raises(CorruptMetadataError, match=name):
        fresh.scan().to_arrow()
    before = tree(fresh.path)
    with pytest.raises(CorruptMetadataError, match=name):
        write_table(fresh, good([9]))
    assert tree(fresh.path) == before


def test_missing_manifest(warehouse: str) -> None:
    table = seeded(warehouse)
    names, _, _ = _manifest_names(table)
    os.remove(os.path.join(table.path, "manifest", names[0]))
    fresh = catalog_for(warehouse).load_table(table.identifier)
    with pytest.raises(CorruptMetadataError, match=names[0]):
        fresh.scan().to_arrow()


def test_corrupt_schema_file(warehouse: str) -> None:
    table = seeded(warehouse)
    path = os.path.join(table.path, "schema", "schema-0")
    _corrupt(path, b'{"id": 0, "fields": [')
    with pytest.raises(CorruptMetadataError, match="schema-0"):
        catalog_for(warehouse).load_table(table.identifier)


def test_corrupt_data_file_is_named(warehouse: str) -> None:
    table = seeded(warehouse)
    (split,) = table.scan(filter=[("id", "=", 3)]).plan()
    f = split.files[-1]
    path = table.store.data_file_path(split.partition, split.bucket, f.file_name)
    _corrupt(path, b"PAR1 garbage")
    with pytest.raises(TableFormatError) as info:
        catalog_for(warehouse).load_table(table.identifier).scan().to_arrow()
    assert f.file_name in str(info.value)


def test_keys_given_as_none_mean_no_keys_and_a_lone_string_is_refused(tmp_path):
    catalog = FileSystemCatalog(str(tmp_path))
    catalog.create_database("db")
    schema = pa.schema([("id", pa.int64()), ("dt", pa.string())])
    table = catalog.create_table("db.none", schema, primary_keys=None, partition_keys=None)
    assert table.schema.primary_keys == () and table.schema.partition_keys == ()
    for keys in ({"primary_keys": "id"}, {"partition_keys": "dt"}, {"primary_keys": [1]}):
        with pytest.raises(SchemaError, match=r"table 'db.bad': (primary|partition) keys must be a list of column names"):
            catalog.create_table("db.bad", schema, **keys)
        assert not catalog.table_exists("db.bad")
