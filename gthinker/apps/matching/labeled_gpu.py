"""The labeled search (:mod:`gthinker.apps.matching.labeled`) on the GPU: counts only.

A thread per root: each thread claims the next first vertex from a global cursor (so a
hub's long search does not hold back a fixed share of the roots) and walks the search
depth-first with its stack in registers and local memory. A level keeps the run of its
*base* constraint (the shortest run of the backward neighbours' keyed rows, chosen when
the level opens) and a cursor in it; a vertex of the run is a candidate when its label
fits, the other constraints' runs hold it (binary searches), and the semantics admit it
(injectivity, or data edges not used yet). Nothing is materialised, so a thread needs
``O(|V(q)|)`` memory whatever the degrees. The last level is counted, not entered.

It takes queries of at most :data:`MAX_QUERY` vertices and :data:`MAX_CONSTRAINTS`
query edges (counted per direction); the caller runs others on the CPU. The job's stop
flag is polled every :data:`~gthinker.gpu.stop_flag.POLL` roots, so Ctrl-C stops the
kernel within one root's search.
"""

from __future__ import annotations

import time

import numpy as np
from numba import cuda

from gthinker.extending import POLL, StopFlag, gpu, kernels_done, launch, stop_requested

from .labeled import (
    H_CKEY,
    H_CPOS,
    H_CPTR,
    H_DIRECTED,
    H_FKEY,
    H_FNUM,
    H_FPTR,
    H_KEYS,
    H_NQ,
    H_QLAB,
    H_SEM,
    LabeledPlan,
    edges_free,
)

__all__ = ["MAX_QUERY", "MAX_CONSTRAINTS", "THREADS", "takes", "count"]

#: The most query vertices a thread's stack holds.
MAX_QUERY = 16
#: The most constraints (query edges, per direction) of a query it takes.
MAX_CONSTRAINTS = 64
#: Threads a block.
THREADS = 128


def takes(p: LabeledPlan) -> str:
    """Why the GPU search does not take plan ``p``, or ''."""
    nq = int(p.params[H_NQ])
    edges = int(p.params[p.params[H_CPTR] + nq])
    if nq > MAX_QUERY:
        return f"the GPU search takes queries of at most {MAX_QUERY} vertices"
    if edges > MAX_CONSTRAINTS:
        return f"the GPU search takes queries of at most {MAX_CONSTRAINTS} edges"
    return ""


_lower = gpu.lower_bound


@cuda.jit(device=True, inline=True)
def _run_lo(kptr, keys, v, k):
    return _lower(keys, kptr[v], kptr[v + 1], k)


@cuda.jit(device=True, inline=True)
def _run_hi(kptr, keys, v, k):
    return _lower(keys, kptr[v], kptr[v + 1], k + 1)


@cuda.jit(device=True)
def _fits(P, labels, kptr, keys, d, v):
    if P[H_QLAB] >= 0 and labels[v] != P[P[H_QLAB] + d]:
        return False
    if P[H_SEM] != 0:
        return True
    for t in range(P[P[H_FPTR] + d], P[P[H_FPTR] + d + 1]):
        k = P[P[H_FKEY] + t]
        if _run_hi(kptr, keys, v, k) - _run_lo(kptr, keys, v, k) < P[P[H_FNUM] + t]:
            return False
    return True


@cuda.jit(device=True)
def _holds(kptr, nb, keys, v, k, x):
    """Whether ``x`` is in the run of ``v``'s keyed row under key ``k``."""
    lo = _run_lo(kptr, keys, v, k)
    hi = _run_hi(kptr, keys, v, k)
    i = _lower(nb, lo, hi, x)
    return i < hi and nb[i] == x


#: :func:`gthinker.apps.matching.labeled.edges_free`, compiled for the device.
_edges_free = cuda.jit(device=True)(edges_free.py_func)


@cuda.jit(device=True)
def _admits(P, kptr, nb, keys, labels, M, EA, EB, base, d, x, directed):
    """Whether ``x``, from the run of constraint ``base``, may take position ``d``."""
    if not _fits(P, labels, kptr, keys, d, x):
        return False
    sem = P[H_SEM]
    if sem == 0:
        for p in range(d):
            if M[p] == x:
                return False
    for c in range(P[P[H_CPTR] + d], P[P[H_CPTR] + d + 1]):
        if c != base and not _holds(kptr, nb, keys, M[P[P[H_CPOS] + c]], P[P[H_CKEY] + c],
                                    x):
            return False
    if sem == 2:
        return _edges_free(P, M, EA, EB, d, x, directed)
    return True


