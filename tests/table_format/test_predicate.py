"""Predicates: DNF parsing and binding, Arrow filtering, stats / partition pruning, projection, bucket values."""

from __future__ import annotations

import datetime as dt
import math
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from table_format.errors import SchemaError
from table_format.predicate import (
    And,
    Leaf,
    Or,
    Predicate,
    and_,
    equality_values,
    or_,
    parse_filter,
)
from table_format.schema import build_schema

# ---- a schema covering the atomic types --------------------------------------------------------------
ARROW_SCHEMA = pa.schema(
    [
        ("i", pa.int32()),
        ("f", pa.float64()),
        ("g", pa.float32()),
        ("s", pa.string()),
        ("b", pa.binary()),
        ("d", pa.date32()),
        ("dec", pa.decimal128(6, 2)),
        ("ts", pa.timestamp("ms")),
        ("tz", pa.timestamp("us", tz="UTC")),
        ("flag", pa.bool_()),
        ("tags", pa.list_(pa.string())),
    ]
)
SCHEMA = build_schema(ARROW_SCHEMA, partition_keys=["d"])
SCALAR_COLUMNS = [f.name for f in ARROW_SCHEMA if f.name != "tags"]

EPOCH = dt.datetime(2024, 1, 1)
UTC = dt.timezone.utc

# small domains so that values and literals collide often
VALUE_STRATEGIES: dict[str, st.SearchStrategy[Any]] = {
    "i": st.integers(-4, 4),
    "f": st.sampled_from([-1.5, -0.0, 0.0, 1.0, 2.5, math.inf, -math.inf, math.nan]),
    "g": st.sampled_from([-1.5, 0.0, 0.10000000149011612, 1.0, math.nan]),
    "s": st.text(alphabet="ab\u00e9", max_size=3),
    "b": st.binary(max_size=3).map(lambda x: bytes(c % 3 * 127 for c in x)),
    "d": st.integers(-3, 3).map(lambda n: dt.date(2024, 1, 1) + dt.timedelta(days=n)),
    "dec": st.integers(-300, 300).map(lambda n: Decimal(n).scaleb(-2)),
    "ts": st.integers(-3, 3).map(lambda n: EPOCH + dt.timedelta(milliseconds=n)),
    "tz": st.integers(-3, 3).map(lambda n: (EPOCH + dt.timedelta(microseconds=n)).replace(tzinfo=UTC)),
    "flag": st.booleans(),
}
LITERAL_STRATEGIES: dict[str, st.SearchStrategy[Any]] = {
    "i": st.integers(-5, 5),
    "f": st.sampled_from([-1.5, -0.0, 0.0, 1.0, 2.0, 2.5, math.inf]),
    "g": st.sampled_from([-1.5, 0.0, 0.1, 1.0, 3.0]),
    "s": st.text(alphabet="ab\u00e9", max_size=3),
    "b": st.binary(max_size=3).map(lambda x: bytes(c % 3 * 127 for c in x)),
    "d": st.one_of(
        st.integers(-4, 4).map(lambda n: dt.date(2024, 1, 1) + dt.timedelta(days=n)),
        st.integers(-4, 4).map(lambda n: (dt.date(2024, 1, 1) + dt.timedelta(days=n)).isoformat()),
    ),
    # scale 3 on a DECIMAL(6, 2) column: some literals are not representable
    "dec": st.one_of(
        st.integers(-3100, 3100).map(lambda n: Decimal(n).scaleb(-3)),
        st.integers(-31, 31),
        st.sampled_from(["1.5", "-0.25", "2.999"]),
    ),
    # microseconds on a TIMESTAMP(3) column: some literals are finer than the column
    "ts": st.integers(-4000, 4000).map(lambda n: EPOCH + dt.timedelta(microseconds=n)),
    "tz": st.integers(-4, 4).map(lambda n: (EPOCH + dt.timedelta(microseconds=n)).replace(tzinfo=UTC)),
    "flag": st.booleans(),
}
STRING_LIKE = {"s", "b"}


