"""Scaling out through Ray (issue 20): W Ray workers x T threads against 1 worker x T threads,
on facebook_combined MCE and an R-MAT 4-clique count, all on this machine (``local:N``,
the code path of a real cluster).

    python benchmarks/scale.py --data .data --workers 4 --threads 4 --out scale.json
    python benchmarks/scale.py --quick            # small inputs, a minute on 2 cores

Each configuration gets a fresh set of workers and a warm-up job on a small graph (the
workers import gthinker and load the compiled apps from the compile cache), then the timed
jobs: ``seconds`` is the result's: the driver's wall time from handing out the first
range to merging the last part, as one process's ``seconds`` leave out preparing the
graph; ``wall_seconds`` is the whole call, with the driver's work estimates
(``weights_seconds``), the graph's put into the object store (``put_seconds``) and the
workers' preparing of the graph (``prepare_seconds``: the degeneracy order, counting's
oriented graph). The one-process run (``gthinker.apps.*`` with T threads, no Ray) is the
reference: every configuration must give its count.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def rmat(workdir: Path, scale: int, edge_factor: int) -> Path:
    """``gthinker generate rmat --scale S --edge-factor E --seed 1`` (once)."""
    path = workdir / f"rmat_s{scale}_ef{edge_factor}_seed1.txt"
    if not path.exists():
        workdir.mkdir(parents=True, exist_ok=True)
        subprocess.run(["gthinker", "generate", "rmat", "--scale", str(scale), "--edge-factor",
                        str(edge_factor), "--seed", "1", "-o", str(path)], check=True)
    return path


def jobs(args):
    """(name, graph path, call on a Cluster, call in one process, count of a result)."""
    from gthinker.apps import count, mce

    t, rpw = args.threads, args.ranges_per_worker
    fb = Path(args.facebook) if args.facebook else Path(args.data) / "facebook_combined.txt.gz"
    graph = rmat(Path(args.workdir), args.rmat_scale, args.edge_factor)
    return [
        ("facebook_combined MCE" if not args.quick else f"{fb.name} MCE", fb,
         lambda c, g: c.mce(g, mode="cpu", threads=t, ranges_per_worker=rpw),
         lambda g: mce.run(g, mode="cpu", threads=t), lambda r: r.count),
        (f"R-MAT {args.rmat_scale} ef{args.edge_factor} 4-cliques", graph,
         lambda c, g: c.count(g, "4-clique", mode="cpu", threads=t, ranges_per_worker=rpw),
         lambda g: count.count(g, "4-clique", mode="cpu", threads=t), lambda r: r.count),
    ]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", default=".data", help="folder with facebook_combined.txt.gz")
    p.add_argument("--facebook", default=None, help="the facebook graph file itself")
    p.add_argument("--workdir", default=".bench", help="where the R-MAT graph is generated")
    p.add_argument("--rmat-scale", type=int, default=20)
    p.add_argument("--edge-factor", type=int, default=16)
    p.add_argument("--workers", type=int, default=4, help="Ray workers of the scaled run")
    p.add_argument("--threads", type=int, default=4, help="threads of every worker")
    p.add_argument("--repeat", type=int, default=1, help="timed runs per configuration")
    p.add_argument("--ranges-per-worker", type=int, default=16,
                   help="the smallest range holds 1 / (workers x this) of the work")
    p.add_argument("--move-tasks", choices=["on", "off", "eager"], default="on",
                   help="move spilled tasks from busy workers to idle ones (Cluster's "
                        "move_tasks; default on)")
    p.add_argument("--no-reference", action="store_true",
                   help="skip the one-process run (then the 1-worker count is the reference)")
    p.add_argument("--quick", action="store_true",
                   help="tests/data/facebook-1000 and R-MAT 12, 2 workers x 1 thread")
    p.add_argument("--out", default=None, help="write the results as JSON here")
    args = p.parse_args(argv)
    if args.quick:
        args.facebook = args.facebook or str(ROOT / "tests" / "data" / "facebook-1000.txt.gz")
        args.rmat_scale, args.edge_factor, args.workers, args.threads = 12, 8, 2, 1

    import ray

    import gthinker
    from gthinker.cluster import Cluster

    ray.init(num_cpus=os.cpu_count(), include_dashboard=False, configure_logging=False)
    warm = gthinker.Graph.read(ROOT / "tests" / "data" / "facebook-1000.txt.gz")
    results = {"workers": args.workers, "threads": args.threads, "cores": os.cpu_count(),
               "move_tasks": args.move_tasks,
               "ray": ray.__version__, "jobs": []}
    for name, path, on_cluster, alone, value in jobs(args):
        t0 = time.perf_counter()
        graph = gthinker.Graph.read(path)
        entry = {"job": name, "graph": str(path), "vertices": graph.num_vertices,
                 "edges": graph.num_edges, "load_seconds": time.perf_counter() - t0}
        print(f"{name}: {graph.num_vertices:,} vertices, {graph.num_edges:,} edges",
              file=sys.stderr, flush=True)
        if not args.no_reference:
            res = alone(graph)
            entry["one_process"] = {"seconds": res.seconds, "count": value(res)}
            print(f"  one process x {args.threads} threads: {res.seconds:.2f}s "
                  f"({value(res):,})", file=sys.stderr, flush=True)
        for workers in (1, args.workers):
            move = {"on": True, "off": False, "eager": "eager"}[args.move_tasks]
            with Cluster(f"local:{workers}", move_tasks=move) as cluster:
                on_cluster(cluster, warm)  # workers import gthinker, load compiled code
                runs = []
                for _ in range(args.repeat):
                    t0 = time.perf_counter()
                    res = on_cluster(cluster, graph)
                    wall = time.perf_counter() - t0
                    stats = dict(cluster.last_stats)
                    runs.append({"seconds": res.seconds, "wall_seconds": wall,
                                 "count": value(res), "ranges": stats["ranges"],
                                 "put_seconds": stats["graph_put_seconds"],
                                 "weights_seconds": stats["weights_seconds"],
                                 "prepare_seconds": stats["prepare_seconds"],
                                 "tasks_moved": stats["tasks_moved"],
                                 "roots_moved": stats["roots_moved"],
                                 "batches": stats["batches"], "moves": stats["moves"],
                                 "busy_seconds": [w["busy_seconds"]
                                                  for w in stats["per_worker"]]})
                    print(f"  {workers} Ray worker(s) x {args.threads} threads: "
                          f"{res.seconds:.2f}s ({wall:.2f}s with the driver's weights, the "
                          f"put and the workers' {stats['prepare_seconds']:.2f}s of preparing; "
                          f"{value(res):,}, {stats['ranges']} ranges, "
                          f"{stats['roots_moved']:,} roots and {stats['tasks_moved']:,} tasks "
                          f"moved in {stats['batches']} batches)", file=sys.stderr, flush=True)
            entry[f"ray_{workers}x{args.threads}"] = {
                "median_seconds": statistics.median(r["seconds"] for r in runs),
                "median_wall_seconds": statistics.median(r["wall_seconds"] for r in runs),
                "runs": runs}
        counts = {r["count"] for k, v in entry.items() if k.startswith("ray_")
                  for r in v["runs"]}
        if "one_process" in entry:
            counts.add(entry["one_process"]["count"])
        entry["counts_agree"] = len(counts) == 1
        one = entry[f"ray_1x{args.threads}"]["median_seconds"]
        many = entry[f"ray_{args.workers}x{args.threads}"]["median_seconds"]
        entry["speedup"] = one / many if many > 0 else None
        walls = [entry[f"ray_{w}x{args.threads}"]["median_wall_seconds"]
                 for w in (1, args.workers)]
        entry["speedup_wall"] = walls[0] / walls[1] if walls[1] > 0 else None
        print(f"  speed-up {args.workers} workers / 1: {entry['speedup']:.2f}x "
              f"({entry['speedup_wall']:.2f}x with the preparing)"
              f"{'' if entry['counts_agree'] else '  COUNTS DIFFER'}", file=sys.stderr,
              flush=True)
        results["jobs"].append(entry)
    ray.shutdown()
    text = json.dumps(results, indent=1)
    if args.out:
        Path(args.out).write_text(text + "\n")
    print(text)
    return 0 if all(j["counts_agree"] for j in results["jobs"]) else 1


if __name__ == "__main__":
    sys.exit(main())
