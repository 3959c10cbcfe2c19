"""Pattern counting: triangles, k-cliques, cliques of every size, motifs and any small
pattern, counted as distinct subgraphs without listing them.

A clique is counted on the graph oriented by degeneracy order, each clique once from
its first vertex, the last levels by intersection sizes and popcounts; triangles on the
CPU at their middle vertex; 4-cycles, tailed triangles, houses and most 5-vertex shapes
by formulas; any other pattern by the matching search with symmetry breaking. Those
engines are shared with subgraph matching: :mod:`gthinker.apps.matching.counting`
(:func:`count_plan`). This module adds what only the count app does:
``pattern="cliques"`` counts the k-cliques for every k at once without listing them
(Pivoter's succinct clique tree, :mod:`gthinker.apps.count.pivoter`), ``"motifs"`` every
connected pattern of 3 to 5 vertices (:mod:`gthinker.apps.count.motifs`), and
``per_vertex`` the triangles at every vertex.

Examples
--------
>>> import networkx as nx
>>> from gthinker.apps import count
>>> count.count(nx.complete_graph(5), "4-clique", threads=1).count
5
>>> count.count(nx.complete_graph(5), "cliques", threads=1).counts
{1: 5, 2: 10, 3: 10, 4: 5, 5: 1}
"""

from __future__ import annotations

import dataclasses
import os
import re
import time

import numpy as np

import gthinker
from gthinker.extending import idle_stats, say_skeleton

from ..matching import formulas, neighbourhoods
from ..matching.counting import (
    FORMULA_SHAPES,
    CliqueCount,
    CountResult,
    MiddleGraph,
    MiddleTriangles,
    count_by_formula,
    count_k_cliques,
    count_plan,
    edge_sums,
    middle_graph,
    neighbourhood_sums,
    oriented,
    takes,
    vertex_ranges,
)
from ..matching.induced import induced_embeddings
from ..matching.labeled import ISOMORPHISM, effective_graphs, needs_labeled
from ..matching.labeled_run import count_labeled
from ..matching.pattern_plan import pattern_plan
from ..matching.patterns import PATTERNS, as_query, is_pattern
from ..matching.patterns import pattern as named_pattern
from ..matching.planner import check_query, label_subgraph, match_labels
from ..matching.ranges import spill_rest, work_ranges
from . import motifs
from .options import CountOptions
from .pivoter import CliqueTree, clique_counts, tally_bins

__all__ = ["CliqueCount", "CliqueTree", "CountOptions", "CountResult", "MiddleGraph",
           "MiddleTriangles", "VertexTriangles", "count", "count_plan", "oriented",
           "middle_graph", "takes", "work_ranges", "clique_size"]

_CLIQUE = re.compile(r"^(\d+)-clique$")


def clique_size(pattern) -> int | None:
    """k for ``"triangle"`` (3), ``"k-clique"``, or a pattern file or graph that is a
    k-clique (unlabeled, or all its labels equal); None for any other pattern."""
    if pattern == "triangle":
        return 3
    if isinstance(pattern, str):
        m = _CLIQUE.match(pattern)
        if m or is_pattern(pattern) or pattern == "cliques" or not os.path.exists(pattern):
            return int(m.group(1)) if m else None
    query = as_query(pattern)
    n = query.num_vertices
    uniform = query.labels is None or len(np.unique(query.labels)) <= 1
    return n if n and uniform and query.num_edges == n * (n - 1) // 2 else None


# ---- triangles at every vertex ---------------------------------------------------------


@gthinker.compiler.jit("counting functions", nogil=True)
def _vertex_triangles_at(ctx, v, mark, per):
    """Adds each triangle whose first vertex is ``v`` to ``per`` at its three
    vertices (``v``, its out-neighbour ``u``, and ``w``, an out-neighbour of both)."""
    nb = ctx.neighbors(v)
    for i in range(nb.size):
        mark[nb[i]] = 1
    at_v = 0
    for i in range(nb.size):
        u = nb[i]
        row = ctx.neighbors(u)
        at_u = 0
        for j in range(row.size):
            w = row[j]
            if mark[w]:
                at_u += 1
                per[w] += 1
        per[u] += at_u
        at_v += at_u
    per[v] += at_v
    for i in range(nb.size):
        mark[nb[i]] = 0


@gthinker.compiler.jit("counting functions", nogil=True)
def _vertex_triangles_range(ctx, lo, hi):
    per = ctx.histograms[0]  # one bin per vertex (the run's histogram_bins is n)
    mark = np.zeros(ctx.indptr.size - 1, np.uint8)
    for v in range(lo, hi):
        if ctx.timed_out():
            spill_rest(ctx, v, hi)
            break
        if ctx.degree(v) >= 2:
            _vertex_triangles_at(ctx, v, mark, per)