@st.composite
def leaves(draw: st.DrawFn) -> Leaf:
    col = draw(st.sampled_from(SCALAR_COLUMNS))
    ops = ["=", "!=", "<", "<=", ">", ">=", "in", "not in", "is_null", "is_not_null"]
    if col in STRING_LIKE:
        ops.append("starts_with")
    op = draw(st.sampled_from(ops))
    lit = LITERAL_STRATEGIES[col]
    if op in ("is_null", "is_not_null"):
        return Leaf(col, op)
    if op in ("in", "not in"):
        return Leaf(col, op, tuple(draw(st.lists(lit, max_size=4))))
    return Leaf(col, op, (draw(lit),))


def _combine(children: st.SearchStrategy[Predicate]) -> st.SearchStrategy[Predicate]:
    kids = st.lists(children, min_size=1, max_size=3).map(tuple)
    return st.one_of(kids.map(And), kids.map(Or))


predicates = st.recursive(leaves(), _combine, max_leaves=6).map(lambda p: parse_filter(p, SCHEMA, table="t"))


@st.composite
def rows(draw: st.DrawFn, min_size: int = 0) -> list[dict[str, Any]]:
    n = draw(st.integers(min_size, 12))
    out = []
    for _ in range(n):
        row = {c: draw(st.one_of(st.none(), VALUE_STRATEGIES[c])) for c in SCALAR_COLUMNS}
        row["tags"] = None
        out.append(row)
    return out


def to_table(batch: list[dict[str, Any]]) -> pa.Table:
    cols = {f.name: pa.array([r[f.name] for r in batch], type=f.type) for f in ARROW_SCHEMA}
    cols["__idx"] = pa.array(range(len(batch)), pa.int64())
    return pa.table(cols)


# ---- an independent reference evaluator --------------------------------------------------------------
def ref_eval(p: Predicate, row: dict[str, Any]) -> bool:
    """Plain SQL semantics: comparisons with null are false; NaN follows IEEE."""
    if isinstance(p, And):
        return all(ref_eval(c, row) for c in p.children)
    if isinstance(p, Or):
        return any(ref_eval(c, row) for c in p.children)
    assert isinstance(p, Leaf)
    v = row[p.field]
    if p.op == "is_null":
        return v is None
    if p.op == "is_not_null":
        return v is not None
    if v is None:
        return False
    lits = p.literals
    if p.op == "in":
        return any(v == x for x in lits)
    if p.op == "not in":
        return all(v != x for x in lits)
    x = lits[0]
    return {
        "=": lambda: v == x,
        "!=": lambda: v != x,
        "<": lambda: v < x,
        "<=": lambda: v <= x,
        ">": lambda: v > x,
        ">=": lambda: v >= x,
        "starts_with": lambda: v[: len(x)] == x,
    }[p.op]()


def batch_stats(batch: list[dict[str, Any]], *, nan_as_max: bool) -> tuple[dict, dict, dict]:
    """min / max / null counts like a writer would record them (NaN skipped, or NaN sorting last)."""
    mins: dict[str, Any] = {}
    maxs: dict[str, Any] = {}
    nulls: dict[str, int] = {}
    for c in SCALAR_COLUMNS:
        vals = [r[c] for r in batch if r[c] is not None]
        nulls[c] = len(batch) - len(vals)
        nans = [v for v in vals if isinstance(v, float) and math.isnan(v)]
        vals = [v for v in vals if not (isinstance(v, float) and math.isnan(v))]
        if nan_as_max and nans:
            mins[c] = min(vals) if vals else math.nan
            maxs[c] = math.nan
        elif vals:
            mins[c], maxs[c] = min(vals), max(vals)
    return mins, maxs, nulls


# ---- properties --------------------------------------------------------------------------------------
SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(predicates, rows())
def test_arrow_expression_matches_python_evaluation(p: Predicate, batch: list[dict[str, Any]]) -> None:
    table = to_table(batch)
    got = table.filter(p.to_arrow_expression()).column("__idx").to_pylist()
    want = [i for i, r in enumerate(batch) if ref_eval(p, r)]
    assert got == want, p


