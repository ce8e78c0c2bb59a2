#!/usr/bin/env bash
# Runs the CAF Savina driver: run.sh <bench-id> [--variant V] [--iterations K]
# [--warmup W] [--threads T] [--quick] [-flag value]...
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../../../.." && pwd)"
bin="$repo/target/odeon-bench/build/caf/savina-caf"
if [ ! -x "$bin" ]; then
    echo "caf: driver not built: run $here/build.sh first" >&2
    exit 1
fi
exec "$bin" "$@"
