"""Small Spark writes on the driver: the DataFrame collected as Arrow (one Spark job), written and committed in
process with table_format, instead of the data source's distributed write (planner, shuffle, Python workers).

``jobs.spark.write`` takes this path when Spark's own size estimate of the DataFrame's optimized plan (the
statistics ``EXPLAIN COST`` shows) is at most ``driver_max_bytes``: by default the session's
``spark.lakehouse.write.driverMaxBytes``, else 32 MiB; 0 always writes distributed. A plan Spark cannot size (a
Python data source reports no statistics: ``spark.sql.defaultSizeInBytes``) is written distributed.

The batches are the exact ones the data source's tasks receive (Spark's exchange types) and go through the same
calls: one ``TableWrite`` (every bucket with one writer, as a routed write), ``commit_write`` with the same mode,
partitions and commit user, so rows, files and snapshot kinds are those of the distributed write.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pyspark.sql import DataFrame

from jobs.spark.driver_read import byte_threshold
from jobs.spark.types import check_writable, exchange_schema, to_exchange, to_table_units
from table_format import Table, commit_write, table_commit_landed

DRIVER_MAX_BYTES_CONF = "spark.lakehouse.write.driverMaxBytes"
DEFAULT_DRIVER_MAX_BYTES = 32 * 1024 * 1024
UNKNOWN_SIZE = 1 << 62  # Spark sizes a plan without statistics at spark.sql.defaultSizeInBytes (Long.MAX_VALUE)


def estimated_bytes(df: DataFrame) -> int | None:
    """Spark's size estimate of the DataFrame's optimized plan, or None when Spark cannot size it (a source
    without statistics) or the session does not expose its plan (Spark Connect)."""
    try:
        size = int(df._jdf.queryExecution().optimizedPlan().stats().sizeInBytes())
    except AttributeError:  # Spark Connect: no JVM plan on the client
        return None
    return size if size < UNKNOWN_SIZE else None


def driver_max_bytes(df: DataFrame, given: int | None) -> int:
    """The threshold: ``given``, else the session's ``spark.lakehouse.write.driverMaxBytes``, else 32 MiB."""
    return byte_threshold(df.sparkSession, given, conf=DRIVER_MAX_BYTES_CONF, default=DEFAULT_DRIVER_MAX_BYTES,
                          what="driver_max_bytes", off="always write distributed")


def write_on_driver(df: DataFrame, table: Table, *, mode: str,
                    overwrite_partitions: Sequence[Mapping[str, Any]] | None, commit_user: str) -> None:
    """Collect ``df`` as Arrow and write + commit it in this process, as the data source's tasks and commit
    would (``mode`` "append" or "overwrite"). On failure nothing is committed and the written files are
    deleted, unless the commit may have landed."""
    check_writable(df.schema, table.arrow_schema, table=table.identifier)
    if overwrite_partitions is not None:
        table.partition_filter(list(overwrite_partitions))  # validates the specs before any file is written
    data = to_exchange(df.toArrow(), exchange_schema(df.schema))
    target = table.arrow_schema
    writer = table.new_write(overwrite=mode == "overwrite")
    base = table.latest_snapshot()
    committing = False
    try:
        for batch in data.to_batches():
            writer.write(to_table_units(batch, target, table=table.identifier))
        messages = writer.prepare_commit()
        committing = True
        commit_write(table, messages, mode=mode, commit_user=commit_user,
                     overwrite_partitions=list(overwrite_partitions) if overwrite_partitions is not None else None)
    except BaseException:
        landed = committing and table_commit_landed(table, commit_user, after_snapshot_id=base.id if base else None)
        if not landed:
            writer.abort()
        raise
