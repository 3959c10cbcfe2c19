"""Warm start: whole-process times of the commands a user types, cold (first
run, empty compile cache) and warm (cache filled), beside a peer where the
issue names one.

    python benchmarks/warm_start.py --runs 5 --out warm_start_2core
    python benchmarks/warm_start.py --runs 5 --gpu --cases sm_gpu,mce_gpu,gsword_gpu \
        --out warm_start_h100

Every case is a command line run as a child process and timed from outside
(time.perf_counter around subprocess.run: start-up, imports, graph loading,
compiling or cache loading and the job itself). The first run of each case is
not part of the warm figures: with the default fresh cache folder it is the
cold compile, reported apart as ``cold_seconds``. Then ``--runs`` warm runs;
min, median and max are kept (quote the median). A case with a peer runs the
two in turn (ours, peer, ours, peer, ...) so that drift of the machine's speed
hits both alike; the ratio is taken pair by pair.

The children get GTHINKER_CACHE_DIR (``--cache-dir``, default a fresh temp
folder) and NUMBA_CACHE_DIR (DIR/numba, so that Numba's own ``cache=True``
files, the graph loaders' and the example's, start empty too; ``--keep-numba-cache``
leaves NUMBA_CACHE_DIR as it is).

Results: RESULTS_DIR/NAME.json and NAME.log (default benchmarks/results/).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATA = ROOT.parent / "shared" / "data"

# The user's own Task: the tutorial app apps/kcliques, its folder on sys.path (as a
# user who has not installed it runs it), 4-cliques of a seeded G(n, m) graph of 2,000
# vertices.
USER_TASK = """\
import sys
sys.path.insert(0, {path!r})
import networkx as nx
import gthinker
from gthinker_kcliques.app import count_kcliques
g = gthinker.Graph.from_networkx(nx.gnm_random_graph({n}, {m}, seed={seed}))
print("{k}-cliques:", count_kcliques(g, {k}).counters["cliques"])
"""


def cases(data, py=sys.executable):
    """name -> dict(cmd, target, peer, gpu). target: seconds, or "peer"."""
    hprd = str(data / "labeled" / "hprd.graph")
    q16 = str(data / "labeled" / "queries" / "hprd" / "query_dense_16_1.graph")
    enron = str(data / "snap" / "email-Enron.txt.gz")
    fb = str(data / "snap" / "facebook_combined.txt.gz")
    user = USER_TASK.format(path=str(ROOT / "apps" / "kcliques"),
                            n=2000, m=40000, seed=1, k=4)
    return {
        "import": dict(cmd=[py, "-c", "import gthinker"], target=0.5),
        "help": dict(cmd=["gthinker", "--help"], target=0.5),
        "sm": dict(cmd=["gthinker", "sm", hprd, q16, "-q"], target=1.0),
        "gsword": dict(cmd=["gthinker", "gsword", hprd, q16, "-q"], target=2.0),
        "user_task": dict(cmd=[py, "-c", user], target=1.5),
        "mce": dict(cmd=["gthinker", "mce", enron, "-q"], target="peer",
                    peer=[py, str(ROOT / "benchmarks" / "peers" / "igraph_mce.py"), enron],
                    check="mce"),
        "sm_gpu": dict(cmd=["gthinker", "sm", fb, "triangle", "--unique", "--mode", "gpu", "-q"],
                       target=1.5, gpu=True),
        "mce_gpu": dict(cmd=["gthinker", "mce", enron, "--mode", "gpu", "-q"], target=2.0,
                        gpu=True),
        "gsword_gpu": dict(cmd=["gthinker", "gsword", hprd, q16, "--mode", "gpu", "-q"],
                           target=2.0, gpu=True),
    }


def run_once(cmd, env, timeout):
    """Wall seconds of one whole process (None on failure) and its output."""
    t = time.perf_counter()
    try:
        p = subprocess.run(cmd, env=env, cwd=ROOT, stdin=subprocess.DEVNULL,
                           capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, f"timeout ({timeout:g} s)"
    wall = time.perf_counter() - t
    if p.returncode != 0:
        tail = (p.stderr.strip().splitlines() or ["?"])[-1]
        return None, f"exit {p.returncode}: {tail}"
    return wall, p.stdout


def spread(xs):
    return {"min": min(xs), "median": statistics.median(xs), "max": max(xs), "runs": xs}


def bench(case, env, runs, timeout, log):
    """Cold run, then `runs` warm runs (paired with the peer where there is one)."""
    out = {"command": shlex.join(case["cmd"]), "target": case["target"]}
    if case.get("peer"):
        out["peer_command"] = shlex.join(case["peer"])
    cold, text = run_once(case["cmd"], env, timeout)
    out["cold_seconds"] = cold
    if cold is None:
        out["error"] = text
        log(f"    cold run failed: {text}")
        return out
    out["stdout"] = text.strip()[-500:]
    if case.get("peer"):
        pc, ptext = run_once(case["peer"], env, timeout)  # peer's own warm-up (page cache)
        out["peer_cold_seconds"] = pc
        if pc is None:
            out["peer_error"] = ptext
        else:
            out["peer_stdout"] = ptext.strip()[-500:]
    ours, peer, ratios = [], [], []
    for _ in range(runs):
        s, text = run_once(case["cmd"], env, timeout)
        if s is None:
            out["error"] = text
            log(f"    warm run failed: {text}")
            break
        ours.append(s)
        if case.get("peer") and out.get("peer_cold_seconds") is not None:
            p, ptext = run_once(case["peer"], env, timeout)
            if p is None:
                out["peer_error"] = ptext
                continue
            peer.append(p)
            ratios.append(s / p)
    if ours:
        out["warm"] = spread(ours)
    if peer:
        out["peer"] = spread(peer)
        out["ratio_to_peer"] = spread(ratios)
    return out


def check_mce(case, env, timeout):
    """gthinker's count (from --json) against the peer's printed count."""
    cmd = [c for c in case["cmd"] if c not in ("-q", "--quiet")] + ["--json"]
    s, text = run_once(cmd, env, timeout)
    if s is None:
        return {"agree": False, "note": "gthinker --json failed: " + text}
    ours = json.loads(text[text.index("{"):])["count"]
    _, ptext = run_once(case["peer"], env, timeout)
    m = re.search(r"(\d+)\s*$", ptext or "")
    theirs = int(m.group(1)) if m else None
    return {"gthinker_count": ours, "peer_count": theirs, "agree": ours == theirs}


def verdict(row):
    warm = row.get("warm")
    if not warm:
        return None
    if row["target"] == "peer":
        return row.get("peer") is not None and warm["median"] <= row["peer"]["median"]
    return warm["median"] <= row["target"]


def machine(env):
    def version(mod):
        try:
            return __import__(mod).__version__
        except Exception:  # noqa: BLE001 - absent or broken: say so
            return None

    try:
        gt = subprocess.run(["gthinker", "--version"], capture_output=True, text=True,
                            env=env).stdout.strip()
    except OSError:
        gt = None
    # BENCH_COMMIT: the commit measured, where the copy's own git history is not it
    # (the device machine's copy of the working tree)
    commit = os.environ.get("BENCH_COMMIT")
    try:
        commit = commit or subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                                          capture_output=True, text=True).stdout.strip() or None
    except OSError:
        commit = None
    return {"host": platform.node(), "platform": platform.platform(),
            "processor": platform.processor() or platform.machine(),
            "nproc": os.cpu_count(),
            "affinity": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
            else None,
            "python": platform.python_version(), "numba": version("numba"),
            "numpy": version("numpy"), "igraph": version("igraph"),
            "networkx": version("networkx"), "gthinker": gt, "commit": commit,
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}


def fmt(x, w=7):
    return f"{x:{w}.3f}" if isinstance(x, (int, float)) else f"{'-':>{w}}"


def table(results):
    head = (f"{'case':<11} {'cold':>7} {'min':>7} {'median':>7} {'max':>7} "
            f"{'peer med':>8} {'ratio':>6} {'target':>7}  pass")
    lines = [head, "-" * len(head)]
    for name, r in results["cases"].items():
        w = r.get("warm", {})
        peer = r.get("peer", {}).get("median")
        ratio = r.get("ratio_to_peer", {}).get("median")
        tgt = "<= peer" if r["target"] == "peer" else f"<= {r['target']:g}"
        ok = {True: "PASS", False: "FAIL", None: "n/a"}[r.get("pass")]
        lines.append(f"{name:<11} {fmt(r.get('cold_seconds'))} {fmt(w.get('min'))} "
                     f"{fmt(w.get('median'))} {fmt(w.get('max'))} {fmt(peer, 8)} "
                     f"{fmt(ratio, 6) if ratio is not None else '     -'} {tgt:>7}  {ok}"
                     + (f"  ({r['error']})" if r.get("error") else ""))
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=str(DEFAULT_DATA),
                    help="folder with labeled/ and snap/ (default: ../shared/data from the "
                    "repository root)")
    ap.add_argument("--runs", type=int, default=3, help="warm runs per case (default 3)")
    ap.add_argument("--cases", default=None,
                    help="comma list (default: import,help,sm,gsword,user_task,mce; with "
                    "--gpu also sm_gpu,mce_gpu,gsword_gpu)")
    ap.add_argument("--gpu", action="store_true", help="add the GPU cases")
    ap.add_argument("--cache-dir", default=None,
                    help="GTHINKER_CACHE_DIR for the children (default: a fresh temp folder, "
                    "so the first run is the cold compile)")
    ap.add_argument("--keep-numba-cache", action="store_true",
                    help="do not point NUMBA_CACHE_DIR at CACHE_DIR/numba")
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds per run (default 300)")
    ap.add_argument("--out", default="warm_start", help="results basename (NAME.json, NAME.log)")
    ap.add_argument("--results-dir", default=str(ROOT / "benchmarks" / "results"))
    ap.add_argument("--tag", default="", help="free text stored with the results")
    args = ap.parse_args()

    data = Path(args.data).resolve()
    all_cases = cases(data)
    cpu_names = [n for n, c in all_cases.items() if not c.get("gpu")]
    if args.cases:
        names = [x for x in args.cases.split(",") if x]
    else:
        names = cpu_names + ([n for n, c in all_cases.items() if c.get("gpu")] if args.gpu
                             else [])
    unknown = [n for n in names if n not in all_cases]
    if unknown:
        ap.error(f"unknown case(s) {unknown}; known: {', '.join(all_cases)}")
    if not args.gpu and any(all_cases[n].get("gpu") for n in names):
        ap.error("GPU cases need --gpu")

    fresh = args.cache_dir is None
    cache = Path(args.cache_dir or tempfile.mkdtemp(prefix="gthinker-warm-start-")).resolve()
    cache.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, GTHINKER_CACHE_DIR=str(cache))
    if not args.keep_numba_cache:
        env["NUMBA_CACHE_DIR"] = str(cache / "numba")

    out_dir = Path(args.results_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    json_path, log_path = out_dir / f"{args.out}.json", out_dir / f"{args.out}.log"
    log_file = log_path.open("w")

    def log(msg):
        print(msg, flush=True)
        log_file.write(msg + "\n")
        log_file.flush()

    results = {"machine": machine(env), "command": shlex.join([sys.executable, *sys.argv]),
               "tag": args.tag, "runs": args.runs, "data": str(data),
               "cache_dir": str(cache), "cache_fresh": fresh,
               "numba_cache_dir": env.get("NUMBA_CACHE_DIR"),
               "timer": "time.perf_counter around subprocess.run (whole process)",
               "cases": {}}

    def save():
        json_path.write_text(json.dumps(results, indent=1))

    log(json.dumps(results["machine"]))
    log(f"cache: {cache} ({'fresh' if fresh else 'given'}); {args.runs} warm runs per case")
    for name in names:
        case = all_cases[name]
        log(f"{name}: {shlex.join(case['cmd'])}")
        row = bench(case, env, args.runs, args.timeout, log)
        if case.get("check") == "mce" and row.get("warm"):
            row["check"] = check_mce(case, env, args.timeout)
            if not row["check"]["agree"]:
                log(f"    COUNTS DIFFER: {row['check']}")
        row["pass"] = verdict(row)
        if row.get("check") and not row["check"]["agree"]:
            row["pass"] = False
        results["cases"][name] = row
        w = row.get("warm", {})
        msg = f"    cold {fmt(row.get('cold_seconds')).strip()} s"
        if w:
            msg += (f", warm min {w['min']:.3f} median {w['median']:.3f} max {w['max']:.3f} s")
        if row.get("peer"):
            msg += (f"; peer median {row['peer']['median']:.3f} s, ratio "
                    f"{row['ratio_to_peer']['median']:.2f}")
        if row.get("check"):
            c = row["check"]
            msg += f"; counts {c.get('gthinker_count')} / {c.get('peer_count')}"
        log(msg)
        save()
    log("")
    log(table(results))
    save()
    log(f"\nwrote {json_path} and {log_path}")
    log_file.close()


if __name__ == "__main__":
    main()
