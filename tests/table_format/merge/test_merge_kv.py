"""merge_kv and the merge options: semantics of each engine and aggregate function, validation, reader/writer use."""

from __future__ import annotations

from decimal import Context, Decimal
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from table_format import FileSystemCatalog, write_table
from table_format.errors import OptionError, SchemaError, TableFormatError, UnsupportedFeatureError
from table_format.merge import merge_kv, merge_spec
from table_format.options import CoreOptions
from table_format.row.row_kind import SEQUENCE_NUMBER, VALUE_KIND
from table_format.schema import build_schema

KIND = {"+I": 0, "-U": 1, "+U": 2, "-D": 3}


def _merge(schema: pa.Schema, options: dict[str, str], rows: list[tuple[Any, ...]], *, drop: bool = True,
           seqs: list[int] | None = None, seq_ordered: bool = False) -> list[dict[str, Any]]:
    """rows: (kind, v1, v2, ...) in schema order; the first column is the key."""
    ts = build_schema(schema, primary_keys=[schema.names[0]], options=options)
    opts = CoreOptions.parse(ts.options, has_primary_key=True)
    cols = {f.name: pa.array([r[i + 1] for r in rows], f.type) for i, f in enumerate(schema)}
    cols[SEQUENCE_NUMBER] = pa.array(seqs if seqs is not None else range(len(rows)), pa.int64())
    cols[VALUE_KIND] = pa.array([KIND[r[0]] for r in rows], pa.int8())
    out = merge_kv(pa.table(cols), schema=ts, options=opts, drop_retractions=drop, seq_ordered=seq_ordered)
    return [{**r, VALUE_KIND: [k for k, v in KIND.items() if v == r[VALUE_KIND]][0]} for r in out.to_pylist()]


KV = pa.schema([("k", pa.int32()), ("v", pa.int32())])


# ---- deduplicate / first-row ---------------------------------------------------------------------------------
def test_deduplicate_keeps_latest_record_with_its_kind_and_sequence() -> None:
    rows = [("+I", 1, 10), ("+U", 1, 11), ("+I", 2, 20), ("-D", 2, 20), ("+I", 3, 30)]
    kept = _merge(KV, {}, rows, drop=False)
    assert [(r["k"], r["v"], r[VALUE_KIND], r[SEQUENCE_NUMBER]) for r in kept] == [
        (1, 11, "+U", 1), (2, 20, "-D", 3), (3, 30, "+I", 4)]
    assert [r["k"] for r in _merge(KV, {}, rows)] == [1, 3]


def test_deduplicate_ignore_delete_skips_retractions() -> None:
    rows = [("+I", 1, 10), ("-D", 1, 10), ("-D", 2, 1), ("-U", 3, 1), ("-D", 3, 1)]
    kept = _merge(KV, {"ignore-delete": "true"}, rows, drop=False)
    # a lone record passes through untouched (ReducerMergeFunctionWrapper); two retractions merge to nothing
    assert [(r["k"], r["v"], r[VALUE_KIND]) for r in kept] == [(1, 10, "+I"), (2, 1, "-D")]


def test_sequence_field_orders_out_of_order_input_nulls_first() -> None:
    schema = pa.schema([("k", pa.int32()), ("v", pa.string()), ("ts", pa.int64())])
    rows = [("+I", 1, "new", 5), ("+I", 1, "old", 3), ("+I", 1, "null-ts", None), ("+I", 2, "a", 1),
            ("+I", 2, "b", 1)]
    assert [r["v"] for r in _merge(schema, {"sequence.field": "ts"}, rows)] == ["new", "b"]


def test_several_sequence_fields_compare_in_order() -> None:
    schema = pa.schema([("k", pa.int32()), ("v", pa.string()), ("t1", pa.int32()), ("t2", pa.int32())])
    rows = [("+I", 1, "x", 2, 1), ("+I", 1, "y", 1, 9), ("+I", 1, "z", 2, 0)]
    assert [r["v"] for r in _merge(schema, {"sequence.field": "t1,t2"}, rows)] == ["x"]


