"""`lakehouse read`: filters, projection, time travel, limits and the four output formats."""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import os
from decimal import Decimal

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from cli.cli_helpers import ORDERS_SCHEMA, Run, tree
from lakehouse_cli.context import UserError
from lakehouse_cli.filters import MAX_CONJUNCTIONS, parse_filters
from table_format import FileSystemCatalog, write_table


def _ids(run: Run, *args: str) -> list[int]:
    lines = run("read", "shop.orders", "--format", "jsonl", *args).stdout.splitlines()
    return sorted(json.loads(line)["id"] for line in lines)


# ---- the filter syntax ------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("text", "dnf"), [
    ("dt = '2024-05-14' and amount > 10", [[("dt", "=", "2024-05-14"), ("amount", ">", Decimal("10"))]]),
    ("id = 1 or id = 2 AND score >= 0.5", [[("id", "=", 1)], [("id", "=", 2), ("score", ">=", 0.5)]]),
    ("(id = 1 or id = 2) and dt != \"x\"", [[("id", "=", 1), ("dt", "!=", "x")], [("id", "=", 2), ("dt", "!=", "x")]]),
    ("id in (1, 2,3) and customer not in ('a')", [[("id", "in", [1, 2, 3]), ("customer", "not in", ["a"])]]),
    ("customer is null or customer is not null", [[("customer", "is null")], [("customer", "is not null")]]),
    ("customer starts with 'c' and `id` <> -4", [[("customer", "starts_with", "c"), ("id", "<>", -4)]]),
    ("customer = 'it''s'", [[("customer", "=", "it's")]]),
    ("amount <= 1.5e1", [[("amount", "<=", Decimal("15"))]]),
    ("score < 1", [[("score", "<", 1.0)]]),
])
def test_filter_syntax(text: str, dnf: list[list[tuple[object, ...]]]) -> None:
    parsed = parse_filters([text], ORDERS_SCHEMA)
    assert parsed == dnf
    assert [[type(c[-1]) for c in conj] for conj in parsed] == [[type(c[-1]) for c in conj] for conj in dnf]


def test_several_filters_are_anded() -> None:
    assert parse_filters(["id = 1 or id = 2", "dt = 'a'"], ORDERS_SCHEMA) == [
        [("id", "=", 1), ("dt", "=", "a")], [("id", "=", 2), ("dt", "=", "a")]]
    assert parse_filters([], ORDERS_SCHEMA) is None


@pytest.mark.parametrize(("text", "message"), [
    ("dt =", "expected a value for 'dt'"),
    ("dt", "expected an operator after 'dt'"),
    ("dt = 'a' and", "expected a condition"),
    ("dt = 'a' id = 1", "expected 'and', 'or' or the end"),
    ("(dt = 'a'", "expected ')'"),
    ("dt = null", "null never equals anything; use 'dt is null'"),
    ("dt is 'a'", "expected 'null'"),
    ("dt = 'a' & id = 1", "unexpected character"),
    ("= 3", "expected a column name"),
    ("id in 1", "expected '('"),
    ("", "--filter is empty"),
])
def test_filter_syntax_errors(text: str, message: str) -> None:
    with pytest.raises(UserError) as info:
        parse_filters([text], ORDERS_SCHEMA)
    assert message in info.value.message
    assert text in info.value.message or not text


def test_filter_expansion_is_bounded() -> None:
    blowup = " and ".join(["(id = 1 or id = 2)"] * 9)  # 2^9 alternatives
    with pytest.raises(UserError, match=str(MAX_CONJUNCTIONS)):
        parse_filters([blowup], ORDERS_SCHEMA)


# ---- the command ------------------------------------------------------------------------------------------------
def test_read_filters(run: Run) -> None:
    assert _ids(run) == [1, 2, 4, 5, 6]  # 3 was deleted, 2 updated
    assert _ids(run, "--filter", "dt = '2024-05-14' and amount > 10") == [2]
    assert _ids(run, "-f", "dt = '2024-05-15'", "-f", "amount < 10 or id = 4") == [4, 5, 6]
    assert _ids(run, "-f", "customer starts with 'c' and id not in (1, 6)") == [2, 4, 5]
    assert _ids(run, "-f", "score >= 2.5") == [5, 6]


def test_read_columns_snapshot_tag_limit(run: Run) -> None:
    rows = [json.loads(line) for line in run("read", "shop.orders", "--json", "-c", "id,amount").stdout.splitlines()]
    assert all(set(r) == {"id", "amount"} for r in rows)
    assert {r["id"]: r["amount"] for r in rows}[2] == "25.00"  # decimals exact, as strings
    assert _ids(run, "--snapshot", "1") == [1, 2, 3]
    assert _ids(run, "--tag", "first") == [1, 2, 3]
    assert len(_ids(run, "--limit", "2")) == 2
    assert _ids(run, "--limit", "0") == []


def test_read_table_format(run: Run) -> None:
    out = run("read", "shop.orders", "-f", "id = 2").stdout
    assert "25.00" in out and "c2" in out and "1 row(s)" in out
    empty = run("read", "shop.orders", "-f", "id = 99").stdout
    assert "customer" in empty and "0 row(s)" in empty


