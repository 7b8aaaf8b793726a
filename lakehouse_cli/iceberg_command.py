"""`lakehouse iceberg-sync DB.TABLE`: write a table's Iceberg metadata for its latest snapshot now."""

from __future__ import annotations

import click

from lakehouse_cli.context import json_option, state_of, wants_json
from lakehouse_cli.output import echo, emit_json


@click.command("iceberg-sync")
@click.argument("table", metavar="DB.TABLE")
@json_option
@click.pass_context
def iceberg_sync(ctx: click.Context, table: str, as_json: bool) -> None:
    """Bring TABLE's Iceberg metadata (option metadata.iceberg.storage) up to its latest snapshot.

    Every commit does this by itself; run it after enabling the option with another engine, or to catch up a table
    whose last commit could not write its Iceberg metadata."""
    loaded = state_of(ctx).table(table)
    location = loaded.iceberg_metadata_dir()
    if location is None:
        raise click.ClickException(
            f"table {table!r} writes no Iceberg metadata: set option 'metadata.iceberg.storage' to 'table-location' "
            "or 'hadoop-catalog' first")
    version = loaded.sync_iceberg()
    if wants_json(ctx, as_json):
        emit_json({"table": table, "metadata": location, "written_version": version})
        return
    latest = loaded.latest_snapshot()
    if version is None:
        echo(f"{table}: Iceberg metadata in {location} is up to date"
             + (f" (snapshot {latest.id})" if latest else " (no snapshot yet)"))
    else:
        echo(f"{table}: wrote {location}/v{version}.metadata.json (Iceberg snapshot {version})")
