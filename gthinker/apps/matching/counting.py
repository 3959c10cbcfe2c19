"""Counting the distinct subgraphs of a pattern without listing them: the engines that
the count app and subgraph matching share.

Cliques are counted on the *oriented* graph: every edge points from the
vertex earlier in degeneracy order to the later one, so a vertex has at most
``degeneracy`` out-neighbours and every clique is found exactly once, from its
first vertex, with no symmetry checks [1]_ [2]_. A task is a prefix clique
``[v0, v1, ...]``; its candidates are the common out-neighbours of the
prefix. Two vertices short of a k-clique the task counts edges among the
candidates by intersection sizes; further out it turns the candidates into a
small local graph of bitsets and searches it, counting the last level by
popcounts. Nothing of the last level is ever listed. Triangles on the CPU are
counted at their middle vertex instead (:class:`MiddleTriangles`: the sum of
C(out-degree, 2) lookups, not in-degree times out-degree), on the graph oriented by
degree (cheaper to order than by degeneracy, and as fast to count on).

:func:`count_plan` counts a pattern by its plan
(:func:`gthinker.apps.matching.pattern_plan.pattern_plan`): a clique here, a shape with a
formula by :mod:`gthinker.apps.matching.formulas` or
:mod:`gthinker.apps.matching.neighbourhoods`, anything else by the matching search
(:mod:`gthinker.apps.matching.dispatch`) under the plan's symmetry-breaking
restrictions. In modes cpu and auto a formula always counts its shape; in gpu and hybrid
modes the formula (on the CPU) only where the search would be
:data:`~gthinker.apps.matching.costs.FORMULA_RATIO` times costlier or more, as
:mod:`gthinker.apps.matching.costs` estimates (a 4-cycle on a graph with a hub), and the
result's ``mode_reason`` says which ran and why. The count app (:mod:`gthinker.apps.count`)
and subgraph matching (:func:`gthinker.apps.sm.count`, which multiplies by ``|Aut(q)|``)
both count this way.

Task records (int32): cliques ``[-1 - lo, hi]`` (the cliques whose first
vertex is in ``[lo, hi)``; triangles look their vertices' out-neighbours up in
a mark array kept for the whole range; for :class:`MiddleTriangles`, middle
vertices of :class:`MiddleGraph`) or ``[v0, ..., vj]`` (a prefix clique).

References
----------
.. [1] M. Danisch, O. Balalau, M. Sozio, "Listing k-cliques in sparse
   real-world graphs", WWW 2018 (kClist).
.. [2] X. Chen, R. Dathathri, G. Gill, L. Hoang, K. Pingali, "Efficient and
   scalable graph pattern mining on GPUs", OSDI 2022 (G2Miner).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

import gthinker
from gthinker.extending import (
    idle_stats,
    intersect,
    intersect_size,
    lowest_bit,
    pop_lowest,
    popcount,
    put,
)

from . import costs, dispatch, formulas, neighbourhoods, partitions, planner
from .local_graphs import local_graph
from .pattern_plan import PatternPlan
from .ranges import spill_rest, work_ranges

__all__ = ["CliqueCount", "CountResult", "FORMULA_SHAPES", "MiddleGraph", "MiddleTriangles",
           "by_formula", "count_by_formula", "count_k_cliques", "count_plan", "edge_sums",
           "four_cycles", "middle_graph",
           "neighbourhood_sums", "oriented", "takes", "vertex_ranges"]


# ---- the oriented graph ---------------------------------------------------------------


def oriented(graph: gthinker.Graph) -> gthinker.Graph:
    """The graph oriented by degeneracy order: a DAG whose row ``v`` holds the
    neighbours that come after ``v`` (at most ``graph.degeneracy`` of them),
    sorted by id. A directed CSR: only counting tasks read it this way. Kept
    with ``graph`` (:meth:`gthinker.Graph.derived`): counting again orients nothing."""
    return graph.oriented()


# ---- k-cliques: prefix tasks, local bitset graphs, count-only last level ---------------


@gthinker.compiler.jit("counting functions", nogil=True)
def _common_out(ctx, rec, buf):
    """The common out-neighbours of the prefix ``rec`` into ``buf``; returns
    their number. The last intersection is left to the caller when it only
    needs its size."""
    first = ctx.neighbors(rec[0])
    n = first.size
    put(buf, 0, first)
    for j in range(1, rec.size):
        n = intersect(buf, n, ctx.neighbors(rec[j]), buf)
    return n


@gthinker.compiler.jit("counting functions", nogil=True)
def _edges_among(ctx, rec, cand):
    """Triangles' worth of work: the edges among ``cand``, one intersection
    size per candidate; a timed-out task hands on ``rec + [u]`` for the rest."""
    total = 0
    for i in range(cand.size):
        if ctx.timed_out():
            for t in range(i, cand.size):
                task = np.empty(rec.size + 1, np.int32)
                put(task, 0, rec)
                task[rec.size] = cand[t]
                ctx.add_task(task)
            break
        total += intersect_size(cand, ctx.neighbors(cand[i]))
    return total


@gthinker.compiler.jit("counting functions", nogil=True)
def _count_last_two(rows, s, words):
    """Edges among the bits of ``s``: sum over its vertices i of |s & row i|."""
    total = 0
    for w in range(words):
        word = s[w]
        while word != 0:
            i = (w << 6) + lowest_bit(word)
            word &= word - 1
            row = rows[i]
            for t in range(words):
                total += popcount(s[t] & row[t])
    return total


@gthinker.compiler.jit("counting functions", nogil=True)
def _spill_cliques(ctx, rec, cand, path, rest, depth, words):
    """Every branch not yet taken at levels 0..depth becomes a prefix task."""
    for d in range(depth + 1):
        for w in range(words):
            word = rest[d, w]
            while word != 0:
                i = (w << 6) + lowest_bit(word)
                word &= word - 1
                task = np.empty(rec.size + d + 1, np.int32)
                put(task, 0, rec)
                for t in range(d):
                    task[rec.size + t] = cand[path[t]]
                task[rec.size + d] = cand[i]
                ctx.add_task(task)


@gthinker.compiler.jit("counting functions", nogil=True)
def _cliques_in(ctx, rec, cand, r):
    """The r-cliques of the oriented local graph on ``cand`` (r >= 3), depth
    first over bitsets; the last two levels are counted by popcounts."""
    c = cand.size
    words = (c + 63) >> 6
    rows = local_graph(ctx, cand, False)
    sets = np.zeros((r - 1, words), np.int64)  # candidates at each level
    rest = np.zeros((r - 1, words), np.int64)  # branches not yet taken
    path = np.empty(r, np.int32)
    for i in range(c):
        sets[0, i >> 6] |= 1 << (i & 63)
    rest[0] = sets[0]
    last = r - 2
    total = 0
    d = 0
    while d >= 0:
        if d == last:
            total += _count_last_two(rows, sets[d], words)
            d -= 1
            continue
        i = pop_lowest(rest[d], words)
        if i < 0:
            d -= 1
            continue
        if ctx.timed_out():
            rest[d, i >> 6] |= 1 << (i & 63)  # not taken after all
            _spill_cliques(ctx, rec, cand, path, rest, d, words)
            break
        path[d] = i
        size = 0
        for t in range(words):
            sets[d + 1, t] = sets[d, t] & rows[i, t]
            size += popcount(sets[d + 1, t])
        if size >= r - d - 1:  # enough candidates left for the rest of the clique
            rest[d + 1] = sets[d + 1]
            d += 1
    return total


@gthinker.compiler.jit("counting functions", nogil=True)
def _count_cliques(ctx, rec):
    k = ctx.params[0]
    r = k - rec.size  # vertices still to choose
    if r <= 0:
        return 1
    if r == 1:
        if rec.size == 1:
            return ctx.degree(rec[0])
        buf = np.empty(ctx.degree(rec[0]), np.int32)
        n = _common_out(ctx, rec[:-1], buf)
        return intersect_size(buf[:n], ctx.neighbors(rec[rec.size - 1]))
    buf = np.empty(ctx.degree(rec[0]), np.int32)
    n = _common_out(ctx, rec, buf)
    if n < r:
        return 0
    if r == 2:
        return _edges_among(ctx, rec, buf[:n])
    return _cliques_in(ctx, rec, buf[:n], r)


@gthinker.compiler.jit("counting functions", nogil=True, inline="always")
def _marked(mark, row):
    """How many ids of ``row`` are marked. Indexed as uint32 (no check for negative
    indices) and summed in int32: 1.3x faster than plain indexing (R-MAT 18, one thread)."""
    t = np.int32(0)
    for j in range(row.size):
        t += np.int32(mark[np.uint32(row[j])])
    return t


@gthinker.compiler.jit("counting functions", nogil=True)
def _triangles_at(ctx, v, mark):
    """Triangles with first vertex ``v``: the out-neighbours of each out-neighbour
    looked up in a mark array (no merge: one load per list element)."""
    nb = ctx.neighbors(v)
    for i in range(nb.size):
        mark[np.uint32(nb[i])] = 1
    total = 0
    for i in range(nb.size):
        total += _marked(mark, ctx.neighbors(nb[i]))
    for i in range(nb.size):
        mark[np.uint32(nb[i])] = 0
    return total


@gthinker.compiler.jit("counting functions", nogil=True)
def _count_range(ctx, lo, hi):
    """The cliques whose first vertex is in [lo, hi); a timed-out task hands the
    rest of its range on in two halves."""
    k = ctx.params[0]
    mark = np.zeros(ctx.indptr.size - 1 if k == 3 else 0, np.uint8)
    total = 0
    one = np.empty(1, np.int32)
    for v in range(lo, hi):
        if ctx.timed_out():
            spill_rest(ctx, v, hi)
            break
        if ctx.degree(v) < k - 1:
            continue
        if k == 3:
            total += _triangles_at(ctx, v, mark)
        else:
            one[0] = v
            total += _count_cliques(ctx, one)
    return total


class CliqueCount(gthinker.Task):
    """Counts the k-cliques (``params = [k]``) of an oriented graph (:func:`oriented`).
    A record is a range of first vertices ``[-1 - lo, hi]`` or a prefix clique."""

    counters = ("cliques",)

    @staticmethod
    def compute(ctx, record):
        if record[0] < 0:
            ctx.count(0, _count_range(ctx, -1 - record[0], record[1]))
        else:
            ctx.count(0, _count_cliques(ctx, record))


# ---- triangles on the CPU: each at its middle vertex -----------------------------------


@dataclass
class MiddleGraph:
    """The graph oriented by degree and renumbered by that rank (vertex ``r`` is the
    r-th of the order: by degree, then id; rows sorted, so a row's suffix after ``u``
    holds its out-neighbours past ``u``) with its in-rows: ``in_src[k]``, the ``k``-th
    in-neighbour ``v`` (``k`` in ``in_ptr[u]:in_ptr[u + 1]``), and ``in_off[k]``, where
    ``v``'s row goes on after ``u``. ``work``: cumulative probes up to each vertex (for
    even ranges)."""

    dag: gthinker.Graph
    in_ptr: np.ndarray
    in_src: np.ndarray
    in_off: np.ndarray
    work: np.ndarray

    def params(self) -> list[int]:
        return [self.in_ptr.ctypes.data, self.in_src.ctypes.data, self.in_off.ctypes.data,
                self.dag.num_vertices, self.in_src.size]


def _in_rows(out_ptr, in_ptr, in_src, in_pos, after):
    """The in-rows of an oriented CSR (see :class:`MiddleGraph`) and the cumulative work,
    from :func:`gthinker.graphs.csr.in_rows` of it."""
    # per vertex: the probes of each in-neighbour's row past it, and one each; its
    # own row, and one
    per_vertex = after + np.diff(in_ptr) + np.diff(out_ptr) + 1
    work = np.concatenate([[0], np.cumsum(per_vertex)])
    return in_ptr, in_src, in_pos + np.int32(1), work


def middle_graph(graph: gthinker.Graph) -> MiddleGraph:
    """The :class:`MiddleGraph` of ``graph``, kept with it (:meth:`gthinker.Graph.derived`)."""
    return graph.derived("count.middle", _middle_graph)


def _middle_graph(graph):
    dag = graph.degree_oriented()
    return MiddleGraph(dag, *_in_rows(dag.indptr, *graph.degree_in_rows()))


@gthinker.compiler.jit("counting functions", nogil=True, inline="always")
def _middle_triangles(indptr, indices, in_ptr, in_src, in_off, u, mark):
    """The triangles ``v < u < w`` (``v -> u``, ``v -> w``, ``u -> w``) at their
    middle vertex ``u``: the out-neighbours of ``u`` marked, then each in-neighbour
    ``v``'s row past ``u`` looked up in the marks."""
    nb = indices[indptr[u] : indptr[u + 1]]
    for i in range(nb.size):
        mark[np.uint32(nb[i])] = 1
    total = 0
    for k in range(in_ptr[u], in_ptr[u + 1]):
        v = in_src[k]
        total += _marked(mark, indices[indptr[v] + in_off[k] : indptr[v + 1]])
    for i in range(nb.size):
        mark[np.uint32(nb[i])] = 0
    return total


