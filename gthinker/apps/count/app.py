"""Pattern counting: triangles, k-cliques, cliques of every size, and any small pattern.

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

``pattern="cliques"`` counts the k-cliques for every k at once without listing
them: Pivoter's succinct clique tree (:mod:`gthinker.apps.count.pivoter`).

Any other pattern (4-cycle, diamond, house, a pattern file, ...) is counted by
the subgraph-matching app with symmetry breaking (:func:`gthinker.apps.sm.count`
with ``unique=True``).

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

import os
import re
import time
from dataclasses import dataclass, field

import numpy as np
from numba import carray, types

import gthinker
from gthinker.apps.matching import dispatch
from gthinker.bits import lowest_bit, pop_lowest, popcount
from gthinker.runtime.job import idle_stats
from gthinker.runtime.task import pointer_intrinsic
from gthinker.setops import intersect, intersect_size

from ..matching import planner
from ..matching.pattern_plan import PatternPlan, pattern_plan
from ..matching.patterns import PATTERNS, as_query, is_pattern
from ..matching.patterns import pattern as named_pattern
from ..matching.planner import check_query
from . import formulas, motifs, neighbourhoods
from .local_graphs import local_graph
from .pivoter import CliqueTree, clique_counts, tally_bins
from .ranges import spill_rest, work_ranges

__all__ = ["CliqueCount", "CliqueTree", "CountResult", "MiddleGraph", "MiddleTriangles",
           "VertexTriangles", "count", "count_plan", "oriented", "middle_graph", "takes",
           "work_ranges", "clique_size"]

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
    buf[:n] = first
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
                task[: rec.size] = rec
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
                task[: rec.size] = rec
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


_i64_pointer = pointer_intrinsic(types.int64)
_i32_pointer = pointer_intrinsic(types.int32)


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
    P = ctx.params
    n, m = P[3], P[4]
    in_ptr = carray(_i64_pointer(P[0]), n + 1)
    in_src = carray(_i32_pointer(P[1]), m)
    in_off = carray(_i32_pointer(P[2]), m)
    indptr, indices = ctx.indptr, ctx.indices
    mark = np.zeros(n, np.uint8)
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


def vertex_ranges(dag: gthinker.Graph, parts: int,
                  within: range | None = None) -> tuple[np.ndarray, np.ndarray]:
    """About ``parts`` range records ``[-1 - lo, hi]`` of first vertices (all, or
    those of ``within``), of alike estimated work (out-degree squared), in the
    flat form of :func:`gthinker.run`'s ``records``."""
    lo, hi = (0, dag.num_vertices) if within is None else (within.start, within.stop)
    work = np.concatenate([[0], np.cumsum(np.diff(dag.indptr[lo : hi + 1]) ** 2 + 1)])
    return work_ranges(work, parts, lo)


# ---- the API ------------------------------------------------------------------------


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

    def to_dict(self) -> dict:
        out = {"pattern": self.pattern, "count": self.count}
        if self.counts is not None:
            out["counts"] = {str(k): v for k, v in self.counts.items()}
        out.update(seconds=round(self.seconds, 6), prepare_seconds=round(self.prepare_seconds, 6),
                   compile_seconds=round(self.compile_seconds, 6), mode=self.mode,
                   mode_reason=self.mode_reason, threads=self.threads, method=self.method)
        return out


