"""Subgraph matching on the GPU, written on the public GPUContext API.

The GPU side of :mod:`gthinker.apps.sm`: the same plan (candidate bitmaps,
matching order, symmetry-breaking constraints, all in the job's ``params``)
and the same counts. Two record layouts, the two modes of G2-AIMD that
G-ThinkerCG uses:

**prefix** (:class:`SubgraphMatchingPrefixGPU`): a record is a partial match
and its candidate list, ``[k, M[0..k-1], C...]``, C being the candidates of
position k. ``process`` (one warp) extends the match with every candidate in
turn, the warp sharing each child's intersection; a child at the last
position is only counted, the others go to the queue with their candidate
count, and ``extend`` (one thread) writes the child with its own candidate
list. A record holds all its candidates, so a level needs fewer records and
the last level is never written; but a record with a huge candidate list
keeps one warp busy alone.

**expand** (:class:`SubgraphMatchingExpandGPU`): a record is a partial match
alone, ``[k, M[0..k-1]]``, exactly the CPU task's record. ``process`` (one
warp) computes the candidates of position k and queues one entry per
candidate; ``extend`` writes one child per candidate. Every branch is its own
record, so very skewed fanouts spread over all warps.

A candidate of position d must be a neighbour of the data vertex of each of
d's backward neighbours: the warp walks the shortest of those neighbour lists
(32 entries at a time) and looks the others up by binary search, then applies
the planner's rule (:func:`gthinker.apps.matching.planner.admissible`: the candidate
bitmap, injectivity and the ``M(a) < M(b)`` constraints).
"""

from __future__ import annotations

import numpy as np
from numba import cuda

import gthinker
from gthinker.extending import gpu

from .planner import H_BACK, H_BACK_PTR, H_NQ, device_functions

__all__ = ["SubgraphMatchingExpandGPU", "SubgraphMatchingPrefixGPU"]


@cuda.jit(device=True, inline=True)
def _at(rec, k, c, p):
    """Data vertex at position p of the match ``M + c``: ``M = rec[1 : 1 + k]``,
    then c at position k."""
    if p < k:
        return rec[1 + p]
    return c


_RULE = device_functions()  # the planner's candidate rule, as device functions
_in_bitmap = _RULE["in_candidates"]
_admissible = _RULE["admissible"]


@cuda.jit(device=True)
def _driver(g, P, rec, k, c, d):
    """The backward neighbour (a position) of d whose data vertex has the fewest
    neighbours: its list is the one walked."""
    lo = P[P[H_BACK_PTR] + d]
    hi = P[P[H_BACK_PTR] + d + 1]
    best = P[P[H_BACK] + lo]
    v = _at(rec, k, c, best)
    fewest = g.indptr[v + 1] - g.indptr[v]
    for s in range(lo + 1, hi):
        p = P[P[H_BACK] + s]
        v = _at(rec, k, c, p)
        if g.indptr[v + 1] - g.indptr[v] < fewest:
            fewest = g.indptr[v + 1] - g.indptr[v]
            best = p
    return best


@cuda.jit(device=True)
def _valid(g, P, rec, k, c, d, drv, v):
    """True if ``v``, a neighbour of the driver's data vertex, is a candidate of
    position d for the match ``M + c``."""
    if not _admissible(P, rec, 1, k, c, d, v):
        return False
    for s in range(P[P[H_BACK_PTR] + d], P[P[H_BACK_PTR] + d + 1]):
        p = P[P[H_BACK] + s]
        if p != drv:
            u = _at(rec, k, c, p)
            if not gpu.contains(g.indices, g.indptr[u], g.indptr[u + 1], v):
                return False
    return True


@cuda.jit(device=True)
def _warp_count(g, P, rec, k, c, d):
    """|candidates of position d| for ``M + c``, the warp sharing the walk
    (every lane gets the total)."""
    lane = gpu.lane_id()
    drv = _driver(g, P, rec, k, c, d)
    u = _at(rec, k, c, drv)
    n = 0
    for i in range(g.indptr[u] + lane, g.indptr[u + 1], 32):
        if _valid(g, P, rec, k, c, d, drv, g.indices[i]):
            n += 1
    return gpu.warp_sum(n)


