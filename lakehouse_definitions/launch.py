"""Runs launched as the Dagster UI launches them, from a script: `launched_runs(instance)` loads ``workspace.yaml``
(its code location in a gRPC server of its own, as ``dagster dev`` does), and `Launcher.launch` sends the UI's own
``launchPipelineExecution`` mutation, so each run is submitted to the instance's run coordinator and executed by the
code location. Such runs carry their origin: the Overview timeline, the jobs' sparklines and the runs' targets
show them, as they show runs launched from the UI (in-process execution records no origin).

The runs start at once with ``DefaultRunCoordinator`` (`ensure_run_coordinator` sets it in a ``dagster.yaml`` that
configures none); a queued coordinator waits for a ``dagster-daemon``.
"""

import os
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import dagster as dg
import yaml
from dagster._core.workspace.context import WorkspaceProcessContext
from dagster._core.workspace.load_target import WorkspaceFileTarget
from dagster_graphql.cli import execute_query

WORKSPACE = Path(__file__).resolve().parents[1] / "workspace.yaml"
ASSET_JOB = "__ASSET_JOB"
DEFAULT_COORDINATOR = "run_coordinator:\n  module: dagster._core.run_coordinator\n  class: DefaultRunCoordinator\n"
LAUNCH = """
mutation Launch($params: ExecutionParams!) {
  launchPipelineExecution(executionParams: $params) {
    __typename
    ... on LaunchRunSuccess { run { runId } }
    ... on RunConfigValidationInvalid { errors { message } }
    ... on PythonError { message }
    ... on Error { message }
  }
}
"""


class LaunchError(RuntimeError):
    """A run could not be launched, or did not succeed (the message names the run and its first error)."""


def ensure_run_coordinator(home: Path) -> str | None:
    """Add ``DefaultRunCoordinator`` to ``home/dagster.yaml`` (created if missing) when it names no run
    coordinator, so launched runs start without a daemon. Returns what was changed, if anything."""
    config_file = home / "dagster.yaml"
    text = config_file.read_text() if config_file.exists() else "telemetry:\n  enabled: false\n"
    if "run_coordinator" in (yaml.safe_load(text) or {}):
        return None
    config_file.write_text(text + ("" if text.endswith("\n") or not text else "\n") + DEFAULT_COORDINATOR)
    return f"{config_file}: run_coordinator DefaultRunCoordinator (runs start without a daemon)"


def _keys(keys: Sequence[dg.AssetKey]) -> list[dict[str, Any]]:
    return [{"path": list(k.path)} for k in keys]


@dataclass(frozen=True)
class Launcher:
    """Launches runs of one code location's jobs through the instance, and waits for them."""

    context: WorkspaceProcessContext
    location: str
    repository: str

    @property
    def instance(self) -> dg.DagsterInstance:
        return self.context.instance

    def launch(self, job: str, *, run_config: Mapping[str, Any] | None = None,
               assets: Sequence[dg.AssetKey] | None = None, checks: Sequence[dg.AssetCheckKey] | None = None,
               tags: Mapping[str, str] | None = None) -> str:
        """Submit a run of `job` (for ``__ASSET_JOB``: of `assets` and `checks`); its run id."""
        selector: dict[str, Any] = {"repositoryLocationName": self.location, "repositoryName": self.repository,
                                    "jobName": job}
        if assets is not None:
            selector["assetSelection"] = _keys(assets)
        if checks is not None:
            selector["assetCheckSelection"] = [{"assetKey": {"path": list(c.asset_key.path)}, "name": c.name}
                                               for c in checks]
        params = {"selector": selector, "runConfigData": dict(run_config or {}),
                  "executionMetadata": {"tags": [{"key": k, "value": v} for k, v in (tags or {}).items()]}}
        result = execute_query(self.context, LAUNCH, {"params": params})
        launched = (result.get("data") or {}).get("launchPipelineExecution") or {}
        if launched.get("__typename") != "LaunchRunSuccess":
            detail = launched.get("message") or launched.get("errors") or result.get("errors")
            raise LaunchError(f"could not launch {job} in {self.location}: {launched.get('__typename')}: {detail}")
        return launched["run"]["runId"]

    def wait(self, run_id: str, *, timeout: float = 900.0, require_success: bool = True) -> dg.DagsterRun:
        """Wait until the run finished; a run that did not succeed raises `LaunchError` with its first error (unless
        not `require_success`: a run expected to fail)."""
        deadline = time.monotonic() + timeout
        while True:
            run = self.instance.get_run_by_id(run_id)
            if run is not None and run.is_finished:
                break
            if time.monotonic() > deadline:
                status = run.status.value if run is not None else "missing"
                hint = " (queued: no dagster-daemon picks it up)" if status == "QUEUED" else ""
                raise LaunchError(f"run {run_id} still {status} after {timeout:.0f} s{hint}")
            time.sleep(0.5)
        if require_success and run.status != dg.DagsterRunStatus.SUCCESS:
            raise LaunchError(f"run {run_id} of {run.job_name}: {run.status.value}: {self.first_error(run_id)}")
        return run

    def first_error(self, run_id: str) -> str:
        kinds = {dg.DagsterEventType.STEP_FAILURE, dg.DagsterEventType.RUN_FAILURE, dg.DagsterEventType.ENGINE_EVENT}
        for entry in self.instance.all_logs(run_id, of_type=kinds):
            event = entry.dagster_event
            error = getattr(event.event_specific_data, "error", None) if event is not None else None
            if error is not None:
                return f"{event.step_key or 'run'}: {error.message.strip()}"
        return "no error recorded (see the run in the UI)"


@contextmanager
def _inherited_output(log: Path | None) -> Iterator[None]:
    """Processes started in the block write their stdout and stderr to `log` (appended), if given."""
    if log is None:
        yield
        return
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    try:
        with open(log, "ab") as out:
            os.dup2(out.fileno(), 1)
            os.dup2(out.fileno(), 2)
        yield
    finally:
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        os.close(saved[0])
        os.close(saved[1])


@contextmanager
def launched_runs(instance: dg.DagsterInstance, workspace: Path = WORKSPACE, *,
                  output: Path | None = None) -> Iterator[Launcher]:
    """A `Launcher` for the code location of `workspace` (its only one), served for the block's duration; the code
    server's and the runs' own output (Spark's, say) goes to `output` if given, else to this process's."""
    with ExitStack() as stack:
        with _inherited_output(output):
            context = stack.enter_context(WorkspaceProcessContext(
                instance, WorkspaceFileTarget(paths=[str(workspace)]), code_server_log_level="WARNING"))
        request = context.create_request_context()
        (location,) = request.code_location_names
        error = request.get_code_location_error(location)
        if error is not None:
            raise LaunchError(f"code location {location} of {workspace} failed to load: {error.message.strip()}")
        code_location = request.get_code_location(location)
        (repository,) = code_location.get_repositories()
        yield Launcher(context=context, location=location, repository=repository)
