"""Closed formulas for 4- and 5-vertex pattern counts, from per-vertex and per-edge statistics.

For every edge ``e = {x, y}``: ``tri(e)``, the triangles on it (common neighbours of
x and y), and ``c4(e)``, the 4-cycles through it: ``x-y-p-q-x`` with ``p`` in
``N(y) - {x}`` and ``q`` a common neighbour of ``x`` and ``p`` other than ``y``, so
``c4(e) = sum over p in N(y) - {x} of (c(x, p) - 1)``, ``c(x, p)`` the common
neighbours of x and p (wedge counts, from one pass over the wedges at ``x``, as in
ESCAPE: Pinar, Seshadhri, Vishal, WWW 2017). Then (distinct, not necessarily induced
subgraphs):

- ``4-cycle``: at each vertex x, the cycles whose largest vertex it is, ``sum over
  w < x of C(c_<x(x, w), 2)`` (wedges ``x-v-w`` with ``v, w < x``); also ``sum c4(e) / 4``;
- ``tailed-triangle = sum over vertices t(v) (deg(v) - 2)``, ``t(v)`` the triangles
  at v;
- ``house = sum tri(e) c4(e) - 4 diamond``, ``diamond = sum C(tri(e), 2)``: a house is
  its base edge, a 4-cycle through it and a roof vertex joined to both ends (a triangle
  on the edge), the roof not on the cycle; a roof on the cycle makes the cycle and the
  triangle share two edges, and those configurations are the diamonds, four times each;
- ``5-path``: at its middle vertex x, every ordered pair of legs ``v2-v1``, ``v4-v5``
  (``(sum of (deg - 1))^2 - sum of (deg - 1)^2`` over N(x)), less those with ``v1 = v4``
  or ``v5 = v2`` (``v2, v4`` adjacent: ``2 sum (deg y - 1) tri(x, y)``) and ``v1 = v5``
  (``sum over w != x of c(x, w) (c(x, w) - 1)``), plus both of the first two (``2 t(x)``),
  halved (each path read both ways);
- ``fork`` (a 3-star with one leg made longer): at its centre x, per neighbour y and
  ``e`` in ``N(y) - {x}``, two leaves among ``N(x) - {y, e}``:
  ``(deg y - 1 - tri) C(deg x - 1, 2) + tri C(deg x - 2, 2)``;
- ``banner`` (a 4-cycle and a pendant): at the pendant's vertex x, the 4-cycles through x
  (``sum over w of C(c(x, w), 2)``) times ``deg x - 2``, less those whose opposite vertex
  is a neighbour of x (``sum over y in N(x) of C(tri(x, y), 2)``);
- ``cricket``: ``t(x) C(deg x - 2, 2)`` (two pendants at one corner);
- ``bull``: per edge, its triangles times the pendant pairs at its ends, not one vertex
  twice: ``tri ((deg x - 2) (deg y - 2) - tri + 1)``;
- ``long-tailed-triangle`` (a 2-edge tail at corner x): ``t(x) sum over N(x) of (deg - 1)``
  less, per neighbour y, ``tri(x, y) (deg y - 2 + tri(x, y))`` (the tail back into the
  triangle);
- ``K2,3``: per pair of vertices, ``C(c(x, w), 3)`` (at the larger of the two);
- ``bowtie``: ``C(t(x), 2)`` less the pairs of triangles sharing an edge at x;
- ``dart`` (a diamond and a pendant at an end of its diagonal): per edge,
  ``C(tri, 2) (deg x + deg y - 6)``;
- ``kite`` (a diamond and a pendant at a tip): per edge (the diagonal) ``(tri - 1)`` times
  the sum over its common neighbours a of ``deg a - 2``, less twice the edges among the
  common neighbours: ``12`` per 4-clique (each has six edges, each edge one such edge).

The dense 5-vertex shapes and the 5-cycle need each vertex's neighbourhood graph:
:mod:`gthinker.apps.matching.neighbourhoods`.

Each is checked against the matching search in the tests. One job (:class:`EdgeStats`)
computes all these sums in ``O(sum of deg(v)^2)`` work: the count app uses them where
the matching search would enumerate far more (docs/benchmarks.md, "Pattern-aware
matching").
"""