def test_read_table_format_shows_50_rows_by_default(run: Run) -> None:
    schema = pa.schema([("k", pa.int64())])
    table = FileSystemCatalog(run.warehouse).create_table("shop.big", schema)
    write_table(table, pa.table({"k": list(range(120))}, schema=schema))
    out = run("read", "shop.big").stdout
    assert "first 50 rows; pass --limit N for more" in out
    assert "120 row(s)" in run("read", "shop.big", "--limit", "500").stdout


def test_read_csv(run: Run) -> None:
    out = run("read", "shop.events", "--format", "csv").stdout
    rows = list(csv.DictReader(io.StringIO(out)))
    assert sorted((r["kind"], r["n"], r["day"]) for r in rows) == [("buy", "3", "d2"), ("click", "1", "d1"),
                                                                  ("view", "2", "d2")]
    header_only = run("read", "shop.events", "--format", "csv", "-f", "n > 100").stdout
    assert header_only.strip() == '"kind","n","day"'


def test_read_parquet_and_output_files(run: Run, tmp_path: object) -> None:
    target = os.path.join(str(tmp_path), "orders.parquet")
    result = run("read", "shop.orders", "--format", "parquet", "--output", target, "-f", "dt = '2024-05-15'")
    assert "3 row(s) written to" in result.stderr
    table = pq.read_table(target)
    assert sorted(table.column("id").to_pylist()) == [4, 5, 6]
    assert table.schema.field("amount").type == pa.decimal128(10, 2)
    jsonl = os.path.join(str(tmp_path), "orders.jsonl")
    run("read", "shop.orders", "--format", "jsonl", "-o", jsonl)
    with open(jsonl) as f:
        assert len(f.readlines()) == 5
    empty = os.path.join(str(tmp_path), "empty.parquet")
    run("read", "shop.orders", "--format", "parquet", "-o", empty, "-f", "id = 99")
    assert pq.read_table(empty).schema.names == ORDERS_SCHEMA.names


def test_read_errors(run: Run) -> None:
    err = run("read", "shop.orders", "-f", "nope = 1", code=1).stderr
    assert err.count("\n") == 1 and "unknown column 'nope'" in err and "shop.orders" in err
    err = run("read", "shop.orders", "-f", "amount = 'abc'", code=1).stderr
    assert "'amount'" in err
    assert "expected a value" in run("read", "shop.orders", "-f", "id =", code=1).stderr
    assert "unknown columns ['nope']" in run("read", "shop.orders", "-c", "id,nope", code=1).stderr
    assert "names no column" in run("read", "shop.orders", "-c", ",", code=1).stderr
    assert "tag 'nope' does not exist" in run("read", "shop.orders", "--tag", "nope", code=1).stderr
    assert "snapshot" in run("read", "shop.orders", "--snapshot", "42", code=1).stderr
    assert "--format parquet needs --output" in run("read", "shop.orders", "--format", "parquet", code=2).stderr
    assert "not both" in run("read", "shop.orders", "--snapshot", "1", "--tag", "first", code=2).stderr
    assert "'xml'" in run("read", "shop.orders", "--format", "xml", code=2).stderr


def test_read_changes_nothing(run: Run) -> None:
    before = tree(run.warehouse)
    run("read", "shop.orders")
    run("read", "shop.orders", "--json", "-f", "id > 1")
    assert tree(run.warehouse) == before


ALL_TYPES = pa.schema([
    ("b", pa.binary()), ("l", pa.list_(pa.int32())), ("m", pa.map_(pa.string(), pa.int64())),
    ("st", pa.struct([("x", pa.int32())])), ("d", pa.date32()), ("ts", pa.timestamp("us")), ("f", pa.float64()),
])


@pytest.fixture
def typed(run: Run) -> Run:
    table = FileSystemCatalog(run.warehouse).create_table("shop.typed", ALL_TYPES)
    write_table(table, pa.table({
        "b": [b"\x00\xff", None], "l": [[1, 2], None], "m": [[("a", 1)], None], "st": [{"x": 1}, None],
        "d": [dt.date(2024, 1, 2), None], "ts": [dt.datetime(2024, 1, 2, 3, 4, 5, 6), None],
        "f": [float("nan"), 1.5]}, schema=ALL_TYPES))
    return run


def test_jsonl_of_every_kind_of_column(typed: Run) -> None:
    expected = [{"l": [1, 2], "m": {"a": 1}, "st": {"x": 1}, "d": "2024-01-02", "ts": "2024-01-02 03:04:05.000006",
                 "f": None},
                {"l": None, "m": None, "st": None, "d": None, "ts": None, "f": 1.5}]
    without_binary = typed("read", "shop.typed", "--json", "-c", "l,m,st,d,ts,f").stdout  # polars' writer
    assert [json.loads(line) for line in without_binary.splitlines()] == expected
    with_binary = typed("read", "shop.typed", "--json").stdout  # polars cannot write binary: the same conventions
    rows = [json.loads(line) for line in with_binary.splitlines()]
    assert [r.pop("b") for r in rows] == ["AP8=", None]  # base64
    assert rows == expected
    assert "2024-01-02 03:04:05" in typed("read", "shop.typed").stdout


def test_csv_refuses_nested_and_binary_columns(typed: Run) -> None:
    err = typed("read", "shop.typed", "--format", "csv", code=1).stderr
    assert "nested or binary columns ['b', 'l', 'm', 'st']" in err
    assert typed("read", "shop.typed", "--format", "csv", "-c", "d,f").stdout.splitlines()[0] == '"d","f"'
