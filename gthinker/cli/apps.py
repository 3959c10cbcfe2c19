"""An app's command on the command line, made from its :class:`~gthinker.registry.App`:
the parser (its inputs, its own flags and the shared ones it takes) and the run (check
every argument, load the graph, run each request here or on a Ray cluster, print).

Every app's command follows the same rules: arguments are checked before the graph
loads; ``--json`` prints one JSON object per result (with ``"query"`` for apps that
take queries); a run stopped by SIGINT / SIGTERM prints what it found, marked partial
on stdout (``"partial": true`` and ``"stopped"`` in JSON) and exits 130 / 143;
``--output -`` writes the listed results to stdout (the summary then goes to stderr).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from gthinker import registry
from gthinker.memory import peak_rss_bytes
from gthinker.options import HybridOptions, RunOptions, describe
from gthinker.runtime.outputs import check_output

__all__ = ["add_parser", "run"]

#: The GPU worker's flags (their values travel to the app as ``gpu_options``) and the
#: stealing flags: the levels engine's. The master's GPU flags are plain keywords.
GPU_WORKER_FLAGS = ("eta_per_warp", "buffer_bytes", "tau_c", "steal_bound", "steal_batch",
                    "give_back", "level_steal")
GPU_MASTER_FLAGS = ("gpus", "gpu_chunk", "gpu_task_batch")
#: ``--output -``: listed results to standard output.
STDOUT = "-"


# ---- the parser ---------------------------------------------------------------------------

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


def add_option_flags(p, names, notes=None) -> None:
    """Flags for the fields ``names`` of :mod:`gthinker.options`, with their help and
    defaults from the fields. A flag not given is left out of ``args`` (the API's
    default applies); ``notes`` adds a command's own words to a field's default."""
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


def add_parser(sub, app: registry.App) -> argparse.ArgumentParser:
    """The command of ``app`` in the subparsers ``sub``."""
    p = sub.add_parser(app.name, help=app.summary, description=app.description,
                       epilog=app.epilog, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.set_defaults(app=app)
    if app.inputs == registry.GRAPH:
        p.add_argument("graph", help="graph file: SNAP edge list (.txt, .gz), labeled .graph, "
                                     "or any format `gthinker convert` reads")
    else:
        p.add_argument("data", help="data graph file (as for every command)")
        p.add_argument("query", help="query graph file, directory of query files, or pattern "
                                     "name")
    if app.add_arguments is not None:
        app.add_arguments(p)
    p.add_argument("--mode", choices=["auto", *app.modes], default="auto",
                   help=f"where to run: {', '.join(app.modes)}; auto: {app.mode_help} "
                        "(default: auto)")
    add_option_flags(p, app.options, app.option_notes)
    if app.gpu_options:
        g = p.add_argument_group("GPU options (--mode gpu or hybrid)")
        add_option_flags(g, GPU_MASTER_FLAGS + GPU_WORKER_FLAGS, app.option_notes)
    if app.lists_results:
        p.add_argument("--output", "-o", default=None, metavar="FILE",
                       help="write every result to FILE, one per line, original vertex ids "
                            "('-': standard output; CPU)")
    p.add_argument("--json", action="store_true",
                   help="print each result as one JSON object")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress lines")
    g = p.add_argument_group("Ray cluster (pip install \"gthinker[ray]\"; docs/cluster.md)")
    g.add_argument("--ray", metavar="ADDRESS", default=None,
                   help="run on a Ray cluster: local:N (N workers here), auto, HOST:PORT or "
                        "ray://HOST:PORT; --threads is then per worker")
    if app.lists_results:
        g.add_argument("--ray-output", choices=["gather", "node"], default="gather",
                       help="with --output: gather every worker's lines into FILE, or write "
                            "FILE.nodeI on each worker's node (default: gather)")
    return p


# ---- the run ------------------------------------------------------------------------------

def _given(args, names) -> dict:
    """The options among ``names`` that the command line gave."""
    return {k: getattr(args, k) for k in names if hasattr(args, k)}


def _keywords(app, args) -> dict:
    """The keywords of the app's request: its own (``from_args``, checked) and the
    shared flags given (``threads`` goes to the runner, not the request)."""
    keywords = {"mode": args.mode, **_given(args, app.options), **app.from_args(args)}
    keywords.pop("threads", None)
    if app.gpu_options:
        keywords.update(_given(args, GPU_MASTER_FLAGS))
        worker = _given(args, GPU_WORKER_FLAGS)
        if worker:
            keywords["gpu_options"] = worker
    if app.lists_results and args.output is not None:
        keywords["output"] = "/dev/stdout" if args.output == STDOUT else args.output
    return keywords


def _queries(query: str) -> list[tuple[str, object]]:
    """(label, query) of each query: the files of a directory (sorted), or the one
    file or pattern name."""
    path = Path(query)
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.is_file())
        if not files:
            raise ValueError(f"no query files in {path}")
        return [(p.name, str(p)) for p in files]
    return [(path.name if path.exists() else query, query)]


def _requests(app, args) -> list:
    """The app's requests (one per query), every argument checked: before any graph
    loads."""
    if args.mode in ("gpu", "hybrid"):
        from gthinker.gpu import require_device, resolve_devices

        device = require_device()
        resolve_devices(getattr(args, "gpus", None))
        if not args.quiet:
            print(f"GPU: {device}", file=sys.stderr)
    keywords = _keywords(app, args)
    inputs = [args.graph] if app.inputs == registry.GRAPH else [args.data, args.query]
    check_output(keywords.get("output"), inputs)  # before a graph file is read
    if app.inputs == registry.GRAPH:
        return [app.request(**keywords)]
    queries = _queries(args.query)
    if keywords.get("output") is not None and len(queries) > 1:
        raise ValueError(f"--output lists the matches of one query; {args.query} is a "
                         f"directory of {len(queries)} queries")
    requests = []
    for label, query in queries:
        req = app.request(query, **keywords)
        req.label = label
        requests.append(req)
    return requests


def _progress(app, quiet):
    """The progress callback of ``app``'s runs (None: no progress lines)."""
    if quiet or app.progress is None:
        return None
    if callable(app.progress):
        return lambda p: print(app.progress(p), file=sys.stderr, flush=True)
    name = app.progress

    def show(snap):
        count = snap["counters"][0] if snap["counters"] else 0
        gpu = snap.get("gpu")
        print(f"[{snap['elapsed']:8.1f}s] {name}={count:,} tasks done={snap['tasks_done']:,} "
              f"decomposed={snap['tasks_decomposed']:,} S={snap['spill_tasks']:,} tasks "
              f"({snap['spill_bytes'] / 2**20:.1f} MiB)" + _gpu_progress(gpu),
              file=sys.stderr, flush=True)

    return show