def test_first_row_keeps_the_first_and_ignores_deletes_when_asked() -> None:
    rows = [("+I", 1, 1), ("+I", 1, 2), ("+U", 2, 5), ("+I", 2, 6)]
    got = _merge(KV, {"merge-engine": "first-row"}, rows)
    assert [(r["k"], r["v"], r[VALUE_KIND]) for r in got] == [(1, 1, "+I"), (2, 5, "+U")]
    with pytest.raises(UnsupportedFeatureError, match="ignore-delete"):
        _merge(KV, {"merge-engine": "first-row"}, [("+I", 1, 1), ("-D", 1, 1)])
    got = _merge(KV, {"merge-engine": "first-row", "first-row.ignore-delete": "true"},
                 [("-D", 1, 0), ("+I", 1, 1), ("-D", 1, 1)])
    assert [(r["k"], r["v"]) for r in got] == [(1, 1)]


# ---- partial-update -------------------------------------------------------------------------------------------
PU = pa.schema([("k", pa.int32()), ("a", pa.int32()), ("b", pa.string())])


def test_partial_update_latest_non_null_per_column() -> None:
    rows = [("+I", 1, 1, None), ("+I", 1, None, "x"), ("+I", 1, 3, None)]
    got = _merge(PU, {"merge-engine": "partial-update"}, rows)
    assert [(r["k"], r["a"], r["b"], r[VALUE_KIND], r[SEQUENCE_NUMBER]) for r in got] == [(1, 3, "x", "+I", 2)]


def test_partial_update_rejects_deletes_unless_configured() -> None:
    with pytest.raises(UnsupportedFeatureError, match="partial-update.ignore-delete"):
        _merge(PU, {"merge-engine": "partial-update"}, [("+I", 1, 1, "a"), ("-D", 1, 1, "a")])
    got = _merge(PU, {"merge-engine": "partial-update", "ignore-delete": "true"},
                 [("+I", 1, 1, "a"), ("-D", 1, 1, "a"), ("+I", 1, None, "b")])
    assert [(r["a"], r["b"]) for r in got] == [(1, "b")]


def test_partial_update_remove_record_on_delete() -> None:
    opts = {"merge-engine": "partial-update", "partial-update.remove-record-on-delete": "true"}
    # +I then -D in one merge: nothing, not even a -D (Java's write buffer drops the key, older rows survive)
    assert _merge(PU, opts, [("+I", 1, 1, "a"), ("-D", 1, 1, "a")], drop=False) == []
    # -U is ignored; a record after the -D starts a new row (Java 0.9 fails with a NullPointerException here)
    got = _merge(PU, opts, [("+I", 1, 1, "a"), ("-U", 1, 1, "a"), ("-D", 1, 1, "a"), ("+I", 1, None, "b")])
    assert [(r["a"], r["b"]) for r in got] == [(None, "b")]
    got = _merge(PU, opts, [("+I", 1, 1, "a"), ("-U", 1, 1, "a")])
    assert [(r["a"], r["b"]) for r in got] == [(1, "a")]


def test_partial_update_sequence_group_retraction_nulls_the_group() -> None:
    schema = pa.schema([("k", pa.int32()), ("a", pa.int32()), ("s", pa.int32()), ("g", pa.int32()),
                        ("other", pa.int32())])
    opts = {"merge-engine": "partial-update", "fields.g.sequence-group": "a,s", "fields.s.aggregate-function": "sum"}
    rows = [("+I", 1, 5, 10, 1, 7), ("+I", 1, 6, 20, 2, None), ("-D", 1, 6, 20, 2, 9), ("-U", 1, 1, 4, 1, 9)]
    got = _merge(schema, opts, rows)
    # -D (g=2 >= 2): a -> null, s retracted 30 - 20; -U (g=1 < 2): s retracted again, a untouched; other kept
    assert [(r["a"], r["s"], r["g"], r["other"]) for r in got] == [(None, 6, 2, 7)]


