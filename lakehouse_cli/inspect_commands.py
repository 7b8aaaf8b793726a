"""Read-only commands: list, describe, snapshots, files, partitions, tags, schemas (health: health_command.py)."""

from __future__ import annotations

import json
from typing import Any

import click

from lakehouse_cli.context import json_option, state_of, wants_json
from lakehouse_cli.describe import describe_json, snapshot_json
from lakehouse_cli.output import emit_json, human_bytes, print_pairs, print_table, rows_of
from table_format import FileSystemCatalog, TableFormatError

TABLE = click.argument("table", metavar="DB.TABLE")


def _table_entry(catalog: FileSystemCatalog, database: str, name: str) -> dict[str, Any]:
    """One table of `list`; a table whose metadata cannot be read is listed with its error instead."""
    try:
        table = catalog.load_table(f"{database}.{name}")
        latest = table.latest_snapshot()
        return {
            "name": name, "primary_keys": table.primary_keys, "partition_keys": table.partition_keys,
            "bucket": int(table.options.get("bucket", "-1")),
            "latest_snapshot": latest.id if latest else None,
            "records": latest.total_record_count if latest else 0,
        }
    except TableFormatError as e:
        return {"name": name, "error": " ".join(str(e).split())}


@click.command("list")
@click.argument("database", required=False)
@json_option
@click.pass_context
def list_tables(ctx: click.Context, database: str | None, as_json: bool) -> None:
    """Databases and their tables (with keys, buckets and the latest snapshot)."""
    state = state_of(ctx)
    catalog = state.catalog
    databases = [state.database(database)] if database else catalog.list_databases()
    docs: list[dict[str, Any]] = []
    for db in databases:
        docs.append({"name": db, "tables": [_table_entry(catalog, db, name) for name in catalog.list_tables(db)]})
    if wants_json(ctx, as_json):
        emit_json({"warehouse": state.warehouse, "databases": docs})
        return
    rows = [(f"{d['name']}.{t['name']}", t["primary_keys"], t["partition_keys"], t["bucket"], t["latest_snapshot"],
             t["records"]) for d in docs for t in d["tables"] if "error" not in t]
    print_table(f"warehouse {state.warehouse}: {len(docs)} database(s), {sum(len(d['tables']) for d in docs)} "
                "table(s)",
                ["table", "primary keys", "partition keys", "bucket", "snapshot", "records"], rows,
                right=("bucket", "snapshot", "records"))
    empty = [d["name"] for d in docs if not d["tables"]]
    if empty:
        click.echo(f"empty databases: {', '.join(empty)}")
    for d in docs:
        for t in d["tables"]:
            if "error" in t:
                click.echo(f"warning: {d['name']}.{t['name']} cannot be read: {t['error']}", err=True)


@click.command()
@TABLE
@json_option
@click.pass_context
def describe(ctx: click.Context, table: str, as_json: bool) -> None:
    """Schema (with field ids), keys, partitioning, buckets, merge engine, non-default options, latest snapshot."""
    doc = describe_json(state_of(ctx).table(table))
    if wants_json(ctx, as_json):
        emit_json(doc)
        return
    print_table(f"{doc['table']} (schema {doc['schema_id']})", ["id", "name", "type", "comment"],
                [(f["id"], f["name"], f["type"], f["comment"]) for f in doc["fields"]], right=("id",))
    latest = doc["latest_snapshot"]
    print_pairs(None, [
        ("path", doc["path"]),
        ("primary keys", doc["primary_keys"] or "none (append table)"),
        ("partition keys", doc["partition_keys"] or "none"),
        ("buckets", f"{doc['bucket']} ({doc['bucket_mode']})"
         + (f" on {', '.join(doc['bucket_keys'])}" if doc["bucket_mode"] == "fixed" else "")),
        ("merge engine", doc["merge_engine"] or "n/a (append table)"),
        ("changelog producer", doc["changelog_producer"]),
        ("file format", doc["file_format"]),
        ("options", doc["options"] or "all defaults"),
        ("snapshots", doc["snapshot_count"]),
        ("tags", doc["tags"] or "none"),
        ("iceberg metadata", doc["iceberg_metadata"] or "none (option metadata.iceberg.storage)"),
        ("latest snapshot", "none" if latest is None else
         f"{latest['snapshot_id']} ({latest['commit_kind']}, {_time_text(latest['commit_time'])} UTC, "
         f"{latest['total_record_count']} records)"),
    ])


def _time_text(iso_utc: str) -> str:
    """``2024-05-14T09:00:00.123Z`` as ``2024-05-14 09:00:00``."""
    return iso_utc.replace("T", " ")[:19]


