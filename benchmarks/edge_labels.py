"""Edge-labeled, directed matching: the labeled search on the CPU workers and on the GPU,
on R-MAT graphs with skewed edge labels (label 1 on a share --skew of the edges), for
GSI's sample query shapes (pkumod/GSI data/: triangle, wedge, star; directed) and
labeled T-DFS-style shapes; one JSON line per (graph, query, mode), and a check that every
mode gives the same count.

    python benchmarks/edge_labels.py --scale 16 --labels 4,64 --modes cpu,gpu
    python benchmarks/edge_labels.py --scale 20 --labels 4 --write-g /tmp/gsi  # GSI's inputs

``--write-g DIR`` also writes each data graph and query as GSI's .g files (for the peer).
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from pathlib import Path

import gthinker
from gthinker.apps import sm
from gthinker.graphs import generate

#: Query shapes: name -> (directed edges, their labels). Label 1 is the frequent one.
QUERIES = {
    "gsi-triangle": ([(0, 1), (1, 2), (2, 0)], [1, 1, 1]),
    "gsi-wedge": ([(0, 1), (1, 2)], [1, 1]),
    "gsi-star": ([(0, 1), (0, 2), (0, 3)], [1, 2, 1]),
    "triangle-2labels": ([(0, 1), (1, 2), (0, 2)], [1, 2, 1]),
    "4-cycle": ([(0, 1), (1, 2), (2, 3), (3, 0)], [1, 2, 1, 2]),
    "diamond": ([(0, 1), (1, 2), (2, 3), (3, 0), (0, 2)], [1, 1, 2, 1, 1]),
    "tailed-triangle": ([(0, 1), (1, 2), (2, 0), (2, 3)], [1, 2, 1, 1]),
}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=int, default=14)
    ap.add_argument("--edge-factor", type=int, default=16)
    ap.add_argument("--labels", default="4,64", help="edge label counts, comma-separated")
    ap.add_argument("--skew", type=float, default=0.3)
    ap.add_argument("--modes", default="cpu,gpu")
    ap.add_argument("--queries", default=",".join(QUERIES))
    ap.add_argument("--semantics", default="isomorphism")
    ap.add_argument("--repeat", type=int, default=2, help="runs per mode (the best is kept)")
    ap.add_argument("--write-g", default=None, metavar="DIR")
    ap.add_argument("--run-limit", type=float, default=60.0,
                    help="seconds a run may take; then it is stopped (stopped: true)")
    args = ap.parse_args(argv)
    base = generate.rmat(args.scale, args.edge_factor, seed=1)
    bad = 0
    for count in (int(x) for x in args.labels.split(",")):
        t0 = time.perf_counter()
        g = generate.label_edges(base, count, args.skew, seed=1, directed=True)
        made = time.perf_counter() - t0
        name = f"rmat{args.scale}-{count}labels"
        if args.write_g:
            Path(args.write_g).mkdir(parents=True, exist_ok=True)
            g.write(Path(args.write_g) / f"{name}.g")
        for qname in args.queries.split(","):
            edges, labels = QUERIES[qname]
            q = gthinker.Graph.from_edges(edges, edge_labels=labels, directed=True)
            if args.write_g:
                q.write(Path(args.write_g) / f"{qname}.g")
            counts = {}
            for mode in args.modes.split(","):
                best = None
                for _ in range(args.repeat):
                    token = gthinker.StopToken()
                    timer = threading.Timer(args.run_limit, token.set)
                    timer.start()
                    t = time.perf_counter()
                    try:
                        res = sm.count(g, q, mode=mode, semantics=args.semantics, stop=token)
                    finally:
                        timer.cancel()
                    wall = time.perf_counter() - t
                    stopped = token.is_set()
                    best = wall if best is None else min(best, wall)
                if not stopped:
                    counts[mode] = res.count
                print(json.dumps({"graph": name, "edges": g.num_edges, "labels": count,
                                  "skew": args.skew, "generate_s": round(made, 2),
                                  "query": qname, "semantics": args.semantics, "mode": mode,
                                  "ran_on": res.mode, "count": res.count,
                                  "seconds": round(res.seconds, 4), "wall_s": round(best, 4),
                                  "stopped": stopped,
                                  "why": res.mode_reason}), flush=True)
            if len(set(counts.values())) > 1:
                bad += 1
                print(f"MISMATCH {name} {qname}: {counts}", file=sys.stderr, flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
