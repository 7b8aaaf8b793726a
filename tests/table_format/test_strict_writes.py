"""Strict writes: input is converted to the table's types only where no value can change meaning.

Every refused conversion raises SchemaError naming the table, the column, the input type and the table's type,
and leaves the table as it was (same snapshots, no new file, same rows), for pyarrow tables, record batch readers,
polars frames and two-phase writes. Every accepted conversion reads back exactly. docs/strict-writes.md has the
table these tests follow."""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Callable
from decimal import Decimal, localcontext
from typing import Any

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from table_format import FileSystemCatalog, SchemaError, Table, write_table
from table_format.conversion import conversion_refusal

SCHEMA = pa.schema([
    pa.field("id", pa.int64(), nullable=False),
    ("i8", pa.int8()), ("i16", pa.int16()), ("i32", pa.int32()),
    ("f32", pa.float32()), ("f64", pa.float64()), ("dec", pa.decimal128(10, 2)),
    ("s", pa.string()), ("b", pa.binary()), ("flag", pa.bool_()),
    ("d", pa.date32()), ("t", pa.time32("ms")),
    ("ts", pa.timestamp("us")), ("ltz", pa.timestamp("us", tz="UTC")), ("ts3", pa.timestamp("ms")),
    ("arr", pa.list_(pa.int32())), ("m", pa.map_(pa.string(), pa.int64())),
    ("st", pa.struct([("x", pa.int32()), ("y", pa.string())])),
    pa.field("nn", pa.int32(), nullable=False),
])
PAIMON_TYPES = {
    "id": "BIGINT NOT NULL", "i8": "TINYINT", "i16": "SMALLINT", "i32": "INT", "f32": "FLOAT", "f64": "DOUBLE",
    "dec": "DECIMAL(10, 2)", "s": "STRING", "b": "BYTES", "flag": "BOOLEAN", "d": "DATE", "t": "TIME(3)",
    "ts": "TIMESTAMP(6)", "ltz": "TIMESTAMP(6) WITH LOCAL TIME ZONE", "ts3": "TIMESTAMP(3)",
    "arr": "ARRAY<INT>", "m": "MAP<STRING NOT NULL, BIGINT>", "st": "ROW<", "nn": "INT NOT NULL",
}
UTC = dt.timezone.utc
_n = [0]


def row(i: int) -> dict[str, Any]:
    return {
        "id": i, "i8": i % 100, "i16": i, "i32": i, "f32": i + 0.5, "f64": i / 4, "dec": Decimal(i) / 100,
        "s": f"s{i}", "b": b"\x00" + bytes([i % 256]), "flag": i % 2 == 0, "d": dt.date(2024, 5, 14),
        "t": dt.time(12, 0, 1), "ts": dt.datetime(2024, 5, 14, 1, 2, 3, 456789),
        "ltz": dt.datetime(2024, 5, 14, 1, 2, 3, 456789, tzinfo=UTC), "ts3": dt.datetime(2024, 5, 14, 0, 0, 0, 1000),
        "arr": [i, -i], "m": [("k", i)], "st": {"x": i, "y": str(i)}, "nn": i,
    }


def rows(ids: list[int]) -> pa.Table:
    return pa.Table.from_pylist([row(i) for i in ids], schema=SCHEMA)


def tree(path: str) -> dict[str, tuple[int, int]]:
    out = {}
    for dirpath, _, names in os.walk(path):
        for n in names:
            st = os.stat(os.path.join(dirpath, n))
            out[os.path.relpath(os.path.join(dirpath, n), path)] = (st.st_size, st.st_mtime_ns)
    return out


def seeded(warehouse: str, schema: pa.Schema = SCHEMA) -> Table:
    """A primary-key table with two snapshots, so 'unchanged' is checked against real content."""
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db", exist_ok=True)
    _n[0] += 1
    t = catalog.create_table(f"db.strict{_n[0]}", schema, primary_keys=["id"], options={"bucket": "2"})
    write_table(t, rows([1, 2]).select(schema.names))
    write_table(t, rows([3]).select(schema.names))
    return t


@pytest.fixture
def table(warehouse: str) -> Table:
    return seeded(warehouse)


@pytest.fixture
def polars_table(warehouse: str) -> Table:
    """polars has only nanosecond times (time64[ns]), which a TIME(3) column refuses: this table has none."""
    return seeded(warehouse, pa.schema([f for f in SCHEMA if f.name != "t"]))