@gthinker.compiler.jit("counting functions", nogil=True)
def _middle_range(ctx, lo, hi):
    """The triangles whose middle vertex is in [lo, hi) (see :class:`MiddleGraph`;
    the in-rows' addresses are in ``ctx.params``)."""
    in_ptr, in_src, in_off = formulas.in_rows(ctx.params)
    indptr, indices = ctx.indptr, ctx.indices
    mark = np.zeros(ctx.params[3], np.uint8)
    total = 0
    for u in range(lo, hi):
        if ctx.timed_out():
            spill_rest(ctx, u, hi)
            break
        if in_ptr[u] < in_ptr[u + 1] and indptr[u] < indptr[u + 1]:
            total += _middle_triangles(indptr, indices, in_ptr, in_src, in_off, u, mark)
    return total


class MiddleTriangles(gthinker.Task):
    """Counts the triangles of a :class:`MiddleGraph` (the run's graph is its ``dag``,
    ``params`` its :meth:`MiddleGraph.params`), each at its middle vertex: 3.3x fewer
    lookups than from the first vertex on R-MAT graphs (sum of C(out-degree, 2)
    against sum of in-degree times out-degree). Records: ranges ``[-1 - lo, hi]``."""

    counters = ("cliques",)

    @staticmethod
    def compute(ctx, record):
        ctx.count(0, _middle_range(ctx, -1 - record[0], record[1]))


