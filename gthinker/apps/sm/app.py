"""Subgraph matching: count (or list) the embeddings of a query graph in a data graph.

An *embedding* is an injective map of the query's vertices to data vertices
that keeps labels (when the graphs are labeled) and maps every query edge to a
data edge (non-induced matching, the convention of the subgraph-matching
literature). ``unique=True`` counts distinct subgraphs instead: embeddings
that differ only by an automorphism of the query count once, so
``embeddings == unique * |Aut(q)|``.

How the search works: :mod:`gthinker.apps.matching.planner` filters the candidates,
picks the matching order and the symmetry-breaking constraints on the host and
packs them into the job's ``params`` (:func:`plan`); the compiled search runs
on the CPU workers (:mod:`gthinker.apps.matching.search`: intersections of the
backward neighbours' lists, reused along the order, and timed-out branches
handed to other workers as partial matches) or on the GPU
(:mod:`gthinker.apps.matching.levels_gpu`). This module chooses where, and runs it.
"""

from __future__ import annotations

import contextlib
import dataclasses

import numpy as np

import gthinker
from gthinker.apps.matching.dispatch import (
    EXPAND_FANOUT,
    SMALL_SEARCH,
    SMResult,
    choose_gpu_mode,
    fanouts,
    run_plan,
    small_search,
)
from gthinker.extending import batches, check_output, say_skeleton

from ..matching import costs, counting
from ..matching.induced import induced_embeddings
from ..matching.labeled import effective_graphs, needs_labeled
from ..matching.labeled_run import count_labeled
from ..matching.pattern_plan import pattern_plan
from ..matching.patterns import PATTERNS, as_query, is_pattern, pattern
from ..matching.planner import (
    Plan,
    check_query,
    checked_order,
    filter_candidates,
    is_candidate,
    label_subgraph,
    match_labels,
    matching_order,
    plan,
    symmetry_constraints,
)
from ..matching.search import SubgraphMatching, search
from .options import SMOptions

__all__ = ["EXPAND_FANOUT", "PATTERNS", "Plan", "SMALL_SEARCH", "SMOptions", "SMResult",
           "SubgraphMatching",
           "as_query", "check_query", "checked_order", "choose_gpu_mode", "count", "fanouts",
           "filter_candidates", "is_candidate", "is_pattern", "match", "matching_order",
           "pattern", "pattern_plan", "plan", "search", "small_search", "symmetry_constraints"]


# ---- the Python API ------------------------------------------------------------------

