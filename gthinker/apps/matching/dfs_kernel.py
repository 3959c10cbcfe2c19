"""Device code of the depth-first GPU matcher (:mod:`gthinker.apps.matching.dfs_gpu`): one
persistent kernel in which every warp runs its own depth-first search, T-DFS style.

**Work.** A warp takes, in this order: a task from the device task queue (a partial match
of at most ``STOP_K`` vertices that another warp split off); an input record (a partial
match ``[k, M...]`` handed over by the CPU workers, as their search writes it); or the next
32 initial edges ``(v, u)`` of the assignment's first vertices (edge filtering: the
candidate bitmaps of positions 0 and 1 and the restriction between them; every lane
reads the same edge). Each edge that passes is a task ``[2, v, u]``. Where the count-only
tail starts at position 1 (stars, paths of three, single edges) the initial items are the first
vertices themselves, tasks ``[1, v]``.

**A task** ``[k, M[0..k-1]]``: the warp computes the program's lists up to depth k - 1
(:mod:`gthinker.apps.matching.dfs_plan`: intersections kept and reused by every position that needs
them), then searches depth first: at each level the filtered candidates of the position are
written to the warp's buffer of that position, and a level's lists are computed when its
vertex is chosen. At the first count-only position the matches below are counted from sizes
(:func:`_tail`), never enumerated. Every intersection is a warp's
(:mod:`gthinker.apps.matching.warp_sets`).

**Timeout decomposition.** A warp counts the list elements it reads since it took its work
(the clock: work, not nanoseconds, so that a split happens at the same point on every GPU
and on the simulator). Past ``budget`` elements, at a level whose tasks would hold at most
``STOP_K`` matched vertices, it writes every candidate it has not started at that level into
the queue as a task and backtracks, doing the same at each level down to its task's own;
the rest of its edge chunk goes to the queue too. A full queue: the warp goes on by itself
(its clock restarts). The queue is T-DFS's lock-free ring of fixed-size records (empty slots
hold -1; writers claim slots with compare-and-swap, readers empty them with exchange).

**The end.** A warp that finds no work waits while any warp is busy or the queue holds
tasks (``C_BUSY``, ``C_QSIZE``); the last warp to finish writes the total count to mapped
host memory, and a flag the host polls. The host sets ``result[R_ABORT]`` to stop a run:
warps look at it every ``POLL`` claims and leave.
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from gthinker.gpu.device_helpers import FULL_MASK, lower_bound, warp_prefix, warp_sum

from .dfs_plan import (
    G_CHAIN,
    G_CHECK,
    G_INJ,
    G_INJ_PTR,
    G_JOINED,
    G_LPAR,
    G_LX,
    G_NLISTS,
    G_NQ,
    G_S,
    G_SCHED,
    G_SCHED_PTR,
    G_SRC,
    G_TAIL,
    G_TWINS,
    MAX_LISTS,
    MAX_QUERY,
)
from .planner import H_LESS, H_LESS_PTR, H_MORE, H_MORE_PTR, device_functions
from .warp_sets import NONE, common_into, common_size

__all__ = ["CTRL", "QW", "RESULT", "STOP_K", "WARPS_PER_BLOCK", "match"]

WARPS_PER_BLOCK = 8  #: warps a block has room for in shared memory
STOP_K = 3  #: tasks split off hold at most this many matched vertices (T-DFS's StopLevel)
QW = STOP_K + 1  #: int32 slots of a queue record: [k, M[0], ..., M[STOP_K - 1]]
CHUNK = 32  #: initial edges a warp takes at once
POLL = 16  #: a warp looks at the host's abort flag every POLL claims
IDLE_NAP_MAX = 8192  #: nanoseconds an idle warp sleeps at most between looks for work
_SH = 3 * MAX_QUERY + MAX_LISTS + 32  # int32 shared slots of a warp
_BIG = 1 << 40  # above every vertex id: no upper bound

# ---- the control words (int64, at the start of the kernel's one int64 array) ----------
C_N, C_MODE, C_ELO, C_NITEMS, C_CURSOR = 0, 1, 2, 3, 4  # the graph's n; initial edges
C_NRECS, C_RCURSOR = 5, 6  # input records
C_BUSY, C_QSIZE, C_QFRONT, C_QBACK, C_QCAP = 7, 8, 9, 10, 11  # the queue
C_COUNT, C_DONE, C_WARPS, C_STRIDE, C_CAP, C_BUDGET = 12, 13, 14, 15, 16, 17
C_PB, C_GB, C_SPLITS, C_FULL, C_NROOTS = 18, 19, 20, 21, 22  # offsets; stats; roots
C_BY_VERTEX = 23  # 1: the initial items are the first vertices (a tail from position 1)
CTRL = 24

# ---- the mapped result array (int64, host memory) --------------------------------------
R_COUNT, R_ABORT, R_DONE, R_SPLITS, R_FULL = 0, 1, 2, 3, 4
RESULT = 8

_RULE = device_functions()
_in_candidates = _RULE["in_candidates"]


# ---- small pieces ---------------------------------------------------------------------


@cuda.jit(device=True, inline=True)
def _source(code, M, indptr, indices, lists, base, cap, llen):
    """A position's or a list's source as ``(array, lo, hi)``: kept list ``code``, or the
    row of the vertex at position ``-1 - code``."""
    if code >= 0:
        lo = base + code * cap
        return lists, lo, lo + llen[code]
    v = M[-1 - code]
    return indices, indptr[v], indptr[v + 1]


@cuda.jit(device=True)
def _bounds(P, M, d, m):
    """The open range ``(lo, hi)`` position d's vertex must lie in by its restrictions
    with the matched positions below ``m``."""
    lo = -1
    hi = _BIG
    for t in range(P[P[H_LESS_PTR] + d], P[P[H_LESS_PTR] + d + 1]):
        p = P[P[H_LESS] + t]
        if p < m and M[p] > lo:
            lo = M[p]
    for t in range(P[P[H_MORE_PTR] + d], P[P[H_MORE_PTR] + d + 1]):
        p = P[P[H_MORE] + t]
        if p < m and M[p] < hi:
            hi = M[p]
    return lo, hi


@cuda.jit(device=True)
def _admit(P, G, M, d, x, check):
    """Injectivity against position d's non-backward matched positions, and, with
    ``check``, its candidate bitmap."""
    for t in range(G[G[G_INJ_PTR] + d], G[G[G_INJ_PTR] + d + 1]):
        if M[G[G[G_INJ] + t]] == x:
            return False
    return not check or _in_candidates(P, d, x)


@cuda.jit(device=True)
def _filter(P, G, M, d, m, a, lo, hi, out, at, check, write, lane):
    """Position d's candidates (restrictions with positions below ``m``) among the sorted
    ``a[lo:hi]``: written in order to ``out[at:]`` when ``write``; returns how many (every
    lane)."""
    blo, bhi = _bounds(P, M, d, m)
    if blo >= 0:
        lo = lower_bound(a, lo, hi, blo + 1)
    if bhi < _BIG:
        hi = lower_bound(a, lo, hi, bhi)
    n = 0
    for start in range(lo, hi, 32):
        i = start + lane
        x = NONE
        ok = False
        if i < hi:
            x = a[i]
            ok = _admit(P, G, M, d, x, check)
        below, total = warp_prefix(ok)
        if write and ok:
            out[at + n + below] = x
        n += total
    cuda.syncwarp(FULL_MASK)
    return n


@cuda.jit(device=True)
def _count(P, G, M, d, m, a, lo, hi, check, lane):
    """How many of the sorted ``a[lo:hi]`` may take position d (as :func:`_filter`);
    without a bitmap check, from the range's size less the matched vertices in it."""
    if check:
        return _filter(P, G, M, d, m, a, lo, hi, a, 0, check, False, lane)
    blo, bhi = _bounds(P, M, d, m)
    if blo >= 0:
        lo = lower_bound(a, lo, hi, blo + 1)
    if bhi < _BIG:
        hi = lower_bound(a, lo, hi, bhi)
    first = G[G[G_INJ_PTR] + d]
    used = 0
    for t in range(first + lane, G[G[G_INJ_PTR] + d + 1], 32):
        x = M[G[G[G_INJ] + t]]
        p = lower_bound(a, lo, hi, x)
        if p < hi and a[p] == x:
            used += 1
    return (hi - lo) - warp_sum(used)


