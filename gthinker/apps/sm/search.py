"""The compiled search of subgraph matching, on the CPU workers.

The task of :mod:`gthinker.apps.sm` (:class:`SubgraphMatching`) and the
enumeration that gSWORD's trawling runs (:func:`search`), both reading a
plan's ``params`` (:mod:`gthinker.apps.matching.planner`).

- **Extension.** The candidates of the vertex at position ``d`` are the
  intersection of the neighbour lists of its matched (backward) neighbours,
  kept where the planner's rule admits them (:func:`planner.admissible
  <gthinker.apps.matching.planner.admissible>`: ``C(u)``, injectivity, symmetry
  breaking). When an earlier position's backward neighbours are a subset of
  this one's, its intersection is reused and only the rest is intersected (T-DFS).
- **Decomposition.** A task that runs past the time budget hands every
  unexplored branch, as a partial match, to the other workers.

Records: ``[k, M[0], ..., M[k-1]]``, a partial match of the first ``k``
positions of the matching order (see the planner's "Search records").
"""

from __future__ import annotations

import numpy as np

import gthinker
from gthinker.setops import intersect

from ..matching.planner import (
    H_CAP,
    H_LIMITED,
    H_NQ,
    H_ORDER,
    H_REUSE,
    H_SRC,
    H_SRC_PTR,
    constraint_ranges_cpu,
    is_admissible_within,
    is_candidate,
)

__all__ = ["SubgraphMatching", "search"]


@gthinker.cache.jit("SM functions", nogil=True)
def _spawn(ctx, v):
    P = ctx.params
    if not is_candidate(P, 0, v):
        return np.empty(0, np.int32)
    out = np.empty(2, np.int32)
    out[0] = 1
    out[1] = v
    return out


@gthinker.cache.jit("SM functions", nogil=True)
def _raw(indptr, indices, P, M, raw, rawlen, d):
    """raw[d] = the intersection of N(M[b]) over d's backward neighbours b: an
    earlier position's intersection (reuse) or the shortest list, intersected
    with the rest straight into raw[d] (a copy only for a single list).

    Per-node helpers take the graph's arrays, not ``ctx``: a call that takes
    ``ctx`` costs a reference count per array in it."""
    lo, hi = P[P[H_SRC_PTR] + d], P[P[H_SRC_PTR] + d + 1]
    r = P[P[H_REUSE] + d]
    first = -1
    w = 0
    if r < 0:
        for s in range(lo, hi):
            v = M[P[P[H_SRC] + s]]
            if first < 0 or indptr[v + 1] - indptr[v] < indptr[w + 1] - indptr[w]:
                first = s
                w = v
        base = indices[indptr[w] : indptr[w + 1]]
        n = base.size
    else:
        base = raw[r]
        n = rawlen[r]
    copied = False
    for s in range(lo, hi):
        if s != first:
            v = M[P[P[H_SRC] + s]]
            nb = indices[indptr[v] : indptr[v + 1]]
            if copied:
                n = intersect(raw[d], n, nb, raw[d])
            else:
                n = intersect(base, n, nb, raw[d])
                copied = True
    if not copied:
        raw[d, :n] = base[:n]
    rawlen[d] = n


@gthinker.cache.jit("SM functions", nogil=True)
def _candidates(indptr, indices, P, M, raw, rawlen, cand, candlen, d):
    """cand[d] = the vertices of raw[d] that may take position d (the planner's rule)."""
    _raw(indptr, indices, P, M, raw, rawlen, d)
    less_lo, less_hi, more_lo, more_hi = constraint_ranges_cpu(P, d)
    k = 0
    for i in range(rawlen[d]):
        v = raw[d, i]
        if is_admissible_within(P, M, 0, d, -1, d, v, less_lo, less_hi, more_lo, more_hi):
            cand[d, k] = v
            k += 1
    candlen[d] = k


@gthinker.cache.jit("SM functions", nogil=True)
def _leaves(ctx, P, M, last, n, d):
    """The full matches ``M[:d] + last[i]`` for ``i < n`` (``d`` is the last
    position): claims them from the run's limit and lists them when the run
    writes output. Returns how many count (fewer than ``n`` once the limit is
    reached)."""
    if P[H_LIMITED] != 0:
        n = ctx.take(n)
    if n > 0 and ctx.emitting():
        line = np.empty(P[H_NQ], np.int32)  # data vertex per query vertex, in query order
        for p in range(d):
            line[P[P[H_ORDER] + p]] = M[p]
        u = P[P[H_ORDER] + d]
        for i in range(n):
            line[u] = last[i]
            ctx.emit(line)
    return n


@gthinker.cache.jit("SM functions", nogil=True)
def search(ctx, rec, head):
    """Counts the full matches that extend the partial match of ``rec[head:]``
    (``[k, M[0], ..., M[k-1]]``); ``rec[:head]`` is a tag that every record it
    hands to other workers keeps in front. Returns (matches, records handed out)."""
    P = ctx.params
    indptr = ctx.indptr
    indices = ctx.indices
    claims = P[H_LIMITED] != 0 or ctx.emitting()
    k = rec[head]
    nq = P[H_NQ]
    M = np.empty(nq, np.int32)
    M[:k] = rec[head + 1 : head + 1 + k]
    if k == nq:
        return _leaves(ctx, P, M, M[nq - 1 :], 1, nq - 1), 0
    cap = P[H_CAP]
    raw = np.empty((nq, cap), np.int32)
    rawlen = np.zeros(nq, np.int64)
    cand = np.empty((nq, cap), np.int32)
    candlen = np.zeros(nq, np.int64)
    idx = np.zeros(nq, np.int64)
    for d in range(1, k):  # intersections of the prefix, for reuse further down
        _raw(indptr, indices, P, M, raw, rawlen, d)
    _candidates(indptr, indices, P, M, raw, rawlen, cand, candlen, k)
    if k == nq - 1:
        return _leaves(ctx, P, M, cand[k], candlen[k], k), 0
    d = k
    found = 0
    added = 0
    while d >= k:
        if idx[d] >= candlen[d]:
            d -= 1
            continue
        if ctx.timed_out():  # every unexplored branch becomes a task
            for dd in range(k, d + 1):
                for i in range(idx[dd], candlen[dd]):
                    task = np.empty(head + dd + 2, np.int32)
                    task[:head] = rec[:head]
                    task[head] = dd + 1
                    task[head + 1 : head + dd + 1] = M[:dd]
                    task[head + dd + 1] = cand[dd, i]
                    ctx.add_task(task)
                    added += 1
            break
        M[d] = cand[d, idx[d]]
        idx[d] += 1
        nd = d + 1
        _candidates(indptr, indices, P, M, raw, rawlen, cand, candlen, nd)
        if nd == nq - 1:
            got = candlen[nd]
            if claims:  # the run has a limit, or lists its matches
                got = _leaves(ctx, P, M, cand[nd], got, nd)
            found += got
            if got < candlen[nd]:  # the limit is reached: the job is stopping
                break
        elif candlen[nd]:
            d = nd
            idx[d] = 0
    return found, added


@gthinker.cache.jit("SM functions", nogil=True)
def _compute(ctx, rec):
    found, _ = search(ctx, rec, 0)
    ctx.count(0, found)
    return 0


class SubgraphMatching(gthinker.Task):
    """The CPU task. ``params`` come from :func:`plan`."""

    counters = ("matches",)

    @staticmethod
    def spawn(ctx, v):
        return _spawn(ctx, v)

    @staticmethod
    def compute(ctx, record):
        _compute(ctx, record)
