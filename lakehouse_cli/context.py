"""What every command shares: the warehouse, output switches, and opening tables by identifier."""

from __future__ import annotations

import difflib
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cached_property
from typing import Any
from urllib.parse import urlparse

import click

from table_format import FileSystemCatalog, SchemaError, Table, TableFormatError, TableNotFoundError

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
        """The table (on ``--branch`` if given); an unknown one fails naming the closest existing table ("did you
        mean 'shop.orders'?")."""
        if self.branch is not None and "$" not in identifier:
            identifier = f"{identifier}$branch_{self.branch}"
        try:
            return self.catalog.load_table(identifier)
        except (TableNotFoundError, SchemaError) as e:
            if isinstance(e, SchemaError) and identifier.count(".") == 1:
                raise  # not a malformed identifier
            hint = suggest_table(identifier, self._identifiers())
            if hint is None:
                raise
            raise type(e)(f"{' '.join(str(e).split())}; {hint}") from e

    def database(self, name: str) -> str:
        """`name` if the database exists, else an error naming the closest one."""
        if self.catalog.database_exists(name):
            return name
        hint = did_you_mean(name, self.catalog.list_databases())
        raise TableNotFoundError(f"database {name!r} does not exist" + (f"; {hint}" if hint else ""))

    def _identifiers(self) -> list[str]:
        """Every DB.TABLE of the warehouse (for suggestions; an unreadable database is left out)."""
        out = []
        for database in self.catalog.list_databases():
            try:
                out += [f"{database}.{name}" for name in self.catalog.list_tables(database)]
            except TableFormatError:
                continue
        return out

    def table_uri(self, identifier: str) -> str:
        """The table's location as a URI or absolute path (what jobs.spark takes)."""
        database, name = identifier.split(".")
        if _is_local(self.warehouse):
            return os.path.join(os.path.abspath(_local_path(self.warehouse)), f"{database}.db", name)
        return f"{self.warehouse.rstrip('/')}/{database}.db/{name}"


def closest(name: str, candidates: Iterable[str]) -> str | None:
    """The candidate closest to `name` (case-insensitive equality first, then difflib's), None when none is close."""
    choices = sorted(set(candidates))
    lowered = {c.lower(): c for c in choices}
    close = [lowered[name.lower()]] if name.lower() in lowered else difflib.get_close_matches(name, choices, n=1)
    return close[0] if close else None


def did_you_mean(name: str, candidates: Iterable[str]) -> str | None:
    match = closest(name, candidates)
    return None if match is None else f"did you mean {match!r}?"


def suggest_table(identifier: str, identifiers: Iterable[str]) -> str | None:
    """``did you mean 'DB.TABLE'?``: the table name compared within its database, or within the closest database
    when that one does not exist; a bare table name is looked up in every database."""
    tables: dict[str, list[str]] = {}
    for full in identifiers:
        database, _, name = full.partition(".")
        tables.setdefault(database, []).append(name)
    if identifier.count(".") != 1:
        return did_you_mean(identifier, [f"{db}.{t}" for db, names in tables.items() for t in names if t == identifier])
    database, name = identifier.split(".")
    database = database if database in tables else closest(database, tables) or database
    match = closest(name, tables.get(database, []))
    return None if match is None else f"did you mean {database + '.' + match!r}?"


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
