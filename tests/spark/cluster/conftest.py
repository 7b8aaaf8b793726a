"""A real Spark standalone cluster on 127.0.0.1 for the cluster tests: one master and two workers (1 core, 1 GiB
each) started from the pyspark package (``bin/spark-class``), stopped (process groups killed) at the end.

Its executors run ``.cache/venv-executor/bin/python`` (built by scripts/bootstrap.sh: pyarrow, polars, numpy,
fastavro, zstandard, pyroaring, and not this project), so a job only works when ``jobs.spark.ship_code`` shipped
``table_format`` and ``jobs``. Only one SparkContext can live in a process and the test run already has the local
one, so the cluster's driver runs in a subprocess (``cluster_driver.py``). Missing pieces skip locally and fail
under CI=true.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[3]
EXECUTOR_PYTHON = Path(os.environ.get("EXECUTOR_PYTHON") or REPO / ".cache" / "venv-executor" / "bin" / "python")
DRIVER = Path(__file__).resolve().parent / "cluster_driver.py"
LOOPBACK = "127.0.0.1"


def _missing(reason: str) -> None:
    marker = REPO / ".cache" / "venv-executor.unavailable"
    if marker.is_file():
        pytest.skip(f"Spark cluster unavailable on this machine: {marker.read_text().strip()} ({reason})")
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(f"Spark cluster missing under CI=true: {reason}; run `bash scripts/bootstrap.sh`", pytrace=False)
    pytest.skip(f"Spark cluster missing: {reason}; run `bash scripts/bootstrap.sh`")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind((LOOPBACK, 0))
        return int(s.getsockname()[1])


@dataclass
class Cluster:
    url: str  # spark://127.0.0.1:PORT
    ui: str  # the master's web UI (JSON at /json/)
    executor_python: Path
    log_dir: Path

    def state(self) -> dict[str, Any]:
        with urllib.request.urlopen(f"{self.ui}/json/", timeout=5) as r:
            return json.loads(r.read())

    def run_driver(self, request: dict[str, Any], *, timeout: float = 300) -> dict[str, Any]:
        """Run cluster_driver.py against this cluster; returns its JSON answer (raises with its stderr)."""
        env = {k: v for k, v in os.environ.items() if k not in ("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON")}
        env.update(PYTHONPATH=str(REPO), SPARK_LOCAL_IP=LOOPBACK, PYSPARK_PYTHON=str(self.executor_python))
        proc = subprocess.run([sys.executable, str(DRIVER), self.url, json.dumps(request)], env=env,
                              capture_output=True, text=True, timeout=timeout, check=False)
        if proc.returncode != 0:
            raise AssertionError(f"cluster driver failed ({proc.returncode}):\n{proc.stderr[-6000:]}")
        return json.loads(proc.stdout.strip().splitlines()[-1])


def _spark_class() -> Path:
    import pyspark  # noqa: PLC0415 - pyspark is optional: only the Spark tests need it

    return Path(pyspark.__file__).resolve().parent / "bin" / "spark-class"


@pytest.fixture(scope="session")
def spark_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """A master and two workers on 127.0.0.1; every JVM is stopped when the session ends."""
    try:
        spark_class = _spark_class()
    except ImportError:
        _missing("pyspark is not installed")
    if not EXECUTOR_PYTHON.is_file():
        _missing(f"no executor Python at {EXECUTOR_PYTHON}")
    probe = subprocess.run([str(EXECUTOR_PYTHON), "-I", "-c", "import pyarrow, polars, fastavro, table_format"],
                           capture_output=True, text=True, check=False)
    if "No module named 'table_format'" not in probe.stderr:
        _missing(f"{EXECUTOR_PYTHON} must have pyarrow, polars, fastavro and not this project: {probe.stderr[-300:]}")

    log_dir = tmp_path_factory.mktemp("spark-cluster")
    # the daemons (and the executors they start) must not see this project through PYTHONPATH
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYSPARK_PYTHON", "SPARK_HOME")}
    env.update(SPARK_LOCAL_IP=LOOPBACK, SPARK_LOG_DIR=str(log_dir), SPARK_NO_DAEMONIZE="1")
    port, ui_port = _free_port(), _free_port()
    procs: list[subprocess.Popen[bytes]] = []

    def start(name: str, *args: str) -> None:
        out = open(log_dir / f"{name}.log", "wb")  # noqa: SIM115 - closed with the process
        procs.append(subprocess.Popen([str(spark_class), *args], env=env, stdout=out, stderr=subprocess.STDOUT,
                                      start_new_session=True))

    cluster = Cluster(f"spark://{LOOPBACK}:{port}", f"http://{LOOPBACK}:{ui_port}", EXECUTOR_PYTHON, log_dir)
    try:
        start("master", "org.apache.spark.deploy.master.Master", "--host", LOOPBACK, "--port", str(port),
              "--webui-port", str(ui_port))
        for i in (1, 2):
            work = log_dir / f"worker-{i}"
            work.mkdir()
            start(f"worker-{i}", "org.apache.spark.deploy.worker.Worker", "--host", LOOPBACK,
                  "--port", str(_free_port()), "--webui-port", str(_free_port()), "--cores", "1",
                  "--memory", "1g", "--work-dir", str(work), cluster.url)
        deadline = time.monotonic() + 120
        while True:
            try:
                if cluster.state().get("aliveworkers") == 2:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline or any(p.poll() is not None for p in procs):
                logs = "\n".join(f"== {p.name}\n{p.read_text()[-2000:]}" for p in sorted(log_dir.glob("*.log")))
                raise RuntimeError(f"the Spark standalone cluster did not come up:\n{logs}")
            time.sleep(1)
        yield cluster
    finally:
        for p in reversed(procs):  # workers first (they stop their executors), then the master
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
        for p in reversed(procs):
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
