#!/usr/bin/env bash
# Builds the Erlang Savina driver into <repo>/target/odeon-bench/build/erlang/.
# Exit 0 when built, 10 when the toolchain is missing, else the compiler's status.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../../../.." && pwd)"
out="$repo/target/odeon-bench/build/erlang"
if ! command -v erlc >/dev/null 2>&1 || ! command -v erl >/dev/null 2>&1; then
    echo "erlang: erlc/erl not found (install Erlang/OTP, e.g. the erlang-nox package)" >&2
    exit 10
fi
mkdir -p "$out"
# Recompiling every module is quick (well under a second) and always idempotent.
erlc -Werror -o "$out" "$here"/src/*.erl