def vertex_ranges(dag: gthinker.Graph, parts: int,
                  within: range | None = None) -> tuple[np.ndarray, np.ndarray]:
    """About ``parts`` range records ``[-1 - lo, hi]`` of first vertices (all, or
    those of ``within``), of alike estimated work (out-degree squared), in the
    flat form of :func:`gthinker.run`'s ``records``."""
    lo, hi = (0, dag.num_vertices) if within is None else (within.start, within.stop)
    work = np.concatenate([[0], np.cumsum(np.diff(dag.indptr[lo : hi + 1]) ** 2 + 1)])
    return work_ranges(work, parts, lo)


# ---- counting by pattern plan ---------------------------------------------------------


@dataclass
class CountResult:
    """Result of :func:`count`. ``count`` is the number of distinct subgraphs
    (for ``"cliques"``: the number of cliques of all sizes, ``counts`` per size; for
    ``"motifs"``: the sum of ``counts``, per motif name)."""

    pattern: str
    count: int
    seconds: float  # counting, without preparing (``prepare_seconds``) or compiling
    mode: str
    threads: int
    #: "cliques (oriented)", "pivoter", "formula (<shape>)", "subgraph matching",
    #: "motifs (induced)" or "motifs (non-induced)", "trivial", "per vertex (oriented)"
    method: str
    counts: dict | None = None  # clique size -> count; or motif name -> count
    prepare_seconds: float = 0.0  # orienting the graph, planning
    compile_seconds: float = 0.0
    mode_reason: str = ""
    stats: dict = field(default_factory=dict, repr=False)
    #: With ``per_vertex=True``: int64 array, ``per_vertex[v]`` = the triangles that
    #: contain vertex ``v`` of ``gthinker.as_graph(graph)`` (original id ``ids[v]``,
    #: or ``node_names[v]``); their sum is three times ``count``.
    per_vertex: np.ndarray | None = field(default=None, repr=False)
    #: With ``per_vertex``: the vertex each entry is of (original ids, or node names).
    vertex_ids: object = field(default=None, repr=False)
    #: Whether induced subgraphs were counted (a clique's are always induced).
    induced: bool = False
    #: What became of vertex labels (:func:`gthinker.apps.matching.planner.match_labels`):
    #: "" when neither graph has any, "honoured", or "ignored: why".
    labels: str = ""

    def to_dict(self) -> dict:
        out = {"pattern": self.pattern, "count": self.count, "induced": self.induced,
               "labels": self.labels}
        if self.per_vertex is not None and self.vertex_ids is not None:
            out["per_vertex"] = {str(v): int(c) for v, c in zip(
                np.asarray(self.vertex_ids).tolist(), self.per_vertex.tolist(), strict=True)}
        if self.counts is not None:
            out["counts"] = {str(k): v for k, v in self.counts.items()}
        out.update(seconds=round(self.seconds, 6), prepare_seconds=round(self.prepare_seconds, 6),
                   compile_seconds=round(self.compile_seconds, 6), mode=self.mode,
                   mode_reason=self.mode_reason, threads=self.threads, method=self.method)
        return out


