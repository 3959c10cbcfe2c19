"""Maximal k-plexes of at least q vertices, one of G-thinker's classic apps.

A k-plex is a vertex set S in which every vertex is adjacent to all but at most k of
S (itself included): ``|S| - deg_S(v) <= k`` for each v in S (a 1-plex is a clique).
It is maximal when no vertex can join it. Being a k-plex is hereditary (every subset
of a k-plex is one), so the search is Bron-Kerbosch's without pivoting: a node holds
a k-plex R, the candidates P that may still join it (each with R) and the vertices X
that could join it but were tried in an earlier branch; R is maximal exactly when P
and X are both empty.

A k-plex of at least ``2k - 1`` vertices has diameter at most 2 (two vertices that
are not adjacent share a neighbour), so ``q >= 2k - 1`` is required, and the task of
vertex v (in degeneracy order) looks for the k-plexes whose first vertex is v
among v's neighbours and their neighbours: P holds those after v, X those before.
A branch that cannot reach q vertices (``|R| + |P| < q``) is cut.

Task record (int32): ``[|R|, |P|, |X|, R..., P..., X...]``, in the ids of the
degeneracy-ordered graph. A task whose time budget runs out hands its untried
branches to other workers as records. Results: ``counters["kplexes"]``,
``maxima["largest"]``, ``histograms["size"]`` (bin s: the k-plexes of s vertices),
and each k-plex emitted (``output=``, :func:`iter_kplexes`).
"""

import numpy as np
from numba import njit

from gthinker.extending import Task, as_graph, contains, iter_results, run

from .options import KPlexesOptions


@njit(cache=True, nogil=True)
def _adjacent(indptr, indices, a, b):
    return contains(indices, indptr[a], indptr[a + 1], b)


@njit(cache=True, nogil=True)
def _missing(indptr, indices, R):
    """Per vertex of R: the vertices of R it is not adjacent to, itself included."""
    miss = np.empty(R.size, np.int64)
    for i in range(R.size):
        m = 0
        for j in range(R.size):
            if i == j or not _adjacent(indptr, indices, R[i], R[j]):
                m += 1
        miss[i] = m
    return miss


@njit(cache=True, nogil=True)
def _joins(indptr, indices, R, miss, u, k):
    """Whether R + u is a k-plex (R is one; ``miss``: :func:`_missing` of R)."""
    apart = 1  # u itself
    for i in range(R.size):
        if not _adjacent(indptr, indices, R[i], u):
            if miss[i] >= k:  # R[i] would miss one vertex too many
                return False
            apart += 1
            if apart > k:
                return False
    return True


@njit(cache=True, nogil=True)
def _keep(indptr, indices, R, miss, part, k, out, at):
    """Appends the vertices of ``part`` that may join R to ``out`` from ``at`` on;
    returns the new end."""
    for u in part:
        if _joins(indptr, indices, R, miss, u, k):
            out[at] = u
            at += 1
    return at


@njit(cache=True, nogil=True)
def _record(indptr, indices, R, P, X, k):
    """The record ``[|R|, |P'|, |X'|, R, P', X']`` of the k-plex R, with the vertices
    of P and X that may join it."""
    miss = _missing(indptr, indices, R)
    out = np.empty(3 + R.size + P.size + X.size, np.int32)
    out[0] = R.size
    out[3:3 + R.size] = R
    start = 3 + R.size
    end_p = _keep(indptr, indices, R, miss, P, k, out, start)
    end_x = _keep(indptr, indices, R, miss, X, k, out, end_p)
    out[1] = end_p - start
    out[2] = end_x - end_p
    return out[:end_x]


@njit(cache=True, nogil=True)
def _initial(ctx, v, k, q):
    """v's task: R = [v], candidates = the vertices within two hops of v."""
    total = 0
    for u in ctx.neighbors(v):
        total += 1 + ctx.degree(u)
    near = np.empty(total, np.int32)
    at = 0
    for u in ctx.neighbors(v):
        near[at] = u
        at += 1
        for w in ctx.neighbors(u):
            near[at] = w
            at += 1
    found = np.unique(near)
    found = found[found != v]
    split = np.searchsorted(found, v)
    if 1 + found.size - split < q:
        return np.zeros(0, np.int32)  # no k-plex of q vertices starts at v
    return _record(ctx.indptr, ctx.indices, np.full(1, v, np.int32), found[split:],
                   found[:split], k)