def test_partial_update_null_group_value_does_not_update() -> None:
    schema = pa.schema([("k", pa.int32()), ("a", pa.int32()), ("g", pa.int32())])
    got = _merge(schema, {"merge-engine": "partial-update", "fields.g.sequence-group": "a"},
                 [("+I", 1, 1, 5), ("+I", 1, 2, None), ("+I", 1, None, 6)])
    assert [(r["a"], r["g"]) for r in got] == [(None, 6)]  # a group update sets nulls too


# ---- aggregation ----------------------------------------------------------------------------------------------
def _agg(schema: pa.Schema, fn: str, rows: list[tuple[Any, ...]], **extra: str) -> list[Any]:
    opts = {"merge-engine": "aggregation", f"fields.{schema.names[1]}.aggregate-function": fn,
            **{f"fields.{schema.names[1]}.{k.replace('_', '-')}": v for k, v in extra.items()}}
    return [r[schema.names[1]] for r in _merge(schema, opts, rows)]


def test_sum_retracts_and_a_lone_delete_is_dropped() -> None:
    rows = [("+I", 1, 5), ("-D", 1, 5), ("-D", 2, 3), ("+I", 3, 1), ("-U", 3, None), ("+U", 3, 2)]
    got = _merge(KV, {"merge-engine": "aggregation", "fields.v.aggregate-function": "sum"}, rows)
    assert [(r["k"], r["v"], r[VALUE_KIND]) for r in got] == [(1, 0, "+I"), (3, 3, "+I")]


def test_sum_wraps_like_java_integers() -> None:
    schema = pa.schema([("k", pa.int32()), ("v", pa.int8())])
    assert _agg(schema, "sum", [("+I", 1, 100), ("+I", 1, 100)]) == [-56]


def test_float_sum_rounds_each_step_like_java() -> None:
    schema = pa.schema([("k", pa.int32()), ("v", pa.float32())])
    rng = np.random.default_rng(1)
    values = (rng.standard_normal(300) * 1000).astype(np.float32)
    acc = np.float32(values[0])
    for x in values[1:]:
        acc = np.float32(acc + x)
    got = _agg(schema, "sum", [("+I", 1, float(x)) for x in values])
    assert np.float32(got[0]) == acc


def test_decimal_sums() -> None:
    small = pa.schema([("k", pa.int32()), ("v", pa.decimal128(5, 2))])
    got = _agg(small, "sum", [("+I", 1, Decimal("999.99")), ("+I", 1, Decimal("1.00")), ("-D", 1, Decimal("0.50"))])
    assert got == [Decimal("1000.49")]  # a compact decimal is not checked against its precision (as Java)
    big = pa.schema([("k", pa.int32()), ("v", pa.decimal128(20, 1))])
    nines = Decimal("9" * 19 + ".9")
    assert _agg(big, "sum", [("+I", 1, nines), ("+I", 1, Decimal("0.1"))]) == [None]  # overflow: null
    assert _agg(big, "sum", [("+I", 1, nines), ("+I", 1, Decimal("0.1")), ("+I", 1, Decimal("2.5"))]) == [
        Decimal("2.5")]  # and the next value starts over


_WIDE = Context(prec=60)


