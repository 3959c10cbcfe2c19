"""Per-thread CPU time of the CPU search, for A/B comparisons between commits.

One worker thread, warm (a first run compiles or loads the code), CPU seconds of
the whole process (``getrusage``), so that other load on the machine does not
count. Cases: maximal cliques of a piece of facebook_combined's densest ego
network (vertex 1912's neighbours, each kept with probability ``--keep``; 99.7%
of the graph's maximal cliques are there), unique subgraph matching of
patterns on ``tests/data/facebook-1000.txt.gz``, and with ``--cliques`` the
k-cliques of every size of the whole of facebook_combined (Pivoter, ~9 s a run
on the 2-core development machine).

    python benchmarks/per_thread.py --facebook PATH/facebook_combined.txt.gz \\
        --runs 3 --out benchmarks/results/per_thread_<tag>.json

Run it in two checkouts (``git worktree add``) to compare.
"""

from __future__ import annotations

import argparse
import json
import platform
import resource
import subprocess
from pathlib import Path

import numpy as np

import gthinker
from gthinker.apps import count, mce, sm

ROOT = Path(__file__).resolve().parent.parent


def ego_piece(path, center=1912, keep=0.7, seed=1) -> gthinker.Graph:
    """The ego network of ``center`` (without it), each vertex kept with
    probability ``keep``."""
    e = np.loadtxt(path, dtype=np.int64)
    nb = np.union1d(e[e[:, 0] == center, 1], e[e[:, 1] == center, 0])
    rng = np.random.default_rng(seed)
    for _ in range(2):  # skipped: the recorded results keep the third draw of seed 1
        rng.random(nb.size)
    nb = nb[rng.random(nb.size) < keep]
    index = -np.ones(e.max() + 1, np.int64)
    index[nb] = np.arange(nb.size)
    both = (index[e[:, 0]] >= 0) & (index[e[:, 1]] >= 0)
    return gthinker.Graph.from_edges(index[e[both]], num_vertices=nb.size)


def cpu_seconds(fn, runs):
    fn()  # warm
    out = []
    for _ in range(runs):
        t0 = resource.getrusage(resource.RUSAGE_SELF).ru_utime
        result = fn()
        out.append(resource.getrusage(resource.RUSAGE_SELF).ru_utime - t0)
    return result, out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--facebook", required=True, help="facebook_combined.txt.gz")
    ap.add_argument("--keep", type=float, default=0.7)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--patterns", default="house,4-cycle,diamond")
    ap.add_argument("--cliques", action="store_true",
                    help="also every clique size of facebook_combined "
                         "(gthinker/apps/count/pivoter.py)")
    ap.add_argument("--out")
    args = ap.parse_args()
    rows = []
    g = ego_piece(args.facebook, keep=args.keep)
    res, secs = cpu_seconds(lambda: mce.run(g, mode="cpu", threads=1), args.runs)
    rows.append({"case": f"mce ego1912 keep={args.keep}", "vertices": g.num_vertices,
                 "edges": g.num_edges, "count": res.count, "cpu_seconds": secs})
    small = gthinker.Graph.read(ROOT / "tests/data/facebook-1000.txt.gz")
    for pat in args.patterns.split(","):
        res, secs = cpu_seconds(
            lambda p=pat: sm.count(small, p, unique=True, mode="cpu", threads=1), args.runs)
        rows.append({"case": f"sm {pat} unique facebook-1000", "count": res.count,
                     "cpu_seconds": secs})
    if args.cliques:
        fb = gthinker.Graph.read(args.facebook)
        res, secs = cpu_seconds(lambda: count.count(fb, "cliques", mode="cpu", threads=1),
                                args.runs)
        rows.append({"case": "count cliques facebook_combined", "count": res.count,
                     "cpu_seconds": secs})
    for r in rows:
        print(f"{r['case']:40s} count {r['count']:>14,}  CPU s min "
              f"{min(r['cpu_seconds']):.3f}  all {[round(s, 3) for s in r['cpu_seconds']]}")
    if args.out:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                                capture_output=True, text=True).stdout.strip()
        Path(args.out).write_text(json.dumps(
            {"commit": commit, "machine": platform.node(), "processor": platform.processor(),
             "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
