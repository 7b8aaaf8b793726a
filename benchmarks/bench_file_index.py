"""Equality filters on a non-key string column over many files, with and without Paimon's bloom-filter file index.

    .venv/bin/python benchmarks/bench_file_index.py [--rows N] [--files F] [--repeat R]

One append table per variant, the same rows (default 2,000,000 in about 100 files; random strings, so every file's
min/max statistics span the whole range and cannot skip it): no index; `file-index.bloom-filter.columns` = s with
the index in `<file>.index` extra files (items = rows per file, fpp 0.01); the same index embedded in the manifest
(`file-index.in-manifest-threshold` = 64 kb). Reads: `s = <a present value>` and `s = <an absent value>`, medians
of R reads after a warm-up, results checked equal across the variants; the files each plan reads are printed, and
the write time of each variant.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from table_format import FileSystemCatalog, write_table  # noqa: E402


def make_rows(rows: int) -> pa.Table:
    rng = np.random.default_rng(11)
    ids = np.arange(rows, dtype=np.int64)
    codes = rng.integers(0, 1 << 62, rows, dtype=np.int64)
    s = pa.array(np.char.add("user-", codes.astype(str)))
    return pa.table({"id": ids, "s": s, "v": rng.random(rows)})


def variants(per_file: int) -> dict[str, dict[str, str]]:
    index = {"file-index.bloom-filter.columns": "s", "file-index.bloom-filter.s.items": str(per_file),
             "file-index.bloom-filter.s.fpp": "0.01"}
    return {"no index": {}, "index files": index,
            "embedded": {**index, "file-index.in-manifest-threshold": "64 kb"}}


def timed(fn, repeat: int) -> tuple[float, pa.Table]:
    result = fn()  # warm-up
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), result


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=2_000_000)
    ap.add_argument("--files", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    data = make_rows(args.rows)
    per_file = args.rows // args.files
    present = data.column("s")[args.rows // 2].as_py()
    queries = {"s = present": [("s", "=", present)], "s = absent": [("s", "=", "user-5x")]}
    root = Path(tempfile.mkdtemp(prefix="bench-file-index-"))
    try:
        catalog = FileSystemCatalog(str(root / "wh"))
        catalog.create_database("b")
        tables = {}
        for i, (name, options) in enumerate(variants(per_file).items()):
            table = catalog.create_table(f"b.t{i}", data.schema, options={"bucket": "-1", **options})
            t0 = time.perf_counter()
            for start in range(0, args.rows, per_file):  # one file per commit
                write_table(table, data.slice(start, per_file))
            print(f"{name:<12} written in {time.perf_counter() - t0:.1f} s")
            tables[name] = table.refresh()
        print(f"{args.rows:,} rows in {args.files} files; medians of {args.repeat} reads, seconds")
        print(f"{'query':<14}" + "".join(f"{n:>22}" for n in tables))
        for q, flt in queries.items():
            cells, results = [], []
            for table in tables.values():
                files = sum(len(s.files) for s in table.scan(filter=flt).plan())
                seconds, result = timed(lambda t=table, f=flt: t.scan(filter=f).to_arrow(), args.repeat)
                cells.append(f"{seconds:.4f} ({files} files)")
                results.append(result.sort_by("id"))
            assert all(r.equals(results[0]) for r in results), f"results differ on {q}"
            print(f"{q:<14}" + "".join(f"{c:>22}" for c in cells) + f"   rows {results[0].num_rows}")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
