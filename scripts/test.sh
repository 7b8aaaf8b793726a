#!/usr/bin/env bash
# The project's test command: installs what is missing (scripts/bootstrap.sh: the venv with the dev extra and every
# test peer), lints, then runs pytest. `bash scripts/test.sh --help` prints the usage below (and does nothing else).
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"

usage() {
  cat <<'USAGE'
usage: bash scripts/test.sh [PYTEST ARGS...]

Installs what the tests need (scripts/bootstrap.sh: .venv with the dev,spark,dagster,dg extras, JDK 17, the Java
Paimon 0.9 / 2.0 / S3 oracles, the pypaimon 2.1 peer, the Spark executor venv and Paimon's Spark connector peer,
chromium; a second run takes seconds), lints (ruff, mypy table_format, lint-imports), then runs pytest with the
given arguments (none: all of tests/). Exits non-zero on a lint error, a failing test, or when no test ran.

  bash scripts/test.sh                                  # everything: ~30 min on a 2-core machine (what CI runs:
                                                        # bash .ci/run, CI=true), plus ~5 min of set-up the first time
  bash scripts/test.sh tests/cli                        # one suite
  bash scripts/test.sh tests/cli/test_cli_read.py -k filter   # one file, tests matching a name
  bash scripts/test.sh -m "not interop and not browser" # by marker
  LINT=0 bash scripts/test.sh tests/cli -x -q           # skip the lint while iterating (CI always lints)
  .venv/bin/python -m pytest tests/cli -q               # after set-up: pytest directly, no bootstrap, no lint

suites (tests/...):
  table_format   the library: format, writes, reads, merge engines, maintenance, errors
  interop        against real Java Paimon 0.9 and 2.0 (oracle CLIs) and pypaimon 2.1
  spark          format("paimon") and distributed maintenance on local Spark (one session per process)
  dagster        assets, IO manager, jobs, sensor, schedule, checks, the demo end to end
  cli            the lakehouse command line
  s3             s3:// warehouses against a SeaweedFS server on 127.0.0.1
  reliability    crashes, faults, concurrency, fuzzing (soak variants only with -m slow or RUN_SLOW=1)
  browser        headless Chromium against dagster dev (screenshots in .cache/artifacts/browser/)
  iceberg        Iceberg metadata read by PyIceberg 0.12 and DuckDB 1.5.5 (their own venv), beside Java 2.0's
  test_readme.py the README's Python snippets, run twice in a fresh interpreter

markers (-m):
  interop   real Java Paimon (paimon-oracle) or pypaimon 2.1.0
  slow      long-running: deselected unless asked for (-m slow or RUN_SLOW=1)
  spark     needs a local SparkSession
  cluster   starts a Spark standalone cluster on loopback
  dagster   runs Dagster (materialize, jobs, sensors)
  browser   drives headless Chromium against dagster dev
  s3        needs the SeaweedFS S3 server

A missing peer makes its tests skip locally (with the reason) and fail under CI=true.
environment: LINT=0 (skip lint), CI=true (fail instead of skip), PAIMON_ORACLE_HOME, PYPAIMON_PYTHON (peers
built elsewhere), SPARK_MASTER (default local[2]).
USAGE
}
case "${1:-}" in -h|--help) usage; exit 0 ;; esac

bash scripts/bootstrap.sh

export SPARK_LOCAL_IP=127.0.0.1
export PAIMON_ORACLE_HOME="${PAIMON_ORACLE_HOME:-$REPO/.cache/paimon-oracle}"
export PYPAIMON_PYTHON="${PYPAIMON_PYTHON:-$REPO/.cache/venv-pypaimon/bin/python}"
PY="$REPO/.venv/bin/python"

if [ "${LINT:-1}" != "0" ] || [ "${CI:-}" = true ]; then
  echo "test.sh: ruff check"
  "$REPO/.venv/bin/ruff" check .
  echo "test.sh: mypy table_format"
  "$REPO/.venv/bin/mypy" --no-error-summary table_format
  echo "test.sh: lint-imports"
  "$REPO/.venv/bin/lint-imports" --no-cache > "$REPO/.cache/lint-imports.log" 2>&1 \
    || { cat "$REPO/.cache/lint-imports.log"; echo "test.sh: lint-imports FAILED" >&2; exit 1; }
  grep -E '^Contracts:' "$REPO/.cache/lint-imports.log" || true
fi

# the whole suite (no arguments) runs on 2 pytest-xdist workers, each test module whole on one of them
# (--dist loadscope: a module's fixtures are built once; each worker has at most one SparkSession).
# PYTEST_WORKERS=0 runs it in this one process.
if [ "$#" -eq 0 ] && [ "${PYTEST_WORKERS:-2}" != 0 ]; then
  set -- -n "${PYTEST_WORKERS:-2}" --dist loadscope --durations=25
fi
echo "test.sh: pytest $*"
set +e
"$PY" -m pytest "$@"
rc=$?
set -e
if [ "$rc" -eq 5 ]; then
  echo "test.sh: FAILED: pytest collected no tests (exit code 5)" >&2
  exit 1
fi
exit "$rc"
