"""Helpers of the command-line tests: a warehouse with real tables built by table_format, and a runner.

* ``shop.orders``: a primary-key table (``dt``, ``id``), partitioned by ``dt``, 2 fixed buckets, 4 snapshots
  (3 appends and an update/delete), tag ``first`` on snapshot 1;
* ``shop.events``: an append table partitioned by ``day``, 2 snapshots.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import pyarrow as pa
from click.testing import CliRunner, Result

from lakehouse_cli.main import cli
from table_format import FileSystemCatalog, write_table

ORDERS_SCHEMA = pa.schema([
    ("id", pa.int64()), ("dt", pa.string()), ("customer", pa.string()), ("amount", pa.decimal128(10, 2)),
    ("score", pa.float64()),
])
EVENTS_SCHEMA = pa.schema([("kind", pa.string()), ("n", pa.int32()), ("day", pa.string())])


def build_warehouse(path: str) -> None:
    catalog = FileSystemCatalog(path)
    catalog.create_database("shop")
    orders = catalog.create_table("shop.orders", ORDERS_SCHEMA, primary_keys=["dt", "id"], partition_keys=["dt"],
                                  options={"bucket": "2", "snapshot.num-retained.min": "2"})

    def batch(ids: list[int], dt: str, amounts: list[str], **extra: Any) -> pa.Table:
        cols = {"id": ids, "dt": [dt] * len(ids), "customer": [f"c{i}" for i in ids],
                "amount": [Decimal(a) for a in amounts], "score": [float(i) / 2 for i in ids]}
        schema = ORDERS_SCHEMA
        if extra:
            cols.update(extra)
            schema = schema.append(pa.field("_row_kind", pa.string()))
        return pa.table(cols, schema=schema)

    write_table(orders, batch([1, 2, 3], "2024-05-14", ["10.00", "20.50", "5.25"]))
    write_table(orders, batch([4, 5], "2024-05-15", ["99.99", "1.00"]))
    write_table(orders, batch([6], "2024-05-15", ["7.00"]))
    write_table(orders, batch([2, 3], "2024-05-14", ["25.00", "5.25"], _row_kind=["+U", "-D"]))
    orders.create_tag("first", snapshot_id=1)

    events = catalog.create_table("shop.events", EVENTS_SCHEMA, partition_keys=["day"])
    write_table(events, pa.table({"kind": ["click", "view"], "n": [1, 2], "day": ["d1", "d2"]}, schema=EVENTS_SCHEMA))
    write_table(events, pa.table({"kind": ["buy"], "n": [3], "day": ["d2"]}, schema=EVENTS_SCHEMA))


@dataclass
class Run:
    """Runs `lakehouse --warehouse <shop> ...` in-process; ``json()`` parses its stdout."""

    warehouse: str

    def __call__(self, *args: str, code: int = 0, env: dict[str, str] | None = None) -> Result:
        result = CliRunner().invoke(cli, ["--warehouse", self.warehouse, *args], env=env, catch_exceptions=False)
        assert result.exit_code == code, f"exit {result.exit_code}\nstdout:\n{result.stdout}\nstderr:\n{result.stderr}"
        return result

    def json(self, *args: str, code: int = 0) -> Any:
        return json.loads(self(*args, "--json", code=code).stdout)


def tree(path: str) -> dict[str, bytes]:
    """Every file below `path` with its content (to show that a dry run changes nothing)."""
    out = {}
    for dirpath, _, names in os.walk(path):
        for name in names:
            full = os.path.join(dirpath, name)
            with open(full, "rb") as f:
                out[os.path.relpath(full, path)] = f.read()
    return out


def age_files(root: str, *, days: float = 3) -> None:
    """Set every file's mtime `days` back (so that orphan removal with the default age considers them)."""
    old = time.time() - days * 86400
    for dirpath, _, names in os.walk(root):
        for name in names:
            os.utime(os.path.join(dirpath, name), (old, old))

