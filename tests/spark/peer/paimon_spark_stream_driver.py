"""Streams tables with Paimon's own Spark connector (a peer; never imports this project), in the peer's pyspark venv:

    python paimon_spark_stream_driver.py JAR '[{"path": TABLE_DIR, "options": {...}}, ...]'

Each request is one ``spark.readStream.format("paimon")`` query run with ``trigger(availableNow=True)``; prints one
JSON line: for each request its schema (``simpleString``) and its micro-batches' rows (values as strings).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile

from pyspark.sql import SparkSession


def main() -> None:
    jar, requests = sys.argv[1], json.loads(sys.argv[2])
    spark = (
        SparkSession.builder.master(f"local[{os.environ.get('PEER_CORES', '2')}]")
        .appName("paimon-spark-peer-stream")
        .config("spark.jars", jar)
        .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2").config("spark.driver.memory", "1g")
        .getOrCreate()
    )
    answers = []
    try:
        for request in requests:
            reader = spark.readStream.format("paimon")
            for key, value in request["options"].items():
                reader = reader.option(key, value)
            df = reader.load(request["path"])
            batches: list[list[list[str]]] = []

            def collect(batch, _batch_id, into=batches):  # noqa: ANN001 - pyspark's callback
                into.append([[None if v is None else str(v) for v in row] for row in batch.collect()])

            query = (df.writeStream.foreachBatch(collect).option("checkpointLocation", tempfile.mkdtemp())
                     .trigger(availableNow=True).start())
            query.awaitTermination()
            answers.append({"schema": df.schema.simpleString(), "batches": batches})
    finally:
        spark.stop()
    print(json.dumps(answers))


if __name__ == "__main__":
    main()
