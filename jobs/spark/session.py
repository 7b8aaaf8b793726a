"""spark_session(): a SparkSession set up for Paimon tables (loopback, Arrow, filter pushdown, the data source).

Every listener binds 127.0.0.1 (driver RPC, block manager, UI when on), so tests and local runs never expose a
port. The master comes from ``SPARK_MASTER`` (default ``local[2]``); a ``spark://`` URL works unchanged: executor
sizing is left to the cluster (Spark's defaults or ``conf``), and a session none of whose executors is granted
within ``executor_timeout`` seconds is stopped with an error saying so, rather than left to wait forever (a
standalone master never grants an executor larger than every worker).
"""

from __future__ import annotations

import os
import sys
import time

from pyspark import SparkContext
from pyspark.sql import SparkSession

from jobs.spark.data_source import register_data_source
from jobs.spark.shipping import ship_code
from jobs.spark.spark_home import worker_friendly_spark_home
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
    "spark.driver.memory": "2g",  # local masters: the one JVM; executors are sized by the cluster or `conf`
    "spark.sql.shuffle.partitions": "4",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    "spark.sql.execution.arrow.maxRecordsPerBatch": "65536",
    # Int.MaxValue turns off Spark 4's byte limit of the Arrow batches sent to Python workers, which is checked after
    # every row (ArrowWriter.sizeInBytes: 58 % of a df.write.format("paimon") task's JVM time in a JFR profile); the
    # batches stay bounded by maxRecordsPerBatch, as in Spark 3.5, which had no byte limit
    "spark.sql.execution.arrow.maxBytesPerBatch": "2147483647",
    "spark.sql.python.filterPushdown.enabled": "true",
    "spark.sql.session.timeZone": "UTC",
}


class ExecutorsNotGrantedError(RuntimeError):
    """A cluster master granted the session no executor in time (no worker can host the executors asked for)."""


_EXECUTOR_SIZING = ("spark.executor.memory", "spark.executor.cores", "spark.cores.max", "spark.executor.instances")


def spark_session(master: str | None = None, *, app_name: str = "lakehouse",
                  conf: dict[str, str] | None = None, warehouse: str | None = None,
                  executor_timeout: float = 60.0) -> SparkSession:
    """A SparkSession (created, or the active one) with the ``paimon`` data source registered.

    ``master`` defaults to ``$SPARK_MASTER``, then ``local[2]``. ``conf`` adds or overrides Spark settings.
    Sets ``SPARK_LOCAL_IP`` and ``PYSPARK_PYTHON`` (to this interpreter) when they are unset, before the JVM starts;
    on a local master also ``SPARK_HOME`` when unset (jobs/spark/spark_home.py: Python workers that start faster).
    ``warehouse``: also ``register_warehouse(spark, warehouse)`` (session tables ``db.table`` for ``spark.sql``).
    On a ``spark://`` master, waits up to ``executor_timeout`` seconds for a first executor, then stops the session
    and raises ExecutorsNotGrantedError naming the executor size asked for.
    """
    os.environ.setdefault("SPARK_LOCAL_IP", LOOPBACK)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    master = master or os.environ.get("SPARK_MASTER") or DEFAULT_MASTER
    home = worker_friendly_spark_home(master) if SparkContext._active_spark_context is None else None
    builder = SparkSession.builder.master(master).appName(app_name)
    settings = {**_CONF, **(conf or {})}
    polars_threads = f"spark.executorEnv.{POLARS_THREADS_ENV}"
    if polars_threads not in (conf or {}):  # a task's cores (jobs/spark/threads.py)
        settings[polars_threads] = settings.get("spark.task.cpus", "1")
    for key, value in settings.items():
        builder = builder.config(key, value)
    spark = _get_or_create(builder, spark_home=home)
    if spark.sparkContext.master.startswith("spark://"):
        _await_executor(spark, executor_timeout)
    ship_code(spark)  # table_format and jobs as a zip (addPyFile) when the executors may not have them
    register_data_source(spark)
    if warehouse is not None:
        register_warehouse(spark, warehouse)
    return spark


def _get_or_create(builder: SparkSession.Builder, *, spark_home: str | None) -> SparkSession:
    """``builder.getOrCreate()``; a new JVM started with ``spark_home`` as its SPARK_HOME (jobs/spark/spark_home.py).
    The JVM keeps it for the Python workers it starts; this process's environment is restored, so the driver's
    own subprocesses (another Spark application, a cluster driver) do not inherit the local-only links."""
    if spark_home is None:
        return builder.getOrCreate()
    os.environ["SPARK_HOME"] = spark_home
    try:
        return builder.getOrCreate()
    finally:
        os.environ.pop("SPARK_HOME", None)


def _await_executor(spark: SparkSession, timeout: float) -> None:
    """Return once the cluster granted an executor; after `timeout` seconds stop the session and raise."""
    sc = spark.sparkContext
    tracker = sc._jsc.sc().statusTracker()  # its executor infos include the driver's
    deadline = time.monotonic() + timeout
    while len(tracker.getExecutorInfos()) < 2:
        if time.monotonic() > deadline:
            conf = sc.getConf()
            asked = ", ".join(f"{k}={conf.get(k)}" for k in _EXECUTOR_SIZING if conf.contains(k))
            spark.stop()
            raise ExecutorsNotGrantedError(
                f"{sc.master} granted no executor within {timeout:.0f} s: no worker could host one "
                f"({asked or 'Spark default executor size: 1g memory, all worker cores'}); the master's log says "
                "'requires more resource than any of Workers could have' when no worker has the memory or cores "
                "asked for: lower spark.executor.memory / spark.executor.cores in conf, or add larger workers")
        time.sleep(0.5)
