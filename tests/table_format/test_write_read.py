"""Write/read round trips: table kinds, partitions, all types, input kinds, row kinds, upserts, rolling, overwrite,
two-phase commits. Real tables in tmp dirs; results compared with what was written."""

from __future__ import annotations

import datetime as dt
import os
import pickle
from decimal import Decimal
from typing import Any

import polars as pl
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from table_format import CommitKind, FileSystemCatalog, Table, read_split, write_table
from table_format.meta.manifest import FileKind

HSETTINGS = settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)

# ---- helpers ---------------------------------------------------------------------------------------------

_counter = [0]


def new_table(warehouse: str, schema: pa.Schema, **kw: Any) -> Table:
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db", exist_ok=True)
    _counter[0] += 1
    return catalog.create_table(f"db.t{_counter[0]}", schema, **kw)


def rows_of(t: pa.Table | pl.DataFrame, key: str | list[str] = "id") -> list[dict[str, Any]]:
    if isinstance(t, pl.DataFrame):
        t = t.to_arrow()
    keys = [key] if isinstance(key, str) else key
    return sorted(t.to_pylist(), key=lambda r: tuple((r[k] is None, r[k]) for k in keys))


def read_all(table: Table, **kw: Any) -> list[dict[str, Any]]:
    return rows_of(table.scan(**kw).to_arrow())


def data_files(table: Table) -> list[str]:
    out = []
    for dirpath, _, names in os.walk(table.path):
        if "/manifest" in dirpath or "/snapshot" in dirpath or "/schema" in dirpath:
            continue
        out.extend(os.path.join(dirpath, n) for n in names if n.startswith("data-"))
    return sorted(out)


def live_entries(table: Table) -> list[Any]:
    return table.store.manifests.live_files(table.latest_snapshot())


# ---- a schema over all atomic types + list/map/struct ------------------------------------------------------

ALL_TYPES = pa.schema(
    [
        ("id", pa.int64(), False),
        ("p1", pa.string()),
        ("p2", pa.int32()),
        ("b", pa.bool_()),
        ("i8", pa.int8()),
        ("i16", pa.int16()),
        ("i32", pa.int32()),
        ("f32", pa.float32()),
        ("f64", pa.float64()),
        ("s", pa.string()),
        ("bin", pa.binary()),
        ("d", pa.date32()),
        ("dec", pa.decimal128(10, 2)),
        ("dec38", pa.decimal128(38, 6)),
        ("t32", pa.time32("ms")),
        ("t64", pa.time64("us")),
        ("ts_ms", pa.timestamp("ms")),
        ("ts_us", pa.timestamp("us")),
        ("ts_ns", pa.timestamp("ns")),
        ("tz", pa.timestamp("us", tz="UTC")),
        ("l", pa.list_(pa.int32())),
        ("m", pa.map_(pa.string(), pa.int64())),
        ("st", pa.struct([("x", pa.int32()), ("y", pa.string())])),
        ("nested", pa.list_(pa.struct([("a", pa.list_(pa.string())), ("b", pa.map_(pa.int32(), pa.float64()))]))),
    ]
)

_small_text = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=8)
_ts = st.datetimes(min_value=dt.datetime(1900, 1, 1), max_value=dt.datetime(2200, 1, 1))


