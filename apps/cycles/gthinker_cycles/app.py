"""Simple cycles of k vertices, counted on the CPU workers, the GPU, or both.

A cycle is counted once: from its smallest vertex ``v0``, along the direction whose
second vertex is smaller than its last. The search grows simple paths ``v0, v1, ...``
of vertices above ``v0`` and closes them with the edge back to ``v0``.

The CPU side (:class:`Cycles`, a :class:`Task`) and the GPU side (:class:`CyclesGPU`, a
:class:`GPUContext` on gthinker's GPU worker) share one record, the path itself
(int32 ``[v0, v1, ..., vj]``), so that in hybrid mode the GPU and the CPU workers hand
paths to each other as they are:

- on the CPU, a task extends its path depth first; once its time budget runs out it
  hands the paths it has not explored to other workers (``ctx.add_task``);
- on the GPU, a level holds paths of one length: ``process`` (a warp per path) queues
  one entry per neighbour of its last vertex, ``extend`` (a thread per entry) appends
  the longer path to the next level, or, at length ``k``, counts it if it closes.
"""

import numpy as np
from numba import njit

from gthinker.extending import GPUContext, Task, as_graph, contains, gpu, run

from .options import CyclesOptions


@njit(cache=True, nogil=True)
def _on_path(path, u):
    for x in path:
        if x == u:
            return True
    return False


@njit(cache=True, nogil=True)
def _extend(ctx, path, k):
    """Counts the k-cycles that continue ``path``; branches go to other workers once
    the task has timed out."""
    indptr, indices = ctx.indptr, ctx.indices
    v0, j = path[0], path.size
    for u in ctx.neighbors(path[j - 1]):
        if u <= v0 or _on_path(path, u):
            continue
        if j + 1 == k:  # u is the last vertex: the cycle closes through the edge u-v0
            if path[1] < u and contains(indices, indptr[v0], indptr[v0 + 1], u):
                ctx.count(0)
            continue
        child = np.empty(j + 1, np.int32)
        child[:j] = path
        child[j] = u
        if ctx.timed_out():
            ctx.add_task(child)
        else:
            _extend(ctx, child, k)
    return 0


class Cycles(Task):
    counters = ("cycles",)

    @staticmethod
    def compute(ctx, record):  # spawn: the default, the path [v]
        _extend(ctx, record, ctx.params[0])


class CyclesGPU(GPUContext):
    counters = ("cycles",)

    @staticmethod
    def generate_initial_tasks(g, v, out):
        pos = gpu.append(out, 1)  # -1: the buffer is full; the framework calls again
        if pos >= 0:
            out.vertices[pos] = v

    @staticmethod
    def process(g, rec, q):
        last = rec[len(rec) - 1]
        lo = g.indptr[last]
        d = g.indptr[last + 1] - lo
        base = gpu.push(q, d)  # a queue entry per neighbour (the whole warp calls it)
        if base >= 0:
            for i in range(gpu.lane_id(), d, 32):
                q.a[base + i] = g.indices[lo + i]
                q.b[base + i] = 0
        return len(rec)

    @staticmethod
    def extend(g, rec, a, b, out):
        n = len(rec)
        v0 = rec[0]
        if a <= v0:
            return
        for i in range(1, n):
            if rec[i] == a:
                return
        if n + 1 == g.params[0]:
            if rec[1] < a and gpu.contains(g.indices, g.indptr[v0], g.indptr[v0 + 1], a):
                gpu.count(g, 0, 1)
            return
        pos = gpu.append(out, n + 1)
        if pos >= 0:
            for i in range(n):
                out.vertices[pos + i] = rec[i]
            out.vertices[pos + n] = a


def count_cycles(graph, k=None, **options):
    """The simple cycles of ``k`` vertices of ``graph`` (anything
    :func:`gthinker.as_graph` takes): a JobResult whose ``counters["cycles"]`` is their
    number. ``k`` and ``options``: :class:`CyclesOptions`' (``mode``: ``"cpu"``,
    ``"gpu"``, ``"hybrid"`` or ``"auto"``, hybrid where a CUDA GPU is usable, else cpu)
    and :func:`gthinker.run`'s (``gpus=``, ``time_budget=``, ...)."""
    opts, rest = CyclesOptions.split({"k": k, **options})
    mode, _ = gpu.resolve_mode(opts.mode)
    on_gpu = {"gpu": CyclesGPU} if mode != "cpu" else {}
    return run(Cycles if mode != "gpu" else None, as_graph(graph), mode=mode,
               params=(opts.k,), **on_gpu, **rest)
