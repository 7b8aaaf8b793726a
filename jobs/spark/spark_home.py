"""A SPARK_HOME whose Python workers import PySpark's installed package rather than ``python/lib/pyspark.zip``.

Spark puts ``$SPARK_HOME/python/lib/pyspark.zip`` first on the path of every Python worker it starts. With a
pip-installed PySpark, SPARK_HOME is the installed package and the zip a copy of it, but Python caches no bytecode
for modules imported from a zip: every worker compiles PySpark's sources again, ~1.1 s of CPU per process
(measured: a data source planning worker's imports take 1.45 s of CPU from the zip, 0.32 s from the package). A
cold query through a Python data source starts four workers one after the other (Spark's lookup of installed data
sources, creating the source, planning the read, the task). ``spark_session()`` therefore starts the driver JVM of a
local master with SPARK_HOME set to a directory of links to every entry of the installed package except
``python/``: the same launcher scripts and jars, and workers that import the package with its cached bytecode.
Only when SPARK_HOME is unset, the workers run this interpreter (``PYSPARK_PYTHON``), and PySpark is pip-installed.
"""

from __future__ import annotations

import hashlib
import os
import sys
import tempfile
from pathlib import Path

import pyspark

__all__ = ["worker_friendly_spark_home"]

_SKIPPED = "python"  # python/lib/pyspark.zip and the py4j zip: the installed packages hold the same modules


def worker_friendly_spark_home(master: str) -> str | None:
    """The directory to use as SPARK_HOME for a new local session (built once, reused), or None to leave
    SPARK_HOME alone: another master, SPARK_HOME or PYSPARK_PYTHON set by the user, or no pip layout."""
    if not master.startswith("local") or "SPARK_HOME" in os.environ:
        return None
    if os.environ.get("PYSPARK_PYTHON", sys.executable) != sys.executable:
        return None
    package = Path(pyspark.__file__).resolve().parent
    if not (package / "jars").is_dir() or not (package / _SKIPPED / "lib" / "pyspark.zip").is_file():
        return None
    digest = hashlib.sha256(str(package).encode()).hexdigest()[:12]
    home = Path(tempfile.gettempdir()) / f"lakehouse-spark-home-{pyspark.__version__}-{digest}"
    if not home.is_dir():
        _build(home, package)
    return str(home)


def _build(home: Path, package: Path) -> None:
    """Links to every entry of ``package`` but ``python/``, made in a private directory then renamed (atomic)."""
    staging = Path(tempfile.mkdtemp(prefix=home.name + ".", dir=home.parent))
    for entry in package.iterdir():
        if entry.name != _SKIPPED:
            (staging / entry.name).symlink_to(entry)
    try:
        staging.rename(home)
    except OSError:  # another process built it meanwhile
        for link in staging.iterdir():
            link.unlink()
        staging.rmdir()
