"""Paimon tables on PySpark, Dagster-free: the `format("paimon")` data source and distributed maintenance."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jobs.spark.data_source import register_data_source
    from jobs.spark.maintenance import compact, expire_snapshots, remove_orphan_files, rescale
    from jobs.spark.native_read import read_table
    from jobs.spark.routing import SparkWriteResult, write, write_detailed
    from jobs.spark.session import spark_session
    from jobs.spark.shipping import ship_code
    from jobs.spark.sql import register_table, register_warehouse
    from jobs.spark.streaming import write_stream

# imported on first use: every Python worker Spark starts for the data source imports this package
_LAZY: dict[str, str] = {
    "register_data_source": "data_source",
    "compact": "maintenance",
    "expire_snapshots": "maintenance",
    "remove_orphan_files": "maintenance",
    "rescale": "maintenance",
    "read_table": "native_read",
    "write": "routing",
    "write_detailed": "routing",
    "SparkWriteResult": "routing",
    "spark_session": "session",
    "ship_code": "shipping",
    "register_table": "sql",
    "register_warehouse": "sql",
    "write_stream": "streaming",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'jobs.spark' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"jobs.spark.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "SparkWriteResult",
    "compact",
    "expire_snapshots",
    "read_table",
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
