"""Output helpers: JSON documents, rich tables on stdout, human sizes, JSON-safe values."""

from __future__ import annotations

import base64
import datetime as dt
import json
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from decimal import Decimal
from typing import Any

import click
import pyarrow as pa
from rich.console import Console
from rich.table import Table as RichTable

_WIDE = 200  # columns when stdout is not a terminal (pipes, files, tests): rather long lines than folded cells


def stdout_console() -> Console:
    """A console on the current stdout (created per call: tests swap sys.stdout)."""
    console = Console(highlight=False, soft_wrap=False)
    if not console.is_terminal and "COLUMNS" not in os.environ:
        console = Console(highlight=False, soft_wrap=False, width=_WIDE)
    return console


def jsonable(value: Any, *, utc: bool = False) -> Any:
    """A value as JSON, in the conventions of polars' NDJSON writer: Decimal as a string (exact), NaN and infinities
    as null, dates and times ISO 8601, naive timestamps ``YYYY-MM-DD HH:MM:SS[.ffffff]``, maps as objects; bytes
    (which polars cannot write) as base64.

    ``utc``: naive datetimes are UTC instants (metadata times): ``YYYY-MM-DDTHH:MM:SS[.ffffff]Z``.
    """
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            return value.isoformat()
        return value.isoformat() + "Z" if utc else value.isoformat(sep=" ")
    if isinstance(value, (dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return value.total_seconds()
    if isinstance(value, Mapping):
        return {str(k): jsonable(v, utc=utc) for k, v in value.items()}
    if isinstance(value, list) and value and all(isinstance(v, tuple) and len(v) == 2 for v in value):
        return {str(k): jsonable(v, utc=utc) for k, v in value}  # a MAP value reads as (key, value) tuples
    if isinstance(value, (list, tuple)):
        return [jsonable(v, utc=utc) for v in value]
    return str(value)


def rows_of(table: pa.Table, *, utc: bool = False) -> list[dict[str, Any]]:
    """An Arrow table (metadata-sized) as JSON-safe row dicts."""
    return [{k: jsonable(v, utc=utc) for k, v in row.items()} for row in table.to_pylist()]


def emit_json(document: Any) -> None:
    click.echo(json.dumps(document, indent=2, ensure_ascii=False))


def human_bytes(n: int | None) -> str:
    if n is None:
        return "?"
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if size < 1024 or unit == "TiB":
            return f"{int(size)} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    raise AssertionError("unreachable")


def cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, dt.datetime):
        return value.isoformat(sep=" ", timespec="seconds")
    if isinstance(value, (list, tuple)):
        return ", ".join(cell(v) for v in value)
    if isinstance(value, Mapping):
        return ", ".join(f"{k}={cell(v)}" for k, v in value.items())
    return str(value)


def print_table(title: str | None, columns: Sequence[str], rows: Iterable[Sequence[Any]],
                *, right: Sequence[str] = ()) -> None:
    """A rich table on stdout; ``right``: columns to right-align (numbers)."""
    table = RichTable(title=title, title_justify="left", show_edge=False, header_style="bold")
    for name in columns:
        table.add_column(name, justify="right" if name in right else "left", overflow="fold")
    for row in rows:
        table.add_row(*(cell(v) for v in row))
    stdout_console().print(table)


def print_pairs(title: str | None, pairs: Iterable[tuple[str, Any]]) -> None:
    """A two-column key/value listing."""
    table = RichTable(title=title, title_justify="left", show_header=False, show_edge=False, box=None)
    table.add_column(style="bold")
    table.add_column(overflow="fold")
    for key, value in pairs:
        table.add_row(key, cell(value))
    stdout_console().print(table)


def echo(message: str) -> None:
    """A plain line on stdout (summaries), never folded."""
    stdout_console().print(message, markup=False, soft_wrap=True)
