#!/usr/bin/env bash
# Soak: three odeon nodes in three processes on loopback, for [minutes] (default 30),
# under the mixed workload of examples/soak (numbered tells, asks, remote spawns,
# watches, stops, against both other nodes), with node c killed (SIGKILL) and
# restarted under the same name every $RESTART_S seconds (default 30). Samples every
# process's RSS, open descriptors and threads every $SAMPLE_S seconds (default 2) from
# /proc into a CSV, then prints a summary and draws RSS over time to a PNG.
#
#   scripts/soak.sh [minutes]         output in $OUT (default target/soak/)
#
# a and b live for the whole run: they are the ones that must stay flat while their
# peer dies and comes back (a leak per lost peer, per link, per spawn would show).
# "flat": the mean of the last quarter of the run is within $FLAT_PCT % (default 10)
# above the mean of the second quarter (the first quarter is warm-up). The script exits
# 1 if a or b is not flat, or if a process died on its own.
set -euo pipefail

MINUTES=${1:-30}
RESTART_S=${RESTART_S:-30}
SAMPLE_S=${SAMPLE_S:-2}
FLAT_PCT=${FLAT_PCT:-10}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-$ROOT/target/soak}
export ODEON_SECRET=${ODEON_SECRET:-"soak-$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')"}

python3 -c 'import matplotlib' 2>/dev/null || python3 -m pip install --quiet matplotlib
cd "$ROOT"
cargo build --release -p odeon-examples --bin odeon-soak
BIN=${CARGO_TARGET_DIR:-$ROOT/target}/release/odeon-soak
mkdir -p "$OUT"
rm -f "$OUT"/*.log

declare -A PORT=([a]=7501 [b]=7502 [c]=7503) PID=() LIFE=([a]=0 [b]=0 [c]=0)
cleanup() {
  for p in "${PID[@]}"; do kill -9 "$p" 2>/dev/null || true; done
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# start NODE: a node seeded with the nodes started before it (a node refuses to start
# when a seed does not answer; gossip tells it about the others), working against both
# others.
start() {
  local n=$1 args=() m
  for m in a b c; do
    [ "$m" = "$n" ] && continue
    args+=(--peer "$m")
    if [ "$n" = c ] || { [ "$n" = b ] && [ "$m" = a ]; }; then
      args+=(--seed "127.0.0.1:${PORT[$m]}")
    fi
  done
  "$BIN" node --name "$n" --listen "127.0.0.1:${PORT[$n]}" --report-s 10 "${args[@]}" \
    >>"$OUT/$n.log" 2>>"$OUT/$n.err" &
  PID[$n]=$!
  LIFE[$n]=$((LIFE[$n] + 1))
}

for n in a b c; do
  start "$n"
  sleep 1
done
CSV=$OUT/soak.csv
echo "t_s,node,life,pid,rss_kb,fds,threads" >"$CSV"
t0=$(date +%s)
end=$((t0 + MINUTES * 60))
next_restart=$((t0 + RESTART_S))
died=0
echo "soak: ${MINUTES} min, c restarted every ${RESTART_S}s, samples every ${SAMPLE_S}s -> $CSV"
while [ "$(date +%s)" -lt "$end" ]; do
  now=$(date +%s)
  for n in a b c; do
    p=${PID[$n]}
    if ! kill -0 "$p" 2>/dev/null; then
      echo "soak: $n (pid $p) died on its own; see $OUT/$n.err"
      died=1
      start "$n"
      continue
    fi
    rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$p/status" 2>/dev/null || echo "")
    thr=$(awk '/^Threads:/ {print $2}' "/proc/$p/status" 2>/dev/null || echo "")
    fds=$(ls "/proc/$p/fd" 2>/dev/null | wc -l)
    [ -n "$rss" ] && echo "$((now - t0)),$n,${LIFE[$n]},$p,$rss,$fds,$thr" >>"$CSV"
  done
  if [ "$now" -ge "$next_restart" ]; then
    kill -9 "${PID[c]}" 2>/dev/null || true
    wait "${PID[c]}" 2>/dev/null || true
    start c
    next_restart=$((now + RESTART_S))
  fi
  sleep "$SAMPLE_S"
done
echo "soak: done; last workload report of each node:"
for n in a b c; do echo "  $n: $(grep '^stats' "$OUT/$n.log" | tail -1)"; done
status=0
python3 "$ROOT/scripts/soak_report.py" "$CSV" "$OUT/rss.png" "$FLAT_PCT" || status=1
[ "$died" = 0 ] || status=1
exit $status