@cuda.jit(device=True)
def _warp_queue(g, P, rec, k, d, q, start):
    """Writes the candidates of position d for ``M`` (k == d) into ``q.a`` from
    ``start`` on, the warp compacting them in order."""
    lane = gpu.lane_id()
    drv = _driver(g, P, rec, k, -1, d)
    u = _at(rec, k, -1, drv)
    lo = g.indptr[u]
    for base in range(lo, g.indptr[u + 1], 32):
        i = base + lane
        ok = i < g.indptr[u + 1] and _valid(g, P, rec, k, -1, d, drv, g.indices[i])
        below, total = gpu.warp_prefix(ok)
        if ok:
            q.a[start + below] = g.indices[i]
            q.b[start + below] = -1
        start += total


@cuda.jit(device=True)
def _expand_match(g, P, rec, k, q):
    """A warp's work on a bare partial match ``[k, M]`` (k = its length):
    counts a full match, or counts the candidates of the last position, or
    queues one entry per candidate of position k (``q.b = -1``)."""
    nq = P[H_NQ]
    lane = gpu.lane_id()
    if k >= nq:  # a full match (a CPU record)
        if lane == 0:
            gpu.count(g, 0, 1)
        return
    n = _warp_count(g, P, rec, k, -1, k)
    if k == nq - 1:
        if lane == 0 and n > 0:
            gpu.count(g, 0, n)
        return
    if n > 0:
        start = gpu.push(q, n)
        if start >= 0:
            _warp_queue(g, P, rec, k, k, q, start)


@cuda.jit(device=True)
def _serial(g, P, rec, k, c, d, dst, pos, write):
    """One thread: counts the candidates of position d for ``M + c``, and with
    ``write`` stores them at ``dst[pos:]``. Returns the count."""
    drv = _driver(g, P, rec, k, c, d)
    u = _at(rec, k, c, drv)
    n = 0
    for i in range(g.indptr[u], g.indptr[u + 1]):
        v = g.indices[i]
        if _valid(g, P, rec, k, c, d, drv, v):
            if write:
                dst[pos + n] = v
            n += 1
    return n


class SubgraphMatchingExpandGPU(gthinker.GPUContext):
    """Expand mode: one record per partial match, ``[k, M...]`` (as on the CPU)."""

    counters = ("matches",)

    @staticmethod
    def generate_initial_tasks(g, v, out):
        P = g.params
        if not _in_bitmap(P, 0, v):
            return
        if P[H_NQ] == 1:
            gpu.count(g, 0, 1)
            return
        pos = gpu.append(out, 2)
        if pos < 0:
            return
        out.vertices[pos] = 1
        out.vertices[pos + 1] = v

    @staticmethod
    def process(g, rec, q):
        _expand_match(g, g.params, rec, rec[0], q)
        return len(rec)

    @staticmethod
    def extend(g, rec, c, _unused, out):
        k = rec[0]
        pos = gpu.append(out, k + 2)
        if pos < 0:
            return
        child = out.vertices
        child[pos] = k + 1
        for i in range(1, k + 1):
            child[pos + i] = rec[i]
        child[pos + k + 1] = c


