"""Driver of the cluster tests, run in its own process: ``python cluster_driver.py spark://HOST:PORT '<json ops>'``.

Creates ``jobs.spark.spark_session(master=URL)`` (which ships the code), runs the operations in order and prints
one JSON line: the answer of each operation. Operations: ``{"op": "probe"}`` (where each executor's Python and
``table_format`` come from), ``{"op": "compact", "table": PATH, "full": BOOL}``,
``{"op": "read", "table": PATH}`` (the data source, rows sorted), ``{"op": "read_table", "table": PATH}``
(jobs.spark.read_table: {"rows": sorted rows, "native": whether Spark's Parquet reader scans}), ``{"op": "count", "table": PATH, "filter": SQL}``,
``{"op": "sql", "warehouse": PATH, "statements": [SQL, ...]}`` (register_warehouse, then the statements in order;
the rows of the last one, sorted), ``{"op": "stream", "table": PATH, "target": PATH, "checkpoint": DIR}`` (the
table's changes from its first snapshot, ``_row_kind`` as column ``op``, into a new table through ``write_stream``,
availableNow; answers the batch count). The argument may also be ``{"conf": {...}, "executor_timeout": S, "ops":
[...]}``: that session conf instead of the small executors below, and spark_session's executor_timeout.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
from typing import Any

from jobs.spark import compact, read_table, register_warehouse, spark_session, write_stream


def _where_am_i(_: Any) -> Any:
    import table_format  # noqa: PLC0415 - imported on the executor: the point is where it comes from

    yield {"python": sys.executable, "table_format": table_format.__file__, "pid": os.getpid()}


def main() -> None:
    url, request = sys.argv[1], json.loads(sys.argv[2])
    conf = {"spark.executor.memory": "512m", "spark.executor.cores": "1", "spark.cores.max": "2",
            "spark.driver.memory": "1g", "spark.default.parallelism": "2"}
    ops, timeout = request, 60.0
    if isinstance(request, dict):
        conf, ops, timeout = request["conf"], request["ops"], request.get("executor_timeout", timeout)
    spark = spark_session(master=url, app_name="lakehouse-cluster-test", conf=conf, executor_timeout=timeout)
    answers: list[Any] = []
    try:
        for op in ops:
            if op["op"] == "probe":
                answers.append(spark.sparkContext.parallelize(range(2), 2).mapPartitions(_where_am_i).collect())
            elif op["op"] == "compact":
                answers.append(dataclasses.asdict(compact(spark, op["table"], full=op.get("full", False))))
            elif op["op"] == "read":
                data = spark.read.format("paimon").load(op["table"]).toArrow()
                answers.append(sorted(map(list, zip(*(c.to_pylist() for c in data.columns), strict=True))))
            elif op["op"] == "read_table":
                frame = read_table(spark, op["table"])
                data = frame.toArrow()
                answers.append({"rows": sorted(map(list, zip(*(c.to_pylist() for c in data.columns), strict=True))),
                                "native": "FileScan parquet" in frame._jdf.queryExecution().executedPlan().toString()})
            elif op["op"] == "count":
                answers.append(spark.read.format("paimon").load(op["table"]).where(op["filter"]).count())
            elif op["op"] == "sql":
                register_warehouse(spark, op["warehouse"])
                result = [spark.sql(statement).collect() for statement in op["statements"]][-1]
                answers.append(sorted(list(r) for r in result))
            elif op["op"] == "stream":
                changes = (spark.readStream.format("paimon").option("read.changelog", "true")
                           .option("scan.mode", "from-snapshot").option("scan.snapshot-id", "1").load(op["table"]))
                query = write_stream(changes.withColumnRenamed("_row_kind", "op"), op["target"],
                                     checkpoint=op["checkpoint"], trigger={"availableNow": True})
                query.awaitTermination()
                answers.append(len(query.recentProgress))
            else:
                raise ValueError(f"unknown operation {op!r}")
    finally:
        spark.stop()
    print(json.dumps(answers, default=str))


if __name__ == "__main__":
    main()