# ---- lists, candidates and the count-only tail ---------------------------------------


@cuda.jit(device=True)
def _lists_at(G, M, j, indptr, indices, lists, base, cap, llen, cache, lane):
    """Computes the kept lists of depth j (the vertex at position j just chosen):
    ``(all non-empty, work)``."""
    work = 0
    for t in range(G[G[G_SCHED_PTR] + j], G[G[G_SCHED_PTR] + j + 1]):
        li = G[G[G_SCHED] + t]
        a, alo, ahi = _source(G[G[G_LPAR] + li], M, indptr, indices, lists, base, cap, llen)
        v = M[G[G[G_LX] + li]]
        n = common_into(a, alo, ahi, indices, indptr[v], indptr[v + 1], lists,
                        base + li * cap, cache, lane)
        work += min(ahi - alo, indptr[v + 1] - indptr[v]) + 1
        cuda.syncwarp(FULL_MASK)
        if lane == 0:
            llen[li] = n
        cuda.syncwarp(FULL_MASK)
        if n == 0:
            return False, work
    return True, work


@cuda.jit(device=True)
def _candidates(P, G, M, d, indptr, indices, lists, base, cap, llen, clen, lane):
    """Position d's filtered candidates into its buffer; ``(how many, work)``."""
    a, lo, hi = _source(G[G[G_SRC] + d], M, indptr, indices, lists, base, cap, llen)
    at = base + (G[G_NLISTS] + d) * cap
    n = _filter(P, G, M, d, d, a, lo, hi, lists, at, G[G[G_CHECK] + d], True, lane)
    if lane == 0:
        clen[d] = n
    cuda.syncwarp(FULL_MASK)
    return n, hi - lo + 1


