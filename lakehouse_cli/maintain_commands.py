"""Commands that change a table: compact, rescale, expire-snapshots, remove-orphan-files, create-tag, delete-tag,
rollback. Whatever deletes files is a dry run unless ``--apply`` is given."""

from __future__ import annotations

import dataclasses
import datetime as dt
import importlib
from collections.abc import Callable
from typing import Any

import click

from lakehouse_cli.compact_reason import nothing_to_compact
from lakehouse_cli.context import CliState, UserError, json_option, state_of, wants_json
from lakehouse_cli.output import echo, emit_json, human_bytes
from lakehouse_cli.params import AGE, AGE_OR_INSTANT, PARTITION
from lakehouse_cli.progress import maintenance_progress, spinner

TABLE = click.argument("table", metavar="DB.TABLE")
APPLY = click.option("--apply/--dry-run", "apply", default=False,
                     help="Delete for real (the default is a dry run that reports and changes nothing).")
SPARK = click.option("--spark", is_flag=True, help="Run on PySpark through jobs.spark (SPARK_MASTER, default local[2]).")
VERBOSE = click.option("--verbose", "-v", is_flag=True, help="List the files too.")
PARTITIONS = click.option("--partition", "-p", "partitions", type=PARTITION, multiple=True,
                          help="Only this partition, e.g. dt=2024-05-14 (repeatable).")


def _spark_runner() -> Any:
    """lakehouse_cli.spark_runner, or a one-line error saying what is missing."""
    try:
        return importlib.import_module("lakehouse_cli.spark_runner")
    except ModuleNotFoundError as e:
        if (e.name or "").split(".")[0] == "pyspark":
            raise UserError("--spark needs pyspark: install the spark extra (pip install 'lakehouse[spark]')") from None
        raise UserError(f"--spark: jobs.spark cannot be loaded ({e})") from None
    except ImportError as e:
        raise UserError(f"--spark: this jobs.spark has no distributed maintenance ({e})") from None


def run_maintenance(state: CliState, table: str, operation: str, *, spark: bool, **options: Any) -> Any:
    """One maintenance operation, locally with a progress bar, or on Spark with a spinner."""
    loaded = state.table(table)  # an unknown table fails here, before any Spark session starts
    label = f"{operation.replace('_', ' ')} {table}"
    if spark:
        runner = _spark_runner()
        with spinner(f"{label} on Spark", enabled=state.progress):
            return runner.run_on_spark(operation, state.table_uri(table), **options)
    action: Callable[..., Any] = getattr(loaded.maintenance, operation)
    with maintenance_progress(label, enabled=state.progress) as progress:
        return action(**options, progress=progress)


def report(ctx: click.Context, as_json: bool, table: str, operation: str, result: Any, text: str, *,
           extra: dict[str, Any] | None = None, files: tuple[str, ...] = (), verbose: bool = False) -> None:
    """The summary: one JSON document (the result's fields, then ``extra``) or a line of text (files with -v)."""
    if wants_json(ctx, as_json):
        fields = result if isinstance(result, dict) else dataclasses.asdict(result)
        emit_json({"table": table, "operation": operation, **fields, **(extra or {})})
        return
    echo(f"{table}: {text}")
    if verbose:
        for path in files:
            echo(f"  {path}")


def _ids(ids: tuple[int, ...]) -> str:
    if not ids:
        return "none"
    return f"{ids[0]}..{ids[-1]}" if list(ids) == list(range(ids[0], ids[-1] + 1)) and len(ids) > 2 else \
        ", ".join(map(str, ids))


def _engine(spark: bool) -> dict[str, str]:
    return {"engine": "spark" if spark else "local"}


def _dry(apply: bool, done: str, would: str) -> str:
    return done if apply else f"dry run: would {would}; pass --apply to do it"