def takes(plan: PatternPlan, mode: str = "auto", graph: gthinker.Graph | None = None) -> bool:
    """Does :func:`count_plan` count this pattern in ``graph`` without the matching
    search (a clique; a shape with a formula, as :func:`by_formula` decides)?"""
    return plan.clique is not None or by_formula(plan, mode, graph)[0]


def by_formula(plan: PatternPlan, mode: str, graph: gthinker.Graph | None = None
               ) -> tuple[bool, str]:
    """Whether a formula counts the plan's shape, and why (the result's ``mode_reason``):
    always in modes cpu and auto; in gpu and hybrid modes when the search would cost
    :data:`~gthinker.apps.matching.costs.FORMULA_RATIO` times the formula or more in
    ``graph`` (:func:`gthinker.apps.matching.costs.costs`; never without a graph, nor
    for a shape outside :data:`~gthinker.apps.matching.costs.WEIGHED_SHAPES`)."""
    if plan.shape not in FORMULA_SHAPES:
        return False, ""
    if mode not in costs.WEIGHED_MODES:
        return True, f"a formula counts {plan.shape} (CPU)"
    estimate = costs.weighed(graph, plan, mode)
    if estimate is None:
        return False, ""
    return estimate.formula_wins(), estimate.why(plan.shape)


