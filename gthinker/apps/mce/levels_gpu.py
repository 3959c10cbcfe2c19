"""Maximal clique enumeration on the GPU, written on the public GPUContext API.

The GPU side of :mod:`gthinker.apps.mce`: the same search (Bron-Kerbosch with
Tomita pivoting on the degeneracy-ordered graph) and the same subgraph record
as the CPU task, ``[|R|, |P|, |X|, R..., P..., X...]`` with ``P`` and ``X``
sorted: a vertex's label (R, P or X) is the section it sits in. Sections
give a warp direct access to ``P`` (a hub's record has ``|X|`` in the tens
of thousands and ``|P|`` in the tens), and make CPU and GPU records
interchangeable, so tasks move between S and H as plain copies.

* ``generate_initial_tasks`` (one thread per vertex): ``R = {v}``, ``P`` =
  later neighbours, ``X`` = earlier ones.
* ``process`` (one warp per subgraph): counts, for every vertex of P and X,
  its neighbours in P; drops X vertices with none (they can never block a
  clique of this subtree); stops if an X vertex is adjacent to all of P (no
  clique here is maximal); picks the Tomita pivot (most neighbours in P, ties
  to the larger id); and queues one entry ``(w, pivot)`` per candidate
  ``w`` in ``P \\ N(pivot)``.
* ``extend`` (one thread per entry): builds the child of candidate ``w`` as
  sequential Bron-Kerbosch would after the candidates before it:
  ``R + w``, ``P' = {u in P & N(w) : u not a candidate < w}``,
  ``X' = (X & N(w)) + {candidates < w adjacent to w}``; a child with
  empty ``P'`` and ``X'`` is a maximal clique, counted at once.
"""

from __future__ import annotations

import numpy as np
from numba import cuda

import gthinker
from gthinker.extending import gpu

__all__ = ["MaximalCliquesGPU"]


@cuda.jit(device=True)
def _report(g, size):
    gpu.count(g, 0, 1)
    gpu.update_max(g, 0, size)
    gpu.add_to_histogram(g, 0, size)


@cuda.jit(device=True)
def _neighbours_in(g, sorted_set, n, u):
    """|N(u) & sorted_set[:n]|, searching the shorter side in the longer."""
    lo = g.indptr[u]
    hi = g.indptr[u + 1]
    c = 0
    if hi - lo < n:
        for j in range(lo, hi):
            if gpu.contains(sorted_set, 0, n, g.indices[j]):
                c += 1
    else:
        for i in range(n):
            if gpu.contains(g.indices, lo, hi, sorted_set[i]):
                c += 1
    return c


@cuda.jit(device=True)
def _candidate(g, u, piv):
    """True if P vertex u is a branch of the pivot step (u not adjacent to piv)."""
    return u == piv or not gpu.contains(g.indices, g.indptr[piv], g.indptr[piv + 1], u)


