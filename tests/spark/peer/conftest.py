"""``paimon_spark``: Paimon's own Spark connector as a peer, run out of process in its own pyspark venv.

scripts/bootstrap.sh installs it (scripts/bootstrap_spark.sh) and names the choice in .cache/paimon-spark/peer.json:
``paimon-spark-4.1_2.13:2.0.0`` on pyspark 4.1 when Maven Central serves it, else ``paimon-spark-3.5:0.9.0`` on
pyspark 3.5. Missing: skip locally, fail under CI=true (unless the bootstrap recorded that it cannot be had).
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[3]
PEER = REPO / ".cache" / "paimon-spark" / "peer.json"
DRIVER = Path(__file__).resolve().parent / "paimon_spark_driver.py"
STREAM_DRIVER = Path(__file__).resolve().parent / "paimon_spark_stream_driver.py"


@dataclass(frozen=True)
class PaimonSpark:
    python: str
    jar: str
    connector: str  # group:artifact:version
    pyspark: str

    def sql(self, warehouse: str, *statements: str, cores: int = 2, timeout: float = 600) -> list[dict[str, Any]]:
        """Run the statements in one Spark session of the connector; [{"rows": [...], "seconds": s}, ...]."""
        return self._run(DRIVER, self.jar, warehouse, json.dumps(list(statements)), cores=cores, timeout=timeout)

    def streams(self, *requests: dict[str, Any], timeout: float = 600) -> list[dict[str, Any]]:
        """Run each ``{"path": table_dir, "options": {...}}`` as an availableNow ``readStream.format("paimon")``
        query in one Spark session of the connector; [{"schema": ..., "batches": [[row, ...], ...]}, ...]."""
        return self._run(STREAM_DRIVER, self.jar, json.dumps(list(requests)), timeout=timeout)

    def _run(self, driver: Path, *args: str, cores: int = 2, timeout: float = 600) -> Any:
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYSPARK_PYTHON", "SPARK_HOME")}
        env.update(SPARK_LOCAL_IP="127.0.0.1", PEER_CORES=str(cores), PYSPARK_PYTHON=self.python)
        proc = subprocess.run([self.python, str(driver), *args], env=env, capture_output=True, text=True,
                              timeout=timeout, check=False)
        if proc.returncode != 0:
            raise AssertionError(f"Paimon Spark connector failed ({proc.returncode}):\n{proc.stderr[-6000:]}")
        return json.loads(proc.stdout.strip().splitlines()[-1])


def peer() -> PaimonSpark | None:
    if not PEER.is_file():
        return None
    spec = json.loads(PEER.read_text())
    if not (Path(spec["python"]).is_file() and Path(spec["jar"]).is_file()):
        return None
    return PaimonSpark(spec["python"], spec["jar"], spec["connector"], spec["pyspark"])


@pytest.fixture(scope="session")
def paimon_spark() -> PaimonSpark:
    found = peer()
    if found is None:
        marker = REPO / ".cache" / "paimon-spark.unavailable"
        if marker.is_file():
            pytest.skip(f"Paimon Spark connector unavailable on this machine: {marker.read_text().strip()}")
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(f"Paimon Spark connector missing under CI=true ({PEER}); run `bash scripts/bootstrap.sh`",
                        pytrace=False)
        pytest.skip(f"Paimon Spark connector missing ({PEER}); run `bash scripts/bootstrap.sh`")
    return found
