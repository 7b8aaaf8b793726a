"""The installed console script as a real process: output, JSON, exit codes, dry runs.

Uses the ``lakehouse`` script next to the running interpreter (what ``pip install`` creates); where the project is
not installed (tests run from a checkout with PYTHONPATH), ``python -m lakehouse_cli`` runs the same entry point.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cli.cli_helpers import tree

REPO = Path(__file__).resolve().parents[2]
SCRIPT = Path(sys.executable).parent / "lakehouse"


def lakehouse(*args: str, warehouse: str, code: int = 0) -> subprocess.CompletedProcess[str]:
    command = [str(SCRIPT)] if SCRIPT.exists() else [sys.executable, "-m", "lakehouse_cli"]
    env = {**os.environ, "LAKEHOUSE_WAREHOUSE": warehouse,
           "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    proc = subprocess.run([*command, *args], capture_output=True, text=True, env=env, timeout=120, check=False)
    assert proc.returncode == code, f"exit {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    return proc


def test_list_json(shop: str) -> None:
    doc = json.loads(lakehouse("--json", "list", warehouse=shop).stdout)
    assert [t["name"] for t in doc["databases"][0]["tables"]] == ["events", "orders"]


def test_read_csv_through_a_pipe(shop: str) -> None:
    out = lakehouse("read", "shop.orders", "--format", "csv", "-c", "id,amount", "-f", "id <= 2", warehouse=shop).stdout
    assert sorted(out.splitlines()) == sorted(['"id","amount"', "1,10.00", "2,25.00"])


def test_exit_codes(shop: str) -> None:
    err = lakehouse("describe", "shop.nope", warehouse=shop, code=1).stderr
    assert err == "Error: table 'shop.nope' does not exist (no schema under " \
                  f"{os.path.join(shop, 'shop.db', 'nope', 'schema')})\n"
    assert "No such option" in lakehouse("describe", "shop.orders", "--nope", warehouse=shop, code=2).stderr


def test_dry_run_then_apply(shop: str) -> None:
    before = tree(shop)
    dry = lakehouse("expire-snapshots", "shop.orders", "--retain-min", "1", "--older-than", "0", warehouse=shop)
    assert "dry run: would expire 3 snapshot(s)" in dry.stdout and dry.stderr == ""  # no bar: not a terminal
    assert tree(shop) == before
    done = lakehouse("expire-snapshots", "shop.orders", "--retain-min", "1", "--older-than", "0", "--apply",
                     "--json", warehouse=shop)
    assert json.loads(done.stdout)["expired_snapshots"] == [1, 2, 3]
    assert tree(shop) != before


@pytest.mark.skipif(not SCRIPT.exists(), reason="the project is not installed in this interpreter's environment")
def test_console_script_is_installed() -> None:
    assert "Inspect and maintain" in subprocess.run([str(SCRIPT), "--help"], capture_output=True, text=True,
                                                    check=True).stdout