#: The shapes counted by formulas: from per-edge sums, or from neighbourhood graphs.
FORMULA_SHAPES = frozenset(formulas.FORMULAS) | frozenset(neighbourhoods.SHAPES)


def count_plan(graph, plan: PatternPlan, name: str | None = None, mode: str = "auto",
               threads: int | None = None, time_budget: float | None = None, progress=None,
               prepare_seconds: float = 0.0, gpu_memory: int | None = None,
               **options) -> CountResult:
    """Counts the distinct subgraphs of the unlabeled ``graph`` isomorphic to the
    pattern of ``plan`` (:func:`gthinker.apps.matching.pattern_plan.pattern_plan`;
    its labels, if any, are ignored): a clique on the oriented graph, a shape of
    :data:`gthinker.apps.matching.formulas.FORMULAS` or
    :data:`gthinker.apps.matching.neighbourhoods.SHAPES` by its formula (CPU), anything
    else by the matching search under the plan's restrictions, its last levels
    counted from intersection sizes. ``gpu_memory``: the GPU memory the graph's copy may
    take, a graph larger counted in parts (:mod:`gthinker.apps.matching.partitions`)."""
    graph = gthinker.as_graph(graph)
    name = name or plan.shape or "pattern"
    if plan.clique is not None:
        return count_k_cliques(graph, name, plan.clique, mode, threads, time_budget, progress,
                               options, gpu_memory)
    t0 = time.perf_counter()
    formula, because = by_formula(plan, mode, graph)
    prepare_seconds += time.perf_counter() - t0
    if formula:
        out = count_by_formula(graph, name, plan.shape, threads, time_budget, progress, options,
                               prepare_seconds, why=because)
        return _with_costs(out, graph, plan, mode)
    query = gthinker.Graph.from_edges(np.array(plan.edges, np.int64).reshape(-1, 2),
                                      num_vertices=plan.num_vertices)
    t0 = time.perf_counter()
    p = planner.plan(graph, query, unique=True, order=plan.order)
    prepare_seconds += time.perf_counter() - t0
    res, _, why = dispatch.run_plan(graph, p, mode, gpu_memory=gpu_memory, threads=threads,
                                    time_budget=time_budget, progress=progress, **options)
    out = CountResult(name, res.counters["matches"], res.seconds, res.mode, res.threads,
                      "subgraph matching", prepare_seconds=prepare_seconds,
                      compile_seconds=res.compile_seconds,
                      mode_reason="; ".join(filter(None, (because, why))), stats=res.stats)
    return _with_costs(out, graph, plan, mode)


