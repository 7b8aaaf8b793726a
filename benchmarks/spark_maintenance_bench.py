"""bench_spark.py's maintenance sections (``compaction``, ``peer``, ``--planning-files``): each Spark run in its own
driver process (``bench_spark.py --worker-compact``/``--worker-planning``), on copies of one primary-key table."""

from __future__ import annotations

import argparse
import concurrent.futures
import dataclasses
import json
import os
import pickle
import resource
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pyarrow as pa
from worker_json import run_json

REPO = Path(__file__).resolve().parents[1]
BENCH_SPARK = Path(__file__).with_name("bench_spark.py")
sys.path.insert(0, str(REPO))
from jobs.spark import spark_session  # noqa: E402
from jobs.spark.fan_out import fan_out  # noqa: E402
from table_format import CompactOutcome, CompactTask, FileSystemCatalog, Table, open_table, write_table  # noqa: E402

PEER_JSON = REPO / ".cache" / "paimon-spark" / "peer.json"
PEER_DRIVER = REPO / "tests" / "spark" / "peer" / "paimon_spark_driver.py"
PK_SCHEMA = pa.schema([("id", pa.int64()), ("k", pa.string()), ("v", pa.float64()), ("s", pa.string())])


def build_table(warehouse: str, *, rows: int, buckets: int, commits: int) -> str:
    """A primary-key table with `buckets` buckets and `commits` overlapping write-only commits (level-0 files)."""
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db", exist_ok=True)
    table = catalog.create_table("db.t", PK_SCHEMA, primary_keys=("id",),
                                 options={"bucket": str(buckets), "write-only": "true"})
    rng = np.random.default_rng(7)
    per = rows // commits
    for c in range(commits):
        ids = rng.integers(0, rows, per)
        write_table(table, pa.table({
            "id": ids, "k": pa.array(ids % 1000).cast(pa.string()),
            "v": rng.random(per), "s": pa.array(np.arange(per) + c * per).cast(pa.string()),
        }, schema=PK_SCHEMA))
    return table.path


# ------------------------------------------------------------------------------------------- driver processes


def _warm(_: object) -> object:
    import polars  # noqa: F401, PLC0415 - warm-up: what a compaction unit imports on the executor
    import pyarrow.parquet  # noqa: F401, PLC0415

    import table_format  # noqa: F401, PLC0415

    return _


def _timed_unit(table: Table) -> Callable[[CompactTask], tuple[CompactOutcome, float, int]]:
    def run(task: CompactTask) -> tuple[CompactOutcome, float, int]:
        start = time.perf_counter()
        outcome = table.maintenance.run_compaction_task(task)
        return outcome, time.perf_counter() - start, os.getpid()
    return run


def worker_compact(master: str, path: str) -> None:
    """(subprocess) one distributed full compaction on `master`, through the seam ``jobs.spark.compact`` runs
    (plan, fan_out, commit), each phase timed; prints {"seconds": ..., phases, per-worker unit seconds}."""
    from pyspark import cloudpickle  # noqa: PLC0415

    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # executors do not have benchmarks/ on their path
    spark = spark_session(master=master, app_name="bench-compact")
    try:
        spark.sparkContext.parallelize(range(8), 8).map(_warm).count()  # warm-up: JVM, Python workers, imports
        start = time.perf_counter()
        table = open_table(path)
        tasks = table.maintenance.plan_compaction(full=True)
        planned = time.perf_counter()
        ran = fan_out(spark, tasks, _timed_unit(table), weights=[sum(f.file_size for f in t.files) for t in tasks],
                      job="bench compact")
        fanned = time.perf_counter()
        assert not ran.failures, ran.failures
        result = table.maintenance.commit_compaction([o for o, _, _ in ran.outcomes])
        end = time.perf_counter()
    finally:
        spark.stop()
    per_worker: dict[int, float] = {}
    for _, seconds, pid in ran.outcomes:
        per_worker[pid] = per_worker.get(pid, 0.0) + seconds
    print(json.dumps({"seconds": end - start, "plan": planned - start, "spark_job": fanned - planned,
                      "commit": end - fanned, "units": len(tasks), "worker_seconds": sorted(per_worker.values()),
                      "result": dataclasses.asdict(result)}))



def ours_run(master: str, path: str) -> dict:
    env = {**os.environ, "PYTHONPATH": str(REPO), "SPARK_LOCAL_IP": "127.0.0.1"}
    answer = run_json([sys.executable, str(BENCH_SPARK), "--worker-compact", master, path], env)
    assert answer["result"]["snapshot_id"] is not None, answer
    return answer


def ours(master: str, path: str) -> float:
    return float(ours_run(master, path)["seconds"])


def peer(warehouse: str, cores: int) -> tuple[float, str]:
    spec = json.loads(PEER_JSON.read_text())
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYSPARK_PYTHON", "SPARK_HOME")}
    env.update(SPARK_LOCAL_IP="127.0.0.1", PEER_CORES=str(cores), PYSPARK_PYTHON=spec["python"])
    answer = run_json([spec["python"], str(PEER_DRIVER), spec["jar"], warehouse,
                   json.dumps(["USE paimon", "SELECT 1", "CALL sys.compact(table => 'db.t')"])], env)
    return float(answer[-1]["seconds"]), spec["connector"]


