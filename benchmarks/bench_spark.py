"""Spark benchmarks of distributed maintenance (jobs.spark). Each Spark run is its own driver process (one
SparkContext per process), timed from inside the driver after a warm-up job, so JVM start-up is not counted.

    .venv/bin/python benchmarks/bench_spark.py [--rows N] [--buckets B] [--commits C] [--repeat R] [--skip-peer]
    .venv/bin/python benchmarks/bench_spark.py --planning-files 100000      # driver memory/time at 100k files

* scaling: distributed full compaction of a primary-key table with B (>= 16) buckets, local[1] vs local[2]
  (target: speed-up >= 1.7x on an otherwise idle 2-core machine);
* peer: ours on local[2] vs ``CALL sys.compact`` of Paimon's own Spark connector (local[2], its own pyspark venv,
  see scripts/bootstrap_spark.sh) on copies of the same table (goal: ours not slower);
* planning: a table whose latest snapshot lists N data files (real manifests, synthetic file entries), opened in a
  fresh process: compaction planning time, pickled size of the work units, peak RSS of the driver; and the same
  for the orphan-cleaning reference set.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import pickle
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from table_format import FileSystemCatalog, open_table, write_table  # noqa: E402

PEER_JSON = REPO / ".cache" / "paimon-spark" / "peer.json"
PEER_DRIVER = REPO / "tests" / "spark" / "peer" / "paimon_spark_driver.py"
SCHEMA = pa.schema([("id", pa.int64()), ("k", pa.string()), ("v", pa.float64()), ("s", pa.string())])


def build_table(warehouse: str, *, rows: int, buckets: int, commits: int) -> str:
    """A primary-key table with `buckets` buckets and `commits` overlapping write-only commits (level-0 files)."""
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db", exist_ok=True)
    table = catalog.create_table("db.t", SCHEMA, primary_keys=("id",),
                                 options={"bucket": str(buckets), "write-only": "true"})
    rng = np.random.default_rng(7)
    per = rows // commits
    for c in range(commits):
        ids = rng.integers(0, rows, per)
        write_table(table, pa.table({
            "id": ids, "k": pa.array(ids % 1000).cast(pa.string()),
            "v": rng.random(per), "s": pa.array(np.arange(per) + c * per).cast(pa.string()),
        }, schema=SCHEMA))
    return table.path


# ------------------------------------------------------------------------------------------- driver processes


def _warm(_: object) -> object:
    import polars  # noqa: F401, PLC0415 - warm-up: what a compaction unit imports on the executor
    import pyarrow.parquet  # noqa: F401, PLC0415

    import table_format  # noqa: F401, PLC0415

    return _


def worker_compact(master: str, path: str) -> None:
    """(subprocess) one distributed full compaction on `master`; prints {"seconds": ...}."""
    from jobs.spark import compact, spark_session  # noqa: PLC0415 - pyspark only in the worker process

    spark = spark_session(master=master, app_name="bench-compact")
    try:
        spark.sparkContext.parallelize(range(8), 8).map(_warm).count()  # warm-up: JVM, Python workers, imports
        start = time.perf_counter()
        result = compact(spark, path, full=True)
        seconds = time.perf_counter() - start
    finally:
        spark.stop()
    print(json.dumps({"seconds": seconds, "result": dataclasses.asdict(result)}))


def _run(cmd: list[str], env: dict[str, str] | None = None) -> dict:
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"{cmd[:3]} failed:\n{proc.stderr[-4000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def ours(master: str, path: str) -> float:
    env = {**os.environ, "PYTHONPATH": str(REPO), "SPARK_LOCAL_IP": "127.0.0.1"}
    answer = _run([sys.executable, __file__, "--worker-compact", master, path], env)
    assert answer["result"]["snapshot_id"] is not None, answer
    return float(answer["seconds"])


def peer(warehouse: str, cores: int) -> tuple[float, str]:
    spec = json.loads(PEER_JSON.read_text())
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYSPARK_PYTHON", "SPARK_HOME")}
    env.update(SPARK_LOCAL_IP="127.0.0.1", PEER_CORES=str(cores), PYSPARK_PYTHON=spec["python"])
    answer = _run([spec["python"], str(PEER_DRIVER), spec["jar"], warehouse,
                   json.dumps(["USE paimon", "SELECT 1", "CALL sys.compact(table => 'db.t')"])], env)
    return float(answer[-1]["seconds"]), spec["connector"]


def _copy(src_wh: str, root: Path, name: str) -> tuple[str, str]:
    dst = root / name
    shutil.copytree(src_wh, dst)
    return str(dst), str(dst / "db.db" / "t")


def bench_compaction_scaling(src_wh: str, root: Path, repeat: int) -> dict[str, float]:
    """Distributed full compaction, local[1] vs local[2], each on its own copy of the table; best of `repeat`."""
    one = min(ours("local[1]", _copy(src_wh, root, f"one-{i}")[1]) for i in range(repeat))
    two = min(ours("local[2]", _copy(src_wh, root, f"two-{i}")[1]) for i in range(repeat))
    return {"local[1] s": one, "local[2] s": two, "speed-up": one / two}


def bench_vs_paimon_connector(src_wh: str, root: Path, repeat: int) -> dict[str, float | str]:
    """Ours on local[2] vs CALL sys.compact of Paimon's Spark connector on local[2], on copies of one table."""
    mine = min(ours("local[2]", _copy(src_wh, root, f"ours-{i}")[1]) for i in range(repeat))
    runs = [peer(_copy(src_wh, root, f"peer-{i}")[0], 2) for i in range(repeat)]
    theirs, connector = min(r[0] for r in runs), runs[0][1]
    return {"ours local[2] s": mine, f"{connector} s": theirs, "ours / theirs": mine / theirs}


