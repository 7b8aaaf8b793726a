#!/usr/bin/env bash
# The main job: builds the demo lakehouse end to end through Dagster (materializes every demo asset twice, has the
# write-audit-publish of shop.payments catch a planted bad batch and publish the corrected one, runs each maintenance
# job once) and prints a summary of the tables. Installs what is missing first
# (scripts/bootstrap.sh --runtime: the venv with the spark and dagster extras, and Java; the test peers come with
# scripts/test.sh). Then `bash scripts/ui.sh` opens the same lakehouse and run history in the Dagster UI.
#   LAKEHOUSE_WAREHOUSE (default ./warehouse), SPARK_MASTER (default local[2]), DAGSTER_HOME (default .dagster_home)
# The library-only demo (every table kind, no Dagster): .venv/bin/python scripts/demo.py
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"
T0=$SECONDS
# find_spec, not import: a second run starts at once
if [ ! -x .venv/bin/python ] || ! command -v java >/dev/null 2>&1 || ! .venv/bin/python -c "
import importlib.util as u, sys
sys.exit(any(u.find_spec(m) is None for m in ('table_format', 'dagster', 'dagster_pyspark', 'pyspark')))" 2>/dev/null
then
  bash scripts/bootstrap.sh --runtime   # the venv (spark, dagster extras) and Java; no test peers
  echo "demo.sh: set-up done in $((SECONDS - T0)) s; building the demo lakehouse"
fi
export SPARK_LOCAL_IP="${SPARK_LOCAL_IP:-127.0.0.1}"
.venv/bin/python -m lakehouse_definitions.build_demo "$@"
echo "demo.sh: done in $((SECONDS - T0)) s"