class VertexTriangles(gthinker.Task):
    """Counts, for every vertex of an oriented graph (:func:`oriented`), the
    triangles that contain it: histogram bin ``v`` (``histogram_bins = n``,
    one row of n int64 per worker). Records are ranges ``[-1 - lo, hi]``."""

    histograms = ("triangles",)

    @staticmethod
    def compute(ctx, record):
        _vertex_triangles_range(ctx, -1 - record[0], record[1])


# ---- the API ------------------------------------------------------------------------


def count(graph, pattern="triangle", *, vertices: range | None = None, progress=None,
          **options) -> CountResult:
    """Counts the distinct subgraphs of ``graph`` isomorphic to ``pattern``
    (not necessarily induced), or, for ``pattern="cliques"``, the k-cliques of
    every size k, or, for ``pattern="motifs"``, every connected pattern of ``size``
    vertices (:mod:`gthinker.apps.count.motifs`).

    How: a clique (named, or a file or graph that is one) on the degeneracy-oriented
    graph; 4-cycles, tailed triangles, houses and most 5-vertex shapes by formulas from
    per-edge triangle and 4-cycle counts (:mod:`gthinker.apps.matching.formulas`) or from
    each vertex's neighbourhood graph (:mod:`gthinker.apps.matching.neighbourhoods`), on
    the CPU; any other pattern
    by the matching search under the symmetry-breaking restrictions of its pattern
    plan (:mod:`gthinker.apps.matching.pattern_plan`), its last levels counted from
    intersection sizes.

    Parameters
    ----------
    graph : gthinker.Graph, or anything :func:`gthinker.as_graph` takes
    pattern : str or graph
        ``"triangle"``, ``"k-clique"``, ``"cliques"``, any name of
        :func:`gthinker.apps.sm.pattern` (``"4-cycle"``, ``"diamond"``,
        ``"house"``, ``"k-path"``, ``"k-star"``, ...), a pattern file or a graph.
    vertices : range, optional
        Only the subgraphs counted from these first vertices (ids of ``graph``;
        for other patterns than cliques, the data vertex of the first query
        vertex in the matching order): ranges partition the count, for
        splitting it over processes (:mod:`gthinker.cluster`).
    progress : callable, optional
        Called with the runtime's snapshot dict every couple of seconds.
    **options
        The options of :class:`CountOptions`, each with its default and rule (as
        ``gthinker count --help`` lists them): ``mode`` (``"auto"`` uses a CUDA GPU where
        one is usable), ``size`` (with ``pattern="motifs"``: the motif size, 3, 4 or 5),
        ``induced`` (with ``pattern="motifs"``: induced counts, the default, as igraph's
        ``motifs_randesu`` and ESCAPE give them: each connected vertex set counted once,
        in the motif its induced subgraph is; or non-induced, distinct subgraphs, as for
        a single pattern; with a single pattern, ``induced=True`` counts the induced
        ones, :mod:`gthinker.apps.matching.induced`), ``per_vertex`` (with
        ``pattern="triangle"``: also count the triangles at every vertex, into
        :attr:`CountResult.per_vertex`; CPU only, each worker keeps one int64 per
        vertex), ``ignore_labels`` (the rule for labels,
        :func:`gthinker.apps.matching.planner.match_labels`: a labeled graph's labels are
        ignored for an unlabeled pattern, and said so in ``labels``), ``semantics`` (what
        a match is; edge labels and directions counted by
        :mod:`gthinker.apps.matching.labeled`), ``gpu_memory`` (the GPU memory the graph's
        copy may take: a graph larger is counted in parts,
        :mod:`gthinker.apps.matching.partitions`; the GPU clique engine and the matching
        search); and those of :func:`gthinker.run` (``threads``, ``time_budget``,
        ``spill_limit``, ``cpu_chunk``, ``stop``, ...).

    >>> import networkx as nx
    >>> G = nx.karate_club_graph()
    >>> count(G, "triangle", threads=1).count, sum(nx.triangles(G).values()) // 3
    (45, 45)
    >>> count(nx.Graph([(0, 1), (1, 2), (0, 2), (2, 3)]), "triangle", per_vertex=True,
    ...       threads=1).per_vertex.tolist()
    [1, 1, 1, 0]
    >>> count(nx.complete_graph(4), "motifs", size=3, threads=1).counts
    {'3-path': 0, 'triangle': 4}
    """
    # The arguments first, before a graph file is read: threads=0 is not all cores.
    opts, options = CountOptions.split(options)
    check_pattern(pattern, opts)
    k = clique_size(pattern)
    if k is not None and k < 1:
        raise ValueError(f"a k-clique has k >= 1 vertices, got {pattern!r}")
    graph = gthinker.as_graph(graph)
    if vertices is not None:
        if not (isinstance(vertices, range) and vertices.step == 1):
            raise TypeError(f"vertices must be a range(lo, hi), got {vertices!r}")
        options["vertices"] = vertices
    name = pattern_name(pattern)
    graph, pattern, labels = _labels(graph, pattern, opts)
    res = _count(graph, pattern, k, opts, progress, options)
    induced = opts.induced if opts.induced is not None else pattern == "motifs"
    if res.per_vertex is not None:
        res.vertex_ids = graph.node_names if graph.node_names is not None else graph.ids
    return dataclasses.replace(res, pattern=name, labels=labels,
                               induced=induced or k is not None or pattern == "cliques")


