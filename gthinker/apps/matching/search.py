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
from gthinker.extending import intersect, intersect_size, lower_bound, put

from .planner import (
    H_CAP,
    H_LESS,
    H_LESS_PTR,
    H_LIMITED,
    H_NQ,
    H_ORDER,
    H_REUSE,
    H_SRC,
    H_SRC_PTR,
    H_TAIL,
    H_TAIL_CHAIN,
    H_TAIL_FILTER,
    H_TAIL_SAME,
    constraint_ranges_cpu,
    is_admissible_within,
    is_candidate,
)

__all__ = ["SubgraphMatching", "search"]


@gthinker.compiler.jit("SM functions", nogil=True)
def _spawn(ctx, v):
    P = ctx.params
    if not is_candidate(P, 0, v):
        return np.empty(0, np.int32)
    out = np.empty(2, np.int32)
    out[0] = 1
    out[1] = v
    return out


@gthinker.compiler.jit("SM functions", nogil=True)
def _raw(indptr, indices, P, M, raw, rawlen, d):
    """raw[d] = the intersection of N(M[b]) over d's backward neighbours b: an
    earlier position's intersection (reuse) or the shortest list, intersected
    with the rest straight into raw[d]. A single list is not copied: ``rawlen[d]``
    is then ``-1 - v`` for the row of v (:func:`_view`), so that a task split off
    below a hub does not copy the hub's row again.

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
    else:
        base = _view(indptr, indices, raw, rawlen, r)
    n = base.size
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
    if copied:
        rawlen[d] = n
    elif r < 0:
        rawlen[d] = -1 - w  # one list: the row itself
    else:
        rawlen[d] = rawlen[r]
        if n and rawlen[r] >= 0:
            put(raw[d], 0, base[:n])


@gthinker.compiler.jit("SM functions", nogil=True)
def _view(indptr, indices, raw, rawlen, d):
    """Position d's intersection as :func:`_raw` left it: ``raw[d]``, or a row."""
    n = rawlen[d]
    if n < 0:
        return indices[indptr[-1 - n] : indptr[-n]]
    return raw[d, :n]


@gthinker.compiler.jit("SM functions", nogil=True)
def _candidates(indptr, indices, P, M, raw, rawlen, cand, candlen, d):
    """cand[d] = the vertices of raw[d] that may take position d (the planner's rule)."""
    _raw(indptr, indices, P, M, raw, rawlen, d)
    less_lo, less_hi, more_lo, more_hi = constraint_ranges_cpu(P, d)
    src = _view(indptr, indices, raw, rawlen, d)
    k = 0
    for i in range(src.size):
        v = src[i]
        if is_admissible_within(P, M, 0, d, -1, d, v, less_lo, less_hi, more_lo, more_hi):
            cand[d, k] = v
            k += 1
    candlen[d] = k


@gthinker.compiler.jit("SM functions", nogil=True)
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


@gthinker.compiler.jit("SM functions", nogil=True)
def search(ctx, rec, head):
    """Counts the full matches that extend the partial match of ``rec[head:]``
    (``[k, M[0], ..., M[k-1]]``); ``rec[:head]`` is a tag that every record it
    hands to other workers keeps in front. Returns (matches, records handed out).
    The plan's count-only positions are counted, not enumerated, unless the run
    claims its matches one by one (a limit, or listing them)."""
    P = ctx.params
    indptr = ctx.indptr
    indices = ctx.indices
    claims = P[H_LIMITED] != 0 or ctx.emitting()
    k = np.int64(rec[head])  # int64, as the positions below: one signature of each helper
    nq = P[H_NQ]
    M = np.empty(nq, np.int32)
    put(M, 0, rec[head + 1 : head + 1 + k])
    if k == nq:
        return (_leaves(ctx, P, M, M[nq - 1 :], 1, nq - 1) if claims else 1), 0
    # s: the first position not enumerated (counted, or listed as leaves)
    s = nq - 1 if claims or P[H_TAIL] == 0 else nq - P[H_TAIL]
    cap = P[H_CAP]
    raw = np.empty((nq, cap), np.int32)
    rawlen = np.zeros(nq, np.int64)
    cand = np.empty((nq, cap), np.int32)
    candlen = np.zeros(nq, np.int64)
    idx = np.zeros(nq, np.int64)
    for d in range(1, min(k, s)):  # intersections of the prefix, for reuse further down
        _raw(indptr, indices, P, M, raw, rawlen, d)
    if k >= s:
        return _finish(ctx, P, M, raw, rawlen, cand, candlen, k, claims), 0
    _candidates(indptr, indices, P, M, raw, rawlen, cand, candlen, k)
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
                    put(task, 0, rec[:head])
                    task[head] = dd + 1
                    put(task, head + 1, M[:dd])
                    task[head + dd + 1] = cand[dd, i]
                    ctx.add_task(task)
                    added += 1
            break
        M[d] = cand[d, idx[d]]
        idx[d] += 1
        nd = d + 1
        if nd == s:
            got = _finish(ctx, P, M, raw, rawlen, cand, candlen, nd, claims)
            found += got
            if claims and got < candlen[nd]:  # the limit is reached: the job is stopping
                break
            continue
        _candidates(indptr, indices, P, M, raw, rawlen, cand, candlen, nd)
        if candlen[nd]:
            d = nd
            idx[d] = 0
    return found, added


