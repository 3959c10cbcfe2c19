"""gSWORD estimates: gthinker beside the seed paper's public code (Gibyeng/gsword), in one call.

    bash benchmarks/peers/gsword.sh build      # once (the peer's binary in $GSWORD_DIR)
    python benchmarks/gsword_peer.py --data .data --datasets hprd,yeast,human \\
        --queries query_dense_16_1,query_dense_16_2 --threads 16 --out gsword_peer

Per data set and query (``DATA/labeled/queries/SET/QUERY.graph``), 10^6 samples (--samples):

* gSWORD, methods 1 (WanderJoin, once per ``-c`` of --gsword-threads, the fastest kept) and
  2 (Alley, the first ``-c``): its
  estimate, its ``Sampling_cost`` (its kernels, a synchronize and the copy of the sum) and the
  whole process (benchmarks/peers/gsword.sh run);
* gthinker, each configuration of --configs (``MODE:ESTIMATOR[:notrawl]``), in this process
  (compiled beforehand on a small query, not timed): a first call (the candidate graph is built)
  and a second one (it is kept with the data graph): the estimate, ``sampling_seconds`` (GPU:
  the sampling kernels, timed by CUDA events; CPU: the workers) and the whole call's ``seconds``
  (compile excluded); and, for the first query of each data set, the whole process of
  ``gthinker gsword ... --json`` (its stderr is checked for warnings).

The exact count (embeddings, ``gthinker sm`` on the CPU with a --exact-budget time limit) is
cached in EXACT (--exact, JSON: {set: {query: count or null}}) and the q-error
max(est/exact, exact/est) is given where it is known (an estimate of 0 counts as 1, as in the
seed paper). Writes OUT.json and prints one table row per query and method.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import gthinker
from gthinker.apps import gsword, sm

ROOT = Path(__file__).resolve().parents[1]
PEER = ROOT / "benchmarks" / "peers" / "gsword.sh"
METHODS = {1: "wj", 2: "alley"}


def q_error(est, exact):
    if est is None or exact is None:
        return None
    e, x = max(float(est), 1.0), max(float(exact), 1.0)
    return max(e / x, x / e)


def exact_counts(path, data, ds, queries, threads, budget):
    """{query: count or None}, from ``path`` where it has them, else counted (and saved)."""
    cache = json.loads(Path(path).read_text()) if Path(path).exists() else {}
    known = cache.setdefault(ds, {})
    for name, query in queries.items():
        if name not in known:
            stop = gthinker.StopToken()
            timer = threading.Timer(budget, stop.set)
            timer.start()
            r = sm.count(data, query, mode="cpu", threads=threads, stop=stop)
            timer.cancel()
            known[name] = None if r.stopped else int(r.count)
            print(f"exact {ds} {name}: {known[name]} ({r.seconds:.2f}s)", flush=True)
            Path(path).write_text(json.dumps(cache, indent=1, sort_keys=True))
    return known


def run_peer(data, query, method, samples, threads):
    """gSWORD once: {estimate, sampling_seconds, build_seconds, process_seconds} or {error}."""
    proc = subprocess.run(["bash", str(PEER), "run", str(data), str(query), str(method),
                           str(samples), str(threads)], capture_output=True, text=True,
                          timeout=120)
    out = proc.stdout

    def field(pattern):
        m = re.search(pattern, out)
        return float(m.group(1)) if m else None

    cell = {"estimate": field(r"Est path count: (\S+)"),
            "sampling_seconds": field(r"Sampling_cost: (\S+)"),
            "build_seconds": field(r"candiate set cost: (\S+)"),
            "process_seconds": field(r"gsword_wall_seconds = (\S+)"), "threads": threads}
    if proc.returncode != 0 or cell["estimate"] is None:
        cell["error"] = f"exit {proc.returncode}: {(proc.stderr or out)[-300:]}"
    return cell


def run_gthinker(data, query, config, samples, threads, seed):
    """Two calls (the first builds the candidate graph, the second finds it kept)."""
    mode, est, *rest = config.split(":")
    kw = dict(mode=mode, samples=samples, seed=seed, trawl="notrawl" not in rest)
    if mode == "cpu":
        kw["threads"] = threads
    cells = []
    for _ in range(2):
        r = gsword.estimate(data, query, est, **kw)
        cells.append({"estimate": r.estimate, "stderr": r.stderr,
                      "sampling_seconds": r.sampling_seconds, "seconds": r.seconds,
                      "build_seconds": r.build_seconds, "valid_ratio": r.valid_ratio,
                      "trawl": dict(r.trawl_stats)})
    return {"first": cells[0], **cells[1]}


def run_process(data, query, config, samples, threads, seed):
    """``gthinker gsword`` as a new process: wall seconds, its JSON and any warning on stderr."""
    mode, est, *rest = config.split(":")
    cmd = ["gthinker", "gsword", str(data), str(query), "--mode", mode, "--estimator", est,
           "--samples", str(samples), "--seed", str(seed), "--threads", str(threads), "--json"]
    if "notrawl" in rest:
        cmd.append("--no-trawl")
    t = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    wall = time.perf_counter() - t
    doc = json.loads(proc.stdout.strip().splitlines()[-1]) if proc.returncode == 0 else {}
    warned = [line for line in proc.stderr.splitlines() if "warn" in line.lower()]
    return {"process_seconds": wall, "seconds": doc.get("seconds"), "exit": proc.returncode,
            "stderr_warnings": warned[:3]}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=".data", help="folder with labeled/ (graphs, queries)")
    ap.add_argument("--datasets", default="hprd,yeast,human")
    ap.add_argument("--queries", default=",".join(f"query_dense_16_{i}" for i in range(1, 6)))
    ap.add_argument("--samples", type=int, default=1_000_000)
    ap.add_argument("--configs", default="gpu:wj,gpu:alley,cpu:wj,cpu:alley")
    ap.add_argument("--methods", default="1,2", help="gSWORD methods ('' for none)")
    ap.add_argument("--gsword-threads", default="1000000,100000",
                    help="gSWORD's -c values (GPU threads): method 1 runs with each (its fastest "
                         "is reported), method 2 with the first")
    ap.add_argument("--threads", type=int, default=None, help="CPU threads (default: all)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--exact", default=str(ROOT / "benchmarks" / "results" / "gsword_exact.json"))
    ap.add_argument("--exact-budget", type=float, default=30.0)
    ap.add_argument("--processes", type=int, default=1,
                    help="queries per data set also run as a whole `gthinker gsword` process")
    ap.add_argument("--out", default="gsword_peer")
    args = ap.parse_args(argv)
    threads = args.threads or gthinker.default_threads()
    configs = [c for c in args.configs.split(",") if c]
    methods = [int(m) for m in args.methods.split(",") if m]
    peer_threads = [int(c) for c in args.gsword_threads.split(",") if c]
    doc = {"machine": {"node": platform.node(), "cpus": os.cpu_count(), "threads": threads,
                       "gpu": gthinker.gpu.device_status()[1]},
           "command": " ".join([Path(sys.argv[0]).name, *sys.argv[1:]]),
           "samples": args.samples, "rows": []}
    labeled = Path(args.data) / "labeled"
    sets = [d for d in args.datasets.split(",") if d]
    warm = gthinker.Graph.read(labeled / f"{sets[0]}.graph")
    warm_query = sorted((labeled / "queries" / sets[0]).glob("*.graph"))[-1]
    for config in configs:  # compile every sampler before any clock runs
        mode, est, *rest = config.split(":")
        gsword.estimate(warm, gthinker.Graph.read(warm_query), est, samples=20_000, mode=mode,
                        trawl="notrawl" not in rest, threads=threads)
    for ds in sets:
        data_path = labeled / f"{ds}.graph"
        data = gthinker.Graph.read(data_path)
        paths = {q: labeled / "queries" / ds / f"{q}.graph" for q in args.queries.split(",") if q}
        paths = {q: p for q, p in paths.items() if p.exists()}
        queries = {q: gthinker.Graph.read(p) for q, p in paths.items()}
        exact = exact_counts(args.exact, data, ds, queries, threads, args.exact_budget)
        for i, (name, query) in enumerate(queries.items()):
            row = {"dataset": ds, "query": name, "exact": exact.get(name)}
            for m in methods:  # Alley (2) takes about a second a run: its first -c only
                runs = [run_peer(data_path.resolve(), paths[name].resolve(), m, args.samples, c)
                        for c in (peer_threads if m == 1 else peer_threads[:1])]
                ok = [r for r in runs if "error" not in r] or runs
                best = min(ok, key=lambda r: r.get("sampling_seconds") or float("inf"))
                row[f"gsword-m{m}"] = {**best, "runs": runs}
            for config in configs:
                cell = run_gthinker(data, query, config, args.samples, threads, args.seed)
                if i < args.processes:
                    cell["process"] = run_process(data_path, paths[name], config,
                                                  args.samples, threads, args.seed)
                row[f"gthinker-{config}"] = cell
            for cell in row.values():
                if isinstance(cell, dict) and "estimate" in cell:
                    cell["q_error"] = q_error(cell["estimate"], row["exact"])
            doc["rows"].append(row)
            print_row(row, flush=True)
            Path(f"{args.out}.json").write_text(json.dumps(doc, indent=1))
    print_table(doc)


def _ms(x):
    return "-" if x is None else f"{1000 * x:.2f}"


def print_row(row, flush=False):
    for key, c in row.items():
        if not isinstance(c, dict) or "estimate" not in c:
            continue
        whole = c.get("seconds") if "seconds" in c else c.get("process_seconds")
        print(f"{row['dataset']} {row['query']} {key:22s} est {c['estimate']:.6g} exact "
              f"{row['exact']} q {c.get('q_error') or float('nan'):.3g} sampling "
              f"{_ms(c.get('sampling_seconds'))} ms whole {_ms(whole)} ms"
              + (f" process {c['process']['process_seconds']:.2f}s" if "process" in c else "")
              + (f" ERROR {c['error']}" if "error" in c else ""), flush=flush)


def print_table(doc):
    print("\n| set | query | exact | method | estimate | sampling ms | job ms (first call) "
          "| process s |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for row in doc["rows"]:
        for key, c in row.items():
            if not isinstance(c, dict) or "estimate" not in c:
                continue
            job = (f"{_ms(c['seconds'])} ({_ms(c['first']['seconds'])})" if "first" in c
                   else "-")
            proc = c.get("process", {}).get("process_seconds", c.get("process_seconds"))
            print(f"| {row['dataset']} | {row['query']} | {row['exact']} | {key} | "
                  f"{c['estimate']:.6g} | {_ms(c.get('sampling_seconds'))} | {job} | "
                  f"{'-' if proc is None else f'{proc:.2f}'} |")


if __name__ == "__main__":
    main()
