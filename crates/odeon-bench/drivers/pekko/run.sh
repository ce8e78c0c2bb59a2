#!/usr/bin/env bash
# Runs the Pekko Savina driver with the driver command line of
# crates/odeon-bench/savina/src/protocol.rs, e.g.
#   run.sh pingpong --iterations 5 --warmup 3 --threads 2 -n 40000
# Uses $JAVA_HOME/bin/java, or java on PATH when JAVA_HOME is unset. Extra JVM options may be
# given in $PEKKO_JAVA_OPTS (e.g. -Dpekko.actor.default-dispatcher.throughput=100).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../../../.." && pwd)"
# Cargo's target directory: the one the runner passes (CARGO_TARGET_DIR), else <repo>/target.
target="${CARGO_TARGET_DIR:-$repo/target}"
case "$target" in /*) ;; *) target="$PWD/$target" ;; esac
jar="$target/odeon-bench/build/pekko/savina-pekko.jar"

if [[ -n "${JAVA_HOME:-}" ]]; then
    java="$JAVA_HOME/bin/java"
else
    java="$(command -v java || true)"
fi
if [[ -z "$java" || ! -x "$java" ]]; then
    echo "pekko: java not found (set JAVA_HOME or put java on PATH)" >&2
    exit 10
fi
if [[ ! -f "$jar" ]]; then
    echo "pekko: $jar is missing: run $here/build.sh first" >&2
    exit 10
fi

# JDK 24+ warns on every start that Pekko uses sun.misc.Unsafe (JEP 498); allow it quietly.
extra=()
major="$("$java" -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -n1)"
if [[ "$major" =~ ^[0-9]+$ ]] && (( major >= 24 )); then
    extra+=(--sun-misc-unsafe-memory-access=allow)
fi

# A fixed, roomy heap (no resizing during the timed region); the default collector (G1).
# shellcheck disable=SC2086 # PEKKO_JAVA_OPTS is a list of options
exec "$java" -Xms1g -Xmx4g "${extra[@]}" ${PEKKO_JAVA_OPTS:-} -jar "$jar" "$@"
