"""k-cliques by first vertex on the GPU (4-cliques:
:data:`gthinker.apps.matching.cliques_gpu.LOCAL_K`), and the variants of that kernel being
measured.

A block takes a first vertex ``v`` with ``c`` out-neighbours: its warps copy ``out(v)`` to the
block's candidate slice and build the local graph among them once (bitset rows,
:mod:`gthinker.apps.matching.bitset_gpu`; warp w builds rows w, w + 8, ...); warp w then takes
the edges ``(v, out(v)[i])``, i = w, w + 8, ..., and counts the (k - 2)-cliques in row i.
For 4-cliques these are the local graph's edges ``(i, j)`` with their common out-neighbours,
``popc(row i & row j)`` summed over the words::

    "candidates" (lanes over j):      lane l tests bit j = l, l + 32, ... of row i and, where
                                      set, sums the words of row i & row j by itself
    "words" (lanes over the words):   the warp walks the set bits j of row i; lane l reads
                                      word l of row j (one coalesced read a local edge)

A variant may also take the first vertices of at most ``warp_upto`` (<= 32) out-neighbours a
warp each before the blocks start: lane i holds row i of the local graph in a register
(built by one ballot a row) and the count is ``c`` shuffles, with no memory written and no
block-wide barrier. :data:`LOCAL` names the variant :mod:`gthinker.apps.count` uses;
``benchmarks/count_gpu_variants.py`` times them in one process.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
from numba import cuda

from gthinker.extending import POLL, block_stop_requested, launch, warp_stop_requested
from gthinker.gpu.device_helpers import FULL_MASK, contains

from .bitset_gpu import build_row, local_cliques
from .kernel_parts import WARPS_PER_BLOCK, finish, range_item, warp_cache
from .warp_sets import NONE

__all__ = ["LOCAL", "LOCAL_VARIANTS", "LocalKernel", "block_words", "local_kernel"]


@dataclass(frozen=True)
class LocalKernel:
    """Compile-time choices of the by-vertex clique kernel."""

    name: str
    #: How a warp counts the triangles of its rows (4-cliques): ``"candidates"`` or
    #: ``"words"`` (see the module docstring).
    count: str = "candidates"
    #: First vertices of 3 to this many out-neighbours (at most 32) go a warp each, their
    #: local graph in registers (4-cliques; 0: none, every vertex a block).
    warp_upto: int = 0


#: The variants measured against each other (benchmarks/count_gpu_variants.py).
LOCAL_VARIANTS = {v.name: v for v in (
    LocalKernel("block"),
    LocalKernel("words", count="words"),
    LocalKernel("warps", warp_upto=32),
    LocalKernel("warps-words", count="words", warp_upto=32),
)}

#: The variant :mod:`gthinker.apps.count` counts 4-cliques by vertex with.
LOCAL = LOCAL_VARIANTS["block"]


@cuda.jit(device=True)
def _small_vertex(indptr, indices, v, lane):
    """This lane's share of the 4-cliques whose first vertex ``v`` has 3 to 32
    out-neighbours: lane i holds candidate i and row i of the local graph."""
    lo = indptr[v]
    c = indptr[v + 1] - lo
    mine = indices[lo + lane] if lane < c else NONE
    row = np.int64(0)  # 32 bits, in an int64: shfl_sync takes no uint32
    for i in range(c):
        w = cuda.shfl_sync(FULL_MASK, mine, i)
        hit = lane < c and contains(indices, indptr[w], indptr[w + 1], mine)
        bits = cuda.ballot_sync(FULL_MASK, hit)
        if lane == i:
            row = np.int64(bits)
    total = 0
    for j in range(c):
        other = cuda.shfl_sync(FULL_MASK, row, j)
        if (row >> j) & 1:
            total += cuda.popc(row & other)
    return total


@cuda.jit(device=True)
def _row_triangles(rows, i, words, lane):
    """This lane's share of ``sum over bits j of row i of popc(row i & row j)``: the
    warp walks the bits, the lanes the words."""
    total = 0
    at = i * words
    for w in range(words):
        word = rows[at + w]  # the same on every lane (a broadcast read)
        while word != 0:
            b = cuda.ffs(word) - 1
            word &= word - np.uint32(1)
            j = (w << 5) + b
            for x in range(lane, words, 32):
                total += cuda.popc(rows[at + x] & rows[j * words + x])
    return total


def _kernel_function(v: LocalKernel):
    by_words = v.count == "words"
    upto = min(int(v.warp_upto), 32)

    def local(indptr, indices, spans, nranges, k, state, result, take, cand, bits, stride,
              stop):
        """k-cliques (k >= 4), a block per first vertex (the blocks stride over the
        vertices of ranges: ``spans[:nranges + 1]`` their cumulative counts,
        ``spans[nranges + 1 + t]`` the first vertex of range t); ``bits``: ``stride``
        words a block, ``cand``: ``cand.size / gridDim.x`` ids a block. A warp (small
        vertices) or the block leaves early once the host's ``stop`` flag is set."""
        lane = cuda.threadIdx.x & 31
        cache = warp_cache()
        mine = cuda.threadIdx.x >> 5
        items = spans[nranges]
        small = upto if k == 4 else 0
        total = 0
        if small > 0:  # the small first vertices, a warp each
            nwarps = (cuda.gridDim.x * cuda.blockDim.x) >> 5
            t = 0
            claims = 0
            for item in range(cuda.grid(1) >> 5, items, nwarps):
                claims += 1
                if claims % POLL == 0 and warp_stop_requested(stop):
                    break
                x, t = range_item(spans, nranges, item, t)
                c = indptr[x + 1] - indptr[x]
                if 3 <= c <= small:
                    total += _small_vertex(indptr, indices, x, lane)
        at = cuda.blockIdx.x * (cand.size // cuda.gridDim.x)
        block = bits[cuda.blockIdx.x * stride:(cuda.blockIdx.x + 1) * stride]
        t = 0
        claims = 0
        for item in range(cuda.blockIdx.x, items, cuda.gridDim.x):
            claims += 1
            if claims % POLL == 0 and block_stop_requested(stop):
                break
            x, t = range_item(spans, nranges, item, t)
            lo = indptr[x]
            c = indptr[x + 1] - lo
            if c >= k - 1 and c > small:  # the same on every thread of the block
                words = (c + 31) >> 5
                for i in range(cuda.threadIdx.x, c, cuda.blockDim.x):
                    cand[at + i] = indices[lo + i]
                cuda.syncthreads()
                for i in range(mine, c, WARPS_PER_BLOCK):
                    build_row(indptr, indices, cand, at, c, i, block, words, cache, lane)
                cuda.syncthreads()
                if by_words and k == 4:
                    for i in range(mine, c, WARPS_PER_BLOCK):
                        total += _row_triangles(block, i, words, lane)
                else:
                    s = c * words + mine * 2 * (k - 1) * words
                    for i in range(mine, c, WARPS_PER_BLOCK):
                        total += local_cliques(block, block[s:], block[s + (k - 1) * words:],
                                               c, k - 2, words, i, lane)
                cuda.syncthreads()  # the next vertex overwrites cand and the rows
        finish(state, result, total, take, lane)

    return local


def block_words(d: int, k: int) -> int:
    """uint32 words of a block's slice of ``bits`` for first vertices of at most ``d``
    out-neighbours: the local graph's rows, then each warp's 2 (k - 1) sets."""
    words = (d + 31) >> 5
    return max(d * words + WARPS_PER_BLOCK * 2 * (k - 1) * words, 1)


@functools.cache
def local_kernel(variant: LocalKernel = LOCAL):
    """The compiled kernel of ``variant`` (once per process; the compile cache keeps its
    machine code)."""
    return launch.kernel(_kernel_function(variant), name=f"count_local_{variant.name}",
                         label="clique counting (GPU kernels)", key=(variant,))