@click.command()
@TABLE
@click.option("--full", is_flag=True, help="Rewrite everything to the highest level (default: universal compaction).")
@PARTITIONS
@SPARK
@json_option
@click.pass_context
def compact(ctx: click.Context, table: str, full: bool, partitions: tuple[dict[str, str], ...], spark: bool,
            as_json: bool) -> None:
    """Compact the table (or some partitions) into one COMPACT snapshot."""
    state = state_of(ctx)
    result = run_maintenance(state, table, "compact", spark=spark, full=full, partitions=list(partitions) or None)
    extra = _engine(spark)
    if result.snapshot_id is None:
        text = extra["reason"] = nothing_to_compact(state.table(table), full=full, partitions=list(partitions) or None)
    else:
        text = (f"compacted {result.compacted_buckets} bucket(s): {result.rewritten_files} file(s) merged into "
                f"{result.new_files}, {result.upgraded_files} upgraded in place; snapshot {result.snapshot_id}")
    report(ctx, as_json, table, "compact", result, text, extra=extra)


@click.command()
@TABLE
@click.option("--bucket", type=click.IntRange(min=1), required=True, help="The new bucket count.")
@PARTITIONS
@SPARK
@json_option
@click.pass_context
def rescale(ctx: click.Context, table: str, bucket: int, partitions: tuple[dict[str, str], ...], spark: bool,
            as_json: bool) -> None:
    """Change the bucket count and rewrite the table (or some partitions) with it."""
    result = run_maintenance(state_of(ctx), table, "rescale", spark=spark, bucket=bucket,
                             partitions=list(partitions) or None)
    text = f"bucket count {result.bucket}; " + (
        "no data to rewrite" if result.snapshot_id is None else
        f"rewrote {result.rewritten_partitions} partition(s), {result.rewritten_rows} row(s); "
        f"snapshot {result.snapshot_id}")
    report(ctx, as_json, table, "rescale", result, text, extra=_engine(spark))


@click.command("expire-snapshots")
@TABLE
@click.option("--retain-min", type=int, help="Keep at least N snapshots (default: snapshot.num-retained.min).")
@click.option("--retain-max", type=int, help="Keep at most N snapshots (default: snapshot.num-retained.max).")
@click.option("--older-than", type=AGE_OR_INSTANT,
              help="Expire snapshots whose successor is older, e.g. 1d (default: snapshot.time-retained).")
@click.option("--max-deletes", type=int, help="Expire at most N snapshots (default: snapshot.expire.limit).")
@APPLY
@SPARK
@VERBOSE
@json_option
@click.pass_context
def expire_snapshots(ctx: click.Context, table: str, retain_min: int | None, retain_max: int | None,
                     older_than: dt.timedelta | dt.datetime | None, max_deletes: int | None, apply: bool,
                     spark: bool, verbose: bool, as_json: bool) -> None:
    """Expire old snapshots and delete the files only they used (dry run unless --apply)."""
    result = run_maintenance(state_of(ctx), table, "expire_snapshots", spark=spark, retain_min=retain_min,
                             retain_max=retain_max, older_than=older_than, max_deletes=max_deletes,
                             dry_run=not apply)
    n = len(result.expired_snapshots)
    ids = _ids(result.expired_snapshots)
    if not n:
        text = "no snapshot to expire" + ("" if apply else " (dry run)")
    else:
        text = _dry(apply, f"expired {n} snapshot(s) ({ids}), deleted {len(result.deleted_files)} file(s); "
                           f"earliest snapshot now {result.earliest_snapshot_id}",
                    f"expire {n} snapshot(s) ({ids}) and delete {len(result.deleted_files)} file(s)")
    report(ctx, as_json, table, "expire_snapshots", result, text, extra=_engine(spark),
           files=result.deleted_files, verbose=verbose)


@click.command("remove-orphan-files")
@TABLE
@click.option("--older-than", type=AGE_OR_INSTANT, default="1d", show_default=True,
              help="Only files older than this (files being written now must survive).")
