"""What every command shares: the warehouse, output switches, and opening tables by identifier."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any
from urllib.parse import urlparse

import click

from table_format import FileSystemCatalog, Table

DEFAULT_WAREHOUSE = "./warehouse"


class UserError(click.ClickException):
    """A mistake of the user (unknown table, bad value): one line on stderr, exit code 1."""


@dataclass
class CliState:
    """The group's options, shared with the subcommands through ``ctx.obj``."""

    warehouse: str
    json: bool = False
    debug: bool = False
    progress: bool | None = None  # None: only when stderr is a terminal
    branch: str | None = None  # --branch: every table opened by identifier is that Paimon branch

    @cached_property
    def catalog(self) -> FileSystemCatalog:
        if _is_local(self.warehouse) and not os.path.isdir(_local_path(self.warehouse)):
            raise UserError(f"warehouse {self.warehouse!r} does not exist (set --warehouse or LAKEHOUSE_WAREHOUSE)")
        return FileSystemCatalog(self.warehouse)

    def table(self, identifier: str) -> Table:
        if self.branch is not None and "$" not in identifier:
            identifier = f"{identifier}$branch_{self.branch}"
        return self.catalog.load_table(identifier)

    def table_uri(self, identifier: str) -> str:
        """The table's location as a URI or absolute path (what jobs.spark takes)."""
        database, name = identifier.split(".")
        if _is_local(self.warehouse):
            return os.path.join(os.path.abspath(_local_path(self.warehouse)), f"{database}.db", name)
        return f"{self.warehouse.rstrip('/')}/{database}.db/{name}"


def _is_local(warehouse: str) -> bool:
    return urlparse(warehouse).scheme in ("", "file")


def _local_path(warehouse: str) -> str:
    parsed = urlparse(warehouse)
    return parsed.path if parsed.scheme == "file" else warehouse


def state_of(ctx: click.Context) -> CliState:
    state = ctx.find_object(CliState)
    assert state is not None, "lakehouse subcommands run below the lakehouse group"
    return state


def json_option(f: Callable[..., Any]) -> Callable[..., Any]:
    """``--json`` on a subcommand (the group's ``--json`` works too)."""
    return click.option("--json", "as_json", is_flag=True, help="Print JSON (shapes in docs/cli.md).")(f)


def wants_json(ctx: click.Context, as_json: bool) -> bool:
    return as_json or state_of(ctx).json
