#!/usr/bin/env bash
# Runs the Erlang Savina driver: run.sh <bench-id> [--variant V] [--iterations K]
# [--warmup W] [--threads T] [--quick] [-flag value]...
# The VM's scheduler count is fixed at boot, so --threads T becomes `+S T:T` here;
# the driver itself parses and validates every argument again.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../../../.." && pwd)"
# Cargo's target directory: the one the runner passes (CARGO_TARGET_DIR), else <repo>/target.
target="${CARGO_TARGET_DIR:-$repo/target}"
case "$target" in /*) ;; *) target="$PWD/$target" ;; esac
out="$target/odeon-bench/build/erlang"
if [ ! -f "$out/savina_driver.beam" ]; then
    echo "erlang: driver not built: run $here/build.sh first" >&2
    exit 1
fi
threads="$(nproc)"
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
    if [ "${args[$i]}" = "--threads" ] && [ $((i + 1)) -lt ${#args[@]} ]; then
        t="${args[$((i + 1))]}"
        if [[ "$t" =~ ^[0-9]+$ ]]; then
            t=$((10#$t))
            if [ "$t" -gt 1024 ]; then
                echo "erlang: --threads $t exceeds the VM's limit of 1024 schedulers" >&2
                exit 2
            fi
            threads=$((t < 1 ? 1 : t))
        fi
    fi
done
# +S T:T: T schedulers, all online. Everything else is the VM's default.
exec erl +S "$threads:$threads" -noshell -noinput -pa "$out" \
    -s savina_driver main -extra "$@"
