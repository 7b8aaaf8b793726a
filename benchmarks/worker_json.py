"""The one helper benchmarks share: run a worker process and take the JSON object on its last line of output."""

from __future__ import annotations

import json
import subprocess


def run_json(cmd: list[str], env: dict[str, str] | None = None) -> dict:
    """Run `cmd`; its last stdout line parsed as JSON, or exit with the head of the command and its stderr's tail."""
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"{cmd[:4]} failed:\n{proc.stderr[-4000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])