@SETTINGS
@given(predicates, rows())
def test_test_row_matches_python_evaluation(p: Predicate, batch: list[dict[str, Any]]) -> None:
    for r in batch:
        assert p.test_row(r) == ref_eval(p, r), (p, r)


@SETTINGS
@given(predicates, rows(min_size=1), st.booleans(), st.data())
def test_stats_pruning_is_sound(p: Predicate, batch: list[dict[str, Any]], nan_as_max: bool, data: Any) -> None:
    mins, maxs, nulls = batch_stats(batch, nan_as_max=nan_as_max)
    # some writers record fewer statistics: drop or blank some of them
    for c in data.draw(st.lists(st.sampled_from(SCALAR_COLUMNS), max_size=3)):
        mins.pop(c, None)
    for c in data.draw(st.lists(st.sampled_from(SCALAR_COLUMNS), max_size=3)):
        maxs[c] = None
    for c in data.draw(st.lists(st.sampled_from(SCALAR_COLUMNS), max_size=3)):
        nulls[c] = None  # type: ignore[assignment]
    if any(ref_eval(p, r) for r in batch):
        assert p.test_stats(mins, maxs, nulls, len(batch)), (p, mins, maxs, nulls)


@SETTINGS
@given(predicates, rows(), st.sets(st.sampled_from(SCALAR_COLUMNS)))
def test_project_is_implied(p: Predicate, batch: list[dict[str, Any]], keep: set[str]) -> None:
    q = p.project(keep)
    if q is None:
        return
    assert q.fields() <= keep
    for r in batch:
        if ref_eval(p, r):
            assert ref_eval(q, r), (p, q, r)


@SETTINGS
@given(predicates, rows(), st.lists(st.sampled_from(["i", "s", "f", "dec"]), min_size=1, max_size=2, unique=True))
def test_equality_values_cover_matching_rows(p: Predicate, batch: list[dict[str, Any]], keys: list[str]) -> None:
    combos = equality_values(p, keys)
    if combos is None:
        return
    assert len(combos) <= 1000
    for r in batch:
        if ref_eval(p, r):
            got = tuple(r[k] for k in keys)
            assert any(all(a == b for a, b in zip(got, c, strict=True)) for c in combos), (p, got, combos)


# ---- parsing -----------------------------------------------------------------------------------------
def test_parse_conjunction_and_disjunction() -> None:
    p = parse_filter([("i", "=", 1), ("s", ">", "a")], SCHEMA, table="t")
    assert p == And((Leaf("i", "=", (1,)), Leaf("s", ">", ("a",))))
    q = parse_filter([[("i", "==", 1)], [("s", "in", ["a", "b"]), ("f", "is not null")]], SCHEMA)
    assert q == Or((Leaf("i", "=", (1,)), And((Leaf("s", "in", ("a", "b")), Leaf("f", "is_not_null")))))
    assert parse_filter(None, SCHEMA) is None
    assert parse_filter([], SCHEMA) is None
    assert parse_filter([("f", "IS NULL")], SCHEMA) == Leaf("f", "is_null")
    assert parse_filter([("f", "is null", None)], SCHEMA) == Leaf("f", "is_null")
    assert parse_filter([("s", "startswith", "ab")], SCHEMA) == Leaf("s", "starts_with", ("ab",))


def test_literals_converted_to_column_types() -> None:
    def lit(col: str, value: Any) -> Any:
        p = parse_filter([(col, "=", value)], SCHEMA)
        assert isinstance(p, Leaf)
        return p.literals[0]

    assert lit("d", "2024-05-14") == dt.date(2024, 5, 14)
    assert lit("ts", "2024-05-14T10:11:12.5") == dt.datetime(2024, 5, 14, 10, 11, 12, 500000)
    assert lit("ts", "2024-05-14 10:11:12Z") == dt.datetime(2024, 5, 14, 10, 11, 12)
    assert lit("ts", dt.date(2024, 5, 14)) == dt.datetime(2024, 5, 14)
    assert lit("tz", "2024-05-14T12:00:00+02:00") == dt.datetime(2024, 5, 14, 10, tzinfo=UTC)
    assert lit("tz", dt.datetime(2024, 5, 14, 10)) == dt.datetime(2024, 5, 14, 10, tzinfo=UTC)
    assert lit("dec", "1.25") == Decimal("1.25")
    assert lit("dec", 3) == Decimal(3)
    assert lit("dec", 0.1) == Decimal("0.1")
    assert lit("f", 2) == 2.0 and isinstance(lit("f", 2), float)
    assert lit("g", 0.1) == 0.10000000149011612  # FLOAT literals are single precision
    assert lit("i", 3.0) == 3
    assert lit("b", bytearray(b"x")) == b"x"
    assert lit("flag", "true") is True
    assert lit("i", pa.scalar(7)) == 7
    p = parse_filter([("i", "in", [3, 1, 3])], SCHEMA)
    assert isinstance(p, Leaf) and sorted(p.literals) == [1, 3]


