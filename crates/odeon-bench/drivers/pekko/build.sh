#!/usr/bin/env bash
# Builds the Pekko Savina driver: one shaded jar at <target>/odeon-bench/build/pekko/savina-pekko.jar.
# Idempotent (Maven rebuilds only what changed) and works from any directory.
# Exit 10 when mvn or java is missing; any other failure exits non-zero with Maven's output.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../../../.." && pwd)"
# Cargo's target directory: the one the runner passes (CARGO_TARGET_DIR), else <repo>/target.
target="${CARGO_TARGET_DIR:-$repo/target}"
case "$target" in /*) ;; *) target="$PWD/$target" ;; esac
out="$target/odeon-bench/build/pekko"

if [[ -n "${JAVA_HOME:-}" && -x "$JAVA_HOME/bin/java" ]]; then
    :
elif ! command -v java >/dev/null 2>&1; then
    echo "pekko: java not found (set JAVA_HOME or put java on PATH)" >&2
    exit 10
fi
if ! command -v mvn >/dev/null 2>&1; then
    echo "pekko: mvn (Maven) not found on PATH" >&2
    exit 10
fi

mkdir -p "$out"
log="$out/build.log"
# Maven's target/ lives in the repo's build tree, not in the source directory.
if ! mvn -B -q -f "$here/pom.xml" -DbuildDirectory="$out/maven" package >"$log" 2>&1; then
    cat "$log" >&2
    echo "pekko: mvn package failed (log: $log)" >&2
    exit 1
fi
cp -f "$out/maven/savina-pekko.jar" "$out/savina-pekko.jar.tmp"
mv -f "$out/savina-pekko.jar.tmp" "$out/savina-pekko.jar"
echo "pekko: built $out/savina-pekko.jar" >&2
