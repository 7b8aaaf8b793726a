"""Filtered reads that prune: a filter gives the unfiltered read filtered afterwards (every merge engine, deletion
vectors, key / value predicates in AND / OR, after schema evolution), and Parquet row groups that a key range or
an append table's value range rules out are not read; ORC stripes likewise (their statistics from the file tail)."""

from __future__ import annotations

import glob
import io
import threading
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.orc as paorc
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from table_format import FileSystemCatalog, SchemaChange, Table, write_table
from table_format.data import file_format, page_index, probe_read
from table_format.data.file_format import dictionary_columns, row_group_rows
from table_format.data.orc_stats import orc_stripe_stats
from table_format.predicate import parse_filter

SCHEMA = pa.schema([("id", pa.int64(), False), ("k2", pa.string(), False), ("v", pa.int64()), ("s", pa.string())])
SMALL_GROUPS = {"parquet.block.size": "1000"}  # about 15 rows per row group

ENGINES: dict[str, dict[str, str]] = {
    "deduplicate": {},
    "partial-update": {"merge-engine": "partial-update", "partial-update.remove-record-on-delete": "true"},
    "aggregation": {"merge-engine": "aggregation", "fields.v.aggregate-function": "sum",
                    "fields.s.aggregate-function": "max"},
    "first-row": {"merge-engine": "first-row"},
    "sequence-field": {"sequence.field": "v"},
}

FILTERS: list[Any] = [
    [("id", "<", 60)],
    [("id", ">=", 150), ("id", "<=", 170)],
    [("id", "in", [3, 77, 199, 1000])],
    [("id", "=", 42), ("k2", "=", "b")],
    [("v", ">", 500)],
    [("id", "<", 100), ("v", "<", 300)],
    [[("id", "<", 20)], [("v", ">", 900)]],  # OR of a key and a value predicate: nothing pushed before the merge
    [[("id", "<", 20), ("v", "is not null")], [("id", ">", 180), ("s", "starts_with", "x")]],
    [("s", "is null")],
    [("id", "!=", 5), ("k2", "in", ["a", "c"])],
]