@pytest.mark.parametrize(
    ("filt", "fragments"),
    [
        ([("nope", "=", 1)], ["'t'", "'nope'", "unknown column"]),
        ([("i", "~", 1)], ["'t'", "'i'", "unknown operator"]),
        ([("i", "=", "x")], ["'t'", "'i'", "INT"]),
        ([("i", "=", 2**40)], ["'t'", "'i'", "out of range"]),
        ([("i", "=", True)], ["'t'", "'i'"]),
        ([("i", "=", 1.5)], ["'t'", "'i'"]),
        ([("i", "=", None)], ["'t'", "'i'", "is null"]),
        ([("i", "in", [1, None])], ["'t'", "'i'"]),
        ([("i", "in", 1)], ["'t'", "'i'", "list"]),
        ([("d", "<", "2024-13-01")], ["'t'", "'d'", "DATE"]),
        ([("ts", ">", "yesterday")], ["'t'", "'ts'", "TIMESTAMP(3)"]),
        ([("dec", "=", "abc")], ["'t'", "'dec'", "DECIMAL(6, 2)"]),
        ([("dec", "=", 12345)], ["'t'", "'dec'", "integer digits"]),
        ([("f", "=", math.nan)], ["'t'", "'f'", "NaN"]),
        ([("f", "=", "1.0")], ["'t'", "'f'"]),
        ([("s", "=", 1)], ["'t'", "'s'"]),
        ([("b", "=", "x")], ["'t'", "'b'"]),
        ([("i", "starts_with", 1)], ["'t'", "'i'", "starts_with"]),
        ([("tags", "=", "x")], ["'t'", "'tags'", "complex"]),
        ([("tags", "is null")], ["'t'", "'tags'", "complex"]),
        ([("i", "=")], ["'t'", "'i'", "needs a value"]),
        ([("i", "is null", 3)], ["'t'", "'i'", "no value"]),
        ([(1, "=", 1)], ["'t'", "column name"]),
        ([("i", "=", 1), [("i", "=", 1)]], ["'t'", "mixes"]),
        ([[("i", "=", 1)], []], ["'t'", "empty conjunction"]),
        ("i = 1", ["'t'", "list"]),
    ],
)
def test_parse_errors_name_table_and_column(filt: Any, fragments: list[str]) -> None:
    with pytest.raises(SchemaError) as e:
        parse_filter(filt, SCHEMA, table="t")
    for frag in fragments:
        assert frag in str(e.value), (frag, str(e.value))


def test_binding_a_predicate_converts_literals() -> None:
    p = parse_filter(Or((Leaf("d", "=", ("2024-01-02",)), Leaf("i", ">", (1,)))), SCHEMA, table="t")
    assert p == Or((Leaf("d", "=", (dt.date(2024, 1, 2),)), Leaf("i", ">", (1,))))
    with pytest.raises(SchemaError, match="'zz'"):
        parse_filter(And((Leaf("zz", "=", (1,)),)), SCHEMA, table="t")


def test_leaf_validation() -> None:
    with pytest.raises(SchemaError, match="'c'"):
        Leaf("c", "like", ("x",))
    with pytest.raises(SchemaError):
        Leaf("c", "=", (1, 2))
    with pytest.raises(SchemaError):
        Leaf("c", "is_null", (1,))
    with pytest.raises(SchemaError):
        And(())
    assert Leaf("c", "==", (1,)) == Leaf("c", "=", (1,))
    assert Leaf("c", "is not null") == Leaf("c", "is_not_null")


