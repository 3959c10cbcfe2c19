"""What a whole gthinker process costs beyond its job.

Two uses:

    python benchmarks/process_overhead.py TREE GRAPH RUNS

Whole-process wall time minus the job's own seconds, for `gthinker count GRAPH triangle
--mode cpu --threads 2` (issue 33: from a binary file, a process should cost at most 1 s
more than its job). TREE: the gthinker checkout to run (put on PYTHONPATH); GRAPH: a graph
file (text or binary); the first run is not counted (it warms the page and compile
caches, and a binary file's kept forms).

    python benchmarks/process_overhead.py phases [--tree NAME=DIR ...] [--site DIR]
        [--data DIR] [--cases count_fb,mce_enron,sm_hprd] [--runs 5] [--json OUT]

Warm whole processes of the commands the warm-start issue names, each split into phases
(benchmarks/process_phases.py: interpreter start, imports, the parser, the graph read, the
compile cache, GPU init, the app's run, exit), for one gthinker tree or an A/B of several
(``--tree A=/tmp/A --tree B=/tmp/B``: each on PYTHONPATH in turn, with ``--site`` after
it; default: the gthinker this Python imports). Per case and tree: one run not counted
(it fills the compile cache), then ``--runs`` runs alternating between the trees; the
medians of each phase, and of the wall time, are printed side by side. Cases (``--data``:
a folder laid out as ../shared/data):

  count_fb    gthinker count snap/facebook_combined.txt.gz triangle
  mce_enron   gthinker mce snap/email-Enron.txt.gz
  sm_hprd     gthinker sm labeled/hprd.graph labeled/queries/hprd/query_dense_16_1.graph

On the GPU machine (this checkout, or A against it): benchmarks/device_warm_ab.sh.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_DATA = HERE.parent.parent / "shared" / "data"
CASES = {
    "count_fb": ["count", "{data}/snap/facebook_combined.txt.gz", "triangle", "-q"],
    "mce_enron": ["mce", "{data}/snap/email-Enron.txt.gz", "-q"],
    "sm_hprd": ["sm", "{data}/labeled/hprd.graph",
                "{data}/labeled/queries/hprd/query_dense_16_1.graph", "-q"],
}
ROWS = ["start", "imports", "arguments", "graph read", "cache load", "gpu init", "app", "other",
        "exit", "wall"]


def overhead(tree: str, graph: str, runs: int) -> None:
    env = {**os.environ, "PYTHONPATH": tree}
    rows = []
    for _ in range(runs + 1):
        t0 = time.perf_counter()
        r = subprocess.run([sys.executable, "-m", "gthinker", "count", graph, "triangle",
                            "--mode", "cpu", "--threads", "2", "--json", "-q"],
                           capture_output=True, text=True, env=env, cwd="/tmp")
        wall = time.perf_counter() - t0
        d = json.loads(r.stdout.strip().splitlines()[-1])
        rows.append((wall, d["seconds"], d["prepare_seconds"], wall - d["seconds"]))
    rows = rows[1:]  # the first run warms the page cache and the compile cache
    for wall, job, prepare, over in rows:
        print(f"wall {wall:.2f} job {job:.2f} prepare {prepare:.2f} overhead {over:.2f}")
    over = statistics.median(r[3] for r in rows)
    print(f"median overhead {over:.2f} s, median job {statistics.median(r[1] for r in rows):.2f} s")


def one_run(cmd: list[str], env: dict, scratch: Path) -> dict:
    """The phases of one process running ``cmd`` (gthinker's arguments)."""
    out = scratch / "phases.json"
    out.unlink(missing_ok=True)
    spawn = time.time()
    r = subprocess.run([sys.executable, str(HERE / "process_phases.py"), str(out), "--", *cmd],
                       capture_output=True, text=True, cwd=scratch,
                       env={**env, "GTHINKER_SPAWN_TIME": repr(spawn)})
    end = time.time()
    if r.returncode != 0 or not out.exists():
        raise RuntimeError(f"{' '.join(cmd)} failed ({r.returncode}): {r.stderr[-2000:]}")
    got = json.loads(out.read_text())
    return {"start": got["start"], **got["phases"], "exit": end - got["main_done"],
            "wall": end - spawn}


def runs(args, trees: dict, scratch: Path) -> dict:
    """Every counted run's phases, by case and tree (one run per case and tree first,
    not counted: it fills the compile cache)."""
    cases = args.cases.split(",")
    base = {**os.environ, "PYTHONUNBUFFERED": "1"}
    if args.cache_dir:
        base["GTHINKER_CACHE_DIR"] = args.cache_dir
    envs = {}
    for name, tree in trees.items():
        path = os.pathsep.join(p for p in (tree, args.site, base.get("PYTHONPATH", "")) if p)
        envs[name] = {**base, "PYTHONPATH": path} if path else base
    results = {case: {name: [] for name in trees} for case in cases}
    commands = {case: [x.format(data=args.data) for x in CASES[case]] for case in cases}
    for case in cases:
        for name in trees:  # fills the compile cache; not counted
            one_run(commands[case], envs[name], scratch)
    for _ in range(args.runs):
        for case in cases:
            for name in trees:
                results[case][name].append(one_run(commands[case], envs[name], scratch))
    return results


def phases(args) -> None:
    trees = dict(t.split("=", 1) for t in args.tree) or {"this": ""}
    cases = args.cases.split(",")
    with tempfile.TemporaryDirectory(prefix="gthinker-phases-") as scratch:
        results = runs(args, trees, Path(scratch))
    for case in cases:
        shown = " ".join(CASES[case]).replace("{data}/", "")
        print(f"\n{case}: gthinker {shown}  (medians of {args.runs} warm runs, seconds)")
        print(f"{'phase':>11} " + " ".join(f"{n:>9}" for n in trees)
              + (f" {'B-A':>9}" if len(trees) == 2 else ""))
        for row in ROWS:
            meds = [statistics.median(r[row] for r in results[case][n]) for n in trees]
            diff = f" {meds[1] - meds[0]:+9.3f}" if len(meds) == 2 else ""
            print(f"{row:>11} " + " ".join(f"{m:9.3f}" for m in meds) + diff)
        mins = [min(r["wall"] for r in results[case][n]) for n in trees]
        print(f"{'wall min':>11} " + " ".join(f"{m:9.3f}" for m in mins))
    if args.json:
        Path(args.json).write_text(json.dumps({"trees": trees, "results": results}, indent=1))


def main() -> None:
    if len(sys.argv) == 4 and sys.argv[1] != "phases":
        overhead(sys.argv[1], sys.argv[2], int(sys.argv[3]))
        return
    ap = argparse.ArgumentParser(description="Warm whole processes, phase by phase.")
    ap.add_argument("what", choices=["phases"])
    ap.add_argument("--tree", action="append", default=[], metavar="NAME=DIR",
                    help="a gthinker tree to run (on PYTHONPATH); give two for an A/B")
    ap.add_argument("--site", default="", help="a folder put on PYTHONPATH after each tree")
    ap.add_argument("--data", default=str(DEFAULT_DATA), help="folder with snap/ and labeled/")
    ap.add_argument("--cases", default=",".join(CASES), help=f"of {', '.join(CASES)}")
    ap.add_argument("--runs", type=int, default=5, help="counted runs per case and tree")
    ap.add_argument("--cache-dir", default=None, help="GTHINKER_CACHE_DIR for the runs")
    ap.add_argument("--json", default=None, help="write every run's phases here")
    phases(ap.parse_args())


if __name__ == "__main__":
    main()
