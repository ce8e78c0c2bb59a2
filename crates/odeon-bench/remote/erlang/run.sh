#!/usr/bin/env bash
# Runs the Erlang remote-messaging benchmark between two nodes (two OS processes) on
# 127.0.0.1:   run.sh <rtt|throughput> [--quick]
# Starts the server node, waits for it to print its (OS-picked) distribution port, runs the
# client node against it, and always stops the server. Prints one
# `REMOTE-RESULT {...}` line per timed result on stdout.
# Exit 0 on success, 10 when erl is missing, 2 on bad arguments, 1 on any other failure.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../../../.." && pwd)"
out="$repo/target/odeon-bench/build/erlang-remote"

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

if ! command -v erl >/dev/null 2>&1; then
    echo "erlang: erl not found (install Erlang/OTP, e.g. the erlang-nox package)" >&2
    exit 10
fi
if [[ ! -f "$out/remote_bench.beam" || ! -f "$out/remote_epmd.beam" ]]; then
    echo "erlang: peer not built: run $here/build.sh first" >&2
    exit 1
fi

tmp="$(mktemp -d)"
server_pid=""
cleanup() {
    if [[ -n "$server_pid" ]] && kill -0 "$server_pid" 2>/dev/null; then
        kill "$server_pid" 2>/dev/null || true
        for _ in $(seq 50); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
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

# A fresh random cookie per run; node names are local to this run (no epmd registry).
cookie="$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
# Both nodes: default VM flags (schedulers = cores), standard inet_tcp distribution,
# loopback only, remote_epmd instead of the epmd daemon (see README.md).
common=(-noshell -noinput -pa "$out" -setcookie "$cookie"
        -start_epmd false -epmd_module remote_epmd
        -kernel inet_dist_use_interface "{127,0,0,1}")
server_node="rbserver@127.0.0.1"

erl -name "$server_node" "${common[@]}" -remote_parent "$$" \
    -s remote_bench server >"$tmp/server.out" 2>"$tmp/server.err" &
server_pid=$!

port=""
for _ in $(seq 300); do
    port="$(sed -n 's/^REMOTE-READY \([0-9][0-9]*\)$/\1/p' "$tmp/server.out" 2>/dev/null | head -n1 || true)"
    [[ -n "$port" ]] && break
    if ! kill -0 "$server_pid" 2>/dev/null; then break; fi
    sleep 0.1
done
if [[ -z "$port" ]]; then
    echo "erlang: the server node did not become ready" >&2
    cat "$tmp/server.out" "$tmp/server.err" >&2 || true
    exit 1
fi

status=0
erl -name "rbclient@127.0.0.1" "${common[@]}" \
    -remote_peer_port "$port" -remote_server_node "$server_node" \
    -s remote_bench client -extra "$bench" "${quick[@]}" || status=$?
if [[ "$status" -ne 0 ]]; then
    echo "erlang: client failed (exit $status)" >&2
    if [[ -s "$tmp/server.err" ]]; then
        echo "erlang: server stderr:" >&2
        cat "$tmp/server.err" >&2
    fi
    exit 1
fi
