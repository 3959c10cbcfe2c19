"""Closed formulas for the dense 5-vertex shapes and the 5-cycle, from each vertex's
neighbourhood graph.

The sums of :mod:`gthinker.apps.matching.formulas` (per edge: triangles, 4-cycles; per
vertex: wedge counts) reach the sparse shapes. The shapes here need one level more:
for every vertex ``h``, its **neighbourhood graph** ``G_h = G[N(h)]``, whose degrees
are the triangle counts ``t(h, a)`` of the edges at ``h``, whose triangles are the
4-cliques at ``h`` and whose edges' common neighbours ``k4(h, a, b)`` are the 4-cliques
on the triangle ``{h, a, b}``. Besides the graph, one precomputed table: the sorted
triangle list ``T(x, y)`` (the common neighbours) of every edge. The graph is
renumbered by degree first (vertex ``r`` is the r-th by degree): "smaller" below means
earlier in that order. Counts are of distinct, not necessarily induced, subgraphs.

A shape with a vertex joined to all the others (a *hub*) is the hub and a 4-vertex
graph in ``G_hub``:

- ``book`` (a hub edge and three triangles on it): ``sum over edges C(t(e), 3)``;
- ``tailed-4-clique`` (a triangle and an isolated vertex in ``G_h``):
  ``sum over h of k4(h) (deg h - 3)``, ``k4(h)`` the 4-cliques at h (triangles of
  ``G_h``);
- ``4-clique-wedge`` (a tailed triangle in ``G_h``, the two hubs the edge ``e``):
  ``sum over edges k4(e) (t(e) - 2)``, ``k4(e)`` the 4-cliques on ``e`` (the edges among
  its common neighbours);
- ``5-clique-minus-edge`` (a diamond in ``G_h``; three hubs, a triangle): ``sum over
  triangles C(k4(T), 2)``, each triangle at its smallest vertex;
- ``gem`` (a 4-path in ``G_h``, one hub): the 3-edge paths of ``G_h``, ``sum over its
  edges {a, b} of (t(h, a) - 1) (t(h, b) - 1)`` less three per triangle of ``G_h``;
- ``4-wheel`` (a 4-cycle in ``G_h``, one hub): the 4-cycles of ``G_h``, each at its
  largest vertex ``x``: pairs of wedges ``x-v-w`` with ``v, w < x`` and the same ``w``.

Two shapes have no hub:

- ``4-wheel-minus-spoke`` (tips ``a, b`` joined to both ends of an edge ``{x, y}`` and to
  a fifth vertex ``z``): per pair of tips, the edges among their common neighbours times
  their other common neighbours. At the larger tip ``a``: the wedge counts ``c(a, b)``
  for every ``b < a`` (one pass over the wedges at ``a``), then for every edge
  ``{x, y}`` of ``G_a`` and every ``b < a`` in ``T(x, y)``, ``c(a, b) - 2`` choices of
  ``z``. ``O(sum over edges of t(e)^2)``;
- ``5-cycle`` (after ESCAPE's idea, Pinar, Seshadhri, Vishal, WWW 2017, of a cycle cut
  into a wedge and a path with the same ends): a cycle ``x-a-b-c-d-x`` at its largest
  vertex ``x``; ``L(v)`` the wedges ``x-u-v`` with ``u, v < x``; then
  ``X(x) = sum over ordered edges (b, c) with b, c < x of L(b) L(c)`` counts every cycle
  twice (once each way), and also the walks where ``a = c`` (``sum over c in N(x), c < x
  of deg_<x(c) L(c)``), where ``d = b`` (as many), both (``sum of L(c)`` there) and where
  ``a = d`` (a triangle ``{a, b, c}`` below x with ``a`` joined to x). The last,
  ``2 sum over (a, x), a < x of tau(a, x)`` with ``tau(a, x)`` the triangles at ``a``
  whose other vertices are below ``x``, is summed at ``a`` instead: its triangles,
  sorted by their larger other vertex, give ``tau(a, x)`` for every ``x`` at once.
  Every vertex's part ``(X(x) - 2 sum over x' > x of tau(x, x')) / 2`` is a whole
  number.

Every sum is a whole number per vertex, so ranges of vertices partition them; they
are checked against the matching search in tests/test_pattern_plan.py.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
from numba import carray, types

import gthinker
from gthinker.extending import check_fits, lower_bound, pointer_intrinsic, steps

from .formulas import cycles_at
from .ranges import spill_rest, work_ranges

__all__ = ["SHAPES", "Neighbourhoods", "NeighbourhoodStats", "neighbourhoods", "records"]

#: The shapes counted here, in the order of :class:`NeighbourhoodStats`' counters.
SHAPES = ("book", "tailed-4-clique", "4-clique-wedge", "5-clique-minus-edge", "gem",
          "4-wheel", "4-wheel-minus-spoke", "5-cycle")
_BOOK, _TAILED, _WEDGE, _K5E, _GEM, _WHEEL, _SPOKE, _CYCLE = range(len(SHAPES))

_i64_pointer = pointer_intrinsic(types.int64)
_i32_pointer = pointer_intrinsic(types.int32)


# ---- the prepared graph: renumbered by degree, with every edge's triangle list ---------


@gthinker.compiler.jit("neighbourhood formulas", nogil=True)
def _triangle_counts(indptr, indices, lo, hi, mark, tptr):
    """For the vertices ``x`` in ``[lo, hi)``: ``t(x, y)`` of each edge to a smaller
    ``y`` (counted once, over ``y``'s row, the shorter one), at both of its slots:
    ``tptr[s + 1]`` for ``s`` the slot of ``y`` in ``x``'s row and the slot of ``x``
    in ``y``'s row. Only the steps of an edge's larger end write its slots. ``mark``
    all zero, and so left."""
    for x in range(lo, hi):
        for i in range(indptr[x], indptr[x + 1]):
            mark[indices[i]] = 1
        for i in range(indptr[x], indptr[x + 1]):
            y = indices[i]
            if y >= x:
                break
            t = np.int64(0)
            back = indptr[y]
            for j in range(indptr[y], indptr[y + 1]):
                z = indices[j]
                t += mark[z]
                if z == x:
                    back = j
            tptr[i + 1] = t
            tptr[back + 1] = t
        for i in range(indptr[x], indptr[x + 1]):
            mark[indices[i]] = 0


@gthinker.compiler.jit("neighbourhood formulas", nogil=True)
def _vertex_sums(indptr, indices, lo, hi, tptr, local, work):
    """For the vertices ``x`` in ``[lo, hi)``, from ``t(x, a)`` at every slot of
    ``x``'s row (:func:`_triangle_counts`): ``local[x]``, ``sum over a in N(x) of t(x,
    a)`` (the size of ``G_x``'s rows); ``work[x]``, an estimate of its work (one, plus
    wedges, plus ``t(x, a)^2``). Then zeroes the slots of ``a < x``, leaving ``t(x,
    y)`` at the slots of ``y > x`` only."""
    for x in range(lo, hi):
        total = np.int64(0)
        cost = np.int64(1)
        for i in range(indptr[x], indptr[x + 1]):
            a = indices[i]
            t = tptr[i + 1]
            total += t
            cost += indptr[a + 1] - indptr[a] + t * t
            if a < x:
                tptr[i + 1] = 0
        local[x] = total
        work[x] = cost


@gthinker.compiler.jit("neighbourhood formulas", nogil=True)
def _triangle_lists(indptr, indices, lo, hi, mark, tptr, tidx):
    """``T(y, x)`` for every edge with its larger end ``x`` in ``[lo, hi)``, sorted, into
    ``tidx[tptr[s]:tptr[s + 1]]``, ``s`` the slot of ``x`` in ``y``'s row (found by
    binary search; read over ``y``'s row, the shorter one). ``mark`` all zero, and so
    left."""
    for x in range(lo, hi):
        for i in range(indptr[x], indptr[x + 1]):
            mark[indices[i]] = 1
        for i in range(indptr[x], indptr[x + 1]):
            y = indices[i]
            if y >= x:
                break
            k = tptr[lower_bound(indices, indptr[y], indptr[y + 1], x)]
            for j in range(indptr[y], indptr[y + 1]):
                z = indices[j]
                if mark[z] != 0:
                    tidx[k] = z
                    k += 1
        for i in range(indptr[x], indptr[x + 1]):
            mark[indices[i]] = 0


@dataclass
class Neighbourhoods:
    """What :class:`NeighbourhoodStats` reads: ``graph`` renumbered by degree
    (``rank[v]``: the new number of the original vertex ``v``), the triangle lists
    ``tptr``, ``tidx`` (:func:`_triangle_lists`), ``local[r]`` (the entries of
    ``G_r``'s rows) and ``work``, the cumulative work per original vertex."""

    graph: gthinker.Graph
    rank: np.ndarray
    tptr: np.ndarray
    tidx: np.ndarray
    local: np.ndarray
    work: np.ndarray

    def params(self) -> list[int]:
        return [self.rank.ctypes.data, self.tptr.ctypes.data, self.tidx.ctypes.data,
                self.local.ctypes.data, self.graph.max_degree, self.tidx.size]


def neighbourhoods(graph: gthinker.Graph, threads: int | None = None) -> Neighbourhoods:
    """The :class:`Neighbourhoods` of ``graph``, kept with it
    (:meth:`gthinker.Graph.derived`), prepared on ``threads`` threads (all cores by
    default; the arrays are the same for any number)."""
    return graph.derived("count.neighbourhoods", lambda g: _neighbourhoods(g, threads))


def _neighbourhoods(graph, threads):
    """Three passes over the degree-ranked graph in short steps (:mod:`gthinker.runtime.steps`):
    the triangle counts of the edges, each vertex's sums, the triangle lists."""
    order = np.argsort(graph.degrees(), kind="stable")
    ranked = graph.reorder(order)
    rank = np.empty(graph.num_vertices, np.int32)
    rank[order] = np.arange(graph.num_vertices, dtype=np.int32)
    indptr, indices, n = ranked.indptr, ranked.indices, ranked.num_vertices
    cuts = steps.bounds(indptr)
    mark = functools.partial(np.zeros, n, np.uint8)  # each thread's own
    tptr = np.zeros(indices.size + 1, np.int64)
    local = np.empty(n, np.int64)
    work = np.empty(n, np.int64)
    steps.run(lambda lo, hi, m: _triangle_counts(indptr, indices, lo, hi, m, tptr), cuts,
              threads, mark)
    steps.run(lambda lo, hi, _: _vertex_sums(indptr, indices, lo, hi, tptr, local, work),
              cuts, threads)
    np.cumsum(tptr, out=tptr)
    check_fits(4 * int(tptr[-1]), "the triangle lists of the 5-vertex formulas (one int32 "
               "per triangle and edge)")
    tidx = np.empty(tptr[-1], np.int32)
    steps.run(lambda lo, hi, m: _triangle_lists(indptr, indices, lo, hi, m, tptr, tidx),
              cuts, threads, mark)
    cumulative = np.concatenate([[0], np.cumsum(work[rank])]).astype(np.int64)
    return Neighbourhoods(ranked, rank, tptr, tidx, local, cumulative)


def records(prepared: Neighbourhoods, parts: int, vertices: range | None = None):
    """About ``parts`` range records ``[-1 - lo, hi]`` of original vertices (all, or
    ``vertices``) of alike work."""
    n = prepared.graph.num_vertices
    lo, hi = (0, n) if vertices is None else (vertices.start, vertices.stop)
    work = prepared.work[lo : hi + 1]
    return work_ranges(work - work[0], parts, lo)


# ---- one vertex's part -----------------------------------------------------------------


@gthinker.compiler.jit("neighbourhood formulas", nogil=True)
def _neighbourhood_graph(indptr, indices, h, pos, lptr, lidx, lslot):
    """``G_h`` as a local CSR over the positions of ``h``'s row (``lptr``, ``lidx``;
    rows sorted, as the global ones), ``lslot[k]``: the global slot of each entry
    (where the triangle list of that edge is); ``pos`` must be all zero."""
    base = indptr[h]
    dh = indptr[h + 1] - base
    for i in range(dh):
        pos[indices[base + i]] = i + 1
    k = 0
    lptr[0] = 0
    for i in range(dh):
        a = indices[base + i]
        for j in range(indptr[a], indptr[a + 1]):
            p = pos[indices[j]]
            if p != 0:
                lidx[k] = p - 1
                lslot[k] = j
                k += 1
        lptr[i + 1] = k
    for i in range(dh):
        pos[indices[base + i]] = 0


@gthinker.compiler.jit("neighbourhood formulas", nogil=True)
def _upper_rows(dh, lptr, lidx, upper):
    """``upper[i]``: where row ``i`` of ``G_h`` goes past ``i`` (binary search)."""
    for i in range(dh):
        upper[i] = lower_bound(lidx, lptr[i], lptr[i + 1], i)


@gthinker.compiler.jit("neighbourhood formulas", nogil=True)
def _local_triangles(dh, lptr, lidx, upper, lmark, common):
    """The triangles of ``G_h``, each once (``i < j < l``, from the upper parts of the
    rows, :func:`_upper_rows`); ``common[k]``: those on each local edge (the 4-cliques
    on the triangle of ``h`` and the edge), for both entries of an edge. Returns how
    many (the 4-cliques at ``h``); ``lmark`` all zero."""
    total = 0
    for k in range(lptr[dh]):
        common[k] = 0
    for i in range(dh):
        for s in range(upper[i], lptr[i + 1]):
            lmark[lidx[s]] = s + 1
        for s in range(upper[i], lptr[i + 1]):
            j = lidx[s]
            for s2 in range(upper[j], lptr[j + 1]):
                m = lmark[lidx[s2]]
                if m != 0:
                    total += 1
                    common[s] += 1
                    common[s2] += 1
                    common[m - 1] += 1
        for s in range(upper[i], lptr[i + 1]):
            lmark[lidx[s]] = 0
    # the entry (j, i), j > i, from (i, j): row j's lower entries come in the order of i
    for i in range(dh):
        lmark[i] = lptr[i]
    for i in range(dh):
        for s in range(upper[i], lptr[i + 1]):
            j = lidx[s]
            common[lmark[j]] = common[s]
            lmark[j] += 1
    for i in range(dh):
        lmark[i] = 0
    return total


@gthinker.compiler.jit("neighbourhood formulas", nogil=True)
def _local_cycles(dh, lptr, lidx, lmark):
    """The 4-cycles of ``G_h``, each at its largest vertex (``lmark`` all zero)."""
    total = 0
    for x in range(dh):
        total += cycles_at(lptr, lidx, x, lmark)
    return total


@gthinker.compiler.jit("neighbourhood formulas", nogil=True)
def _hub_sums(indices, base, h, dh, lptr, lidx, common, k4, sums):
    """The hub shapes' parts at ``h`` (book, tailed 4-clique, 4-clique wedge,
    5-clique minus an edge, gem), from ``G_h``'s degrees and ``common``."""
    paths = 0  # sum over G_h's edges {a, b} of (t(h, a) - 1) (t(h, b) - 1)
    for i in range(dh):
        a = indices[base + i]
        t = np.int64(lptr[i + 1] - lptr[i])
        cliques = 0  # twice the 4-cliques on the edge {h, a}
        for s in range(lptr[i], lptr[i + 1]):
            c = np.int64(common[s])
            cliques += c
            j = lidx[s]
            if j > i:
                paths += (t - 1) * (lptr[j + 1] - lptr[j] - 1)
                if a > h and indices[base + j] > h:  # the triangle at its smallest vertex
                    sums[_K5E] += c * (c - 1) // 2
        if a > h:  # the edge {h, a} at its smaller end
            sums[_BOOK] += t * (t - 1) * (t - 2) // 6
            sums[_WEDGE] += cliques // 2 * (t - 2)
    sums[_TAILED] += k4 * (dh - 3)
    sums[_GEM] += paths - 3 * k4


@gthinker.compiler.jit("neighbourhood formulas", nogil=True)
def _spokes_at(indptr, indices, tptr, tidx, a, lptr, lidx, lslot, cnt):
    """The 4-wheels minus a spoke whose larger tip is ``a`` (``cnt`` all zero):
    ``sum over G_a's edges {x, y}, b < a in T(x, y) of c(a, b) - 2``."""
    for i in range(indptr[a], indptr[a + 1]):
        v = indices[i]
        for j in range(indptr[v], indptr[v + 1]):
            b = indices[j]
            if b >= a:
                break
            cnt[b] += 1
    total = 0
    dh = indptr[a + 1] - indptr[a]
    for i in range(dh):
        for s in range(lptr[i], lptr[i + 1]):
            if lidx[s] <= i:
                continue
            slot = lslot[s]  # x -> y with x < y: where T(x, y) is
            for k in range(tptr[slot], tptr[slot + 1]):
                b = tidx[k]
                if b >= a:
                    break
                total += cnt[b] - 2
    for i in range(indptr[a], indptr[a + 1]):
        v = indices[i]
        for j in range(indptr[v], indptr[v + 1]):
            b = indices[j]
            if b >= a:
                break
            cnt[b] = 0
    return total


@gthinker.compiler.jit("neighbourhood formulas", nogil=True)
def _cycles5_at(indptr, indices, x, lptr, upper, cnt, touched):
    """Twice the 5-cycles whose largest vertex is ``x``, plus twice the triangles
    ``{a, b, c}`` below ``x`` with ``a`` joined to x, less twice ``sum over x' > x in
    N(x) of tau(x, x')`` (see the module docstring); ``cnt`` all zero."""
    nt = 0
    for i in range(indptr[x], indptr[x + 1]):  # L(b) = cnt[b]: wedges x-a-b, a, b < x
        a = indices[i]
        if a >= x:
            break
        for j in range(indptr[a], indptr[a + 1]):
            b = indices[j]
            if b >= x:
                break
            if cnt[b] == 0:
                touched[nt] = b
                nt += 1
            cnt[b] += 1
    walks = np.int64(0)
    for r in range(nt):
        b = touched[r]
        ends = np.int64(0)
        for j in range(indptr[b], indptr[b + 1]):
            c = indices[j]
            if c >= x:
                break
            ends += cnt[c]
        walks += cnt[b] * ends
    for i in range(indptr[x], indptr[x + 1]):  # a = c (or d = b), and both
        c = indices[i]
        if c >= x:
            break
        below = 0
        for j in range(indptr[c], indptr[c + 1]):
            if indices[j] >= x:
                break
            below += 1
        walks -= (2 * below - 1) * cnt[c]
    for r in range(nt):
        cnt[touched[r]] = 0
    # a = d, summed at a = x: the triangles at x by the position of their larger other
    # vertex (G_x's entries j < i of row i, before upper[i]), then tau(x, x') for every
    # x' > x
    base = indptr[x]
    tau = np.int64(0)
    taus = np.int64(0)
    for i in range(indptr[x + 1] - base):
        if indices[base + i] > x:
            taus += tau
        tau += upper[i] - lptr[i]
    return walks - 2 * taus


@gthinker.compiler.jit("neighbourhood formulas", nogil=True)
def _range_sums(ctx, lo, hi):
    P = ctx.params
    n, m = ctx.indptr.size - 1, ctx.indices.size
    rank = carray(_i32_pointer(P[0]), n)
    tptr = carray(_i64_pointer(P[1]), m + 1)
    tidx = carray(_i32_pointer(P[2]), P[5])
    local = carray(_i64_pointer(P[3]), n)
    maxd = P[4]
    indptr, indices = ctx.indptr, ctx.indices
    pos = np.zeros(n, np.int64)
    cnt = np.zeros(n, np.int64)
    touched = np.empty(n, np.int32)
    lptr = np.zeros(maxd + 1, np.int64)
    lmark = np.zeros(maxd, np.int64)
    upper = np.empty(maxd, np.int64)
    size = 0
    for v in range(lo, hi):
        size = max(size, local[rank[v]])
    lidx = np.empty(size, np.int32)
    lslot = np.empty(size, np.int64)
    common = np.empty(size, np.int32)
    sums = np.zeros(len(SHAPES), np.int64)
    for v in range(lo, hi):
        if ctx.timed_out():
            spill_rest(ctx, v, hi)
            break
        h = rank[v]
        dh = indptr[h + 1] - indptr[h]
        if dh < 2:
            continue
        _neighbourhood_graph(indptr, indices, h, pos, lptr, lidx, lslot)
        _upper_rows(dh, lptr, lidx, upper)
        k4 = _local_triangles(dh, lptr, lidx, upper, lmark, common)
        _hub_sums(indices, indptr[h], h, dh, lptr, lidx, common, k4, sums)
        sums[_WHEEL] += _local_cycles(dh, lptr, lidx, lmark)
        sums[_SPOKE] += _spokes_at(indptr, indices, tptr, tidx, h, lptr, lidx, lslot, cnt)
        sums[_CYCLE] += _cycles5_at(indptr, indices, h, lptr, upper, cnt, touched) // 2
    for t in range(len(SHAPES)):
        ctx.count(t, sums[t])



class NeighbourhoodStats(gthinker.Task):
    """The counts of :data:`SHAPES` on the graph of a :class:`Neighbourhoods`
    (``params``: its :meth:`Neighbourhoods.params`), each a sum over vertices of a
    whole number, so ranges of original vertices partition them: records
    ``[-1 - lo, hi]``."""

    counters = SHAPES

    @staticmethod
    def compute(ctx, record):
        _range_sums(ctx, -1 - record[0], record[1])
