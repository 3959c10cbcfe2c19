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
import dataclasses
import json
import sys
import time
from pathlib import Path

from gthinker import registry
from gthinker.memory import peak_rss_bytes
from gthinker.options import GPUOptions, HybridOptions, RunOptions, boolean, describe
from gthinker.runtime.outputs import check_output

__all__ = ["add_parser", "run"]

#: ``--output -``: listed results to standard output.
STDOUT = "/dev/stdout"
#: The help of each input an app's command may take (:data:`gthinker.registry.GRAPH`, ...).
INPUTS = {
    "graph": "graph file: SNAP edge list (.txt, .gz), labeled .graph, or any format "
             "`gthinker convert` reads",
    "data": "data graph file (as for every command)",
    "query": "query graph file, directory of query files, or pattern name",
    "pattern": "pattern name or pattern file (see below)",
}


# ---- the parser ---------------------------------------------------------------------------

def _option_parser(f):
    """The argparse ``type`` of an options field: parses the text and applies the
    field's own rule (:mod:`gthinker.options`), so that a bad value stops at once."""
    kind = f.type if isinstance(f.type, str) else str(f.type)
    number = float if "float" in kind else int if "int" in kind else None

    def parse(text):
        value = text
        if number is not None:
            try:
                value = number(text)
            except ValueError:
                pass  # the rule names the field and what it takes
        try:
            return f.metadata["check"](f.name, value)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    return parse


def _flag_help(f, prefix="", note=None) -> str:
    """A field's help with its default: the field's ``default_text`` or default, and a
    command's ``note``."""
    meta = f.metadata
    if isinstance(f.default, bool) and meta["flag"] is None:
        default = "on" if f.default else "off"
    else:
        default = meta["default_text"] or f.default
    if note:
        default = f"{default}; {note}"
    text = prefix + meta["help"]
    if default is not None and not (isinstance(f.default, bool) and meta["flag"]):
        text += f" (default: {default})"
    return text.replace("%", "%%")


def add_option_flags(p, fields, notes=None, prefix="") -> None:
    """Flags for the option ``fields`` (:func:`gthinker.options.option_field`), with their
    help and defaults from the fields. A flag not given is left out of ``args`` (the
    API's default applies); ``notes`` adds a command's own words to a field's default."""
    for f in fields:
        meta = f.metadata
        flag = meta["flag"]
        if flag is False:
            continue  # an option of the Python API only
        flags = (flag,) if isinstance(flag, str) else flag or ("--" + f.name.replace("_", "-"),)
        help = _flag_help(f, prefix, (notes or {}).get(f.name))
        if f.default is None and meta["check"] is boolean:  # on, off, or as the input says
            both = p.add_mutually_exclusive_group()
            for value, name in zip((True, False), flags, strict=True):
                both.add_argument(name, action="store_const", const=value, dest=f.name,
                                  default=argparse.SUPPRESS, help=help if value else None)
            continue
        if isinstance(f.default, bool):
            action = (argparse.BooleanOptionalAction if meta["flag"] is None
                      else "store_false" if f.default else "store_true")
            p.add_argument(*flags, action=action, dest=f.name, default=argparse.SUPPRESS,
                           help=help)
            continue
        p.add_argument(*flags, type=_option_parser(f), dest=f.name, default=argparse.SUPPRESS,
                       metavar=meta["metavar"], choices=getattr(meta["check"], "choices", None),
                       help=help)


def _shared(names):
    owners = RunOptions.keywords()
    return [describe(owners[name], name) for name in names]


