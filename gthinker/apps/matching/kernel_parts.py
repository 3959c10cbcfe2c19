"""What every clique-counting kernel shares: the block shape, each warp's 32 slots of
shared memory for :func:`gthinker.apps.matching.warp_sets.sample`, and the end of a launch
(:func:`finish`), which adds the count and resets the launch state for the next one.

The kernels themselves are in :mod:`gthinker.apps.matching.cliques_gpu` (k-cliques, prefix records),
:mod:`gthinker.apps.matching.triangles_gpu` (triangles) and
:mod:`gthinker.apps.matching.local_gpu` (4-cliques by first vertex).
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from gthinker.gpu.device_helpers import warp_sum

__all__ = ["THREADS", "WARPS_PER_BLOCK", "finish", "range_item", "warp_cache"]

WARPS_PER_BLOCK = 8
THREADS = 32 * WARPS_PER_BLOCK  # per block
_CACHE = 32 * WARPS_PER_BLOCK  # shared int32 slots of a block for sample()


@cuda.jit(device=True, inline=True)
def warp_cache():
    """This warp's 32 slots of shared memory for :func:`warp_sets.sample
    <gthinker.apps.matching.warp_sets.sample>`."""
    cache = cuda.shared.array(_CACHE, np.int32)
    w = cuda.threadIdx.x >> 5
    return cache[w * 32:(w + 1) * 32]


@cuda.jit(device=True, inline=True)
def range_item(spans, nranges, item, t):
    """Item ``item`` of the ranges (``spans[:nranges + 1]``: their cumulative lengths,
    ``spans[nranges + 1 + t]``: the first element of range t) and the range it is in,
    looked for from range ``t`` on (a warp's items come in increasing order)."""
    while item >= spans[t + 1]:
        t += 1
    return spans[nranges + 1 + t] + item - spans[t], t


@cuda.jit(device=True)
def finish(state, result, total, take, lane):
    """Adds the block's count to ``state[1]`` (one atomic a block); the last block
    to finish resets the launch state and, when ``take``, moves the count to
    ``result[0]`` (mapped host memory) and zeroes it. Every thread of every
    block calls it once."""
    sums = cuda.shared.array(WARPS_PER_BLOCK, np.int64)
    total = warp_sum(total)
    if lane == 0:
        sums[cuda.threadIdx.x >> 5] = total
    cuda.syncthreads()
    if cuda.threadIdx.x == 0:
        block = 0
        for w in range(WARPS_PER_BLOCK):
            block += sums[w]
        cuda.atomic.add(state, 1, block)
        cuda.threadfence()
        if cuda.atomic.add(state, 2, 1) == cuda.gridDim.x - 1:
            state[0] = 0
            state[2] = 0
            if take:
                result[0] = cuda.atomic.exch(state, 1, 0)