def _rows(ids: np.ndarray, seed: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    n = len(ids)
    v = pa.array(rng.integers(0, 1000, n), mask=rng.random(n) < 0.1)
    s = pa.array([f"{c}{i}" for c, i in zip(rng.choice(list("xyz"), n), rng.integers(0, 99, n), strict=True)],
                 mask=rng.random(n) < 0.1)
    return pa.table({"id": pa.array(ids, pa.int64()), "k2": pa.array(np.array(["a", "b", "c"])[ids % 3]),
                     "v": v, "s": s}, schema=SCHEMA)


def _build(catalog: FileSystemCatalog, name: str, options: dict[str, str]) -> Table:
    table = catalog.create_table(f"db.{name}", SCHEMA, primary_keys=["id", "k2"],
                                 options={"bucket": "2", **SMALL_GROUPS, **options})
    rng = np.random.default_rng(1)
    write_table(table, _rows(np.arange(200), 1))
    write_table(table, _rows(rng.choice(200, 80, replace=False), 2))
    deletes = _rows(rng.choice(200, 15, replace=False), 3).append_column("_row_kind", pa.array(["-D"] * 15))
    if options.get("merge-engine") not in ("first-row", "aggregation"):
        write_table(table, deletes)
    write_table(table, _rows(rng.choice(200, 40, replace=False), 4))
    return table


def _expected(table: Table, dnf: Any) -> pa.Table:
    full = table.scan().to_arrow()
    predicate = parse_filter(dnf, table.store.schema)
    assert predicate is not None
    return full.filter(predicate.to_arrow_expression())


def _sorted(t: pa.Table) -> pa.Table:
    return t.sort_by([(c, "ascending") for c in ("id", "k2")])


@pytest.fixture
def catalog(tmp_path: Any) -> FileSystemCatalog:
    cat = FileSystemCatalog(str(tmp_path / "wh"))
    cat.create_database("db")
    return cat


@pytest.mark.parametrize("dv", [False, True], ids=["merge-on-read", "deletion-vectors"])
@pytest.mark.parametrize("engine", list(ENGINES))
def test_filtered_read_equals_read_then_filter(catalog: FileSystemCatalog, engine: str, dv: bool) -> None:
    options = dict(ENGINES[engine])
    if dv:
        if engine == "first-row":
            pytest.skip("first-row tables do not take deletion vectors")
        options["deletion-vectors.enabled"] = "true"
    table = _build(catalog, engine.replace("-", "_"), options)
    for dnf in FILTERS:
        got = table.scan(filter=dnf).to_arrow()
        assert _sorted(got).equals(_sorted(_expected(table, dnf))), dnf
        projected = table.scan(filter=dnf, columns=["s"]).to_arrow()
        assert projected.num_rows == got.num_rows


@pytest.mark.parametrize("file_format", ["orc", "avro"])
def test_filtered_read_of_orc_and_avro_files(catalog: FileSystemCatalog, file_format: str) -> None:
    table = _build(catalog, file_format, {"file.format": file_format, "deletion-vectors.enabled": "true"})
    for dnf in FILTERS:
        assert _sorted(table.scan(filter=dnf).to_arrow()).equals(_sorted(_expected(table, dnf))), dnf


_LEAVES = st.one_of(
    st.tuples(st.just("id"), st.sampled_from(["<", "<=", ">", ">=", "=", "!="]), st.integers(-5, 205)),
    st.tuples(st.just("id"), st.just("in"), st.lists(st.integers(0, 199), max_size=4)),
    st.tuples(st.just("k2"), st.sampled_from(["=", "!="]), st.sampled_from(["a", "b", "c"])),
    st.tuples(st.just("v"), st.sampled_from(["<", ">", "="]), st.integers(0, 1000)),
    st.tuples(st.just("s"), st.just("starts_with"), st.sampled_from(["x", "y1"])),
    st.tuples(st.sampled_from(["v", "s"]), st.sampled_from(["is null", "is not null"])),
)
_DNF = st.lists(st.lists(_LEAVES, min_size=1, max_size=3), min_size=1, max_size=3)


@pytest.fixture(scope="module")
def dv_table(tmp_path_factory: pytest.TempPathFactory) -> Table:
    cat = FileSystemCatalog(str(tmp_path_factory.mktemp("prop") / "wh"))
    cat.create_database("db")
    return _build(cat, "prop", {"deletion-vectors.enabled": "true", "bucket": "1"})


@pytest.fixture(scope="module")
def mor_table(tmp_path_factory: pytest.TempPathFactory) -> Table:
    cat = FileSystemCatalog(str(tmp_path_factory.mktemp("prop") / "wh"))
    cat.create_database("db")
    return _build(cat, "prop", {"bucket": "1"})


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(dnf=_DNF)
def test_random_filters_equal_read_then_filter(dv_table: Table, mor_table: Table, dnf: list[list[tuple]]) -> None:
    for table in (dv_table, mor_table):
        assert _sorted(table.scan(filter=dnf).to_arrow()).equals(_sorted(_expected(table, dnf))), dnf


def test_filtered_read_after_schema_evolution(catalog: FileSystemCatalog) -> None:
    table = _build(catalog, "evolved", {})
    table = catalog.alter_table("db.evolved", [SchemaChange.rename_column("v", "value"),
                                               SchemaChange.add_column("extra", pa.int32())])
    late = _rows(np.arange(150, 260), 9).rename_columns(["id", "k2", "value", "s"])
    write_table(table, late.append_column("extra", pa.array(np.arange(110, dtype=np.int32))))
    for dnf in ([("value", ">", 400)], [("id", ">", 190), ("value", "<", 500)], [("extra", "is null")],
                [("extra", ">", 50)], [[("id", "<", 10)], [("extra", "<", 5)]], [("id", "<", 170)]):
        got = table.scan(filter=dnf).to_arrow()
        assert _sorted(got).equals(_sorted(_expected(table, dnf))), dnf


def test_changes_are_not_filtered_by_scan_pruning(catalog: FileSystemCatalog) -> None:
    table = _build(catalog, "changes", {})
    before = table.changes(1)
    assert table.scan(filter=[("id", "<", 10)]).to_arrow().num_rows > 0
    assert table.changes(1).equals(before) and before.num_rows > 0


class _RowGroupCounter:
    """Counts the Parquet row groups decoded (`read`) out of those of every file opened (`total`)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.read = 0
        self.total = 0
        self.lock = threading.Lock()
        monkeypatch.setattr(file_format, "_PARQUET_READERS",
                            {v: _CountingFormat(r, self) for v, r in file_format._PARQUET_READERS.items()})
        counter = self
        seen: set[tuple[int, int]] = set()  # (file, row group) decoded in part by a probe (data/probe_read.py)

        class CountingParquetFile(pq.ParquetFile):
            def __init__(self, source: Any, **kwargs: Any) -> None:
                super().__init__(source, **kwargs)
                self.source_id = id(source)

            def iter_batches(self, *args: Any, row_groups: list[int], **kwargs: Any) -> Any:
                with counter.lock:
                    new = {(self.source_id, g) for g in row_groups} - seen
                    seen.update(new)
                    counter.read += len(new)
                return super().iter_batches(*args, row_groups=row_groups, **kwargs)

        monkeypatch.setattr(probe_read.pq, "ParquetFile", CountingParquetFile)
        decode_rows = page_index.decode_rows

        def counting_decode_rows(source: Any, fi: Any, groups: Any, masks: Any, *args: Any, **kwargs: Any) -> Any:
            with counter.lock:  # a row group decoded in part by page (data/page_index.py)
                new = {(id(source), g) for g, m in zip(groups, masks, strict=True) if m.any()} - seen
                seen.update(new)
                counter.read += len(new)
            return decode_rows(source, fi, groups, masks, *args, **kwargs)

        monkeypatch.setattr(page_index, "decode_rows", counting_decode_rows)


class _CountingFragment:
    def __init__(self, fragment: Any, counter: _RowGroupCounter, groups: int | None = None) -> None:
        self.fragment, self.counter, self.groups = fragment, counter, groups

    def __getattr__(self, name: str) -> Any:
        return getattr(self.fragment, name)

    def subset(self, *, row_group_ids: list[int]) -> _CountingFragment:
        return _CountingFragment(self.fragment.subset(row_group_ids=row_group_ids), self.counter, len(row_group_ids))

    def to_table(self, **kwargs: Any) -> pa.Table:
        groups = self.fragment.metadata.num_row_groups if self.groups is None else self.groups
        with self.counter.lock:  # splits are read by several threads
            self.counter.read += groups
        return self.fragment.to_table(**kwargs)


class _CountingFormat:
    def __init__(self, fmt: Any, counter: _RowGroupCounter) -> None:
        self.fmt, self.counter = fmt, counter

    def make_fragment(self, source: Any) -> _CountingFragment:
        fragment = self.fmt.make_fragment(source)
        groups = fragment.metadata.num_row_groups
        with self.counter.lock:
            self.counter.total += groups
        return _CountingFragment(fragment, self.counter)


def test_key_range_skips_row_groups_of_sorted_files(catalog: FileSystemCatalog,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    table = _build(catalog, "groups", {})
    groups = [pq.ParquetFile(p).metadata.num_row_groups for p in _data_files(table)]
    assert max(groups) >= 4
    counter = _RowGroupCounter(monkeypatch)
    got = table.scan(filter=[("id", "<", 10)]).to_arrow()
    assert set(got.column("id").to_pylist()) <= set(range(10)) and got.num_rows > 0
    assert 0 < counter.read * 3 <= counter.total, (counter.read, counter.total)
    # a value predicate on a primary-key table cannot skip row groups: versions of a key differ in value
    counter.read = counter.total = 0
    table.scan(filter=[("v", ">", 990)]).to_arrow()
    assert counter.read == counter.total


def test_append_table_skips_row_groups_by_value_statistics(catalog: FileSystemCatalog,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    table = catalog.create_table("db.append", SCHEMA, options=SMALL_GROUPS)
    write_table(table, _rows(np.arange(300), 5))
    write_table(table, _rows(np.arange(300, 500), 6))
    counter = _RowGroupCounter(monkeypatch)
    dnf = [("id", ">=", 250), ("id", "<", 320)]
    got = table.scan(filter=dnf).to_arrow()
    assert sorted(got.column("id").to_pylist()) == list(range(250, 320))
    assert 0 < counter.read * 3 <= counter.total, (counter.read, counter.total)
    monkeypatch.undo()
    for f in FILTERS:
        assert _sorted(table.scan(filter=f).to_arrow()).equals(_sorted(_expected(table, f))), f


def test_row_groups_follow_parquet_block_size() -> None:
    t = _rows(np.arange(1000), 0)
    assert row_group_rows(t, 128 << 20) == 1 << 17
    assert row_group_rows(t, t.nbytes // 10) in range(95, 106)
    assert row_group_rows(t, 1) == 1


def _data_files(table: Table) -> list[str]:
    return sorted(glob.glob(f"{table.path}/bucket-*/*.parquet"))


# ---- ORC stripes -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("compression", ["zstd", "zlib", "snappy", "lz4", "uncompressed"])
def test_orc_stripe_statistics_match_the_stripes(compression: str) -> None:
    n = 20_000
    t = pa.table({"id": np.arange(n), "s": pa.array([f"k{i:06d}" for i in range(n)]),
                  "d": pa.array(np.arange(n) % 1000, pa.int32()).cast(pa.date32()),
                  "x": pa.array([None if i % 3 == 0 else i for i in range(n)], pa.int32())})
    buf = io.BytesIO()
    paorc.write_table(t, buf, compression=compression, stripe_size=1 << 10)
    data = buf.getvalue()
    stripes = orc_stripe_stats(data, len(data))
    orc = paorc.ORCFile(io.BytesIO(data))
    assert len(stripes) == orc.nstripes > 1 and sum(s.rows for s in stripes) == n
    for i, s in enumerate(stripes):
        batch = orc.read_stripe(i)
        assert s.rows == batch.num_rows
        for name in ("id", "s", "d"):
            col = batch.column(name)
            assert (s.mins[name], s.maxs[name]) == (pc.min(col).as_py(), pc.max(col).as_py())
        assert s.nulls["x"] == batch.column("x").null_count and s.nulls["id"] == 0
    with pytest.raises(ValueError):
        orc_stripe_stats(data[-20:], len(data))


class _StripeCounter:
    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.read = 0
        self.files: dict[int, int] = {}  # id of each ORCFile read -> its stripe count
        real_read, real_stripe = paorc.ORCFile.read, paorc.ORCFile.read_stripe
        counter = self

        def read(of: Any, *args: Any, **kwargs: Any) -> Any:
            counter.read += of.nstripes
            counter.files[id(of)] = of.nstripes
            return real_read(of, *args, **kwargs)

        def read_stripe(of: Any, i: int, *args: Any, **kwargs: Any) -> Any:
            counter.read += 1
            counter.files[id(of)] = of.nstripes
            return real_stripe(of, i, *args, **kwargs)

        monkeypatch.setattr(paorc.ORCFile, "read", read)
        monkeypatch.setattr(paorc.ORCFile, "read_stripe", read_stripe)

    @property
    def total(self) -> int:
        return sum(self.files.values())


@pytest.mark.parametrize("primary_key", [True, False], ids=["primary-key", "append"])
def test_orc_stripes_ruled_out_by_a_key_range_are_not_read(catalog: FileSystemCatalog, primary_key: bool,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    options = {"file.format": "orc", "orc.stripe.size": str(1 << 10), "bucket": "1" if primary_key else "-1"}
    table = catalog.create_table("db.orc_stripes", SCHEMA, primary_keys=["id", "k2"] if primary_key else (),
                                 options=options)
    write_table(table, _rows(np.arange(60_000), 7))
    counter = _StripeCounter(monkeypatch)
    dnf = [("id", ">=", 1000), ("id", "<", 1100)]
    got = table.scan(filter=dnf).to_arrow()
    assert sorted(got.column("id").to_pylist()) == list(range(1000, 1100))
    assert counter.total >= 3 and 0 < counter.read * 2 <= counter.total, (counter.read, counter.total)
    monkeypatch.undo()
    write_table(table, _rows(np.arange(0, 60_000, 7), 8))
    for f in [*FILTERS, dnf, [("id", ">", 59_990)], [("id", "<", 0)]]:
        assert _sorted(table.scan(filter=f).to_arrow()).equals(_sorted(_expected(table, f))), f


def test_dictionary_encoding_only_for_repetitive_columns() -> None:
    n = 5000
    t = pa.table({"key": np.arange(n), "flag": np.arange(n) % 2 == 0, "cat": pa.array(["a", "b", "c"] * (n // 3) + ["a"] * (n % 3)),
                  "text": pa.array([f"free text {i}" for i in range(n)]), "nested": pa.array([[i] for i in range(n)])})
    assert dictionary_columns(t) == ["flag", "cat"]
    assert dictionary_columns(t.slice(0, 0)) == ["key", "flag", "cat", "text"]