@cuda.jit(device=True)
def _open(P, kptr, keys, M, lo, hi, base, d):
    """Level ``d``'s base constraint (the shortest run) and its run."""
    best = -1
    for c in range(P[P[H_CPTR] + d], P[P[H_CPTR] + d + 1]):
        k = P[P[H_CKEY] + c]
        v = M[P[P[H_CPOS] + c]]
        a = _run_lo(kptr, keys, v, k)
        b = _run_hi(kptr, keys, v, k)
        if best < 0 or b - a < hi[d] - lo[d]:
            best = c
            lo[d] = a
            hi[d] = b
    base[d] = best


def _kernel(kptr, nb, keys, labels, P, n, directed, cursor, result, stop):
    M = cuda.local.array(MAX_QUERY, np.int32)
    lo = cuda.local.array(MAX_QUERY, np.int64)
    hi = cuda.local.array(MAX_QUERY, np.int64)
    base = cuda.local.array(MAX_QUERY, np.int64)
    EA = cuda.local.array(MAX_CONSTRAINTS, np.int64)
    EB = cuda.local.array(MAX_CONSTRAINTS, np.int64)
    nq = P[H_NQ]
    found = 0
    claims = 0
    while True:
        if claims % POLL == 0 and stop_requested(stop):
            break
        claims += 1
        r = cuda.atomic.add(cursor, 0, 1)
        if r >= n:
            break
        if not _fits(P, labels, kptr, keys, 0, r):
            continue
        M[0] = r
        if nq == 1:
            found += 1
            continue
        d = 1
        _open(P, kptr, keys, M, lo, hi, base, d)
        while d >= 1:
            x = -1
            while lo[d] < hi[d]:
                y = nb[lo[d]]
                lo[d] += 1
                if _admits(P, kptr, nb, keys, labels, M, EA, EB, base[d], d, y, directed):
                    x = y
                    break
            if x < 0:
                d -= 1
                continue
            if d == nq - 1:
                found += 1
                continue
            M[d] = x  # (its edges are in EA/EB: _admits wrote them last)
            d += 1
            _open(P, kptr, keys, M, lo, hi, base, d)
    cuda.atomic.add(result, 0, found)


def count(p: LabeledPlan, token=None) -> tuple[int, dict]:
    """The embeddings of plan ``p`` on the current device (``takes(p)`` must be ''), and
    ``kernel_seconds``, ``setup_seconds``. The kernel stops (the count then partial) on
    Ctrl-C, or once ``token`` (a :class:`~gthinker.StopToken`) is set."""
    t0 = time.perf_counter()
    g = p.graph
    keys_at = int(p.params[H_KEYS])
    params = p.params[:keys_at] if keys_at >= 0 else p.params
    keys = p.params[keys_at:].astype(np.int32) if keys_at >= 0 else np.zeros(1, np.int32)
    labels = g.labels if g.labels is not None else np.zeros(1, np.int32)
    dev = [cuda.to_device(np.ascontiguousarray(a)) for a in
           (g.indptr, g.indices if g.indices.size else np.zeros(1, np.int32), keys, labels,
            params)]
    cursor = cuda.to_device(np.zeros(1, np.int64))
    result = cuda.to_device(np.zeros(1, np.int64))
    flag = StopFlag()
    if token is not None:
        token.attach(flag)
    kernel = launch.kernel(_kernel, name="labeled_count", label="labeled matching (GPU)")
    n = g.num_vertices
    t1 = time.perf_counter()
    try:
        if n:
            blocks = launch.blocks(8, n, THREADS)
            kernel[blocks, THREADS](*dev, np.int64(n), np.int64(p.params[H_DIRECTED]), cursor,
                                    result, flag.array)
            flag.wait(kernels_done())
        total = int(result.copy_to_host()[0])
    finally:
        if token is not None:
            token.detach(flag)
    return total, {"kernel_seconds": time.perf_counter() - t1, "setup_seconds": t1 - t0,
                   "device": gpu.device_status()[1]}
