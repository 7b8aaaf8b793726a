"""README's "Install it into your own project": the extras it names exist, and without Dagster the import of
lakehouse_assets fails with a message naming the extra (Dagster hidden from a fresh interpreter)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _install_block() -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Install it into your own project", 1)[1]
    return section.split("```bash", 1)[1].split("```", 1)[0]


def test_the_extras_the_readme_installs_exist() -> None:
    extras_block = (ROOT / "pyproject.toml").read_text().split("[project.optional-dependencies]", 1)[1].split("\n[", 1)[0]
    defined = set(re.findall(r"^(\w+) = \[", extras_block, re.MULTILINE))
    named = {e for group in re.findall(r"pip install '/path/to/repo\[([\w,]+)\]'", _install_block())
             for e in group.split(",")}
    assert named == {"dagster", "spark", "s3", "dg"} and named <= defined


def test_lakehouse_assets_without_dagster_names_the_extra() -> None:
    code = "import sys; sys.modules['dagster'] = None\nimport lakehouse_assets"  # None: the import of dagster fails
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("ModuleNotFoundError: lakehouse_assets needs Dagster")
    assert "pip install 'lakehouse[dagster,spark]'" in last and "Traceback" in done.stderr
    ok = subprocess.run([sys.executable, "-c", "from lakehouse_assets import PaimonIOManager"], cwd=ROOT, env=env,
                        capture_output=True, text=True, timeout=120)
    assert ok.returncode == 0, ok.stderr
