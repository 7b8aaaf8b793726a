"""Paimon's bloom-filter file index both ways with real Java Paimon 0.9 and 2.0, embedded in the manifest and as a
separate `<file>.index`: Java's indexes are byte-equal to what we build for the same rows and prune our scans;
Java reads our indexed files and its own filtered read (java/FileIndexProbe.java, through Paimon's Table API)
skips the files our index rules out. Every file spans the whole value range (sentinel rows), so min/max statistics
cannot skip a file: only the index can. Primary-key tables both ways (Java 2.0 writes their index, 0.9 does not),
and pypaimon-rust 0.4 reading our indexed files when its venv is there.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from table_format import FileSystemCatalog, write_table
from table_format.data.file_format import read_file
from table_format.data.file_index import FileIndexOptions, build_index, parse_index

pytestmark = pytest.mark.interop

FILES = 4
PER_FILE = 6
BASE = {"bucket": "-1", "file-index.bloom-filter.columns": "s,id"}
FORMS = {
    "embedded": {**BASE, "file-index.bloom-filter.s.items": "40", "file-index.bloom-filter.id.items": "40",
                 "file-index.bloom-filter.id.fpp": "0.01", "file-index.in-manifest-threshold": "1 kb"},
    "separate": {**BASE, "file-index.bloom-filter.s.items": "2000"},  # id: 1,000,000 items by default
}


@pytest.fixture
def oracle(oracle_each: Any) -> Any:
    return oracle_each


def _rows(batch: int) -> list[dict[str, Any]]:
    """A file's rows: its own values plus sentinels at both ends of each column's range."""
    own = [{"id": 1000 + batch * 100 + i, "s": f"m{batch}-{i}", "v": i} for i in range(PER_FILE)]
    return own + [{"id": batch, "s": f"a{batch}", "v": -1}, {"id": 10**9 + batch, "s": f"z{batch}", "v": -2}]


def _spec(warehouse: str, options: dict[str, str], *, pk: bool = False) -> dict[str, Any]:
    return {"warehouse": warehouse, "database": "db", "table": "t", "if_exists": "drop",
            "schema": {"fields": [{"name": "id", "type": "BIGINT NOT NULL" if pk else "BIGINT"},
                                  {"name": "s", "type": "STRING"}, {"name": "v", "type": "INT"}],
                       "primary_keys": ["id"] if pk else [], "options": options},
            "batches": [[[r["id"], r["s"], r["v"]] for r in _rows(b)] for b in range(FILES)]}


def _planned(table: Any, filter: Any) -> tuple[int, list[dict[str, Any]]]:
    scan = table.scan(filter=filter)
    return sum(len(s.files) for s in scan.plan()), sorted(scan.to_arrow().to_pylist(), key=lambda r: r["id"])


def _expected(column: str, value: Any) -> list[dict[str, Any]]:
    return sorted((r for b in range(FILES) for r in _rows(b) if r[column] == value), key=lambda r: r["id"])


@pytest.mark.parametrize("form", list(FORMS))
def test_java_index_is_ours_and_prunes_our_scans(oracle: Any, warehouse: str, form: str) -> None:
    oracle.write_spec(_spec(warehouse, FORMS[form]))
    table = FileSystemCatalog(warehouse).load_table("db.t")
    store = table.store
    options = FileIndexOptions.parse(store.options.raw, store.schema.fields, table="db.t")
    entries = store.manifests.live_files(store.snapshots.latest())
    assert len(entries) == FILES
    for e in entries:
        f = e.file
        path = store.data_file_path(e.partition, e.bucket, f.file_name, f.external_path)
        if form == "embedded":
            assert f.embedded_index is not None and not f.extra_files
            java = f.embedded_index
        else:
            assert f.embedded_index is None and f.extra_files == (f.file_name + ".index",)
            java = Path(path + ".index").read_bytes()
        ours = build_index(read_file(store.file_io, path), options)
        assert parse_index(ours, source="ours") == parse_index(java, source="java")  # column order is Java's hash order
        assert len(ours) == len(java)
    assert _planned(table, None)[0] == FILES
    for column, value in [("s", "m2-3"), ("id", 1000 + 100 + 5), ("s", "m9-9"), ("id", 7)]:
        files, rows = _planned(table, [(column, "=", value)])
        assert rows == _expected(column, value)
        assert files == len({r["id"] // 100 for r in rows})  # only the file holding the value (none when absent)
    files, rows = _planned(table, [("s", "in", ["m0-1", "m3-2", "nope"])])
    assert files == 2 and [r["s"] for r in rows] == ["m0-1", "m3-2"]


TYPES = {"t": "TINYINT", "si": "SMALLINT", "i": "INT", "b": "BIGINT", "f": "FLOAT", "d": "DOUBLE", "dt": "DATE",
         "tm": "TIME", "ts0": "TIMESTAMP(0)", "ts3": "TIMESTAMP(3)", "ts6": "TIMESTAMP(6)",
         "ltz": "TIMESTAMP(6) WITH LOCAL TIME ZONE", "c": "STRING", "vb": "BYTES"}


def _typed_rows(n: int) -> list[list[Any]]:
    import base64
    import random

    rng = random.Random(5)
    rows = []
    for k in range(n):
        text = "".join(rng.choice("abcé€xyz0123") for _ in range(rng.randint(0, 90)))
        sec = rng.randint(-(10**9), 2 * 10**9)
        stamp = f"{dt.datetime(1970, 1, 1) + dt.timedelta(seconds=sec):%Y-%m-%dT%H:%M:%S}.{k * 7919 % 10**6:06d}"
        rows.append([k % 256 - 128, k * 37 - 30000, k * 7919 - 10**6, k * 10**12 - 10**14,
                     [1.5, -0.0, 0.0, float(k) / 3][k % 4], [2.25, -0.0, 1e300, -float(k)][k % 4],
                     f"{1950 + k % 100}-0{1 + k % 9}-1{k % 9}", f"{k % 24:02d}:{k % 60:02d}:{k % 60:02d}.{k % 1000:03d}",
                     stamp[:19], stamp[:23], stamp, stamp, text, base64.b64encode(text.encode()[: k % 40]).decode()])
        if k % 11 == 0:
            rows[-1][k % 14] = None
    return rows


def test_java_index_bytes_equal_ours_for_every_hashable_type(oracle: Any, warehouse: str) -> None:
    """Byte for byte, per column, for every type Paimon's bloom filter hashes (negative and pre-1970 values,
    -0.0, strings of 0..90 UTF-8 bytes, nulls), at Java's default sizes (a separate .index file)."""
    options = {"bucket": "-1", "file-index.bloom-filter.columns": ",".join(TYPES),
               "file-index.bloom-filter.c.items": "300", "file-index.bloom-filter.b.fpp": "0.01"}
    oracle.write_spec({"warehouse": warehouse, "database": "db", "table": "types", "if_exists": "drop",
                       "schema": {"fields": [{"name": n, "type": t} for n, t in TYPES.items()],
                                  "primary_keys": [], "options": options},
                       "batches": [_typed_rows(300)]})
    table = FileSystemCatalog(warehouse).load_table("db.types")
    store = table.store
    [entry] = store.manifests.live_files(store.snapshots.latest())
    path = store.data_file_path(entry.partition, entry.bucket, entry.file.file_name)
    java = parse_index(Path(path + ".index").read_bytes(), source="java")
    ours = parse_index(build_index(read_file(store.file_io, path), FileIndexOptions.parse(
        store.options.raw, store.schema.fields, table="db.types")), source="ours")
    assert set(java) == set(TYPES)
    for column in TYPES:
        assert ours[column] == java[column], column
    assert table.scan(filter=[("ts6", "=", dt.datetime(2500, 1, 1))]).plan() == []