def _copy(src_wh: str, root: Path, name: str) -> tuple[str, str]:
    dst = root / name
    shutil.copytree(src_wh, dst)
    return str(dst), str(dst / "db.db" / "t")


def bench_compaction_scaling(src_wh: str, root: Path, repeat: int) -> dict[str, float]:
    """Distributed full compaction, local[1] vs local[2], each on its own copy of the table; best of `repeat`.
    Also where the time goes: the Spark job's share outside the units, and the busiest worker's unit seconds
    (the speed-up the work itself allows is local[1]'s unit seconds over local[2]'s busiest worker)."""
    runs = {m: [ours_run(m, _copy(src_wh, root, f"{m[-2]}-{i}")[1]) for i in range(repeat)]
            for m in ("local[1]", "local[2]")}
    for master, answers in runs.items():
        for a in answers:
            print(f"  {master}: {a['seconds']:.2f} s = plan {a['plan']:.2f} + Spark job {a['spark_job']:.2f} "
                  f"+ commit {a['commit']:.2f}; {a['units']} units, unit seconds per worker "
                  f"{[round(w, 2) for w in a['worker_seconds']]}")
    one = min(runs["local[1]"], key=lambda a: a["seconds"])
    two = min(runs["local[2]"], key=lambda a: a["seconds"])
    return {"compact_local1": one["seconds"], "compact_local2": two["seconds"],
            "compact_speedup_ratio": one["seconds"] / two["seconds"],
            "compact_unit_work_speedup_ratio": sum(one["worker_seconds"]) / max(two["worker_seconds"]),
            "compact_spread_local1_ratio": max(a["seconds"] for a in runs["local[1]"]) / one["seconds"],
            "compact_spread_local2_ratio": max(a["seconds"] for a in runs["local[2]"]) / two["seconds"]}


def _raw_unit(args: tuple[str, CompactTask]) -> CompactOutcome:
    path, task = args
    return open_table(path).maintenance.run_compaction_task(task)


def raw_processes(path: str, workers: int) -> float:
    """The raw baseline without Spark: the same compaction units run by `workers` plain Python processes (a warm
    pool, biggest units first), not committed (their files are deleted afterwards); seconds."""
    table = open_table(path)
    tasks = sorted(table.maintenance.plan_compaction(full=True), key=lambda t: -sum(f.file_size for f in t.files))
    with concurrent.futures.ProcessPoolExecutor(max_workers=workers) as pool:
        list(pool.map(_warm, range(workers * 2)))
        start = time.perf_counter()
        outcomes = list(pool.map(_raw_unit, [(path, t) for t in tasks]))
        seconds = time.perf_counter() - start
    table.maintenance.abort_compaction(outcomes)
    return seconds


def bench_raw_scaling(src_wh: str, root: Path, repeat: int) -> dict[str, float]:
    """How this machine scales the units' work from 1 to 2 processes, without Spark (the ceiling for local[2])."""
    one = min(raw_processes(_copy(src_wh, root, f"raw1-{i}")[1], 1) for i in range(repeat))
    two = min(raw_processes(_copy(src_wh, root, f"raw2-{i}")[1], 2) for i in range(repeat))
    return {"raw_1_process": one, "raw_2_processes": two, "raw_process_speedup_ratio": one / two}


def bench_vs_paimon_connector(src_wh: str, root: Path, repeat: int) -> dict[str, float]:
    """Ours on local[2] vs CALL sys.compact of Paimon's Spark connector on local[2], on copies of one table."""
    mine = min(ours("local[2]", _copy(src_wh, root, f"ours-{i}")[1]) for i in range(repeat))
    runs = [peer(_copy(src_wh, root, f"peer-{i}")[0], 2) for i in range(repeat)]
    theirs, connector = min(r[0] for r in runs), runs[0][1]
    print(f"peer: {connector} (CALL sys.compact) on local[2]")
    return {"compact_ours_local2": mine, "compact_connector_local2": theirs, "compact_ours_vs_connector_ratio": mine / theirs}


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
    out = run_json([sys.executable, str(BENCH_SPARK), "--worker-planning", path],
               {**os.environ, "PYTHONPATH": str(REPO)})
    return {"build_s": built, **out}


# ------------------------------------------------------------------------------------------- time to first result

def maintenance_sections(names: list[str], args: argparse.Namespace) -> dict[str, float]:
    """The compaction sections, each Spark run in its own driver process, on copies of one table."""
    results: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="bench-spark-maintenance-") as tmp:
        root = Path(tmp)
        src = str(root / "src")
        start = time.perf_counter()
        build_table(src, rows=args.compaction_rows, buckets=args.buckets, commits=args.commits)
        print(f"compaction table: {args.compaction_rows:,} rows, {args.buckets} buckets, {args.commits} commits "
              f"(built in {time.perf_counter() - start:.1f} s); full compaction, driver-timed")
        if "compaction" in names:
            results.update(bench_compaction_scaling(src, root, args.repeat))
            results.update(bench_raw_scaling(src, root, args.repeat))
        if "peer" in names:
            if PEER_JSON.is_file():
                results.update(bench_vs_paimon_connector(src, root, args.repeat))
            else:
                print(f"peer: skipped, no {PEER_JSON} (bash scripts/bootstrap.sh)")
    return results