def polars_rows(ids: list[int]) -> pl.DataFrame:
    frame = pl.from_arrow(rows(ids).drop_columns(["t"]))
    assert isinstance(frame, pl.DataFrame)
    return frame


def assert_refused(table: Table, call: Callable[[], Any], *names: str) -> str:
    """call() raises SchemaError naming the table and `names`; the table is unchanged."""
    before = (tree(table.path), [s.id for s in table.snapshots()], table.scan().to_arrow())
    with pytest.raises(SchemaError) as info:
        call()
    msg = str(info.value)
    for n in (table.identifier, *names):
        assert n in msg, (n, msg)
    assert tree(table.path) == before[0]
    assert [s.id for s in table.snapshots()] == before[1]
    assert table.scan().to_arrow().equals(before[2])
    return msg


def with_column(data: pa.Table, name: str, array: pa.Array | pa.ChunkedArray) -> pa.Table:
    return data.set_column(SCHEMA.get_field_index(name), name, array)


# (column, input array, words the reason must contain)
REFUSED = [
    # strings are never parsed
    ("id", pa.array(["7"]), "parsed"),
    ("f64", pa.array(["1.0"]), "parsed"),
    ("i32", pa.array(["7"], pa.large_string()), "parsed"),
    ("dec", pa.array(["1.50"]), "parsed"),
    ("flag", pa.array(["true"]), "parsed"),
    ("d", pa.array(["2024-05-14"]), "parsed"),
    ("ts", pa.array(["2024-05-14T00:00:00"]), "parsed"),
    ("ltz", pa.array(["2024-05-14T00:00:00Z"]), "parsed"),
    ("t", pa.array(["12:00:00"]), "parsed"),
    ("i32", pa.array(["7"]).dictionary_encode(), "parsed"),
    # float -> integer
    ("i32", pa.array([1.0], pa.float64()), "integers"),
    ("id", pa.array([7.0], pa.float32()), "integers"),
    ("i16", pa.array([Decimal("1")], pa.decimal128(5, 0)), "integers"),
    # narrowing
    ("i32", pa.array([1], pa.int64()), "narrower"),
    ("i8", pa.array([1], pa.int16()), "narrower"),
    ("i32", pa.array([1], pa.uint32()), "narrower"),
    ("id", pa.array([7], pa.uint64()), "narrower"),
    ("f32", pa.array([1.5], pa.float64()), "narrower"),
    ("dec", pa.array([Decimal("1.125")], pa.decimal128(10, 3)), "fraction digits"),
    ("dec", pa.array([Decimal("1.25")], pa.decimal128(12, 2)), "integer digits"),
    ("dec", pa.array([Decimal("1.25")], pa.decimal256(40, 2)), "integer digits"),
    ("dec", pa.array([1], pa.int64()), "integer digits"),
    # integer or decimal -> float where a value could be rounded
    ("f32", pa.array([1], pa.int32()), "rounded"),
    ("f64", pa.array([1], pa.int64()), "rounded"),
    ("f64", pa.array([Decimal("0.10")], pa.decimal128(10, 2)), "rounded"),
    ("f32", pa.array([Decimal("12345678")], pa.decimal128(8, 0)), "rounded"),
    ("dec", pa.array([0.5], pa.float64()), "exact decimals"),
    # time zones
    ("ts", pa.array([0], pa.timestamp("us", tz="UTC")), "time zone"),
    ("ts", pa.array([0], pa.timestamp("us", tz="Asia/Tokyo")), "time zone"),
    ("ltz", pa.array([0], pa.timestamp("us")), "no time zone"),
    # unit coarsening
    ("ts", pa.array([1], pa.timestamp("ns")), "truncated"),
    ("ltz", pa.array([1], pa.timestamp("ns", tz="UTC")), "truncated"),
    ("ts3", pa.array([1], pa.timestamp("us")), "truncated"),
    ("t", pa.array([1], pa.time64("us")), "truncated"),
    # other kinds
    ("d", pa.array([0], pa.timestamp("ms")), "not a kind of"),
    ("ts", pa.array([dt.date(2024, 5, 14)], pa.date32()), "not a kind of"),
    ("s", pa.array([1], pa.int64()), "strings"),
    ("s", pa.array([b"x"], pa.binary()), "strings"),
    ("b", pa.array(["x"]), "parsed"),
    ("flag", pa.array([1], pa.int8()), "not a kind of"),
    ("i32", pa.array([True]), "not a kind of"),
    # nested types: their parts follow the same rules
    ("arr", pa.array([[1]], pa.list_(pa.int64())), "list element"),
    ("arr", pa.array([["1"]], pa.list_(pa.string())), "list element"),
    ("arr", pa.array([1], pa.int32()), "not a kind of"),
    ("m", pa.array([[("k", 1.5)]], pa.map_(pa.string(), pa.float64())), "map value"),
    ("m", pa.array([[(b"k", 1)]], pa.map_(pa.binary(), pa.int64())), "map key"),
    ("st", pa.array([{"x": 1, "y": "a"}], pa.struct([("x", pa.int64()), ("y", pa.string())])), "field 'x'"),
    ("st", pa.array([{"y": "a", "x": 1}], pa.struct([("y", pa.string()), ("x", pa.int32())])), "same order"),
    ("st", pa.array([{"x": 1}], pa.struct([("x", pa.int32())])), "same names"),
    ("st", pa.array(['{"x": 1}']), "parsed"),
]