@cuda.jit(device=True)
def _choose(n, r, chain):
    """``C(n, r)`` with ``chain``, else ``n (n - 1) ... (n - r + 1)`` (0 when n < r)."""
    total = np.int64(1)
    for i in range(r):
        total *= n - i
        if chain:
            total //= i + 1
    return total if n >= r else np.int64(0)


@cuda.jit(device=True)
def _tail(P, G, M, indptr, indices, lists, base, cap, llen, cache, lane):
    """The matches of ``M[:s]`` over the count-only positions s..nq-1 (see
    :mod:`gthinker.apps.matching.dfs_plan`); every lane gets the count."""
    s = G[G_S]
    r = G[G_TAIL]
    a, lo, hi = _source(G[G[G_SRC] + s], M, indptr, indices, lists, base, cap, llen)
    check = G[G[G_CHECK] + s]
    if r == 1:
        return np.int64(_count(P, G, M, s, s, a, lo, hi, check, lane))
    if r >= 3 or G[G_TWINS]:
        return _choose(np.int64(_count(P, G, M, s, s, a, lo, hi, check, lane)), r,
                       G[G_CHAIN] or G[G_TWINS])
    at = base + (G[G_NLISTS] + s) * cap
    na = _filter(P, G, M, s, s, a, lo, hi, lists, at, check, True, lane)
    if na == 0:
        return np.int64(0)
    b, blo, bhi = _source(G[G[G_SRC] + s + 1], M, indptr, indices, lists, base, cap, llen)
    bt = at + cap
    nb = _filter(P, G, M, s + 1, s, b, blo, bhi, lists, bt, G[G[G_CHECK] + s + 1], True,
                 lane)
    if nb == 0:
        return np.int64(0)
    if G[G_JOINED]:  # pairs x < y
        pairs = np.int64(0)
        for i in range(lane, na, 32):
            x = lists[at + i]
            pairs += nb - (lower_bound(lists, bt, bt + nb, x + 1) - bt)
        return warp_sum(pairs)
    both = warp_sum(common_size(lists, at, at + na, lists, bt, bt + nb, cache, lane))
    return np.int64(na) * nb - both


