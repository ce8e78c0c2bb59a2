#!/usr/bin/env bash
# Run-to-run spread of the Savina micro rows (issue 19): RUNS processes per row, one
# measured iteration each (after the driver's warm-up), interleaved with a control that
# does a fixed amount of single-threaded work and no scheduling at all
# (`scripts/tails/control.rs`: a pointer chase in L2). Prints p50, p90 and p90/p50 per
# row. The control's own p90/p50 is the machine's spread: a row cannot be judged
# against the issue's 1.15 when the control does not meet it in the same run.
# Usage: cargo build --release -p savina-odeon, then
#   RUNS=20 scripts/savina_tails.sh [row,row,...]
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-target/release/savina-odeon}
RUNS=${RUNS:-20}
ROWS=${1:-pingpong,threadring,counting,fjthrput,fjcreate,chameneos,big}
CONTROL=target/tails-control
rustc -O -o "$CONTROL" scripts/tails/control.rs
out=$(mktemp)
for r in $(seq "$RUNS"); do
  for row in ${ROWS//,/ }; do
    ns=$("$BIN" "$row" 2>/dev/null | grep -o '"ns":[0-9]*' | tail -1 | cut -d: -f2)
    echo "$row $ns" >>"$out"
  done
  # About 0.5 ms and 2.5 ms of work: the spans of the shortest rows.
  for c in 125000 600000; do
    ns=$("$CONTROL" 65536 "$c" | grep -o '"ns":[0-9]*' | cut -d: -f2)
    echo "control-$c $ns" >>"$out"
  done
done
printf '%-16s %5s %10s %10s %8s %s\n' row n p50_ms p90_ms p90/p50 "min-max"
for row in $(cut -d' ' -f1 "$out" | awk '!seen[$0]++'); do
  grep "^$row " "$out" | cut -d' ' -f2 | sort -n | awk -v row="$row" '
    { v[NR] = $1 / 1e6 }
    END {
      n = NR; p50 = (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
      i = int(0.9 * (n - 1) + 0.5) + 1; p90 = v[i]
      printf "%-16s %5d %10.2f %10.2f %8.3f %.2f-%.2f\n", row, n, p50, p90, p90 / p50, v[1], v[n]
    }'
done
rm -f "$out"
