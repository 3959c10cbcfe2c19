"""``gthinker generate MODEL ... -o FILE``: a seeded synthetic graph written to a file.

Models: ``rmat``, ``gnp`` and ``powerlaw`` (:mod:`gthinker.graphs.generate`),
``shaped`` (vertices, edges, largest degree, clustering, bipartite: the knobs of
:func:`gthinker.graphs.generate.shaped`) and ``preset NAME`` (the shapes of the seed
paper's Table I graphs; ``gthinker generate preset --list`` shows them). The output
format follows the file name as ``gthinker convert``'s does: ``.csr`` is the binary
graph (with the ``--prepare`` forms, the fast path for big graphs), ``.graph`` the
labeled format, anything else an edge list; ``--stats`` measures the graph made
(:mod:`gthinker.cli.stats`).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from gthinker.cli import convert as convert_command
from gthinker.errors import GThinkerError
from gthinker.graphs.edges import DEFAULT_SKEW
from gthinker.graphs.shapes import FULL_SCALE, MAX_CLOSURE, MAX_GROUP, PRESETS, SHAPED_DEFAULTS

__all__ = ["add_parser", "main", "preset_table"]

_EPILOG = """\
examples:
  gthinker generate preset --list
  gthinker generate preset soc-pokec -o pokec.csr              # full size, binary
  gthinker generate preset trackers --scale 0.01 --stats -o t.txt
  gthinker generate shaped --vertices 100000 --edges 1000000 --max-degree 5000 \\
      --closure 0.3 -o g.csr
  gthinker generate rmat --scale 20 -o rmat20.csr

