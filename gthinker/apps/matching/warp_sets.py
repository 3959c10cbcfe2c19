"""Warp-wide operations on sorted vertex lists: the device code the GPU engines of
counting (:mod:`gthinker.apps.matching.cliques_gpu`) and matching
(:mod:`gthinker.apps.matching.dfs_gpu`) share.

A warp intersects two sorted, duplicate-free int32 lists by taking the shorter 32
elements at a time (one per lane) and looking each one up in the longer in two phases:
first among 32 samples of it held in the warp's shared memory (:func:`sample`), then by
binary search in the one thirty-second of the list that remains (:func:`find`). Results
are written in order by a ballot compaction (``warp_prefix``). Every function here must
be called by the whole warp (they contain warp-level calls); ``cache`` is the warp's 32
int32 slots of shared memory and ``lane`` its lane id.
"""

from __future__ import annotations

from numba import cuda

from gthinker.gpu.device_helpers import FULL_MASK, lower_bound, warp_prefix

__all__ = ["NONE", "common_into", "common_size", "find", "keep_common", "load_row",
           "sample"]

#: A key no list holds (vertex ids are >= 0): what lanes past a list's end look up.
NONE = -1


@cuda.jit(device=True)
def sample(a, lo, hi, cache, lane):
    """Writes 32 samples of the sorted list ``a[lo:hi]`` to the warp's ``cache``
    (shared memory): lane l's is element ``l * n // 32`` (n = hi - lo)."""
    n = hi - lo
    cuda.syncwarp(FULL_MASK)  # every lane is done with the last samples
    cache[lane] = a[lo + ((lane * n) >> 5)] if n > 0 else 0
    cuda.syncwarp(FULL_MASK)


@cuda.jit(device=True)
def find(a, lo, hi, cache, x):
    """True if the sorted list ``a[lo:hi]`` holds ``x``; ``cache``: its
    :func:`sample`. Five steps among the samples find the 32nd of the list that
    can hold ``x``, a binary search in memory does the rest."""
    n = hi - lo
    pos = 0
    step = 16
    while step > 0:
        if cache[pos + step] <= x:
            pos += step
        step >>= 1
    seg_lo = lo + ((pos * n) >> 5)
    seg_hi = lo + (((pos + 1) * n) >> 5)
    p = lower_bound(a, seg_lo, seg_hi, x)
    return p < seg_hi and a[p] == x


@cuda.jit(device=True)
def common_size(a, a_lo, a_hi, b, b_lo, b_hi, cache, lane):
    """This lane's share of ``|a[a_lo:a_hi] & b[b_lo:b_hi]|`` (lanes over the
    shorter list; ``a`` and ``b`` of one array type)."""
    if a_hi - a_lo > b_hi - b_lo:
        a, a_lo, a_hi, b, b_lo, b_hi = b, b_lo, b_hi, a, a_lo, a_hi
    c = 0
    if a_hi > a_lo:  # b is at least as long (edges into sinks: no sampling)
        sample(b, b_lo, b_hi, cache, lane)
        for base in range(a_lo, a_hi, 32):
            i = base + lane
            x = a[i] if i < a_hi else NONE
            if find(b, b_lo, b_hi, cache, x) and i < a_hi:
                c += 1
    return c


@cuda.jit(device=True)
def common_into(a, a_lo, a_hi, b, b_lo, b_hi, out, at, cache, lane):
    """``a[a_lo:a_hi] & b[b_lo:b_hi]``, sorted, written to ``out[at:]`` (which
    must not overlap them); returns its length (on every lane)."""
    if a_hi - a_lo > b_hi - b_lo:
        a, a_lo, a_hi, b, b_lo, b_hi = b, b_lo, b_hi, a, a_lo, a_hi
    n = 0
    if a_hi > a_lo:
        sample(b, b_lo, b_hi, cache, lane)
        for base in range(a_lo, a_hi, 32):
            i = base + lane
            x = a[i] if i < a_hi else NONE
            hit = find(b, b_lo, b_hi, cache, x) and i < a_hi
            below, total = warp_prefix(hit)
            if hit:
                out[at + n + below] = x
            n += total
    cuda.syncwarp(FULL_MASK)
    return n


@cuda.jit(device=True)
def keep_common(cand, at, n, indices, b_lo, b_hi, cache, lane):
    """``cand[at:at + n] & indices[b_lo:b_hi]`` written over ``cand[at:]``, order
    kept; returns the new length (on every lane)."""
    kept = 0
    if n > 0:
        sample(indices, b_lo, b_hi, cache, lane)
    for base in range(0, n, 32):
        i = base + lane
        x = cand[at + i] if i < n else NONE
        hit = find(indices, b_lo, b_hi, cache, x) and i < n
        below, total = warp_prefix(hit)  # a ballot: every read of this round is done
        if hit:
            cand[at + kept + below] = x
        kept += total
        cuda.syncwarp(FULL_MASK)
    return kept


@cuda.jit(device=True)
def load_row(indptr, indices, v, cand, at, lane):
    """Copies the row ``indices[indptr[v]:indptr[v + 1]]`` to ``cand[at:]``; returns
    its length."""
    lo = indptr[v]
    for i in range(lo + lane, indptr[v + 1], 32):
        cand[at + i - lo] = indices[i]
    cuda.syncwarp(FULL_MASK)
    return indptr[v + 1] - lo
