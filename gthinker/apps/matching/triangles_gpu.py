"""The triangle kernel of the GPU clique engine: a warp per edge of the oriented graph,
and the variants of it that are being measured.

::

    edge e = (v, u), u = indices[e]          warp w takes edges w, w + W, w + 2W, ...
    out(v) = indices[indptr[v]:indptr[v + 1]]
    out(u) = indices[indptr[u]:indptr[u + 1]]
    lanes 0..31 take the shorter list's elements; each looks its element up in the
    longer list (binary search, after 32 samples of the longer list in shared memory
    when it is long) and counts a hit; the warp's count goes to the launch at the end

Each :class:`TriangleKernel` is one compiled kernel: the same count, other choices of how
the warp walks the lists, how the compiler may spend registers, and which oriented graph it
reads (:data:`VARIANTS`). :data:`TRIANGLES` names the one :mod:`gthinker.apps.count` uses;
``benchmarks/count_gpu_variants.py`` times them all in one process beside G2Miner's
warp-per-edge kernel (Chen et al., OSDI 2022), so that the choice follows a measurement.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
from numba import cuda

from gthinker.extending import POLL, launch, warp_stop_requested

from .kernel_parts import finish, range_item, warp_cache
from .warp_sets import NONE, common_size, sample, segment

__all__ = ["TRIANGLES", "VARIANTS", "TriangleKernel", "triangle_kernel"]


@dataclass(frozen=True)
class TriangleKernel:
    """Compile-time choices of the warp-per-edge triangle kernel."""

    name: str
    #: ``"rounds"``: the warp takes the shorter list 32 elements at a time and lanes past
    #: its end look up a key no list holds (:func:`warp_sets.common_size
    #: <gthinker.apps.matching.warp_sets.common_size>`, shared with the other kernels);
    #: ``"strided"``: each lane walks its own elements and a lane past the end is done.
    lanes: str = "rounds"
    #: The longer list is sampled to shared memory first when it has at least this many
    #: elements; a shorter one is binary-searched in memory directly (0: always sampled).
    sample_from: int = 0
    #: Loads indexed as unsigned, so that no code handles negative indices.
    unsigned: bool = False
    #: A launch over one range of first vertices walks its edges directly (no spans).
    whole: bool = False
    #: The edges of a whole launch taken from the last to the first.
    reverse: bool = False
    #: A warp of a whole launch takes this many consecutive edges at a time (edges of
    #: one row share its list in the SM's cache).
    chunk: int = 1
    #: ``launch_bounds`` for the compiler, (threads a block, blocks an SM), or ().
    bounds: tuple = ()
    #: Blocks of a launch per SM (the warps stride over the edges beyond that).
    blocks_per_sm: int = 32
    #: ``"degeneracy"``: :meth:`gthinker.Graph.oriented` (ids kept); ``"degree"``:
    #: :meth:`gthinker.Graph.degree_oriented` (renumbered by degree, hubs last).
    orientation: str = "degeneracy"


_FAST = dict(lanes="strided", sample_from=64, unsigned=True, whole=True)

#: The variants measured against each other (benchmarks/count_gpu_variants.py).
VARIANTS = {v.name: v for v in (
    TriangleKernel("base"),
    TriangleKernel("strided", lanes="strided"),
    TriangleKernel("unsigned", lanes="strided", unsigned=True, whole=True),
    TriangleKernel("plain64", **_FAST),
    TriangleKernel("plain256", **{**_FAST, "sample_from": 256}),
    TriangleKernel("bounds8", **_FAST, bounds=(256, 8)),
    TriangleKernel("bounds6", **_FAST, bounds=(256, 6)),
    TriangleKernel("reverse", **_FAST, reverse=True),
    TriangleKernel("chunk8", **_FAST, chunk=8),
    TriangleKernel("g2grid", **_FAST, bounds=(256, 8), blocks_per_sm=512),
    TriangleKernel("degree", **_FAST, orientation="degree"),
    TriangleKernel("degree-bounds8", **_FAST, bounds=(256, 8), orientation="degree"),
    TriangleKernel("degree-reverse", **_FAST, reverse=True, orientation="degree"),
)}

#: The variant :mod:`gthinker.apps.count` counts triangles with on the GPU.
TRIANGLES = VARIANTS["base"]


def _kernel_function(v: TriangleKernel):
    """The Python source of variant ``v``'s kernel (its choices are compile-time
    constants of the closures)."""
    strided = v.lanes == "strided"
    sample_from = int(v.sample_from)
    unsigned = bool(v.unsigned)
    whole = bool(v.whole)
    reverse = bool(v.reverse)
    chunk = max(int(v.chunk), 1)

    @cuda.jit(device=True, inline=True)
    def load(a, i):
        if unsigned:
            return a[np.uint64(i)]
        return a[i]

    @cuda.jit(device=True)
    def holds(a, lo, hi, x):
        """True if the sorted ``a[lo:hi]`` holds ``x`` (binary search)."""
        end = hi
        while lo < hi:
            mid = (lo + hi) >> 1
            if load(a, mid) < x:
                lo = mid + 1
            else:
                hi = mid
        return lo < end and load(a, lo) == x

    @cuda.jit(device=True)
    def find(a, lo, hi, cache, x):
        """As :func:`warp_sets.find`: among the samples, then in a 32nd of the list."""
        seg_lo, seg_hi = segment(lo, hi, cache, x)
        return holds(a, seg_lo, seg_hi, x)

    @cuda.jit(device=True)
    def size(indices, a_lo, a_hi, b_lo, b_hi, cache, lane):
        """This lane's share of ``|indices[a_lo:a_hi] & indices[b_lo:b_hi]|``."""
        if not strided and sample_from == 0 and not unsigned:
            return common_size(indices, a_lo, a_hi, indices, b_lo, b_hi, cache, lane)
        if a_hi - a_lo > b_hi - b_lo:
            a_lo, a_hi, b_lo, b_hi = b_lo, b_hi, a_lo, a_hi
        c = 0
        if a_hi > a_lo:  # the same on every lane
            if b_hi - b_lo >= sample_from:
                sample(indices, b_lo, b_hi, cache, lane)
                if strided:
                    for i in range(a_lo + lane, a_hi, 32):
                        if find(indices, b_lo, b_hi, cache, load(indices, i)):
                            c += 1
                else:
                    for base in range(a_lo, a_hi, 32):
                        i = base + lane
                        x = load(indices, i) if i < a_hi else NONE
                        if find(indices, b_lo, b_hi, cache, x) and i < a_hi:
                            c += 1
            else:
                for i in range(a_lo + lane, a_hi, 32):
                    if holds(indices, b_lo, b_hi, load(indices, i)):
                        c += 1
        return c

    @cuda.jit(device=True)
    def edge(indptr, indices, src, e, cache, lane):
        v = load(src, e)
        u = load(indices, e)
        return size(indices, load(indptr, v), load(indptr, v + 1), load(indptr, u),
                    load(indptr, u + 1), cache, lane)

    def triangles(indptr, indices, src, spans, nranges, state, result, take, stop):
        """Warps striding over the edges of ranges: ``spans[:nranges + 1]`` their
        cumulative edge counts, ``spans[nranges + 1 + t]`` the first edge of range t;
        each adds ``|out(v) & out(u)|`` for its edges ``(v, u)``, and leaves early once
        the host's ``stop`` flag is set (:mod:`gthinker.gpu.stop_flag`)."""
        lane = cuda.threadIdx.x & 31
        cache = warp_cache()
        nwarps = (cuda.gridDim.x * cuda.blockDim.x) >> 5
        warp = cuda.grid(1) >> 5
        total = 0
        items = spans[nranges]
        claims = 0
        if whole and nranges == 1:
            first = spans[2]
            last = first + items - 1
            for at in range(warp * chunk, items, nwarps * chunk):
                claims += 1
                if claims % POLL == 0 and warp_stop_requested(stop):
                    break
                for item in range(at, min(at + chunk, items)):
                    e = last - item if reverse else first + item
                    total += edge(indptr, indices, src, e, cache, lane)
        else:
            t = 0
            for item in range(warp, items, nwarps):
                claims += 1
                if claims % POLL == 0 and warp_stop_requested(stop):
                    break
                e, t = range_item(spans, nranges, item, t)
                total += edge(indptr, indices, src, e, cache, lane)
        finish(state, result, total, take, lane)

    return triangles


@functools.cache
def triangle_kernel(variant: TriangleKernel = TRIANGLES):
    """The compiled kernel of ``variant`` (once per process; the compile cache keeps its
    machine code). Launch: ``kernel[grid, THREADS](indptr, indices, src, spans, nranges,
    state, result, take, stop)`` as :class:`gthinker.apps.matching.cliques_gpu.CliqueDevice`
    does."""
    options = {"launch_bounds": tuple(variant.bounds)} if variant.bounds else None
    return launch.kernel(_kernel_function(variant), name=f"count_triangles_{variant.name}",
                         label="triangle counting (GPU kernel)", key=(variant,),
                         options=options)
