"""gSWORD benchmark: samples per second and q-error on the labeled query sets.

For each 16-vertex query of the chosen datasets, 10^6 samples (by default) with
WanderJoin and Alley:
  cpu        the CPU workers (--threads), no trawling
  gpu-O0     GPU, no inheritance, no streaming, no trawling
  gpu-O1     GPU, inheritance only
  gpu-O2     GPU, inheritance and warp streaming (gSWORD's configuration)
  gpu-trawl  gpu-O2 with trawling (the CPU workers enumerate)
and the q-error max(est/exact, exact/est) against the exact counts that
benchmarks/sm.py measured (benchmarks/results/sm_*.json; an estimate of 0 counts
as 1 in the q-error, as in gSWORD's paper). Times are the samplers' time
(`sampling_seconds`: kernels or CPU workers; the candidate graph is built before,
as in the paper's Table 2).

    python benchmarks/gsword.py --data .data --datasets hprd --threads 16 --out r.json
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import gthinker
from gthinker.apps import gsword

CONFIGS = {
    "cpu": dict(mode="cpu", trawl=False),
    "gpu-O0": dict(mode="gpu", trawl=False, inheritance=False, streaming=False),
    "gpu-O1": dict(mode="gpu", trawl=False, inheritance=True, streaming=False),
    "gpu-O2": dict(mode="gpu", trawl=False, inheritance=True, streaming=True),
    "gpu-trawl": dict(mode="gpu", trawl=True, inheritance=True, streaming=True),
}


def exact_counts(results_dir):
    """query file name -> exact embedding count, per dataset, from benchmarks/sm.py runs."""
    out: dict = {}
    for path in sorted(glob.glob(os.path.join(results_dir, "sm_*.json"))):
        with open(path) as f:
            doc = json.load(f)
        for ds, rows in (doc.get("labeled") or {}).items():
            for row in rows:
                for mode in ("cpu", "gpu", "hybrid"):
                    c = (row.get(mode) or {}).get("count")
                    if c is not None and not (row.get(mode) or {}).get("timeout"):
                        out.setdefault(ds, {})[row["query"]] = int(c)
                        break
    return out


def q_error(est, exact):
    e = max(est, 1.0)
    x = max(exact, 1.0)
    return max(e / x, x / e)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=".data", help="folder with labeled/ (graphs and queries)")
    ap.add_argument("--datasets", default="hprd,yeast,human")
    ap.add_argument("--size", type=int, default=16)
    ap.add_argument("--samples", type=int, default=1_000_000)
    ap.add_argument("--estimators", default="wj,alley")
    ap.add_argument("--configs", default=",".join(CONFIGS))
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--max-queries", type=int, default=0, help="per dataset; 0: all")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--results", default=str(Path(__file__).parent / "results"),
                    help="where the sm_*.json files with exact counts are")
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)

    exact = exact_counts(args.results)
    threads = args.threads or gthinker.default_threads()
    configs = [c for c in args.configs.split(",") if c]
    ests = [e for e in args.estimators.split(",") if e]
    doc = {"machine": {"node": platform.node(), "cpus": os.cpu_count(), "threads": threads,
                       "gpu": gthinker.gpu.device_status()[1]},
           "command": " ".join(sys.argv), "samples": args.samples, "rows": []}
    for ds in [d for d in args.datasets.split(",") if d]:
        data = gthinker.Graph.read(os.path.join(args.data, "labeled", f"{ds}.graph"))
        qs = sorted(glob.glob(os.path.join(args.data, "labeled", "queries", ds,
                                           f"query_*_{args.size}_*.graph")))
        if args.max_queries:
            qs = qs[: args.max_queries]
        for qpath in qs:
            name = os.path.basename(qpath)
            query = gthinker.Graph.read(qpath)
            row = {"dataset": ds, "query": name, "exact": exact.get(ds, {}).get(name)}
            for est in ests:
                for cfg in configs:
                    opts = dict(CONFIGS[cfg])
                    if opts["mode"] == "cpu":
                        opts["threads"] = threads
                    t = time.perf_counter()
                    r = gsword.estimate(data, query, est, samples=args.samples, seed=args.seed,
                                        name=name, **opts)
                    cell = {"estimate": r.estimate, "stderr": r.stderr,
                            "sampling_ms": 1000 * r.sampling_seconds,
                            "samples_per_second": r.samples_per_second,
                            "valid_ratio": r.valid_ratio, "seconds": r.seconds,
                            "wall": time.perf_counter() - t, "trawl": r.trawl_stats}
                    if row["exact"] is not None:
                        cell["q_error"] = q_error(r.estimate, row["exact"])
                    row[f"{est}/{cfg}"] = cell
                    print(f"{ds} {name} {est:5s} {cfg:9s} est {r.estimate:11.4g} "
                          f"exact {row['exact']} sampling {1000 * r.sampling_seconds:8.1f} ms "
                          f"({r.samples_per_second / 1e6:6.2f} M/s) valid {r.valid_ratio:.3g}"
                          + (f" q-err {cell['q_error']:.3g}" if "q_error" in cell else "")
                          + (f" trawl {r.trawl_stats['finished']}/{r.trawl_stats['records']}"
                             if r.trawl else ""), flush=True)
            doc["rows"].append(row)
            if args.out:
                with open(args.out, "w") as f:
                    json.dump(doc, f, indent=1)
    summary(doc, ests, configs)


def summary(doc, ests, configs):
    print("\nper dataset: mean sampling ms, median q-error (queries with an exact count)")
    for ds in sorted({r["dataset"] for r in doc["rows"]}):
        rows = [r for r in doc["rows"] if r["dataset"] == ds]
        for est in ests:
            parts = []
            for cfg in configs:
                cells = [r[f"{est}/{cfg}"] for r in rows if f"{est}/{cfg}" in r]
                if not cells:
                    continue
                ms = statistics.mean(c["sampling_ms"] for c in cells)
                qe = [c["q_error"] for c in cells if "q_error" in c]
                parts.append(f"{cfg} {ms:.1f} ms" + (f" q {statistics.median(qe):.3g}"
                                                     if qe else ""))
            print(f"  {ds:6s} {est:5s} " + " | ".join(parts))


if __name__ == "__main__":
    main()
