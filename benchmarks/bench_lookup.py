"""Key lookups and key ranges: raw pyarrow, table_format and pypaimon-rust 0.4 on one primary-key table.

    .venv/bin/python benchmarks/bench_lookup.py [--rows N | --big] [--repeat R] [--rounds K] [--keep DIR]

The table: N rows (default 2,000,000; --big: 20,000,000), bucket 4, 20 % of the keys upserted in a second commit
(two sorted runs per bucket), written by table_format. Wall and CPU seconds (all threads) are printed. "raw" is pyarrow reading one Parquet file holding the same
final rows (zstd level 1). Five reads: full, projection (id, v_str), 1 % of the keys (`id < N/100`), one key
(`id = 12345`), and 30 random keys read one at a time (`random_keys`: the median of the single-key reads); each reader runs in its own process, medians of R reads after a warm-up, K rounds alternated; the
results of the three readers are checked equal (sorted by id). pypaimon-rust runs from its own venv
(.cache/venv-pypaimon-rust, or $PYPAIMON_RUST_PYTHON), skipped with a message when absent:

    python3 -m venv .cache/venv-pypaimon-rust && .cache/venv-pypaimon-rust/bin/pip install pypaimon-rust==0.4.0 pyarrow

Then `table.lookup` of 10,000 random keys (9,000 present) beside a scan filtered on the same keys (`id in [...]`),
ours and pypaimon-rust's, results checked equal.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[1]
READS = ("full", "projection", "range_1pct", "point", "random_keys")
RANDOM_KEYS = 30  # "random_keys": one point read per key, the median over keys and repeats


# ---- readers (run in their own processes; the rust one imports nothing of this repository) -----------------------
def _random_keys(rows: int) -> list[int]:
    import random

    return random.Random(11).sample(range(rows), RANDOM_KEYS)


def _timed_reads(read, repeat: int, out: Path) -> dict[str, float]:
    result = {}
    for name in READS:
        if name == "random_keys":  # read(name) is one callable per key
            calls = read(name)
            table = pa.concat_tables([c() for c in calls])  # warm-up, and the results checked
            with pa.OSFile(str(out / f"{name}.arrow"), "wb") as f, pa.ipc.new_file(f, table.schema) as w:
                w.write_table(table)
            times, cpu = [], []
            for _ in range(repeat):
                for c in calls:
                    t0, c0 = time.perf_counter(), time.process_time()
                    c()
                    times.append(time.perf_counter() - t0)
                    cpu.append(time.process_time() - c0)
            result[name], result[name + "_cpu"] = statistics.median(times), statistics.median(cpu)
            continue
        table = read(name)  # warm-up, and the result checked
        with pa.OSFile(str(out / f"{name}.arrow"), "wb") as f, pa.ipc.new_file(f, table.schema) as w:
            w.write_table(table)
        times, cpu = [], []
        for _ in range(repeat):
            t0, c0 = time.perf_counter(), time.process_time()
            read(name)
            times.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
        result[name] = statistics.median(times)
        result[name + "_cpu"] = statistics.median(cpu)
    return result


def _worker(kind: str, root: Path, rows: int, repeat: int) -> None:
    out = root / "results" / kind
    out.mkdir(parents=True, exist_ok=True)
    hi = rows // 100
    keys = _random_keys(rows)
    if kind == "raw":
        raw = str(root / "raw.parquet")
        reads = {"full": lambda: pq.read_table(raw), "projection": lambda: pq.read_table(raw, columns=["id", "v_str"]),
                 "range_1pct": lambda: pq.read_table(raw, filters=[("id", "<", hi)]),
                 "point": lambda: pq.read_table(raw, filters=[("id", "=", 12345)]),
                 "random_keys": [lambda k=k: pq.read_table(raw, filters=[("id", "=", k)]) for k in keys]}
    elif kind == "ours":
        sys.path.insert(0, str(ROOT))
        from table_format import FileSystemCatalog

        table = FileSystemCatalog(str(root / "wh")).load_table("b.pk_t")
        reads = {"full": lambda: table.scan().to_arrow(),
                 "projection": lambda: table.scan(columns=["id", "v_str"]).to_arrow(),
                 "range_1pct": lambda: table.scan(filter=[("id", "<", hi)]).to_arrow(),
                 "point": lambda: table.scan(filter=[("id", "=", 12345)]).to_arrow(),
                 "random_keys": [lambda k=k: table.scan(filter=[("id", "=", k)]).to_arrow() for k in keys]}
    else:
        from pypaimon_rust.datafusion import PaimonCatalog

        table = PaimonCatalog({"warehouse": str(root / "wh")}).get_table("b.pk_t")

        def rust(projection=None, flt=None):
            rb = table.new_read_builder()
            if projection:
                rb = rb.with_projection(projection)
            if flt:
                rb = rb.with_filter(flt)
            return pa.Table.from_batches(rb.new_read().read(rb.new_scan().plan().splits()))

        reads = {"full": lambda: rust(), "projection": lambda: rust(["id", "v_str"]),
                 "range_1pct": lambda: rust(flt={"method": "lessThan", "field": "id", "literals": [hi]}),
                 "point": lambda: rust(flt={"method": "equal", "field": "id", "literals": [12345]}),
                 "random_keys": [lambda k=k: rust(flt={"method": "equal", "field": "id", "literals": [k]})
                                 for k in keys]}
    print(json.dumps(_timed_reads(lambda name: reads[name] if name == "random_keys" else reads[name](), repeat, out)))


def _lookup_keys(rows: int) -> list[int]:
    import random

    return random.Random(3).sample(range(rows), 9000) + [rows + k for k in random.Random(4).sample(range(rows), 1000)]


def _lookup_worker(root: Path, rows: int, repeat: int, rust: bool) -> None:
    keys = _lookup_keys(rows)
    out = root / "results" / ("rust_lookup" if rust else "lookup")
    out.mkdir(parents=True, exist_ok=True)
    if rust:
        from pypaimon_rust.datafusion import PaimonCatalog

        rtable = PaimonCatalog({"warehouse": str(root / "wh")}).get_table("b.pk_t")

        def scan_in() -> pa.Table:
            rb = rtable.new_read_builder().with_filter({"method": "in", "field": "id", "literals": keys})
            return pa.Table.from_batches(rb.new_read().read(rb.new_scan().plan().splits()))

        fns = {"scan_in": scan_in}
    else:
        sys.path.insert(0, str(ROOT))
        from table_format import FileSystemCatalog

        table = FileSystemCatalog(str(root / "wh")).load_table("b.pk_t")
        fns = {"lookup": lambda: table.lookup(pa.array(keys)),
               "scan_in": lambda: table.scan(filter=[("id", "in", keys)]).to_arrow()}
    for name, fn in fns.items():
        got = fn().sort_by("id")
        assert got.num_rows == 9000, (name, got.num_rows)
        with pa.OSFile(str(out / f"{name}.arrow"), "wb") as f, pa.ipc.new_file(f, got.schema) as w:
            w.write_table(got)
    result = {}
    for name, fn in fns.items():
        times = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
        result[name] = statistics.median(times)
    print(json.dumps(result))


# ---- driver ----------------------------------------------------------------------------------------------------------
def _build(root: Path, rows: int) -> None:
    import numpy as np
    import pyarrow.compute as pc

    sys.path.insert(0, str(ROOT / "benchmarks"))
    sys.path.insert(0, str(ROOT))
    from bench_core import make_data

    from table_format import FileSystemCatalog, write_table

    data = make_data(rows)
    rng = np.random.default_rng(7)
    idx = rng.choice(rows, rows // 5, replace=False)
    upsert = make_data(rows // 5, seed=8)
    upsert = upsert.set_column(0, "id", pa.array(data["id"].to_numpy()[idx]))
    cat = FileSystemCatalog(str(root / "wh"))
    cat.create_database("b", exist_ok=True)
    table = cat.create_table("b.pk_t", data.schema, primary_keys=["id"], options={"bucket": "4", "write-only": "true"})
    write_table(table, data)
    write_table(table, upsert)
    final = pa.concat_tables([data.filter(pc.invert(pc.is_in(data["id"], upsert["id"]))), upsert])
    pq.write_table(final, root / "raw.parquet", compression="zstd", compression_level=1)


def _run(python: str, *args: str) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([python, str(Path(__file__).resolve()), *args], capture_output=True, text=True, env=env)
    if out.returncode:
        raise RuntimeError(f"{args[:2]} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _check_equal(root: Path, readers: list[str]) -> None:
    for name in READS:
        tables = {r: pa.ipc.open_file(str(root / "results" / r / f"{name}.arrow")).read_all() for r in readers}
        base = tables["ours"].sort_by("id")
        for r, t in tables.items():
            t = t.select(base.column_names).sort_by("id")
            assert t.num_rows == base.num_rows and t.cast(base.schema).equals(base), f"{r} differs on {name}"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=2_000_000)
    ap.add_argument("--big", action="store_true", help="20,000,000 rows")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--worker", choices=["raw", "ours", "rust", "lookup", "rust_lookup"], help=argparse.SUPPRESS)
    ap.add_argument("--root", help=argparse.SUPPRESS)
    ap.add_argument("--keep", help="build the table in this folder (reused if there) and keep it")
    args = ap.parse_args()
    rows = 20_000_000 if args.big else args.rows
    if args.worker in ("lookup", "rust_lookup"):
        return _lookup_worker(Path(args.root), rows, args.repeat, args.worker == "rust_lookup")
    if args.worker:
        return _worker(args.worker, Path(args.root), rows, args.repeat)
    rust_python = os.environ.get("PYPAIMON_RUST_PYTHON", str(ROOT / ".cache/venv-pypaimon-rust/bin/python"))
    readers = {"raw": sys.executable, "ours": sys.executable}
    if Path(rust_python).exists():
        readers["rust"] = rust_python
    else:
        print(f"pypaimon-rust skipped: no {rust_python} (see the docstring for its venv)")
    root = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="bench-lookup-"))
    try:
        if not (root / "raw.parquet").exists():
            t0 = time.perf_counter()
            _build(root, rows)
            print(f"table of {rows:,} rows written in {time.perf_counter() - t0:.1f} s")
        print(f"load average {os.getloadavg()[0]:.1f}")
        runs: dict[str, list[dict[str, float]]] = {r: [] for r in readers}
        common = ["--root", str(root), "--rows", str(rows), "--repeat", str(args.repeat)]
        for _ in range(args.rounds):
            for r, python in readers.items():
                runs[r].append(_run(python, "--worker", r, *common))
        _check_equal(root, list(readers))
        print(f"medians of {args.repeat} reads x {args.rounds} rounds, seconds (results equal across readers); "
              f"load average {os.getloadavg()[0]:.1f}")
        print(f"{'read':<12}" + "".join(f"{r:>10}" for r in readers) + "   ours/rust" * ("rust" in readers))
        for name in READS:
            med = {r: statistics.median(x[name] for x in runs[r]) for r in readers}
            ratio = f"{med['ours'] / med['rust']:>11.2f}x" if "rust" in med else ""
            print(f"{name:<12}" + "".join(f"{med[r]:>10.4f}" for r in readers) + ratio)
        print("CPU seconds of the same reads (all threads; steadier than wall time on a loaded machine)")
        for name in READS:
            med = {r: statistics.median(x[name + "_cpu"] for x in runs[r]) for r in readers}
            ratio = f"{med['ours'] / med['rust']:>11.2f}x" if "rust" in med else ""
            print(f"{name:<12}" + "".join(f"{med[r]:>10.4f}" for r in readers) + ratio)
        lk = _run(sys.executable, "--worker", "lookup", *common)
        line = f"10,000 keys: table.lookup {lk['lookup']:.3f} s, scan(filter id in keys) {lk['scan_in']:.3f} s"
        if "rust" in readers:
            rk = _run(readers["rust"], "--worker", "rust_lookup", *common)
            ours = pa.ipc.open_file(str(root / "results/lookup/lookup.arrow")).read_all()
            theirs = pa.ipc.open_file(str(root / "results/rust_lookup/scan_in.arrow")).read_all()
            assert theirs.select(ours.column_names).cast(ours.schema).equals(ours), "rust differs on the 10,000 keys"
            line += f"; pypaimon-rust scan(filter id in keys) {rk['scan_in']:.3f} s (results equal)"
        print(line + f"; load average {os.getloadavg()[0]:.1f}")
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
