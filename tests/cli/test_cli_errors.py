"""Errors: one line on stderr naming the table, option or file; exit 1 for user errors, 2 for usage errors;
tracebacks only with --debug."""

from __future__ import annotations

import os

import click
import pytest
from click.testing import CliRunner

from cli.cli_helpers import Run
from lakehouse_cli.context import CliState
from lakehouse_cli.main import LakehouseGroup, cli


@pytest.mark.parametrize(("args", "needle"), [
    (["describe", "shop.nope"], "table 'shop.nope' does not exist"),
    (["snapshots", "nope.orders"], "table 'nope.orders' does not exist"),
    (["files", "orders"], "invalid table identifier 'orders'"),
    (["list", "nope"], "database 'nope' does not exist"),
    (["read", "shop.orders", "-f", "amount > 'x'"], "'amount'"),
    (["expire-snapshots", "shop.orders", "--retain-min", "3", "--retain-max", "2"], "retain_max (2)"),
    (["create-tag", "shop.orders", "t", "--snapshot", "9"], "snapshot 9"),
])
def test_user_errors_exit_1_with_one_line(run: Run, args: list[str], needle: str) -> None:
    result = run(*args, code=1)
    assert result.stdout == ""
    assert result.stderr.startswith("Error: ") and result.stderr.count("\n") == 1, result.stderr
    assert needle in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("args", [
    ["nope"],
    ["describe"],
    ["describe", "shop.orders", "--bogus"],
    ["snapshots", "shop.orders", "--limit", "0"],
    ["read", "shop.orders", "--snapshot", "x"],
    ["health", "shop.orders", "--small-file-size", "big"],
    ["create-tag", "shop.orders", "t", "--time-retained", "2024-01-01"],
])
def test_usage_errors_exit_2(run: Run, args: list[str]) -> None:
    result = run(*args, code=2)
    assert "Usage: lakehouse" in result.stderr and "Error: " in result.stderr
    assert "Traceback" not in result.stderr


def test_missing_warehouse(tmp_path: object) -> None:
    missing = os.path.join(str(tmp_path), "missing")
    result = CliRunner().invoke(cli, ["--warehouse", missing, "list"])
    assert result.exit_code == 1
    assert result.stderr == f"Error: warehouse {missing!r} does not exist (set --warehouse or LAKEHOUSE_WAREHOUSE)\n"


def test_debug_shows_the_traceback(run: Run) -> None:
    result = CliRunner().invoke(cli, ["--warehouse", run.warehouse, "--debug", "describe", "shop.nope"])
    assert result.exit_code == 1
    assert type(result.exception).__name__ == "TableNotFoundError"


def test_damaged_metadata_names_the_file(run: Run) -> None:
    snapshot_file = os.path.join(run.warehouse, "shop.db", "orders", "snapshot", "snapshot-4")
    with open(snapshot_file, "w") as f:
        f.write("{ not json")
    err = run("snapshots", "shop.orders", code=1).stderr
    assert err.count("\n") == 1 and "snapshot-4" in err


def test_unexpected_errors_stay_one_line(run: Run) -> None:
    # a directory where a file should be: an OSError from the filesystem, named with its path
    orders = os.path.join(run.warehouse, "shop.db", "orders")
    os.remove(os.path.join(orders, "snapshot", "LATEST"))
    os.remove(os.path.join(orders, "snapshot", "snapshot-4"))
    os.mkdir(os.path.join(orders, "snapshot", "snapshot-4"))
    result = run("snapshots", "shop.orders", code=1)
    assert result.stderr.startswith("Error: ") and result.stderr.count("\n") == 1
    assert "Traceback" not in result.stderr


def test_help_lists_every_command(run: Run) -> None:
    out = run("--help").stdout
    for command in ("list", "describe", "snapshots", "files", "partitions", "tags", "schemas", "health", "read",
                    "compact", "expire-snapshots", "remove-orphan-files", "rescale", "create-tag", "delete-tag",
                    "rollback"):
        assert f"  {command} " in out
    assert "LAKEHOUSE_WAREHOUSE" in out


def test_a_bug_is_one_line_that_points_to_debug() -> None:
    @click.group(cls=LakehouseGroup)
    @click.option("--debug", is_flag=True)
    @click.pass_context
    def group(ctx: click.Context, debug: bool) -> None:
        ctx.obj = CliState(warehouse=".", debug=debug)

    @group.command()
    def boom() -> None:
        {}["missing"]  # noqa: B018 - a KeyError, as a bug would raise

    result = CliRunner().invoke(group, ["boom"])
    assert result.exit_code == 1
    assert result.stderr == ("Error: unexpected error: KeyError: 'missing' (rerun with --debug for the traceback)\n")
    assert isinstance(CliRunner().invoke(group, ["--debug", "boom"]).exception, KeyError)
