#!/usr/bin/env bash
# The cost of the `observe` feature (docs/observe.md, "Measured"): Savina PingPong and
# Counting with the feature off, compiled in but off, and on, interleaved per round.
# Build first:
#   cargo build --release -p savina-odeon --no-default-features --features micro
#   cp target/release/savina-odeon /tmp/wireobs/sav-plain
#   cargo build --release -p savina-odeon --no-default-features --features micro,observe
#   cp target/release/savina-odeon /tmp/wireobs/sav-obs
# then `R=12 IT=6 scripts/observe_ab.sh > ab.out`. One line per timed iteration:
# round, benchmark, variant, the SAVINA-RESULT JSON (drop iteration 0, a warm-up).
R=${R:-30}; IT=${IT:-15}
for r in $(seq $R); do
  for b in pingpong counting; do
    for v in plain off on; do
      case $v in
        plain) bin=/tmp/wireobs/sav-plain; env=ODEON_OBSERVE=0;;
        off) bin=/tmp/wireobs/sav-obs; env=ODEON_OBSERVE=0;;
        on) bin=/tmp/wireobs/sav-obs; env=ODEON_OBSERVE=1;;
      esac
      env $env $bin $b --iterations $IT 2>/dev/null | grep SAVINA-RESULT | sed "s/^SAVINA-RESULT /$r $b $v /"
    done
  done
done
