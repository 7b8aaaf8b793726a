"""`--spark`: maintenance through jobs.spark on a SparkSession (SPARK_MASTER, default local[2]).

Imported only when ``--spark`` is given, so the command line works without pyspark.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from jobs.spark import compact, expire_snapshots, remove_orphan_files, rescale, spark_session

OPERATIONS: dict[str, Callable[..., Any]] = {
    "compact": compact,
    "rescale": rescale,
    "expire_snapshots": expire_snapshots,
    "remove_orphan_files": remove_orphan_files,
}


def run_on_spark(operation: str, table_uri: str, **options: Any) -> Any:
    """Run one maintenance operation on a session of its own, stopped afterwards; returns its result."""
    spark = spark_session()
    try:
        return OPERATIONS[operation](spark, table_uri, **options)
    finally:
        spark.stop()
