"""Warm job times of one installed gthinker tree, for A/B comparisons of two trees.

    PYTHONPATH=/tmp/A python benchmarks/ab_jobs.py --data .data --tag A --repeat 5 --out a.json

Runs a fixed set of jobs (MCE, counting, subgraph matching, gSWORD; gpu, hybrid and cpu
modes) in one process through the public API that every tree has (``gthinker.apps.mce.run``,
``count.count``, ``sm.count``, ``gsword.estimate``): each job once to compile and warm up,
then ``--repeat`` times, keeping each run's ``seconds`` (the job's own time, compiling
excluded) and its count. Run it for tree A and tree B in turn (twice each, alternating) on
the same machine, then ``--compare a.json b.json`` prints the medians side by side with the
ratio B / A and checks that the counts agree.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path


def _jobs(data: Path, gpu: bool, threads: int):
    """(name, function returning (seconds, count)) of each job."""
    import gthinker
    from gthinker.apps import count, gsword, mce, sm

    try:
        from gthinker.graphs.generate import rmat as generate_rmat
    except ImportError:  # a tree from before the graphs package (the A side of an A/B)
        from gthinker.generate import rmat as generate_rmat

    fb = gthinker.Graph.read(data / "snap" / "facebook_combined.txt.gz")
    enron = gthinker.Graph.read(data / "snap" / "email-Enron.txt.gz")
    rmat = generate_rmat(20, 16, 0.5, 0.2, 0.2, seed=1)
    hprd = gthinker.Graph.read(data / "labeled" / "hprd.graph")
    q = str(data / "labeled" / "queries" / "hprd" / "query_dense_16_1.graph")
    jobs = []

    def add(name, fn, value):
        jobs.append((name, lambda: (lambda r: (r.seconds, value(r)))(fn())))

    modes = ("cpu", "gpu", "hybrid") if gpu else ("cpu",)
    for mode in modes:
        t = threads if mode != "gpu" else None
        add(f"mce enron {mode}", lambda m=mode, t=t: mce.run(enron, mode=m, threads=t),
            lambda r: r.count)
        if mode != "cpu":
            add(f"mce facebook {mode}", lambda m=mode, t=t: mce.run(fb, mode=m, threads=t),
                lambda r: r.count)
            add(f"mce rmat20 {mode}", lambda m=mode, t=t: mce.run(rmat, mode=m, threads=t),
                lambda r: r.count)
        for gname, g in (("facebook", fb), ("enron", enron), ("rmat20", rmat)):
            for k in (3, 4, 5):
                if mode == "cpu" and k == 5 and gname == "rmat20":
                    continue
                add(f"count {gname} {k}-clique {mode}",
                    lambda g=g, k=k, m=mode, t=t: count.count(g, f"{k}-clique", mode=m,
                                                              threads=t),
                    lambda r: r.count)
        if mode != "hybrid":
            add(f"sm enron diamond {mode}",
                lambda m=mode, t=t: sm.count(enron, "diamond", mode=m, threads=t),
                lambda r: r.count)
            add(f"sm hprd q16 {mode}", lambda m=mode, t=t: sm.count(hprd, q, mode=m, threads=t),
                lambda r: r.count)
            for est in ("wj", "alley"):
                add(f"gsword hprd q16 {est} {mode}",
                    lambda m=mode, t=t, e=est: gsword.estimate(hprd, q, e, samples=1_000_000,
                                                               mode=m, threads=t, seed=1),
                    lambda r: round(r.estimate, 6))
    add("count facebook cliques cpu",
        lambda: count.count(fb, "cliques", mode="cpu", threads=threads),
        lambda r: r.count)
    return jobs


def run(args) -> dict:
    import gthinker

    out = {"tag": args.tag, "gthinker": str(Path(gthinker.__file__).parent), "jobs": {}}
    for name, job in _jobs(Path(args.data), not args.cpu_only, args.threads):
        t0 = time.perf_counter()
        _, value = job()  # compiles, uploads the graph, warms up
        first = time.perf_counter() - t0
        times = []
        for _ in range(args.repeat):
            seconds, again = job()
            times.append(seconds)
            if again != value and not name.startswith("gsword"):
                raise AssertionError(f"{name}: {again} != {value}")
        out["jobs"][name] = {"min": min(times), "median": statistics.median(times),
                             "first": first, "value": value}
        print(f"{args.tag} {name:32s} min {min(times) * 1e3:9.2f} ms  median "
              f"{statistics.median(times) * 1e3:9.2f} ms  ({value})", flush=True)
    return out


def compare(paths) -> None:
    runs = [json.loads(Path(p).read_text()) for p in paths]
    by_tag: dict = {}
    for r in runs:  # several runs of a tag: the smaller median of each job
        for name, j in r["jobs"].items():
            seen = by_tag.setdefault(r["tag"], {}).get(name)
            if seen is None or j["median"] < seen["median"]:
                by_tag[r["tag"]][name] = j
    a, b = sorted(by_tag)
    print(f"{'job':34s} {a:>12s} {b:>12s}  {b}/{a}  counts")
    for name in by_tag[a]:
        x, y = by_tag[a][name], by_tag[b].get(name)
        if y is None:
            continue
        same = "same" if x["value"] == y["value"] else f"DIFFER {x['value']} {y['value']}"
        print(f"{name:34s} {x['median'] * 1e3:10.2f}ms {y['median'] * 1e3:10.2f}ms "
              f"{y['median'] / x['median']:6.2f}  {same}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=".data", help="folder laid out as ../shared/data")
    ap.add_argument("--tag", default="A")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--threads", type=int, default=16)
    ap.add_argument("--cpu-only", action="store_true")
    ap.add_argument("--out")
    ap.add_argument("--compare", nargs="+", metavar="JSON")
    args = ap.parse_args(argv)
    if args.compare:
        compare(args.compare)
        return 0
    result = run(args)
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
