#!/usr/bin/env bash
# Runs the CAF Savina driver: run.sh <bench-id> [--variant V] [--iterations K]
# [--warmup W] [--threads T] [--quick] [-flag value]...
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../../../.." && pwd)"
# Cargo's target directory: the one the runner passes (CARGO_TARGET_DIR), else <repo>/target.
target="${CARGO_TARGET_DIR:-$repo/target}"
case "$target" in /*) ;; *) target="$PWD/$target" ;; esac
bin="$target/odeon-bench/build/caf/savina-caf"
if [ ! -x "$bin" ]; then
    echo "caf: driver not built: run $here/build.sh first" >&2
    exit 1
fi
exec "$bin" "$@"
