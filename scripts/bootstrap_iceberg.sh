#!/usr/bin/env bash
# Test peer: Iceberg readers for the Iceberg-metadata tests (tests/iceberg), in their own venv, never in .venv:
#   .cache/venv-iceberg   pyiceberg[snappy,pyarrow] 0.12.0, duckdb 1.5.5 + duckdb-extension-iceberg/-avro 1.5.5
# (the extensions are PyPI packages, loaded by path: no download at run time). Idempotent (stamp of the list).
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PY="${PYTHON:-python3}"
V="$REPO/.cache/venv-iceberg"
REQS=("pyiceberg[snappy,pyarrow]==0.12.0" "duckdb==1.5.5" "duckdb-extension-iceberg==1.5.5" "duckdb-extension-avro==1.5.5")
want="$(printf '%s\n' "${REQS[@]}" | sha256sum | cut -d' ' -f1)"
if [ "$(cat "$V/.bootstrap-stamp" 2>/dev/null || true)" = "$want" ] && [ -x "$V/bin/python" ]; then
  echo "bootstrap(iceberg): $V up to date"
  exit 0
fi
echo "bootstrap(iceberg): creating $V (${REQS[*]})"
t=$SECONDS
[ -x "$V/bin/python" ] || "$PY" -m venv "$V"
"$V/bin/python" -m pip install -q --disable-pip-version-check "${REQS[@]}"
"$V/bin/python" -c "import pyiceberg.table, duckdb, duckdb_extension_iceberg, duckdb_extension_avro"
echo "$want" > "$V/.bootstrap-stamp"
echo "bootstrap(iceberg): ready in $((SECONDS - t)) s"