def test_wide_decimal_sum_matches_a_step_by_step_model() -> None:
    """DECIMAL(38, 4) sums near the limit: every step checked, null on overflow, the next value starts over."""
    schema = pa.schema([("k", pa.int32()), ("v", pa.decimal128(38, 4))])
    rng = np.random.default_rng(5)
    limit = 10**38
    rows, model = [], {}
    for k in range(40):
        acc: int | None = None
        for _ in range(int(rng.integers(1, 12))):
            unscaled = int(rng.integers(-9, 10)) * 10**37 + int(rng.integers(-10**6, 10**6))
            kind = "-U" if rng.random() < 0.2 else "+I"
            rows.append((kind, k, Decimal(unscaled).scaleb(-4, _WIDE)))
            signed = -unscaled if kind == "-U" else unscaled
            if acc is None:
                acc = signed
            else:
                acc = acc + signed if abs(acc + signed) < limit else None
        model[k] = None if acc is None else Decimal(acc).scaleb(-4, _WIDE)
    assert any(v is None for v in model.values()) and any(v is not None for v in model.values())
    got = _merge(schema, {"merge-engine": "aggregation", "fields.v.aggregate-function": "sum"}, rows)
    assert {r["k"]: r["v"] for r in got} == model


def test_product_and_its_retraction() -> None:
    assert _agg(KV, "product", [("+I", 1, 3), ("+I", 1, -7), ("-D", 1, 2)]) == [-10]  # -21 / 2 truncates
    assert _agg(KV, "product", [("-D", 1, 4), ("+I", 1, 2), ("+I", 1, 2)]) == [16]  # retract on null takes input


def test_max_min_first_last() -> None:
    rows = [("+I", 1, None), ("+I", 1, 3), ("+I", 1, 9), ("+I", 1, None), ("+I", 1, 1)]
    assert _agg(KV, "max", rows) == [9]
    assert _agg(KV, "min", rows) == [1]
    assert _agg(KV, "last_value", rows) == [1]
    assert _agg(KV, "last_non_null_value", rows[:4]) == [9]
    assert _agg(KV, "first_value", rows) == [None]
    assert _agg(KV, "first_non_null_value", rows) == [3]
    assert _agg(KV, "first_not_null_value", rows) == [3]
    assert _agg(KV, "last_value", [("+I", 1, 3), ("-U", 1, 3)]) == [None]
    assert _agg(KV, "last_non_null_value", [("+I", 1, 3), ("-U", 1, None)]) == [3]
    assert _agg(KV, "last_non_null_value", [("+I", 1, 3), ("-U", 1, 4)]) == [None]


def test_functions_without_retraction_fail_unless_ignore_retract() -> None:
    with pytest.raises(UnsupportedFeatureError, match="fields.v.ignore-retract"):
        _agg(KV, "max", [("+I", 1, 3), ("-D", 1, 3)])
    assert _agg(KV, "max", [("+I", 1, 3), ("-D", 1, 30), ("+I", 1, 2)], ignore_retract="true") == [3]


def test_listagg_and_bools() -> None:
    s = pa.schema([("k", pa.int32()), ("v", pa.string())])
    assert _agg(s, "listagg", [("+I", 1, "a"), ("+I", 1, None), ("+I", 1, "b")]) == ["a,b"]
    assert _agg(s, "listagg", [("+I", 1, "a"), ("+I", 1, "b")], list_agg_delimiter=" | ") == ["a | b"]
    b = pa.schema([("k", pa.int32()), ("v", pa.bool_())])
    assert _agg(b, "bool_and", [("+I", 1, True), ("+I", 1, None), ("+I", 1, False)]) == [False]
    assert _agg(b, "bool_or", [("+I", 1, False), ("+I", 1, None), ("+I", 1, True)]) == [True]


