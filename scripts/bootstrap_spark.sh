#!/usr/bin/env bash
# Side environments for the Spark tests (called by scripts/bootstrap.sh; idempotent, stamped):
#
#   .cache/venv-executor/     the executor Python of the standalone-cluster tests: pyarrow, polars, numpy, fastavro,
#                             zstandard, pyroaring at the versions of .venv, and NOT this project (proves code shipping)
#   .cache/venv-spark41/      pyspark 4.1.x for the real Paimon Spark connector (it does not support Spark 4.3)
#   .cache/paimon-spark/      org.apache.paimon:paimon-spark-4.1_2.13:2.0.0 from Maven Central (mvn dependency:copy),
#                             or the fallback below when Maven Central does not serve it; peer.json names the choice
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

# ---------------------------------------------------------------- Paimon's Spark connector (peer)
# Wanted: paimon-spark-4.1_2.13:2.0.0 on pyspark 4.1 (the connector does not support Spark 4.3). When Maven Central
# does not serve it (not on this machine's registry on 2026-11-25), the fallback is the newest connector served here
# whose Paimon speaks our on-disk format: paimon-spark-3.5:0.9.0 on pyspark 3.5. The chosen one goes to
# .cache/paimon-spark/peer.json ({"python", "jar", "pyspark", "connector"}), which the tests read.
PEER_MARK="$CACHE/paimon-spark.unavailable"
JARS="$CACHE/paimon-spark"
PEERS=(
  "venv-spark41 pyspark==4.1.4 org.apache.paimon:paimon-spark-4.1_2.13:2.0.0"
  "venv-spark35 pyspark==3.5.7 org.apache.paimon:paimon-spark-3.5:0.9.0"
)
if ! command -v mvn >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq maven >/dev/null; } || true
fi
peer_done=0
for peer in "${PEERS[@]}"; do
  read -r venv_name req artifact <<< "$peer"
  pv="$CACHE/$venv_name"
  IFS=: read -r _group art ver <<< "$artifact"
  jar="$JARS/$art-$ver.jar"
  want="$(stamp_of "$req" "$artifact")"
  if [ "$(cat "$pv/.bootstrap-stamp" 2>/dev/null || true)" = "$want" ] && [ -x "$pv/bin/python" ] && [ -f "$jar" ]; then
    say "paimon spark peer: $artifact with $req up to date"
  else
    command -v mvn >/dev/null 2>&1 || break
    mkdir -p "$JARS"
    if ! mvn -q -B org.apache.maven.plugins:maven-dependency-plugin:3.6.1:copy -Dartifact="$artifact" \
         -DoutputDirectory="$JARS" > "$CACHE/paimon-spark-mvn.log" 2>&1; then
      warn "$artifact is not served by Maven Central here; trying the next connector"
      continue
    fi
    say "paimon spark peer: creating $pv ($req)"
    [ -x "$pv/bin/python" ] || "$PY" -m venv "$pv" || continue
    "$pv/bin/python" -m pip install -q --disable-pip-version-check "$req" || continue
    echo "$want" > "$pv/.bootstrap-stamp"
  fi
  printf '{"python": "%s", "jar": "%s", "pyspark": "%s", "connector": "%s"}\n' \
    "$pv/bin/python" "$jar" "${req#pyspark==}" "$artifact" > "$JARS/peer.json"
  rm -f "$PEER_MARK"
  peer_done=1
  break
done
if [ "$peer_done" = 0 ]; then
  echo "no Paimon Spark connector (${PEERS[*]}) could be installed (mvn, pip)" > "$PEER_MARK"
  rm -f "$JARS/peer.json"
  warn "$(cat "$PEER_MARK"); Paimon Spark connector tests will skip"
fi