# ---- arrow edge cases --------------------------------------------------------------------------------
def test_arrow_edge_cases() -> None:
    table = pa.table(
        {
            "dec": pa.array([Decimal("1.00"), Decimal("1.01"), Decimal("-9.99"), None], pa.decimal128(3, 2)),
            "f": pa.array([0.0, -0.0, math.nan, None]),
            "ts": pa.array(
                [dt.datetime(2024, 1, 1, 0, 0, 0, 1000), None, dt.datetime(2024, 1, 1), None], pa.timestamp("ms")
            ),
        }
    )
    schema = build_schema(table.schema)

    def count(filt: list[Any]) -> int:
        p = parse_filter(filt, schema)
        assert p is not None
        return table.filter(p.to_arrow_expression()).num_rows

    assert count([("dec", "<", Decimal("1.005"))]) == 2
    assert count([("dec", ">", Decimal("1.005"))]) == 1
    assert count([("dec", "=", Decimal("1.005"))]) == 0
    assert count([("dec", "!=", Decimal("1.005"))]) == 3
    assert count([("dec", "<", Decimal("-9.995"))]) == 0
    assert count([("dec", ">", Decimal("-9.995"))]) == 3
    assert count([("dec", ">=", Decimal("9.995"))]) == 0
    assert count([("dec", "in", [Decimal("1.005"), Decimal("1.01")])]) == 1
    assert count([("dec", "not in", [Decimal("1.005")])]) == 3
    assert count([("f", "in", [0.0])]) == 2  # -0.0 == 0.0
    assert count([("f", "in", [-0.0])]) == 2
    assert count([("f", "not in", [0.0])]) == 1  # NaN != 0.0
    assert count([("f", "!=", 1.0)]) == 3
    assert count([("f", "is null")]) == 1
    assert count([("ts", ">", dt.datetime(2024, 1, 1, 0, 0, 0, 500))]) == 1
    assert count([("ts", "=", dt.datetime(2024, 1, 1, 0, 0, 0, 500))]) == 0
    assert count([("ts", "in", [])]) == 0
    assert count([("ts", "not in", [])]) == 2
    # the expression works with pyarrow.dataset too
    import pyarrow.dataset as ds

    p = parse_filter([[("f", "in", [0.0])], [("dec", "<", 0)]], schema)
    assert p is not None
    assert ds.dataset(table).to_table(filter=p.to_arrow_expression()).num_rows == 3


# ---- stats pruning -----------------------------------------------------------------------------------
def _stats(p: Predicate, lo: Any, hi: Any, nulls: int | None = 0, rows: int = 10, col: str = "i") -> bool:
    return p.test_stats({col: lo}, {col: hi}, {col: nulls}, rows)


def _p(filt: list[Any]) -> Predicate:
    p = parse_filter(filt, SCHEMA, table="t")
    assert p is not None
    return p


