"""One Spark task, one core's worth of threads: pyarrow's and polars' pools sized to the task's CPUs.

Spark runs one task per core (``spark.task.cpus`` = 1): a Python worker whose pyarrow / polars pools each start a
thread per machine core oversubscribes the cores its neighbours' tasks own, and makes ``local[1]`` secretly use
every core. ``limit_to_task()`` (called by every task of jobs.spark) sizes pyarrow's CPU pool to the task's CPUs;
polars reads its pool size once, at import, from ``POLARS_MAX_THREADS``, which ``spark_session`` puts into the
executors' environment (``spark.executorEnv.POLARS_MAX_THREADS``, default ``spark.task.cpus``).
"""

from __future__ import annotations

from pyspark import TaskContext

POLARS_THREADS_ENV = "POLARS_MAX_THREADS"


def limit_to_task() -> int:
    """Size pyarrow's CPU thread pool to this Spark task's CPUs (1 by default); returns that count. Outside a
    Spark task (the driver) nothing changes and 0 is returned."""
    context = TaskContext.get()
    if context is None:
        return 0
    import pyarrow as pa  # noqa: PLC0415 - a task's worker has it already; the driver's spark_session() does not

    cpus = max(1, int(context.cpus()))
    if pa.cpu_count() != cpus:
        pa.set_cpu_count(cpus)
    return cpus
