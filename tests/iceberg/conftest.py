"""Fixtures of the Iceberg metadata tests: real Iceberg readers (PyIceberg, DuckDB) in their own venv."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
ICEBERG_PYTHON = Path(os.environ.get("ICEBERG_PYTHON") or REPO / ".cache" / "venv-iceberg" / "bin" / "python")
DRIVER = Path(__file__).resolve().parent / "iceberg_driver.py"


class IcebergReaders:
    """One driver process for the session; ``read(reader, metadata, ...) -> dict`` (see iceberg_driver.py)."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen([str(ICEBERG_PYTHON), str(DRIVER)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)

    def read(self, reader: str, metadata: str, *, snapshot_id: int | None = None,
             filter: str | None = None, properties: dict[str, str] | None = None) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        request = {"reader": reader, "metadata": metadata, "snapshot_id": snapshot_id, "filter": filter,
                   "properties": properties}
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        out = json.loads(self.proc.stdout.readline())
        if "error" in out:
            raise AssertionError(f"{reader} failed on {metadata}: {out['error']}")
        return out

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        self.proc.wait(timeout=30)


@pytest.fixture(scope="session")
def iceberg_readers() -> Iterator[IcebergReaders]:
    if not ICEBERG_PYTHON.exists():
        message = (f"no Iceberg reader venv at {ICEBERG_PYTHON} (pyiceberg[snappy,pyarrow] 0.12, duckdb 1.5.5 + "
                   "duckdb-extension-iceberg/-avro); run `bash scripts/bootstrap.sh`")
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    readers = IcebergReaders()
    yield readers
    readers.close()