@pytest.mark.parametrize(("column", "array", "reason"), REFUSED,
                         ids=[f"{c}<-{a.type}" for c, a, _ in REFUSED])
def test_refused_conversion_changes_nothing(table: Table, column: str, array: pa.Array, reason: str) -> None:
    data = with_column(rows([9]), column, array)
    msg = assert_refused(table, lambda: write_table(table, data), repr(column), str(array.type),
                         PAIMON_TYPES[column], reason)
    assert "cannot be stored as the table's type" in msg


def test_issue_examples_strings_into_double_and_bigint_key_from_polars(table: Table, polars_table: Table) -> None:
    """The issue's examples: ["1.0", "1.5", "2"] into a DOUBLE column, a polars frame whose BIGINT key became text."""
    data = with_column(rows([7, 8, 9]), "f64", pa.array(["1.0", "1.5", "2"]))
    assert_refused(table, lambda: write_table(table, data), "'f64'", "DOUBLE", "string")
    t = polars_table
    frame = polars_rows([7, 8, 9])
    assert_refused(t, lambda: write_table(t, frame.with_columns(pl.col("id").cast(pl.Utf8))), "'id'",
                   "BIGINT NOT NULL", "large_string", "parsed")
    assert_refused(t, lambda: write_table(t, frame.with_columns(pl.col("f64").cast(pl.Utf8))), "'f64'", "DOUBLE",
                   "parsed")
    assert_refused(t, lambda: write_table(t, frame.with_columns(pl.col("i32").cast(pl.Float64))), "'i32'", "INT",
                   "double", "integers")
    assert_refused(t, lambda: write_table(t, frame.with_columns(pl.col("i32").cast(pl.Int64))), "'i32'", "INT",
                   "int64", "narrower")
    assert_refused(t, lambda: write_table(t, frame.with_columns(pl.col("ts").dt.replace_time_zone("Europe/Paris"))),
                   "'ts'", "TIMESTAMP(6)", "time zone")
    assert_refused(t, lambda: write_table(t, frame.with_columns(pl.col("ts3").cast(pl.Datetime("us")))), "'ts3'",
                   "TIMESTAMP(3)", "truncated")
    assert_refused(table, lambda: write_table(table, pl.from_arrow(rows([7]))), "'t'", "time64[ns]", "TIME(3)")


def test_refused_through_record_batch_reader_and_two_phase_write(table: Table) -> None:
    data = with_column(rows([9, 10]), "i32", pa.array([1, 2], pa.int64()))
    reader = pa.RecordBatchReader.from_batches(data.schema, data.to_batches())
    assert_refused(table, lambda: write_table(table, reader), "'i32'", "int64", "INT")

    def two_phase() -> None:
        writer = table.new_write()
        writer.write(rows([20]))  # fine
        try:
            writer.write(data)
        finally:
            writer.abort()

    assert_refused(table, two_phase, "'i32'", "int64", "INT")


def test_nulls_in_not_null_columns_are_refused_whatever_the_type(table: Table) -> None:
    data = with_column(rows([9]), "nn", pa.nulls(1))
    assert_refused(table, lambda: write_table(table, data), "'nn'", "NOT NULL")
    data = with_column(rows([9]), "nn", pa.array([None], pa.int16()))
    assert_refused(table, lambda: write_table(table, data), "'nn'", "NOT NULL")