# ---- the task queue (lane 0 alone, except :func:`_split`) ----------------------------


@cuda.jit(device=True, inline=True)
def _put(queue, i, v):
    while cuda.atomic.cas(queue, i, -1, v) != -1:  # a reader still empties the slot
        cuda.nanosleep(32)


@cuda.jit(device=True, inline=True)
def _get(queue, i):
    v = cuda.atomic.exch(queue, i, -1)
    while v == -1:  # its writer has not filled it yet
        cuda.nanosleep(32)
        v = cuda.atomic.exch(queue, i, -1)
    return v


@cuda.jit(device=True)
def _reserve(arr, records):
    """Room for ``records`` queue records: their first slot (a running count; modulo
    the capacity), or -1 when the queue is full."""
    need = records * QW
    if cuda.atomic.add(arr, C_QSIZE, need) + need > arr[C_QCAP]:
        cuda.atomic.add(arr, C_QSIZE, -need)
        return np.int64(-1)
    return cuda.atomic.add(arr, C_QBACK, need)


@cuda.jit(device=True)
def _take(queue, arr, M):
    """A task from the queue into ``M``: its length k, or 0 when the queue is empty."""
    if cuda.atomic.add(arr, C_QSIZE, -QW) <= 0:
        cuda.atomic.add(arr, C_QSIZE, QW)
        return 0
    pos = cuda.atomic.add(arr, C_QFRONT, QW) % arr[C_QCAP]
    k = _get(queue, pos)
    for f in range(1, QW):
        v = _get(queue, pos + f)
        if f <= k:
            M[f - 1] = v
    return k


@cuda.jit(device=True)
def _write_record(queue, slot, M, k, c):
    """Queue record ``[k, M[0..k-2], c]`` at ``slot``."""
    _put(queue, slot, k)
    for f in range(1, QW):
        _put(queue, slot + f, M[f - 1] if f < k else (c if f == k else 0))


@cuda.jit(device=True)
def _room(arr, records, lane):
    """Lane 0 reserves ``records`` queue records and counts them as split off (or the
    queue as full): their first slot on every lane, or -1."""
    pos = np.int64(-1)
    if lane == 0:
        pos = _reserve(arr, records)
        if pos >= 0:
            cuda.atomic.add(arr, C_SPLITS, records)
        else:
            cuda.atomic.add(arr, C_FULL, 1)
    return cuda.shfl_sync(FULL_MASK, pos, 0)


@cuda.jit(device=True)
def _split(queue, arr, M, lists, at, i, n, lvl, lane):
    """Tasks ``[lvl + 1, M[:lvl], c]`` for the candidates ``c = lists[at + i .. at + n)``
    of position lvl, written by the lanes; False when the queue is full."""
    count = n - i
    pos = _room(arr, count, lane)
    if pos < 0:
        return False
    qcap = arr[C_QCAP]
    for t in range(lane, count, 32):
        _write_record(queue, (pos + t * QW) % qcap, M, lvl + 1, lists[at + i + t])
    cuda.syncwarp(FULL_MASK)
    return True


# ---- a task: depth first from a partial match -------------------------------------------