from __future__ import annotations

import numpy as np

import gthinker

from .ranges import spill_rest

__all__ = ["CLIQUE_TERMS", "EdgeStats", "FORMULAS", "SUMS", "cycles_at", "from_sums", "wedge_work"]

#: The shapes these formulas count, and the sums (counters of :class:`EdgeStats`)
#: each is made of.
FORMULAS = ("4-cycle", "tailed-triangle", "house", "5-path", "fork", "banner", "cricket",
            "bull", "long-tailed-triangle", "K2,3", "bowtie", "dart", "kite")

#: The counters of :class:`EdgeStats`, in the order :func:`_vertex_sums` fills them: two
#: terms of the house, then one count per shape.
SUMS = ("tri_pairs", "tri_c4", "4-cycle", "tailed-triangle", "5-path", "fork", "banner",
        "cricket", "bull", "long-tailed-triangle", "K2,3", "bowtie", "dart", "kite")

#: Formulas with a term in the k-cliques: ``shape: (k, coefficient)``.
CLIQUE_TERMS = {"kite": (4, -12)}


@gthinker.compiler.jit("counting formulas", nogil=True)
def cycles_at(indptr, indices, x, cnt):
    """The 4-cycles whose largest vertex is ``x``: pairs of wedges ``x-v-w`` with
    ``v, w < x`` and the same ``w`` (rows are sorted: each stops at ``x``)."""
    total = 0
    for i in range(indptr[x], indptr[x + 1]):
        v = indices[i]
        if v >= x:
            break
        for j in range(indptr[v], indptr[v + 1]):
            w = indices[j]
            if w >= x:
                break
            total += cnt[w]  # sum of C(cnt, 2), one increment at a time
            cnt[w] += 1
    for i in range(indptr[x], indptr[x + 1]):
        v = indices[i]
        if v >= x:
            break
        for j in range(indptr[v], indptr[v + 1]):
            if indices[j] >= x:
                break
            cnt[indices[j]] = 0
    return total