@njit(cache=True, nogil=True)
def _found(ctx, R):
    """Reports the maximal k-plex R."""
    ctx.count(0)
    ctx.update_max(0, R.size)
    ctx.add_to_histogram(0, R.size)
    if ctx.emitting():
        ctx.emit(np.sort(R))


@njit(cache=True, nogil=True)
def _search(ctx, rec, k, q):
    r, p, x = rec[0], rec[1], rec[2]
    R, P, X = rec[3:3 + r], rec[3 + r:3 + r + p], rec[3 + r + p:3 + r + p + x]
    if p == 0:
        if x == 0 and r >= q:
            _found(ctx, R)
        return 0
    indptr, indices = ctx.indptr, ctx.indices
    grown = np.empty(r + 1, np.int32)
    grown[:r] = R
    tried = np.empty(x + p, np.int32)  # X, then the candidates tried before
    tried[:x] = X
    for i in range(p):
        if r + p - i < q:  # R + P[i:] is too small
            break
        grown[r] = P[i]
        child = _record(indptr, indices, grown, P[i + 1:], tried[:x + i], k)
        if ctx.timed_out():
            ctx.add_task(child)
        else:
            _search(ctx, child, k, q)
        tried[x + i] = P[i]
    return 0


class KPlexes(Task):
    counters = ("kplexes",)
    maxima = ("largest",)
    histograms = ("size",)

    @staticmethod
    def spawn(ctx, v):
        return _initial(ctx, v, ctx.params[0], ctx.params[1])

    @staticmethod
    def compute(ctx, record):
        _search(ctx, record, ctx.params[0], ctx.params[1])


def _job(graph, k, min_size, options):
    """The options (checked), the graph the search runs on and the job's keywords."""
    opts, rest = KPlexesOptions.split({"k": k, "min_size": min_size, **options})
    ordered = as_graph(graph).degeneracy_ordered()
    bins = ordered.max_degree + opts.k + 1  # a k-plex has at most max degree + k vertices
    job = {"mode": opts.mode, "params": (opts.k, opts.q), "histogram_bins": bins, **rest}
    return opts, ordered, job


def find_kplexes(graph, k=None, min_size=None, **options):
    """The maximal k-plexes of at least ``min_size`` vertices (default and least
    ``2k - 1``) of ``graph``: a JobResult with ``counters["kplexes"]``,
    ``maxima["largest"]`` and ``histograms["size"]``. ``output=FILE`` writes each
    k-plex, a line of original ids. ``k``, ``min_size`` and ``options``:
    :class:`KPlexesOptions`' (None: its default) and :func:`gthinker.run`'s
    (``threads``, ``time_budget``, ``stop``, ...)."""
    opts, ordered, job = _job(graph, k, min_size, options)
    return run(KPlexes, ordered, output=opts.output, **job)


def iter_kplexes(graph, k=None, min_size=None, **options):
    """Yields each maximal k-plex of at least ``min_size`` vertices, as the search
    finds it: a sorted int64 array of original ids (node names for a networkx graph
    whose nodes are not integers). Closing the generator stops the search. The options
    are :func:`find_kplexes`' but ``output``.

    >>> import networkx as nx
    >>> sorted(c.tolist() for c in iter_kplexes(nx.cycle_graph(5), 2, threads=1))
    [[0, 1, 2], [0, 1, 4], [0, 3, 4], [1, 2, 3], [2, 3, 4]]
    """
    opts, ordered, job = _job(graph, k, min_size, options)
    if opts.output is not None:
        raise TypeError("iter_kplexes yields the k-plexes: output= is find_kplexes'")
    for found in iter_results(KPlexes, ordered, **job):
        yield found if isinstance(found, list) else np.sort(found)