def test_stats_prunes_obvious_cases() -> None:
    assert not _stats(_p([("i", ">", 10)]), 1, 10)
    assert _stats(_p([("i", ">=", 10)]), 1, 10)
    assert not _stats(_p([("i", "<", 1)]), 1, 10)
    assert _stats(_p([("i", "<=", 1)]), 1, 10)
    assert not _stats(_p([("i", "=", 11)]), 1, 10)
    assert _stats(_p([("i", "=", 5)]), 1, 10)
    assert not _stats(_p([("i", "in", [0, 11])]), 1, 10)
    assert _stats(_p([("i", "in", [0, 10])]), 1, 10)
    assert not _stats(_p([("i", "in", [])]), 1, 10)
    assert not _stats(_p([("i", "!=", 3)]), 3, 3, nulls=2)
    assert _stats(_p([("i", "!=", 3)]), 3, 4)
    assert not _stats(_p([("i", "not in", [3, 4])]), 3, 3)
    assert not _stats(_p([("i", "is null")]), 1, 10, nulls=0)
    assert _stats(_p([("i", "is null")]), 1, 10, nulls=1)
    assert not _stats(_p([("i", "is not null")]), None, None, nulls=10)
    assert not _stats(_p([("i", "=", 1)]), None, None, nulls=10)  # all null
    assert not _stats(_p([("i", "=", 1)]), 1, 1, rows=0)  # empty file
    # AND prunes when one side prunes, OR only when all do
    assert not _stats(_p([("i", ">", 0), ("i", ">", 10)]), 1, 10)
    assert _stats(_p([[("i", ">", 0)], [("i", ">", 10)]]), 1, 10)
    assert not _stats(_p([[("i", "<", 0)], [("i", ">", 10)]]), 1, 10)
    # dates, decimals, strings
    assert not _stats(_p([("d", "=", "2024-05-14")]), dt.date(2024, 1, 1), dt.date(2024, 5, 13), col="d")
    assert not _stats(_p([("dec", ">", "9.995")]), Decimal("1.00"), Decimal("9.99"), col="dec")
    assert _stats(_p([("dec", ">", "9.985")]), Decimal("1.00"), Decimal("9.99"), col="dec")
    assert not _stats(_p([("s", "starts_with", "b")]), "c", "d", col="s")
    assert not _stats(_p([("s", "starts_with", "b")]), "a", "az", col="s")
    assert _stats(_p([("s", "starts_with", "b")]), "a", "c", col="s")
    assert _stats(_p([("s", "starts_with", "b")]), "bz", "c", col="s")
    assert _stats(_p([("s", "starts_with", "ab")]), "a", "ac", col="s")


def test_stats_unknown_is_maybe() -> None:
    p = _p([("i", "=", 100)])
    assert p.test_stats({}, {}, {}, 10)  # nothing known
    assert p.test_stats({"i": None}, {"i": None}, {"i": None}, 10)
    assert p.test_stats({"i": None}, {"i": None}, {"i": 3}, 10)
    assert not p.test_stats({}, {"i": 5}, {}, 10)  # an upper bound alone is enough here
    assert _p([("i", "is null")]).test_stats({}, {}, {}, 10)
    assert _p([("i", "=", 1)]).test_stats({"i": "garbage"}, {"i": "x"}, {"i": 0}, 10)


def test_stats_float_nan_is_conservative() -> None:
    f = "f"
    assert _stats(_p([("f", ">", 5.0)]), 1.0, math.nan, col=f)  # NaN max: unknown
    assert _stats(_p([("f", "<", 0.0)]), math.nan, math.nan, col=f)
    assert not _stats(_p([("f", "<", 0.0)]), 1.0, math.nan, col=f)  # min is still a bound
    # a writer may leave NaN out of min/max, and NaN != 1.0 is true: never prune != on floats
    assert _stats(_p([("f", "!=", 1.0)]), 1.0, 1.0, col=f)
    assert _stats(_p([("f", "not in", [1.0])]), 1.0, 1.0, col=f)
    assert not _stats(_p([("f", "=", 2.0)]), 1.0, 1.0, col=f)


def test_stats_accepts_other_representations() -> None:
    # DATE as epoch days, DECIMAL as a float, LTZ timestamps as naive UTC
    assert not _stats(_p([("d", ">", "2024-01-01")]), 0, 10, col="d")
    assert not _stats(_p([("dec", ">", 5)]), 1.5, 2.5, col="dec")
    naive = dt.datetime(2024, 1, 1)
    assert not _stats(_p([("tz", ">", "2024-01-02T00:00:00Z")]), naive, naive, col="tz")
    assert _stats(_p([("tz", ">=", "2024-01-01T00:00:00Z")]), naive, naive, col="tz")