def test_collect_merge_map_nested_update() -> None:
    arr = pa.schema([("k", pa.int32()), ("v", pa.list_(pa.int32()))])
    assert _agg(arr, "collect", [("+I", 1, [1, 2]), ("+I", 1, None), ("+I", 1, [2, 3]), ("-U", 1, [2])]) == [[1, 2, 3]]
    # distinct: a java.util.HashSet, whose iteration order is by hash bucket (Integer.hashCode = value)
    assert _agg(arr, "collect", [("+I", 1, [20, 3]), ("+I", 1, [18, 3])], distinct="true") == [[18, 3, 20]]
    m = pa.schema([("k", pa.int32()), ("v", pa.map_(pa.string(), pa.int32()))])
    got = _agg(m, "merge_map", [("+I", 1, [("a", 1), ("b", 2)]), ("+I", 1, [("b", 3)]), ("-D", 1, [("a", 0)])])
    assert got == [[("b", 3)]]
    row = pa.struct([("id", pa.int32()), ("name", pa.string())])
    nested = pa.schema([("k", pa.int32()), ("v", pa.list_(row))])
    got = _agg(nested, "nested_update",
               [("+I", 1, [{"id": 1, "name": "a"}]), ("+I", 1, [{"id": 2, "name": "b"}, {"id": 1, "name": "c"}]),
                ("-D", 1, [{"id": 2, "name": "?"}])], nested_key="id")
    assert got == [[{"id": 1, "name": "c"}]]
    got = _agg(nested, "nested_update", [("+I", 1, [{"id": 1, "name": "a"}]), ("+I", 1, [{"id": 1, "name": "a"}])])
    assert got == [[{"id": 1, "name": "a"}, {"id": 1, "name": "a"}]]  # no nested key: appended


def test_seq_ordered_equals_sorting() -> None:
    rng = np.random.default_rng(3)
    keys = rng.integers(0, 50, 500)
    rows = [("+I", int(k), int(v)) for k, v in zip(keys, rng.integers(0, 100, 500), strict=True)]
    opts = {"merge-engine": "aggregation", "fields.v.aggregate-function": "sum"}
    assert _merge(KV, opts, rows, seq_ordered=True) == _merge(KV, opts, rows)


# ---- validation -----------------------------------------------------------------------------------------------
BAD = [
    ({"merge-engine": "aggregation", "fields.v.aggregate-function": "nope"}, OptionError, "fields.v.aggregate"),
    ({"merge-engine": "aggregation", "fields.v.aggregate-function": "count"}, UnsupportedFeatureError, "count"),
    ({"merge-engine": "aggregation", "fields.v.aggregate-function": "hll_sketch"}, UnsupportedFeatureError, "hll"),
    ({"merge-engine": "aggregation", "fields.s.aggregate-function": "sum"}, SchemaError, "column 's'"),
    ({"merge-engine": "aggregation", "fields.v.aggregate-function": "collect"}, SchemaError, "ARRAY"),
    ({"merge-engine": "aggregation", "fields.v.aggregate-function": "merge_map"}, SchemaError, "MAP"),
    ({"merge-engine": "aggregation", "fields.b.aggregate-function": "max"}, SchemaError, "column 'b'"),
    ({"merge-engine": "aggregation", "fields.s.aggregate-function": "bool_or"}, SchemaError, "BOOLEAN"),
    ({"merge-engine": "aggregation", "fields.v.aggregate-function": "listagg"}, SchemaError, "STRING"),
    ({"merge-engine": "aggregation", "fields.arr.aggregate-function": "nested_update"}, SchemaError, "ARRAY<ROW"),
    ({"merge-engine": "aggregation", "fields.rows.aggregate-function": "nested_update",
      "fields.rows.nested-key": "nope"}, SchemaError, "nested-key"),
    ({"sequence.field": "nope"}, SchemaError, "sequence.field"),
    ({"sequence.field": "v,v"}, OptionError, "repeats"),
    ({"merge-engine": "first-row", "sequence.field": "v"}, OptionError, "first-row"),
    ({"merge-engine": "first-row", "changelog-producer": "input"}, OptionError, "changelog-producer"),
    ({"merge-engine": "partial-update", "fields.g.sequence-group": "nope"}, SchemaError, "nope"),
    ({"merge-engine": "partial-update", "fields.nope.sequence-group": "v"}, OptionError, "nope"),
    ({"merge-engine": "partial-update", "fields.g.sequence-group": "v", "fields.s.sequence-group": "v"},
     OptionError, "two sequence groups"),
    ({"merge-engine": "partial-update", "fields.g.sequence-group": "v", "fields.g.aggregate-function": "max"},
     OptionError, "fields.g.aggregate-function"),
    ({"merge-engine": "partial-update", "fields.v.aggregate-function": "sum"}, OptionError, "sequence groups"),
    ({"merge-engine": "partial-update", "ignore-delete": "true", "partial-update.remove-record-on-delete": "true"},
     OptionError, "conflict"),
    ({"merge-engine": "partial-update", "fields.g.sequence-group": "v",
      "partial-update.remove-record-on-delete": "true"}, OptionError, "sequence groups"),
    ({"merge-engine": "partial-update", "fields.g.sequence-group": "v", "fields.default-aggregate-function": "sum"},
     UnsupportedFeatureError, "default-aggregate-function"),
    ({"merge-engine": "deduplicate", "fields.v.aggregate-function": "sum"}, OptionError, "aggregation"),
    ({"merge-engine": "aggregation", "fields.g.sequence-group": "v"}, OptionError, "partial-update"),
    ({"sequence.auto-padding": "bogus"}, OptionError, "sequence.auto-padding"),
    ({"merge-engine": "nope"}, OptionError, "merge-engine"),
    ({"ignore-delete": "maybe"}, OptionError, "ignore-delete"),
]
WIDE = pa.schema([("k", pa.int32()), ("v", pa.int32()), ("s", pa.string()), ("b", pa.bool_()), ("g", pa.int32()),
                  ("arr", pa.list_(pa.int32())), ("rows", pa.list_(pa.struct([("id", pa.int32())])))])


