"""Small Spark reads on the driver: a scan whose planned files are small is read in process with table_format and
handed to Spark as an Arrow table (``spark.createDataFrame``), so no data-source Python worker starts.

``driver_frame`` returns None above the threshold: the caller keeps ``spark.read.format("paimon")``. The threshold
is on the bytes of the files the scan plans (after partition, bucket and file pruning by the filter): by default
the session's ``spark.lakehouse.read.driverMaxBytes``, else 32 MiB; 0 always reads through the data source.
The DataFrame has the data source's schema (its Spark types and NOT NULL columns) and rows.
"""

from __future__ import annotations

from pyspark.sql import DataFrame, SparkSession

from jobs.spark.types import exchange_schema, spark_schema, to_exchange
from table_format import OptionError, TableScan

DRIVER_READ_MAX_BYTES_CONF = "spark.lakehouse.read.driverMaxBytes"
DEFAULT_DRIVER_READ_MAX_BYTES = 32 * 1024 * 1024


def byte_threshold(spark: SparkSession, given: int | None, *, conf: str, default: int, what: str, off: str) -> int:
    """``given``, else the session's ``conf``, else ``default``: a byte count >= 0 (0 turns the driver path off)."""
    if given is None:
        configured = spark.conf.get(conf, None)
        if configured is None or not str(configured).strip():
            return default
        try:
            given = int(str(configured).strip())
        except ValueError:
            raise OptionError(f"Spark conf {conf!r} must be a number of bytes, got {configured!r}") from None
    if given < 0:
        raise OptionError(f"{what} must be >= 0 (0: {off}), got {given}")
    return given


def driver_read_max_bytes(spark: SparkSession, given: int | None = None) -> int:
    """``given``, else the session's ``spark.lakehouse.read.driverMaxBytes``, else 32 MiB."""
    return byte_threshold(spark, given, conf=DRIVER_READ_MAX_BYTES_CONF, default=DEFAULT_DRIVER_READ_MAX_BYTES,
                          what="driver read threshold", off="always the data source")


def planned_bytes(scan: TableScan) -> int:
    """The bytes of the data files the scan reads."""
    return sum(f.file_size for split in scan.plan() for f in split.files)


def driver_frame(spark: SparkSession, scan: TableScan, *, max_bytes: int | None = None) -> DataFrame | None:
    """The scan as a Spark DataFrame read on the driver, or None when its files exceed the threshold."""
    limit = driver_read_max_bytes(spark, max_bytes)
    if limit == 0 or planned_bytes(scan) > limit:
        return None
    schema = spark_schema(scan.arrow_schema, table=scan.table.identifier)
    data = to_exchange(scan.to_arrow(), exchange_schema(schema))
    return spark.createDataFrame(data, schema=schema)
