"""The shell entry points: `scripts/test.sh --help` prints its usage without setting anything up, and the demo's
set-up (`scripts/bootstrap.sh --runtime`) installs only what the demo and the UI run.

The bootstrap runs for real on a copy of the repository's scripts and pyproject.toml; only pip is replaced (by a
script that records its arguments), so that the test needs no network and shows exactly what would be installed."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TEST_PEERS = ("oracle", "pypaimon", "chromium", "seaweedfs", "executor", "paimon spark", "bootstrap(spark)")


def test_test_sh_help_prints_its_usage_and_does_nothing_else() -> None:
    started = time.monotonic()
    done = subprocess.run(["bash", "scripts/test.sh", "--help"], cwd=ROOT, capture_output=True, text=True, timeout=30)
    assert done.returncode == 0 and done.stderr == ""
    assert time.monotonic() - started < 5  # no bootstrap, lint or pytest
    usage = done.stdout
    assert usage.startswith("usage: bash scripts/test.sh [PYTEST ARGS...]")
    assert "bootstrap:" not in usage and "ruff" in usage and "pytest" in usage
    assert "~30 min" in usage and "bash .ci/run" in usage
    block = (ROOT / "pyproject.toml").read_text().split("markers = [", 1)[1].split("]", 1)[0]
    markers = set(re.findall(r'^\s*"(\w+):', block, re.MULTILINE))
    assert "interop" in markers and "slow" in markers
    listed = set(re.findall(r"^  (\w+) {2,}", usage.split("markers (-m):")[1], re.MULTILINE))
    assert listed == markers
    suites = {p.name for p in (ROOT / "tests").iterdir() if p.is_dir() and not p.name.startswith("__")}
    assert suites <= set(re.findall(r"^  (\w+) ", usage.split("suites (tests/...):")[1], re.MULTILINE))
    assert subprocess.run(["bash", "scripts/test.sh", "-h"], cwd=ROOT, capture_output=True, text=True,
                          timeout=30).stdout == usage


def _repo_copy(tmp_path: Path) -> Path:
    """scripts/, pyproject.toml and the packages' __init__.py (what the venv stamp hashes), and a .venv whose
    python runs the real interpreter but records `-m pip` calls instead of installing."""
    repo = tmp_path / "repo"
    shutil.copytree(ROOT / "scripts", repo / "scripts")
    shutil.copy(ROOT / "pyproject.toml", repo / "pyproject.toml")
    for init in ROOT.glob("*/__init__.py"):
        (repo / init.parent.name).mkdir()
        (repo / init.parent.name / "__init__.py").write_text("")
    bin_dir = repo / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    stub = bin_dir / "python"
    stub.write_text(f"""#!/usr/bin/env bash
if [ "$1" = -m ] && [ "$2" = pip ]; then
  echo "$*" >> "{repo}/pip-calls"
  echo "Collecting something"; echo "Successfully installed something"; exit 0
fi
exec {sys.executable} "$@"
""")
    stub.chmod(0o755)
    return repo


def _bootstrap(repo: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("EXTRAS", "PAIMON_ORACLE_HOME", "PYPAIMON_PYTHON")}
    done = subprocess.run(["bash", "scripts/bootstrap.sh", *args], cwd=repo, env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout + done.stderr


def _pip_installs(repo: Path) -> list[str]:
    calls = (repo / "pip-calls").read_text().splitlines() if (repo / "pip-calls").exists() else []
    (repo / "pip-calls").unlink(missing_ok=True)
    return [c for c in calls if " -e " in c]


def test_runtime_bootstrap_installs_only_what_the_demo_runs(tmp_path: Path) -> None:
    if shutil.which("java") is None:
        raise AssertionError("the runtime bootstrap needs java on PATH (a JDK 17, as scripts/bootstrap.sh installs)")
    repo = _repo_copy(tmp_path)
    out = _bootstrap(repo, "--runtime")
    assert [c.split()[-1] for c in _pip_installs(repo)] == [".[spark,dagster]"]
    assert "  pip " in out and "s  Successfully installed something" in out  # pip's progress, with timings
    assert not any(peer in out.lower() for peer in TEST_PEERS), out
    assert "WARNING" not in out  # no word about the Paimon Spark connector or other test peers
    assert sorted(p.name for p in (repo / ".cache").iterdir()) == ["pip-venv.log"]
    assert (repo / ".venv" / ".bootstrap-stamp").read_text().splitlines()[1] == "extras=spark,dagster"

    # a second run installs nothing
    assert ".venv up to date" in _bootstrap(repo, "--runtime") and _pip_installs(repo) == []

    # test.sh's venv (the dev extra too) satisfies the demo: no reinstall back and forth
    stamp = repo / ".venv" / ".bootstrap-stamp"
    stamp.write_text(stamp.read_text().replace("extras=spark,dagster", "extras=dev,spark,dagster,dg"))
    assert ".venv up to date" in _bootstrap(repo, "--runtime") and _pip_installs(repo) == []

    # pyproject.toml changed: the runtime reinstall keeps the dev extra the venv had
    with open(repo / "pyproject.toml", "a") as f:
        f.write("\n# changed\n")
    _bootstrap(repo, "--runtime")
    assert [c.split()[-1] for c in _pip_installs(repo)] == [".[spark,dagster,dev,dg]"]
    assert stamp.read_text().splitlines()[1] == "extras=spark,dagster,dev,dg"


def test_demo_and_ui_bootstrap_the_runtime_only() -> None:
    for script in ("demo.sh", "ui.sh"):
        calls = re.findall(r"^\s*bash scripts/bootstrap\S*( [^#\n]*)?", (ROOT / "scripts" / script).read_text(),
                           re.MULTILINE)
        assert calls == [" --runtime   "], (script, calls)
    test_sh = (ROOT / "scripts" / "test.sh").read_text()
    assert re.search(r"^bash scripts/bootstrap.sh$", test_sh, re.MULTILINE)  # everything, as CI needs
