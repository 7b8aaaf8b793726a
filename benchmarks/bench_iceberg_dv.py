"""The extra time a commit that changes deletion vectors spends on Iceberg v3 metadata (Puffin deletion vectors).

    .venv/bin/python benchmarks/bench_iceberg_dv.py                  # 10 and 100 snapshots, 20 timed commits each
    .venv/bin/python benchmarks/bench_iceberg_dv.py --snapshots 10 --commits 40

Two twin primary-key tables with deletion vectors (4 buckets, 40,000 rows fully compacted), one with
`metadata.iceberg.format-version` = 3 and one without Iceberg metadata, get the same history of delete commits (each
deletes 20 keys spread over the buckets, so the commit's compaction changes every bucket's deletion vector); then the
same delete commits alternate between the twins and each is timed. Printed: median commit time of each and the
difference (the Iceberg metadata's cost per commit, Puffin file and delete manifests included).
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

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string())])
KINDED = SCHEMA.append(pa.field("_row_kind", pa.string()))
ROWS = 40_000
OPTIONS = {"bucket": "4", "deletion-vectors.enabled": "true", "snapshot.num-retained.min": "100000",
           "snapshot.time-retained": "100 d"}
ICEBERG = {"metadata.iceberg.storage": "table-location", "metadata.iceberg.format-version": "3"}


def _deletes(i: int) -> pa.Table:
    ids = list(range(i, ROWS, ROWS // 20))[:20]
    return pa.table({"id": ids, "v": [None] * len(ids), "_row_kind": ["-D"] * len(ids)}, schema=KINDED)


def _twins(root: str, snapshots: int) -> tuple[Table, Table]:
    catalog = FileSystemCatalog(root)
    catalog.create_database("b", exist_ok=True)
    tables = []
    for name, options in (("plain", OPTIONS), ("iceberg", {**OPTIONS, **ICEBERG})):
        t = catalog.create_table(f"b.{name}_{snapshots}", SCHEMA, primary_keys=["id"], options=options)
        write_table(t, pa.table({"id": range(ROWS), "v": [f"v{i}" for i in range(ROWS)]}, schema=SCHEMA))
        t.maintenance.compact(full=True)
        for i in range(snapshots // 2):  # a delete commit makes two snapshots: the write and its compaction
            write_table(t, _deletes(i))
        tables.append(t)
    return tables[0], tables[1]


def run(snapshots: int, commits: int, root: str) -> None:
    plain, iceberg = _twins(root, snapshots)
    times: dict[str, list[float]] = {"plain": [], "iceberg": []}
    for i in range(commits):
        for name, table in (("plain", plain), ("iceberg", iceberg)) if i % 2 else (("iceberg", iceberg), ("plain", plain)):
            t = time.perf_counter()
            write_table(table, _deletes(1000 + i))
            times[name].append(time.perf_counter() - t)
    p, ice = statistics.median(times["plain"]), statistics.median(times["iceberg"])
    meta = os.path.join(iceberg.path, "metadata")
    puffins = [n for n in os.listdir(meta) if n.endswith(".puffin")]
    assert puffins, "the timed commits wrote no Puffin deletion vectors"
    print(f"{snapshots:>6} snapshots: delete commit {p * 1000:7.1f} ms without, {ice * 1000:7.1f} ms with Iceberg v3 "
          f"metadata (+{(ice - p) * 1000:.1f} ms, {ice / p:.2f}x); {len(puffins)} Puffin files in metadata/")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--snapshots", type=int, nargs="+", default=[10, 100])
    parser.add_argument("--commits", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as root:
        for n in args.snapshots:
            run(n, args.commits, root)


if __name__ == "__main__":
    main()
