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
# PLAIN and OBS override the two binaries; VARIANTS the variants run (default
# `plain off on`); `base` runs BASE (an older observe build) switched on, to compare
# two builds of the feature: `BASE=/tmp/sav-before VARIANTS="base on off" ...`.
R=${R:-30}; IT=${IT:-15}
PLAIN=${PLAIN:-/tmp/wireobs/sav-plain}; OBS=${OBS:-/tmp/wireobs/sav-obs}
VARIANTS=${VARIANTS:-plain off on}
for r in $(seq $R); do
  for b in pingpong counting; do
    for v in $VARIANTS; do
      case $v in
        plain) bin=$PLAIN; env=ODEON_OBSERVE=0;;
        off) bin=$OBS; env=ODEON_OBSERVE=0;;
        on) bin=$OBS; env=ODEON_OBSERVE=1;;
        base) bin=$BASE; env=ODEON_OBSERVE=1;;
      esac
      env $env $bin $b --iterations $IT 2>/dev/null | grep SAVINA-RESULT | sed "s/^SAVINA-RESULT /$r $b $v /"
    done
  done
done
