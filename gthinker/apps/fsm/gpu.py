"""The support searches of one batch of patterns on the GPU: one thread per candidate.

The kernel takes the same ``[p, i, lo, hi]`` ranges as the CPU tasks (:mod:`.cpu`),
flattened: thread ``x`` (grid-stride) finds its range by a binary search over the
ranges' prefix sums and searches candidate ``by_label[lo + x - offset]`` with the search
of :mod:`.search` compiled as a device function. Failures are counted with atomics, so
a pattern stops (``dead``) as soon as it cannot reach the support, as on the CPU.
The graph stays on the device for the whole run; each batch copies its plans and marks.
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from gthinker.extending import launch

from .search import INFREQUENT, MAXV, REACHED, build

__all__ = ["SupportEngine"]

#: Threads per block, and blocks per multiprocessor, of the search kernel.
THREADS_PER_BLOCK = 128
BLOCKS_PER_SM = 8


def _kernel_function(check_vertex, reached):
    int64 = np.int64

    def search_kernel(indptr, indices, vlab, elab, has_el, plans, by_label, rows, offs,
                      marks, fails, dead, cand, n, stride, support, searched, found, cap):
        mapped = cuda.local.array(MAXV, int64)
        cursor = cuda.local.array(MAXV, int64)
        nrows = rows.shape[0]
        total = offs[nrows]
        x = cuda.grid(1)
        while x < total:
            lo, hi = 0, nrows
            while hi - lo > 1:  # the last range whose offset is at most x
                mid = (lo + hi) // 2
                if offs[mid] <= x:
                    lo = mid
                else:
                    hi = mid
            p = rows[lo, 0]
            i = rows[lo, 1]
            v = by_label[rows[lo, 2] + x - offs[lo]]
            base = p * stride * n
            if dead[p] == 0 and marks[base + i * n + v] == 0:
                cuda.atomic.add(searched, 0, 1)
                plan = plans[p * MAXV + i]
                if check_vertex(indptr, indices, vlab, elab, has_el, plan, v, marks, base, n,
                                mapped, cursor, found, p * MAXV):
                    if cap > 0 and reached(found, p * MAXV, plan[0], cap):
                        dead[p] = REACHED
                else:
                    old = cuda.atomic.add(fails, p * MAXV + i, 1)
                    if cand[p * MAXV + i] - old - 1 < support:
                        dead[p] = INFREQUENT
            x += cuda.gridsize(1)

    return search_kernel


class SupportEngine:
    """The graph on the current device and the search kernel; :meth:`search` runs one
    batch's ranges, :meth:`merge_into` adds what it found to the batch's arrays."""

    def __init__(self, graph, vlab, elab):
        self.indptr = cuda.to_device(np.ascontiguousarray(graph.indptr))
        self.indices = cuda.to_device(np.ascontiguousarray(graph.indices))
        self.vlab = cuda.to_device(vlab)
        self.elab = cuda.to_device(elab if elab.size else np.zeros(1, np.int32))
        self.has_el = bool(elab.size)
        self.kernel = launch.kernel(_kernel_function(*build(cuda.jit(device=True))),
                                    name="fsm_support", label="fsm support search (GPU)")
        self.found = None
        self.searches = 0

    def search(self, batch, rows) -> None:
        """Searches the ranges ``rows`` of ``batch``, from the batch's marks, failures
        and stops as they are (its arrays are not written: see :meth:`merge_into`)."""
        sizes = (rows[:, 3].astype(np.int64) - rows[:, 2]) if rows.size else np.zeros(0, np.int64)
        offs = np.zeros(sizes.size + 1, np.int64)
        np.cumsum(sizes, out=offs[1:])
        marks = cuda.to_device(batch.marks)
        fails = cuda.to_device(np.zeros_like(batch.fails))  # its own, added on merge
        dead = cuda.to_device(batch.dead)
        searched = cuda.to_device(np.zeros(1, np.int64))
        if offs[-1] > 0:
            grid = launch.blocks(BLOCKS_PER_SM, int(offs[-1]), THREADS_PER_BLOCK)
            self.kernel[grid, THREADS_PER_BLOCK](
                self.indptr, self.indices, self.vlab, self.elab, self.has_el,
                cuda.to_device(batch.plans), cuda.to_device(batch.by_label),
                cuda.to_device(np.ascontiguousarray(rows, np.int32)), cuda.to_device(offs),
                marks, fails, dead, cuda.to_device(batch.cand), np.int64(batch.n),
                np.int64(batch.stride), np.int64(batch.support), searched,
                cuda.to_device(batch.found), np.int64(batch.cap))
            cuda.synchronize()
        self.found = (marks.copy_to_host(), fails.copy_to_host(), dead.copy_to_host())
        self.searches = int(searched.copy_to_host()[0])

    def merge_into(self, batch) -> None:
        """ORs the marks and stops found into ``batch`` and adds the failures the GPU
        counted (over candidates of its own ranges: disjoint from the CPU's)."""
        marks, fails, dead = self.found
        np.bitwise_or(batch.marks, marks, out=batch.marks)
        np.bitwise_or(batch.dead, dead, out=batch.dead)
        batch.fails += fails
