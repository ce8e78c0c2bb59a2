#!/usr/bin/env bash
# Interleaved A/B of two savina-odeon binaries: N processes each per bench, 3 iterations
# per process, the best of iterations 1-2 (iteration 0 is a warm-up) per process.
# Usage: build savina-odeon at two commits, copy the binaries to /tmp/sav-old and
# /tmp/sav-new, then `N=20 scripts/savina_ab.sh`. Prints one line per process:
# benchmark, build, best of iterations 1-2 in ms (docs/bench/before-after-2026-11-27.md).
N=${N:-10}
for b in pingpong threadring counting fjthrput fjcreate chameneos big; do
  for i in $(seq $N); do
    for v in old new; do
      /tmp/sav-$v $b --iterations 3 2>/dev/null | grep SAVINA-RESULT | sed 's/SAVINA-RESULT //' |
        python3 -c "import sys,json; r=[json.loads(l) for l in sys.stdin]; ns=sorted(x['ns'] for x in r if x['iteration']>0 and x['valid']); print('$b $v', ns[0]/1e6 if ns else 'INVALID')"
    done
  done
done