@gthinker.compiler.jit("SM functions", nogil=True)
def _finish(ctx, P, M, raw, rawlen, cand, candlen, s, claims):
    """The matches of the partial match ``M[:s]``, ``s`` the first position not
    enumerated: listed one by one (``s`` is the last position) when the run claims
    them, else counted (:func:`_count_tail`)."""
    if claims:
        _candidates(ctx.indptr, ctx.indices, P, M, raw, rawlen, cand, candlen, s)
        return _leaves(ctx, P, M, cand[s], candlen[s], s)
    return _count_tail(ctx.indptr, ctx.indices, P, M, raw, rawlen, cand, s)


# ---- count-only last levels ----------------------------------------------------------


@gthinker.compiler.jit("SM functions", nogil=True)
def _tail_set(indptr, indices, P, M, raw, rawlen, d):
    """The intersection of position ``d``'s backward neighbour lists, as a view: a
    neighbour list itself when there is only one (no copy), else ``raw[d]``."""
    _raw(indptr, indices, P, M, raw, rawlen, d)
    return _view(indptr, indices, raw, rawlen, d)


@gthinker.compiler.jit("SM functions", nogil=True)
def _floor(P, M, d, s):
    """Position ``d``'s vertex must be above this by its restrictions with the
    positions before ``s`` (the planner's restrictions all run forward: ``H_LESS``)."""
    lo = np.int64(-1)
    for t in range(P[P[H_LESS_PTR] + d], P[P[H_LESS_PTR] + d + 1]):
        p = P[P[H_LESS] + t]
        if p < s and M[p] > lo:
            lo = M[p]
    return lo


@gthinker.compiler.jit("SM functions", nogil=True)
def _count_above(P, M, S, s, d, lo):
    """How many vertices of the sorted ``S`` may take position ``d`` after
    ``M[:s]``: above ``lo``, not in ``M[:s]``, and, when the plan says so, in
    ``C(u)``. Without that check: a binary search, and one per matched vertex."""
    check = P[H_TAIL_FILTER] != 0
    a = lower_bound(S, 0, S.size, lo + 1)
    n = S.size - a
    if check:
        n = 0
        for i in range(a, S.size):
            n += is_candidate(P, d, S[i])
    for p in range(s):
        v = M[p]
        if v > lo and (not check or is_candidate(P, d, v)):
            j = lower_bound(S, a, S.size, v)
            if j < S.size and S[j] == v:
                n -= 1
    return n


@gthinker.compiler.jit("SM functions", nogil=True)
def _filtered(P, M, S, s, d, out):
    """The vertices of ``S`` that may take position ``d`` after ``M[:s]`` (see
    :func:`_count_above`) into ``out``; returns how many."""
    lo = _floor(P, M, d, s)
    check = P[H_TAIL_FILTER] != 0
    n = 0
    for i in range(lower_bound(S, 0, S.size, lo + 1), S.size):
        v = S[i]
        if check and not is_candidate(P, d, v):
            continue
        used = False
        for p in range(s):
            used |= M[p] == v
        if not used:
            out[n] = v
            n += 1
    return n