# (column, input array, the value read back)
ACCEPTED = [
    ("id", pa.array([9], pa.int32()), 9),
    ("id", pa.array([9], pa.uint32()), 9),
    ("i8", pa.array([-128], pa.int8()), -128),
    ("i16", pa.array([255], pa.uint8()), 255),
    ("i32", pa.array([-32768], pa.int16()), -32768),
    ("i32", pa.array([65535], pa.uint16()), 65535),
    ("f32", pa.array([-32768], pa.int16()), -32768.0),
    ("f32", pa.array([1.5], pa.float16()), 1.5),
    ("f64", pa.array([2**31 - 1], pa.int32()), 2147483647.0),
    ("f64", pa.array([2**32 - 1], pa.uint32()), 4294967295.0),
    ("f64", pa.array([0.1], pa.float32()), float(pa.scalar(0.1, pa.float32()).as_py())),
    ("f64", pa.array([Decimal("999999999999999")], pa.decimal128(15, 0)), 999999999999999.0),
    ("dec", pa.array([Decimal("-12345678.9")], pa.decimal128(9, 1)), Decimal("-12345678.90")),
    ("dec", pa.array([Decimal("1.5")], pa.decimal256(3, 1)), Decimal("1.50")),
    ("dec", pa.array([-32768], pa.int16()), Decimal("-32768.00")),
    ("s", pa.array(["é"], pa.large_string()), "é"),
    ("s", pa.array(["v"], pa.string_view()), "v"),
    ("s", pa.array(["a"]).dictionary_encode(), "a"),
    ("s", pa.array(["a"], pa.large_string()).dictionary_encode(), "a"),
    ("b", pa.array([b"\x00\x01"], pa.large_binary()), b"\x00\x01"),
    ("b", pa.array([b"ab"], pa.binary(2)), b"ab"),
    ("d", pa.array([dt.date(1969, 12, 31)], pa.date64()), dt.date(1969, 12, 31)),
    ("t", pa.array([3661], pa.time32("s")), dt.time(1, 1, 1)),
    ("ts", pa.array([dt.datetime(2024, 1, 1, 0, 0, 1)], pa.timestamp("s")), dt.datetime(2024, 1, 1, 0, 0, 1)),
    ("ts", pa.array([dt.datetime(2024, 1, 1, 0, 0, 0, 5000)], pa.timestamp("ms")),
     dt.datetime(2024, 1, 1, 0, 0, 0, 5000)),
    ("ltz", pa.array([0], pa.timestamp("ms", tz="Asia/Tokyo")), dt.datetime(1970, 1, 1, tzinfo=UTC)),
    ("ltz", pa.array([1_000_000], pa.timestamp("us", tz="-05:00")), dt.datetime(1970, 1, 1, 0, 0, 1, tzinfo=UTC)),
    ("ts3", pa.array([dt.datetime(2024, 1, 1, 0, 0, 1)], pa.timestamp("s")), dt.datetime(2024, 1, 1, 0, 0, 1)),
    ("arr", pa.array([[1, None]], pa.large_list(pa.int8())), [1, None]),
    ("arr", pa.array([[1, 2]], pa.list_(pa.int16(), 2)), [1, 2]),
    ("m", pa.array([[("k", 7)]], pa.map_(pa.large_string(), pa.int32())), [("k", 7)]),
    ("st", pa.array([{"x": 1, "y": "a"}], pa.struct([("x", pa.int8()), ("y", pa.large_string())])),
     {"x": 1, "y": "a"}),
    ("i32", pa.nulls(1), None),
    ("st", pa.nulls(1), None),
    ("i32", pa.chunked_array([pa.array([5], pa.int8())]), 5),
]


@pytest.mark.parametrize(("column", "array", "expected"), ACCEPTED,
                         ids=[f"{c}<-{a.type}" for c, a, _ in ACCEPTED])
def test_accepted_conversion_reads_back_exactly(table: Table, column: str, array: pa.Array, expected: Any) -> None:
    data = with_column(rows([9]), column, array)
    snapshot = write_table(table, data)
    assert snapshot == 3
    got = table.scan(filter=[("id", "=", 9)]).to_arrow()
    assert got.schema == table.arrow_schema
    assert got.num_rows == 1
    assert got.column(column).to_pylist() == [expected]
    untouched = {k: v for k, v in row(9).items() if k != column}
    assert {k: v for k, v in got.to_pylist()[0].items() if k != column} == untouched


