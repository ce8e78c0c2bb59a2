#!/usr/bin/env bash
# Builds the Erlang remote-messaging peer into <repo>/target/odeon-bench/build/erlang-remote/.
# Exit 0 when built, 10 when the toolchain is missing, else the compiler's status.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../../../.." && pwd)"
out="$repo/target/odeon-bench/build/erlang-remote"
if ! command -v erlc >/dev/null 2>&1 || ! command -v erl >/dev/null 2>&1; then
    echo "erlang: erlc/erl not found (install Erlang/OTP, e.g. the erlang-nox package)" >&2
    exit 10
fi
mkdir -p "$out"
# Two small modules: recompiling both is quick and idempotent.
erlc -Werror -o "$out" "$here"/src/*.erl