def count(graph, pattern: str = "triangle", mode: str = "auto", threads: int | None = None,
          time_budget: float | None = None, progress=None, per_vertex: bool = False,
          vertices: range | None = None, size: int | None = None, induced: bool = True,
          **options) -> CountResult:
    """Counts the distinct subgraphs of ``graph`` isomorphic to ``pattern``
    (not necessarily induced), or, for ``pattern="cliques"``, the k-cliques of
    every size k, or, for ``pattern="motifs"``, every connected pattern of ``size``
    vertices (:mod:`gthinker.apps.count.motifs`).

    How: a clique (named, or a file or graph that is one) on the degeneracy-oriented
    graph; 4-cycles, tailed triangles, houses and most 5-vertex shapes by formulas from
    per-edge triangle and 4-cycle counts (:mod:`gthinker.apps.count.formulas`) or from
    each vertex's neighbourhood graph (:mod:`gthinker.apps.count.neighbourhoods`), on
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
    mode : {"auto", "cpu", "gpu", "hybrid"}
        Where to count; ``"auto"`` uses a CUDA GPU where one is usable.
    per_vertex : bool
        With ``pattern="triangle"``: also count the triangles at every vertex,
        into :attr:`CountResult.per_vertex`. CPU only (each worker keeps one
        int64 per vertex).
    vertices : range, optional
        Only the subgraphs counted from these first vertices (ids of ``graph``;
        for other patterns than cliques, the data vertex of the first query
        vertex in the matching order): ranges partition the count, for
        splitting it over processes (:mod:`gthinker.cluster`).
    size : {3, 4, 5}
        With ``pattern="motifs"``: the motif size.
    induced : bool
        With ``pattern="motifs"``: induced counts (the default, as igraph's
        ``motifs_randesu`` and ESCAPE give them: each connected vertex set counted
        once, in the motif its induced subgraph is), or non-induced (distinct
        subgraphs, as for a single pattern).
    **options
        Passed on to :func:`gthinker.run` (``spill_limit``, ``cpu_chunk``, ...).

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
    threads = gthinker.options.check("threads", threads)
    time_budget = gthinker.options.check("time_budget", time_budget)
    gthinker.gpu.check_mode(mode)
    k = clique_size(pattern)
    if k is not None and k < 1:
        raise ValueError(f"a k-clique has k >= 1 vertices, got {pattern!r}")
    graph = gthinker.as_graph(graph)
    name = pattern if isinstance(pattern, str) else "pattern"
    if vertices is not None:
        if not (isinstance(vertices, range) and vertices.step == 1):
            raise TypeError(f"vertices must be a range(lo, hi), got {vertices!r}")
        options["vertices"] = vertices
    if per_vertex:
        return _per_vertex(graph, name, k, mode, threads, time_budget, progress, options)
    if (size is not None) != (pattern == "motifs"):
        raise ValueError("size goes with pattern='motifs' (the motif size: 3, 4 or 5), and "
                         "'motifs' needs it")
    if pattern == "motifs":
        return _motifs(graph, size, induced, mode, threads, time_budget, progress, options)
    if pattern == "cliques":
        return _cliques(graph, name, None, mode, threads, time_budget, progress, options)
    if k is not None:
        return _cliques(graph, name, k, mode, threads, time_budget, progress, options)
    t0 = time.perf_counter()
    pp = pattern_plan(_query_of(pattern, graph))
    options["prepare_seconds"] = time.perf_counter() - t0
    return count_plan(graph, pp, name, mode, threads, time_budget, progress, **options)


def takes(plan: PatternPlan, mode: str = "auto") -> bool:
    """Does :func:`count_plan` count this pattern without the matching search (a
    clique; a shape with a formula, in mode cpu or auto)?"""
    return plan.clique is not None or _by_formula(plan, mode)


def _by_formula(plan: PatternPlan, mode: str) -> bool:
    """Formulas count their shapes on the CPU (modes cpu and auto)."""
    return plan.shape in _FORMULA_SHAPES and mode in ("auto", "cpu")


#: The shapes counted by formulas: from per-edge sums, or from neighbourhood graphs.
_FORMULA_SHAPES = frozenset(formulas.FORMULAS) | frozenset(neighbourhoods.SHAPES)


def count_plan(graph, plan: PatternPlan, name: str | None = None, mode: str = "auto",
               threads: int | None = None, time_budget: float | None = None, progress=None,
               prepare_seconds: float = 0.0, **options) -> CountResult:
    """Counts the distinct subgraphs of the unlabeled ``graph`` isomorphic to the
    pattern of ``plan`` (:func:`gthinker.apps.matching.pattern_plan.pattern_plan`;
    its labels, if any, are ignored): a clique on the oriented graph, a shape of
    :data:`gthinker.apps.count.formulas.FORMULAS` or
    :data:`gthinker.apps.count.neighbourhoods.SHAPES` by its formula (CPU), anything
    else by the matching search under the plan's restrictions, its last levels
    counted from intersection sizes."""
    graph = gthinker.as_graph(graph)
    name = name or plan.shape or "pattern"
    if plan.clique is not None:
        return _cliques(graph, name, plan.clique, mode, threads, time_budget, progress, options)
    if _by_formula(plan, mode):
        return _formula(graph, name, plan.shape, threads, time_budget, progress, options,
                        prepare_seconds)
    query = gthinker.Graph.from_edges(np.array(plan.edges, np.int64).reshape(-1, 2),
                                      num_vertices=plan.num_vertices)
    t0 = time.perf_counter()
    p = planner.plan(graph, query, unique=True, order=plan.order)
    prepare_seconds += time.perf_counter() - t0
    res, _, why = dispatch.run_plan(graph, p, mode, threads=threads, time_budget=time_budget,
                                  progress=progress, **options)
    return CountResult(name, res.counters["matches"], res.seconds, res.mode, res.threads,
                       "subgraph matching", prepare_seconds=prepare_seconds,
                       compile_seconds=res.compile_seconds, mode_reason=why, stats=res.stats)


def _edge_sums(graph, threads, time_budget, progress, options):
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


def _neighbourhood_sums(graph, threads, time_budget, progress, options):
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


def _formula(graph, name, shape, threads, time_budget, progress, options, prepare, res=None):
    """A shape of :data:`formulas.FORMULAS` from per-edge sums, or of
    :data:`neighbourhoods.SHAPES` from neighbourhood graphs (CPU); ``res``: that job
    when it already ran."""
    if shape in neighbourhoods.SHAPES:
        if res is None:
            res, seconds = _neighbourhood_sums(graph, threads, time_budget, progress,
                                               dict(options))
            prepare += seconds
        return CountResult(name, res.counters[shape], res.seconds, "cpu", res.threads,
                           f"formula ({shape})", prepare_seconds=prepare,
                           compile_seconds=res.compile_seconds,
                           mode_reason=f"a formula counts {shape} (CPU)", stats=res.stats)
    res = res or _edge_sums(graph, threads, time_budget, progress, dict(options))
    cliques, seconds = 0, res.seconds
    if shape in formulas.CLIQUE_TERMS:
        k = formulas.CLIQUE_TERMS[shape][0]
        part = _cliques(graph, f"{k}-clique", k, "cpu", threads, time_budget, progress,
                        options)
        cliques, seconds = part.count, seconds + part.seconds
    return CountResult(name, formulas.from_sums(shape, res.counters, cliques), seconds, "cpu",
                       res.threads, f"formula ({shape})", prepare_seconds=prepare,
                       compile_seconds=res.compile_seconds,
                       mode_reason=f"a formula counts {shape} (CPU)", stats=res.stats)


def _motifs(graph, size, induced, mode, threads, time_budget, progress, options):
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
        sums = _edge_sums(graph, threads, time_budget, progress, dict(options))
    if any(p.shape in neighbourhoods.SHAPES for p in plans.values()) and not _stopped(options):
        local, prepare = _neighbourhood_sums(graph, threads, time_budget, progress,
                                             dict(options))
    parts = {}
    for n, p in plans.items():
        if _stopped(options):  # stopped (Ctrl-C in a job): the rest is not started
            break
        if p.shape in _FORMULA_SHAPES:
            job = local if p.shape in neighbourhoods.SHAPES else sums
            parts[n] = _formula(graph, n, p.shape, threads, time_budget, progress, options,
                                0.0, job)
        else:
            parts[n] = count_plan(graph, p, n, search_mode, threads, time_budget, progress,
                                  **options)
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


def _cliques(graph, name, k, mode, threads, time_budget, progress, options):
    """k-cliques (or, with ``k=None``, cliques of every size) on the oriented graph."""
    mode, why = gthinker.gpu.resolve_mode(mode, auto="gpu",
                                          cpu_because=gthinker.gpu.small_graph(graph))
    if k == 3 and mode == "cpu" and "vertices" not in options:
        return _middle(graph, name, why, threads, time_budget, progress, options)
    t0 = time.perf_counter()
    dag = _gpu_triangles_dag(graph) if (k == 3 and mode == "gpu"
                                        and "vertices" not in options) else oriented(graph)
    prepare = time.perf_counter() - t0
    if k is None:
        if mode != "cpu":
            mode, why = "cpu", "counting every clique size runs on the CPU"
        return _all_cliques(graph, dag, mode, why, threads, time_budget, progress, options,
                            prepare)
    if k < 3:
        n = graph.num_vertices if k == 1 else graph.num_edges
        return CountResult(name, n, 0.0, "cpu", 0, "trivial", prepare_seconds=prepare,
                           mode_reason=f"{k}-cliques are the {'vertices' if k == 1 else 'edges'}",
                           stats=idle_stats())
    if mode == "gpu":
        return _on_gpu(name, dag, k, why, prepare, options)
    res, total = _run_cliques(dag, k, mode, threads, time_budget, progress, options)
    return CountResult(name, total, res.seconds, mode, res.threads, "cliques (oriented)",
                       prepare_seconds=prepare, compile_seconds=res.compile_seconds,
                       mode_reason=why, stats=res.stats)


def _gpu_triangles_dag(graph: gthinker.Graph) -> gthinker.Graph:
    """The oriented graph the GPU triangle kernel counts on: by degeneracy or by degree,
    as its variant says (:data:`gthinker.apps.count.triangles_gpu.TRIANGLES`)."""
    from .triangles_gpu import TRIANGLES

    return graph.degree_oriented() if TRIANGLES.orientation == "degree" else oriented(graph)


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


def _on_gpu(name, dag, k, why, prepare, options):
    """Counts the k-cliques of ``dag`` on the GPUs alone: the clique engine runs the
    job whole (no master: one launch over the edges per device)."""
    from .gpu import CliqueEngine, kernels

    t0 = time.perf_counter()
    kernels()
    compile_seconds = time.perf_counter() - t0
    within = options.pop("vertices", None)
    within = range(dag.num_vertices) if within is None else within
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
    worker of :mod:`gthinker.apps.count.gpu` take range records from S."""
    threads = threads or gthinker.default_threads()
    if mode == "hybrid":
        from .gpu import CliqueEngine

        options.update(gpu=CliqueEngine)
        options.setdefault("gpu_task_batch", 4 * threads)
    parts = (64 if mode == "hybrid" else 16) * threads
    options.setdefault("cpu_task_batch", 1)
    res = gthinker.run(CliqueCount, dag, mode=mode, threads=threads, time_budget=time_budget,
                       params=[k], vertices=[],
                       records=vertex_ranges(dag, parts, options.pop("vertices", None)),
                       progress=progress, **options)
    return res, res.counters["cliques"]


def _all_cliques(graph, dag, mode, why, threads, time_budget, progress, options, prepare):
    width = graph.degeneracy + 2
    res = gthinker.run(CliqueTree, dag, mode="cpu", threads=threads, time_budget=time_budget,
                       params=[width], histogram_bins=tally_bins(width), progress=progress,
                       **options)
    counts = clique_counts(res.histograms["leaves"], width) if graph.num_vertices else {}
    return CountResult("cliques", sum(counts.values()), res.seconds, res.mode, res.threads,
                       "pivoter", counts=counts, prepare_seconds=prepare,
                       compile_seconds=res.compile_seconds, mode_reason=why, stats=res.stats)


def check_pattern(pattern) -> None:
    """ValueError for a pattern string that is no name count knows and no file (what the
    command line checks before it reads the graph)."""
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
    if graph.labels is not None:
        raise ValueError("count takes unlabeled graphs; use `gthinker sm` for labeled "
                         "matching")
    if query.labels is not None:
        if len(np.unique(query.labels)) > 1:
            raise ValueError("count takes unlabeled patterns (or patterns whose labels are "
                             "all equal); use `gthinker sm` for labeled matching")
        query = gthinker.Graph(query.indptr, query.indices)
    check_query(graph, query)
    return query
