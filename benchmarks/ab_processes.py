"""Whole-process A/B timing of two installed gthinker trees, alternating runs.

    python benchmarks/ab_processes.py --a /tmp/site_old --b /tmp/site_new --runs 5 \\
        -- gthinker mce email-Enron.txt.gz --mode gpu -q

Each run is ``python -m gthinker.cli.main ARGS`` with ``PYTHONPATH`` set to one tree (first
entry) and a compile cache of its own per tree (filled by one untimed run first), A and
B alternating so that drift on a shared machine hits both alike. Prints min / median /
max per tree and the median ratio B / A.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


def _once(tree, cache, args):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [tree, *filter(None, [os.environ.get("PYTHONPATH")])]), GTHINKER_CACHE_DIR=cache)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "gthinker", *args], env=env, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--a", required=True, help="tree A (a folder on PYTHONPATH)")
    ap.add_argument("--b", required=True, help="tree B")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("args", nargs=argparse.REMAINDER, help="-- gthinker ARGS")
    a = ap.parse_args(argv)
    args = [x for x in a.args if x != "--"]
    if args and args[0] == "gthinker":
        args = args[1:]
    caches = {t: tempfile.mkdtemp(prefix="ab-cache-") for t in (a.a, a.b)}
    for tree in (a.a, a.b):
        _once(tree, caches[tree], args)  # compiles
    times: dict[str, list[float]] = {a.a: [], a.b: []}
    for _ in range(a.runs):
        for tree in (a.a, a.b):
            times[tree].append(_once(tree, caches[tree], args))
    out = {"command": "gthinker " + " ".join(args), "runs": a.runs,
           **{name: {"tree": tree, "min": min(ts), "median": statistics.median(ts),
                     "max": max(ts)} for name, tree, ts in
              (("A", a.a, times[a.a]), ("B", a.b, times[a.b]))}}
    out["median_ratio_b_over_a"] = out["B"]["median"] / out["A"]["median"]
    print(json.dumps(out))


if __name__ == "__main__":
    main()
