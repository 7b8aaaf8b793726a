#!/usr/bin/env bash
# Side environments for the Spark tests (called by scripts/bootstrap.sh; idempotent, stamped):
#
#   .cache/venv-executor/     the executor Python of the standalone-cluster tests: pyarrow, polars, numpy, fastavro,
#                             zstandard, pyroaring at the versions of .venv, and NOT this project (proves code shipping)
#   .cache/venv-spark41/      pyspark 4.1.x for the real Paimon Spark connector (it does not support Spark 4.3)
#   .cache/paimon-spark/      org.apache.paimon:paimon-spark-4.1_2.13:2.0.0 from Maven Central (mvn dependency:copy)
#
# A side environment that cannot be built leaves .cache/<name>.unavailable (the reason); its tests then skip.
set -uo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="$REPO/.cache"
PY="${PYTHON:-python3}"
VENV="${VENV:-$REPO/.venv}"
mkdir -p "$CACHE"
say() { printf 'bootstrap(spark): %s\n' "$*"; }
warn() { printf 'bootstrap(spark): WARNING: %s\n' "$*" >&2; }
stamp_of() { printf '%s\n' "$@" | sha256sum | cut -d' ' -f1; }

# ---------------------------------------------------------------- executor venv (no project installed)
EXV="$CACHE/venv-executor"
EX_MARK="$CACHE/venv-executor.unavailable"
mapfile -t EX_REQS < <("$VENV/bin/python" -m pip freeze --disable-pip-version-check 2>/dev/null \
  | grep -i -E '^(pyarrow|polars|polars-runtime-32|numpy|fastavro|zstandard|pyroaring)==' | sort)
if [ "${#EX_REQS[@]}" -lt 6 ]; then
  warn "cannot read the versions of $VENV (pip freeze); executor venv skipped"
  echo "no pinned versions from $VENV" > "$EX_MARK"
else
  ex_want="$(stamp_of "${EX_REQS[@]}" "$("$PY" --version 2>&1)")"
  if [ "$(cat "$EXV/.bootstrap-stamp" 2>/dev/null || true)" = "$ex_want" ] && [ -x "$EXV/bin/python" ]; then
    say "executor venv: $EXV up to date"
  else
    say "executor venv: creating $EXV (${EX_REQS[*]})"
    [ -x "$EXV/bin/python" ] || "$PY" -m venv "$EXV"
    if "$EXV/bin/python" -m pip install -q --disable-pip-version-check "${EX_REQS[@]}" \
       && ! "$EXV/bin/python" -I -c 'import table_format' 2>/dev/null; then  # -I: not from the cwd
      echo "$ex_want" > "$EXV/.bootstrap-stamp"
      rm -f "$EX_MARK"
    else
      echo "pip install ${EX_REQS[*]} into $EXV failed" > "$EX_MARK"
      warn "$(cat "$EX_MARK"); cluster tests will skip"
    fi
  fi
fi

# ---------------------------------------------------------------- pyspark 4.1 + Paimon's Spark connector (peer)
S41="$CACHE/venv-spark41"
S41_MARK="$CACHE/venv-spark41.unavailable"
S41_REQS=("pyspark==4.1.4")
PAIMON_SPARK="org.apache.paimon:paimon-spark-4.1_2.13:2.0.0"
JARS="$CACHE/paimon-spark"
s41_want="$(stamp_of "${S41_REQS[@]}" "$PAIMON_SPARK")"
if [ "$(cat "$S41/.bootstrap-stamp" 2>/dev/null || true)" = "$s41_want" ] && [ -x "$S41/bin/python" ] \
   && ls "$JARS"/paimon-spark-4.1_2.13-2.0.0.jar >/dev/null 2>&1; then
  say "spark 4.1 peer: $S41 and $JARS up to date"
else
  say "spark 4.1 peer: creating $S41 (${S41_REQS[*]}) and fetching $PAIMON_SPARK"
  ok=1
  [ -x "$S41/bin/python" ] || "$PY" -m venv "$S41" || ok=0
  [ "$ok" = 1 ] && { "$S41/bin/python" -m pip install -q --disable-pip-version-check "${S41_REQS[@]}" || ok=0; }
  if [ "$ok" = 1 ]; then
    if ! command -v mvn >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
      { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq maven >/dev/null; } || true
    fi
    if command -v mvn >/dev/null 2>&1; then
      mkdir -p "$JARS"
      mvn -q -B org.apache.maven.plugins:maven-dependency-plugin:3.6.1:copy -Dartifact="$PAIMON_SPARK" \
        -DoutputDirectory="$JARS" > "$CACHE/paimon-spark-mvn.log" 2>&1 || ok=0
    else
      ok=0
    fi
  fi
  if [ "$ok" = 1 ] && ls "$JARS"/paimon-spark-4.1_2.13-2.0.0.jar >/dev/null 2>&1; then
    echo "$s41_want" > "$S41/.bootstrap-stamp"
    rm -f "$S41_MARK"
    say "spark 4.1 peer: ready"
  else
    echo "pyspark 4.1 venv or $PAIMON_SPARK (mvn) could not be installed" > "$S41_MARK"
    warn "$(cat "$S41_MARK"); Paimon Spark connector tests will skip"
  fi
fi