@pytest.mark.parametrize(("options", "error", "match"), BAD, ids=[str(i) for i in range(len(BAD))])
def test_create_table_validates_merge_options(warehouse: str, options: dict[str, str], error: type, match: str) -> None:
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db")
    with pytest.raises(error, match=match) as info:
        catalog.create_table("db.t", WIDE, primary_keys=["k"], options=options)
    assert "db.t" in str(info.value)


def test_valid_options_are_accepted(warehouse: str) -> None:
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db")
    catalog.create_table("db.a", WIDE, primary_keys=["k"], options={
        "merge-engine": "aggregation", "fields.v.aggregate-function": "sum", "fields.s.aggregate-function": "listagg",
        "fields.s.list-agg-delimiter": ";", "fields.arr.aggregate-function": "collect", "fields.arr.distinct": "true",
        "fields.rows.aggregate-function": "nested_update", "fields.rows.nested-key": "id",
        "fields.b.aggregate-function": "bool_and", "fields.g.ignore-retract": "true",
        "fields.default-aggregate-function": "last_value"})
    catalog.create_table("db.p", WIDE, primary_keys=["k"], options={
        "merge-engine": "partial-update", "fields.g.sequence-group": "v,s", "fields.v.aggregate-function": "sum",
        "sequence.field": "g", "sequence.auto-padding": "row-kind-flag"})
    catalog.create_table("db.append", WIDE, options={"merge-engine": "aggregation"})  # ignored, as in Paimon


def test_a_type_error_of_a_table_written_elsewhere_fails_only_when_merging() -> None:
    """Java 0.9 creates such tables and fails when the function first merges two values; so do we."""
    schema = build_schema(pa.schema([("k", pa.int32()), ("s", pa.string())]), primary_keys=["k"],
                          options={"merge-engine": "aggregation", "fields.s.aggregate-function": "sum"})
    spec = merge_spec(schema)
    opts = CoreOptions.parse(schema.options, has_primary_key=True)
    data = pa.table({"k": pa.array([1, 2], pa.int32()), "s": ["a", "b"],
                     SEQUENCE_NUMBER: pa.array([0, 1], pa.int64()), VALUE_KIND: pa.array([0, 0], pa.int8())})
    assert merge_kv(data, schema=schema, options=opts, drop_retractions=True, spec=spec).num_rows == 2
    data = pa.table({"k": pa.array([1, 1], pa.int32()), "s": ["a", "b"],
                     SEQUENCE_NUMBER: pa.array([0, 1], pa.int64()), VALUE_KIND: pa.array([0, 0], pa.int8())})
    with pytest.raises(SchemaError, match="sum"):
        merge_kv(data, schema=schema, options=opts, drop_retractions=True, spec=spec)