class MaximalCliquesGPU(gthinker.GPUContext):
    """Counts maximal cliques (and their sizes) of a degeneracy-ordered graph on the GPU."""

    counters = ("cliques",)
    maxima = ("max_size",)
    histograms = ("size",)

    @staticmethod
    def generate_initial_tasks(g, v, out):
        lo = g.indptr[v]
        d = g.indptr[v + 1] - lo
        split = gpu.lower_bound(g.indices, lo, lo + d, v) - lo  # earlier neighbours
        np_ = d - split
        if np_ == 0:
            if d == 0:  # an isolated vertex is a maximal clique of size 1
                _report(g, 1)
            return
        pos = gpu.append(out, 4 + d)
        if pos < 0:
            return
        rec = out.vertices
        rec[pos] = 1
        rec[pos + 1] = np_
        rec[pos + 2] = split
        rec[pos + 3] = v
        for i in range(np_):
            rec[pos + 4 + i] = g.indices[lo + split + i]
        for i in range(split):
            rec[pos + 4 + np_ + i] = g.indices[lo + i]

    @staticmethod
    def process(g, rec, q):
        lane = gpu.lane_id()
        nr = rec[0]
        np_ = rec[1]
        nx = rec[2]
        p0 = 3 + nr
        x0 = p0 + np_
        P = rec[p0:x0]
        if np_ == 0:  # only from CPU records: R is maximal if X is empty
            if nx == 0 and lane == 0:
                _report(g, nr)
            return len(rec)
        best = np.int64(-1)  # (neighbours in P) << 32 | vertex, maximised over the warp
        for base in range(0, np_, 32):
            i = base + lane
            if i < np_:
                u = P[i]
                key = (np.int64(_neighbours_in(g, P, np_, u)) << 32) | np.int64(u)
                if key > best:
                    best = key
        # X: drop vertices with no neighbour in P, compacting in place.
        dominated = False
        kept = 0
        for base in range(0, nx, 32):
            i = base + lane
            u = -1
            c = 0
            if i < nx:
                u = rec[x0 + i]
                c = _neighbours_in(g, P, np_, u)
                if c == np_:
                    dominated = True
                key = (np.int64(c) << 32) | np.int64(u)
                if key > best:
                    best = key
            below, total = gpu.warp_prefix(c > 0)
            if c > 0:
                rec[x0 + kept + below] = u
            kept += total
        if gpu.warp_any(dominated):
            return len(rec)  # every clique here extends by that X vertex
        if lane == 0:
            rec[2] = kept
        cuda.syncwarp(gpu.FULL_MASK)
        piv = gpu.warp_max(best) & 0xFFFFFFFF
        # One queue entry per candidate w of P \ N(pivot).
        k = 0
        for base in range(0, np_, 32):
            i = base + lane
            _, total = gpu.warp_prefix(i < np_ and _candidate(g, P[i], piv))
            k += total
        start = gpu.push(q, k)
        if start < 0:
            return x0 + kept
        for base in range(0, np_, 32):
            i = base + lane
            cand = i < np_ and _candidate(g, P[i], piv)
            below, total = gpu.warp_prefix(cand)
            if cand:
                q.a[start + below] = P[i]
                q.b[start + below] = piv
            start += total
        return x0 + kept

    @staticmethod
    def extend(g, rec, w, piv, out):
        nr = rec[0]
        np_ = rec[1]
        nx = rec[2]
        p0 = 3 + nr
        x0 = p0 + np_
        lo = g.indptr[w]
        hi = g.indptr[w + 1]
        # P & N(w) splits into P' and the earlier candidates that move to X'.
        n_p = 0
        n_xp = 0
        for i in range(p0, x0):
            u = rec[i]
            if u != w and gpu.contains(g.indices, lo, hi, u):
                if u < w and _candidate(g, u, piv):
                    n_xp += 1
                else:
                    n_p += 1
        if n_p == 0:
            if n_xp == 0 and _neighbours_in(g, rec[x0 : x0 + nx], nx, w) == 0:
                _report(g, nr + 1)
            return
        n_xx = _neighbours_in(g, rec[x0 : x0 + nx], nx, w)
        pos = gpu.append(out, 4 + nr + n_p + n_xp + n_xx)
        if pos < 0:
            return
        child = out.vertices
        child[pos] = nr + 1
        child[pos + 1] = n_p
        child[pos + 2] = n_xp + n_xx
        k = pos + 3
        for i in range(3, p0):
            child[k] = rec[i]
            k += 1
        child[k] = w
        k += 1
        for i in range(p0, x0):
            u = rec[i]
            if u != w and gpu.contains(g.indices, lo, hi, u) and not (
                u < w and _candidate(g, u, piv)
            ):
                child[k] = u
                k += 1
        # X' = merge of two sorted runs: X & N(w), and the earlier candidates.
        i = x0
        j = p0
        end = x0 + nx
        while True:
            while i < end and not gpu.contains(g.indices, lo, hi, rec[i]):
                i += 1
            while j < x0 and not (
                rec[j] < w
                and gpu.contains(g.indices, lo, hi, rec[j])
                and _candidate(g, rec[j], piv)
            ):
                if rec[j] >= w:
                    j = x0
                    break
                j += 1
            if i >= end and j >= x0:
                break
            if j >= x0 or (i < end and rec[i] < rec[j]):
                child[k] = rec[i]
                i += 1
            else:
                child[k] = rec[j]
                j += 1
            k += 1