@APPLY
@SPARK
@VERBOSE
@json_option
@click.pass_context
def remove_orphan_files(ctx: click.Context, table: str, older_than: dt.timedelta | dt.datetime, apply: bool,
                        spark: bool, verbose: bool, as_json: bool) -> None:
    """Delete files no snapshot, tag or changelog references (dry run unless --apply)."""
    result = run_maintenance(state_of(ctx), table, "remove_orphan_files", spark=spark, older_than=older_than,
                             dry_run=not apply)
    n, uploads = len(result.orphan_files), len(result.abandoned_uploads)
    size = human_bytes(result.bytes_freed)
    if not n and not uploads:
        text = "no orphan file" + ("" if apply else " (dry run)")
    else:
        dirs = f", removed {len(result.removed_directories)} empty director(ies)" if result.removed_directories else ""
        aborted = f", aborted {len(result.aborted_uploads)} abandoned multipart upload(s)" if uploads else ""
        abort = f" and abort {uploads} abandoned multipart upload(s)" if uploads else ""
        text = _dry(apply, f"deleted {len(result.deleted_files)} orphan file(s) ({size}){dirs}{aborted}",
                    f"delete {n} orphan file(s) ({size}){abort}")
    report(ctx, as_json, table, "remove_orphan_files", result, text, extra=_engine(spark),
           files=result.orphan_files + result.abandoned_uploads, verbose=verbose)


@click.command("create-tag")
@TABLE
@click.argument("name")
@click.option("--snapshot", type=click.IntRange(min=1), help="Tag this snapshot (default: the latest).")
@click.option("--time-retained", type=AGE, help="Let expiration drop the tag after this age, e.g. 7d.")
@json_option
@click.pass_context
def create_tag(ctx: click.Context, table: str, name: str, snapshot: int | None, time_retained: dt.timedelta | None,
               as_json: bool) -> None:
    """Tag a snapshot so that it and its files outlive expiration."""
    snapshot_id = state_of(ctx).table(table).create_tag(name, snapshot_id=snapshot, time_retained=time_retained)
    report(ctx, as_json, table, "create_tag", {"tag": name, "snapshot_id": snapshot_id}, f"tag {name!r} -> snapshot {snapshot_id}")


@click.command("delete-tag")
@TABLE
@click.argument("name")
@APPLY
@VERBOSE
@json_option
@click.pass_context
def delete_tag(ctx: click.Context, table: str, name: str, apply: bool, verbose: bool, as_json: bool) -> None:
    """Delete a tag and the files only it kept alive (dry run unless --apply)."""
    state = state_of(ctx)
    loaded = state.table(table)
    with spinner(f"delete tag {name} of {table}", enabled=state.progress):
        result = loaded.delete_tag(name, dry_run=not apply)
    files = len(result.deleted_files)
    text = _dry(apply, f"deleted tag {name!r} (snapshot {result.snapshot_id}), {files} file(s)",
                f"delete tag {name!r} (snapshot {result.snapshot_id}) and {files} file(s)")
    report(ctx, as_json, table, "delete_tag", result, text, extra={"dry_run": not apply}, files=result.deleted_files,
           verbose=verbose)


@click.command()
@TABLE
@click.option("--snapshot", type=click.IntRange(min=1), help="Roll back to this snapshot.")
@click.option("--tag", help="Roll back to the snapshot of this tag.")
@APPLY
@VERBOSE
@json_option
@click.pass_context
def rollback(ctx: click.Context, table: str, snapshot: int | None, tag: str | None, apply: bool, verbose: bool,
             as_json: bool) -> None:
    """Make a former snapshot the latest; later snapshots and tags go with their files (dry run unless --apply)."""
    if (snapshot is None) == (tag is None):
        raise click.UsageError("pass exactly one of --snapshot and --tag", ctx)
    state = state_of(ctx)
    loaded = state.table(table)
    with spinner(f"rollback {table}", enabled=state.progress):
        result = loaded.rollback_to(snapshot_id=snapshot, tag=tag, dry_run=not apply)
    removed = (f"snapshots {_ids(result.removed_snapshots)}, tags {list(result.removed_tags) or 'none'}, "
               f"{len(result.deleted_files)} file(s)")
    text = _dry(apply, f"rolled back to snapshot {result.snapshot_id}; removed {removed}",
                f"roll back to snapshot {result.snapshot_id} and remove {removed}")
    report(ctx, as_json, table, "rollback", result, text, extra={"dry_run": not apply}, files=result.deleted_files,
           verbose=verbose)