# ---- through the table --------------------------------------------------------------------------------------
def test_ignore_delete_drops_retractions_at_write(warehouse: str) -> None:
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db")
    t = catalog.create_table("db.t", KV, primary_keys=["k"], options={"ignore-delete": "true", "bucket": "1"})
    write_table(t, pa.table({"k": pa.array([1, 2], pa.int32()), "v": pa.array([1, 2], pa.int32())}))
    write_table(t, pa.table({"k": pa.array([1], pa.int32()), "v": pa.array([1], pa.int32()), "_row_kind": ["-D"]}))
    assert t.refresh().scan().to_arrow().to_pylist() == [{"k": 1, "v": 1}, {"k": 2, "v": 2}]
    assert sum(f.file.row_count for f in t.store.manifests.live_files(t.latest_snapshot())) == 2


def test_projection_reads_the_columns_the_engine_needs(warehouse: str) -> None:
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db")
    schema = pa.schema([("k", pa.int32()), ("a", pa.int32()), ("g", pa.int32()), ("ts", pa.int32())])
    t = catalog.create_table("db.t", schema, primary_keys=["k"], options={
        "merge-engine": "partial-update", "fields.g.sequence-group": "a", "sequence.field": "ts", "bucket": "1",
        "write-only": "true"})
    for rows in ([(1, 1, 5, 0)], [(1, 2, 3, 1)], [(1, 3, 7, 0)]):
        write_table(t, pa.table({n: pa.array([r[i] for r in rows], pa.int32()) for i, n in enumerate(schema.names)}))
    t = t.refresh()
    assert t.scan().to_arrow().to_pylist() == [{"k": 1, "a": 3, "g": 7, "ts": 1}]
    assert t.scan(columns=["a"]).to_arrow().to_pylist() == [{"a": 3}]
    assert t.scan(columns=["a"], filter=[("a", "=", 3)]).to_arrow().to_pylist() == [{"a": 3}]


def test_merge_errors_name_the_table(warehouse: str) -> None:
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db")
    t = catalog.create_table("db.t", KV, primary_keys=["k"], options={"merge-engine": "partial-update", "bucket": "1"})
    write_table(t, pa.table({"k": pa.array([1], pa.int32()), "v": pa.array([1], pa.int32())}))
    with pytest.raises(TableFormatError, match="db.t"):
        write_table(t, pa.table({"k": pa.array([1, 1], pa.int32()), "v": pa.array([1, 2], pa.int32()),
                                 "_row_kind": ["+I", "-D"]}))


@pytest.mark.parametrize("options", [{}, {"sequence.field": "s"}, {"merge-engine": "aggregation",
                                                                   "fields.v.aggregate-function": "listagg"}])
def test_any_input_order_merges_like_sequence_order(options: dict[str, str]) -> None:
    """Runs of any length whose records come in any order are put in (sequence.field, _SEQUENCE_NUMBER) order."""
    rng = np.random.default_rng(11)
    n = 3000
    schema = pa.schema([("k", pa.int32()), ("v", pa.string()), ("s", pa.int32())])
    ts = build_schema(schema, primary_keys=["k"], options=options)
    opts = CoreOptions.parse(ts.options, has_primary_key=True)
    keys = rng.integers(0, 400, n).astype(np.int32)
    s = pa.array(rng.integers(0, 5, n).astype(np.int32), mask=rng.random(n) < 0.2)
    seqs = rng.permutation(n).astype(np.int64)
    data = pa.table({"k": keys, "v": [f"v{i}" for i in range(n)], "s": s, SEQUENCE_NUMBER: seqs,
                     VALUE_KIND: pa.array(np.zeros(n, np.int8))})
    s_key = np.where(pc_is_null(s), -1, s.fill_null(0).to_numpy())
    order = np.lexsort([seqs, s_key if "sequence.field" in options else np.zeros(n), keys])
    expected = merge_kv(data.take(pa.array(order)), schema=ts, options=opts, drop_retractions=True, seq_ordered=True)
    assert merge_kv(data, schema=ts, options=opts, drop_retractions=True).equals(expected)


