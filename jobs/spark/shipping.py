"""Ship this project's code (``table_format`` and ``jobs``) to executors that do not have it installed.

On a cluster the executors' Python usually lacks this project: ``ship_code`` zips the two packages (once per
content: the zip is cached under its content hash) and adds it with ``SparkContext.addPyFile``, so every task
imports exactly the driver's code. Local masters share the driver's interpreter and need nothing.
``LAKEHOUSE_SHIP_CODE=1`` forces shipping (e.g. a local master whose workers use another Python), ``=0`` turns
it off (the executors have the project installed); ``LAKEHOUSE_CACHE_DIR`` moves the zip cache.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import zipfile
from pathlib import Path

from pyspark.sql import SparkSession

import jobs
import table_format

__all__ = ["build_code_zip", "ship_code"]

PACKAGES = (table_format, jobs)
_ENV_FLAG = "LAKEHOUSE_SHIP_CODE"
_shipped: dict[str, str] = {}  # application id of a SparkContext -> the zip added to it


def _package_files() -> list[tuple[str, Path]]:
    """(name inside the zip, file) for every source file of the packages, sorted."""
    files = []
    for package in PACKAGES:
        root = Path(package.__file__).resolve().parent
        for path in root.rglob("*"):
            if path.is_file() and "__pycache__" not in path.parts and path.suffix in (".py", ".typed"):
                files.append((f"{root.name}/{path.relative_to(root).as_posix()}", path))
    return sorted(files)


def _cache_dir() -> Path:
    configured = os.environ.get("LAKEHOUSE_CACHE_DIR")
    return Path(configured) if configured else Path(tempfile.gettempdir()) / "lakehouse-pyfiles"


def build_code_zip() -> Path:
    """The zip of ``table_format`` and ``jobs``, built once per content (named by its hash) and reused."""
    files = _package_files()
    digest = hashlib.sha256()
    for name, path in files:
        digest.update(name.encode())
        digest.update(b"\0")
        digest.update(path.read_bytes())
        digest.update(b"\0")
    target = _cache_dir() / f"lakehouse-{digest.hexdigest()[:20]}.zip"
    if target.is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, suffix=".zip.tmp")
    os.close(fd)
    try:
        with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as zf:
            for name, path in files:
                info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))  # the same bytes for the same code
                info.compress_type = zipfile.ZIP_DEFLATED
                zf.writestr(info, path.read_bytes())
        os.replace(tmp, target)  # atomic: concurrent builders write the same content
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return target


def needs_shipping(master: str) -> bool:
    """Any non-local master, unless ``LAKEHOUSE_SHIP_CODE`` says otherwise."""
    flag = os.environ.get(_ENV_FLAG, "").strip().lower()
    if flag in ("1", "true", "yes"):
        return True
    if flag in ("0", "false", "no"):
        return False
    return not master.startswith("local")


def ship_code(spark: SparkSession) -> None:
    """Add the code zip to the session's SparkContext when its executors may lack this project (idempotent)."""
    sc = spark.sparkContext
    if not needs_shipping(sc.master):
        return
    key = sc.applicationId  # one entry per running SparkContext
    if key in _shipped:
        return
    path = build_code_zip()
    sc.addPyFile(str(path))
    _shipped[key] = str(path)