class SubgraphMatchingPrefixGPU(gthinker.GPUContext):
    """Prefix mode: a record is ``[k, M..., C...]``, the partial match with the
    candidates of position k. Records that come from the CPU (``[k, M]``) are
    marked ``[-k, M]`` until their candidates are known."""

    counters = ("matches",)

    @staticmethod
    def generate_initial_tasks(g, v, out):
        P = g.params
        nq = P[H_NQ]
        if not _in_bitmap(P, 0, v):
            return
        if nq == 1:
            gpu.count(g, 0, 1)
            return
        n = _serial(g, P, g.indices, 0, v, 1, g.indices, 0, False)
        if nq == 2 or n == 0:
            if n > 0:
                gpu.count(g, 0, n)
            return
        pos = gpu.append(out, 2 + n)
        if pos < 0:
            return
        out.vertices[pos] = 1
        out.vertices[pos + 1] = v
        _serial(g, P, g.indices, 0, v, 1, out.vertices, pos + 2, True)

    @staticmethod
    def process(g, rec, q):
        P = g.params
        nq = P[H_NQ]
        k = rec[0]
        lane = gpu.lane_id()
        if k < 0:  # from the CPU: the candidates of position -k are not known yet
            _expand_match(g, P, rec, -k, q)
            return len(rec)
        nc = len(rec) - 1 - k
        if k == nq - 1:
            if lane == 0:
                gpu.count(g, 0, nc)
            return len(rec)
        d = k + 1
        if d == nq - 1:  # the children are full matches' parents: count only
            total = 0
            for j in range(nc):
                total += _warp_count(g, P, rec, k, rec[1 + k + j], d)
            if lane == 0 and total > 0:
                gpu.count(g, 0, total)
            return len(rec)
        start = gpu.push(q, nc)
        if start < 0:
            return len(rec)
        cuda.syncwarp(gpu.FULL_MASK)
        for j in range(nc):
            c = rec[1 + k + j]
            n = _warp_count(g, P, rec, k, c, d)
            if lane == (j & 31):  # the lane that filled this entry in push()
                if n > 0:
                    q.a[start + j] = c
                    q.b[start + j] = n
                else:
                    q.rec[start + j] = -1  # a dead branch: extend skips it
        return len(rec)

    @staticmethod
    def extend(g, rec, c, n, out):
        P = g.params
        k = rec[0]
        if k < 0:
            k = -k
        d = k + 1
        if n < 0:  # queued from a CPU record: the child's candidates are not counted yet
            n = _serial(g, P, rec, k, c, d, rec, 0, False)
            if d == P[H_NQ] - 1:
                if n > 0:
                    gpu.count(g, 0, n)
                return
            if n == 0:
                return
        pos = gpu.append(out, 2 + k + n)
        if pos < 0:
            return
        child = out.vertices
        child[pos] = d
        for i in range(1, k + 1):
            child[pos + i] = rec[i]
        child[pos + d] = c
        _serial(g, P, rec, k, c, d, child, pos + d + 1, True)

    def move_tasks_from_cpu(self, task_data, task_starts):
        data = task_data.copy()
        data[task_starts[:-1]] *= -1  # [k, M] -> [-k, M]: candidates not computed
        return data, task_starts

    def move_tasks_to_cpu(self, data, starts):
        return _prefix_to_cpu(data, starts)


@gthinker.compiler.jit("SM GPU functions")
def _prefix_to_cpu(data, starts):
    """GPU prefix records to CPU records: ``[-k, M]`` -> ``[k, M]``;
    ``[k, M, C...]`` -> one ``[k + 1, M, c]`` per candidate c."""
    n = starts.size - 1
    size = 0
    count = 0
    for r in range(n):
        s, e = starts[r], starts[r + 1]
        k = data[s]
        if k < 0:
            size += e - s
            count += 1
        else:
            nc = e - s - 1 - k
            size += nc * (k + 2)
            count += nc
    out = np.empty(size, np.int32)
    ostarts = np.empty(count + 1, np.int64)
    w = 0
    j = 0
    for r in range(n):
        s, e = starts[r], starts[r + 1]
        k = data[s]
        if k < 0:
            ostarts[j] = w
            j += 1
            out[w] = -k
            out[w + 1 : w + e - s] = data[s + 1 : e]
            w += e - s
        else:
            for i in range(s + 1 + k, e):
                ostarts[j] = w
                j += 1
                out[w] = k + 1
                out[w + 1 : w + 1 + k] = data[s + 1 : s + 1 + k]
                out[w + 1 + k] = data[i]
                w += k + 2
    ostarts[count] = w
    return out, ostarts
