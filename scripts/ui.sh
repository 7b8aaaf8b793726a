#!/usr/bin/env bash
# Opens the demo lakehouse in the Dagster UI: `dagster dev` on http://127.0.0.1:${PORT:-3000} with workspace.yaml,
# the warehouse of `bash scripts/demo.sh` (LAKEHOUSE_WAREHOUSE, default ./warehouse) and its run history
# (DAGSTER_HOME, default .dagster_home). Ctrl-C stops it.
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"
if [ ! -x .venv/bin/dagster ] || ! command -v java >/dev/null 2>&1 || ! .venv/bin/python -c "
import importlib.util as u, sys
sys.exit(any(u.find_spec(m) is None for m in ('table_format', 'dagster_webserver', 'dagster_pyspark', 'pyspark')))" 2>/dev/null
then
  bash scripts/bootstrap.sh --runtime   # the venv (spark, dagster extras) and Java; no test peers
fi
export DAGSTER_HOME="${DAGSTER_HOME:-$REPO/.dagster_home}"
export LAKEHOUSE_WAREHOUSE="${LAKEHOUSE_WAREHOUSE:-$REPO/warehouse}"
export SPARK_LOCAL_IP="${SPARK_LOCAL_IP:-127.0.0.1}"
mkdir -p "$DAGSTER_HOME"
[ -f "$DAGSTER_HOME/dagster.yaml" ] || printf 'telemetry:\n  enabled: false\n' > "$DAGSTER_HOME/dagster.yaml"
echo "ui.sh: http://127.0.0.1:${PORT:-3000}  (warehouse $LAKEHOUSE_WAREHOUSE, DAGSTER_HOME $DAGSTER_HOME)"
exec .venv/bin/dagster dev -w workspace.yaml -h 127.0.0.1 -p "${PORT:-3000}"
