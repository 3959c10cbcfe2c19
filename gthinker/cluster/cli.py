"""``--ray ADDRESS`` on `gthinker mce`, `count`, `sm` and `gsword`: the command runs on a
Ray cluster (``local:N``: N workers on this machine). :func:`add_options` adds the
flags, :func:`run` runs a command that has ``--ray``; ``gthinker/cli.py`` calls each
in one place."""

from __future__ import annotations

import json
import os
import sys
import time

COMMANDS = ("mce", "count", "sm", "gsword")

#: Scheduler options passed on where the command line gave them.
#: Options passed on to every worker's local run (``gpus``: the GPUs each worker uses).
_PASSED = ("early_split", "cpu_task_batch", "spill_limit", "gpu_chunk", "gpu_task_batch", "gpus")


def add_options(subparsers) -> None:
    """Adds ``--ray`` and ``--ray-output`` to the app commands of ``subparsers``."""
    for name in COMMANDS:
        p = subparsers.choices[name]
        g = p.add_argument_group("Ray cluster (pip install \"gthinker[ray]\"; docs/cluster.md)")
        g.add_argument("--ray", metavar="ADDRESS", default=None,
                       help="run on a Ray cluster: local:N (N workers here), auto, HOST:PORT "
                            "or ray://HOST:PORT; --threads is then per worker")
        if name in ("mce", "sm"):
            g.add_argument("--ray-output", choices=["gather", "node"], default="gather",
                           help="with --output: gather every worker's lines into FILE, or "
                                "write FILE.nodeI on each worker's node (default: gather)")


def run(args, stopper) -> int:
    """Runs the command of ``args`` (which has ``--ray``) on the cluster; prints the
    result as the command does (``--json``: with a ``cluster`` object)."""
    from .. import Graph
    from . import RayNotInstalled, connect

    try:
        cluster = connect(args.ray)
    except RayNotInstalled as exc:
        print(f"gthinker: error: {exc}", file=sys.stderr)
        return 2
    quiet = getattr(args, "quiet", False)
    common = {"threads": getattr(args, "threads", None), "stop": stopper.token,
              "mode": getattr(args, "mode", "auto")}
    if getattr(args, "time_budget", None) is not None:
        common["time_budget"] = args.time_budget
    common.update({k: getattr(args, k) for k in _PASSED if getattr(args, k, None) is not None})
    t0 = time.perf_counter()
    graph = Graph.read(args.graph if args.command in ("mce", "count") else args.data)
    if not quiet:
        print(f"loaded {graph.report} in {time.perf_counter() - t0:.2f}s; "
              f"{cluster.num_workers} Ray workers ({args.ray})", file=sys.stderr)
    per_node = getattr(args, "ray_output", "gather") == "node"
    if args.command == "mce":
        chunk = getattr(args, "chunk", None) or getattr(args, "cpu_chunk", None)
        res = cluster.mce(graph, output=getattr(args, "output", None), chunk=chunk,
                          output_per_node=per_node, **common)
        lines = [f"maximal cliques: {res.count:,}", f"largest clique:  {res.max_size}",
                 "size histogram:  " + ", ".join(f"{k}:{v}" for k, v in res.histogram.items())]
        return _show(args, [(None, res, lines, cluster.last_stats)], stopper)
    if args.command == "count":
        res = cluster.count(graph, args.pattern, **common)
        lines = ([f"{k}-cliques: {n:,}" for k, n in res.counts.items()]
                 if res.counts is not None else [f"{res.pattern}: {res.count:,}"])
        return _show(args, [(None, res, lines, cluster.last_stats)], stopper)
    shown = []
    for q in _queries(args.query):
        name = os.path.splitext(os.path.basename(q))[0] if os.path.exists(q) else q
        if args.command == "sm":
            res = cluster.sm(graph, q, unique=getattr(args, "unique", False),
                             output=getattr(args, "output", None), output_per_node=per_node,
                             **common)
            what = "distinct subgraphs" if res.unique else "embeddings"
            shown.append((name, res, [f"{name}: {res.count:,} {what}"], cluster.last_stats))
        else:
            res = cluster.gsword(graph, q, args.estimator, samples=args.samples,
                                 trawl=args.trawl, batches=args.batches, seed=args.seed,
                                 order=args.order, name=name, **common)
            lo, hi = res.ci95
            shown.append((name, res, [f"{name}: about {res.estimate:.6g} embeddings (95% CI "
                                      f"{lo:.4g} .. {hi:.4g}, stderr {res.stderr:.3g}); "
                                      f"{res.samples:,} samples"], cluster.last_stats))
    return _show(args, shown, stopper)


def _queries(query: str) -> list[str]:
    if os.path.isdir(query):
        return [os.path.join(query, f) for f in sorted(os.listdir(query))
                if os.path.isfile(os.path.join(query, f))]
    return [query]


def _show(args, shown, stopper) -> int:
    for name, res, lines, c in shown:
        if args.json:
            out = res.to_dict()
            if name is not None:
                out = {"query": name, **out}
            out["cluster"] = c
            if stopper.reason is not None:
                out["stopped"] = stopper.reason
            print(json.dumps(out), flush=True)
            continue
        for line in lines:
            print(line)
        print(f"time:            {res.seconds:.3f}s on {c['workers']} Ray workers "
              f"({res.threads} threads in all, {res.mode}), {c['ranges']} ranges"
              + (f", {c['tasks_moved']:,} tasks moved in {c['batches']} batches"
                 if c.get("tasks_moved") else "")
              + (f", {c['retried']} run again after {c['workers_lost']} workers were lost"
                 if c["retried"] else ""), flush=True)
    if stopper.reason is not None:
        print(f"gthinker: {stopper.reason}: the result above is partial", file=sys.stderr)
        return stopper.exit_code
    return 0