def _with_costs(result: CountResult, graph, plan: PatternPlan, mode: str) -> CountResult:
    """``result`` with ``stats["costs"]`` (:meth:`costs.Costs.stats`) where the dispatch
    weighed the search against a formula (gpu and hybrid modes)."""
    if plan.shape in FORMULA_SHAPES and mode in costs.WEIGHED_MODES:
        result.stats = {**result.stats, "costs": costs.costs(graph, plan).stats()}
    return result


def edge_sums(graph, threads, time_budget, progress, options):
    """The job of :class:`formulas.EdgeStats` (its counters: the per-edge sums)."""
    threads = threads or gthinker.default_threads()
    options.setdefault("cpu_task_batch", 1)
    within = options.pop("vertices", None)  # the sums partition by an edge's smaller end
    lo, hi = (0, graph.num_vertices) if within is None else (within.start, within.stop)
    work = formulas.wedge_work(graph)[lo : hi + 1]
    return gthinker.run(formulas.EdgeStats, graph, mode="cpu", threads=threads,
                        time_budget=time_budget, vertices=[],
                        records=work_ranges(work - work[0], 16 * threads, lo),
                        progress=progress, **options)


def neighbourhood_sums(graph, threads, time_budget, progress, options):
    """The job of :class:`neighbourhoods.NeighbourhoodStats` (its counters: the counts
    of :data:`neighbourhoods.SHAPES`) and the seconds spent preparing its graph."""
    threads = threads or gthinker.default_threads()
    options.setdefault("cpu_task_batch", 1)
    t0 = time.perf_counter()
    prepared = neighbourhoods.neighbourhoods(graph, threads)
    prepare = time.perf_counter() - t0
    records = neighbourhoods.records(prepared, 16 * threads, options.pop("vertices", None))
    res = gthinker.run(neighbourhoods.NeighbourhoodStats, prepared.graph, mode="cpu",
                       threads=threads, time_budget=time_budget, params=prepared.params(),
                       vertices=[], records=records, progress=progress, **options)
    return res, prepare


