"""Scans: DNF filters against a plain Python filter of the data, partition / bucket / min-max pruning seen in
plan(), projection, limit, time travel, output kinds, read_split on pickled splits, system tables."""

from __future__ import annotations

import pickle
from collections.abc import Iterator
from typing import Any

import polars as pl
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from table_format import (
    DataSplit,
    FileSystemCatalog,
    SchemaError,
    SnapshotNotFoundError,
    Table,
    TableFormatError,
    read_split,
    write_table,
)

SCHEMA = pa.schema(
    [
        ("dt", pa.string(), False),
        ("id", pa.int64(), False),
        ("v", pa.int32()),
        ("s", pa.string()),
        ("f", pa.float64()),
    ]
)
DTS = ["2024-01-01", "2024-01-02", "2024-01-03"]

_n = [0]


def new_table(warehouse: str, schema: pa.Schema = SCHEMA, **kw: Any) -> Table:
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db", exist_ok=True)
    _n[0] += 1
    return catalog.create_table(f"db.s{_n[0]}", schema, **kw)


def key(r: dict[str, Any]) -> tuple[Any, ...]:
    return tuple((r[c] is None, r[c]) for c in ("dt", "id") if c in r) + tuple(
        (r[c] is None, r[c]) for c in sorted(r) if c not in ("dt", "id")
    )


