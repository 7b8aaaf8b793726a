"""Fixtures of the maintenance suites.

* ``java_maintenance``: Paimon 0.9's own maintenance code (``ExpireSnapshotsImpl``, ``TagManager``,
  ``RollbackHelper``, ``OrphanFilesClean``) driven by ``java/MaintenanceOracle.java``, compiled once per session
  against the paimon-oracle's jars (it needs the ``oracle`` fixture, so it skips or fails exactly like it);
  ``java_maintenance2``: the same against Paimon 2.0.0 (``oracle2``).
* the interop helpers of ``tests/interop`` (``interop_cases``, ``oracle_values``) are made importable.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
INTEROP = HERE.parents[1] / "interop"
if str(INTEROP) not in sys.path:
    sys.path.insert(0, str(INTEROP))


class JavaMaintenanceError(RuntimeError):
    """A MaintenanceOracle command failed; the message carries the Java stack trace."""


class JavaMaintenance:
    """One JVM running MaintenanceOracle; ``call(verb, *args) -> list[str]`` (its output lines)."""

    Error = JavaMaintenanceError

    def __init__(self, classes: Path, lib: Path) -> None:
        java = shutil.which("java") or "java"
        self.proc = subprocess.Popen(
            [java, "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-cp", f"{classes}{os.pathsep}{lib}/*",
             "maintoracle.MaintenanceOracle"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, encoding="utf-8",
        )

    def call(self, *args: Any) -> list[str]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write("\t".join(str(a) for a in args) + "\n")
        self.proc.stdin.flush()
        out: list[str] = []
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise JavaMaintenanceError(f"MaintenanceOracle died during {args[0]}")
            line = line.rstrip("\n")
            if line.startswith("@@END rc="):
                if line != "@@END rc=0":
                    raise JavaMaintenanceError(f"{args[0]} failed:\n" + "\n".join(out))
                return out
            out.append(line)

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def _harness(oracle: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[JavaMaintenance]:
    """MaintenanceOracle compiled against the jars of ``oracle`` (a built paimon-oracle folder), one JVM."""
    javac = shutil.which("javac")
    if javac is None:
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail("javac missing under CI=true (needs a JDK 17)", pytrace=False)
        pytest.skip("javac missing: cannot build the Java maintenance harness")
    lib = Path(oracle.home) / "lib"
    classes = tmp_path_factory.mktemp("maintenance-oracle")
    proc = subprocess.run(
        [javac, "-nowarn", "-d", str(classes), "-cp", f"{lib}/*", str(HERE / "java" / "MaintenanceOracle.java")],
        capture_output=True, text=True, check=False,
    )
    if proc.returncode != 0:
        pytest.fail(f"cannot compile MaintenanceOracle.java:\n{proc.stderr[-4000:]}", pytrace=False)
    harness = JavaMaintenance(classes, lib)
    try:
        yield harness
    finally:
        harness.close()


@pytest.fixture(scope="session")
def java_maintenance(oracle: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[JavaMaintenance]:
    yield from _harness(oracle, tmp_path_factory)


@pytest.fixture(scope="session")
def java_maintenance2(oracle2: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[JavaMaintenance]:
    """The same harness against Paimon 2.0.0 (expire and tag verbs; its orphan verb is 0.9's OrphanFilesClean)."""
    yield from _harness(oracle2, tmp_path_factory)