def four_cycles(graph, threads, time_budget, progress, options):
    """The job of :class:`formulas.FourCycles` (its counter: the 4-cycles) on the graph
    oriented by degree, and the seconds spent preparing it."""
    threads = threads or gthinker.default_threads()
    options.setdefault("cpu_task_batch", 1)
    t0 = time.perf_counter()
    mg = middle_graph(graph)
    work = formulas.cycle_work(mg.in_ptr, mg.in_src, mg.in_off, mg.dag.indptr)
    prepare = time.perf_counter() - t0
    res = gthinker.run(formulas.FourCycles, mg.dag, mode="cpu", threads=threads,
                       time_budget=time_budget, params=mg.params(), vertices=[],
                       records=work_ranges(work, 16 * threads), progress=progress, **options)
    return res, prepare


def count_by_formula(graph, name, shape, threads, time_budget, progress, options, prepare,
                     res=None, why=None):
    """A shape of :data:`formulas.FORMULAS` from per-edge sums, or of
    :data:`neighbourhoods.SHAPES` from neighbourhood graphs, the 4-cycle by
    :func:`four_cycles` (CPU); ``res``: the sums' job when it already ran; ``why``: the
    result's ``mode_reason`` (default: a formula counts the shape)."""
    why = why or f"a formula counts {shape} (CPU)"
    if shape == "4-cycle" and res is None and "vertices" not in options:
        res, seconds = four_cycles(graph, threads, time_budget, progress, dict(options))
        return CountResult(name, res.counters["4-cycle"], res.seconds, "cpu", res.threads,
                           f"formula ({shape})", prepare_seconds=prepare + seconds,
                           compile_seconds=res.compile_seconds, mode_reason=why,
                           stats=res.stats)
    if shape in neighbourhoods.SHAPES:
        if res is None:
            res, seconds = neighbourhood_sums(graph, threads, time_budget, progress,
                                               dict(options))
            prepare += seconds
        return CountResult(name, res.counters[shape], res.seconds, "cpu", res.threads,
                           f"formula ({shape})", prepare_seconds=prepare,
                           compile_seconds=res.compile_seconds,
                           mode_reason=why, stats=res.stats)
    res = res or edge_sums(graph, threads, time_budget, progress, dict(options))
    cliques, seconds = 0, res.seconds
    if shape in formulas.CLIQUE_TERMS:
        k = formulas.CLIQUE_TERMS[shape][0]
        part = count_k_cliques(graph, f"{k}-clique", k, "cpu", threads, time_budget, progress,
                        options)
        cliques, seconds = part.count, seconds + part.seconds
    return CountResult(name, formulas.from_sums(shape, res.counters, cliques), seconds, "cpu",
                       res.threads, f"formula ({shape})", prepare_seconds=prepare,
                       compile_seconds=res.compile_seconds,
                       mode_reason=why, stats=res.stats)


def count_k_cliques(graph, name, k, mode, threads, time_budget, progress, options,
                    gpu_memory=None):
    """The k-cliques of ``graph`` (``options``: :func:`gthinker.run`'s keywords): on the
    oriented graph, or triangles on the CPU at their middle vertex. ``gpu_memory``: the
    GPU memory the oriented graph's copy may take in gpu mode, a graph larger counted in
    parts (:mod:`gthinker.apps.matching.partitions`)."""
    mode, why = gthinker.gpu.resolve_mode(mode, auto="gpu",
                                          cpu_because=gthinker.gpu.small_graph(graph))
    if k == 3 and mode == "cpu" and "vertices" not in options:
        return _middle(graph, name, why, threads, time_budget, progress, options)
    t0 = time.perf_counter()
    dag = _gpu_triangles_dag(graph) if (k == 3 and mode == "gpu"
                                        and "vertices" not in options) else oriented(graph)
    prepare = time.perf_counter() - t0
    if k < 3:
        n = graph.num_vertices if k == 1 else graph.num_edges
        return CountResult(name, n, 0.0, "cpu", 0, "trivial", prepare_seconds=prepare,
                           mode_reason=f"{k}-cliques are the {'vertices' if k == 1 else 'edges'}",
                           stats=idle_stats())
    if mode == "gpu":
        return _on_gpu(name, dag, k, why, prepare, options, gpu_memory)
    res, total = _run_cliques(dag, k, mode, threads, time_budget, progress, options)
    return CountResult(name, total, res.seconds, mode, res.threads, "cliques (oriented)",
                       prepare_seconds=prepare, compile_seconds=res.compile_seconds,
                       mode_reason=why, stats=res.stats)