@cuda.jit(device=True)
def _task(k, work, P, G, M, idx, clen, llen, indptr, indices, lists, base, queue, arr, cache,
          lane):
    """The matches below the partial match ``M[:k]`` (in shared memory), depth first;
    splits off tasks past the budget (see the module docstring). ``work``: the clock so
    far. Returns ``(matches, work)``, the same on every lane."""
    cap = arr[C_CAP]
    nq = G[G_NQ]
    s = G[G_S]
    nl = G[G_NLISTS]
    for j in range(k):
        ok, w = _lists_at(G, M, j, indptr, indices, lists, base, cap, llen, cache, lane)
        work += w
        if not ok:
            return np.int64(0), work
    if k >= nq:
        return np.int64(1), work
    if k == s:
        return _tail(P, G, M, indptr, indices, lists, base, cap, llen, cache, lane), work
    n, w = _candidates(P, G, M, k, indptr, indices, lists, base, cap, llen, clen, lane)
    work += w
    total = np.int64(0)
    if n == 0:
        return total, work
    if lane == 0:
        idx[k] = 0
    cuda.syncwarp(FULL_MASK)
    budget = arr[C_BUDGET]
    lvl = k
    while lvl >= k:
        i = idx[lvl]
        if i >= clen[lvl]:
            lvl -= 1
            continue
        at = base + (nl + lvl) * cap
        if work > budget and lvl < STOP_K:  # timed out: the rest of this level to the queue
            if _split(queue, arr, M, lists, at, i, clen[lvl], lvl, lane):
                if lane == 0:
                    idx[lvl] = clen[lvl]
                cuda.syncwarp(FULL_MASK)
                continue
            work = 0  # the queue is full: go on here, the clock restarted
        c = lists[at + i]
        cuda.syncwarp(FULL_MASK)
        if lane == 0:
            idx[lvl] = i + 1
            M[lvl] = c
        cuda.syncwarp(FULL_MASK)
        ok, w = _lists_at(G, M, lvl, indptr, indices, lists, base, cap, llen, cache, lane)
        work += w
        if not ok:
            continue
        if lvl + 1 == s:
            total += _tail(P, G, M, indptr, indices, lists, base, cap, llen, cache, lane)
            continue
        n, w = _candidates(P, G, M, lvl + 1, indptr, indices, lists, base, cap, llen, clen,
                           lane)
        work += w
        if n == 0:
            continue
        lvl += 1
        if lane == 0:
            idx[lvl] = 0
        cuda.syncwarp(FULL_MASK)
    return total, work


# ---- initial edges and input records ---------------------------------------------------


@cuda.jit(device=True)
def _edge(arr, indptr, roots, rcum, item):
    """Initial edge ``item`` of the assignment: ``(first vertex, edge index)``."""
    if arr[C_MODE] == 0:  # a range of first vertices: its edges are consecutive
        e = arr[C_ELO] + item
        return lower_bound(indptr, 0, arr[C_N] + 1, e + 1) - 1, e
    r = lower_bound(rcum, 0, arr[C_NROOTS] + 1, item + 1) - 1  # an array of them
    v = roots[r]
    return v, indptr[v] + item - rcum[r]


@cuda.jit(device=True)
def _edge_ok(P, v, u):
    """Edge filtering: v may take position 0 and u position 1 (bitmaps, restriction)."""
    if not (_in_candidates(P, 0, v) and _in_candidates(P, 1, u)):
        return False
    if P[P[H_LESS_PTR] + 2] > P[P[H_LESS_PTR] + 1] and not v < u:  # m[0] < m[1]
        return False
    return P[P[H_MORE_PTR] + 2] == P[P[H_MORE_PTR] + 1] or v > u


@cuda.jit(device=True)
def _edges(first, count, P, G, M, idx, clen, llen, indptr, indices, lists, base, queue, arr,
           roots, rcum, cache, lane):
    """The tasks ``[2, v, u]`` of initial edges ``first .. first + count - 1``, one after
    another (every lane reads the same edge and applies the edge filter); past the budget
    the edges left go to the queue."""
    total = np.int64(0)
    work = np.int64(0)
    t = 0
    while t < count:
        v, e = _edge(arr, indptr, roots, rcum, first + t)
        u = indices[e]
        t += 1
        if not _edge_ok(P, v, u):
            continue
        cuda.syncwarp(FULL_MASK)
        if lane == 0:
            M[0] = v
            M[1] = u
        cuda.syncwarp(FULL_MASK)
        got, work = _task(2, work, P, G, M, idx, clen, llen, indptr, indices, lists, base,
                          queue, arr, cache, lane)
        total += got
        if work > arr[C_BUDGET] and t < count:
            if _split_edges(queue, arr, P, indptr, indices, roots, rcum, first + t,
                            count - t, lane):
                break
            work = 0
    return total