def add_parser(sub, app: registry.App) -> argparse.ArgumentParser:
    """The command of ``app`` in the subparsers ``sub``: its inputs, then a flag for each
    of its options (:attr:`App.options`) and of the shared ones it takes."""
    p = sub.add_parser(app.name, help=app.summary, description=app.description,
                       epilog=app.epilog, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.set_defaults(app=app)
    for name in app.inputs:
        p.add_argument(name, help=INPUTS[name])
    options = app.options
    add_option_flags(p, dataclasses.fields(options))
    add_option_flags(p, _shared(options.scheduler), options.notes)
    if options.gpu:
        g = p.add_argument_group("GPU options (--mode gpu or hybrid)")
        add_option_flags(g, _shared(f.name for f in dataclasses.fields(GPUOptions)
                                    if f.name not in GPUOptions.WORKER_FIELDS), options.notes)
        g = p.add_argument_group(
            "GPU worker options (the level-by-level GPU engine; the other engines take none)")
        add_option_flags(g, _shared(GPUOptions.WORKER_FIELDS), options.notes)
        add_option_flags(g, dataclasses.fields(HybridOptions), options.notes, prefix="hybrid: ")
    p.add_argument("--json", action="store_true",
                   help="print each result as one JSON object")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress lines")
    g = p.add_argument_group("Ray cluster (pip install \"gthinker[ray]\"; docs/cluster.md)")
    g.add_argument("--ray", metavar="ADDRESS", default=None,
                   help="run on a Ray cluster: local:N (N workers here), auto, HOST:PORT or "
                        "ray://HOST:PORT; --threads is then per worker")
    if _lists_results(app):
        g.add_argument("--ray-output", choices=["gather", "node"], default="gather",
                       help="with --output: gather every worker's lines into FILE, or write "
                            "FILE.nodeI on each worker's node (default: gather)")
    return p


def _lists_results(app) -> bool:
    """Whether the app writes its results to a file (it has an ``output`` option)."""
    return any(f.name == "output" for f in dataclasses.fields(app.options))


# ---- the run ------------------------------------------------------------------------------

def _keywords(app, args) -> dict:
    """The keywords of the app's request: every option the command line gave (``threads``
    goes to the runner, not the request)."""
    names = [f.name for f in dataclasses.fields(app.options)] + list(RunOptions.keywords())
    return {k: getattr(args, k) for k in names if hasattr(args, k) and k != "threads"}


def _queries(query: str, quiet: bool = False) -> list[tuple[str, object]]:
    """(label, query) of each query: the graph files of a directory in natural order
    (``q_2`` before ``q_10``; other files skipped, with a note), or the one file or
    pattern name."""
    from gthinker.graphs.files import is_graph_name, natural_key

    path = Path(query)
    if path.is_dir():
        found = [p for p in path.iterdir() if p.is_file()]
        files = sorted((p for p in found if is_graph_name(p.name)),
                       key=lambda p: natural_key(p.name))
        if not files:
            raise ValueError(f"no query files in {path} (graph files: .graph, an edge list's "
                             ".txt, ..., as docs/formats.md lists)")
        skipped = sorted(p.name for p in found if not is_graph_name(p.name))
        if skipped and not quiet:
            print(f"note: skipped {len(skipped)} file(s) of {path} that are not graph files: "
                  + ", ".join(skipped[:5]) + (", ..." if len(skipped) > 5 else ""),
                  file=sys.stderr)
        return [(p.name, str(p)) for p in files]
    return [(path.name if path.exists() else query, query)]


def _requests(app, args) -> list:
    """The app's requests (one per query), every argument checked: before any graph
    loads."""
    if getattr(args, "mode", None) in ("gpu", "hybrid"):
        from gthinker.gpu import require_device, resolve_devices

        device = require_device()
        resolve_devices(getattr(args, "gpus", None))
        if not args.quiet:
            print(f"GPU: {device}", file=sys.stderr)
    keywords = _keywords(app, args)
    inputs = [getattr(args, name) for name in app.inputs]
    check_output(keywords.get("output"), inputs)  # before a graph file is read
    if app.inputs != registry.DATA_AND_QUERY:
        return [app.make_request(*inputs[1:], **keywords)]
    queries = _queries(args.query, args.quiet)
    if keywords.get("output") is not None and len(queries) > 1:
        raise ValueError(f"--output lists the matches of one query; {args.query} is a "
                         f"directory of {len(queries)} queries")
    requests = []
    for label, query in queries:
        req = app.make_request(query, **keywords)
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
        if app.inputs != registry.DATA_AND_QUERY:
            out["graph"] = {"path": args.graph, "vertices": graph.num_vertices,
                            "edges": graph.num_edges, "load_seconds": round(load_seconds, 6)}
        out.update(runner.json())
        out["peak_memory_bytes"] = peak_rss_bytes()  # of this process, so far
        if getattr(result, "stats", {}).get("costs"):  # a dispatch that weighed two ways
            out["costs"] = result.stats["costs"]
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
    graph, load_seconds = _load(getattr(args, app.inputs[0]), args.quiet)
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
