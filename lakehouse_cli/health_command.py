"""`lakehouse health [DB.TABLE | DATABASE]`: one table, a database or the whole warehouse against their own options.

Exit code 0 when every check of every table is ``ok``, 3 when any table needs attention (``warn``, ``critical`` or
``error``), so that a cron job or CI step can alert on it; the report is printed either way.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import click

from lakehouse_cli.context import json_option, state_of, wants_json
from lakehouse_cli.health import CHECKS, table_health, warehouse_health
from lakehouse_cli.output import echo, emit_json, human_bytes, print_table
from lakehouse_cli.params import AGE_OR_INSTANT, SIZE
from lakehouse_cli.progress import spinner

NEEDS_ATTENTION = 3  # the exit code when a table is not ok
NAMES = {"sorted_runs": "sorted runs", "small_files": "small files", "snapshots": "snapshots",
         "consumers": "consumers", "orphans": "orphan files"}


@click.command()
@click.argument("target", metavar="[DB.TABLE|DATABASE]", required=False)
@click.option("--small-file-size", type=SIZE, help="Files below this are small (default 0.7 x target-file-size).")
@click.option("--orphan-older-than", type=AGE_OR_INSTANT, default="1d", show_default=True,
              help="Age from which an unreferenced file counts as an orphan.")
@json_option
@click.pass_context
def health(ctx: click.Context, target: str | None, small_file_size: int | None,
           orphan_older_than: dt.timedelta | dt.datetime, as_json: bool) -> None:
    """Sorted runs, small files, snapshots against retention, consumers and orphan files, each ok / warn / critical;
    of one table, of every table of a database, or (no argument) of the whole warehouse. Exit code 3 when any
    table needs attention."""
    state = state_of(ctx)
    options: dict[str, Any] = {"small_file_size": small_file_size, "orphan_older_than": orphan_older_than}
    if target is not None and "." in target:
        loaded = state.table(target)
        with spinner(f"checking {target}", enabled=state.progress):
            report = table_health(loaded, **options)
        if wants_json(ctx, as_json):
            emit_json(report)
        else:
            print_table(f"{target}: {report['status'].upper()}", ["check", "status", "details"],
                        [(NAMES[key], report[key]["status"], _details(key, report[key])) for key in CHECKS])
        if report["status"] != "ok":
            ctx.exit(NEEDS_ATTENTION)
        return
    databases = [state.database(target)] if target is not None else state.catalog.list_databases()
    with spinner(f"checking {target or 'the warehouse'}", enabled=state.progress):
        doc = warehouse_health(state.catalog, databases, **options)
    doc = {"warehouse": state.warehouse, **({"database": target} if target else {}), **doc}
    if wants_json(ctx, as_json):
        emit_json(doc)
    else:
        _print_summary(target or f"warehouse {state.warehouse}", doc)
    if doc["status"] != "ok":
        ctx.exit(NEEDS_ATTENTION)


def _print_summary(scope: str, doc: dict[str, Any]) -> None:
    tables = doc["tables"]
    attention = [r for r in tables if r["status"] != "ok"]
    echo(f"{scope}: {doc['status'].upper()}, {len(tables)} table(s), {len(attention)} need(s) attention")
    print_table(None, ["table", "status", *(NAMES[k] for k in CHECKS)],
                [(r["table"], r["status"], *(r[k]["status"] if k in r else "" for k in CHECKS)) for r in tables])
    for r in attention:
        if "message" in r:
            echo(f"{r['table']}: {r['status']}: {r['message']}")
        for key in CHECKS:
            if key in r and r[key]["status"] != "ok":
                echo(f"{r['table']}: {NAMES[key]} {r[key]['status']}: {_details(key, r[key])}")


def _details(key: str, check: dict[str, Any]) -> str:
    if check["status"] == "error":
        return check["message"]
    if key == "sorted_runs":
        if not check["applies"]:
            return "append table: no sorted runs"
        return (f"max {check['max_sorted_runs']} per bucket (compaction trigger {check['compaction_trigger']}, "
                f"stop trigger {check['stop_trigger']}); {check['buckets_over_trigger']} bucket(s) at the trigger, "
                f"{check['buckets_at_stop_trigger']} at the stop trigger")
    if key == "small_files":
        return (f"{check['small_files']} of {check['files']} files below {human_bytes(check['threshold_bytes'])} "
                f"({human_bytes(check['small_bytes'])}); {len(check['crowded_buckets'])} bucket(s) with "
                f">= {check['compaction_min_file_num']}")
    if key == "snapshots":
        expirable = check["expirable_now"]
        return (f"{check['count']} snapshot(s) {check['earliest']}..{check['latest']}; retain min "
                f"{check['retain_min']}, time {dt.timedelta(seconds=check['time_retained_seconds'])}; "
                + (f"expiration would remove {len(expirable)} now" if expirable else "nothing to expire now"))
    if key == "consumers":
        if not check["count"]:
            return "none"
        behind = ", ".join(f"{c['consumer_id']} {'read' if c.get('pins_last_read') else 'next'} {c['next_snapshot']} "
                           f"({c['behind']} unread)" for c in check["consumers"][:5])
        return "; ".join([f"{check['count']}: {behind}", *check["problems"]])
    uploads = f"; {len(check['abandoned_uploads'])} abandoned multipart upload(s)" if check["abandoned_uploads"] else ""
    return f"{check['count']} file(s), {human_bytes(check['bytes'])} unreferenced{uploads}"
