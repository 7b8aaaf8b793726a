"""The extra time a commit spends writing Iceberg metadata (`metadata.iceberg.storage`), at 10 and 1,000 snapshots.

    .venv/bin/python benchmarks/bench_iceberg.py                 # 10 and 1,000 snapshots, 20 timed commits each
    .venv/bin/python benchmarks/bench_iceberg.py --snapshots 10 100 --commits 40

Two twin append tables (partitioned, 4 partitions), one with Iceberg metadata and one without, get the same history
of small commits (snapshot retention raised so every snapshot stays, and with it every Iceberg snapshot); then the
same one-batch commits alternate between the twins and each is timed. Printed: median commit time of each, the
difference (the Iceberg metadata's cost per commit), and the size of the current metadata JSON.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

import pyarrow as pa

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from table_format import FileSystemCatalog, Table, write_table  # noqa: E402

SCHEMA = pa.schema([("id", pa.int64()), ("p", pa.string()), ("v", pa.float64())])
KEEP = {"snapshot.num-retained.min": "100000", "snapshot.time-retained": "100 d", "write-only": "true"}


def _batch(i: int, rows: int = 1000) -> pa.Table:
    ids = pa.array(range(i * rows, (i + 1) * rows), pa.int64())
    return pa.table({"id": ids, "p": [f"p{i % 4}"] * rows, "v": pa.array([0.5] * rows)}, schema=SCHEMA)


def _twins(root: str, snapshots: int) -> tuple[Table, Table]:
    catalog = FileSystemCatalog(root)
    catalog.create_database("b", exist_ok=True)
    plain = catalog.create_table(f"b.plain_{snapshots}", SCHEMA, partition_keys=["p"], options=KEEP)
    iceberg = catalog.create_table(f"b.iceberg_{snapshots}", SCHEMA, partition_keys=["p"],
                                   options={**KEEP, "metadata.iceberg.storage": "table-location"})
    for i in range(snapshots):
        write_table(plain, _batch(i))
        write_table(iceberg, _batch(i))
    return plain, iceberg


def run(snapshots: int, commits: int, root: str) -> None:
    t0 = time.perf_counter()
    plain, iceberg = _twins(root, snapshots)
    built = time.perf_counter() - t0
    times: dict[str, list[float]] = {"plain": [], "iceberg": []}
    for i in range(commits):
        for name, table in (("plain", plain), ("iceberg", iceberg)) if i % 2 else (("iceberg", iceberg), ("plain", plain)):
            t = time.perf_counter()
            write_table(table, _batch(snapshots + i))
            times[name].append(time.perf_counter() - t)
    p, ice = statistics.median(times["plain"]), statistics.median(times["iceberg"])
    meta = os.path.join(iceberg.path, "metadata")
    with open(os.path.join(meta, "version-hint.text")) as f:
        current = f.read().strip()
    size = os.path.getsize(os.path.join(meta, f"v{current}.metadata.json"))
    print(f"{snapshots:>6} snapshots: commit {p * 1000:7.1f} ms without, {ice * 1000:7.1f} ms with Iceberg metadata "
          f"(+{(ice - p) * 1000:.1f} ms, {ice / p:.2f}x); metadata JSON {size / 1024:.0f} KiB, "
          f"{len(os.listdir(meta))} files in metadata/ (history built in {built:.0f} s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--snapshots", type=int, nargs="+", default=[10, 1000])
    parser.add_argument("--commits", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as root:
        for n in args.snapshots:
            run(n, args.commits, root)


if __name__ == "__main__":
    main()