The same model, arguments and seed give the same graph on any machine and number
of threads. Files are written to a temporary name and renamed at the end: Ctrl-C
leaves no partial file. docs/generating.md describes the models and the presets.
"""


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Adds the ``generate`` command to ``subparsers`` (``parser.add_subparsers()``);
    its default ``func`` is :func:`main`."""
    gen = subparsers.add_parser(
        "generate",
        help="write a seeded synthetic graph (a preset of the seed paper's graphs, a shaped "
             "graph, R-MAT, G(n,p), power-law cluster) to a file",
        description="Generate a reproducible synthetic graph and write it to a file. The "
                    "output format follows the file name (.csr: the binary format with the "
                    "--prepare forms; .graph: labeled, label 0; anything else: an edge list; "
                    ".gz compresses text) unless --format is given.",
        epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    models = gen.add_subparsers(dest="model", metavar="{preset,shaped,rmat,gnp,powerlaw}",
                                required=True)
    _add_preset(models)
    _add_shaped(models)
    _add_classic(models)
    gen.set_defaults(func=main)
    return gen


def _common(sub, output_required: bool = True) -> None:
    sub.add_argument("-o", "--output", required=output_required, metavar="FILE",
                     help="output file (.csr for the binary format, .graph for the labeled "
                          "one, .gz to compress a text one)")
    sub.add_argument("--format", choices=("edgelist", "graph", "mtx", "npz", "binary"),
                     default=None, help="output format (default: from the file name)")
    convert_command.add_prepare_flag(sub, "FILE")
    sub.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    sub.add_argument("--edge-labels", type=int, default=None, metavar="N",
                     help="give every edge one of N labels (1 .. N) at random, label 1 on "
                          "a share --edge-label-skew of them (as rdf:type in RDF graphs)")
    sub.add_argument("--edge-label-skew", type=float, default=DEFAULT_SKEW, metavar="X",
                     help=f"with --edge-labels: the share of the edges labeled 1, the rest "
                          f"uniform over the other labels (default: {DEFAULT_SKEW:g})")
    sub.add_argument("--directed", action="store_true",
                     help="point every edge one way or the other at random (a directed "
                          "graph: write it as .g, .csr or an edge list)")
    sub.add_argument("--stats", action="store_true",
                     help="measure the graph made (gthinker stats) and print it on stdout")
    sub.add_argument("--quiet", "-q", action="store_true", help="no progress lines")
    sub.set_defaults(func=main)


def _add_preset(models) -> None:

    p = models.add_parser(
        "preset", help="a graph in the shape of one of the seed paper's Table I graphs",
        description="A shaped graph with the vertices, edges (|E| / 2: the table counts each "
                    "edge twice), largest degree and structure of a graph of the seed "
                    "paper's Table I. --list shows them with their targets.")
    p.add_argument("name", nargs="?", choices=sorted(PRESETS), metavar="NAME",
                   help=f"the preset: {', '.join(PRESETS)}")
    p.add_argument("--scale", type=float, default=FULL_SCALE, metavar="F",
                   help="shrink the preset: vertices, edges and hub degrees times F, "
                        f"0 < F <= {FULL_SCALE:g} (default: {FULL_SCALE:g})")
    p.add_argument("--list", action="store_true", help="list the presets and their targets")
    _common(p, output_required=False)


def _add_shaped(models) -> None:

    s = models.add_parser(
        "shaped", help="a graph of given vertices, edges, largest degree and clustering",
        description="A Chung-Lu graph on power-law weights with a hub of exactly "
                    "--max-degree neighbours, one edge for every other vertex, and a "
                    "--closure share of the edges closing random neighbourhoods "
                    "(clustering); or a bipartite one (--bipartite). Exactly --edges edges.")
    s.add_argument("--vertices", type=int, required=True, metavar="N",
                   help="vertices (of the first side, with --bipartite)")
    s.add_argument("--edges", type=int, required=True, metavar="M", help="edges, exactly")
    s.add_argument("--max-degree", type=int, required=True, metavar="D",
                   help="the hub's degree, exactly (0: no hub)")
    s.add_argument("--top", type=float, default=None, metavar="W",
                   help="the largest weight of a non-hub vertex (default: D / 2)")
    s.add_argument("--floor", type=float, default=SHAPED_DEFAULTS["floor"], metavar="W",
                   help="the smallest weight: a vertex's expected degree beyond its own "
                        f"edge (default: {SHAPED_DEFAULTS['floor']:g}); a larger floor "
                        "thins the tail")
    s.add_argument("--closure", type=float, default=SHAPED_DEFAULTS["closure"], metavar="S",
                   help=f"share of the edges closing neighbourhoods, 0 to {MAX_CLOSURE:g} "
                        f"(default: {SHAPED_DEFAULTS['closure']:g}); raises the clustering")
    s.add_argument("--closure-size", type=int, default=SHAPED_DEFAULTS["group"], metavar="K",
                   dest="group",
                   help=f"neighbours a closure joins, 2 to {MAX_GROUP} (default: "
                        f"{SHAPED_DEFAULTS['group']}: a wedge closed into a triangle; K "
                        "plants a clique of K + 1 vertices)")
    s.add_argument("--bipartite", type=int, default=None, metavar="N2",
                   help="a second side of N2 vertices: edges join the sides, and the hub is "
                        "on the second side")
    s.add_argument("--top2", type=float, default=None, metavar="W",
                   help="--top of the second side (default: D / 2)")
    s.add_argument("--fold", action="store_true",
                   help="with --bipartite: number both sides from 0 (max(N, N2) vertices), "
                        "as a KONECT bipartite file reads as one graph")
    _common(s)


def _add_classic(models) -> None:
    r = models.add_parser(
        "rmat", help="R-MAT recursive-matrix graph (skewed degrees)",
        description="R-MAT graph: 2**scale vertices, edge_factor*2**scale sampled pairs "
                    "(self-loops and duplicates dropped).")
    r.add_argument("--scale", type=int, required=True, help="log2 of the vertex count (1..30)")
    r.add_argument("--edge-factor", type=int, default=16,
                   help="sampled pairs per vertex (default: 16)")
    r.add_argument("--a", type=float, default=0.57, help="top-left probability (default: 0.57)")
    r.add_argument("--b", type=float, default=0.19, help="top-right probability (default: 0.19)")
    r.add_argument("--c", type=float, default=0.19,
                   help="bottom-left probability (default: 0.19); d = 1 - a - b - c")
    _common(r)
    g = models.add_parser("gnp", help="Erdos-Renyi G(n, p)",
                          description="Erdos-Renyi graph: each pair is an edge with probability p.")
    g.add_argument("--n", type=int, required=True, help="number of vertices")
    g.add_argument("--p", type=float, required=True, help="edge probability in [0, 1]")
    _common(g)
    h = models.add_parser(
        "powerlaw", help="Holme-Kim power-law graph with clustering",
        description="Holme-Kim graph: preferential attachment of m edges per vertex, each "
                    "followed with probability p by a triangle-closing step.")
    h.add_argument("--n", type=int, required=True, help="number of vertices")
    h.add_argument("--m", type=int, required=True, help="edges per new vertex (1 <= m <= n)")
    h.add_argument("--p", type=float, required=True, help="triangle probability in [0, 1]")
    _common(h)


def preset_table() -> list[str]:
    """The presets as table lines: name, targets (vertices, edges, largest degree,
    average clustering where known) and what the real graph is."""

    rows = [f"{'preset':<18} {'vertices':>11} {'edges':>12} {'max degree':>11} "
            f"{'clustering':>10}  graph"]
    for p in PRESETS.values():
        c = "?" if p.clustering is None else f"{p.clustering:.3f}"
        rows.append(f"{p.name:<18} {p.vertices:>11,} {p.edges:>12,} {p.max_degree:>11,} "
                    f"{c:>10}  {p.about}")
    rows += ["", "edges: undirected (Table I's |E| counts each twice); clustering: the real "
             "graph's average clustering, where known. Notes:"]
    rows += [f"  {p.name}: {p.note}" for p in PRESETS.values() if p.note]
    return rows


def _make(args, progress):
    from gthinker.graphs import generate

    if args.model == "preset":
        return generate.preset(args.name, args.scale, seed=args.seed, progress=progress)
    if args.model == "shaped":
        return generate.shaped(args.vertices, args.edges, args.max_degree, top=args.top,
                               floor=args.floor, closure=args.closure, group=args.group,
                               bipartite=args.bipartite, top2=args.top2, folded=args.fold,
                               seed=args.seed, progress=progress)
    if args.model == "rmat":
        return generate.rmat(args.scale, args.edge_factor, args.a, args.b, args.c, seed=args.seed)
    if args.model == "gnp":
        return generate.gnp(args.n, args.p, seed=args.seed)
    return generate.powerlaw_cluster(args.n, args.m, args.p, seed=args.seed)


def main(args) -> int:
    """Runs ``gthinker generate``: makes the graph, writes it, prints a summary on
    stderr (and with ``--stats`` the measured stats on stdout).

    Returns
    -------
    int
        0 on success, 2 on bad parameters or an unwritable output file (the message
        goes to stderr, without a traceback).
    """
    if getattr(args, "list", False):
        print("\n".join(preset_table()))
        return 0
    try:
        if args.model == "preset" and args.name is None:
            raise ValueError("give a preset NAME (gthinker generate preset --list shows them)")
        if args.output is None:
            raise ValueError("give the output file: -o FILE")
        return _generate(args)
    except (ValueError, GThinkerError) as exc:
        print(f"gthinker generate: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"gthinker generate: error: cannot write {args.output}: {exc.strerror or exc}",
              file=sys.stderr)
        return 2


def _generate(args) -> int:
    from gthinker.graphs.files import output_format
    from gthinker.memory import describe, peak_rss_bytes

    t0 = time.perf_counter()
    out = Path(args.output)
    to = output_format(out, args.format)  # a bad --format stops before the work

    def progress(text):
        if not args.quiet:
            print(f"[{time.perf_counter() - t0:7.1f}s] {text}", file=sys.stderr, flush=True)

    graph = _make(args, progress)
    if args.edge_labels is not None or args.directed:
        from gthinker.graphs import generate

        graph = generate.label_edges(graph, args.edge_labels, args.edge_label_skew,
                                     seed=args.seed, directed=args.directed)
    made = time.perf_counter() - t0
    progress(f"generated {graph.num_vertices:,} vertices, {graph.num_edges:,} edges "
             f"(max degree {graph.max_degree:,}); writing {out}")
    what = convert_command.write_out(graph, out, to, args.prepare)
    name = args.name if args.model == "preset" else args.model
    print(f"generated {name}: {graph.num_vertices:,} vertices, {graph.num_edges:,} edges in "
          f"{made:.2f}s, written in {time.perf_counter() - t0 - made:.2f}s -> {out} ({what}); "
          f"peak memory {describe(peak_rss_bytes())}", file=sys.stderr)
    if args.stats:
        from gthinker.cli import stats

        stats.print_stats(stats.graph_stats(graph), False, sys.stdout)
    return 0
