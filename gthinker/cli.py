"""The ``gthinker`` command: ``gthinker generate ...``, ``gthinker mce GRAPH ...``,
``gthinker sm DATA QUERY ...``, ``gthinker gsword DATA QUERY ...``,
``gthinker count GRAPH PATTERN`` and ``gthinker warmup``."""

from __future__ import annotations

import argparse
import json
import sys
import time

from . import convert_command
from .errors import GThinkerError
from .stopping import SignalStop

_MCE_EPILOG = """\
examples:
  gthinker generate rmat --scale 16 -o g.txt && gthinker mce g.txt
  gthinker mce email-Enron.txt.gz --threads 8 --json
  gthinker mce g.txt --output cliques.txt   # one clique per line, original ids
  gthinker mce g.txt --mode gpu             # on the GPU

Runs Bron-Kerbosch with Tomita pivoting on every core. Tasks that run longer
than --time-budget are decomposed into subtasks that idle workers pick up.
With --mode gpu the same search runs level by level on the GPU (a CUDA GPU
and numba-cuda are needed; without them it stops at once and says why).
"""


def _threads(n: int) -> str:
    return f"{n} thread" if n == 1 else f"{n} threads"


def _positive_int(text):
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text}")
    return value


def _option_parser(f):
    """The argparse ``type`` of an options field: parses the text and applies the
    field's own rule (:mod:`gthinker.options`), so that a bad value stops at once."""
    number = float if "float" in f.type else int

    def parse(text):
        try:
            value = number(text)
        except ValueError:
            value = text  # the rule names the field and what it takes
        try:
            return f.metadata["check"](f.name, value)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    return parse


def _add_option_flags(p, names, notes=None):
    """Flags for the fields ``names`` of :mod:`gthinker.options`, with their help and
    defaults from the fields. A flag not given is left out of ``args`` (the API's
    default applies); ``notes`` adds a command's own words to a field's default."""
    from .options import HybridOptions, RunOptions, describe

    owners = RunOptions.keywords()
    for name in names:
        f = describe(owners[name], name)
        meta = f.metadata
        default = meta["default_text"] or f.default
        if notes and name in notes:
            default = f"{default}; {notes[name]}"
        help = ("hybrid: " if owners[name] is HybridOptions else "") + meta["help"]
        flag = meta["flag"] or "--" + name.replace("_", "-")
        if isinstance(f.default, bool):
            p.add_argument(flag, action=argparse.BooleanOptionalAction, dest=name,
                           default=argparse.SUPPRESS,
                           help=f"{help} (default: {'on' if f.default else 'off'})")
            continue
        text = f"{help} (default: {default})".replace("%", "%%")
        p.add_argument(flag, type=_option_parser(f), dest=name, default=argparse.SUPPRESS,
                       metavar=meta["metavar"], help=text)


def _given(args, names) -> dict:
    """The options among ``names`` that the command line gave."""
    return {k: getattr(args, k) for k in names if hasattr(args, k)}


#: The scheduler's flags of `gthinker mce` (the other apps take threads and time budget).
_MCE_RUN_FLAGS = ("threads", "time_budget", "early_split", "cpu_chunk", "cpu_task_batch",
                  "spill_limit", "progress_interval")
#: The GPU worker's flags (their values travel to the app as ``gpu_options``).
_GPU_WORKER_FLAGS = ("eta_per_warp", "buffer_bytes")
#: Stealing flags, the same.
_HYBRID_FLAGS = ("tau_c", "steal_bound", "steal_batch", "give_back", "level_steal")
#: The master's GPU flags (plain keywords of the app and of gthinker.run).
_GPU_MASTER_FLAGS = ("gpus", "gpu_chunk", "gpu_task_batch")