def count(data, query, *, progress=None, **options) -> SMResult:
    """Counts the embeddings of ``query`` in ``data`` (or, with ``unique``, the
    distinct subgraphs).

    Unless it lists or claims matches (``limit``, ``output``), it counts the
    distinct subgraphs and multiplies by ``|Aut(q)|``: unless a GPU layout is asked
    for (``gpu_mode``), a clique goes to the
    oriented clique engine and a shape with a closed formula to the formula
    (:func:`gthinker.apps.matching.counting.count_plan`; a labeled query whose labels
    are all equal counts in the data subgraph of that label); any other query runs the
    search under the symmetry-breaking restrictions, its last levels counted from
    intersection sizes.

    Parameters
    ----------
    data, query : gthinker.Graph, or anything :func:`gthinker.as_graph` takes
        ``query`` may also be a pattern name (see :func:`pattern`). Labels as
        :func:`~gthinker.apps.matching.planner.match_labels` says.
    progress : callable, optional
        Called with the runtime's snapshot dict every couple of seconds.
    **options
        The options of :class:`SMOptions`, each with its default and rule (as ``gthinker
        sm --help`` lists them): ``mode`` (``"auto"``: the GPU alone where a CUDA GPU is
        usable, G-ThinkerCG's advice for SM, measured in docs/benchmarks.md, else the
        CPU; the CPU with ``limit`` or ``output``, for a search smaller than
        :data:`SMALL_SEARCH` partial matches, and for a shape counted by formula),
        ``unique``, ``gpu_mode`` (the depth-first engine,
        :mod:`gthinker.apps.matching.dfs_gpu`, or a record layout of the level-by-level
        one, :mod:`gthinker.apps.matching.levels_gpu`; ``"auto"`` picks it with
        :func:`choose_gpu_mode`), ``gpu_memory`` (the GPU memory the graph's copy may
        take: a graph larger is matched in parts,
        :mod:`gthinker.apps.matching.partitions`), ``limit`` (stop after this many
        matches: the count is then ``limit``, and ``stopped == "limit"``; CPU only),
        ``output`` (write every match, or the first ``limit``, to this file, one per line:
        the data vertices, original ids, matched to query vertices 0, 1, ...; CPU only),
        ``induced`` (count induced matches: :mod:`gthinker.apps.matching.induced`),
        ``ignore_labels`` (the rule for labels:
        :func:`gthinker.apps.matching.planner.match_labels`); and those of
        :func:`gthinker.run` (``threads``, ``time_budget``, ``spill_limit``,
        ``stop``, ...).
    """
    # The arguments first, before a graph file is read or anything planned.
    opts, options = SMOptions.split(options)
    check_output(opts.output, [data, query])  # before a graph file is read
    data = gthinker.as_graph(data)
    query = as_query(query)
    data, query, labels = match_labels(data, query, opts.ignore_labels)
    check_query(data, query)
    if needs_labeled(data, query, opts.semantics):
        if opts.induced:
            raise ValueError("induced (--induced) matching takes queries without edge labels "
                             "or directions")
        return dataclasses.replace(_labeled(data, query, opts, progress, options),
                                   labels=labels)
    if query.plain:
        say_skeleton(data, "sm: a query without edge labels or directions")
    if opts.induced:
        return _induced(data, query, opts, progress, options, labels)
    return dataclasses.replace(_count(data, query, opts, progress, options), labels=labels)


def _count(data, query, opts, progress, options) -> SMResult:
    """The non-induced count of :func:`count` (labels applied)."""
    limit, output = opts.limit, opts.output
    listing = limit is not None or output is not None
    if not listing and opts.gpu_mode == "auto" and not {"records", "vertices"} & options.keys():
        # (records and vertices are the search's own: a cluster's node hands them on; a
        # GPU layout asked for is the matcher's)
        done, weighed = _by_count_engines(data, query, opts.unique, opts.mode, progress,
                                          dict(options, gpu_memory=opts.gpu_memory))
        if done is not None:
            return done
    else:
        weighed = None
    p = plan(data, query, opts.unique or not listing, limited=limit is not None)
    res, chosen, why = run_plan(data, p, opts.mode, opts.gpu_mode, listing, opts.gpu_memory,
                                limit=limit, output=output, progress=progress, **options)
    n = res.counters["matches"]
    because, stats = "", res.stats
    if weighed is not None:  # a shape with a formula the search counts
        because, stats = weighed.why(p.pattern.shape), {**stats, "costs": weighed.stats()}
    return SMResult(count=n if opts.unique or listing else n * p.automorphisms,
                    unique=opts.unique, automorphisms=p.automorphisms, seconds=res.seconds,
                    mode=res.mode, threads=res.threads, order=[int(u) for u in p.order],
                    candidates=[len(c) for c in p.candidates], gpu_mode=chosen,
                    stopped=res.stopped, stats=stats, compile_seconds=res.compile_seconds,
                    mode_reason="; ".join(filter(None, (because, why))))


