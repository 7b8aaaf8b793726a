"""Paimon tables on PySpark, Dagster-free: the `format("paimon")` data source and distributed maintenance."""

from jobs.spark.data_source import register_data_source
from jobs.spark.maintenance import compact, expire_snapshots, remove_orphan_files, rescale
from jobs.spark.routing import SparkWriteResult, write, write_detailed
from jobs.spark.session import spark_session
from jobs.spark.shipping import ship_code
from jobs.spark.sql import register_table, register_warehouse
from jobs.spark.streaming import write_stream

__all__ = [
    "SparkWriteResult",
    "compact",
    "expire_snapshots",
    "register_data_source",
    "register_table",
    "register_warehouse",
    "remove_orphan_files",
    "rescale",
    "ship_code",
    "spark_session",
    "write",
    "write_detailed",
    "write_stream",
]