def _add_mce_parser(sub):
    p = sub.add_parser(
        "mce",
        help="enumerate maximal cliques",
        description="Count (and optionally list) the maximal cliques of a graph.",
        epilog=_MCE_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("graph", help="graph file: SNAP edge list (.txt, .gz) or labeled .graph")
    p.add_argument("--mode", choices=["auto", "cpu", "gpu", "hybrid"], default="auto",
                   help="where to run: cpu (all cores), gpu (the GPU worker alone), hybrid "
                        "(both, with work stealing); auto: hybrid if a CUDA GPU is usable, "
                        "else cpu (default: auto)")
    _add_option_flags(p, _MCE_RUN_FLAGS, notes={
        "cpu_chunk": "1 in hybrid mode, where CPU workers take the hardest vertices from the "
                     "back"})
    _add_gpu_options(p)
    p.add_argument("--gpu-engine", choices=["auto", "bitsets", "levels"], default="auto",
                   help="GPU search: bitsets (a warp per subtree over a bitset graph) or levels "
                        "(level by level on the GPU worker, with host buffer H; the GPU options "
                        "above other than --gpus, --gpu-chunk and --gpu-task-batch are for it); "
                        "auto: bitsets unless a vertex has more than 1536 neighbours "
                        "(default: auto)")
    p.add_argument("--trace", default=None, metavar="FILE.png",
                   help="write a timeline of CPU and GPU busy time, S, H and steals "
                        "(needs matplotlib)")
    p.add_argument("--output", "-o", default=None, metavar="FILE",
                   help="write every maximal clique to FILE, one per line, original vertex ids")
    p.add_argument("--json", action="store_true", help="print the result as one JSON object")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress lines")
    return p


def _add_gpu_options(p):
    """The GPU and hybrid options that every app's command shares."""
    g = p.add_argument_group("GPU options (--mode gpu or hybrid)")
    _add_option_flags(g, _GPU_MASTER_FLAGS + _GPU_WORKER_FLAGS + _HYBRID_FLAGS, notes={
        "gpu_chunk": "mce hybrid: a 16th of the vertices, at least 1024"})


def _progress_printer(counter_name, stream=sys.stderr):
    def show(snap):
        count = snap["counters"][0] if snap["counters"] else 0
        stream.write(
            f"[{snap['elapsed']:8.1f}s] {counter_name}={count:,} tasks done={snap['tasks_done']:,} "
            f"decomposed={snap['tasks_decomposed']:,} S={snap['spill_tasks']:,} tasks "
            f"({snap['spill_bytes'] / 2**20:.1f} MiB)"
            + (f" gpu: levels={snap['gpu']['levels']:,} depth={snap['gpu']['depth']} "
               f"H={snap['gpu']['host_stack_records']:,} records" if "gpu" in snap else "")
            + "\n"
        )
        stream.flush()

    return show


def _gpu_options(args) -> dict:
    """The GPU flags the user gave; the rest keep the GPU worker's own defaults."""
    out = _given(args, _GPU_MASTER_FLAGS)
    options = _given(args, _GPU_WORKER_FLAGS + _HYBRID_FLAGS)
    # Options of the levels engine (mce) pick it; none given leaves the choice to the app.
    if options or getattr(args, "gpu_engine", "levels") == "levels":
        out["gpu_options"] = options
    return out


def _interrupted(stopper, out: dict | None = None) -> int:
    """0 if no signal stopped the run; else marks ``out`` (a JSON result) with
    ``"stopped": "interrupted"`` (or ``"terminated"``), says so on stderr and
    returns the shell's exit code for the signal (130, 143)."""
    if stopper.reason is None:
        return 0
    if out is not None:
        out["stopped"] = stopper.reason
    print(f"gthinker: {stopper.reason}: the result above is partial", file=sys.stderr)
    return stopper.exit_code


def _run_mce(args, stopper) -> int:
    from . import Graph
    from .apps import mce
    from .gpu import require_device, resolve_devices

    if args.mode in ("gpu", "hybrid"):
        device = require_device()  # before reading the graph: fail at once
        resolve_devices(getattr(args, "gpus", None))
        if not args.quiet:
            print(f"GPU: {device}", file=sys.stderr)
        if args.output:
            raise ValueError("--output (listing cliques) runs on the CPU only; use --mode cpu")
    if args.trace:
        from .trace import require_matplotlib

        require_matplotlib()
    t0 = time.perf_counter()
    graph = Graph.read(args.graph)
    load_seconds = time.perf_counter() - t0
    if not args.quiet:
        print(f"loaded {graph.report} in {load_seconds:.2f}s", file=sys.stderr)
    options = _given(args, _MCE_RUN_FLAGS)
    result = mce.run(
        graph,
        mode=args.mode,
        chunk=options.pop("cpu_chunk", None),
        output=args.output,
        progress=None if args.quiet else _progress_printer("cliques"),
        trace=args.trace,
        gpu_engine=args.gpu_engine,
        stop=stopper.token,
        **options,
        **(_gpu_options(args) if args.mode in ("gpu", "hybrid") else _given(args, ("gpus",))),
    )
    if result.mode_reason and not args.quiet:
        print(f"mode: {result.mode} ({result.mode_reason})", file=sys.stderr)
    out = result.to_dict()
    code = _interrupted(stopper, out)
    if args.json:
        out["graph"] = {"path": args.graph, "vertices": graph.num_vertices,
                        "edges": graph.num_edges, "load_seconds": round(load_seconds, 6)}
        print(json.dumps(out))
    else:
        print(f"maximal cliques: {result.count:,}")
        print(f"largest clique:  {result.max_size}")
        print("size histogram:  " + ", ".join(f"{k}:{v}" for k, v in result.histogram.items()))
        if result.mode != "cpu":
            s = result.stats["gpu"]
            gpus = len(result.stats.get("gpus", ())) or 1
            where = "the GPU" if gpus == 1 else f"{gpus} GPUs"
            where = where if result.mode == "gpu" else f"{_threads(result.threads)} + {where}"
            engine = result.stats.get("gpu_engine")
            if engine == "bitsets":
                print(f"time:            {result.seconds:.3f}s on {where} ({s['device']}),"
                      f" {s['launches']:,} kernel launches, {s['spilled']:,} subtrees handed"
                      f" out, {s['pushed']:,} of them to the CPU workers")
            else:
                print(f"time:            {result.seconds:.3f}s on {where} ({s['device']}),"
                      f" {s['levels']:,} levels, {s['launches']:,} kernel launches,"
                      f" buffer peak {s['peak_vertices']:,} of {s['buffer_vertices']:,}"
                      f" vertices, H peak {s['host_stack_peak_records']:,} subgraphs")
            if result.mode == "hybrid" and engine == "levels":
                print(f"stealing:        CPU->GPU {s['tasks_from_cpu']:,} tasks, GPU->CPU "
                      f"{s['tasks_to_cpu']:,} tasks + {s['vertices_given_back']:,} vertices")
        else:
            print(f"time:            {result.seconds:.3f}s on {_threads(result.threads)}"
                  f" ({result.mode}), {result.stats['tasks_decomposed']:,} tasks decomposed,"
                  f" S peak {result.stats['spill_peak_bytes']:,} bytes")
        if result.compile_seconds:
            print(f"compiling:       {result.compile_seconds:.2f}s (first run on this machine)")
        if args.output:
            print(f"cliques written to {args.output}")
    if result.stats.get("trace_error"):
        print(f"gthinker: error: {result.stats['trace_error']}", file=sys.stderr)
        return code or 1
    if args.trace and not args.quiet:
        print(f"timeline written to {args.trace}", file=sys.stderr)
    return code


_SM_EPILOG = """\
examples:
  gthinker sm email-Enron.txt.gz triangle --unique      # 727,044 triangles
  gthinker sm hprd.graph query_dense_16_1.graph
  gthinker sm hprd.graph queries/hprd/ --json           # one JSON line per query file
  gthinker sm yeast.graph q.graph --limit 1000 -o m.txt # list the first 1000 matches

QUERY is a query graph file (.graph or an edge list), a directory of them, or a
pattern: triangle, 4-cycle, diamond, tailed-triangle, house, k-clique, k-path,
k-star (k vertices). Counts embeddings (injective, label-preserving maps that
keep every query edge); --unique counts distinct subgraphs instead
(embeddings / |Aut(query)|). With a CUDA GPU, auto runs on the GPU alone
(G-ThinkerCG's advice for subgraph matching; docs/benchmarks.md has the
numbers); --limit and --output run on the CPU workers.
"""


def _add_sm_parser(sub):
    p = sub.add_parser(
        "sm", help="count subgraph matches of a query graph",
        description="Count the embeddings of a query graph in a data graph.",
        epilog=_SM_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("data", help="data graph file: SNAP edge list (.txt, .gz) or labeled .graph")
    p.add_argument("query", help="query graph file, directory of query files, or pattern name")
    p.add_argument("--unique", action="store_true",
                   help="count distinct subgraphs (symmetry breaking) instead of embeddings")
    p.add_argument("--mode", choices=["auto", "cpu", "gpu", "hybrid"], default="auto",
                   help="where to run: cpu (all cores), gpu (the GPU worker alone), hybrid "
                        "(both); auto: gpu if a CUDA GPU is usable, else cpu, and cpu with "
                        "--limit or --output (default: auto)")
    p.add_argument("--gpu-mode", choices=["auto", "prefix", "expand"], default="auto",
                   help="GPU record layout: prefix (a warp extends a partial match with all "
                        "its candidates) or expand (one record per candidate, for very skewed "
                        "fanouts); auto picks from the first level's fanouts (default: auto)")
    p.add_argument("--limit", type=_positive_int, default=None, metavar="N",
                   help="stop after N matches (CPU)")
    p.add_argument("--output", "-o", default=None, metavar="FILE",
                   help="write the matches to FILE, one per line: the data vertices (original "
                        "ids) matched to query vertices 0, 1, ... (CPU; one query)")
    _add_option_flags(p, ("threads", "time_budget"))
    _add_gpu_options(p)
    p.add_argument("--json", action="store_true", help="one JSON object per query")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress lines")


def _run_sm(args, stopper) -> int:
    from . import Graph
    from .apps import sm

    data = _load(Graph, args.data, args.quiet)
    queries = _queries(args.query)
    if args.output is not None and len(queries) > 1:
        raise ValueError("--output lists the matches of one query; QUERY is a directory of "
                         f"{len(queries)} queries")
    for q in queries:
        res = sm.count(data, str(q), unique=args.unique, mode=args.mode,
                       gpu_mode=args.gpu_mode, limit=args.limit, output=args.output,
                       **_given(args, ("threads", "time_budget")),
                       progress=None if args.quiet else _progress_printer("matches"),
                       stop=stopper.token, **_gpu_options(args))
        name = _query_name(q)
        out = {"query": name, **res.to_dict()}
        code = _interrupted(stopper, out)
        if args.json:
            print(json.dumps(out), flush=True)
        else:
            what = "distinct subgraphs" if args.unique else "embeddings"
            where = res.mode + (f", {res.gpu_mode} layout" if res.gpu_mode else "")
            print(f"{name}: {res.count:,} {what}"
                  + (" (stopped at --limit)" if res.stopped == "limit" else "")
                  + f" in {res.seconds:.3f}s ({where}; |Aut| = {res.automorphisms}, "
                  f"order {res.order}, candidates {res.candidates})", flush=True)
        if code:
            return code
    return 0


def _load(Graph, path, quiet):
    t0 = time.perf_counter()
    data = Graph.read(path)
    if not quiet:
        print(f"loaded {data.report} in {time.perf_counter() - t0:.2f}s", file=sys.stderr)
    return data


def _queries(query):
    """The query files of a directory (sorted), or [query] (a file or a pattern name)."""
    from pathlib import Path

    path = Path(query)
    if path.is_dir():
        queries = sorted(p for p in path.iterdir() if p.is_file())
        if not queries:
            raise ValueError(f"no query files in {path}")
        return queries
    return [query]


def _query_name(q):
    from pathlib import Path

    return Path(q).name if isinstance(q, Path) or Path(q).exists() else q


_COUNT_EPILOG = """\
examples:
  gthinker count email-Enron.txt.gz triangle            # 727,044 triangles
  gthinker count g.txt 5-clique --json
  gthinker count g.txt cliques                         # k-cliques for every k
  gthinker count g.txt house --mode cpu

PATTERN is triangle, k-clique, cliques (every k at once), 4-cycle, diamond,
tailed-triangle, house, k-path, k-star (k vertices), or a pattern file (an edge
list or .graph). Counts distinct subgraphs (not necessarily induced). Cliques
are counted on the graph oriented by degeneracy order, each clique once, the
last level by intersection sizes; "cliques" walks Pivoter's clique tree and is
exact however large the counts. Other patterns run the subgraph-matching app
with symmetry breaking. With a CUDA GPU, auto counts cliques on the GPU.
"""


def _add_count_parser(sub):
    p = sub.add_parser(
        "count", help="count triangles, k-cliques, cliques of every size or a small pattern",
        description="Count the distinct subgraphs of a graph isomorphic to a pattern.",
        epilog=_COUNT_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("graph", help="graph file: SNAP edge list (.txt, .gz) or .graph")
    p.add_argument("pattern", help="pattern name or pattern file (see below)")
    p.add_argument("--mode", choices=["auto", "cpu", "gpu", "hybrid"], default="auto",
                   help="where to count: cpu (all cores), gpu, hybrid (both); auto: gpu if a "
                        "CUDA GPU is usable and the graph is not small, else cpu "
                        "(default: auto)")
    _add_option_flags(p, ("threads", "time_budget", "gpus"))
    p.add_argument("--json", action="store_true", help="print the result as one JSON object")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress lines")


def _run_count(args, stopper) -> int:
    from . import Graph
    from .apps import count

    graph = _load(Graph, args.graph, args.quiet)
    res = count.count(graph, args.pattern, mode=args.mode,
                      **_given(args, ("threads", "time_budget", "gpus")),
                      progress=None if args.quiet else _progress_printer("count"),
                      stop=stopper.token)
    out = res.to_dict()
    code = _interrupted(stopper, out)
    if args.json:
        print(json.dumps(out))
        return code
    if res.counts is not None:
        for k, n in res.counts.items():
            print(f"{k}-cliques: {n:,}")
    else:
        print(f"{res.pattern}: {res.count:,}")
    where = _threads(res.threads) if res.mode == "cpu" else res.mode
    print(f"time: {res.seconds:.3f}s counting ({where}, {res.method}), "
          f"{res.prepare_seconds:.3f}s preparing"
          + (f", {res.compile_seconds:.2f}s compiling (first run on this machine)"
             if res.compile_seconds else ""))
    if res.mode_reason and not args.quiet:
        print(f"mode: {res.mode} ({res.mode_reason})", file=sys.stderr)
    return 0


_GSWORD_EPILOG = """\
examples:
  gthinker gsword data.graph query.graph                  # Alley, 10^6 samples
  gthinker gsword data.graph queries/ --estimator wj --json
  gthinker gsword g.txt 4-cycle --samples 100000 --seed 7 --mode cpu

Estimates the number of embeddings (as `gthinker sm` counts them) by random
walks on the candidate graph: WanderJoin (wj) or Alley. The estimate is
unbiased; the output gives its standard error and a 95% confidence interval.
With --trawl (default), some samples stop after a few vertices and the CPU
workers count the rest of their matches exactly while the next batch is
sampled (this helps where valid samples are rare). --mode gpu samples on the
GPU (sample inheritance and warp streaming; --no-inheritance and
--no-streaming turn them off); --mode cpu on all CPU cores.
"""


def _add_gsword_parser(sub):
    p = sub.add_parser(
        "gsword", help="estimate subgraph counts by sampling (gSWORD)",
        description="Estimate the number of embeddings of a query graph in a data graph by "
                    "sampling (WanderJoin or Alley), on the GPU or all CPU cores.",
        epilog=_GSWORD_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("data", help="data graph file: SNAP edge list (.txt, .gz) or labeled .graph")
    p.add_argument("query", help="query graph file, directory of query files, or pattern name")
    p.add_argument("--estimator", choices=["wj", "alley"], default="alley",
                   help="wj: WanderJoin (cheap samples, more of them die); alley: candidates "
                        "refined by every matched neighbour (default: alley)")
    p.add_argument("--samples", type=_positive_int, default=1_000_000, metavar="N",
                   help="samples to draw (default: 1000000)")
    p.add_argument("--trawl", action=argparse.BooleanOptionalAction, default=True,
                   help="count the rest of some samples exactly on the CPU workers "
                        "(default: on)")
    p.add_argument("--batches", type=_positive_int, default=6, metavar="N",
                   help="batches the samples are split into; trawling overlaps the "
                        "enumeration of one batch with the sampling of the next (default: 6)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    p.add_argument("--mode", choices=["auto", "cpu", "gpu"], default="auto",
                   help="where to sample; auto: gpu if a CUDA GPU is usable, else cpu "
                        "(default: auto)")
    p.add_argument("--order", choices=["quicksi", "sm"], default="quicksi",
                   help="matching order: QuickSI (infrequent edges first) or the sm app's "
                        "(default: quicksi)")
    p.add_argument("--inheritance", action=argparse.BooleanOptionalAction, default=True,
                   help="GPU sample inheritance (default: on)")
    p.add_argument("--streaming", action=argparse.BooleanOptionalAction, default=True,
                   help="GPU warp streaming (default: on)")
    _add_option_flags(p, ("threads",))
    p.add_argument("--json", action="store_true", help="one JSON object per query")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress lines")


def _run_gsword(args, stopper) -> int:
    from . import Graph
    from .apps import gsword

    data = _load(Graph, args.data, args.quiet)

    def progress(p):
        print(f"  batch {p['batch']}/{p['batches']}: {p['samples']:,} samples, "
              f"estimate {p['estimate']:.4g}", file=sys.stderr, flush=True)

    for q in _queries(args.query):
        name = _query_name(q)
        res = gsword.estimate(
            data, str(q), estimator=args.estimator, samples=args.samples, mode=args.mode,
            trawl=args.trawl, batches=args.batches, seed=args.seed,
            threads=getattr(args, "threads", None),
            order=args.order, inheritance=args.inheritance, streaming=args.streaming,
            name=name, progress=None if args.quiet else progress, stop=stopper.token)
        out = res.to_dict()
        code = _interrupted(stopper, out)
        if args.json:
            print(json.dumps(out), flush=True)
        else:
            lo, hi = res.ci95
            if res.samples_per_second is None:
                print(f"{name}: 0 embeddings (a query vertex has no candidate in the data "
                      f"graph; nothing to sample), total {res.seconds:.2f}s", flush=True)
                continue
            print(f"{name}: about {res.estimate:.6g} embeddings (95% CI {lo:.4g} .. {hi:.4g}, "
                  f"stderr {res.stderr:.3g}); {res.samples:,} samples in "
                  f"{res.sampling_seconds:.3f}s ({res.samples_per_second:,.0f}/s, "
                  f"{res.estimator}, {res.mode}), valid ratio {res.valid_ratio:.3g}, "
                  f"total {res.seconds:.2f}s", flush=True)
            for warning in res.warnings:
                print(f"  unreliable interval: {warning}", flush=True)
        if code:
            return code
    return 0


def add_generate_parser(subparsers) -> argparse.ArgumentParser:
    """Add the ``generate`` subcommand to an argparse ``subparsers`` object.

    Parameters
    ----------
    subparsers : argparse._SubParsersAction
        As returned by ``parser.add_subparsers()``.

    Returns
    -------
    argparse.ArgumentParser
        The ``generate`` parser; its default ``func`` is :func:`run_generate`.
    """
    gen = subparsers.add_parser(
        "generate",
        help="write a seeded synthetic graph (R-MAT, G(n,p), power-law cluster) to a file",
        description=(
            "Generate a reproducible synthetic graph and write it to a file. The output format "
            "follows the file name (.graph -> labeled format with label 0, anything else -> SNAP "
            "edge list; a .gz suffix compresses) unless --format is given."
        ),
    )
    models = gen.add_subparsers(dest="model", metavar="{rmat,gnp,powerlaw}", required=True)

    def common(sub):
        sub.add_argument("-o", "--output", required=True, metavar="FILE",
                         help="output file (.graph for labeled format, .gz to compress)")
        sub.add_argument("--format", choices=("edgelist", "graph"), default=None,
                         help="output format (default: from the file extension)")
        sub.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
        sub.set_defaults(func=run_generate)

    r = models.add_parser(
        "rmat", help="R-MAT recursive-matrix graph (skewed degrees)",
        description="R-MAT graph: 2**scale vertices, edge_factor*2**scale sampled pairs "
                    "(self-loops and duplicates dropped).",
    )
    r.add_argument("--scale", type=int, required=True, help="log2 of the vertex count (1..30)")
    r.add_argument("--edge-factor", type=int, default=16,
                   help="sampled pairs per vertex (default: 16)")
    r.add_argument("--a", type=float, default=0.57, help="top-left probability (default: 0.57)")
    r.add_argument("--b", type=float, default=0.19, help="top-right probability (default: 0.19)")
    r.add_argument("--c", type=float, default=0.19,
                   help="bottom-left probability (default: 0.19); d = 1 - a - b - c")
    common(r)

    g = models.add_parser("gnp", help="Erdos-Renyi G(n, p)",
                          description="Erdos-Renyi graph: each pair is an edge with probability p.")
    g.add_argument("--n", type=int, required=True, help="number of vertices")
    g.add_argument("--p", type=float, required=True, help="edge probability in [0, 1]")
    common(g)

    h = models.add_parser(
        "powerlaw", help="Holme-Kim power-law graph with clustering",
        description="Holme-Kim graph: preferential attachment of m edges per vertex, each "
                    "followed with probability p by a triangle-closing step.",
    )
    h.add_argument("--n", type=int, required=True, help="number of vertices")
    h.add_argument("--m", type=int, required=True, help="edges per new vertex (1 <= m <= n)")
    h.add_argument("--p", type=float, required=True, help="triangle probability in [0, 1]")
    common(h)
    gen.set_defaults(func=run_generate)
    return gen


def run_generate(args) -> int:
    """Run ``gthinker generate``: build the graph, write it, print a summary.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed arguments from the parser made by :func:`add_generate_parser`.

    Returns
    -------
    int
        0 on success, 2 on bad parameters or an unwritable output file (the
        message goes to stderr, without a traceback).
    """
    from pathlib import Path

    from .generate import gnp, powerlaw_cluster, rmat

    t0 = time.perf_counter()
    try:
        if args.model == "rmat":
            graph = rmat(args.scale, args.edge_factor, args.a, args.b, args.c, seed=args.seed)
        elif args.model == "gnp":
            graph = gnp(args.n, args.p, seed=args.seed)
        elif args.model == "powerlaw":
            graph = powerlaw_cluster(args.n, args.m, args.p, seed=args.seed)
        else:
            raise ValueError(f"unknown model {args.model!r}; use rmat, gnp or powerlaw")
        out = Path(args.output)
        graph.write(out, format=args.format)
    except (ValueError, GThinkerError) as exc:
        print(f"gthinker generate: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"gthinker generate: error: cannot write {args.output}: {exc.strerror or exc}",
              file=sys.stderr)
        return 2
    secs = time.perf_counter() - t0
    print(
        f"generated {args.model}: {graph.num_vertices:,} vertices, {graph.num_edges:,} edges "
        f"in {secs:.2f}s -> {out}",
        file=sys.stderr,
    )
    return 0


_WARMUP_EPILOG = """\
examples:
  gthinker warmup             # after pip install, in an image or on a shared node
  gthinker warmup --clear     # drop what is cached and compile anew

Compiled code is kept in $GTHINKER_CACHE_DIR (default: ~/.cache/gthinker on
Linux), keyed by the code, the compiler versions and this machine's CPU and GPU,
so any later process starts without compiling. Without warmup the first run of
each app compiles (it says so on stderr) and fills the cache the same way.
"""


def _add_warmup_parser(sub):
    p = sub.add_parser(
        "warmup", help="compile the bundled apps for this machine ahead of time",
        description="Compile every bundled app (CPU, and the GPU where one is usable) into "
                    "the compile cache, so that no later run compiles.",
        epilog=_WARMUP_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cpu-only", action="store_true", help="skip the GPU kernels")
    p.add_argument("--clear", action="store_true",
                   help="remove the cached code first (e.g. after editing your own apps)")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress lines")


def _run_warmup(args) -> int:
    from . import cache
    from .warmup import warmup

    root = cache.cache_dir()
    if args.clear:
        print(f"removed {cache.clear()} cached entries", file=sys.stderr)
    if root is None:
        print(f"gthinker: the compile cache is off ({cache.ENV}); warmup compiles for "
              "nothing", file=sys.stderr)

    def show(name, seconds):
        if not args.quiet:
            print(f"  {name}: {seconds:.2f}s", file=sys.stderr, flush=True)

    t0 = time.perf_counter()
    warmup(gpu=False if args.cpu_only else None, progress=show)
    print(f"compiled in {time.perf_counter() - t0:.1f}s; cache: {root}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gthinker",
        description="Parallel subgraph finding on all CPU cores or a GPU.",
    )
    from . import __version__

    parser.add_argument("--version", action="version", version=f"gthinker {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    add_generate_parser(sub)
    _add_mce_parser(sub)
    _add_sm_parser(sub)
    _add_gsword_parser(sub)
    _add_count_parser(sub)
    _add_warmup_parser(sub)
    convert_command.add_parser(sub)
    from .cluster.cli import add_options as add_ray_options  # --ray (no Ray imported here)

    add_ray_options(sub)
    return parser


def main(argv=None) -> int:
    # SIGINT / SIGTERM stop a running job (its partial result is printed,
    # marked); elsewhere, from here on, they end the program at once with 130 / 143.
    stopper = SignalStop()
    try:
        with stopper:
            args = build_parser().parse_args(argv)
            if getattr(args, "quiet", False):
                from . import cache

                cache.set_quiet(True)
            if args.command == "generate":
                return run_generate(args)
            if args.command == "warmup":
                return _run_warmup(args)
            if getattr(args, "ray", None):
                from .cluster.cli import run as run_on_ray

                return run_on_ray(args, stopper)
            run = {"sm": _run_sm, "gsword": _run_gsword, "count": _run_count, "mce": _run_mce,
                   "convert": lambda a, _: convert_command.main(a)}
            return run[args.command](args, stopper)
    except GThinkerError as exc:
        print(f"gthinker: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"gthinker: error: {exc}", file=sys.stderr)
        return 2
    except ValueError as exc:
        print(f"gthinker: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"gthinker: {stopper.reason or 'interrupted'}", file=sys.stderr)
        return stopper.exit_code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