@cuda.jit(device=True)
def _split_edges(queue, arr, P, indptr, indices, roots, rcum, first, count, lane):
    """Tasks ``[2, v, u]`` for the initial edges ``first .. first + count - 1`` (at most
    32) that pass the edge filter, a lane each; False when the queue is full."""
    v = np.int64(0)
    u = np.int64(0)
    ok = False
    if lane < count:
        v, e = _edge(arr, indptr, roots, rcum, first + lane)
        u = indices[e]
        ok = _edge_ok(P, v, u)
    below, passed = warp_prefix(ok)
    if passed == 0:
        return True
    pos = _room(arr, passed, lane)
    if pos < 0:
        return False
    if ok:
        slot = (pos + below * QW) % arr[C_QCAP]
        _put(queue, slot, 2)
        _put(queue, slot + 1, v)
        _put(queue, slot + 2, u)
        for f in range(3, QW):
            _put(queue, slot + f, 0)
    cuda.syncwarp(FULL_MASK)
    return True


@cuda.jit(device=True)
def _vertices(first, count, P, G, M, idx, clen, llen, indptr, indices, lists, base, queue,
              arr, roots, cache, lane):
    """The tasks ``[1, v]`` of initial vertices ``first .. first + count - 1`` (the plan
    counts from position 1 on: no edges to enumerate), one after another."""
    total = np.int64(0)
    for t in range(count):
        v = arr[C_ELO] + first + t if arr[C_MODE] == 0 else np.int64(roots[first + t])
        if not _in_candidates(P, 0, v):
            continue
        cuda.syncwarp(FULL_MASK)
        if lane == 0:
            M[0] = v
        cuda.syncwarp(FULL_MASK)
        got, _ = _task(1, np.int64(0), P, G, M, idx, clen, llen, indptr, indices, lists, base,
                       queue, arr, cache, lane)
        total += got
    return total


@cuda.jit(device=True)
def _record(rdata, rstarts, r, M, lane):
    """Input record r ``[k, M...]`` into ``M``: returns k."""
    s = rstarts[r]
    k = rdata[s]
    for i in range(lane, k, 32):
        M[i] = rdata[s + 1 + i]
    cuda.syncwarp(FULL_MASK)
    return k


# ---- the kernel -----------------------------------------------------------------------


@cuda.jit(device=True, inline=True)
def _read(arr, i):
    """``arr[i]`` read from memory every time (an atomic: a plain load in a polling loop
    may keep returning a cached value)."""
    return cuda.atomic.add(arr, i, 0)


@cuda.jit(device=True)
def _work_visible(arr):
    """Does the queue hold tasks, or are input records or initial edges left?"""
    return (_read(arr, C_QSIZE) > 0 or _read(arr, C_RCURSOR) < arr[C_NRECS]
            or _read(arr, C_CURSOR) < arr[C_NITEMS])


@cuda.jit(device=True)
def _claim(arr, queue, M, lane):
    """Lane 0 takes work for the warp: ``(kind, a, b)`` on every lane: 1, a task of
    length a (in M); 2, the initial edges a .. a + b - 1; 3, input record a; 0, none
    (then the warp is not busy). A warp counts itself busy only while it tries for work
    it has seen: idle warps that counted themselves busy on every try would keep the
    count above zero between them, and no warp would ever leave."""
    kind = 0
    a = np.int64(0)
    b = np.int64(0)
    if lane == 0 and _work_visible(arr):
        cuda.atomic.add(arr, C_BUSY, 1)
        k = _take(queue, arr, M)
        if k > 0:
            kind = 1
            a = k
        else:
            r = cuda.atomic.add(arr, C_RCURSOR, 1) if arr[C_NRECS] > 0 else arr[C_NRECS]
            if r < arr[C_NRECS]:
                kind = 3
                a = r
            else:
                e = cuda.atomic.add(arr, C_CURSOR, CHUNK)
                if e < arr[C_NITEMS]:
                    kind = 2
                    a = e
                    b = min(CHUNK, arr[C_NITEMS] - e)
                else:
                    cuda.atomic.add(arr, C_BUSY, -1)
    cuda.syncwarp(FULL_MASK)
    return (cuda.shfl_sync(FULL_MASK, kind, 0), cuda.shfl_sync(FULL_MASK, a, 0),
            cuda.shfl_sync(FULL_MASK, b, 0))


