"""A user's own lakehouse with `dg`, as the README's "Start your own lakehouse" does it, offline in a temp dir:
`create-dagster project`, `dg list components`, `dg scaffold defs lakehouse_definitions.PaimonLakehouse`,
`dg check defs`, `dg launch --assets` materializing into a Paimon table, and `dg check defs` failing on bad fields.

Needs this project installed with its entry point (``pip install -e .``: the ``dagster_dg_cli.registry_modules``
entry point of pyproject.toml is read from the installed metadata). About a minute per `dg launch` on 2 cores.
"""

import importlib.metadata
import os
import subprocess
import sys
from pathlib import Path

import pytest

from table_format import FileSystemCatalog

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
DG = "import sys; from dagster_dg_cli.cli import main; sys.exit(main())"
CREATE = "import sys; from create_dagster.cli import main; sys.exit(main())"
ASSET = '''import dagster as dg
import pyarrow as pa


@dg.asset(key=["shop", "orders"], metadata={"primary_keys": ["id"]})
def orders() -> pa.Table:
    return pa.table({"id": pa.array([1, 2, 3], pa.int64()), "amount": [9.5, 3.0, 12.25]})
'''


def run(args: list[str], *, cwd: Path, env: dict[str, str], ok: bool = True) -> subprocess.CompletedProcess:
    done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL)
    if ok and done.returncode != 0:
        raise AssertionError(f"{args[-3:]} failed ({done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return done


@pytest.fixture
def project(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    registered = [e.value for e in importlib.metadata.entry_points(group="dagster_dg_cli.registry_modules")]
    assert "lakehouse_definitions" in registered, (
        "the dagster_dg_cli.registry_modules entry point is not installed: pip install -e . (--no-deps)")
    home = tmp_path / "dagster_home"
    home.mkdir()
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    env = {**os.environ, "DAGSTER_HOME": str(home), "DAGSTER_DG_UPDATE_CHECK_ENABLED": "0",
           "PYTHONPATH": os.pathsep.join([str(ROOT), str(tmp_path / "my_lake" / "src")]),
           "SPARK_LOCAL_IP": "127.0.0.1", "NO_COLOR": "1"}
    env.pop("LAKEHOUSE_WAREHOUSE", None)
    run([sys.executable, "-c", CREATE, "project", "my_lake", "--no-uv-sync"], cwd=tmp_path, env=env)
    return tmp_path / "my_lake", env


def test_start_your_own_lakehouse_with_dg(project: tuple[Path, dict[str, str]]) -> None:
    root, env = project
    listed = run([sys.executable, "-c", DG, "list", "components"], cwd=root, env=env).stdout
    assert "lakehouse_definitions.PaimonLakehouse" in listed

    run([sys.executable, "-c", DG, "scaffold", "defs", "lakehouse_definitions.PaimonLakehouse", "lakehouse"],
        cwd=root, env=env)
    defs_yaml = root / "src" / "my_lake" / "defs" / "lakehouse" / "defs.yaml"
    assert defs_yaml.read_text().startswith("type: lakehouse_definitions.PaimonLakehouse")
    (root / "src" / "my_lake" / "defs" / "orders.py").write_text(ASSET)
    checked = run([sys.executable, "-c", DG, "check", "defs"], cwd=root, env=env)
    assert "All definitions loaded successfully" in checked.stdout + checked.stderr

    run([sys.executable, "-c", DG, "launch", "--assets", "shop/orders"], cwd=root, env=env)
    table = FileSystemCatalog(str(root / "warehouse")).load_table("shop.orders")
    assert table.scan().to_arrow().sort_by("id").column("amount").to_pylist() == [9.5, 3.0, 12.25]
    assert table.primary_keys == ["id"]

    good = defs_yaml.read_text()
    bad = {
        "colour": good.replace("  maintenance:\n", "  maintenance:\n    colour: blue\n"),
        "maintenance.expire_snapshots.cron": good.replace('cron: "0 2 * * *"', 'cron: "0 25 * * *"'),
        "maintenance.tables[0]: table 'shop.orderz'": good.replace("tables: []", "tables: [shop.orderz]"),
        "unknown catalog option 's3.endpoit'": good.replace("  spark_master:", "  options: {s3.endpoit: x}\n  spark_master:"),
        "maintenance.remove_orphan_files.older_than": good.replace("older_than: 1 d", "older_than: one day"),
    }
    for field, text in bad.items():
        defs_yaml.write_text(text)
        failed = run([sys.executable, "-c", DG, "check", "defs"], cwd=root, env=env, ok=False)
        assert failed.returncode != 0, field
        assert field in failed.stdout + failed.stderr, (field, (failed.stdout + failed.stderr)[-2000:])
    defs_yaml.write_text(good)
