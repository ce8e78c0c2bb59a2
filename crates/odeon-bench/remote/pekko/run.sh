#!/usr/bin/env bash
# Runs the Pekko remote-messaging benchmark between two JVMs (two OS processes) over Artery
# TCP on 127.0.0.1:   run.sh <rtt|throughput> [--quick]
# Starts the server JVM, waits for it to print its (OS-picked) Artery port, runs the client
# JVM against it, and always stops the server. Prints one `REMOTE-RESULT {...}` line per timed
# result on stdout. Uses $JAVA_HOME/bin/java, or java on PATH when JAVA_HOME is unset; extra
# JVM options (both JVMs) may be given in $PEKKO_JAVA_OPTS.
# Exit 0 on success, 10 when java or the jar is missing, 2 on bad arguments, 1 on failure.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../../../.." && pwd)"
jar="$repo/target/odeon-bench/build/pekko-remote/remote-pekko.jar"

usage() { echo "usage: $0 <rtt|throughput> [--quick]" >&2; exit 2; }
bench=""
quick=()
for a in "$@"; do
    case "$a" in
        rtt|throughput) [[ -z "$bench" ]] || usage; bench="$a" ;;
        --quick) quick=(--quick) ;;
        *) usage ;;
    esac
done
[[ -n "$bench" ]] || usage

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
# shellcheck disable=SC2206 # PEKKO_JAVA_OPTS is a list of options
jvm=("$java" -Xms1g -Xmx4g "${extra[@]}" ${PEKKO_JAVA_OPTS:-} -jar "$jar")

tmp="$(mktemp -d)"
server_pid=""
cleanup() {
    if [[ -n "$server_pid" ]] && kill -0 "$server_pid" 2>/dev/null; then
        kill "$server_pid" 2>/dev/null || true
        for _ in $(seq 100); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$server_pid" 2>/dev/null || true
    fi
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
# Created here, not by the background job's redirection, so the readiness loop can always read it.
: >"$tmp/server.out"
: >"$tmp/server.err"

"${jvm[@]}" server --parent "$$" >"$tmp/server.out" 2>"$tmp/server.err" &
server_pid=$!

port=""
for _ in $(seq 1200); do
    port="$(sed -n 's/^REMOTE-READY \([0-9][0-9]*\)$/\1/p' "$tmp/server.out" 2>/dev/null | head -n1 || true)"
    [[ -n "$port" ]] && break
    if ! kill -0 "$server_pid" 2>/dev/null; then break; fi
    sleep 0.1
done
if [[ -z "$port" ]]; then
    echo "pekko: the server JVM did not become ready" >&2
    cat "$tmp/server.out" "$tmp/server.err" >&2 || true
    exit 1
fi

status=0
"${jvm[@]}" client "$bench" "${quick[@]}" --port "$port" || status=$?
if [[ "$status" -ne 0 ]]; then
    echo "pekko: client failed (exit $status)" >&2
    if [[ -s "$tmp/server.err" ]]; then
        echo "pekko: server stderr:" >&2
        cat "$tmp/server.err" >&2
    fi
    exit 1
fi
