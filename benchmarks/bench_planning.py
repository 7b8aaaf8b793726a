"""Scan planning and one commit on a table with many live files and many snapshots, ours beside Java Paimon 0.9.

    .venv/bin/python benchmarks/bench_planning.py                                  # 5,000 files, 100 snapshots
    .venv/bin/python benchmarks/bench_planning.py --files 100000 --snapshots 1000  # the issue-11 size

The table (primary key (p, id), 16 partitions x 64 buckets, write-only) gets one real write, then
`--snapshots - 1` commits of synthetic file entries copied from the written files (data files that do not exist:
planning and commit only read metadata) through the real commit path, so its manifests are merged as Java merges
them (`manifest.merge-min-count`, `manifest.target-file-size`, full compaction of manifests at 16 MiB).

Each measurement runs in a fresh process, so its peak RSS is its own: planning a filtered scan
(`p = 3 AND id < 1000`: partition and key-stats pruning), planning a full scan, and one commit appending one file
(a one-row write). Java Paimon (the 0.9 oracle's jars, `$PAIMON_ORACLE_HOME`, default .cache/paimon-oracle) does the
same on the same table in its own JVM, timed inside the JVM (`benchmarks/java/PlanningTimer.java`, compiled here
into a temporary directory); its peak RSS is the JVM's VmHWM. The table is built once; ours and Java's plans read
the same snapshot, then ours commits and Java commits on top.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
from worker_json import run_json

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from table_format import FileSystemCatalog, open_table  # noqa: E402

ORACLE_HOME = Path(os.environ.get("PAIMON_ORACLE_HOME") or REPO / ".cache" / "paimon-oracle")
TIMER_SOURCE = REPO / "benchmarks" / "java" / "PlanningTimer.java"
PARTITIONS, BUCKETS = 16, 64
FILTER_PARTITION, FILTER_ID_BELOW = 3, 1000
SCHEMA = pa.schema([("p", pa.int32()), ("id", pa.int64()), ("v", pa.float64())])


def build_table(warehouse: str, *, files: int, snapshots: int) -> str:
    """One real write (one file per partition x bucket), then synthetic commits up to `files` live files."""
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db", exist_ok=True)
    table = catalog.create_table("db.many", SCHEMA, primary_keys=("p", "id"), partition_keys=("p",),
                                 options={"bucket": str(BUCKETS), "write-only": "true"})
    n = PARTITIONS * BUCKETS * 40
    ids = np.arange(n)
    writer = table.new_write()
    writer.write(pa.table({"p": (ids % PARTITIONS).astype(np.int32), "id": ids, "v": np.zeros(n)}, schema=SCHEMA))
    seeds = writer.prepare_commit()
    table.commit(seeds)
    seed_files = [(m, f) for m in seeds for f in m.new_files]
    remaining = max(0, files - len(seed_files))
    commits = max(1, snapshots - 1)
    seq = 1_000_000
    for c in range(commits):
        count = remaining // commits + (1 if c < remaining % commits else 0)
        by_message: dict[int, list] = {}
        for k in range(count):
            m, f = seed_files[(c * 7919 + k) % len(seed_files)]
            seq += 1
            by_message.setdefault(id(m), [m]).append(
                dataclasses.replace(f, file_name=f"data-synthetic-{c}-{k}-{f.file_name}", min_sequence_number=seq,
                                    max_sequence_number=seq))
        messages = [dataclasses.replace(v[0], new_files=tuple(v[1:])) for v in by_message.values()]
        table.commit(messages)
    return table.path


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def worker(path: str, op: str) -> None:
    """(subprocess) one measurement of ours; prints one JSON line."""
    table = open_table(path)
    start = time.perf_counter()
    if op == "commit":
        writer = table.new_write()
        writer.write(pa.table({"p": [FILTER_PARTITION], "id": [-1], "v": [0.0]}, schema=SCHEMA))
        table.commit(writer.prepare_commit())
        files = 1
    else:
        flt = [("p", "=", FILTER_PARTITION), ("id", "<", FILTER_ID_BELOW)] if op == "filtered" else None
        files = sum(len(s.files) for s in table.scan(filter=flt).plan())
    seconds = time.perf_counter() - start
    print(json.dumps({"op": op, "seconds": seconds, "files": files, "peak_rss_mb": _peak_rss_mb()}))



def ours(path: str, op: str) -> dict:
    return run_json([sys.executable, __file__, "--worker", path, op], {**os.environ, "PYTHONPATH": str(REPO)})


def java_classpath(build_dir: Path) -> str | None:
    """Compile the timer against the oracle's jars; None (with a note) when Java or the oracle is missing."""
    lib = ORACLE_HOME / "lib"
    if not lib.is_dir() or shutil.which("javac") is None:
        print(f"java: skipped (no javac or no {lib}; bash scripts/bootstrap.sh)")
        return None
    cp = f"{lib}/*"
    subprocess.run(["javac", "-nowarn", "-cp", cp, "-d", str(build_dir), str(TIMER_SOURCE)], check=True,
                   capture_output=True)
    return f"{build_dir}:{cp}"


def java(classpath: str, warehouse: str, op: str) -> dict:
    return run_json(["java", "-cp", classpath, "-Dorg.slf4j.simpleLogger.defaultLogLevel=error", "PlanningTimer",
                       warehouse, "db", "many", op, str(FILTER_PARTITION), str(FILTER_ID_BELOW)])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=5_000)
    parser.add_argument("--snapshots", type=int, default=100)
    parser.add_argument("--no-java", action="store_true", help="only ours")
    parser.add_argument("--keep", metavar="DIR", help="build the table in DIR and keep it; reuse it when it is there "
                        "(the commit measurements add two snapshots each run)")
    parser.add_argument("--worker", nargs=2, metavar=("PATH", "OP"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        return worker(*args.worker)
    with tempfile.TemporaryDirectory(prefix="bench-planning-") as tmp:
        warehouse = args.keep or str(Path(tmp) / "wh")
        start = time.perf_counter()
        existing = Path(warehouse) / "db.db" / "many"
        path = str(existing) if (existing / "snapshot").is_dir() else build_table(
            warehouse, files=args.files, snapshots=args.snapshots)
        table = open_table(path)
        snap = table.latest_snapshot()
        manifests = table.store.manifests.data_manifests(snap) if snap else []
        print(f"table: {args.files:,} files, {args.snapshots} snapshots, {len(manifests)} manifests "
              f"(built in {time.perf_counter() - start:.1f} s); load average {os.getloadavg()[0]:.1f}")
        classpath = None if args.no_java else java_classpath(Path(tmp) / "classes")
        print(f"{'operation':<22}{'ours s':>9}{'java s':>9}{'ours/java':>10}{'ours MB':>9}{'java MB':>9}  files")
        for op in ("filtered", "full", "commit"):
            mine = ours(path, op)
            theirs = java(classpath, warehouse, op) if classpath else None
            ratio = f"{mine['seconds'] / theirs['seconds']:>10.2f}" if theirs else f"{'-':>10}"
            print(f"{op:<22}{mine['seconds']:>9.2f}{theirs['seconds'] if theirs else float('nan'):>9.2f}{ratio}"
                  f"{mine['peak_rss_mb']:>9.0f}{theirs['peak_rss_mb'] if theirs else float('nan'):>9.0f}"
                  f"  {mine['files']}{'' if not theirs else ' / ' + str(theirs['files'])}")
    return None


if __name__ == "__main__":
    main()
