"""Merges in bounded memory: with a small `sort-spill-buffer-size`, merged reads (`to_batches`, `read_split`),
compaction, rescale and full-compaction changelogs go key range by key range (lsm/key_ranges.py) and give
exactly the rows of the whole-bucket merge (the default budget holds these small buckets whole)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from table_format import FileSystemCatalog, SchemaChange, Table, TableFormatError, read_split, write_table
from table_format.lsm.key_ranges import sorted_runs

SCHEMA = pa.schema([("id", pa.int64(), False), ("k2", pa.string(), False), ("v", pa.int64()), ("s", pa.string())])
SMALL = {"sort-spill-buffer-size": "2 kb"}  # a few dozen rows of each sorted run at a time
ENGINES: dict[str, dict[str, str]] = {
    "deduplicate": {},
    "sequence-field": {"sequence.field": "v"},
    "partial-update": {"merge-engine": "partial-update", "partial-update.remove-record-on-delete": "true"},
    "aggregation": {"merge-engine": "aggregation", "fields.v.aggregate-function": "sum",
                    "fields.s.aggregate-function": "max"},
    "first-row": {"merge-engine": "first-row"},
}


def _rows(ids: np.ndarray, seed: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    n = len(ids)
    v = pa.array(rng.integers(0, 5, n), mask=rng.random(n) < 0.1)  # few values: equal sequence.field values
    s = pa.array([f"x{i}" for i in rng.integers(0, 99, n)], mask=rng.random(n) < 0.1)
    return pa.table({"id": pa.array(ids, pa.int64()), "k2": pa.array(np.array(["a", "b", "c"])[ids % 3]),
                     "v": v, "s": s}, schema=SCHEMA)


def _write_runs(table: Table, engine: str, *, n: int = 1500) -> None:
    """Four sorted runs with overlapping keys, and deletions where the engine takes them."""
    rng = np.random.default_rng(7)
    write_table(table, _rows(np.arange(n), 1))
    write_table(table, _rows(rng.choice(n, n // 2, replace=False), 2))
    if engine not in ("first-row", "aggregation"):
        ids = rng.choice(n, n // 10, replace=False)
        write_table(table, _rows(ids, 3).append_column("_row_kind", pa.array(["-D"] * len(ids))))
    write_table(table, _rows(rng.choice(n, n // 3, replace=False), 4))


def _pair(catalog: FileSystemCatalog, engine: str, options: dict[str, str]) -> tuple[Table, Table]:
    """The same writes into a table with the default budget and one with a small budget."""
    tables = []
    for name, extra in (("whole", {}), ("ranges", SMALL)):
        t = catalog.create_table(f"db.{name}", SCHEMA, primary_keys=["id", "k2"],
                                 options={"bucket": "1", "write-only": "true", "parquet.block.size": "2000",
                                          **ENGINES[engine], **options, **extra})
        _write_runs(t, engine)
        tables.append(t.refresh())
    return tables[0], tables[1]


def _sorted(t: pa.Table) -> pa.Table:
    return t.sort_by([("id", "ascending"), ("k2", "ascending")])


@pytest.fixture
def catalog(tmp_path: Any) -> FileSystemCatalog:
    cat = FileSystemCatalog(str(tmp_path / "wh"))
    cat.create_database("db")
    return cat


@pytest.mark.parametrize("engine", list(ENGINES))
def test_key_range_read_and_compaction_equal_whole_bucket(catalog: FileSystemCatalog, engine: str) -> None:
    whole, ranges = _pair(catalog, engine, {})
    expected = whole.scan().to_arrow()
    batches = list(ranges.scan().to_batches())
    assert len(batches) > 10  # merged range by range
    got = pa.Table.from_batches(batches, schema=expected.schema)
    assert got.equals(expected)  # key order too
    split = ranges.scan().plan()[0]
    assert _sorted(read_split(ranges, split)).equals(_sorted(expected))
    filtered = [("id", "<", 700), ("v", ">", 1)]
    assert _sorted(ranges.scan(filter=filtered).to_arrow()).equals(_sorted(whole.scan(filter=filtered).to_arrow()))
    whole.maintenance.compact(full=True)
    ranges.maintenance.compact(full=True)
    whole, ranges = whole.refresh(), ranges.refresh()
    assert ranges.scan().to_arrow().equals(whole.scan().to_arrow())
    assert ranges.scan().to_arrow().equals(expected)
    files = [f for s in ranges.scan().plan() for f in s.files]
    assert len(sorted_runs(files, ranges.store.key_types)) == 1  # one sorted run, files in key order


def test_key_ranges_with_deletion_vectors_and_evolved_schema(catalog: FileSystemCatalog) -> None:
    whole, ranges = _pair(catalog, "deduplicate", {"deletion-vectors.enabled": "true"})
    for t in (whole, ranges):
        t.maintenance.compact(full=True)
        write_table(t, _rows(np.arange(0, 1500, 7), 5))
        t.refresh().maintenance.compact()  # level 0 into a higher level: deletion vectors on the max level
        # (level-0 files are not read in deletion-vector mode until compacted, as in Java)
        write_table(t, _rows(np.arange(0, 1500, 5), 6))
        catalog.alter_table(t.identifier, [SchemaChange.add_column("extra", pa.int32())])
    whole, ranges = catalog.load_table("db.whole"), catalog.load_table("db.ranges")
    more = _rows(np.arange(100, 400), 9).append_column("extra", pa.array(np.arange(300, dtype=np.int32)))
    for t in (whole, ranges):
        write_table(t, more)
    whole, ranges = whole.refresh(), ranges.refresh()
    assert any(s.deletion_files and any(s.deletion_files) for s in ranges.scan().plan())
    expected = whole.scan().to_arrow()
    assert expected.column("extra").null_count > 0
    assert ranges.scan().to_arrow().equals(expected)
    for t in (whole, ranges):
        t.maintenance.compact(full=True)
    assert ranges.refresh().scan().to_arrow().equals(whole.refresh().scan().to_arrow())


def test_sorted_runs_chain_files_in_key_order(catalog: FileSystemCatalog) -> None:
    table = catalog.create_table("db.t", SCHEMA, primary_keys=["id", "k2"],
                                 options={"bucket": "1", "write-only": "true", "target-file-size": "4 kb"})
    write_table(table, _rows(np.arange(3000), 1))  # one run of several files
    write_table(table, _rows(np.arange(1000, 1200), 2))  # a second run inside the first
    files = [f for s in table.refresh().scan().plan() for f in s.files]
    runs = sorted_runs(files, table.store.key_types)
    assert len(files) > 3 and len(runs) == 2
    assert sorted(i for r in runs for i in r) == list(range(len(files)))


def test_rescale_in_key_ranges_leaves_no_changelog_orphans(catalog: FileSystemCatalog) -> None:
    """A rescale's rewrite is an overwrite, which commits no changelog: with changelog-producer 'input' its writer's
    changelog files used to stay behind as orphans."""
    table = catalog.create_table("db.t", SCHEMA, primary_keys=["id", "k2"],
                                 options={"bucket": "2", "changelog-producer": "input", **SMALL})
    _write_runs(table, "deduplicate", n=600)
    table = table.refresh()
    expected = _sorted(table.scan().to_arrow())
    root = Path(table.path)
    changelogs = sorted(root.rglob("changelog-*"))
    assert changelogs  # the writes' own changelog files
    result = table.maintenance.rescale(bucket=3)
    assert result.rewritten_rows == expected.num_rows
    table = table.refresh()
    assert _sorted(table.scan().to_arrow()).equals(expected)
    assert {s.bucket for s in table.scan().plan()} == {0, 1, 2}
    assert sorted(root.rglob("changelog-*")) == changelogs


@pytest.mark.parametrize("budget", [None, "1 b"], ids=["whole", "key-ranges"])
def test_key_filtered_read_merges_excluded_deletes_as_java(catalog: FileSystemCatalog, budget: str | None) -> None:
    """Java 0.9 prunes keys by file/row-group statistics only and merges every row read, so a partial-update -D of
    a key the filter excludes still fails the read when its file is read (checked against Paimon's Spark connector
    in tests/spark/peer/test_paimon_spark.py); a file it prunes does not."""
    schema = pa.schema([("id", pa.int64(), False), ("a", pa.int64())])
    deletes = schema.append(pa.field("_row_kind", pa.string()))
    options = {"bucket": "1", "merge-engine": "partial-update"} | ({"sort-spill-buffer-size": budget} if budget else {})
    t = catalog.create_table("db.pu", schema, primary_keys=["id"], options=options)
    write_table(t, pa.table({"id": [1, 2, 3, 4, 5], "a": [10, 20, 30, 40, 50]}, schema=schema))
    write_table(t, pa.table({"id": [1, 2], "a": [None, 21], "_row_kind": ["-D", "+I"]}, schema=deletes))
    write_table(t, pa.table({"id": [5], "a": [None], "_row_kind": ["-D"]}, schema=deletes))
    t = t.refresh()
    assert t.scan(filter=[("id", ">=", 3), ("id", "<=", 4)]).to_arrow().to_pylist() == [
        {"id": 3, "a": 30}, {"id": 4, "a": 40}]
    for dnf in ([("id", "=", 2)], [("id", ">", 4)], None):
        with pytest.raises(TableFormatError, match="cannot accept -U/-D"):
            t.scan(filter=dnf).to_arrow()


@pytest.mark.parametrize("producer", ["full-compaction", "lookup"])
def test_compaction_changelog_in_key_ranges_equals_whole_bucket(catalog: FileSystemCatalog, producer: str) -> None:
    whole, ranges = _pair(catalog, "partial-update", {"changelog-producer": producer})
    changes = []
    for t in (whole, ranges):
        first = t.store.snapshots.latest_id()
        t.maintenance.compact(full=True)
        write_table(t, _rows(np.arange(0, 1500, 4), 8))
        t.refresh().maintenance.compact(full=True)
        t = t.refresh()
        changes.append(t.changes(first, t.store.snapshots.latest_id()))
    assert changes[0].num_rows > 1000
    assert _sorted(changes[1]).equals(_sorted(changes[0]))
    assert _sorted(ranges.refresh().scan().to_arrow()).equals(_sorted(whole.refresh().scan().to_arrow()))


def test_key_ranges_cut_temporal_and_float_keys(catalog: FileSystemCatalog) -> None:
    schema = pa.schema([("ts", pa.timestamp("ns"), False), ("d", pa.date32(), False), ("f", pa.float64(), False),
                        ("v", pa.int64())])
    tables = []
    for name, extra in (("whole", {}), ("ranges", SMALL)):
        rng = np.random.default_rng(3)
        t = catalog.create_table(f"db.{name}", schema, primary_keys=["ts", "d", "f"],
                                 options={"bucket": "1", "write-only": "true", **extra})
        for _ in range(3):  # three sorted runs
            n = 800
            ts = pa.array(rng.integers(0, 400, n) * 1_000_000_000 + 3000, pa.int64()).cast(pa.timestamp("ns"))
            d = pa.array(rng.integers(0, 3, n).astype(np.int32)).cast(pa.date32())
            f = pa.array(np.where(rng.random(n) < 0.05, np.nan, rng.integers(0, 3, n) - 0.5))
            write_table(t, pa.table({"ts": ts, "d": d, "f": f, "v": pa.array(rng.integers(0, 9, n))}, schema=schema))
        tables.append(t.refresh())
    whole, ranges = tables
    assert len(list(ranges.scan().to_batches())) > 5

    def no_nan(t: pa.Table) -> pa.Table:  # NaN != NaN in Table.equals
        f = t.column("f")
        return t.set_column(2, "f", pc.if_else(pc.is_nan(f), pa.scalar(1e300), f))

    got, expected = no_nan(ranges.scan().to_arrow()), no_nan(whole.scan().to_arrow())
    assert pc.sum(pc.equal(expected.column("f"), 1e300)).as_py() > 0
    assert got.equals(expected)


def test_deletion_vector_compaction_in_key_ranges_equals_whole_bucket(catalog: FileSystemCatalog, oracle: Any,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A minor compaction of a deletion-vector table (the unit merged with the older versions of its keys, which are
    marked deleted in their files) streams the higher levels key range by key range: the same files, deletion
    vectors and rows as the whole-bucket lookup, and Java reads the result."""
    from table_format.write import compact_task  # noqa: PLC0415

    calls: list[int] = []
    real = compact_task.lookup_by_key_ranges
    monkeypatch.setattr(compact_task, "lookup_by_key_ranges", lambda *a, **k: calls.append(1) or real(*a, **k))
    whole, ranges = _pair(catalog, "deduplicate", {"deletion-vectors.enabled": "true"})
    for t in (whole, ranges):
        t.maintenance.compact(full=True)
        present = set(t.refresh().scan().to_arrow().column("id").to_pylist())
        write_table(t, _rows(np.arange(0, 1500, 7), 5))
        t.refresh().maintenance.compact()  # the level-0 file into the top level: older rows marked deleted
    assert calls == [1]  # only the small budget goes by key ranges
    whole, ranges = whole.refresh(), ranges.refresh()

    def layout(t: Table) -> list[tuple[int, int, int]]:
        """(level, rows, deleted rows) of every live file."""
        out = []
        for s in t.scan().plan():
            for f, d in zip(s.files, s.deletion_files or [None] * len(s.files), strict=True):
                out.append((f.level, f.row_count, d.cardinality if d is not None and d.cardinality else 0))
        return sorted(out)

    assert layout(ranges) == layout(whole)
    assert sum(d for _, _, d in layout(ranges)) == len(present & set(range(0, 1500, 7)))  # older versions, once
    expected = whole.scan().to_arrow()
    assert ranges.scan().to_arrow().equals(expected)
    java = oracle.read(catalog.warehouse, "db", "ranges")
    by_key = lambda row: row[:2]  # noqa: E731
    assert sorted(((r["id"], r["k2"], r["v"], r["s"]) for r in java), key=by_key) == sorted(
        zip(*(expected.column(c).to_pylist() for c in ("id", "k2", "v", "s")), strict=True), key=by_key)
