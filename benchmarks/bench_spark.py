"""Spark benchmark: the paimon data source against Spark's own Parquet source, in one run on local[2].

    .venv/bin/python benchmarks/bench_spark.py [--rows N] [--repeat R] [--master local[2]]

Same rows both ways (generated in the JVM: id, a long, a short string, a double), same Parquet codec (``--codec``). Write: ``df.write.format("paimon")``
into an append table vs ``df.write.parquet``; read: ``spark.read.format("paimon")`` vs ``spark.read.parquet``,
both materialized with the ``noop`` sink (every row and column). Prints the best of R runs per phase and the ratios
(issue 9 targets: read within 2x, write within 2x). Sections are functions (``bench_read``, ``bench_write``) so that
other sections (compaction) can be added to ``main``.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from jobs.spark import spark_session  # noqa: E402
from table_format import FileSystemCatalog  # noqa: E402

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
    raw = best_of(repeat, lambda: scan(spark.read.parquet(parquet)))
    return {"paimon_read": paimon, "parquet_read": raw, "read_ratio": paimon / raw}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=3_000_000)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--master", default=None, help="Spark master (default $SPARK_MASTER, then local[2])")
    parser.add_argument("--codec", default="zstd",
                        help="Parquet codec of both sides (zstd: Paimon's default; Spark's own default is snappy)")
    parser.add_argument("--sections", default="write,read", help="comma-separated: write, read")
    args = parser.parse_args(argv)
    spark = spark_session(args.master, app_name="bench_spark")
    root = Path(tempfile.mkdtemp(prefix="bench_spark_"))
    results: dict[str, float] = {}
    try:
        narrow_rows(spark, 100_000).write.format("noop").mode("overwrite").save()  # JVM warm-up
        sections = {"write": bench_write, "read": bench_read}
        for name in args.sections.split(","):
            results.update(sections[name.strip()](spark, root, rows=args.rows, repeat=args.repeat, codec=args.codec))
    finally:
        spark.stop()
        shutil.rmtree(root, ignore_errors=True)
    print(f"rows={args.rows:,} master={args.master or 'default'} codec={args.codec} repeat={args.repeat} (best of)")
    for key, value in results.items():
        unit = "x" if key.endswith("ratio") else "s"
        print(f"  {key:<16} {value:8.2f}{unit}")


if __name__ == "__main__":
    main()
