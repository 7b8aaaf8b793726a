"""`lakehouse read`: the merged rows of a table as a table, JSON lines, CSV or Parquet."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO

import click
import polars as pl
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from lakehouse_cli.context import UserError, json_option, state_of, wants_json
from lakehouse_cli.filters import parse_filters
from lakehouse_cli.output import jsonable, print_table, stdout_console
from lakehouse_cli.progress import RowCounter, row_progress
from table_format import Table

TABLE_FORMAT_ROWS = 50  # rows shown by --format table without --limit
FORMATS = ("table", "jsonl", "csv", "parquet")


@click.command()
@click.argument("table", metavar="DB.TABLE")
@click.option("--filter", "-f", "filters", multiple=True, metavar="EXPR",
              help="e.g. \"dt = '2024-05-14' and amount > 10\"; repeat to AND (syntax in docs/cli.md).")
@click.option("--columns", "-c", help="Comma-separated columns to read (default all).")
@click.option("--snapshot", type=click.IntRange(min=1), help="Read this snapshot (time travel).")
@click.option("--tag", help="Read the snapshot of this tag.")
@click.option("--limit", "-n", type=click.IntRange(min=0), help="At most N rows.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), help="Output format (default table, jsonl with --json).")
@click.option("--output", "-o", type=click.Path(dir_okay=False, writable=True),
              help="Write to this file instead of stdout (required for parquet).")
@json_option
@click.pass_context
def read(ctx: click.Context, table: str, filters: tuple[str, ...], columns: str | None, snapshot: int | None,
         tag: str | None, limit: int | None, fmt: str | None, output: str | None, as_json: bool) -> None:
    """Read the table's rows (the merged view of a primary-key table), optionally filtered and projected."""
    state = state_of(ctx)
    fmt = fmt or ("jsonl" if wants_json(ctx, as_json) else "table")
    if fmt == "parquet" and output is None:
        raise click.UsageError("--format parquet needs --output FILE", ctx)
    if snapshot is not None and tag is not None:
        raise click.UsageError("pass --snapshot or --tag, not both", ctx)
    loaded = state.table(table)
    column_list = [c.strip() for c in columns.split(",") if c.strip()] if columns else None
    if columns is not None and not column_list:
        raise UserError(f"--columns {columns!r} names no column")
    shown_limit = limit if limit is not None or fmt != "table" else TABLE_FORMAT_ROWS
    scan = loaded.scan(filter=parse_filters(filters, loaded.arrow_schema), columns=column_list,
                       snapshot_id=snapshot, tag=tag,
                       limit=shown_limit + 1 if shown_limit is not None and limit is None else shown_limit)
    schema = _projected_schema(loaded, column_list)
    with row_progress(f"reading {table}", enabled=state.progress) as counter:
        batches = _counted(scan.to_batches(), counter)
        if fmt == "table":
            collected = list(batches)
            rows = pa.Table.from_batches(collected) if collected else schema.empty_table()
            _print_rows(table, rows, shown_limit, limit)
        elif fmt == "parquet":
            assert output is not None
            _write_parquet(batches, schema, output)
        else:
            _write_text(batches, schema, fmt, output)
    if output is not None:
        click.echo(f"{counter.rows} row(s) written to {output}", err=True)


def _projected_schema(table: Table, columns: list[str] | None) -> pa.Schema:
    """The schema of the rows read (the projected columns), also when there is no row."""
    schema = table.arrow_schema
    return schema if columns is None else pa.schema([schema.field(c) for c in columns])


def _counted(batches: Iterator[pa.RecordBatch], counter: RowCounter) -> Iterator[pa.RecordBatch]:
    for batch in batches:
        counter.add(batch.num_rows)
        yield batch


def _print_rows(table: str, rows: pa.Table, shown: int | None, limit: int | None) -> None:
    truncated = shown is not None and limit is None and rows.num_rows > shown
    if truncated:
        rows = rows.slice(0, shown)
    print_table(None, rows.column_names, [tuple(r.values()) for r in rows.to_pylist()],
                right=[f.name for f in rows.schema if pa.types.is_integer(f.type) or pa.types.is_floating(f.type)
                       or pa.types.is_decimal(f.type)])
    note = f"first {shown} rows; pass --limit N for more" if truncated else f"{rows.num_rows} row(s)"
    stdout_console().print(f"[dim]{table}: {note}[/dim]")


def _write_parquet(batches: Iterator[pa.RecordBatch], schema: pa.Schema, output: str) -> None:
    first = next(batches, None)
    with pq.ParquetWriter(output, first.schema if first is not None else schema) as writer:
        if first is not None:
            writer.write_batch(first)
        for batch in batches:
            writer.write_batch(batch)


def _has_binary(t: pa.DataType) -> bool:
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t):
        return True
    return any(_has_binary(t.field(i).type) for i in range(t.num_fields))


def _write_jsonl(batch: pa.RecordBatch, sink: IO[bytes], *, python_encoder: bool) -> None:
    """JSON lines with polars (fast); with the Python encoder (binary as base64) where polars cannot write binary."""
    if python_encoder:
        lines = (json.dumps(jsonable(row), ensure_ascii=False, separators=(",", ":")) for row in batch.to_pylist())
        sink.write("".join(line + "\n" for line in lines).encode())
        return
    frame = pl.from_arrow(batch)
    assert isinstance(frame, pl.DataFrame)
    frame.write_ndjson(sink)


def _write_text(batches: Iterator[pa.RecordBatch], schema: pa.Schema, fmt: str, output: str | None) -> None:
    if fmt == "csv":
        unfit = [f.name for f in schema if pa.types.is_nested(f.type) or _has_binary(f.type)]
        if unfit:
            raise UserError(f"--format csv cannot hold the nested or binary columns {unfit}; use --format jsonl or "
                            "parquet, or leave them out with --columns")
    python_encoder = any(_has_binary(f.type) for f in schema)
    with _open_output(output) as sink:
        first = True
        for batch in batches:
            if fmt == "csv":
                options = pacsv.WriteOptions(include_header=first)
                pacsv.write_csv(pa.Table.from_batches([batch]), sink, write_options=options)
            else:
                _write_jsonl(batch, sink, python_encoder=python_encoder)
            first = False
        if first and fmt == "csv":  # no rows: still the header
            pacsv.write_csv(schema.empty_table(), sink)
        sink.flush()


@contextmanager
def _open_output(output: str | None) -> Iterator[IO[bytes]]:
    """The output file, or stdout's binary buffer (left open)."""
    if output is not None:
        with open(output, "wb") as f:
            yield f
        return
    sys.stdout.flush()
    yield sys.stdout.buffer
    sys.stdout.buffer.flush()
