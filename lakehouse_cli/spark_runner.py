"""`--spark`: maintenance through jobs.spark on a SparkSession (SPARK_MASTER, default local[2]).

Imported only when ``--spark`` is given, so the command line works without pyspark.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pyspark.sql import SparkSession

from jobs.spark import compact, expire_snapshots, remove_orphan_files, rescale, spark_session

OPERATIONS: dict[str, Callable[..., Any]] = {
    "compact": compact,
    "rescale": rescale,
    "expire_snapshots": expire_snapshots,
    "remove_orphan_files": remove_orphan_files,
}


def run_on_spark(operation: str, table_uri: str, **options: Any) -> Any:
    """Run one maintenance operation; returns its result. A session started here is stopped afterwards (one
    that was already active in this process, e.g. in a notebook, is used and left running)."""
    active = SparkSession.getActiveSession()
    spark = spark_session()
    try:
        return OPERATIONS[operation](spark, table_uri, **options)
    finally:
        if active is None:
            spark.stop()