def test_polars_frame_of_other_but_safe_types_reads_back_exactly(polars_table: Table) -> None:
    table = polars_table
    frame = polars_rows([10, 11]).with_columns(
        pl.col("id").cast(pl.Int32),
        pl.col("i32").cast(pl.Int16),
        pl.col("f64").cast(pl.Float32),
        pl.col("s").cast(pl.Categorical),
        pl.col("ltz").dt.convert_time_zone("America/New_York"),
        pl.col("arr").cast(pl.List(pl.Int8)),
    )
    assert write_table(table, frame) == 3
    got = table.scan(filter=[("id", ">=", 10)]).to_arrow().sort_by("id")
    assert got.to_pylist() == rows([10, 11]).drop_columns(["t"]).to_pylist()


NUMERIC = [pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint8(), pa.uint16(), pa.uint32(), pa.uint64(),
           pa.float16(), pa.float32(), pa.float64(), pa.decimal128(5, 2), pa.decimal128(10, 0), pa.decimal128(15, 0),
           pa.decimal128(20, 4), pa.decimal128(38, 10)]


def extremes(t: pa.DataType) -> pa.Array:
    """The values of type t furthest from exact: its range ends, and for floats and decimals its finest steps."""
    if pa.types.is_integer(t):
        info = np.iinfo(t.to_pandas_dtype())
        return pa.array([int(info.min), int(info.max), 0, -1 if info.min else 1], t)
    if pa.types.is_floating(t):
        info = np.finfo(t.to_pandas_dtype())
        values = np.array([info.max, info.min, info.tiny, info.eps, 0.1, -1 / 3], dtype=t.to_pandas_dtype())
        return pa.array(values, t)
    with localcontext(prec=60):
        top = Decimal(10) ** (t.precision - t.scale) - Decimal(10) ** -t.scale
        return pa.array([top, -top, Decimal(10) ** -t.scale, Decimal(0)], t)


@pytest.mark.parametrize("src", NUMERIC, ids=str)
def test_every_accepted_numeric_conversion_is_exact_at_the_extremes(src: pa.DataType) -> None:
    """Accepted means exact: every extreme value of the input type survives the cast and the cast back."""
    values = extremes(src)
    accepted = [dst for dst in NUMERIC if conversion_refusal(src, dst) is None]
    assert src in accepted
    for dst in accepted:
        stored = pc.cast(values, dst, safe=True)
        assert pc.cast(stored, src, safe=True).equals(values), (src, dst)


REQ_LIST = pa.list_(pa.field("element", pa.int32(), nullable=False))
REQ_MAP = pa.map_(pa.field("key", pa.string(), nullable=False), pa.field("value", pa.int64(), nullable=False))
REQ_ROW = pa.struct([pa.field("x", pa.int32(), nullable=False), ("l", REQ_LIST)])
NESTED = pa.schema([pa.field("id", pa.int64(), nullable=False), ("l", REQ_LIST), ("m", REQ_MAP), ("r", REQ_ROW)])


@pytest.mark.parametrize(("column", "array", "where"), [
    ("l", pa.array([[1, None]], pa.list_(pa.int32())), "list element"),
    ("l", pa.array([[1, None]], REQ_LIST), "list element"),
    ("m", pa.array([[("a", None)]], pa.map_(pa.string(), pa.int64())), "map value"),
    ("r", pa.array([{"x": None, "l": [1]}], pa.struct([("x", pa.int32()), ("l", pa.list_(pa.int32()))])), "'x'"),
    ("r", pa.array([{"x": 1, "l": [None]}], pa.struct([("x", pa.int32()), ("l", pa.list_(pa.int32()))])),
     "field 'l': list element"),
])
def test_nulls_in_not_null_nested_parts_are_refused(warehouse: str, column: str, array: pa.Array, where: str) -> None:
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db", exist_ok=True)
    table = catalog.create_table("db.nested", NESTED)
    good = pa.Table.from_pylist([{"id": 1, "l": [1], "m": [("a", 1)], "r": {"x": 1, "l": [2]}},
                                 {"id": 2, "l": None, "m": None, "r": None}], schema=NESTED)  # null parents are fine
    write_table(table, good)
    assert table.scan().to_arrow().sort_by("id").equals(good)
    data = pa.table({"id": pa.array([3], pa.int64()), "l": pa.array([[1]], REQ_LIST),
                     "m": pa.array([[("b", 1)]], REQ_MAP), "r": pa.array([{"x": 1, "l": [1]}], REQ_ROW)})
    data = data.set_column(NESTED.get_field_index(column), column, array)
    assert_refused(table, lambda: write_table(table, data), repr(column), where, "NOT NULL")