# ---- test_row (partition values) ---------------------------------------------------------------------
def test_row_sql_null_semantics() -> None:
    assert not _p([("i", "=", 1)]).test_row({"i": None})
    assert not _p([("i", "!=", 1)]).test_row({"i": None})
    assert not _p([("i", "not in", [1])]).test_row({"i": None})
    assert _p([("i", "is null")]).test_row({"i": None})
    assert _p([("i", "=", 1)]).test_row({"i": 1})
    assert _p([("i", "=", 1)]).test_row({})  # unknown column: maybe
    assert _p([("d", "=", "2024-05-14")]).test_row({"d": dt.date(2024, 5, 14)})
    assert _p([("d", "=", "2024-05-14")]).test_row({"d": "2024-05-14"})  # partition value as a string
    assert not _p([("d", "=", "2024-05-14")]).test_row({"d": "2024-05-15"})
    assert _p([("i", ">", 2)]).test_row({"i": "3"})
    assert _p([("i", ">", 2)]).test_row({"i": "garbage"})  # unreadable: maybe
    assert not _p([[("i", "=", 1)], [("s", "=", "x")]]).test_row({"i": 2, "s": None})


# ---- project -----------------------------------------------------------------------------------------
def test_project() -> None:
    p = _p([("d", "=", "2024-05-14"), ("i", ">", 3)])
    assert p.project({"d"}) == Leaf("d", "=", (dt.date(2024, 5, 14),))
    assert p.project({"s"}) is None
    assert p.project({"d", "i"}) == p
    q = _p([[("d", "=", "2024-05-14"), ("i", ">", 3)], [("d", "=", "2024-05-15")]])
    assert q.project({"d"}) == Or((Leaf("d", "=", (dt.date(2024, 5, 14),)), Leaf("d", "=", (dt.date(2024, 5, 15),))))
    r = _p([[("d", "=", "2024-05-14")], [("i", ">", 3)]])
    assert r.project({"d"}) is None
    nested = And((Or((Leaf("d", "=", (1,)), Leaf("i", "=", (2,)))), Leaf("d", "<", (5,)), Leaf("i", ">", (0,))))
    assert nested.project({"d"}) == Leaf("d", "<", (5,))
    assert nested.fields() == {"d", "i"}


# ---- equality_values ---------------------------------------------------------------------------------
def test_equality_values() -> None:
    assert equality_values(_p([("i", "=", 1)]), ["i"]) == [(1,)]
    assert equality_values(_p([("i", "in", [1, 2]), ("s", "=", "x")]), ["i", "s"]) == [(1, "x"), (2, "x")]
    assert equality_values(_p([("i", "in", [1, 2]), ("s", "=", "x")]), ["s"]) == [("x",)]
    assert equality_values(_p([("i", "in", [1, 2])]), ["i", "s"]) is None
    assert equality_values(_p([("i", ">", 1)]), ["i"]) is None
    assert equality_values(_p([[("i", "=", 1), ("s", "=", "a")], [("i", "=", 2), ("s", "=", "b")]]), ["i", "s"]) == [
        (1, "a"),
        (2, "b"),
    ]
    assert equality_values(_p([[("i", "=", 1)], [("s", "=", "b")]]), ["i"]) is None
    assert equality_values(_p([("i", "in", [1, 2, 3]), ("i", "in", [2, 3, 4])]), ["i"]) == [(2,), (3,)]
    assert equality_values(_p([("i", "=", 1), ("i", "=", 2)]), ["i"]) == []  # contradiction
    assert equality_values(_p([("i", "=", 1), ("i", ">", 0)]), ["i"]) == [(1,)]
    assert equality_values(None, ["i"]) is None
    assert sorted(equality_values(_p([("f", "=", 0.0)]), ["f"]) or [], key=repr) == [(-0.0,), (0.0,)]
    assert equality_values(_p([("f", "=", 0.0), ("f", "in", [-0.0])]), ["f"]) is not None
    big = _p([("i", "in", list(range(40))), ("s", "in", [str(k) for k in range(40)])])
    assert equality_values(big, ["i", "s"]) is None  # 1600 > 1000
    assert len(equality_values(big, ["i", "s"], max_combinations=2000) or []) == 1600


def test_helpers_flatten() -> None:
    a, b, c = Leaf("a", "=", (1,)), Leaf("b", "=", (2,)), Leaf("c", "=", (3,))
    assert and_(a) == a
    assert and_(And((a, b)), c) == And((a, b, c))
    assert or_(Or((a, b)), c) == Or((a, b, c))
    assert isinstance(pc.field("a") == 1, pc.Expression)
