#!/usr/bin/env bash
# The main job: installs the project venv if needed, then runs the demo (scripts/demo.py).
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"
if [ ! -x .venv/bin/python ] || ! .venv/bin/python -c "import table_format, polars, fastavro" 2>/dev/null; then
  python3 -m venv .venv
  .venv/bin/pip install -q -e .
fi
exec .venv/bin/python scripts/demo.py "$@"
