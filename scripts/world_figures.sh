#!/usr/bin/env bash
# Interleaved figures of the world case study (issue 18): for each size, ROUNDS rounds of
# one actors process then one shared process (A,B,A,B...), seed 1, default workers.
# Prints one line per process: the binary's own result line (wall time counts the ticks
# only), then CPU seconds (user+sys, whole process) and peak RSS (KB) from /usr/bin/time.
# Usage: cargo build --release -p odeon-world, then
#   BIN=target/release/odeon-world ROUNDS=5 scripts/world_figures.sh "10000:300 100000:100"
# With BASE=<another build of odeon-world>, each round also runs that build's actors
# (printed as impl=actors-base) first, for before/after figures in the same run.
BIN=${BIN:-target/release/odeon-world}
BASE=${BASE:-}
ROUNDS=${ROUNDS:-5}
tmp=$(mktemp)
for spec in ${1:-10000:300 100000:100}; do
  n=${spec%%:*}
  t=${spec##*:}
  for r in $(seq "$ROUNDS"); do
    if [ -n "$BASE" ]; then
      res=$(/usr/bin/time -o "$tmp" -f "cpu_s=%U+%S max_rss_kb=%M" "$BASE" --objects "$n" --ticks "$t" --impl actors 2>/dev/null | tail -1)
      echo "round=$r ${res/impl=actors/impl=actors-base} $(tail -1 "$tmp")"
    fi
    for im in actors shared; do
      res=$(/usr/bin/time -o "$tmp" -f "cpu_s=%U+%S max_rss_kb=%M" "$BIN" --objects "$n" --ticks "$t" --impl "$im" 2>/dev/null | tail -1)
      echo "round=$r $res $(tail -1 "$tmp")"
    done
  done
done
rm -f "$tmp"
