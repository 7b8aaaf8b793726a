"""The `lakehouse` command group: global options and error reporting.

Errors: a TableFormatError, an OSError or another user mistake prints one line on stderr (``Error: ...``, naming
the table, option or file) and exits with 1; click's usage errors (unknown option, missing argument, a value that
does not parse) exit with 2. ``--debug`` shows the traceback instead.
"""

from __future__ import annotations

import os
from typing import Any

import click

from lakehouse_cli import health_command, iceberg_command, inspect_commands, maintain_commands, read_command
from lakehouse_cli.context import DEFAULT_WAREHOUSE, CliState
from table_format import TableFormatError


def _one_line(error: BaseException) -> str:
    text = " ".join(str(error).split()) or type(error).__name__
    return text if isinstance(error, (TableFormatError, OSError)) else f"{type(error).__name__}: {text}"


class LakehouseGroup(click.Group):
    """Turns library errors into one-line click errors (exit code 1) unless --debug; lists commands in the order
    they were added (inspect, read, maintain)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(self.commands)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.exceptions.ClickException, click.exceptions.Exit, click.exceptions.Abort, KeyboardInterrupt,
                SystemExit, GeneratorExit):
            raise
        except BaseException as e:  # also Rust panics of pyarrow/polars (BaseException)
            state = ctx.find_object(CliState)
            if state is not None and state.debug:
                raise
            message = _one_line(e)
            if not isinstance(e, (TableFormatError, OSError)):
                message = f"unexpected error: {message} (rerun with --debug for the traceback)"
            raise click.ClickException(message) from None


@click.group("lakehouse", cls=LakehouseGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 110})
@click.option("--warehouse", "-w", envvar="LAKEHOUSE_WAREHOUSE", default=DEFAULT_WAREHOUSE, show_default=True,
              show_envvar=True, help="Warehouse root: a local path or a URI (s3://bucket/path, file://...).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of tables (every command that prints data).")
@click.option("--progress/--no-progress", default=None,
              help="Progress bars on stderr (default: only when stderr is a terminal).")
@click.option("--debug", is_flag=True, help="Show tracebacks.")
@click.option("--branch", default=None, metavar="NAME",
              help="Act on this Paimon branch of each table (the same as naming it DB.TABLE$branch_NAME).")
@click.version_option(package_name="lakehouse", prog_name="lakehouse")
@click.pass_context
def cli(ctx: click.Context, warehouse: str, as_json: bool, progress: bool | None, debug: bool,
        branch: str | None) -> None:
    """Inspect and maintain the Paimon tables of a warehouse. Tables are named DB.TABLE.

    Commands that delete files (expire-snapshots, remove-orphan-files, delete-tag, rollback) are dry runs unless
    --apply is given. Full reference: docs/cli.md.
    """
    ctx.obj = CliState(warehouse=os.path.expanduser(warehouse), json=as_json, debug=debug, progress=progress,
                       branch=branch)


for command in (
    inspect_commands.list_tables, inspect_commands.describe, inspect_commands.snapshots, inspect_commands.files,
    inspect_commands.partitions, inspect_commands.tags, inspect_commands.schemas, health_command.health,
    read_command.read,
    maintain_commands.compact, maintain_commands.rescale, maintain_commands.expire_snapshots,
    maintain_commands.remove_orphan_files, maintain_commands.create_tag, maintain_commands.delete_tag,
    maintain_commands.rollback, iceberg_command.iceberg_sync,
):
    cli.add_command(command)
