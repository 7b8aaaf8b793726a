"""Spark benchmarks: the paimon data source against Spark's own Parquet source, and distributed maintenance.

    .venv/bin/python benchmarks/bench_spark.py [--rows N] [--repeat R] [--master local[2]] [--sections ...]
    .venv/bin/python benchmarks/bench_spark.py --sections compaction,peer [--compaction-rows N] [--buckets B]
    .venv/bin/python benchmarks/bench_spark.py --planning-files 100000      # driver memory/time at 100k files

Data source (sections ``write``, ``read``, in this process on ``--master``): same rows both ways (generated in the
JVM: id, a long, a short string, a double), same Parquet codec (``--codec``). Write: ``df.write.format("paimon")``
into an append table vs ``df.write.parquet``; read: ``spark.read.format("paimon")`` and ``jobs.spark.read_table`` (files
that need no merge through Spark's Parquet reader, jobs/spark/native_read.py) vs ``spark.read.parquet``, each
materialized with the ``noop`` sink (every row and column). Prints the best of R runs per phase and the ratios
(issue 9 targets: read within 2x, write within 2x). Section ``connector``: the same read table and appends of the
same rows through Paimon's own Spark connector (0.9 on Spark 3.5, its own venv; skipped with a message when absent),
each engine beside its own Parquet scan.

Time to first result (section ``startup``): a fresh driver process per run (imports, JVM, session, first
``count()`` of a 385-row table, then a warm ``count()``), ``spark_session()`` + ``format("paimon")`` vs a plain
``SparkSession.builder.getOrCreate()`` + ``spark.read.parquet`` of the same rows, runs alternated, medians (issue 25
target: within 1.3x cold and warm).

Maintenance (sections ``compaction``, ``peer``): each Spark run is its own driver process (one SparkContext per
process), timed inside that driver after a warm-up job, so JVM start-up is not counted; best of R runs.

* compaction: distributed full compaction of a primary-key table with B (>= 16) buckets and 24M rows by default,
  local[1] vs local[2] (target: speed-up >= 1.7x, which needs 2 otherwise idle cores), with the time per phase and
  per worker; and the
  raw baseline: the same units in 1 vs 2 plain Python processes, without Spark (what the machine itself allows);
* peer: ours on local[2] vs ``CALL sys.compact`` of Paimon's own Spark connector (local[2], its own pyspark venv,
  see scripts/bootstrap_spark.sh) on copies of the same table (goal: ours not slower);
* planning (``--planning-files N``): a table whose latest snapshot lists N data files (real manifests, synthetic
  file entries), opened in a fresh process: compaction planning time, pickled size of the work units, peak RSS of
  the driver, and the orphan-cleaning reference set (docs/spark-scaling.md).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from worker_json import run_json

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from spark_maintenance_bench import (  # noqa: E402
    PEER_DRIVER,
    PEER_JSON,
    bench_planning,
    maintenance_sections,
    worker_compact,
    worker_planning,
)

from jobs.spark import read_table, spark_session  # noqa: E402
from table_format import FileSystemCatalog, write_table  # noqa: E402

NARROW = pa.schema([("id", pa.int64()), ("v", pa.int64()), ("s", pa.string()), ("x", pa.float64())])


def narrow_rows(spark: SparkSession, rows: int) -> DataFrame:
    return spark.range(rows).selectExpr("id", "id * 7919 % 100003 as v", "concat('name-', id % 10007) as s",
                                        "id / 3.0d as x")


def best_of(repeat: int, fn: Callable[[], object], before: Callable[[], object] | None = None) -> float:
    times = []
    for _ in range(repeat):
        if before is not None:
            before()
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def bench_write(spark: SparkSession, root: Path, *, rows: int, repeat: int, codec: str) -> dict[str, float]:
    """Seconds to write ``rows`` narrow rows: paimon append table vs Parquet (same DataFrame, cached)."""
    df = narrow_rows(spark, rows).cache()
    df.count()
    catalog = FileSystemCatalog(str(root / "warehouse"))
    catalog.create_database("bench", exist_ok=True)
    parquet = str(root / "write.parquet")

    def fresh_table() -> None:
        catalog.drop_table("bench.w") if "w" in catalog.list_tables("bench") else None
        catalog.create_table("bench.w", NARROW, options={"file.compression": codec})

    table_path = str(root / "warehouse" / "bench.db" / "w")
    paimon = best_of(repeat, lambda: df.write.format("paimon").mode("append").save(table_path), before=fresh_table)
    raw = best_of(repeat, lambda: df.write.mode("overwrite").option("compression", codec).parquet(parquet))
    df.unpersist()
    return {"paimon_write": paimon, "parquet_write": raw, "write_ratio": paimon / raw}


def bench_read(spark: SparkSession, root: Path, *, rows: int, repeat: int, codec: str) -> dict[str, float]:
    """Seconds to read ``rows`` narrow rows into Spark (noop sink): paimon data source vs spark.read.parquet."""
    catalog = FileSystemCatalog(str(root / "warehouse"))
    catalog.create_database("bench", exist_ok=True)
    if "r" not in catalog.list_tables("bench"):
        catalog.create_table("bench.r", NARROW, options={"file.compression": codec})
    table_path = str(root / "warehouse" / "bench.db" / "r")
    parquet = str(root / "read.parquet")
    df = narrow_rows(spark, rows)
    df.write.format("paimon").mode("overwrite").save(table_path)
    df.write.mode("overwrite").option("compression", codec).parquet(parquet)

    def scan(reader: DataFrame) -> None:
        reader.write.format("noop").mode("overwrite").save()

    paimon = best_of(repeat, lambda: scan(spark.read.format("paimon").load(table_path)))
    native = best_of(repeat, lambda: scan(read_table(spark, table_path)))  # planned in the timing, as a user's call
    raw = best_of(repeat, lambda: scan(spark.read.parquet(parquet)))
    assert read_table(spark, table_path).count() == rows
    # a selective filter (1% of the ids): without pushdown (the default) vs option("pushdown", "true"), which prunes
    # files by their min/max statistics (docs/spark.md explains why pushdown is opt-in)
    selective = f"id < {max(1, rows // 100)}"
    unpruned = best_of(repeat, lambda: scan(spark.read.format("paimon").load(table_path).where(selective)))
    pruned = best_of(repeat, lambda: scan(spark.read.format("paimon").option("pushdown", "true")
                                          .load(table_path).where(selective)))
    return {"paimon_read": paimon, "read_table": native, "parquet_read": raw, "read_ratio": paimon / raw,
            "read_table_ratio": native / raw,
            "filtered_read_default": unpruned, "filtered_read_pushdown": pruned,
            "filtered_pushdown_speedup_ratio": unpruned / pruned}



SCAN_ALL = "sum(hash(id, v, s, x))"  # every row and column read, one row out: neither engine can prune
GENERATED = ("id", "id * 7919 % 100003 AS v", "concat('name-', id % 10007) AS s", "id / 3.0d AS x")  # narrow_rows


def bench_vs_connector(spark: SparkSession, root: Path, *, rows: int, repeat: int, codec: str) -> dict[str, float]:
    """Ours vs Paimon's own Spark connector (Spark 3.5, its venv, local[2]) on the same tables: a scan of every
    column of the read table (``SCAN_ALL``, sums checked equal) and appends of the same generated rows; each engine
    also scans the same Parquet file, so the two Spark versions' own difference shows. Best of ``repeat`` after a
    warm-up on both sides."""
    if not PEER_JSON.is_file():
        print(f"connector: skipped, no {PEER_JSON} (bash scripts/bootstrap.sh)")
        return {}
    catalog = FileSystemCatalog(str(root / "warehouse"))
    catalog.create_database("bench", exist_ok=True)
    if "r" not in catalog.list_tables("bench"):
        bench_read(spark, root, rows=rows, repeat=1, codec=codec)
    for name in ("ours_w", "peer_w"):
        catalog.create_table(f"bench.{name}", NARROW, options={"file.compression": codec})
    tables = root / "warehouse" / "bench.db"
    parquet = str(root / "read.parquet")
    ours_sum = spark.read.format("paimon").load(str(tables / "r")).selectExpr(SCAN_ALL).collect()[0][0]

    def scan(reader: DataFrame) -> None:
        reader.selectExpr(SCAN_ALL).collect()

    ours = {
        "read": best_of(repeat + 1, lambda: scan(spark.read.format("paimon").load(str(tables / "r")))),
        "read_table": best_of(repeat + 1, lambda: scan(read_table(spark, str(tables / "r")))),
        "parquet_read": best_of(repeat + 1, lambda: scan(spark.read.parquet(parquet))),
        "write": best_of(repeat + 1, lambda: spark.range(rows).selectExpr(*GENERATED)
                         .write.format("paimon").mode("append").save(str(tables / "ours_w"))),
    }
    statements = {"read": f"SELECT {SCAN_ALL} FROM paimon.bench.r",
                  "parquet_read": f"SELECT {SCAN_ALL} FROM parquet.`{parquet}`",
                  "write": f"INSERT INTO paimon.bench.peer_w SELECT {', '.join(GENERATED)} FROM range({rows})"}
    order = [k for _ in range(repeat + 1) for k in statements]  # alternated; the first round warms up
    spec = json.loads(PEER_JSON.read_text())
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYSPARK_PYTHON", "SPARK_HOME")}
    env.update(SPARK_LOCAL_IP="127.0.0.1", PEER_CORES="2", PYSPARK_PYTHON=spec["python"])
    answers = run_json([spec["python"], str(PEER_DRIVER), spec["jar"], str(root / "warehouse"),
                    json.dumps([statements[k] for k in order])], env)
    peer_sums = {str(a["rows"][0][0]) for k, a in zip(order, answers, strict=True) if k == "read"}
    assert peer_sums == {str(ours_sum)}, (peer_sums, ours_sum)  # the same rows read by both
    theirs = {k: min(a["seconds"] for j, (o, a) in enumerate(zip(order, answers, strict=True))
                     if o == k and j >= len(statements)) for k in statements}
    print(f"connector: {spec['connector']} on pyspark {spec['pyspark']}, local[2]; scan sums equal ({ours_sum})")
    return {"ours_scan": ours["read"], "connector_scan": theirs["read"],
            "scan_vs_connector_ratio": ours["read"] / theirs["read"],
            "ours_read_table_scan": ours["read_table"],
            "read_table_vs_connector_ratio": ours["read_table"] / theirs["read"],
            "ours_parquet_scan": ours["parquet_read"], "connector_parquet_scan": theirs["parquet_read"],
            "scan_vs_parquet_ratio": ours["read"] / ours["parquet_read"],
            "connector_scan_vs_parquet_ratio": theirs["read"] / theirs["parquet_read"],
            "ours_append": ours["write"], "connector_append": theirs["write"],
            "append_vs_connector_ratio": ours["write"] / theirs["write"]}

STARTUP_ROWS = 385


def worker_startup(kind: str, root: str, master: str) -> None:
    """(subprocess, cold) seconds from process start to a session, to the first count() and a warm count():
    ``plain``: SparkSession.builder + spark.read.parquet; ``ours``: spark_session() + format("paimon")."""
    start = time.perf_counter()
    if kind == "plain":
        spark = (SparkSession.builder.master(master).config("spark.driver.host", "127.0.0.1")
                 .config("spark.driver.bindAddress", "127.0.0.1").config("spark.ui.enabled", "false").getOrCreate())

        def read() -> DataFrame:
            return spark.read.parquet(f"{root}/rows.parquet")
    else:
        spark = spark_session(master)

        def read() -> DataFrame:
            return spark.read.format("paimon").load(f"{root}/warehouse/bench.db/small")
    session = time.perf_counter() - start
    try:
        assert read().count() == STARTUP_ROWS
        first = time.perf_counter() - start
        warm = best_of(3, lambda: read().count())
    finally:
        spark.stop()
    print(json.dumps({"session": session, "first_count": first, "warm_count": warm}))


def bench_startup(args: argparse.Namespace) -> dict[str, float]:
    """Cold start (a fresh driver process: imports, JVM, session, first count() of a 385-row table) and warm
    count(), ours vs plain Spark Parquet on the same rows; runs alternate, medians (issue 25 target: 1.3x)."""
    import pyarrow.parquet as pq  # noqa: PLC0415

    master = args.master or os.environ.get("SPARK_MASTER") or "local[2]"
    runs: dict[str, list[dict[str, float]]] = {"plain": [], "ours": []}
    with tempfile.TemporaryDirectory(prefix="bench-spark-startup-") as root:
        rows = pa.table({"id": np.arange(STARTUP_ROWS), "v": np.arange(STARTUP_ROWS) * 7,
                         "s": [f"name-{i}" for i in range(STARTUP_ROWS)], "x": np.arange(STARTUP_ROWS) / 3})
        catalog = FileSystemCatalog(f"{root}/warehouse")
        catalog.create_database("bench")
        write_table(catalog.create_table("bench.small", rows.schema), rows)
        pq.write_table(rows, f"{root}/rows.parquet")
        env = {**os.environ, "PYTHONPATH": str(REPO), "SPARK_LOCAL_IP": "127.0.0.1"}
        for _ in range(max(3, args.repeat)):
            for kind in runs:
                runs[kind].append(run_json([sys.executable, __file__, "--worker-startup", kind, root, master], env))
    med = {f"{k}_{m}": float(np.median([r[m] for r in runs[k]])) for k in runs for m in runs[k][0]}
    return {**med, "startup_cold_ratio": med["ours_first_count"] / med["plain_first_count"],
            "startup_warm_ratio": med["ours_warm_count"] / med["plain_warm_count"]}


def spark_sections(names: list[str], args: argparse.Namespace) -> dict[str, float]:
    """The data source sections, in one SparkSession of this process."""
    spark = spark_session(args.master, app_name="bench_spark")
    root = Path(tempfile.mkdtemp(prefix="bench_spark_"))
    results: dict[str, float] = {}
    try:
        narrow_rows(spark, 100_000).write.format("noop").mode("overwrite").save()  # JVM warm-up
        sections = {"write": bench_write, "read": bench_read, "connector": bench_vs_connector}
        for name in names:
            results.update(sections[name](spark, root, rows=args.rows, repeat=args.repeat, codec=args.codec))
    finally:
        spark.stop()
        shutil.rmtree(root, ignore_errors=True)
    return results


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=3_000_000)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--master", default=None, help="Spark master (default $SPARK_MASTER, then local[2])")
    parser.add_argument("--codec", default="zstd",
                        help="Parquet codec of both sides (zstd: Paimon's default; Spark's own default is snappy)")
    parser.add_argument("--sections", default="startup,write,read,connector,compaction,peer",
                        help="comma-separated: startup, write, read, connector, compaction, peer")
    # large enough that Spark's fixed cost per job (0.1-0.3 s on local mode) does not hide the units' speed-up
    parser.add_argument("--compaction-rows", type=int, default=24_000_000)
    parser.add_argument("--buckets", type=int, default=16)
    parser.add_argument("--commits", type=int, default=4)
    parser.add_argument("--planning-files", type=int, default=0)
    parser.add_argument("--short", action="store_true",
                        help="a quick run: 300,000 rows, 1,000,000 compaction rows, repeat 1")
    parser.add_argument("--worker-compact", nargs=2, metavar=("MASTER", "PATH"), help=argparse.SUPPRESS)
    parser.add_argument("--worker-planning", metavar="PATH", help=argparse.SUPPRESS)
    parser.add_argument("--worker-startup", nargs=3, metavar=("KIND", "ROOT", "MASTER"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.short:
        args.rows, args.compaction_rows, args.repeat = 300_000, 1_000_000, 1
    if args.worker_compact:
        return worker_compact(*args.worker_compact)
    if args.worker_planning:
        return worker_planning(args.worker_planning)
    if args.worker_startup:
        return worker_startup(*args.worker_startup)
    if args.planning_files:
        with tempfile.TemporaryDirectory(prefix="bench-spark-planning-") as tmp:
            for k, v in bench_planning(args.planning_files, Path(tmp)).items():
                print(f"  {k:<32}{v:>12.3f}" if isinstance(v, float) else f"  {k:<32}{v:>12}")
        return None
    names = [n.strip() for n in args.sections.split(",") if n.strip()]
    results: dict[str, float] = {}
    if "startup" in names:
        results.update(bench_startup(args))
    if any(n in ("write", "read", "connector") for n in names):
        results.update(spark_sections([n for n in names if n in ("write", "read", "connector")], args))
    if any(n in ("compaction", "peer") for n in names):
        results.update(maintenance_sections(names, args))
    rows = f"rows={args.rows:,} " if any(n in ("write", "read", "connector") for n in names) else ""
    print(f"{rows}master={args.master or 'default'} codec={args.codec} repeat={args.repeat} (best of; startup: medians)")
    for key, value in results.items():
        unit = "x" if key.endswith("ratio") else "s"
        print(f"  {key:<32} {value:8.2f}{unit}")
    one, five, fifteen = os.getloadavg()
    print(f"load average (1, 5, 15 min) at the end: {one:.1f} {five:.1f} {fifteen:.1f} on {os.cpu_count()} cores "
          "(other processes skew the timings; the compaction speed-up needs 2 idle cores)")
    return None


if __name__ == "__main__":
    main()
