"""Cliques among a warp's candidates, as a small local graph of bitset rows: the device
functions the clique kernels of :mod:`gthinker.apps.matching.cliques_gpu` and
:mod:`gthinker.apps.matching.local_gpu` share.

The candidates are ``c`` vertex ids (``cand[at:at + c]``); row ``i`` of the local graph is
``words = ceil(c / 32)`` uint32 words, bit ``j`` set when candidate ``j`` is an
out-neighbour of candidate ``i`` (one ``ballot`` per 32 candidates). The cliques among
them are searched depth first over the bitsets, the last two levels counted by popcounts
(as on the CPU, :mod:`gthinker.apps.count`). Every function must be called by the whole
warp; ``cache`` is the warp's 32 shared slots (:func:`kernel_parts.warp_cache
<gthinker.apps.matching.kernel_parts.warp_cache>`).
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from gthinker.gpu.device_helpers import FULL_MASK, warp_sum

from .warp_sets import NONE, common_size, find, sample

__all__ = ["build_row", "build_rows", "count_candidates", "last_two", "local_cliques"]


@cuda.jit(device=True)
def build_row(indptr, indices, cand, at, c, i, rows, words, cache, lane):
    """rows[i * words + w]: bit j of word w set when cand[at + 32 w + j] is an
    out-neighbour of cand[at + i] (one ballot per 32 candidates)."""
    w = cand[at + i]
    lo = indptr[w]
    hi = indptr[w + 1]
    sample(indices, lo, hi, cache, lane)
    for word in range(words):
        j = (word << 5) + lane
        x = cand[at + j] if j < c else NONE
        hit = find(indices, lo, hi, cache, x) and j < c
        bits = cuda.ballot_sync(FULL_MASK, hit)
        if lane == 0:
            rows[i * words + word] = bits


@cuda.jit(device=True)
def build_rows(indptr, indices, cand, at, c, rows, words, cache, lane):
    """Every row of the local graph among ``cand[at:at + c]`` (:func:`build_row`)."""
    for i in range(c):
        build_row(indptr, indices, cand, at, c, i, rows, words, cache, lane)
    cuda.syncwarp(FULL_MASK)


@cuda.jit(device=True)
def last_two(rows, sets, s, c, words, lane):
    """This lane's share of the edges among the bits of ``sets[s:s + words]``."""
    total = 0
    for i in range(lane, c, 32):
        if (sets[s + (i >> 5)] >> (i & 31)) & 1:
            for w in range(words):
                total += cuda.popc(sets[s + w] & rows[i * words + w])
    return total


@cuda.jit(device=True)
def local_cliques(rows, sets, rest, c, r, words, first, lane):
    """This lane's share of the r-cliques (r >= 2) of the oriented local graph
    on c candidates (among the out-neighbours of candidate ``first`` when it is
    >= 0): depth first over bitsets, the last two levels counted."""
    cuda.syncwarp(FULL_MASK)  # every lane is done with the last call's sets
    for w in range(lane, words, 32):
        bits = c - (w << 5)
        if first >= 0:
            sets[w] = rows[first * words + w]
        else:
            sets[w] = np.uint32(0xFFFFFFFF) if bits >= 32 else (
                (np.uint32(1) << np.uint32(bits)) - np.uint32(1))
        rest[w] = sets[w]
    cuda.syncwarp(FULL_MASK)
    last = r - 2
    total = 0
    d = 0
    while d >= 0:
        if d == last:
            total += last_two(rows, sets, d * words, c, words, lane)
            d -= 1
            continue
        i = -1
        for w in range(words):
            word = rest[d * words + w]
            if word != 0:
                b = cuda.ffs(word) - 1
                i = (w << 5) + b
                cuda.syncwarp(FULL_MASK)
                if lane == 0:
                    rest[d * words + w] = word & (word - np.uint32(1))
                break
        cuda.syncwarp(FULL_MASK)
        if i < 0:
            d -= 1
            continue
        size = 0
        for w in range(lane, words, 32):
            x = sets[d * words + w] & rows[i * words + w]
            sets[(d + 1) * words + w] = x
            rest[(d + 1) * words + w] = x
            size += cuda.popc(x)
        size = warp_sum(size)
        cuda.syncwarp(FULL_MASK)
        if size >= r - d - 1:
            d += 1
    return total


@cuda.jit(device=True)
def count_candidates(indptr, indices, cand, at, c, r, bits, k, cache, lane):
    """This lane's share of the r-cliques among the c candidates ``cand[at:at + c]``;
    ``bits``: the warp's bitset slice (rows, then 2 (k - 1) words per level)."""
    if r == 1:
        return c if lane == 0 else 0
    if c < r:
        return 0
    if r == 2:  # the edges among the candidates: no local graph
        total = 0
        for i in range(c):
            w = cand[at + i]
            total += common_size(cand, at, at + c, indices, indptr[w], indptr[w + 1], cache,
                                  lane)
        return total
    words = (c + 31) >> 5
    sets_at = bits.size - 2 * (k - 1) * words
    build_rows(indptr, indices, cand, at, c, bits[:sets_at], words, cache, lane)
    half = (k - 1) * words
    return local_cliques(bits[:sets_at], bits[sets_at:sets_at + half],
                          bits[sets_at + half:], c, r, words, -1, lane)