def _labeled(data, query, opts, progress, options) -> SMResult:
    """The count of a query with edge labels or directions, or under homomorphism or
    edge-isomorphism (:mod:`gthinker.apps.matching.labeled`, on the CPU)."""
    data, query = effective_graphs(data, query)
    res = count_labeled(data, query, opts.semantics, opts.unique, opts.mode, limit=opts.limit,
                        output=opts.output, progress=progress, **options)
    return SMResult(count=res.count, unique=opts.unique, automorphisms=res.automorphisms,
                    seconds=res.seconds, mode=res.mode, threads=res.threads, order=res.order,
                    candidates=[], stopped=res.stopped, stats=res.stats,
                    compile_seconds=res.compile_seconds, mode_reason=res.why,
                    method=f"subgraph matching ({opts.semantics}, edge labels and directions)")


def _induced(data, query, opts, progress, options, labels) -> SMResult:
    """Induced matches: the embeddings of the query's supergraphs, summed by
    inclusion-exclusion (:mod:`gthinker.apps.matching.induced`)."""
    plain = dataclasses.replace(opts, induced=False, unique=False)
    parts = []

    def embeddings(graph):
        parts.append(_count(data, graph, plain, progress, dict(options)))
        return parts[-1].count

    n = induced_embeddings(query, embeddings)
    first = parts[0]  # the query itself
    return dataclasses.replace(
        first, count=n // first.automorphisms if opts.unique else n, unique=opts.unique,
        seconds=sum(p.seconds for p in parts),
        compile_seconds=sum(p.compile_seconds for p in parts), induced=True, labels=labels,
        method=f"induced: inclusion-exclusion over {len(parts)} supergraph counts",
        stopped=next((p.stopped for p in parts if p.stopped), None))


def _by_count_engines(data, query, unique, mode, progress, options):
    """The count of a clique or of a shape with a formula, from the counting app
    (distinct subgraphs, times ``|Aut(q)|`` for embeddings), or None for other queries
    and a shape the search counts; and the :class:`~gthinker.apps.matching.costs.Costs`
    weighed to choose (a shape of ``costs.WEIGHED_SHAPES``, gpu and hybrid modes), else
    None."""
    pp = pattern_plan(query)
    if pp.clique is None and pp.shape not in counting.FORMULA_SHAPES:
        return None, None
    graph = data if data.labels is None else label_subgraph(data, pp.uniform_label)
    weighed = costs.weighed(graph, pp, mode) if pp.clique is None else None
    if not counting.takes(pp, mode, graph):
        return None, weighed
    res = counting.count_plan(graph, pp, mode=mode, progress=progress, **options)
    return SMResult(count=res.count if unique else res.count * pp.automorphisms,
                    unique=unique, automorphisms=pp.automorphisms, seconds=res.seconds,
                    mode=res.mode, threads=res.threads, order=list(pp.order), candidates=[],
                    stats=res.stats, compile_seconds=res.compile_seconds,
                    mode_reason=res.mode_reason, method=res.method), weighed


def match(data, query, **options) -> np.ndarray:
    """Lists the matches: an int64 array with one row per match (at most
    ``limit``) and one column per query vertex, holding the data vertex (its
    original id) matched to it. Row order differs from run to run. For a
    networkx graph whose nodes are not integers, an object array of node names
    (of the same shape, whatever the names are: tuples, strings, mixed). The options
    are those of :func:`count` (``unique``, ``limit``, ``threads``, ...); it runs on the
    CPU. The matches stream out of the search as it finds them
    (:func:`gthinker.extending.batches`), as every listed result does.

    >>> import networkx as nx
    >>> match(nx.complete_graph(3), "triangle", unique=True, threads=1).tolist()
    [[0, 1, 2]]
    """
    data = gthinker.as_graph(data)
    query = as_query(query)
    nq = query.num_vertices

    def search(**output):
        count(data, query, mode="cpu", **output, **options)

    with contextlib.closing(batches(search)) as found:
        rows = [batch.values for batch in found]
    rows = np.concatenate(rows).reshape(-1, nq) if rows else np.zeros((0, nq), np.int64)
    names = data.node_names
    if names is not None:  # one element per name: tuple names must not become rows
        return np.fromiter(names, dtype=object, count=len(names))[rows]
    return rows
