"""Summary and RSS chart of a soak CSV (scripts/soak.sh).

usage: soak_report.py soak.csv rss.png [flat_pct]

For each process (node and life): first, last and max of RSS, descriptors and
threads. For the nodes that lived the whole run (life 1 at the end): whether each
stays flat, i.e. the mean of the run's last quarter is at most flat_pct % above the
mean of its second quarter. Exits 1 if one of them is not flat.
"""

import csv
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

path, png = sys.argv[1], sys.argv[2]
flat_pct = float(sys.argv[3]) if len(sys.argv) > 3 else 10.0
rows = list(csv.DictReader(open(path)))
series = defaultdict(list)  # (node, life) -> [(t, rss_kb, fds, threads)]
for r in rows:
    series[(r["node"], int(r["life"]))].append(
        (int(r["t_s"]), int(r["rss_kb"]), int(r["fds"]), int(r["threads"]))
    )
end = max(int(r["t_s"]) for r in rows)
lives = defaultdict(int)
for node, life in series:
    lives[node] = max(lives[node], life)

print(f"soak summary: {end} s, {len(rows)} samples")
print(f"{'process':10} {'samples':>7} {'rss first/last/max MiB':>24} {'fds f/l/max':>13} {'threads f/l/max':>16}")
for (node, life), s in sorted(series.items()):
    rss = [x[1] / 1024 for x in s]
    fds = [x[2] for x in s]
    thr = [x[3] for x in s]
    print(
        f"{node}#{life:<8} {len(s):7} {rss[0]:7.1f}/{rss[-1]:7.1f}/{max(rss):7.1f} "
        f"{fds[0]:4}/{fds[-1]:3}/{max(fds):3} {thr[0]:5}/{thr[-1]:4}/{max(thr):4}"
    )

ok = True
print(f"flat (last-quarter mean within {flat_pct:g}% above second-quarter mean):")
for node in sorted(lives):
    if lives[node] != 1:
        continue
    s = series[(node, 1)]
    q2 = [x for x in s if end / 4 <= x[0] < end / 2]
    q4 = [x for x in s if x[0] >= 3 * end / 4]
    if not q2 or not q4:
        print(f"  {node}: too short to judge")
        continue
    verdicts = []
    for i, what in ((1, "rss"), (2, "fds"), (3, "threads")):
        m2 = sum(x[i] for x in q2) / len(q2)
        m4 = sum(x[i] for x in q4) / len(q4)
        change = (m4 - m2) / m2 * 100 if m2 else 0.0
        flat = m4 <= m2 * (1 + flat_pct / 100)
        ok &= flat
        unit = " MiB" if what == "rss" else ""
        scale = 1024 if what == "rss" else 1
        verdicts.append(
            f"{what} {m2 / scale:.1f}{unit} -> {m4 / scale:.1f}{unit} ({change:+.1f}%) {'flat' if flat else 'GROWS'}"
        )
    print(f"  {node}: " + "; ".join(verdicts))

fig, ax = plt.subplots(figsize=(10, 4.5))
for (node, life), s in sorted(series.items()):
    label = node if lives[node] == 1 else (f"{node} (restarted)" if life == 1 else None)
    color = {"a": "tab:blue", "b": "tab:orange", "c": "tab:green"}.get(node)
    ax.plot([x[0] / 60 for x in s], [x[1] / 1024 for x in s], color=color, label=label, lw=1)
ax.set_xlabel("minutes")
ax.set_ylabel("RSS (MiB)")
ax.set_ylim(bottom=0)
ax.set_title("odeon soak: RSS of three nodes (c killed and restarted periodically)")
ax.legend(loc="lower right")
ax.grid(alpha=0.3)
fig.tight_layout()
fig.savefig(png, dpi=100)
print(f"chart: {png}")
sys.exit(0 if ok else 1)