@gthinker.compiler.jit("SM functions", nogil=True)
def _pairs(P, M, A, na, S, s, d, joined):
    """The pairs ``(x, y)``, ``x`` in the filtered ``A[:na]`` (position ``d - 1``),
    ``y`` a vertex of the sorted ``S`` that may take position ``d`` after ``M[:s]``:
    ``x != y``, and ``x < y`` when ``joined``. ``S`` is never filtered into a copy:
    a count above each bound and one binary search per ``x``."""
    lo = _floor(P, M, d, s)
    check = P[H_TAIL_FILTER] != 0
    if joined:
        n = 0
        for i in range(na):
            x = A[i]
            n += _count_above(P, M, S, s, d, x if x > lo else lo)
        return n
    n = na * _count_above(P, M, S, s, d, lo)
    for i in range(na):  # x == y: x may take position d too
        x = A[i]
        if x > lo and (not check or is_candidate(P, d, x)):
            j = lower_bound(S, 0, S.size, x)
            if j < S.size and S[j] == x:
                n -= 1
    return n


@gthinker.compiler.jit("SM functions", nogil=True)
def _pairs_apart(P, M, S, T, s):
    """The pairs ``(x, y)``, ``x != y``, of the last two positions (``s``, ``s + 1``;
    no restriction between them, no candidate check), ``x`` from the sorted ``S`` and
    ``y`` from ``T``: ``|A| |B| - |A & B|`` from sizes above each bound and one
    intersection size, nothing filtered into a copy."""
    lo_a, lo_b = _floor(P, M, s, s), _floor(P, M, s + 1, s)
    na = _count_above(P, M, S, s, s, lo_a)
    nb = _count_above(P, M, T, s, s + 1, lo_b)
    if na == 0 or nb == 0:
        return 0
    lo = lo_a if lo_a > lo_b else lo_b
    a = S[lower_bound(S, 0, S.size, lo + 1) :]
    b = T[lower_bound(T, 0, T.size, lo + 1) :]
    both = intersect_size(a, b)
    for p in range(s):  # matched vertices in both sets were never candidates
        v = M[p]
        if v > lo:
            i = lower_bound(a, 0, a.size, v)
            j = lower_bound(b, 0, b.size, v)
            if i < a.size and a[i] == v and j < b.size and b[j] == v:
                both -= 1
    return na * nb - both


@gthinker.compiler.jit("SM functions", nogil=True)
def _joined(P, a, b):
    """-1 when a restriction says ``m[a] < m[b]``, else 0 (restrictions run forward)."""
    for t in range(P[P[H_LESS_PTR] + b], P[P[H_LESS_PTR] + b + 1]):
        if P[P[H_LESS] + t] == a:
            return -1
    return 0


@gthinker.compiler.jit("SM functions", nogil=True)
def _count_tail(indptr, indices, P, M, raw, rawlen, cand, s):
    """The matches of ``M[:s]`` over the count-only positions ``s..nq-1``, from
    intersection sizes (the planner's ``H_TAIL``): one position, the vertices in
    range; two, ``|A| |B| - |A & B|`` or the pairs ``x < y`` when a restriction joins
    them; a run of twins, ``C(|A|, r)`` under a chain of restrictions, or
    ``|A| (|A| - 1) ... (|A| - r + 1)`` without."""
    nq = P[H_NQ]
    r = nq - s
    if r == 1:
        S = _tail_set(indptr, indices, P, M, raw, rawlen, s)
        return _count_above(P, M, S, s, s, _floor(P, M, s, s))
    if r == 2:
        S = _tail_set(indptr, indices, P, M, raw, rawlen, s)
        joined = _joined(P, s, s + 1) < 0
        if P[H_TAIL_SAME] != 0 and joined:  # twins: one set, and pairs x < y of it
            na = _count_above(P, M, S, s, s, _floor(P, M, s, s))
            return na * (na - 1) // 2
        if P[H_TAIL_FILTER] == 0 and not joined:
            T = S if P[H_TAIL_SAME] != 0 else _tail_set(indptr, indices, P, M, raw, rawlen,
                                                         s + 1)
            return _pairs_apart(P, M, S, T, s)
        na = _filtered(P, M, S, s, s, cand[s])
        if na == 0:
            return 0
        if P[H_TAIL_SAME] == 0:
            S = _tail_set(indptr, indices, P, M, raw, rawlen, s + 1)
        return _pairs(P, M, cand[s], na, S, s, s + 1, joined)
    n = _filtered(P, M, _tail_set(indptr, indices, P, M, raw, rawlen, s), s, s, cand[s])
    total = 1
    for i in range(r):  # a falling factorial, divided by r! along the way for a chain
        total = total * (n - i)
        if P[H_TAIL_CHAIN] != 0:
            total //= i + 1
    return total


@gthinker.compiler.jit("SM functions", nogil=True)
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
