#!/usr/bin/env bash
# Build the Java Paimon 2.0.0 oracle into OUT (default: <repo>/.cache/paimon-oracle-2.0).
#
# The driver is the 0.9 oracle of ../shared/paimon-oracle (same verbs: write, read, meta, sys, alter, batch)
# with oracle-2.0.patch applied (the few API renames between 0.9 and 2.0). Jars, from Maven Central:
#   paimon-flink-2.0-2.0.0.jar  the Paimon 2.0.0 bundle (core, common, format, codegen, shaded deps); Central
#                               has no paimon-bundle 2.0.0, and the Flink classes in it are never loaded
#   slf4j-api-1.7.36.jar        Paimon's logging API (the bundle leaves it to the host)
#   hadoop-client-{api,runtime} the same shaded Hadoop jars as the 0.9 oracle (taken from its lib/)
# They are cached in JAR_CACHE (default ~/.cache/lakehouse/paimon-oracle-2.0-lib) and checked against SHA256SUMS.
# Usage: build.sh SHARED_ORACLE_DIR HADOOP_JAR_DIR [OUT]
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SRC="${1:?usage: build.sh SHARED_ORACLE_DIR HADOOP_JAR_DIR [OUT]}"
HADOOP_DIR="${2:?usage: build.sh SHARED_ORACLE_DIR HADOOP_JAR_DIR [OUT]}"
OUT="${3:-$HERE/../../../.cache/paimon-oracle-2.0}"
JAR_CACHE="${JAR_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/lakehouse/paimon-oracle-2.0-lib}"
CENTRAL="https://repo.maven.apache.org/maven2"
ARTIFACTS=("org.apache.paimon:paimon-flink-2.0:2.0.0" "org.slf4j:slf4j-api:1.7.36")

mkdir -p "$JAR_CACHE"
for gav in "${ARTIFACTS[@]}"; do
  IFS=: read -r g a v <<< "$gav"
  [ -f "$JAR_CACHE/$a-$v.jar" ] && continue
  echo "build.sh: fetching $gav from Maven Central"
  if command -v mvn >/dev/null 2>&1; then
    mvn -q dependency:copy -Dartifact="$gav" -DoutputDirectory="$JAR_CACHE"
  else
    curl -fsSL -o "$JAR_CACHE/$a-$v.jar.part" "$CENTRAL/${g//.//}/$a/$v/$a-$v.jar"
    mv "$JAR_CACHE/$a-$v.jar.part" "$JAR_CACHE/$a-$v.jar"
  fi
done
cp -p "$HADOOP_DIR"/hadoop-client-api-*.jar "$HADOOP_DIR"/hadoop-client-runtime-*.jar "$JAR_CACHE/"
(cd "$JAR_CACHE" && sha256sum -c --quiet "$HERE/SHA256SUMS")

rm -rf "$OUT" && mkdir -p "$OUT/lib" "$OUT/build/classes"
cp -Rp "$SRC/src" "$SRC/bin" "$SRC/tools" "$OUT/"
patch -s -p1 -d "$OUT" < "$HERE/oracle-2.0.patch"
for j in $(cut -d' ' -f3 "$HERE/SHA256SUMS"); do ln -s "$JAR_CACHE/$j" "$OUT/lib/$j"; done
javac -nowarn -encoding UTF-8 -d "$OUT/build/classes" -cp "$OUT/lib/*" $(find "$OUT/src" -name '*.java')
(cd "$OUT/build/classes" && jar cf ../paimon-oracle.jar .)
rm -rf "$OUT/build/classes"

# AppCDS archive from a short training run (halves JVM start-up; the wrapper ignores it when absent)
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
cat > "$TMP/spec.json" <<JSON
{"warehouse": "$TMP/wh", "database": "db", "table": "t", "if_exists": "drop",
 "schema": {"fields": [{"name": "k", "type": "INT"}, {"name": "p", "type": "STRING"}, {"name": "v", "type": "STRING"}],
            "primary_keys": ["k", "p"], "partition_keys": ["p"], "options": {"bucket": "2"}},
 "batches": [[["+I", 1, "a", "x"], ["+I", 2, "b", "y"]], [["-D", 1, "a", "x"]]], "compact": true}
JSON
printf '%s\n' "[\"write\", \"$TMP/spec.json\"]" "[\"read\", \"$TMP/wh\", \"db\", \"t\"]" \
    "[\"meta\", \"$TMP/wh\", \"db\", \"t\"]" "[\"sys\", \"$TMP/wh\", \"db\", \"t\", \"files\"]" > "$TMP/cmds"
java -XX:ArchiveClassesAtExit="$OUT/build/oracle.jsa" -XX:TieredStopAtLevel=1 -XX:+UseSerialGC \
     -cp "$OUT/build/paimon-oracle.jar:$OUT/lib/*" oracle.PaimonOracle batch < "$TMP/cmds" > "$TMP/out" 2>&1 \
  || { echo "build.sh: training run failed:" >&2; tail -20 "$TMP/out" >&2; exit 1; }
grep -q '"k"' "$TMP/out" || { echo "build.sh: training run read nothing:" >&2; tail -20 "$TMP/out" >&2; exit 1; }
echo "built: $OUT/build/paimon-oracle.jar (Paimon 2.0.0)"