@pytest.fixture(scope="session")
def java_probe(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """Compiles java/FileIndexProbe.java against each oracle's Paimon jars (once per version)."""
    built: dict[str, Path] = {}

    def run(oracle: Any, warehouse: str, *filters: str) -> list[dict[str, Any]]:
        lib = Path(oracle.home) / "lib"
        out = built.get(str(lib))
        if out is None:
            out = tmp_path_factory.mktemp("probe")
            subprocess.run(["javac", "-nowarn", "-d", str(out), "-cp", f"{lib}/*",
                            str(Path(__file__).parent / "java" / "FileIndexProbe.java")], check=True,
                           capture_output=True, timeout=120)
            built[str(lib)] = out
        proc = subprocess.run(["java", "-XX:TieredStopAtLevel=1", "-cp", f"{out}:{lib}/*", "FileIndexProbe",
                               warehouse, "db", "t", *filters], capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr[-4000:]
        return [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]

    return run


@pytest.mark.parametrize("form", list(FORMS))
def test_java_reads_our_index_and_skips_files_by_it(oracle: Any, java_probe: Any, warehouse: str, form: str) -> None:
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db", exist_ok=True)
    schema = pa.schema([("id", pa.int64()), ("s", pa.string()), ("v", pa.int32())])
    table = catalog.create_table("db.t", schema, options=FORMS[form])
    for b in range(FILES):
        write_table(table, pa.Table.from_pylist(_rows(b), schema=schema))
    table = table.refresh()
    entries = table.store.manifests.live_files(table.store.snapshots.latest())
    assert all((e.file.embedded_index is not None) == (form == "embedded") for e in entries)
    every = sorted((r for b in range(FILES) for r in _rows(b)), key=lambda r: r["id"])
    java_rows = sorted(oracle.read(warehouse, "db", "t"), key=lambda r: r["id"])
    assert java_rows == every == _planned(table, None)[1]
    results = java_probe(oracle, warehouse, "s=m2-3", "id=1105", "s=nope")
    file_rows = PER_FILE + 2
    if form == "embedded":  # Java drops the files while planning (AppendOnlyFileStoreScan)
        assert [(r["files"], r["rows"]) for r in results] == [(1, file_rows), (1, file_rows), (0, 0)]
    else:  # planned, then skipped by the reader (FileIndexSkipper) before opening the data file
        assert [r["files"] for r in results] == [FILES] * 3
        assert [r["rows"] for r in results] == [file_rows, file_rows, 0]


def test_primary_key_tables_both_ways(oracle: Any, warehouse: str) -> None:
    options = {**FORMS["embedded"], "bucket": "1"}
    oracle.write_spec(_spec(warehouse, options, pk=True))  # four files of interleaved key ranges
    table = FileSystemCatalog(warehouse).load_table("db.t")
    entries = table.store.manifests.live_files(table.store.snapshots.latest())
    indexed = all(e.file.embedded_index is not None for e in entries)
    assert indexed == (oracle.paimon_version == "2.0")  # Java 0.9 writes no index for primary-key tables
    files, rows = _planned(table, [("id", "=", 1205)])
    assert rows == _expected("id", 1205) and files == (1 if indexed else len(entries))
    assert _planned(table, [("s", "=", "m1-1")])[1] == _expected("s", "m1-1")

    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("s", pa.string()), ("v", pa.int32())])
    ours = FileSystemCatalog(warehouse).create_table("db.ours", schema, primary_keys=["id"],
                                                     options={**options, "write-only": "true"})
    for b in range(FILES):
        write_table(ours, pa.Table.from_pylist(_rows(b), schema=schema))
    ours = ours.refresh()
    assert _planned(ours, [("id", "=", 1205)])[0] == 1
    every = sorted((r for b in range(FILES) for r in _rows(b)), key=lambda r: r["id"])
    assert sorted(oracle.read(warehouse, "db", "ours"), key=lambda r: r["id"]) == every


