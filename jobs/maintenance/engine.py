"""Which engine runs a maintenance operation on one table: in process (table_format) or on PySpark (jobs.spark).

``engine: auto`` (the default) measures the work first and takes Spark only from a threshold up: compaction and
rescale by the bytes they would rewrite (``spark_threshold_bytes``, default 256 MiB), snapshot expiration and orphan
removal by the files they would delete or look at (``spark_threshold_files``, default 10,000). Below it, starting a
JVM (10 to 25 s) costs more than the work. On a ``local[...]`` Spark master, ``auto`` stays in process above the
threshold too (Spark adds no machine there, and the in-process engine was measured 5-9x faster on one machine)
unless ``spark_on_local_master`` is set. ``local`` and ``spark`` force an engine. The SparkSession is asked for
only when a table takes Spark (the PySpark resource creates it lazily), so a run that stays local starts no JVM.
"""

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from jobs.spark.session import DEFAULT_MASTER
from table_format import Table

Engine = Literal["auto", "local", "spark"]
DEFAULT_SPARK_THRESHOLD_BYTES = 256 << 20
DEFAULT_SPARK_THRESHOLD_FILES = 10_000


@dataclass(frozen=True)
class Work:
    """What an operation would do to one table, measured before it runs: bytes rewritten or files touched."""

    amount: int
    unit: Literal["bytes", "files"]


@dataclass(frozen=True)
class EngineChoice:
    """The engine one table's operation runs on, and why (both reported in the table's maintenance metadata)."""

    engine: Literal["local", "spark"]
    reason: str
    work: Work

    def details(self) -> dict[str, Any]:
        return {"engine": self.engine, "engine_reason": self.reason, f"work_{self.work.unit}": self.work.amount}


def choose_engine(engine: str, work: Work, *, threshold_bytes: int, threshold_files: int,
                  spark_master: str | None = None, spark_on_local_master: bool = False) -> EngineChoice:
    """``local``/``spark`` as asked; ``auto``: Spark when the work reaches its threshold and the Spark master is a
    cluster (or ``spark_on_local_master``), else local."""
    if engine in ("local", "spark"):
        return EngineChoice(engine, f"engine: {engine} in run config", work)  # type: ignore[arg-type]
    threshold = threshold_bytes if work.unit == "bytes" else threshold_files
    if work.amount < threshold:
        return EngineChoice("local", f"auto: {work.amount} {work.unit} < threshold {threshold}", work)
    above = f"auto: {work.amount} {work.unit} >= threshold {threshold}"
    if is_local_master(spark_master) and not spark_on_local_master:
        return EngineChoice("local", f"{above}, but Spark master {spark_master} is this machine, where the "
                                     "in-process engine is faster (spark_on_local_master: true to use Spark)", work)
    return EngineChoice("spark", above, work)


def is_local_master(master: str | None) -> bool:
    """``local``, ``local[N]``, ``local[*]``, ``local[N,F]``: Spark in this one process, no executor machines."""
    return master is not None and (master == "local" or master.startswith("local["))


def spark_master_of(resource: Any) -> str | None:
    """The master a PySpark resource runs (or would run) on, without starting a session: the running session's,
    else the resource's ``master`` (PaimonPySparkResource), its ``spark.master`` setting, ``SPARK_MASTER``, local[2]."""
    session = getattr(resource, "_spark_session", None)
    if session is not None:
        return str(session.sparkContext.master)
    config = getattr(resource, "spark_config", None)
    nested = config.get("spark") if isinstance(config, Mapping) else None
    configured = (config.get("spark.master") if isinstance(config, Mapping) else None) or (
        nested.get("master") if isinstance(nested, Mapping) else None)
    return getattr(resource, "master", None) or configured or os.environ.get("SPARK_MASTER") or DEFAULT_MASTER


def compaction_work(table: Table, *, full: bool, partitions: Sequence[Mapping[str, str]] | None) -> Work:
    """The bytes of the files the compaction would rewrite (planning and picking only: nothing read or written);
    0 when no bucket has anything to compact."""
    tasks = table.maintenance.plan_compaction(full=full, partitions=partitions)
    return Work(table.maintenance.compaction_input_bytes(tasks), "bytes")


def rescale_work(table: Table, *, partitions: Sequence[Mapping[str, str]] | None) -> Work:
    """The bytes of the live files of the partitions a rescale rewrites (its planning commits a schema, so the
    files are summed here from the latest snapshot instead)."""
    store = table.store
    latest = store.snapshots.latest()
    if latest is None:
        return Work(0, "bytes")
    accept = table.partition_filter(partitions) if partitions else None
    live = store.manifests.live_files(latest, entry_filter=None if accept is None else (lambda e: accept(e.partition)))
    return Work(sum(e.file.file_size for e in live), "bytes")


def expiration_work(table: Table, **retention: Any) -> Work:
    """The snapshot, data and metadata files an expiration would delete (read-only planning)."""
    plan = table.maintenance.plan_snapshot_expiration(**retention)
    return Work(len(plan.snapshot_files) + len(plan.file_paths), "files")


def orphan_work(file_count: int) -> Work:
    """Orphan removal lists the table's directories: at least the live files of its latest snapshot."""
    return Work(file_count, "files")


def engines_summary(choices: Mapping[str, EngineChoice]) -> dict[str, Any]:
    """The run's output metadata: the engine of each table, and of the run (``local``, ``spark`` or both)."""
    used = sorted({c.engine for c in choices.values()})
    return {"maintenance/engine": "+".join(used) or "none",
            "maintenance/engines": {table: c.engine for table, c in choices.items()}}