def pattern_name(pattern) -> str:
    """The name a result gives a pattern: as given, or a file's name (not its path)."""
    if not isinstance(pattern, str):
        return "pattern"
    return os.path.basename(pattern) if os.path.isfile(pattern) else pattern


def _labels(graph, pattern, opts):
    """The graph and pattern to count, by the rule for labels (:func:`match_labels`: a
    pattern name is unlabeled), and what became of the labels. Count's engines count
    unlabeled patterns: a labeled pattern counts in the subgraph of its one label, and
    one of several labels is sm's (ValueError); a pattern that needs the search of
    edge labels and directions (:func:`needs_labeled`) keeps its vertex labels, which
    that search honours."""
    named = pattern in ("cliques", "motifs") or (isinstance(pattern, str)
                                                 and not os.path.exists(pattern))
    query = named_pattern("triangle") if named else as_query(pattern)
    graph, query, labels = match_labels(graph, query, opts.ignore_labels)
    if labels == "honoured" and not needs_labeled(graph, query, opts.semantics):
        kinds = np.unique(query.labels)
        if kinds.size > 1:
            raise ValueError("count counts unlabeled patterns (or patterns whose labels are "
                             "all equal); match several labels with `gthinker sm`, or count "
                             "the structure only with ignore_labels (--ignore-labels)")
        graph = graph.derived(("label", int(kinds[0])),
                              lambda g: label_subgraph(g, int(kinds[0])))
        query = gthinker.Graph(query.indptr, query.indices)
    return graph, pattern if named else query, labels


def _count(graph, pattern, k, opts, progress, options) -> CountResult:
    """:func:`count` of a graph and pattern that the rule for labels let through."""
    mode, size = opts.mode, opts.size
    threads, time_budget = options.pop("threads", None), options.pop("time_budget", None)
    name = pattern if isinstance(pattern, str) else "pattern"
    if opts.semantics != ISOMORPHISM or not graph.plain:
        res = _labeled(graph, pattern, name, opts,
                       dict(options, threads=threads, time_budget=time_budget, progress=progress))
        if res is not None:
            return res
    say_skeleton(graph, f"count {name}")
    if opts.per_vertex:
        return _per_vertex(graph, name, k, mode, threads, time_budget, progress, options)
    if pattern == "motifs":
        return _motifs(graph, size, opts.induced is not False, mode, threads, time_budget,
                       progress, options, opts.gpu_memory)
    if pattern == "cliques":
        return _every_clique_size(graph, mode, threads, time_budget, progress, options)
    if opts.induced and k is None:
        return _induced(graph, pattern, opts, progress, options,
                        dict(threads=threads, time_budget=time_budget))
    if k is not None:
        return count_k_cliques(graph, name, k, mode, threads, time_budget, progress, options,
                               opts.gpu_memory)
    t0 = time.perf_counter()
    pp = pattern_plan(_query_of(pattern, graph))
    options["prepare_seconds"] = time.perf_counter() - t0
    return count_plan(graph, pp, name, mode, threads, time_budget, progress,
                      gpu_memory=opts.gpu_memory, **options)


