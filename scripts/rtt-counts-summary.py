#!/usr/bin/env python3
"""Medians [min-max] per variant of scripts/rtt-counts.sh output."""
import sys, re, statistics as st, collections
d=collections.defaultdict(lambda: collections.defaultdict(list))
for line in open(sys.argv[1]):
    parts=line.split()
    if len(parts)<3: continue
    name=parts[1]
    for kv in parts[2:]:
        if '=' in kv:
            k,v=kv.split('=',1)
            try: d[name][k].append(float(v))
            except: pass
for name,m in d.items():
    out=[]
    for k,vs in m.items():
        if k=='load': continue
        out.append(f"{k} {st.median(vs):.2f} [{min(vs):.2f}-{max(vs):.2f}] n={len(vs)}")
    print(name, '|', ' | '.join(out))