def _opt(s: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(st.none(), s)


_VALUE_STRATEGIES: dict[str, st.SearchStrategy[Any]] = {
    "b": _opt(st.booleans()),
    "i8": _opt(st.integers(-128, 127)),
    "i16": _opt(st.integers(-(2**15), 2**15 - 1)),
    "i32": _opt(st.integers(-(2**31), 2**31 - 1)),
    "f32": _opt(st.floats(width=32, allow_nan=False)),
    "f64": _opt(st.floats(allow_nan=False)),
    "s": _opt(_small_text),
    "bin": _opt(st.binary(max_size=8)),
    "d": _opt(st.dates(min_value=dt.date(1, 1, 1), max_value=dt.date(9999, 12, 31))),
    "dec": _opt(st.decimals(min_value=-(10**7), max_value=10**7, places=2, allow_nan=False, allow_infinity=False)),
    "dec38": _opt(
        st.decimals(min_value=-(10**31), max_value=10**31, places=6, allow_nan=False, allow_infinity=False)
    ),
    "t32": _opt(st.times().map(lambda t: t.replace(microsecond=t.microsecond // 1000 * 1000))),
    "t64": _opt(st.times()),
    "ts_ms": _opt(_ts.map(lambda t: t.replace(microsecond=t.microsecond // 1000 * 1000))),
    "ts_us": _opt(_ts),
    "ts_ns": _opt(
        st.datetimes(min_value=dt.datetime(1700, 1, 1), max_value=dt.datetime(2200, 1, 1))
    ),
    "tz": _opt(_ts.map(lambda t: t.replace(tzinfo=dt.timezone.utc))),
    "l": _opt(st.lists(_opt(st.integers(-(2**31), 2**31 - 1)), max_size=3)),
    "m": _opt(
        st.dictionaries(_small_text, _opt(st.integers(-(2**63), 2**63 - 1)), max_size=3).map(lambda d: list(d.items()))
    ),
    "st": _opt(st.fixed_dictionaries({"x": _opt(st.integers(-(2**31), 2**31 - 1)), "y": _opt(_small_text)})),
    "nested": _opt(
        st.lists(
            _opt(
                st.fixed_dictionaries(
                    {
                        "a": _opt(st.lists(_opt(_small_text), max_size=2)),
                        "b": _opt(
                            st.dictionaries(st.integers(-5, 5), _opt(st.floats(allow_nan=False)), max_size=2).map(
                                lambda d: list(d.items())
                            )
                        ),
                    }
                )
            ),
            max_size=2,
        )
    ),
}


def _row_strategy(partition_nulls: bool) -> st.SearchStrategy[dict[str, Any]]:
    part = {
        "p1": (_opt(st.sampled_from(["a", "b", "x y"])) if partition_nulls else st.sampled_from(["a", "b", "x y"])),
        "p2": (_opt(st.integers(0, 2)) if partition_nulls else st.integers(0, 2)),
    }
    return st.fixed_dictionaries({**part, **_VALUE_STRATEGIES})


def _rows_strategy(partition_nulls: bool) -> st.SearchStrategy[list[dict[str, Any]]]:
    return st.lists(_row_strategy(partition_nulls), min_size=1, max_size=25).map(
        lambda rows: [{"id": i, **r} for i, r in enumerate(rows)]
    )


TABLE_KINDS = {
    "append-unaware": dict(options={"bucket": "-1"}),
    "append-fixed": dict(options={"bucket": "3", "bucket-key": "id"}),
    "pk-fixed": dict(options={"bucket": "2"}, primary_keys=["id"]),
}
PARTITIONINGS = {"unpartitioned": [], "by-p1": ["p1"], "by-p1-p2": ["p1", "p2"]}


@pytest.mark.parametrize("kind", list(TABLE_KINDS))
@pytest.mark.parametrize("partitioning", list(PARTITIONINGS))
def test_all_types_round_trip(warehouse: str, kind: str, partitioning: str) -> None:
    part_keys = PARTITIONINGS[partitioning]
    spec = dict(TABLE_KINDS[kind])
    pk = list(spec.pop("primary_keys", []))
    if pk:
        pk = part_keys + pk  # Paimon: the primary key contains the partition keys
    partition_nulls = not pk

    @HSETTINGS
    @given(rows=_rows_strategy(partition_nulls))
    def check(rows: list[dict[str, Any]]) -> None:
        table = new_table(warehouse, ALL_TYPES, partition_keys=part_keys, primary_keys=pk, **spec)
        data = pa.Table.from_pylist(rows, schema=ALL_TYPES)
        sid = write_table(table, data)
        assert sid == 1
        out = table.scan().to_arrow()
        assert out.schema.names == ALL_TYPES.names
        assert [f.type for f in out.schema] == [f.type for f in ALL_TYPES]
        assert rows_of(out) == rows_of(data)
        # a second load of the table (fresh objects) reads the same
        again = FileSystemCatalog(warehouse).load_table(table.identifier)
        assert rows_of(again.scan().to_arrow()) == rows_of(data)
        # partition directories are as expected
        if part_keys:
            assert all(e.partition for e in live_entries(table))
            top = {n for n in os.listdir(table.path) if n.startswith(part_keys[0] + "=")}
            assert top, os.listdir(table.path)

    check()


@pytest.mark.parametrize("kind", list(TABLE_KINDS))
def test_all_null_values_round_trip(warehouse: str, kind: str) -> None:
    spec = dict(TABLE_KINDS[kind])
    table = new_table(warehouse, ALL_TYPES, **spec)
    rows = [dict.fromkeys(ALL_TYPES.names) | {"id": i} for i in range(5)]
    data = pa.Table.from_pylist(rows, schema=ALL_TYPES)
    write_table(table, data)
    assert rows_of(table.scan().to_arrow()) == rows


def test_partition_null_values_use_default_partition(warehouse: str) -> None:
    schema = pa.schema([("id", pa.int64()), ("dt", pa.string())])
    table = new_table(warehouse, schema, partition_keys=["dt"])
    write_table(table, pa.table({"id": [1, 2, 3], "dt": ["a", None, None]}))
    assert sorted(os.listdir(table.path)) == ["dt=__DEFAULT_PARTITION__", "dt=a", "manifest", "schema", "snapshot"]
    assert read_all(table) == [{"id": 1, "dt": "a"}, {"id": 2, "dt": None}, {"id": 3, "dt": None}]
    assert read_all(table, filter=[("dt", "is null")]) == [{"id": 2, "dt": None}, {"id": 3, "dt": None}]


@pytest.mark.parametrize("kind", list(TABLE_KINDS))
def test_several_appends_accumulate(warehouse: str, kind: str) -> None:
    schema = pa.schema([("id", pa.int64(), False), ("v", pa.string())])
    table = new_table(warehouse, schema, **TABLE_KINDS[kind])
    expected = []
    for i in range(4):
        batch = [{"id": i * 10 + j, "v": f"{i}-{j}"} for j in range(5)]
        expected += batch
        assert write_table(table, pa.Table.from_pylist(batch, schema=schema)) == i + 1
    assert read_all(table) == rows_of(pa.Table.from_pylist(expected, schema=schema))
    snaps = table.snapshots()
    assert [s.id for s in snaps] == [1, 2, 3, 4]
    assert all(s.commit_kind == CommitKind.APPEND for s in snaps)
    assert snaps[-1].total_record_count == 20
    assert snaps[-1].delta_record_count == 5


def test_append_table_keeps_duplicates(warehouse: str) -> None:
    schema = pa.schema([("id", pa.int64()), ("v", pa.int32())])
    table = new_table(warehouse, schema)
    write_table(table, pa.table({"id": [1, 1], "v": [1, 1]}, schema=schema))
    write_table(table, pa.table({"id": [1], "v": [1]}, schema=schema))
    assert table.scan().to_arrow().num_rows == 3


def test_fixed_bucket_append_table_distributes_by_bucket_key(warehouse: str) -> None:
    schema = pa.schema([("id", pa.int64()), ("v", pa.int32())])
    table = new_table(warehouse, schema, options={"bucket": "4", "bucket-key": "id"})
    write_table(table, pa.table({"id": list(range(200)), "v": list(range(200))}, schema=schema))
    entries = live_entries(table)
    assert {e.bucket for e in entries} == {0, 1, 2, 3}
    assert all(e.total_buckets == 4 for e in entries)
    assert sorted(os.listdir(table.path)) == ["bucket-0", "bucket-1", "bucket-2", "bucket-3", "manifest", "schema",
                                             "snapshot"]
    # each id lands in exactly one bucket, and a second write puts the same ids in the same buckets
    by_bucket = {s.bucket: set(read_split(table, s).column("id").to_pylist()) for s in table.scan().plan()}
    write_table(table, pa.table({"id": list(range(200)), "v": list(range(200))}, schema=schema))
    by_bucket2 = {s.bucket: set(read_split(table, s).column("id").to_pylist()) for s in table.scan().plan()}
    assert by_bucket == by_bucket2
    assert sum(len(v) for v in by_bucket.values()) == 200


# ---- input kinds -----------------------------------------------------------------------------------------

SIMPLE = pa.schema([("id", pa.int64(), False), ("name", pa.string()), ("score", pa.float64()), ("day", pa.date32())])


def _simple_rows(n: int, start: int = 0) -> pa.Table:
    return pa.table(
        {
            "id": pa.array(range(start, start + n), pa.int64()),
            "name": [f"n{i}" if i % 3 else None for i in range(start, start + n)],
            "score": [i / 2 for i in range(start, start + n)],
            "day": [dt.date(2024, 1, 1 + i % 28) for i in range(start, start + n)],
        },
        schema=SIMPLE,
    )


@pytest.mark.parametrize("kind", list(TABLE_KINDS))
def test_polars_input(warehouse: str, kind: str) -> None:
    table = new_table(warehouse, SIMPLE, **TABLE_KINDS[kind])
    expected = _simple_rows(30)
    frame = pl.from_arrow(expected)
    assert isinstance(frame, pl.DataFrame)
    assert write_table(table, frame) == 1
    assert read_all(table) == rows_of(expected)
    out = table.scan().to_polars()
    assert isinstance(out, pl.DataFrame)
    assert out.sort("id").to_dicts() == rows_of(expected)


def test_polars_input_with_other_column_order_and_types(warehouse: str) -> None:
    table = new_table(warehouse, SIMPLE)
    frame = pl.DataFrame(
        {
            "day": [dt.date(2024, 5, 1)],
            "score": pl.Series([1], dtype=pl.Int32),  # int32 -> double (exact)
            "name": ["x"],
            "id": pl.Series([5], dtype=pl.Int32),  # int32 -> int64
        }
    )
    write_table(table, frame)
    assert read_all(table) == [{"id": 5, "name": "x", "score": 1.0, "day": dt.date(2024, 5, 1)}]


@pytest.mark.parametrize("kind", list(TABLE_KINDS))
def test_record_batch_reader_input(warehouse: str, kind: str) -> None:
    table = new_table(warehouse, SIMPLE, **TABLE_KINDS[kind])
    batches = [_simple_rows(10, start=i * 10).to_batches()[0] for i in range(5)]
    reader = pa.RecordBatchReader.from_batches(SIMPLE, iter(batches))
    assert write_table(table, reader) == 1
    assert len(table.snapshots()) == 1
    assert read_all(table) == rows_of(_simple_rows(50))


def test_record_batch_input(warehouse: str) -> None:
    table = new_table(warehouse, SIMPLE)
    write_table(table, _simple_rows(3).to_batches()[0])
    assert read_all(table) == rows_of(_simple_rows(3))


def test_empty_input_writes_nothing(warehouse: str) -> None:
    table = new_table(warehouse, SIMPLE, primary_keys=["id"], options={"bucket": "1"})
    assert write_table(table, _simple_rows(0)) is None
    assert write_table(table, pl.from_arrow(_simple_rows(0))) is None
    assert write_table(table, pa.RecordBatchReader.from_batches(SIMPLE, iter([]))) is None
    assert table.snapshots() == []
    assert data_files(table) == []
    assert table.scan().to_arrow().num_rows == 0
    assert table.scan().to_arrow().schema.names == SIMPLE.names


# ---- primary-key semantics ---------------------------------------------------------------------------------

KV = pa.schema([("id", pa.int64(), False), ("v", pa.string())])


def _kv(ids: list[int], vs: list[str | None], kinds: list[Any] | None = None, kind_type: pa.DataType | None = None
        ) -> pa.Table:
    cols: dict[str, Any] = {"id": pa.array(ids, pa.int64()), "v": pa.array(vs, pa.string())}
    if kinds is not None:
        cols["_row_kind"] = pa.array(kinds, kind_type)
    return pa.table(cols)


@pytest.fixture
def pk_table(warehouse: str) -> Table:
    return new_table(warehouse, KV, primary_keys=["id"], options={"bucket": "2"})


def test_dedupe_within_one_write_latest_wins(pk_table: Table) -> None:
    write_table(pk_table, _kv([1, 2, 1, 3, 1, 2], ["a", "b", "c", "d", "e", "f"]))
    assert read_all(pk_table) == [{"id": 1, "v": "e"}, {"id": 2, "v": "f"}, {"id": 3, "v": "d"}]
    # the merge happened in the writer: one row per key in the files
    assert sum(e.file.row_count for e in live_entries(pk_table)) == 3


def test_dedupe_across_writes_latest_wins(pk_table: Table) -> None:
    write_table(pk_table, _kv([1, 2, 3], ["a", "b", "c"]))
    write_table(pk_table, _kv([2, 4], ["B", "D"]))
    write_table(pk_table, _kv([2], ["BB"]))
    assert read_all(pk_table) == [
        {"id": 1, "v": "a"}, {"id": 2, "v": "BB"}, {"id": 3, "v": "c"}, {"id": 4, "v": "D"}
    ]
    # older snapshots still show their own view
    assert read_all(pk_table, snapshot_id=1) == [{"id": 1, "v": "a"}, {"id": 2, "v": "b"}, {"id": 3, "v": "c"}]
    assert read_all(pk_table, snapshot_id=2) == [
        {"id": 1, "v": "a"}, {"id": 2, "v": "B"}, {"id": 3, "v": "c"}, {"id": 4, "v": "D"}
    ]


@pytest.mark.parametrize(
    "kinds,kind_type",
    [(["+I", "-D", "+U"], pa.string()), ([0, 3, 2], pa.int8()), (["+I", "-D", "+U"], pa.large_string()),
     ([0, 3, 2], pa.int32())],
)
def test_row_kinds_as_strings_and_ints(pk_table: Table, kinds: list[Any], kind_type: pa.DataType) -> None:
    write_table(pk_table, _kv([1, 2, 3], ["a", "b", "c"]))
    write_table(pk_table, _kv([1, 2, 3], ["A", None, "C"], kinds, kind_type))
    assert read_all(pk_table) == [{"id": 1, "v": "A"}, {"id": 3, "v": "C"}]


def test_delete_then_reinsert(pk_table: Table) -> None:
    write_table(pk_table, _kv([1, 2], ["a", "b"]))
    write_table(pk_table, _kv([1], [None], ["-D"], pa.string()))
    assert read_all(pk_table) == [{"id": 2, "v": "b"}]
    write_table(pk_table, _kv([1], ["again"], ["+I"], pa.string()))
    assert read_all(pk_table) == [{"id": 1, "v": "again"}, {"id": 2, "v": "b"}]


def test_delete_and_reinsert_within_one_write(pk_table: Table) -> None:
    write_table(pk_table, _kv([1, 2], ["a", "b"]))
    write_table(pk_table, _kv([1, 1, 2, 2], [None, "new", "x", None], ["-D", "+I", "+I", "-D"], pa.string()))
    assert read_all(pk_table) == [{"id": 1, "v": "new"}]


def test_delete_of_missing_key_is_harmless(pk_table: Table) -> None:
    write_table(pk_table, _kv([1], ["a"]))
    write_table(pk_table, _kv([99], [None], ["-D"], pa.string()))
    assert read_all(pk_table) == [{"id": 1, "v": "a"}]


def test_update_before_after_pairs(pk_table: Table) -> None:
    write_table(pk_table, _kv([1, 2], ["a", "b"]))
    write_table(pk_table, _kv([1, 1], ["a", "a2"], ["-U", "+U"], pa.string()))
    assert read_all(pk_table) == [{"id": 1, "v": "a2"}, {"id": 2, "v": "b"}]
    write_table(pk_table, _kv([2], ["b"], ["-U"], pa.string()))  # a lone -U retracts
    assert read_all(pk_table) == [{"id": 1, "v": "a2"}]


def test_delete_all_leaves_empty_result(pk_table: Table) -> None:
    write_table(pk_table, _kv([1, 2, 3], ["a", "b", "c"]))
    write_table(pk_table, _kv([1, 2, 3], [None] * 3, [3, 3, 3], pa.int8()))
    assert read_all(pk_table) == []
    assert pk_table.latest_snapshot().id == 2


def test_polars_row_kind_column(pk_table: Table) -> None:
    write_table(pk_table, _kv([1, 2], ["a", "b"]))
    frame = pl.DataFrame({"id": [1, 2], "v": ["x", None], "_row_kind": ["+U", "-D"]})
    write_table(pk_table, frame)
    frame2 = pl.DataFrame({"id": [3], "v": ["c"], "_row_kind": pl.Series([0], dtype=pl.Int8)})
    write_table(pk_table, frame2)
    assert read_all(pk_table) == [{"id": 1, "v": "x"}, {"id": 3, "v": "c"}]


def test_append_table_accepts_insert_row_kinds(warehouse: str) -> None:
    table = new_table(warehouse, KV)
    write_table(table, _kv([1, 2], ["a", "b"], ["+I", "+I"], pa.string()))
    write_table(table, _kv([3], ["c"], [0], pa.int8()))
    assert read_all(table) == [{"id": 1, "v": "a"}, {"id": 2, "v": "b"}, {"id": 3, "v": "c"}]
    assert "_row_kind" not in table.scan().to_arrow().column_names


_ops = st.lists(
    st.lists(
        st.tuples(st.integers(0, 12), st.sampled_from(["+I", "+U", "-U", "-D"]), _opt(st.text(max_size=3))),
        min_size=1,
        max_size=20,
    ),
    min_size=1,
    max_size=5,
)


@pytest.mark.parametrize("partitioned", [False, True])
def test_upsert_matches_dict_model(warehouse: str, partitioned: bool) -> None:
    """Any sequence of batches of +I/+U/-U/-D rows reads like a dict where the last record of a key wins."""
    schema = pa.schema([("p", pa.int32(), False), ("id", pa.int64(), False), ("v", pa.string())])

    @HSETTINGS
    @given(batches=_ops)
    def check(batches: list[list[tuple[int, str, str | None]]]) -> None:
        table = new_table(
            warehouse, schema, primary_keys=["p", "id"], partition_keys=["p"] if partitioned else [],
            options={"bucket": "3"},
        )
        model: dict[tuple[int, int], str | None] = {}
        for n, batch in enumerate(batches):
            rows = [{"p": k % 2, "id": k, "v": v, "_row_kind": kind} for k, kind, v in batch]
            write_table(table, pa.Table.from_pylist(rows, schema=schema.append(pa.field("_row_kind", pa.string()))))
            for r in rows:
                key = (r["p"], r["id"])
                if r["_row_kind"] in ("+I", "+U"):
                    model[key] = r["v"]
                else:
                    model.pop(key, None)
            got = sorted((r["p"], r["id"], r["v"]) for r in table.scan().to_arrow().to_pylist())
            assert got == sorted((p, i, v) for (p, i), v in model.items()), f"after batch {n}"

    check()


# ---- sequence numbers ------------------------------------------------------------------------------------


def test_sequence_numbers_continue_across_commits(warehouse: str) -> None:
    table = new_table(warehouse, KV, primary_keys=["id"], options={"bucket": "1"})
    write_table(table, _kv([1, 2, 3], ["a", "b", "c"]))
    first = live_entries(table)
    assert len(first) == 1
    assert (first[0].file.min_sequence_number, first[0].file.max_sequence_number) == (0, 2)
    write_table(table, _kv([3, 4], ["x", "y"]))
    write_table(table, _kv([1, 1, 1], ["p", "q", "r"]))  # merged to one row, still consumes 3 numbers
    metas = sorted((e.file for e in live_entries(table)), key=lambda f: f.min_sequence_number)
    assert [(f.min_sequence_number, f.max_sequence_number) for f in metas] == [(0, 2), (3, 4), (7, 7)]
    # a fresh Table object (another process) continues from the committed maximum
    again = FileSystemCatalog(warehouse).load_table(table.identifier)
    write_table(again, _kv([9], ["z"]))
    latest = max((e.file for e in live_entries(again)), key=lambda f: f.max_sequence_number)
    assert (latest.min_sequence_number, latest.max_sequence_number) == (8, 8)
    assert read_all(again) == [{"id": 1, "v": "r"}, {"id": 2, "v": "b"}, {"id": 3, "v": "x"}, {"id": 4, "v": "y"},
                               {"id": 9, "v": "z"}]


def test_sequence_numbers_are_per_bucket(warehouse: str) -> None:
    table = new_table(warehouse, KV, primary_keys=["id"], options={"bucket": "4"})
    for _ in range(3):
        write_table(table, _kv(list(range(40)), ["v"] * 40))
    by_bucket: dict[int, list[tuple[int, int]]] = {}
    for e in live_entries(table):
        by_bucket.setdefault(e.bucket, []).append((e.file.min_sequence_number, e.file.max_sequence_number))
    assert len(by_bucket) == 4
    for ranges in by_bucket.values():
        ranges.sort()
        n = ranges[0][1] + 1
        assert ranges == [(0, n - 1), (n, 2 * n - 1), (2 * n, 3 * n - 1)]
    assert len(read_all(table)) == 40


def test_sequence_numbers_in_data_files_follow_input_order(warehouse: str) -> None:
    import pyarrow.parquet as pq

    table = new_table(warehouse, KV, primary_keys=["id"], options={"bucket": "1"})
    write_table(table, _kv([5, 3, 9, 1], ["a", "b", "c", "d"]))
    (path,) = data_files(table)
    raw = pq.read_table(path)
    assert raw.column_names[:3] == ["_KEY_id", "_SEQUENCE_NUMBER", "_VALUE_KIND"]
    assert raw.column("_KEY_id").to_pylist() == [1, 3, 5, 9]  # sorted by key
    assert raw.column("_SEQUENCE_NUMBER").to_pylist() == [3, 1, 0, 2]  # input order
    assert raw.column("_VALUE_KIND").to_pylist() == [0, 0, 0, 0]


def test_sequence_field_orders_records(warehouse: str) -> None:
    schema = pa.schema([("id", pa.int64(), False), ("ts", pa.int64()), ("v", pa.string())])
    table = new_table(warehouse, schema, primary_keys=["id"], options={"bucket": "1", "sequence.field": "ts"})
    write_table(table, pa.table({"id": [1, 2], "ts": [10, 10], "v": ["new", "b"]}))
    write_table(table, pa.table({"id": [1, 2], "ts": [5, 11], "v": ["old", "b2"]}))
    assert read_all(table) == [{"id": 1, "ts": 10, "v": "new"}, {"id": 2, "ts": 11, "v": "b2"}]
    # within one write too
    write_table(table, pa.table({"id": [3, 3], "ts": [9, 1], "v": ["keep", "drop"]}))
    assert read_all(table, filter=[("id", "=", 3)]) == [{"id": 3, "ts": 9, "v": "keep"}]


# ---- rolling files ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", list(TABLE_KINDS))
def test_rolling_files_at_small_target_size(warehouse: str, kind: str) -> None:
    spec = dict(TABLE_KINDS[kind])
    spec["options"] = dict(spec["options"], **{"target-file-size": "64 kb"})
    table = new_table(warehouse, SIMPLE, **spec)
    import random

    rnd = random.Random(7)
    n = 60_000
    data = pa.table(
        {
            "id": pa.array(rnd.sample(range(10 * n), n), pa.int64()),
            "name": [f"name-{rnd.getrandbits(64):x}" for _ in range(n)],
            "score": [rnd.random() for _ in range(n)],
            "day": [dt.date(2024, 1, 1 + i % 28) for i in range(n)],
        },
        schema=SIMPLE,
    )
    write_table(table, data)
    entries = live_entries(table)
    buckets = {e.bucket for e in entries}
    assert len(entries) >= 3 * len(buckets), [e.file.file_size for e in entries]
    assert len(data_files(table)) == len(entries)
    for e in entries:
        assert e.file.file_size < 4 * 64 * 1024
    assert sum(e.file.row_count for e in entries) == n
    assert read_all(table) == rows_of(data)
    if table.primary_keys:
        # files of a bucket hold disjoint, ordered key ranges and seq numbers
        from table_format.row.binary_row import decode_row

        for b in buckets:
            files = sorted((e.file for e in entries if e.bucket == b), key=lambda f: f.min_sequence_number)
            keys = sorted((decode_row(f.min_key, table.store.key_types)[0],
                           decode_row(f.max_key, table.store.key_types)[0]) for f in files)
            assert all(a[1] < b_[0] for a, b_ in zip(keys, keys[1:], strict=False))
        splits = table.scan().plan()
        assert all(s.raw_convertible for s in splits)
        # an upsert on top of rolled files still merges right
        upd = data.slice(0, 1000).set_column(1, "name", pa.array(["updated"] * 1000))
        write_table(table, upd)
        merged = {r["id"]: r["name"] for r in table.scan().to_arrow().to_pylist()}
        assert len(merged) == n
        assert all(merged[i] == "updated" for i in upd.column("id").to_pylist())


# ---- overwrite -------------------------------------------------------------------------------------------

PART = pa.schema([("dt", pa.string(), False), ("id", pa.int64(), False), ("v", pa.int32())])


def _part_rows(dts: list[str], ids: list[int], v: int) -> pa.Table:
    return pa.table({"dt": dts, "id": pa.array(ids, pa.int64()), "v": pa.array([v] * len(ids), pa.int32())},
                    schema=PART)


@pytest.mark.parametrize("pk", [False, True])
def test_overwrite_whole_table(warehouse: str, pk: bool) -> None:
    kw: dict[str, Any] = dict(partition_keys=["dt"])
    if pk:
        kw.update(primary_keys=["dt", "id"], options={"bucket": "2"})
    table = new_table(warehouse, PART, **kw)
    s1 = write_table(table, _part_rows(["a", "a", "b"], [1, 2, 3], 0))
    s2 = write_table(table, _part_rows(["c"], [9], 1), mode="overwrite")
    assert (s1, s2) == (1, 2)
    assert read_all(table) == [{"dt": "c", "id": 9, "v": 1}]
    assert table.latest_snapshot().commit_kind == CommitKind.OVERWRITE
    assert table.latest_snapshot().total_record_count == 1
    # the old snapshot is still readable
    assert len(read_all(table, snapshot_id=1)) == 3
    # new writes after an overwrite append to it (and sequence numbers restart per bucket on an overwrite)
    s3 = write_table(table, _part_rows(["c"], [10], 2))
    assert s3 == 3
    assert read_all(table) == [{"dt": "c", "id": 9, "v": 1}, {"dt": "c", "id": 10, "v": 2}]


@pytest.mark.parametrize("pk", [False, True])
def test_overwrite_partitions(warehouse: str, pk: bool) -> None:
    kw: dict[str, Any] = dict(partition_keys=["dt"])
    if pk:
        kw.update(primary_keys=["dt", "id"], options={"bucket": "2"})
    table = new_table(warehouse, PART, **kw)
    write_table(table, _part_rows(["a", "b", "c"], [1, 2, 3], 0))
    sid = write_table(table, _part_rows(["b", "b"], [20, 21], 1), mode="overwrite", overwrite_partitions=[{"dt": "b"}])
    assert sid == 2
    assert read_all(table) == [
        {"dt": "a", "id": 1, "v": 0}, {"dt": "c", "id": 3, "v": 0}, {"dt": "b", "id": 20, "v": 1},
        {"dt": "b", "id": 21, "v": 1},
    ]
    # several partitions, one of them new and one of them left empty
    sid = write_table(table, _part_rows(["d"], [4], 2), mode="overwrite",
                      overwrite_partitions=[{"dt": "a"}, {"dt": "d"}])
    assert sid == 3
    assert sorted((r["dt"], r["id"]) for r in read_all(table)) == [("b", 20), ("b", 21), ("c", 3), ("d", 4)]


def test_overwrite_partitions_with_two_partition_keys(warehouse: str) -> None:
    schema = pa.schema([("y", pa.int32()), ("m", pa.int32()), ("id", pa.int64())])
    table = new_table(warehouse, schema, partition_keys=["y", "m"])
    write_table(table, pa.table({"y": [2023, 2024, 2024, 2024], "m": [1, 1, 2, 3], "id": [1, 2, 3, 4]}, schema=schema))
    # a partial spec covers every partition with that prefix
    write_table(table, pa.table({"y": [2024], "m": [5], "id": [5]}, schema=schema), mode="overwrite",
                overwrite_partitions=[{"y": 2024}])
    assert sorted(r["id"] for r in read_all(table)) == [1, 5]
    # a value given as a string is converted to the column type
    write_table(table, pa.table({"y": [2023], "m": [1], "id": [6]}, schema=schema), mode="overwrite",
                overwrite_partitions=[{"y": "2023", "m": 1}])
    assert sorted(r["id"] for r in read_all(table)) == [5, 6]


def test_overwrite_with_empty_table(warehouse: str) -> None:
    table = new_table(warehouse, PART, partition_keys=["dt"])
    write_table(table, _part_rows(["a", "b"], [1, 2], 0))
    sid = write_table(table, PART.empty_table(), mode="overwrite", overwrite_partitions=[{"dt": "a"}])
    assert sid == 2
    assert read_all(table) == [{"dt": "b", "id": 2, "v": 0}]
    sid = write_table(table, PART.empty_table(), mode="overwrite")
    assert sid == 3
    assert read_all(table) == []
    assert table.latest_snapshot().total_record_count == 0
    # overwriting an already empty table with nothing creates no snapshot
    assert write_table(table, PART.empty_table(), mode="overwrite") is None
    assert len(table.snapshots()) == 3
    # and partitions that hold nothing
    write_table(table, _part_rows(["a"], [1], 0))
    assert write_table(table, PART.empty_table(), mode="overwrite", overwrite_partitions=[{"dt": "zzz"}]) is None
    assert len(table.snapshots()) == 4


def test_overwrite_on_unpartitioned_pk_table(warehouse: str) -> None:
    table = new_table(warehouse, KV, primary_keys=["id"], options={"bucket": "3"})
    write_table(table, _kv(list(range(30)), ["a"] * 30))
    write_table(table, _kv([100, 101], ["x", "y"]), mode="overwrite")
    assert read_all(table) == [{"id": 100, "v": "x"}, {"id": 101, "v": "y"}]
    assert {e.file.min_sequence_number for e in live_entries(table)} == {0}


def test_overwrite_records_delete_entries(warehouse: str) -> None:
    table = new_table(warehouse, PART, partition_keys=["dt"])
    write_table(table, _part_rows(["a", "b"], [1, 2], 0))
    write_table(table, _part_rows(["a"], [3], 0), mode="overwrite", overwrite_partitions=[{"dt": "a"}])
    snap = table.latest_snapshot()
    manifests = table.store.manifests
    delta = manifests.read_entries(manifests.read_manifest_list(snap.delta_manifest_list))
    assert sorted(e.kind for e in delta) == [FileKind.ADD, FileKind.DELETE]
    assert snap.delta_record_count == 0


# ---- write_table return values, modes -----------------------------------------------------------------------


def test_write_table_returns_consecutive_snapshot_ids(warehouse: str) -> None:
    table = new_table(warehouse, KV, primary_keys=["id"], options={"bucket": "1", "write-only": "true"})
    ids = [write_table(table, _kv([i], ["v"])) for i in range(5)]
    assert ids == [1, 2, 3, 4, 5]
    assert table.latest_snapshot().id == 5
    assert write_table(table, _kv([], [])) is None
    assert table.latest_snapshot().id == 5


# ---- two-phase writes ------------------------------------------------------------------------------------


@pytest.mark.parametrize("pk", [False, True])
def test_two_phase_commit_of_pickled_messages(warehouse: str, pk: bool) -> None:
    kw: dict[str, Any] = dict(partition_keys=["dt"])
    if pk:
        kw.update(primary_keys=["dt", "id"], options={"bucket": "2"})
    table = new_table(warehouse, PART, **kw)
    write_table(table, _part_rows(["a"], [0], 0))
    # each "executor" opens the table itself from a pickled Table, writes, and returns pickled messages
    payloads = []
    expected = [{"dt": "a", "id": 0, "v": 0}]
    for w in range(3):
        remote = pickle.loads(pickle.dumps(table))
        writer = remote.new_write()
        for part in ("a", "b"):
            rows = _part_rows([part] * 4, [w * 100 + i + (0 if part == "a" else 50) for i in range(1, 5)], w)
            writer.write(rows)
            expected += rows.to_pylist()
        payloads.append(pickle.dumps(writer.prepare_commit()))
    messages = [m for p in payloads for m in pickle.loads(p)]
    assert all(m.new_files for m in messages)
    assert table.latest_snapshot().id == 1
    sid = table.commit(messages)
    assert sid == 2
    assert len(table.snapshots()) == 2
    assert rows_of(table.scan().to_arrow(), ["dt", "id"]) == rows_of(pa.Table.from_pylist(expected, PART),
                                                                     ["dt", "id"])
    assert table.latest_snapshot().delta_record_count == 24


def test_two_phase_empty_messages(warehouse: str) -> None:
    table = new_table(warehouse, KV)
    writer = table.new_write()
    assert writer.prepare_commit() == []
    assert table.commit([]) is None
    assert table.snapshots() == []


def test_two_phase_several_prepare_commits(warehouse: str) -> None:
    table = new_table(warehouse, KV, primary_keys=["id"], options={"bucket": "1"})
    writer = table.new_write()
    writer.write(_kv([1, 2], ["a", "b"]))
    assert table.commit(writer.prepare_commit()) == 1
    writer.write(_kv([2, 3], ["B", "c"]))
    assert table.commit(writer.prepare_commit()) == 2
    assert read_all(table) == [{"id": 1, "v": "a"}, {"id": 2, "v": "B"}, {"id": 3, "v": "c"}]
    seqs = sorted((e.file.min_sequence_number, e.file.max_sequence_number) for e in live_entries(table))
    assert seqs == [(0, 1), (2, 3)]


def test_two_phase_abort_removes_files(warehouse: str) -> None:
    table = new_table(warehouse, KV)
    writer = table.new_write()
    writer.write(_kv([1, 2], ["a", "b"]))
    writer.prepare_commit()
    assert data_files(table)
    writer.abort()
    assert data_files(table) == []
    assert table.snapshots() == []


def test_decimals_and_timestamps_keep_precision(warehouse: str) -> None:
    schema = pa.schema([("id", pa.int64(), False), ("d", pa.decimal128(38, 18)), ("ts", pa.timestamp("ns"))])
    table = new_table(warehouse, schema, primary_keys=["id"], options={"bucket": "1"})
    rows = [
        {"id": 1, "d": Decimal("12345678901234567890.123456789012345678"), "ts": dt.datetime(2262, 4, 11)},
        {"id": 2, "d": Decimal("-0.000000000000000001"), "ts": dt.datetime(1677, 9, 22)},
    ]
    write_table(table, pa.Table.from_pylist(rows, schema=schema))
    assert read_all(table) == rows


def test_automatic_compaction_after_the_trigger(warehouse: str) -> None:
    """Without write-only, the write that brings a bucket to num-sorted-run.compaction-trigger runs also
    commits a COMPACT snapshot (like Java's writer), and the merged view is unchanged by it."""
    table = new_table(warehouse, KV, primary_keys=["id"], options={"bucket": "1"})
    for i in range(5):
        write_table(table, _kv([i, 100], [f"v{i}", f"last{i}"]))
    kinds = [s.commit_kind.value for s in table.snapshots()]
    assert kinds == ["APPEND"] * 5 + ["COMPACT"]
    files = table.system_table("files").to_pylist()
    assert len(files) == 1 and files[0]["level"] == 5
    got = sorted(table.scan().to_arrow().to_pylist(), key=lambda r: r["id"])
    assert [r["id"] for r in got] == [0, 1, 2, 3, 4, 100]
    assert got[-1]["v"] == "last4"


def test_dynamic_partition_overwrite_option_replaces_only_written_partitions(warehouse: str) -> None:
    schema = pa.schema([("dt", pa.string()), ("id", pa.int64())])
    cat = FileSystemCatalog(warehouse)
    cat.create_database("db", exist_ok=True)
    t = cat.create_table("db.dyn", schema, partition_keys=["dt"], options={"dynamic-partition-overwrite": "true"})
    write_table(t, pa.table({"dt": ["a", "b"], "id": [1, 2]}, schema=schema))
    write_table(t, pa.table({"dt": ["b"], "id": [3]}, schema=schema), mode="overwrite")
    assert sorted((r["dt"], r["id"]) for r in t.scan().to_arrow().to_pylist()) == [("a", 1), ("b", 3)]
    plain = cat.create_table("db.plain", schema, partition_keys=["dt"])
    write_table(plain, pa.table({"dt": ["a", "b"], "id": [1, 2]}, schema=schema))
    write_table(plain, pa.table({"dt": ["b"], "id": [3]}, schema=schema), mode="overwrite")
    assert [(r["dt"], r["id"]) for r in plain.scan().to_arrow().to_pylist()] == [("b", 3)]
