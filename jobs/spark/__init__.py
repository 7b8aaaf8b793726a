"""Paimon tables on PySpark, Dagster-free: the `format("paimon")` data source and distributed maintenance."""

from jobs.spark.data_source import register_data_source
from jobs.spark.session import spark_session

__all__ = [
    "register_data_source",
    "spark_session",
]