def pc_is_null(arr: pa.Array) -> np.ndarray:
    return arr.is_null().to_numpy(zero_copy_only=False)


def test_float_sums_of_short_and_long_runs_are_sequential() -> None:
    rng = np.random.default_rng(5)
    lens = rng.integers(1, 150, 200)
    keys = np.repeat(np.arange(len(lens)), lens).astype(np.int32)
    values = (rng.standard_normal(len(keys)) * 1e4).astype(np.float32)
    schema = pa.schema([("k", pa.int32()), ("v", pa.float32())])
    got = _agg(schema, "sum", [("+I", int(k), float(v)) for k, v in zip(keys, values, strict=True)])
    start = 0
    for n, g in zip(lens, got, strict=True):
        acc = values[start]
        for x in values[start + 1: start + n]:
            acc = np.float32(acc + x)
        assert np.float32(g) == acc
        start += n


def test_a_hot_key_merges_in_linear_time() -> None:
    """One key updated 200,000 times (one write buffer): no per-record loop for sums or sequence groups."""
    import time

    n = 200_000
    rng = np.random.default_rng(2)
    schema = pa.schema([("k", pa.int32()), ("v", pa.float64()), ("g", pa.int32()), ("s", pa.int64())])
    for options in ({"merge-engine": "aggregation", "fields.v.aggregate-function": "sum",
                     "fields.s.aggregate-function": "sum"},
                    {"merge-engine": "partial-update", "fields.g.sequence-group": "v,s"}):
        ts = build_schema(schema, primary_keys=["k"], options=options)
        data = pa.table({"k": pa.array(np.zeros(n, np.int32)), "v": rng.random(n), "g": rng.integers(0, 100, n,
                                                                                                     dtype=np.int32),
                         "s": rng.integers(0, 10, n), SEQUENCE_NUMBER: pa.array(np.arange(n)),
                         VALUE_KIND: pa.array(np.zeros(n, np.int8))})
        t0 = time.perf_counter()
        out = merge_kv(data, schema=ts, options=CoreOptions.parse(ts.options, has_primary_key=True),
                       drop_retractions=True)
        assert out.num_rows == 1
        assert time.perf_counter() - t0 < 5.0, options


def test_pair_runs_reduce_like_the_general_path() -> None:
    """Runs of exactly two records take a comparison fast path; it must agree with the reduceat path."""
    from table_format.merge.aggregate import _extreme
    from table_format.merge.kernels import MergeColumn, Segments

    rng = np.random.default_rng(11)
    runs = 500
    starts = np.arange(0, 2 * runs, 2, dtype=np.int64)
    values = pa.array(rng.integers(0, 4, 2 * runs).astype(np.float64), mask=rng.random(2 * runs) < 0.3)
    mask = rng.random(2 * runs) < 0.5
    fast = Segments(starts, np.full(runs, 2, dtype=np.int64))
    slow = Segments(starts, np.full(runs, 2, dtype=np.int64))
    slow.__dict__["pairs"] = False
    assert fast.pairs
    np.testing.assert_array_equal(fast.last(mask), slow.last(mask))
    np.testing.assert_array_equal(fast.first(mask), slow.first(mask))
    col = MergeColumn(values, np.arange(2 * runs))
    valid = ~col.nulls
    for largest in (True, False):
        np.testing.assert_array_equal(_extreme(col, fast, valid, largest=largest).idx,
                                      _extreme(col, slow, valid, largest=largest).idx)
