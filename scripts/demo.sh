#!/usr/bin/env bash
# The main job: builds the demo lakehouse end to end through Dagster (materializes every demo asset twice, runs each
# maintenance job once on local Spark) and prints a summary of the tables. Installs what is missing first
# (scripts/bootstrap.sh). Then `bash scripts/ui.sh` opens the same lakehouse and run history in the Dagster UI.
#   LAKEHOUSE_WAREHOUSE (default ./warehouse), SPARK_MASTER (default local[2]), DAGSTER_HOME (default .dagster_home)
# The library-only demo (every table kind, no Dagster): .venv/bin/python scripts/demo.py
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"
if [ ! -x .venv/bin/python ] || ! .venv/bin/python -c "import table_format, dagster, dagster_pyspark, pyspark" 2>/dev/null \
   || ! command -v java >/dev/null 2>&1; then
  bash scripts/bootstrap.sh
fi
export SPARK_LOCAL_IP="${SPARK_LOCAL_IP:-127.0.0.1}"
exec .venv/bin/python -m lakehouse_definitions.build_demo "$@"