RUST_PYTHON = Path(os.environ.get("PYPAIMON_RUST_PYTHON")
                   or Path(__file__).resolve().parents[2] / ".cache/venv-pypaimon-rust/bin/python")
RUST_READ = """
import json, sys
from pypaimon_rust.datafusion import PaimonCatalog
table = PaimonCatalog({"warehouse": sys.argv[1]}).get_table("db.t")
for value in sys.argv[2:]:
    rb = table.new_read_builder().with_filter({"method": "equal", "field": "s", "literals": [value]})
    rows = [r for batch in rb.new_read().read(rb.new_scan().plan().splits()) for r in batch.to_pylist()]
    print(json.dumps(sorted(r["id"] for r in rows if r["s"] == value)))
"""


@pytest.mark.parametrize("form", list(FORMS))
def test_pypaimon_rust_reads_our_indexed_files(warehouse: str, form: str) -> None:
    if not RUST_PYTHON.exists():
        pytest.skip(f"pypaimon-rust 0.4 is not installed ({RUST_PYTHON})")
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db", exist_ok=True)
    schema = pa.schema([("id", pa.int64()), ("s", pa.string()), ("v", pa.int32())])
    table = catalog.create_table("db.t", schema, options=FORMS[form])
    for b in range(FILES):
        write_table(table, pa.Table.from_pylist(_rows(b), schema=schema))
    proc = subprocess.run([str(RUST_PYTHON), "-c", RUST_READ, warehouse, "m2-3", "a1", "nope"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert [json.loads(line) for line in proc.stdout.splitlines()] == [[1203], [1], []]
