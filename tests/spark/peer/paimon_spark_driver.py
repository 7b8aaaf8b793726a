"""Drives Paimon's own Spark connector (a peer; never imports this project), in the peer's pyspark venv:

    python paimon_spark_driver.py JAR WAREHOUSE '["SQL", ...]'

A local[N] SparkSession (N from PEER_CORES, default 2) with the ``paimon`` catalog on WAREHOUSE runs the statements
in order and prints one JSON line: for each statement its rows (lists of values, as strings where JSON has no type)
and its wall time in seconds.
"""

from __future__ import annotations

import json
import os
import sys
import time

from pyspark.sql import SparkSession


def main() -> None:
    jar, warehouse, statements = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    spark = (
        SparkSession.builder.master(f"local[{os.environ.get('PEER_CORES', '2')}]")
        .appName("paimon-spark-peer")
        .config("spark.jars", jar)
        .config("spark.sql.catalog.paimon", "org.apache.paimon.spark.SparkCatalog")
        .config("spark.sql.catalog.paimon.warehouse", f"file://{warehouse}")
        .config("spark.sql.extensions", "org.apache.paimon.spark.extensions.PaimonSparkSessionExtensions")
        .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "4").config("spark.driver.memory", "2g")
        .config("spark.sql.session.timeZone", "UTC")
        .getOrCreate()
    )
    answers = []
    try:
        for sql in statements:
            start = time.perf_counter()
            rows = [list(r) for r in spark.sql(sql).collect()]
            answers.append({"rows": rows, "seconds": time.perf_counter() - start})
    finally:
        spark.stop()
    print(json.dumps(answers, default=str))


if __name__ == "__main__":
    main()
