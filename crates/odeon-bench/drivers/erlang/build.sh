#!/usr/bin/env bash
# Builds the Erlang Savina driver into <target>/odeon-bench/build/erlang/.
# Exit 0 when built, 10 when the toolchain is missing, else the compiler's status.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../../../.." && pwd)"
# Cargo's target directory: the one the runner passes (CARGO_TARGET_DIR), else <repo>/target.
target="${CARGO_TARGET_DIR:-$repo/target}"
case "$target" in /*) ;; *) target="$PWD/$target" ;; esac
out="$target/odeon-bench/build/erlang"
if ! command -v erlc >/dev/null 2>&1 || ! command -v erl >/dev/null 2>&1; then
    echo "erlang: erlc/erl not found (install Erlang/OTP, e.g. the erlang-nox package)" >&2
    exit 10
fi
mkdir -p "$out"
# Recompiling every module is quick (well under a second) and always idempotent.
erlc -Werror -o "$out" "$here"/src/*.erl