def _gpu_triangles_dag(graph: gthinker.Graph) -> gthinker.Graph:
    """The oriented graph the GPU triangle kernel counts on: by degeneracy or by degree,
    as its variant says (:data:`gthinker.apps.matching.triangles_gpu.TRIANGLES`)."""
    from .triangles_gpu import TRIANGLES

    return graph.degree_oriented() if TRIANGLES.orientation == "degree" else oriented(graph)


def _on_gpu(name, dag, k, why, prepare, options, gpu_memory=None):
    """Counts the k-cliques of ``dag`` on the GPUs alone: the clique engine runs the
    job whole (no master: one launch over the edges per device), in parts where the
    graph does not fit (:func:`partitions.cliques_in_parts`)."""
    from .cliques_gpu import CliqueEngine, kernels

    t0 = time.perf_counter()
    kernels()
    compile_seconds = time.perf_counter() - t0
    within = options.pop("vertices", None)
    within = range(dag.num_vertices) if within is None else within
    cap = partitions.cap_for(dag, gpu_memory)
    if cap is not None:
        res, parts = partitions.cliques_in_parts(
            dag, k, cap, lambda part, records: gthinker.run(
                CliqueCount, part.graph, mode="gpu", gpu=CliqueEngine, params=[k],
                vertices=[], records=records, **options), within)
        why = "; ".join(filter(None, (
            why, f"the graph counted in {parts} parts of at most {cap:,} bytes")))
    else:
        res = gthinker.run(CliqueCount, dag, mode="gpu", gpu=CliqueEngine, params=[k],
                           vertices=within, **options)
    return CountResult(name, res.counters["cliques"], res.seconds, "gpu", 0,
                       "cliques (oriented)", prepare_seconds=prepare,
                       compile_seconds=compile_seconds + res.compile_seconds, mode_reason=why,
                       stats=res.stats)


def _middle(graph, name, why, threads, time_budget, progress, options):
    """Triangles on the CPU, each at its middle vertex (:class:`MiddleTriangles`)."""
    t0 = time.perf_counter()
    mg = middle_graph(graph)
    prepare = time.perf_counter() - t0
    threads = threads or gthinker.default_threads()
    options.setdefault("cpu_task_batch", 1)
    res = gthinker.run(MiddleTriangles, mg.dag, mode="cpu", threads=threads,
                       time_budget=time_budget, params=mg.params(), vertices=[],
                       records=work_ranges(mg.work, 16 * threads), progress=progress, **options)
    return CountResult(name, res.counters["cliques"], res.seconds, "cpu", res.threads,
                       "cliques (oriented)", prepare_seconds=prepare,
                       compile_seconds=res.compile_seconds, mode_reason=why, stats=res.stats)


def _run_cliques(dag, k, mode, threads, time_budget, progress, options):
    """Counts the k-cliques of ``dag`` in ``mode``: the CPU workers and/or the GPU
    worker of :mod:`gthinker.apps.matching.cliques_gpu` take range records from S."""
    threads = threads or gthinker.default_threads()
    if mode == "hybrid":
        from .cliques_gpu import CliqueEngine

        options.update(gpu=CliqueEngine)
        options.setdefault("gpu_task_batch", 4 * threads)
    parts = (64 if mode == "hybrid" else 16) * threads
    options.setdefault("cpu_task_batch", 1)
    res = gthinker.run(CliqueCount, dag, mode=mode, threads=threads, time_budget=time_budget,
                       params=[k], vertices=[],
                       records=vertex_ranges(dag, parts, options.pop("vertices", None)),
                       progress=progress, **options)
    return res, res.counters["cliques"]
