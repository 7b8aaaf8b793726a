"""Twin tables for the distributed-maintenance tests: the same writes into two warehouses, one maintained locally
(``table.maintenance``), the other by ``jobs.spark``; results are compared with paths relative to each table."""

from __future__ import annotations

import dataclasses
import os
from typing import Any

import numpy as np
import pyarrow as pa

from table_format import FileSystemCatalog, Table, write_table

SCHEMA = pa.schema([("dt", pa.string()), ("id", pa.int64()), ("v", pa.int64()), ("s", pa.string())])
KINDS: dict[str, dict[str, Any]] = {
    "pk": {"primary_keys": ("dt", "id"), "options": {"bucket": "4"}},
    "pk-dv": {"primary_keys": ("dt", "id"), "options": {"bucket": "2", "deletion-vectors.enabled": "true"}},
    "append": {"primary_keys": (), "options": {"bucket": "-1"}},
}


def batch(seed: int, rows: int = 400) -> pa.Table:
    rng = np.random.default_rng(seed)
    ids = rng.integers(0, rows, rows)
    return pa.table({
        "dt": pa.array(np.where(ids % 2 == 0, "2024-05-01", "2024-05-02")),
        "id": pa.array(ids, pa.int64()),
        "v": pa.array(rng.integers(0, 1_000_000, rows), pa.int64()),
        "s": pa.array([f"s{seed}-{i}" for i in range(rows)]),
    })


def make_table(warehouse: str, kind: str, *, commits: int = 6, name: str = "db.t") -> Table:
    """A partitioned table of `kind` with `commits` small write-only commits (nothing compacted yet)."""
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db", exist_ok=True)
    spec = KINDS[kind]
    table = catalog.create_table(name, SCHEMA, primary_keys=spec["primary_keys"], partition_keys=("dt",),
                                 options={**spec["options"], "write-only": "true"})
    for seed in range(commits):
        write_table(table, batch(seed))
    return table


def expected_rows(kind: str, commits: int = 6) -> list[tuple[Any, ...]]:
    """The merged view of `make_table`'s writes, computed independently: the last write of a key wins."""
    data = pa.concat_tables([batch(seed) for seed in range(commits)])
    out = list(zip(*(data.column(n).to_pylist() for n in SCHEMA.names), strict=True))
    if KINDS[kind]["primary_keys"]:
        out = list({(r[0], r[1]): r for r in out}.values())
    return sorted(out)


def rows(table: Table) -> list[tuple[Any, ...]]:
    data = table.scan().to_arrow()
    return sorted(zip(*(data.column(n).to_pylist() for n in SCHEMA.names), strict=True))


def java_rows(oracle: Any, warehouse: str, name: str = "t") -> list[tuple[Any, ...]]:
    return sorted(tuple(r[n] for n in SCHEMA.names) for r in oracle.read(warehouse, "db", name))


def relative(table: Table, value: Any) -> Any:
    """A maintenance result with every path made relative to the table directory (tuples of paths included)."""
    root = table.path.rstrip("/") + "/"

    def rel(v: Any) -> Any:
        if isinstance(v, str) and v.startswith(root):
            return v[len(root):]
        if isinstance(v, tuple):
            return tuple(rel(x) for x in v)
        return v
    return {k: rel(v) for k, v in dataclasses.asdict(value).items()}


def tree(path: str) -> set[str]:
    return {os.path.relpath(os.path.join(d, n), path) for d, _, names in os.walk(path) for n in names}