# ---------------------------------------------------------------------------------------------- planning


def build_many_files(warehouse: str, files: int) -> str:
    """A table whose latest snapshot lists `files` data files: one real write (16 partitions x 64 buckets), then
    one commit of synthetic entries copied from its files (real manifests, data files that do not exist)."""
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db", exist_ok=True)
    schema = pa.schema([("p", pa.int32()), ("id", pa.int64()), ("v", pa.float64())])
    table = catalog.create_table("db.many", schema, primary_keys=("p", "id"), partition_keys=("p",),
                                 options={"bucket": "64", "write-only": "true"})
    n = 40_000
    writer = table.new_write()
    writer.write(pa.table({"p": np.arange(n, dtype=np.int32) % 16, "id": np.arange(n), "v": np.zeros(n)},
                          schema=schema))
    seeds = writer.prepare_commit()
    per = max(1, -(-files // sum(len(m.new_files) for m in seeds)))  # at least `files` in all
    messages = [dataclasses.replace(m, new_files=tuple(
        dataclasses.replace(f, file_name=f"data-synthetic-{i}-{f.file_name}", min_sequence_number=i,
                            max_sequence_number=i) for f in m.new_files for i in range(per))) for m in seeds]
    table.commit(messages)
    return table.path


def worker_planning(path: str) -> None:
    """(subprocess) driver-side planning on a big table; prints times, sizes and peak RSS."""
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    table = open_table(path)
    start = time.perf_counter()
    tasks = table.maintenance.plan_compaction(full=True)
    plan_s = time.perf_counter() - start
    task_bytes = sum(len(pickle.dumps(t)) for t in tasks)
    rss_plan = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    plan = table.maintenance.plan_orphan_clean()
    used = table.maintenance.used_file_names(plan)
    used_s = time.perf_counter() - start
    rss_used = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({
        "files": sum(len(t.files) for t in tasks), "tasks": len(tasks), "plan_compaction_s": plan_s,
        "pickled_tasks_mb": task_bytes / 2**20, "rss_after_imports_mb": rss0 / 1024,
        "peak_rss_after_plan_mb": rss_plan / 1024, "referenced_names": len(used), "used_file_names_s": used_s,
        "bucket_dirs": len(plan.bucket_dirs), "peak_rss_after_orphan_plan_mb": rss_used / 1024,
    }))


def bench_planning(files: int, root: Path) -> dict[str, float]:
    start = time.perf_counter()
    path = build_many_files(str(root / "many"), files)
    built = time.perf_counter() - start
    out = _run([sys.executable, __file__, "--worker-planning", path],
               {**os.environ, "PYTHONPATH": str(REPO)})
    return {"build_s": built, **out}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=4_000_000)
    ap.add_argument("--buckets", type=int, default=16)
    ap.add_argument("--commits", type=int, default=4)
    ap.add_argument("--repeat", type=int, default=2, help="best of this many runs per measurement")
    ap.add_argument("--skip-peer", action="store_true")
    ap.add_argument("--planning-files", type=int, default=0)
    ap.add_argument("--worker-compact", nargs=2, metavar=("MASTER", "PATH"))
    ap.add_argument("--worker-planning", metavar="PATH")
    args = ap.parse_args()
    if args.worker_compact:
        return worker_compact(*args.worker_compact)
    if args.worker_planning:
        return worker_planning(args.worker_planning)
    with tempfile.TemporaryDirectory(prefix="bench-spark-") as tmp:
        root = Path(tmp)
        if args.planning_files:
            for k, v in bench_planning(args.planning_files, root).items():
                print(f"{k:<32}{v:>12.3f}" if isinstance(v, float) else f"{k:<32}{v:>12}")
            return None
        src = str(root / "src")
        start = time.perf_counter()
        build_table(src, rows=args.rows, buckets=args.buckets, commits=args.commits)
        print(f"table: {args.rows} rows, {args.buckets} buckets, {args.commits} commits "
              f"(built in {time.perf_counter() - start:.1f} s); full compaction, driver-timed, best of {args.repeat}")
        sections = {"compaction scaling": bench_compaction_scaling(src, root, args.repeat)}
        if not args.skip_peer and PEER_JSON.is_file():
            sections["vs Paimon's Spark connector"] = bench_vs_paimon_connector(src, root, args.repeat)
        for name, values in sections.items():
            print(f"-- {name}")
            for k, v in values.items():
                print(f"   {k:<48}{v:>8.2f}")
        one, five, fifteen = os.getloadavg()
        print(f"load average (1, 5, 15 min) at the end: {one:.1f} {five:.1f} {fifteen:.1f} on {os.cpu_count()} cores "
              "(other processes skew the speed-up: it needs 2 idle cores)")
    return None


if __name__ == "__main__":
    main()
