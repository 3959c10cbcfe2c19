"""The framework's three kernels, built around an app's device functions.

* ``generate``: one thread per initial vertex calls ``generate_initial_tasks``;
  vertices whose append failed (buffer full) are written to a retry list.
* ``process``: one warp per subgraph. A warp first pops deferred subgraphs,
  then reads the current level with ``next_record`` until the level is read
  or eta queue entries exist, and calls ``process``. A subgraph whose queue
  push failed is deferred (re-processed by a later launch).
* ``extend``: one thread per queue entry calls ``extend``; entries whose
  append failed go to a retry queue, run again after the host has moved the
  new level out of the way.

``process`` and ``extend`` look at the job's stop flag (``stop``,
:mod:`gthinker.gpu.stop_flag`) every :data:`~gthinker.gpu.stop_flag.POLL` subgraphs (a
warp) or entries (a thread), and leave once it is set: the job is stopping, and what is
left of the level is dropped.
"""

from __future__ import annotations

from types import SimpleNamespace

from numba import cuda

from . import launch
from .device_helpers import (
    FULL_MASK,
    NDEFER_IN,
    NDEFER_OUT,
    NRETRY,
    QCAP,
    QTAIL,
    Appender,
    GPUGraph,
    Queue,
    lane_id,
    next_record,
    pop,
    push,
)
from .stop_flag import POLL, stop_requested, warp_stop_requested


@cuda.jit(device=True)
def _one_entry_per_subgraph(g, rec, q):
    """Default process: one queue entry (a = b = 0) per subgraph."""
    base = push(q, 1)
    if base >= 0 and lane_id() == 0:
        q.a[base] = 0
        q.b[base] = 0
    return len(rec)


def build_kernels(app):
    gen = cuda.jit(device=True)(app.generate_initial_tasks)
    ext = cuda.jit(device=True)(app.extend)
    proc = cuda.jit(device=True)(app.process) if app.process is not None else (
        _one_entry_per_subgraph
    )

    def generate(indptr, indices, labels, params, counters, maxima, hists, extra,
                 verts_in, n_in, vert, offs, ctrl, failed, retry):
        g = GPUGraph(indptr, indices, labels, params, counters, maxima, hists, extra)
        tid = cuda.grid(1)
        stride = cuda.gridsize(1)
        for i in range(tid, n_in, stride):
            failed[tid] = 0
            gen(g, verts_in[i], Appender(vert, offs, ctrl, failed, tid))
            if failed[tid] != 0:
                retry[cuda.atomic.add(ctrl, NRETRY, 1)] = verts_in[i]

    def process(indptr, indices, labels, params, counters, maxima, hists, extra,
                vert, offs, ctrl, q_rec, q_a, q_b, defer_in, defer_out, wfailed, stop):
        g = GPUGraph(indptr, indices, labels, params, counters, maxima, hists, extra)
        lane = cuda.threadIdx.x & 31
        warp = cuda.grid(1) >> 5
        claims = 0
        while True:
            claims += 1
            if claims % POLL == 0 and warp_stop_requested(stop):
                break
            r = -1
            if lane == 0:
                k = pop(ctrl, NDEFER_IN)
                if k >= 0:
                    r = defer_in[k]
                else:
                    r = next_record(ctrl)
                wfailed[warp] = 0
            r = cuda.shfl_sync(FULL_MASK, r, 0)
            if r < 0:
                break
            s = offs[r, 0]
            e = offs[r, 1]
            n = proc(g, vert[s:e], Queue(q_rec, q_a, q_b, ctrl, wfailed, warp, r, e - s))
            cuda.syncwarp(FULL_MASK)
            if wfailed[warp] != 0:  # queue full: run this subgraph again later
                if lane == 0:
                    defer_out[cuda.atomic.add(ctrl, NDEFER_OUT, 1)] = r
                break
            if lane == 0 and 0 <= n < e - s:
                offs[r, 1] = s + n

    def extend(indptr, indices, labels, params, counters, maxima, hists, extra,
               vert, offs, ctrl, q_rec, q_a, q_b, failed, r_rec, r_a, r_b, stop):
        g = GPUGraph(indptr, indices, labels, params, counters, maxima, hists, extra)
        tid = cuda.grid(1)
        stride = cuda.gridsize(1)
        nq = min(ctrl[QTAIL], ctrl[QCAP])
        claims = 0
        for i in range(tid, nq, stride):
            claims += 1
            if claims % POLL == 0 and stop_requested(stop):
                break
            r = q_rec[i]
            if r < 0:
                continue
            failed[tid] = 0
            ext(g, vert[offs[r, 0] : offs[r, 1]], q_a[i], q_b[i],
                Appender(vert, offs, ctrl, failed, tid))
            if failed[tid] != 0:
                j = cuda.atomic.add(ctrl, NRETRY, 1)
                r_rec[j] = r
                r_a[j] = q_a[i]
                r_b[j] = q_b[i]

    return SimpleNamespace(**{
        name: launch.kernel(fn, name=f"{app.__qualname__}.{name}", key=app,
                            label=f"{app.__qualname__} (GPU kernels)")
        for name, fn in (("generate", generate), ("process", process), ("extend", extend))})
