"""spark_session(): a SparkSession set up for Paimon tables (loopback, Arrow, filter pushdown, the data source).

Every listener binds 127.0.0.1 (driver RPC, block manager, UI when on), so tests and local runs never expose a
port. The master comes from ``SPARK_MASTER`` (default ``local[2]``); a ``spark://`` URL works unchanged.
"""

from __future__ import annotations

import os
import sys

from pyspark.sql import SparkSession

from jobs.spark.data_source import register_data_source
from jobs.spark.shipping import ship_code
from jobs.spark.sql import register_warehouse
from jobs.spark.threads import POLARS_THREADS_ENV

DEFAULT_MASTER = "local[2]"
LOOPBACK = "127.0.0.1"

# Sized for the 2-core, 24 GiB development machine; every value can be overridden with SparkSession conf later.
_CONF: dict[str, str] = {
    "spark.driver.host": LOOPBACK,
    "spark.driver.bindAddress": LOOPBACK,
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.driver.memory": "2g",
    "spark.executor.memory": "2g",
    "spark.sql.shuffle.partitions": "4",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    "spark.sql.execution.arrow.maxRecordsPerBatch": "65536",
    "spark.sql.python.filterPushdown.enabled": "true",
    "spark.sql.session.timeZone": "UTC",
}


def spark_session(master: str | None = None, *, app_name: str = "lakehouse",
                  conf: dict[str, str] | None = None, warehouse: str | None = None) -> SparkSession:
    """A SparkSession (created, or the active one) with the ``paimon`` data source registered.

    ``master`` defaults to ``$SPARK_MASTER``, then ``local[2]``. ``conf`` adds or overrides Spark settings.
    Sets ``SPARK_LOCAL_IP`` and ``PYSPARK_PYTHON`` (to this interpreter) when they are unset, before the JVM starts.
    ``warehouse``: also ``register_warehouse(spark, warehouse)`` (session tables ``db.table`` for ``spark.sql``).
    """
    os.environ.setdefault("SPARK_LOCAL_IP", LOOPBACK)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = SparkSession.builder.master(master or os.environ.get("SPARK_MASTER") or DEFAULT_MASTER)
    builder = builder.appName(app_name)
    settings = {**_CONF, **(conf or {})}
    polars_threads = f"spark.executorEnv.{POLARS_THREADS_ENV}"
    if polars_threads not in (conf or {}):  # a task's cores (jobs/spark/threads.py)
        settings[polars_threads] = settings.get("spark.task.cpus", "1")
    for key, value in settings.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    ship_code(spark)  # table_format and jobs as a zip (addPyFile) when the executors may not have them
    register_data_source(spark)
    if warehouse is not None:
        register_warehouse(spark, warehouse)
    return spark