def srt(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(rows, key=key)


def gen_rows(start: int, n: int, dt: str) -> list[dict[str, Any]]:
    return [
        {
            "dt": dt,
            "id": i,
            "v": None if i % 7 == 0 else (i * 37) % 101 - 50,
            "s": None if i % 5 == 0 else f"s{i % 13:02d}",
            "f": None if i % 11 == 0 else i / 4,
        }
        for i in range(start, start + n)
    ]


KINDS = {
    "append": dict(partition_keys=["dt"]),
    "append-fixed": dict(partition_keys=["dt"], options={"bucket": "3", "bucket-key": "id"}),
    "pk": dict(partition_keys=["dt"], primary_keys=["dt", "id"], options={"bucket": "3"}),
}


def build(warehouse: str, kind: str) -> tuple[Table, list[dict[str, Any]]]:
    """A table of 3 partitions, several files each (one write per id range); PK tables get updates too."""
    table = new_table(warehouse, **KINDS[kind])
    model: dict[tuple[str, int], dict[str, Any]] = {}
    all_rows: list[dict[str, Any]] = []
    for w in range(4):
        rows = [r for dt in DTS for r in gen_rows(w * 50, 50, dt)]
        write_table(table, pa.Table.from_pylist(rows, schema=SCHEMA))
        all_rows += rows
        for r in rows:
            model[(r["dt"], r["id"])] = r
    if table.primary_keys:
        # overwrite some values: a filter on them must see only the latest version
        upd = [dict(r, v=999, s="updated") for r in gen_rows(0, 60, DTS[0])]
        write_table(table, pa.Table.from_pylist(upd, schema=SCHEMA))
        for r in upd:
            model[(r["dt"], r["id"])] = r
        return table, list(model.values())
    return table, all_rows


@pytest.fixture(scope="module", params=list(KINDS))
def built(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[Table, list[dict]]:
    return build(str(tmp_path_factory.mktemp("scan")), request.param)


# ---- a Python model of the DNF filter ----------------------------------------------------------------------


def _leaf_ok(row: dict[str, Any], cond: tuple[Any, ...]) -> bool:
    col, op = cond[0], cond[1]
    x = row[col]
    if op == "is null":
        return x is None
    if op == "is not null":
        return x is not None
    if x is None:
        return False
    lit = cond[2]
    if op == "in":
        return x in lit
    if op == "not in":
        return x not in lit
    return {
        "=": x == lit, "!=": x != lit, "<": x < lit, "<=": x <= lit, ">": x > lit, ">=": x >= lit,
    }[op]


def python_filter(rows: list[dict[str, Any]], dnf: list[list[tuple[Any, ...]]]) -> list[dict[str, Any]]:
    return [r for r in rows if any(all(_leaf_ok(r, c) for c in conj) for conj in dnf)]


_cmp = st.sampled_from(["=", "!=", "<", "<=", ">", ">="])
_LEAVES = st.one_of(
    st.tuples(st.just("dt"), _cmp, st.sampled_from(DTS + ["2023-12-31", "2024-01-04"])),
    st.tuples(st.just("id"), _cmp, st.integers(-5, 210)),
    st.tuples(st.just("v"), _cmp, st.integers(-60, 1000)),
    st.tuples(st.just("s"), _cmp, st.sampled_from(["s00", "s05", "s12", "s99", "updated", "a"])),
    st.tuples(st.just("f"), _cmp, st.floats(-1, 60, allow_nan=False)),
    st.tuples(st.just("id"), st.sampled_from(["in", "not in"]), st.lists(st.integers(-5, 210), min_size=1,
                                                                         max_size=5)),
    st.tuples(st.just("dt"), st.sampled_from(["in", "not in"]), st.lists(st.sampled_from(DTS), min_size=1,
                                                                         max_size=2)),
    st.tuples(st.sampled_from(["v", "s", "f", "id"]), st.sampled_from(["is null", "is not null"])),
)
_DNF = st.lists(st.lists(_LEAVES, min_size=1, max_size=3), min_size=1, max_size=3)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(dnf=_DNF)
def test_dnf_filter_equals_python_filter(built: tuple[Table, list[dict]], dnf: list[list[tuple]]) -> None:
    table, rows = built
    expected = srt(python_filter(rows, dnf))
    filt: Any = dnf if len(dnf) > 1 else [tuple(c) for c in dnf[0]]  # a single conjunction as a flat list too
    got = srt(table.scan(filter=filt).to_arrow().to_pylist())
    assert got == expected
    # the splits the planner keeps contain every matching row
    planned = sum(s.row_count for s in table.scan(filter=filt).plan())
    assert planned >= len(expected)


def test_filter_and_or_examples(built: tuple[Table, list[dict]]) -> None:
    table, rows = built
    conj = [("dt", "=", DTS[1]), ("id", ">=", 100), ("v", "<", 0)]
    got = srt(table.scan(filter=conj).to_arrow().to_pylist())
    assert got == srt(python_filter(rows, [conj]))
    assert got
    dnf = [[("dt", "=", DTS[0]), ("id", "<", 3)], [("s", "is null"), ("id", "=", 150)]]
    got = srt(table.scan(filter=dnf).to_arrow().to_pylist())
    assert got == srt(python_filter(rows, dnf))
    assert {r["dt"] for r in got} == set(DTS)


def test_pk_filter_on_value_applies_after_merge(warehouse: str) -> None:
    table = new_table(warehouse, **KINDS["pk"])
    write_table(table, pa.Table.from_pylist([{"dt": DTS[0], "id": 1, "v": 5, "s": "a", "f": 1.0}], schema=SCHEMA))
    write_table(table, pa.Table.from_pylist([{"dt": DTS[0], "id": 1, "v": 50, "s": "b", "f": 1.0}], schema=SCHEMA))
    assert table.scan(filter=[("v", "<", 10)]).to_arrow().num_rows == 0
    assert table.scan(filter=[("v", ">", 10)]).to_arrow().column("s").to_pylist() == ["b"]
    write_table(table, pa.table({"dt": [DTS[0]], "id": pa.array([1], pa.int64()), "v": pa.array([None], pa.int32()),
                                 "s": pa.array([None], pa.string()), "f": pa.array([None], pa.float64()),
                                 "_row_kind": ["-D"]}))
    assert table.scan(filter=[("v", ">", 10)]).to_arrow().num_rows == 0
    assert table.scan(filter=[("id", "=", 1)]).to_arrow().num_rows == 0


# ---- pruning ---------------------------------------------------------------------------------------------


def _files(splits: list[DataSplit]) -> int:
    return sum(len(s.files) for s in splits)


@pytest.mark.parametrize("kind", list(KINDS))
def test_partition_pruning(warehouse: str, kind: str) -> None:
    table, rows = build(warehouse, kind)
    full = table.scan().plan()
    one = table.scan(filter=[("dt", "=", DTS[1])]).plan()
    assert 0 < _files(one) < _files(full)
    assert len(one) < len(full)
    decoded = {table.store.decode_partition(s.partition) for s in one}
    assert decoded == {(DTS[1],)}
    two = table.scan(filter=[[("dt", "=", DTS[0])], [("dt", "=", DTS[2])]]).plan()
    assert {table.store.decode_partition(s.partition) for s in two} == {(DTS[0],), (DTS[2],)}
    assert table.scan(filter=[("dt", ">", DTS[2])]).plan() == []
    assert table.scan(filter=[("dt", "=", "nope")]).to_arrow().num_rows == 0
    got = srt(table.scan(filter=[("dt", "=", DTS[1])]).to_arrow().to_pylist())
    assert got == srt([r for r in rows if r["dt"] == DTS[1]])


@pytest.mark.parametrize("kind", list(KINDS))
def test_min_max_pruning(warehouse: str, kind: str) -> None:
    """Each write covers a disjoint id range, so id stats prune files (key stats for PK tables)."""
    table, rows = build(warehouse, kind)
    full = table.scan().plan()
    some = table.scan(filter=[("id", ">=", 160)]).plan()
    assert 0 < _files(some) < _files(full)
    for s in some:
        for f in s.files:
            assert f.row_count > 0
    got = srt(table.scan(filter=[("id", ">=", 160)]).to_arrow().to_pylist())
    assert got == srt([r for r in rows if r["id"] >= 160])
    assert table.scan(filter=[("id", ">", 10_000)]).plan() == []
    # an OR of two narrow ranges keeps only files touching them
    narrow = table.scan(filter=[[("id", "=", 3)], [("id", "=", 199)]]).plan()
    assert _files(narrow) < _files(full)
    got = srt(table.scan(filter=[[("id", "=", 3)], [("id", "=", 199)]]).to_arrow().to_pylist())
    assert got == srt([r for r in rows if r["id"] in (3, 199)])


def test_min_max_pruning_on_value_column_of_append_table(warehouse: str) -> None:
    schema = pa.schema([("id", pa.int64()), ("x", pa.float64())])
    table = new_table(warehouse, schema)
    for w in range(5):
        write_table(table, pa.table({"id": list(range(w * 10, w * 10 + 10)), "x": [w + i / 10 for i in range(10)]}))
    assert _files(table.scan().plan()) == 5
    plan = table.scan(filter=[("x", ">", 3.95)]).plan()
    assert _files(plan) == 1
    assert table.scan(filter=[("x", ">", 3.95)]).to_arrow().column("id").to_pylist() == list(range(40, 50))
    assert _files(table.scan(filter=[("x", "is null")]).plan()) == 0


def test_pk_value_stats_do_not_prune(warehouse: str) -> None:
    """Value stats of PK files say nothing about the merged row; only key stats prune."""
    table = new_table(warehouse, **KINDS["pk"])
    write_table(table, pa.Table.from_pylist([{"dt": DTS[0], "id": 1, "v": 5, "s": "a", "f": 1.0}], schema=SCHEMA))
    write_table(table, pa.Table.from_pylist([{"dt": DTS[0], "id": 1, "v": 50, "s": "b", "f": 1.0}], schema=SCHEMA))
    plan = table.scan(filter=[("v", "<", 10)]).plan()
    assert _files(plan) == 2  # both versions must be read to know the latest
    assert table.scan(filter=[("v", "<", 10)]).to_arrow().num_rows == 0


def test_bucket_pruning_on_primary_key(warehouse: str) -> None:
    schema = pa.schema([("id", pa.int64(), False), ("v", pa.string())])
    table = new_table(warehouse, schema, primary_keys=["id"], options={"bucket": "8"})
    write_table(table, pa.table({"id": pa.array(range(400), pa.int64()), "v": [str(i) for i in range(400)]}))
    full = table.scan().plan()
    assert len(full) == 8
    for x in (0, 17, 399):
        plan = table.scan(filter=[("id", "=", x)]).plan()
        assert len(plan) == 1
        out = table.scan(filter=[("id", "=", x)]).to_arrow().to_pylist()
        assert out == [{"id": x, "v": str(x)}]
        # the one split kept is the bucket really holding x
        assert x in read_split(table, plan[0]).column("id").to_pylist()
    two = table.scan(filter=[("id", "in", [3, 250])]).plan()
    assert 1 <= len(two) <= 2
    assert sorted(table.scan(filter=[("id", "in", [3, 250])]).to_arrow().column("id").to_pylist()) == [3, 250]
    # a non-equality on the key does not prune buckets
    assert len(table.scan(filter=[("id", ">", 200)]).plan()) == 8
    # a missing key still plans at most one bucket and reads nothing
    assert len(table.scan(filter=[("id", "=", 10_000)]).plan()) <= 1
    assert table.scan(filter=[("id", "=", 10_000)]).to_arrow().num_rows == 0


def test_bucket_pruning_on_bucket_key_of_append_table(warehouse: str) -> None:
    schema = pa.schema([("k", pa.string()), ("v", pa.int64())])
    table = new_table(warehouse, schema, options={"bucket": "5", "bucket-key": "k"})
    keys = [f"k{i}" for i in range(100)]
    write_table(table, pa.table({"k": keys, "v": list(range(100))}))
    assert len(table.scan().plan()) == 5
    plan = table.scan(filter=[("k", "=", "k42")]).plan()
    assert len(plan) == 1
    assert table.scan(filter=[("k", "=", "k42")]).to_arrow().to_pylist() == [{"k": "k42", "v": 42}]


# ---- projection, limit, time travel, outputs -------------------------------------------------------------


def test_projection(built: tuple[Table, list[dict]]) -> None:
    table, rows = built
    out = table.scan(columns=["v", "id"]).to_arrow()
    assert out.column_names == ["v", "id"]
    assert out.schema.field("id").type == pa.int64()
    assert sorted((r["id"], r["v"] is None, r["v"]) for r in out.to_pylist()) == sorted(
        (r["id"], r["v"] is None, r["v"]) for r in rows
    )
    # filter on a column that is not projected
    out = table.scan(columns=["s"], filter=[("id", "=", 42), ("dt", "=", DTS[2])]).to_arrow()
    assert out.column_names == ["s"]
    assert out.to_pylist() == [{"s": [r["s"] for r in rows if r["id"] == 42 and r["dt"] == DTS[2]][0]}]
    with pytest.raises(SchemaError, match="nope"):
        table.scan(columns=["id", "nope"])
    assert table.scan(columns=[]).to_arrow().num_columns == 0


@pytest.mark.parametrize("limit", [0, 1, 7, 100, 10_000])
def test_limit(built: tuple[Table, list[dict]], limit: int) -> None:
    table, rows = built
    out = table.scan(limit=limit).to_arrow()
    assert out.num_rows == min(limit, len(rows))
    assert out.schema.names == SCHEMA.names
    keys = {(r["dt"], r["id"]) for r in rows}
    assert all((r["dt"], r["id"]) in keys for r in out.to_pylist())
    filtered = table.scan(limit=limit, filter=[("dt", "=", DTS[0])]).to_arrow()
    assert filtered.num_rows == min(limit, sum(r["dt"] == DTS[0] for r in rows))
    assert set(filtered.column("dt").to_pylist()) <= {DTS[0]}
    assert sum(b.num_rows for b in table.scan(limit=limit).to_batches()) == min(limit, len(rows))


def test_negative_limit(built: tuple[Table, list[dict]]) -> None:
    with pytest.raises(SchemaError, match="limit"):
        built[0].scan(limit=-1)


def test_time_travel(warehouse: str) -> None:
    schema = pa.schema([("id", pa.int64(), False), ("v", pa.string())])
    table = new_table(warehouse, schema, primary_keys=["id"], options={"bucket": "2"})
    versions = []
    for i in range(4):
        write_table(table, pa.table({"id": pa.array([i, 0], pa.int64()), "v": [f"x{i}", f"zero{i}"]}))
        versions.append(sorted(table.scan().to_arrow().to_pylist(), key=lambda r: r["id"]))
    for sid, expected in enumerate(versions, start=1):
        got = sorted(table.scan(snapshot_id=sid).to_arrow().to_pylist(), key=lambda r: r["id"])
        assert got == expected
        assert all(s.snapshot_id == sid for s in table.scan(snapshot_id=sid).plan())
    assert versions[0] == [{"id": 0, "v": "zero0"}]
    assert len(versions[-1]) == 4
    with pytest.raises(SnapshotNotFoundError, match="99") as e:
        table.scan(snapshot_id=99)
    assert isinstance(e.value, TableFormatError)
    with pytest.raises(SchemaError):
        table.scan(snapshot_id=1, tag="t")


def test_scan_of_empty_table(warehouse: str) -> None:
    table = new_table(warehouse, **KINDS["pk"])
    scan = table.scan(filter=[("id", "=", 1)], columns=["id", "s"])
    assert scan.plan() == []
    out = scan.to_arrow()
    assert out.num_rows == 0
    assert out.column_names == ["id", "s"]
    assert scan.to_polars().columns == ["id", "s"]
    assert list(scan.to_batches()) == []


def test_to_polars_and_to_batches(built: tuple[Table, list[dict]]) -> None:
    table, rows = built
    frame = table.scan().to_polars()
    assert isinstance(frame, pl.DataFrame)
    assert frame.columns == SCHEMA.names
    assert frame.height == len(rows)
    assert srt(frame.to_dicts()) == srt(rows)
    assert frame.schema["id"] == pl.Int64
    assert frame.schema["v"] == pl.Int32
    batches = table.scan(filter=[("dt", "!=", DTS[0])]).to_batches()
    assert isinstance(batches, Iterator)
    got = []
    for b in batches:
        assert isinstance(b, pa.RecordBatch)
        assert b.schema.names == SCHEMA.names
        got += b.to_pylist()
    assert srt(got) == srt([r for r in rows if r["dt"] != DTS[0]])


def test_read_split_on_pickled_splits(built: tuple[Table, list[dict]]) -> None:
    table, rows = built
    splits = table.scan().plan()
    assert len(splits) >= 3
    blob = pickle.dumps(splits)
    remote_table = pickle.loads(pickle.dumps(table))
    parts = [read_split(remote_table, s) for s in pickle.loads(blob)]
    assert srt([r for p in parts for r in p.to_pylist()]) == srt(rows)
    # with a projection, and from a freshly loaded table
    fresh = FileSystemCatalog(table.path.rsplit("/", 2)[0]).load_table(table.identifier)
    parts = [read_split(fresh, pickle.loads(pickle.dumps(s)), columns=["id"]) for s in splits]
    assert all(p.column_names == ["id"] for p in parts)
    assert sorted(i for p in parts for i in p.column("id").to_pylist()) == sorted(r["id"] for r in rows)
    # splits of a filtered scan read at most their files' rows
    for s in table.scan(filter=[("dt", "=", DTS[0])]).plan():
        assert read_split(table, s).num_rows <= s.row_count


def test_splits_of_old_snapshot_stay_readable(warehouse: str) -> None:
    table = new_table(warehouse, **KINDS["pk"])
    write_table(table, pa.Table.from_pylist(gen_rows(0, 10, DTS[0]), schema=SCHEMA))
    splits = table.scan().plan()
    write_table(table, pa.Table.from_pylist([dict(r, v=1) for r in gen_rows(0, 10, DTS[0])], schema=SCHEMA))
    old = [r for s in splits for r in read_split(table, s).to_pylist()]
    assert srt(old) == srt(gen_rows(0, 10, DTS[0]))


# ---- system tables ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", list(KINDS))
def test_system_tables_are_consistent(warehouse: str, kind: str) -> None:
    table, rows = build(warehouse, kind)
    write_table(
        table,
        pa.Table.from_pylist(gen_rows(500, 5, DTS[2]), schema=SCHEMA),
        mode="overwrite",
        overwrite_partitions=[{"dt": DTS[2]}],
    )
    snapshots = table.system_table("snapshots")
    assert snapshots.num_rows == len(table.snapshots())
    assert snapshots.column("snapshot_id").to_pylist() == list(range(1, snapshots.num_rows + 1))
    assert snapshots.column("commit_kind").to_pylist()[-1] == "OVERWRITE"
    assert snapshots.column("total_record_count").to_pylist()[-1] == table.latest_snapshot().total_record_count

    schemas = table.system_table("schemas")
    assert schemas.num_rows == 1
    assert schemas.column("schema_id").to_pylist() == [0]

    options = table.system_table("options")
    assert dict(zip(options.column("key").to_pylist(), options.column("value").to_pylist(), strict=False)) == table.options

    files = table.system_table("files")
    plan = table.scan().plan()
    assert files.num_rows == _files(plan)
    assert sum(files.column("record_count").to_pylist()) == sum(s.row_count for s in plan)
    assert sum(files.column("record_count").to_pylist()) == table.latest_snapshot().total_record_count
    assert set(files.column("file_format").to_pylist()) == {"parquet"}
    assert all(p.startswith(table.path) for p in files.column("file_path").to_pylist())
    if not table.primary_keys:
        assert sum(files.column("record_count").to_pylist()) == table.scan().to_arrow().num_rows

    manifests = table.system_table("manifests")
    snap = table.latest_snapshot()
    assert manifests.num_rows == len(table.store.manifests.data_manifests(snap))
    added = sum(manifests.column("num_added_files").to_pylist())
    deleted = sum(manifests.column("num_deleted_files").to_pylist())
    assert added - deleted == files.num_rows
    assert deleted > 0  # the partition overwrite recorded deletes

    partitions = table.system_table("partitions")
    assert partitions.num_rows == len(DTS)
    assert sorted(partitions.column("partition").to_pylist()) == [f"[{d}]" for d in DTS]
    assert sum(partitions.column("file_count").to_pylist()) == files.num_rows
    assert sum(partitions.column("record_count").to_pylist()) == sum(files.column("record_count").to_pylist())
    assert sum(partitions.column("file_size_in_bytes").to_pylist()) == sum(
        files.column("file_size_in_bytes").to_pylist()
    )
    by_part = dict(zip(partitions.column("partition").to_pylist(), partitions.column("record_count").to_pylist(), strict=False))
    assert by_part[f"[{DTS[2]}]"] == 5

    buckets = table.system_table("buckets")
    assert buckets.num_rows == len(plan)
    assert sum(buckets.column("file_count").to_pylist()) == files.num_rows
    assert sum(buckets.column("record_count").to_pylist()) == sum(files.column("record_count").to_pylist())
    expected_buckets = {0} if kind == "append" else {0, 1, 2}
    assert set(buckets.column("bucket").to_pylist()) == expected_buckets

    assert table.system_table("tags").num_rows == 0
    with pytest.raises(SchemaError, match="'nope'"):
        table.system_table("nope")


def test_system_tables_of_empty_table(warehouse: str) -> None:
    table = new_table(warehouse, **KINDS["pk"])
    for name in ("snapshots", "files", "manifests", "partitions", "buckets", "tags"):
        assert table.system_table(name).num_rows == 0, name
    assert table.system_table("schemas").num_rows == 1
    assert table.system_table("options").num_rows == 1