def _labeled(graph, pattern, name, opts, options) -> CountResult | None:
    """The count of a pattern with edge labels or directions, or under homomorphism or
    edge-isomorphism (:mod:`gthinker.apps.matching.labeled`): distinct subgraphs under
    isomorphism, embeddings under the others; None where the count engines count it
    (on the graph's undirected skeleton)."""
    if opts.per_vertex or pattern in ("motifs", "cliques"):
        if opts.semantics != ISOMORPHISM:
            raise ValueError("semantics (--semantics) goes with a single pattern")
        return None
    query = as_query(pattern)
    check_query(graph, query)
    if not needs_labeled(graph, query, opts.semantics):
        return None
    if opts.induced:
        raise ValueError("induced (--induced) counts take patterns without edge labels or "
                         "directions, under isomorphism")
    graph, query = effective_graphs(graph, query)
    t0 = time.perf_counter()
    options = {k: v for k, v in options.items() if v is not None}
    res = count_labeled(graph, query, opts.semantics, True, opts.mode, **options)
    return CountResult(name, res.count, res.seconds, res.mode, res.threads,
                       f"subgraph matching ({opts.semantics}, edge labels and directions)",
                       prepare_seconds=time.perf_counter() - t0 - res.seconds,
                       compile_seconds=res.compile_seconds, mode_reason=res.why,
                       stats=res.stats)


def _induced(graph, pattern, opts, progress, options, scheduler) -> CountResult:
    """Induced subgraphs of one pattern: the distinct subgraphs of its supergraphs, times
    their automorphisms, summed by inclusion-exclusion
    (:mod:`gthinker.apps.matching.induced`), over the pattern's automorphisms."""
    plain = {**opts.keywords(), "induced": False, "ignore_labels": False}
    parts = []

    def embeddings(g):
        parts.append(count(graph, g, progress=progress, **plain, **scheduler, **options))
        return parts[-1].count * pattern_plan(g).automorphisms

    query = as_query(pattern)
    n = induced_embeddings(query, embeddings)
    first = parts[0]
    return dataclasses.replace(
        first, count=n // pattern_plan(query).automorphisms,
        seconds=sum(p.seconds for p in parts),
        compile_seconds=sum(p.compile_seconds for p in parts),
        prepare_seconds=sum(p.prepare_seconds for p in parts),
        method=f"induced: inclusion-exclusion over {len(parts)} supergraph counts")


def _motifs(graph, size, induced, mode, threads, time_budget, progress, options,
            gpu_memory=None):
    """Every connected pattern of ``size`` vertices (:mod:`gthinker.apps.count.motifs`);
    the per-edge sums of the formulas computed once, on the CPU. In modes gpu and
    hybrid the cliques and the searched shapes run in that mode (the clique engine, the
    depth-first matcher); mode auto keeps them all on the CPU, where a motif run of a
    graph the size of facebook_combined takes seconds. A stop token set during one of its
    jobs (Ctrl-C on the command line) ends the run after that job: the motifs not
    counted then are 0 and listed in ``stats["not_counted"]``, and stay non-induced."""
    search_mode = mode if mode in ("gpu", "hybrid") else "cpu"
    if "vertices" in options:
        raise ValueError("motif counts take no vertices range")
    names = motifs.motif_names(size)
    plans = {n: pattern_plan(named_pattern(n)) for n in names}
    sums = local = None
    prepare = 0.0  # the neighbourhoods' graph, once
    if any(p.shape in formulas.FORMULAS for p in plans.values()):
        sums = edge_sums(graph, threads, time_budget, progress, dict(options))
    if any(p.shape in neighbourhoods.SHAPES for p in plans.values()) and not _stopped(options):
        local, prepare = neighbourhood_sums(graph, threads, time_budget, progress,
                                             dict(options))
    parts = {}
    for n, p in plans.items():
        if _stopped(options):  # stopped (Ctrl-C in a job): the rest is not started
            break
        if p.shape in FORMULA_SHAPES:
            job = local if p.shape in neighbourhoods.SHAPES else sums
            parts[n] = count_by_formula(graph, n, p.shape, threads, time_budget, progress, options,
                                0.0, job)
        else:
            parts[n] = count_plan(graph, p, n, search_mode, threads, time_budget, progress,
                                  gpu_memory=gpu_memory, **options)
    counts = {n: parts[n].count if n in parts else 0 for n in names}
    if induced and len(parts) == len(names):
        counts = motifs.induced_counts(size, counts)
    seconds = sum(r.seconds for r in parts.values() if r.method != f"formula ({r.pattern})")
    seconds += sum(job.seconds for job in (sums, local) if job is not None)
    on_gpu = sorted(n for n, r in parts.items() if r.mode != "cpu")
    return CountResult(
        "motifs", sum(counts.values()), seconds, search_mode if on_gpu else "cpu",
        max((r.threads for r in parts.values()), default=0),
        f"motifs ({'induced' if induced else 'non-induced'})", counts=counts,
        prepare_seconds=prepare + sum(r.prepare_seconds for r in parts.values()),
        compile_seconds=sum(r.compile_seconds for r in parts.values()),
        mode_reason=(f"{', '.join(on_gpu)} on the GPU; the formulas on the CPU" if on_gpu
                     else "motif counts run on the CPU unless a GPU mode is asked for"),
        stats={"methods": {n: r.method for n, r in parts.items()},
               "seconds": {n: r.seconds for n, r in parts.items()},
               "not_counted": [n for n in names if n not in parts]})