@cuda.jit(device=True)
def _idle(arr, result, naps, lane):
    """A warp without work: True (leave) once nobody is busy, the queue is empty and no
    input is left, or the host asked to stop; else it waits, longer after each try
    (``naps``: tries so far), so that idle warps do not crowd the busy ones' atomics."""
    leave = 0
    if lane == 0:
        if result[R_ABORT] != 0:
            leave = 1
        elif (_read(arr, C_BUSY) == 0 and _read(arr, C_QSIZE) <= 0
              and not _work_visible(arr)):
            leave = 1
        else:
            cuda.nanosleep(np.uint32(min(128 << min(naps, 6), IDLE_NAP_MAX)))
    return cuda.shfl_sync(FULL_MASK, leave, 0) != 0


@cuda.jit(device=True)
def _finish(arr, result, total, lane):
    """Adds the warp's count; the last warp to finish moves the total, and the stats, to
    the mapped ``result`` and raises its done flag."""
    if lane == 0:
        cuda.atomic.add(arr, C_COUNT, total)
        cuda.threadfence()
        if cuda.atomic.add(arr, C_DONE, 1) == arr[C_WARPS] - 1:
            result[R_COUNT] = cuda.atomic.add(arr, C_COUNT, 0)
            result[R_SPLITS] = cuda.atomic.add(arr, C_SPLITS, 0)
            result[R_FULL] = cuda.atomic.add(arr, C_FULL, 0)
            cuda.threadfence_system()
            result[R_DONE] = 1


def match(indptr, indices, arr, lists, queue, roots, rcum, rdata, rstarts, result):
    """The kernel (see the module docstring): ``arr`` holds the control words, then the
    plan's params (at ``arr[C_PB]``) and the program (at ``arr[C_GB]``); ``lists``, each
    warp's buffers (``arr[C_STRIDE]`` slots a warp, ``arr[C_CAP]`` a buffer)."""
    lane = cuda.threadIdx.x & 31
    warp = cuda.grid(1) >> 5
    shared = cuda.shared.array((WARPS_PER_BLOCK, _SH), np.int32)
    mine = shared[cuda.threadIdx.x >> 5]
    M = mine[0:MAX_QUERY]
    idx = mine[MAX_QUERY:2 * MAX_QUERY]
    clen = mine[2 * MAX_QUERY:3 * MAX_QUERY]
    llen = mine[3 * MAX_QUERY:3 * MAX_QUERY + MAX_LISTS]
    cache = mine[3 * MAX_QUERY + MAX_LISTS:]
    if warp >= arr[C_WARPS]:
        return
    P = arr[arr[C_PB]:]
    G = arr[arr[C_GB]:]
    base = warp * arr[C_STRIDE]
    total = np.int64(0)
    claims = 0
    naps = 0
    while True:
        kind, a, b = _claim(arr, queue, M, lane)
        if kind == 0:
            if _idle(arr, result, naps, lane):
                break
            naps += 1
            continue
        naps = 0
        if kind == 2 and arr[C_BY_VERTEX]:
            total += _vertices(a, b, P, G, M, idx, clen, llen, indptr, indices, lists, base,
                               queue, arr, roots, cache, lane)
        elif kind == 2:
            total += _edges(a, b, P, G, M, idx, clen, llen, indptr, indices, lists, base,
                            queue, arr, roots, rcum, cache, lane)
        else:
            k = a if kind == 1 else _record(rdata, rstarts, a, M, lane)
            got, _ = _task(k, np.int64(0), P, G, M, idx, clen, llen, indptr, indices, lists,
                           base, queue, arr, cache, lane)
            total += got
        if lane == 0:
            cuda.atomic.add(arr, C_BUSY, -1)
        claims += 1
        if claims % POLL == 0 and cuda.shfl_sync(FULL_MASK, result[R_ABORT], 0) != 0:
            break
    _finish(arr, result, total, lane)