@gthinker.compiler.jit("counting formulas", nogil=True)
def _vertex_sums(indptr, indices, x, cnt, mark, sums):
    """Adds vertex ``x``'s part to ``sums`` (in the order of :data:`SUMS`; see the
    module docstring for each)."""
    dx = indptr[x + 1] - indptr[x]
    sums[2] += cycles_at(indptr, indices, x, cnt)
    pairs = 0  # sum over w != x of c(x, w) (c(x, w) - 1)
    for i in range(indptr[x], indptr[x + 1]):  # wedges x-v-p: cnt[p] = c(x, p)
        v = indices[i]
        mark[v] = 1
        for j in range(indptr[v], indptr[v + 1]):
            p = indices[j]
            if p != x:
                c = cnt[p]
                pairs += 2 * c
                if p < x:  # K2,3 at its pair {p, x}: C(c(x, p), 3), one increment at a time
                    sums[10] += c * (c - 1) // 2
                cnt[p] = c + 1
    at_x = 0  # twice the triangles at x
    legs = 0  # sum over y in N(x) of deg y - 1
    legs2 = 0  # ... of (deg y - 1)^2
    legs_tri = 0  # ... of (deg y - 1) tri(x, y)
    diamonds = 0  # ... of C(tri(x, y), 2)
    tails = 0  # ... of tri(x, y) (deg y - 2 + tri(x, y))
    for i in range(indptr[x], indptr[x + 1]):
        y = indices[i]
        dy = indptr[y + 1] - indptr[y]
        tri = 0
        wedges = 0
        tip_degrees = 0  # sum over the common neighbours a of x and y of deg a - 2
        for j in range(indptr[y], indptr[y + 1]):
            p = indices[j]
            tri += mark[p]
            wedges += cnt[p]
            if mark[p] != 0:
                tip_degrees += indptr[p + 1] - indptr[p] - 2
        at_x += tri
        legs += dy - 1
        legs2 += (dy - 1) * (dy - 1)
        legs_tri += (dy - 1) * tri
        diamonds += tri * (tri - 1) // 2
        tails += tri * (dy - 2 + tri)
        sums[5] += (dy - 1 - tri) * ((dx - 1) * (dx - 2) // 2) + tri * ((dx - 2) * (dx - 3) // 2)
        if y > x:
            c4 = wedges - (dy - 1)  # p = x is not counted; the others c(x, p) - 1
            sums[0] += tri * (tri - 1) // 2
            sums[1] += tri * c4
            sums[8] += tri * ((dx - 2) * (dy - 2) - tri + 1)
            sums[12] += tri * (tri - 1) // 2 * (dx + dy - 6)
            sums[13] += (tri - 1) * tip_degrees
    t = at_x // 2
    sums[3] += t * (dx - 2)
    sums[4] += (legs * legs - legs2 - 2 * legs_tri - pairs + at_x) // 2
    sums[6] += pairs // 2 * (dx - 2) - diamonds
    sums[7] += t * ((dx - 2) * (dx - 3) // 2)
    sums[9] += t * legs - tails
    sums[11] += t * (t - 1) // 2 - diamonds
    for i in range(indptr[x], indptr[x + 1]):
        v = indices[i]
        mark[v] = 0
        for j in range(indptr[v], indptr[v + 1]):
            cnt[indices[j]] = 0


@gthinker.compiler.jit("counting formulas", nogil=True)
def _edge_range(ctx, lo, hi):
    n = ctx.indptr.size - 1
    cnt = np.zeros(n, np.int64)
    mark = np.zeros(n, np.int64)
    sums = np.zeros(len(SUMS), np.int64)
    for x in range(lo, hi):
        if ctx.timed_out():
            spill_rest(ctx, x, hi)
            break
        _vertex_sums(ctx.indptr, ctx.indices, x, cnt, mark, sums)
    for t in range(len(SUMS)):
        ctx.count(t, sums[t])


class EdgeStats(gthinker.Task):
    """The sums of the module docstring, each a sum over vertices of a whole number
    (over the edges whose smaller end is the vertex, the 4-cycles whose largest vertex
    it is, its tailed triangles), so ranges of vertices partition them: records
    ``[-1 - lo, hi]``."""

    counters = SUMS

    @staticmethod
    def compute(ctx, record):
        _edge_range(ctx, -1 - record[0], record[1])


def wedge_work(graph: gthinker.Graph) -> np.ndarray:
    """Cumulative work per vertex (``work[x]``: before vertex x): the wedges at x,
    its neighbours' degrees summed, and one."""
    deg = np.diff(graph.indptr).astype(np.int64)
    rows = np.repeat(np.arange(graph.num_vertices), deg)
    per = np.bincount(rows, weights=deg[graph.indices], minlength=graph.num_vertices)
    return np.concatenate([[0], np.cumsum(per.astype(np.int64) + 1)])


def from_sums(shape: str, sums: dict, cliques: int = 0) -> int:
    """The count of ``shape`` (one of :data:`FORMULAS`) from :class:`EdgeStats`' counters
    (and, for a shape of :data:`CLIQUE_TERMS`, the count of its k-cliques).

    >>> from_sums("house", {"tri_pairs": 6, "tri_c4": 24})  # K4: no house
    0
    """
    if shape == "house":
        return sums["tri_c4"] - 4 * sums["tri_pairs"]
    if shape in FORMULAS:
        k_coefficient = CLIQUE_TERMS.get(shape, (0, 0))[1]
        return sums[shape] + k_coefficient * cliques
    raise KeyError(f"no formula counts {shape!r}; these do: {', '.join(FORMULAS)}")