def _stopped(options) -> bool:
    """Has the run's stop token (``options["stop"]``, a :class:`gthinker.StopToken`)
    been set: by the caller, or by Ctrl-C during one of its jobs?"""
    stop = options.get("stop")
    return stop is not None and stop.is_set()


def _per_vertex(graph, name, k, mode, threads, time_budget, progress, options):
    """Triangles in all and at every vertex (CPU)."""
    if k != 3:
        raise ValueError(f"per_vertex counts triangles; pattern {name!r} is not 'triangle'")
    if mode in ("gpu", "hybrid"):
        raise ValueError("per-vertex triangle counts run on the CPU only; use mode='cpu'")
    mode, why = gthinker.gpu.resolve_mode(mode, cpu_because="per-vertex counts run on the CPU")
    t0 = time.perf_counter()
    dag = oriented(graph)
    prepare = time.perf_counter() - t0
    n = graph.num_vertices
    threads = threads or gthinker.default_threads()
    if n == 0:
        return CountResult(name, 0, 0.0, mode, threads, "per vertex (oriented)",
                           per_vertex=np.zeros(0, np.int64), mode_reason=why,
                           stats=idle_stats())
    options.setdefault("cpu_task_batch", 1)
    res = gthinker.run(VertexTriangles, dag, mode="cpu", threads=threads,
                       time_budget=time_budget, vertices=[],
                       records=vertex_ranges(dag, 16 * threads, options.pop("vertices", None)),
                       histogram_bins=n,
                       progress=progress, **options)
    per = res.histograms["triangles"]
    return CountResult(name, int(per.sum()) // 3, res.seconds, mode, res.threads,
                       "per vertex (oriented)", prepare_seconds=prepare,
                       compile_seconds=res.compile_seconds, mode_reason=why, stats=res.stats,
                       per_vertex=per)


def _every_clique_size(graph, mode, threads, time_budget, progress, options):
    """The k-cliques of every size k (Pivoter's clique tree, on the CPU)."""
    mode, why = gthinker.gpu.resolve_mode(mode, auto="gpu",
                                          cpu_because=gthinker.gpu.small_graph(graph))
    if mode != "cpu":
        mode, why = "cpu", "counting every clique size runs on the CPU"
    t0 = time.perf_counter()
    dag = oriented(graph)
    prepare = time.perf_counter() - t0
    width = graph.degeneracy + 2
    res = gthinker.run(CliqueTree, dag, mode="cpu", threads=threads, time_budget=time_budget,
                       params=[width], histogram_bins=tally_bins(width), progress=progress,
                       **options)
    counts = clique_counts(res.histograms["leaves"], width) if graph.num_vertices else {}
    return CountResult("cliques", sum(counts.values()), res.seconds, res.mode, res.threads,
                       "pivoter", counts=counts, prepare_seconds=prepare,
                       compile_seconds=res.compile_seconds, mode_reason=why, stats=res.stats)


def check_pattern(pattern, options: CountOptions | None = None) -> None:
    """ValueError for a pattern string that is no name count knows and no file, or for
    ``options`` (:class:`CountOptions`) that do not go with it: what the command line
    checks before it reads the graph."""
    if options is not None:
        if (options.size is not None) != (pattern == "motifs"):
            raise ValueError("size (--size) goes with pattern 'motifs' (the motif size), and "
                             "'motifs' needs it")
        if options.per_vertex and clique_size(pattern) != 3:
            raise ValueError(f"per_vertex counts triangles at each vertex (--per-vertex); "
                             f"pattern {pattern!r} is not 'triangle'")
    if (isinstance(pattern, str) and pattern not in ("cliques", "motifs")
            and not os.path.exists(pattern) and not is_pattern(pattern)):
        names = [p for p in PATTERNS if p != "triangle"]
        raise ValueError(f"unknown pattern {pattern!r}: use triangle, k-clique, cliques, "
                         f"motifs, {', '.join(names)}, k-path, k-star, or a pattern file")


def _query_of(pattern, graph) -> gthinker.Graph:
    """The unlabeled query graph of a pattern name, file or graph; ValueError for an
    unknown name, a labeled data graph, or a pattern with more than one label."""
    check_pattern(pattern)
    query = as_query(pattern)
    check_query(graph, query)  # the rule for labels applied (_labels)
    return query