@click.command()
@TABLE
@click.option("--limit", type=click.IntRange(min=1), help="Only the latest N snapshots.")
@json_option
@click.pass_context
def snapshots(ctx: click.Context, table: str, limit: int | None, as_json: bool) -> None:
    """The table's snapshots, oldest first."""
    docs = [snapshot_json(s) for s in state_of(ctx).table(table).snapshots()]
    if limit is not None:
        docs = docs[-limit:]
    if wants_json(ctx, as_json):
        emit_json(docs)
        return
    print_table(f"{table}: {len(docs)} snapshot(s)",
                ["id", "kind", "commit time (UTC)", "schema", "records", "delta", "changelog", "commit user"],
                [(d["snapshot_id"], d["commit_kind"], _time_text(d["commit_time"]), d["schema_id"], d["total_record_count"],
                  d["delta_record_count"], d["changelog_record_count"], d["commit_user"]) for d in docs],
                right=("id", "schema", "records", "delta", "changelog"))


@click.command()
@TABLE
@json_option
@click.pass_context
def files(ctx: click.Context, table: str, as_json: bool) -> None:
    """The data files of the latest snapshot (the $files system table)."""
    system = state_of(ctx).table(table).system_table("files")
    if wants_json(ctx, as_json):
        emit_json(rows_of(system, utc=True))
        return
    rows = system.to_pylist()
    total = sum(r["file_size_in_bytes"] for r in rows)
    print_table(f"{table}: {len(rows)} file(s), {human_bytes(total)}",
                ["partition", "bucket", "file", "level", "records", "size", "schema", "created (UTC)"],
                [(r["partition"], r["bucket"], r["file_path"].rsplit("/", 1)[-1], r["level"], r["record_count"],
                  human_bytes(r["file_size_in_bytes"]), r["schema_id"], r["creation_time"]) for r in rows],
                right=("bucket", "level", "records", "size", "schema"))


@click.command()
@TABLE
@click.option("--buckets", is_flag=True, help="One row per (partition, bucket) instead of per partition.")
@json_option
@click.pass_context
def partitions(ctx: click.Context, table: str, buckets: bool, as_json: bool) -> None:
    """Records, files and bytes per partition (or per bucket) in the latest snapshot."""
    system = state_of(ctx).table(table).system_table("buckets" if buckets else "partitions")
    if wants_json(ctx, as_json):
        emit_json(rows_of(system, utc=True))
        return
    rows = system.to_pylist()
    columns = ["partition", *(["bucket"] if buckets else []), "records", "files", "size", "last update (UTC)"]
    print_table(f"{table}: {len(rows)} {'bucket' if buckets else 'partition'}(s)", columns,
                [(r["partition"], *([r["bucket"]] if buckets else []), r["record_count"], r["file_count"],
                  human_bytes(r["file_size_in_bytes"]), r["last_update_time"]) for r in rows],
                right=("bucket", "records", "files", "size"))


@click.command()
@TABLE
@json_option
@click.pass_context
def tags(ctx: click.Context, table: str, as_json: bool) -> None:
    """The table's tags and the snapshots they keep."""
    system = state_of(ctx).table(table).system_table("tags")
    if wants_json(ctx, as_json):
        emit_json(rows_of(system, utc=True))
        return
    rows = system.to_pylist()
    print_table(f"{table}: {len(rows)} tag(s)", ["tag", "snapshot", "schema", "commit time (UTC)", "records"],
                [(r["tag_name"], r["snapshot_id"], r["schema_id"], r["commit_time"], r["record_count"])
                 for r in rows], right=("snapshot", "schema", "records"))


def _schema_doc(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "schema_id": row["schema_id"],
        "fields": json.loads(row["fields"]),
        "partition_keys": json.loads(row["partition_keys"]),
        "primary_keys": json.loads(row["primary_keys"]),
        "options": json.loads(row["options"]),
        "comment": row["comment"],
        "update_time": row["update_time"],
    }


def _keys_text(primary_keys: list[str], partition_keys: list[str]) -> str:
    parts = [f"primary ({', '.join(primary_keys)})"] if primary_keys else []
    parts += [f"partition ({', '.join(partition_keys)})"] if partition_keys else []
    return "; ".join(parts) or "none"


def _type_text(t: Any) -> str:
    return t if isinstance(t, str) else str(t.get("type", t))


@click.command()
@TABLE
@json_option
@click.pass_context
def schemas(ctx: click.Context, table: str, as_json: bool) -> None:
    """Every schema version of the table (the $schemas system table)."""
    system = state_of(ctx).table(table).system_table("schemas")
    if wants_json(ctx, as_json):
        emit_json([_schema_doc(r) for r in rows_of(system, utc=True)])
        return
    docs = [_schema_doc(r) for r in system.to_pylist()]
    print_table(f"{table}: {len(docs)} schema(s)", ["id", "updated (UTC)", "fields (id:name type)", "keys", "options"],
                [(d["schema_id"], d["update_time"],
                  ", ".join(f"{f['id']}:{f['name']} {_type_text(f['type'])}" for f in d["fields"]),
                  _keys_text(d["primary_keys"], d["partition_keys"]), d["options"]) for d in docs],
                right=("id",))
