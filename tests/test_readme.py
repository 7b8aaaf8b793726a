"""The README's Python snippets run as written: pasted line by line into a fresh interactive interpreter, twice in
a row in the same directory (the second run finds the warehouse of the first).

Every ```python block of README.md is meant to run; a block fenced ```python no-run would be skipped."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FENCE = re.compile(r"^```python[ \t]*\n(.*?)^```", re.MULTILINE | re.DOTALL)

# feeds the snippet to code.InteractiveConsole line by line, as a paste into the REPL does; any traceback fails
REPL = r"""
import code, sys
class Console(code.InteractiveConsole):
    failed = False
    def showtraceback(self):
        Console.failed = True
        super().showtraceback()
    def showsyntaxerror(self, filename=None, **kw):
        Console.failed = True
        super().showsyntaxerror(filename, **kw)
console = Console()
more = False
for line in open(sys.argv[1], encoding="utf-8").read().splitlines():
    more = console.push(line)
if more:
    console.push("")
sys.exit(1 if Console.failed else 0)
"""


def readme_snippets() -> list[str]:
    return FENCE.findall((ROOT / "README.md").read_text(encoding="utf-8"))


def test_readme_has_a_library_snippet() -> None:
    snippets = readme_snippets()
    assert snippets, "README.md has no ```python block"
    assert any("write_table(" in s and "create_table(" in s for s in snippets)


@pytest.mark.parametrize("index", range(len(readme_snippets())))
def test_readme_snippet_runs_twice_in_a_fresh_interpreter(tmp_path: Path, index: int) -> None:
    snippet = tmp_path / "snippet.py"
    snippet.write_text(readme_snippets()[index], encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    work = tmp_path / "cwd"
    work.mkdir()
    for run in (1, 2):
        done = subprocess.run([sys.executable, "-c", REPL, str(snippet)], cwd=work, env=env, capture_output=True,
                              text=True, timeout=300)
        assert done.returncode == 0, f"run {run} of README snippet {index} failed:\n{done.stderr[-4000:]}"
    if "./warehouse" in snippet.read_text(encoding="utf-8"):
        assert (work / "warehouse").is_dir()
