"""Streaming write throughput into a primary-key table, beside batch writes and Spark's own Parquet file sink.

    .venv/bin/python benchmarks/bench_streaming.py [--files 10] [--rows-per-file 100000] [--buckets 4]
                                                   [--master local[2]] [--repeat 1]

The same input, in the same run: ``--files`` Parquet files of ``--rows-per-file`` rows (id, a long, a short string,
a double; each file's ids overlap half of the previous file's, so a primary-key table gets inserts and updates).

* ``write_stream``: ``spark.readStream.parquet`` with ``maxFilesPerTrigger=1`` (micro-batches of one file) into a
  primary-key table through ``jobs.spark.write_stream`` (rows routed by bucket, one commit per batch), availableNow;
* ``sink``: the same stream through ``writeStream.format("paimon")`` (a one-file batch is one task, so the
  one-writer-per-bucket check holds);
* ``batch``: ``jobs.spark.write(spark.read.parquet(folder))`` into the same kind of table, one commit;
* ``parquet sink``: the same stream into Spark's own ``writeStream.format("parquet")`` (no keys, no merge).

Each figure is rows / wall seconds from ``start()`` to the end of the availableNow query (or of the batch write),
best of ``--repeat``, with a fresh table and checkpoint each time; JVM start-up is not counted (a warm-up job runs
first). Prints one JSON object.
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
import pyarrow.parquet as pq

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from jobs.spark import spark_session, write, write_stream  # noqa: E402
from table_format import FileSystemCatalog  # noqa: E402

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.int64()), ("s", pa.string()), ("x", pa.float64())])
DDL = "id BIGINT, v BIGINT, s STRING, x DOUBLE"


def make_inputs(folder: Path, *, files: int, rows: int) -> int:
    folder.mkdir(parents=True)
    for f in range(files):
        ids = np.arange(rows, dtype=np.int64) + f * (rows // 2)
        data = pa.table({"id": ids, "v": ids * 7919 % 100003, "s": pa.array([f"name-{i % 10007}" for i in ids]),
                         "x": ids / 3.0}, schema=SCHEMA)
        path = folder / f"part-{f:04d}.parquet"
        pq.write_table(data, path, compression="zstd")
        stamp = 1_700_000_000 + f
        os.utime(path, (stamp, stamp))  # the file source reads the oldest first
    return files * rows


def pk_table(warehouse: Path, name: str, buckets: int) -> str:
    catalog = FileSystemCatalog(str(warehouse))
    catalog.create_database("db", exist_ok=True)
    table = catalog.create_table(f"db.{name}", SCHEMA, primary_keys=("id",), options={"bucket": str(buckets)})
    return table.path


def best(repeat: int, run: Callable[[int], float]) -> float:
    return min(run(i) for i in range(repeat))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=10)
    parser.add_argument("--rows-per-file", type=int, default=100_000)
    parser.add_argument("--buckets", type=int, default=4)
    parser.add_argument("--master", default=None)
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args(argv)

    root = Path(tempfile.mkdtemp(prefix="bench-streaming-"))
    try:
        inputs = root / "in"
        total = make_inputs(inputs, files=args.files, rows=args.rows_per_file)
        spark = spark_session(args.master, conf={"spark.sql.shuffle.partitions": "2"})
        spark.range(100_000).selectExpr("sum(id)").collect()  # warm-up

        def source():  # type: ignore[no-untyped-def]
            return spark.readStream.schema(DDL).option("maxFilesPerTrigger", 1).parquet(str(inputs))

        def timed(start: Callable[[], object]) -> float:
            t0 = time.perf_counter()
            query = start()
            if query is not None:
                query.awaitTermination()  # type: ignore[attr-defined]
            return time.perf_counter() - t0

        def run_write_stream(i: int) -> float:
            path = pk_table(root / f"wh-ws-{i}", "t", args.buckets)
            return timed(lambda: write_stream(source(), path, checkpoint=str(root / f"ck-ws-{i}"),
                                              trigger={"availableNow": True}))

        def run_sink(i: int) -> float:
            path = pk_table(root / f"wh-sink-{i}", "t", args.buckets)
            return timed(lambda: source().writeStream.format("paimon")
                         .option("checkpointLocation", str(root / f"ck-sink-{i}"))
                         .trigger(availableNow=True).start(path))

        def run_batch(i: int) -> float:
            path = pk_table(root / f"wh-batch-{i}", "t", args.buckets)
            return timed(lambda: write(spark.read.schema(DDL).parquet(str(inputs)), path) and None)

        def run_parquet(i: int) -> float:
            return timed(lambda: source().writeStream.format("parquet")
                         .option("checkpointLocation", str(root / f"ck-pq-{i}"))
                         .trigger(availableNow=True).start(str(root / f"pq-{i}")))

        seconds = {
            "write_stream": best(args.repeat, run_write_stream),
            "sink": best(args.repeat, run_sink),
            "batch write": best(args.repeat, run_batch),
            "parquet sink": best(args.repeat, run_parquet),
        }
        report = {
            "rows": total, "micro_batches": args.files, "rows_per_batch": args.rows_per_file,
            "buckets": args.buckets, "master": spark.sparkContext.master,
            "seconds": {k: round(v, 2) for k, v in seconds.items()},
            "rows_per_s": {k: round(total / v) for k, v in seconds.items()},
            "write_stream_vs_parquet_sink": round(seconds["write_stream"] / seconds["parquet sink"], 2),
            "write_stream_vs_batch": round(seconds["write_stream"] / seconds["batch write"], 2),
        }
        print(json.dumps(report, indent=2))
        spark.stop()
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