def _gpu_progress(gpu) -> str:
    """The GPU part of a progress line: the level-by-level worker's levels, depth and H,
    or another engine's kernel launches."""
    if not gpu:
        return ""
    if "levels" in gpu:
        return (f" gpu: levels={gpu['levels']:,} depth={gpu['depth']} "
                f"H={gpu['host_stack_records']:,} records")
    return f" gpu: launches={gpu.get('launches', 0):,}"


class _Here:
    """Runs requests in this process."""

    def __init__(self, args):
        self.threads = getattr(args, "threads", None)

    def __call__(self, req, graph, stop, progress):
        return req.run(graph, threads=self.threads, stop=stop, progress=progress)

    def json(self) -> dict:
        return {}

    def lines(self) -> list[str]:
        return []


class _OnRay:
    """Runs requests on a Ray cluster (``--ray``)."""

    def __init__(self, args):
        from gthinker.cluster import connect

        self.cluster = connect(args.ray)
        self.threads = getattr(args, "threads", None)
        self.per_node = getattr(args, "ray_output", "gather") == "node"

    def __call__(self, req, graph, stop, progress):
        return self.cluster.run_request(req, graph, threads=self.threads, stop=stop,
                                        output_per_node=self.per_node)

    def json(self) -> dict:
        return {"cluster": self.cluster.last_stats}

    def lines(self) -> list[str]:
        c = self.cluster.last_stats
        return [f"cluster:         {c['workers']} Ray workers, {c['ranges']} ranges"
                + (f", {c['tasks_moved']:,} tasks moved in {c['batches']} batches"
                   if c.get("tasks_moved") else "")
                + (f", {c['retried']} run again after {c['workers_lost']} workers were lost"
                   if c["retried"] else "")]


def _load(path, quiet):
    from gthinker.graphs.graph import Graph

    t0 = time.perf_counter()
    graph = Graph.read(path)
    seconds = time.perf_counter() - t0
    if not quiet:
        print(f"loaded {graph.report} in {seconds:.2f}s", file=sys.stderr)
    return graph, seconds


def _show(app, args, req, result, graph, load_seconds, stopper, runner) -> None:
    """Prints one result: JSON, or the app's lines (to stderr when the listed results
    go to stdout), marked partial when a signal stopped the run."""
    stopped = stopper.reason
    if args.json:
        out = result.to_dict()
        if req.label is not None:
            out = {"query": req.label, **out}
        if app.inputs == registry.GRAPH:
            out["graph"] = {"path": args.graph, "vertices": graph.num_vertices,
                            "edges": graph.num_edges, "load_seconds": round(load_seconds, 6)}
        out.update(runner.json())
        out["peak_memory_bytes"] = peak_rss_bytes()  # of this process, so far
        if stopped:
            out.update(stopped=stopped, partial=True)
        print(json.dumps(out), flush=True)
        return
    stream = sys.stderr if getattr(args, "output", None) == STDOUT else sys.stdout
    lines = app.describe(result, req.label) + runner.lines()
    compile_seconds = getattr(result, "compile_seconds", 0.0)
    if compile_seconds:
        lines.append(f"compiling:       {compile_seconds:.2f}s (first run on this machine)")
    if stopped:
        lines.append(f"partial: {stopped} before the end; the numbers above are incomplete")
    print("\n".join(lines), file=stream, flush=True)


def run(args, stopper) -> int:
    """Runs the app command ``args`` (parsed by :func:`add_parser`); its exit code."""
    app = args.app
    requests = _requests(app, args)
    runner = _OnRay(args) if args.ray else _Here(args)
    graph, load_seconds = _load(args.graph if app.inputs == registry.GRAPH else args.data,
                                args.quiet)
    progress = _progress(app, args.quiet or bool(args.ray))
    for req in requests:
        result = runner(req, graph, stopper.token, progress)
        if getattr(result, "mode_reason", "") and not args.quiet:
            print(f"mode: {result.mode} ({result.mode_reason})", file=sys.stderr)
        _show(app, args, req, result, graph, load_seconds, stopper, runner)
        trace_error = getattr(result, "stats", {}).get("trace_error")
        if trace_error:
            print(f"gthinker: error: {trace_error}", file=sys.stderr)
            return 1 if stopper.reason is None else stopper.exit_code
        if stopper.reason is not None:
            print(f"gthinker: {stopper.reason}: the result above is partial", file=sys.stderr)
            return stopper.exit_code
    if getattr(args, "trace", None) and not args.quiet:
        print(f"timeline written to {args.trace}", file=sys.stderr)
    if getattr(args, "output", None) not in (None, STDOUT) and not args.quiet:
        print(f"results written to {args.output}", file=sys.stderr)
    return 0
