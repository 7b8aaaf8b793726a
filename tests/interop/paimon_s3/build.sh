#!/usr/bin/env bash
# Build the Java Paimon 0.9 oracle with S3 support into OUT (default: <repo>/.cache/paimon-oracle-s3).
#
# The driver is the 0.9 oracle of ../shared/paimon-oracle with oracle-s3.patch applied (every command also takes
# catalog options from PAIMON_ORACLE_CATALOG_OPTIONS, a JSON object: the s3.* options of an s3:// warehouse).
# Jars: the built 0.9 oracle's lib/ (Paimon 0.9 bridge, Hadoop client) plus, from Maven Central,
#   paimon-s3-0.9.0.jar   Paimon's S3 FileIO (hadoop-aws and the AWS SDK inside, loaded by Paimon's plugin
#                         class loader from the paimon-plugin-s3/ folder of the jar; scheme s3://)
# cached in JAR_CACHE (default ~/.cache/lakehouse/paimon-oracle-s3-lib) and checked against SHA256SUMS.
# Usage: build.sh ORACLE09_DIR [OUT]   (ORACLE09_DIR: a built 0.9 oracle, e.g. .cache/paimon-oracle)
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
BASE="${1:?usage: build.sh ORACLE09_DIR [OUT]}"
OUT="${2:-$HERE/../../../.cache/paimon-oracle-s3}"
JAR_CACHE="${JAR_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/lakehouse/paimon-oracle-s3-lib}"
CENTRAL="https://repo.maven.apache.org/maven2"
GAV="org.apache.paimon:paimon-s3:0.9.0"

mkdir -p "$JAR_CACHE"
IFS=: read -r g a v <<< "$GAV"
if [ ! -f "$JAR_CACHE/$a-$v.jar" ]; then
  echo "build.sh: fetching $GAV from Maven Central"
  if command -v mvn >/dev/null 2>&1; then
    mvn -q dependency:copy -Dartifact="$GAV" -DoutputDirectory="$JAR_CACHE"
  else
    curl -fsSL -o "$JAR_CACHE/$a-$v.jar.part" "$CENTRAL/${g//.//}/$a/$v/$a-$v.jar"
    mv "$JAR_CACHE/$a-$v.jar.part" "$JAR_CACHE/$a-$v.jar"
  fi
fi
(cd "$JAR_CACHE" && sha256sum -c --quiet "$HERE/SHA256SUMS")
ls "$BASE"/lib/paimon-python-java-bridge-*.jar "$BASE"/lib/hadoop-client-runtime-*.jar >/dev/null

rm -rf "$OUT" && mkdir -p "$OUT/lib" "$OUT/build/classes"
cp -Rp "$BASE/src" "$BASE/bin" "$BASE/tools" "$OUT/"
patch -s -p1 -d "$OUT" < "$HERE/oracle-s3.patch"
for j in "$BASE"/lib/*.jar; do ln -s "$(cd "$(dirname "$j")" && pwd)/$(basename "$j")" "$OUT/lib/"; done
ln -s "$JAR_CACHE/$a-$v.jar" "$OUT/lib/"
javac -nowarn -encoding UTF-8 -d "$OUT/build/classes" -cp "$OUT/lib/*" $(find "$OUT/src" -name '*.java')
(cd "$OUT/build/classes" && jar cf ../paimon-oracle.jar .)
rm -rf "$OUT/build/classes"

# AppCDS archive from a short local training run (halves JVM start-up; the wrapper ignores it when absent)
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
cat > "$TMP/spec.json" <<JSON
{"warehouse": "$TMP/wh", "database": "db", "table": "t", "if_exists": "drop",
 "schema": {"fields": [{"name": "k", "type": "INT"}, {"name": "v", "type": "STRING"}],
            "primary_keys": ["k"], "options": {"bucket": "1"}},
 "batches": [[["+I", 1, "x"], ["+I", 2, "y"]]]}
JSON
printf '%s\n' "[\"write\", \"$TMP/spec.json\"]" "[\"read\", \"$TMP/wh\", \"db\", \"t\"]" > "$TMP/cmds"
java -XX:ArchiveClassesAtExit="$OUT/build/oracle.jsa" -XX:TieredStopAtLevel=1 -XX:+UseSerialGC \
     -cp "$OUT/build/paimon-oracle.jar:$OUT/lib/*" oracle.PaimonOracle batch < "$TMP/cmds" > "$TMP/out" 2>&1 \
  || { echo "build.sh: training run failed:" >&2; tail -20 "$TMP/out" >&2; exit 1; }
grep -q '"k"' "$TMP/out" || { echo "build.sh: training run read nothing:" >&2; tail -20 "$TMP/out" >&2; exit 1; }
echo "built: $OUT/build/paimon-oracle.jar (Paimon 0.9.0 with paimon-s3)"
