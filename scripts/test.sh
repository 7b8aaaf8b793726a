#!/usr/bin/env bash
# The project's test command: installs what is missing (scripts/bootstrap.sh), lints, then runs pytest.
#   bash scripts/test.sh                       # everything (tests/ per pyproject testpaths)
#   bash scripts/test.sh tests/test_x.py -k y  # any pytest arguments
#   LINT=0 bash scripts/test.sh ...            # skip ruff + lint-imports while iterating (CI always lints)
# Exits non-zero on a lint error, on any test failure, and when no test ran (pytest exit code 5).
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"

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
