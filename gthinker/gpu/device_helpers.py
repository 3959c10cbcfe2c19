"""Device functions for GPU apps: the subgraph buffer, the work queue, warp
helpers and result counters.

Everything here is a Numba-CUDA device function that user code in a
:class:`gthinker.GPUContext` calls. Three structures are passed around:

``g`` (:class:`GPUGraph`)
    The graph in CSR (``indptr``, ``indices``, ``labels``), the run's
    ``params``, the result arrays behind :func:`count`, :func:`update_max`
    and :func:`add_to_histogram`, and ``extra`` (what the app's
    ``initialize`` returned).
``out`` (:class:`Appender`)
    Where new subgraphs go: :func:`append` reserves space for one subgraph
    and returns its first position in ``out.vertices`` (-1 when the buffer
    is full: return at once, the framework runs the call again later).
``q`` (:class:`Queue`)
    The work queue Q between ``process`` and ``extend``: :func:`push`
    reserves ``k`` entries for the warp's subgraph; the app writes
    ``q.a[base + i]`` and ``q.b[base + i]``.

The buffer's state lives in one int64 array ``ctrl`` in device memory, with
the slots below; the host worker reads it back once per level.
"""

from __future__ import annotations

from collections import namedtuple

from numba import cuda

from .. import setops

__all__ = [
    "GPUGraph", "Appender", "Queue", "FULL_MASK",
    "lane_id", "warp_broadcast", "warp_sum", "warp_max", "warp_any",
    "warp_prefix", "append", "warp_append", "push", "next_record", "pop",
    "count", "update_max", "add_to_histogram", "neighbors", "degree", "contains",
    "lower_bound", "adjacency_row",
]

FULL_MASK = 0xFFFFFFFF
STRIPES = 64  # counters are striped over this many slots to spread atomics

# Slots of the control array ``ctrl`` (int64, device memory).
OHEAD = 0  # next record of the current level to read (next())
LEVEL_END = 1  # end (exclusive) of the current level's records
OTAIL = 2  # record slots used (bump pointer)
VTAIL = 3  # vertex slots used (bump pointer)
QTAIL = 4  # queue entries pushed
NDEFER_IN = 5  # deferred subgraphs to re-process (popped, never below zero)
NDEFER_OUT = 6  # subgraphs deferred by this launch (queue full)
NRETRY = 7  # queue entries / vertices whose append failed (buffer full)
ETA = 8  # a level stops taking subgraphs once QTAIL reaches this
CAPV = 9  # capacity of the vertex array
CAPR = 10  # capacity of the record (offsets) array
QCAP = 11  # capacity of the queue
QVOL = 12  # bound on the vertices the queued entries may append (k x (|record| + 1))
VOL_LIMIT = 13  # a level stops taking subgraphs once QVOL reaches this
QOK = 14  # queue entries pushed successfully
CTRL_SIZE = 16

GPUGraph = namedtuple(
    "GPUGraph", "indptr indices labels params counters maxima histograms extra"
)
Appender = namedtuple("Appender", "vertices offsets ctrl failed slot")
Queue = namedtuple("Queue", "rec a b ctrl failed warp record length")


# ---- warp helpers (the whole warp must call these together) ---------------


@cuda.jit(device=True, inline=True)
def lane_id():
    """Lane of this thread in its warp (0..31)."""
    return cuda.threadIdx.x & 31


@cuda.jit(device=True, inline=True)
def warp_broadcast(value, src):
    """``value`` of lane ``src``, on every lane."""
    return cuda.shfl_sync(FULL_MASK, value, src)


@cuda.jit(device=True)
def warp_sum(value):
    """Sum of ``value`` over the warp, on every lane."""
    off = 16
    while off > 0:
        value += cuda.shfl_xor_sync(FULL_MASK, value, off)
        off >>= 1
    return value


@cuda.jit(device=True)
def warp_max(value):
    """Maximum of ``value`` over the warp, on every lane."""
    off = 16
    while off > 0:
        other = cuda.shfl_xor_sync(FULL_MASK, value, off)
        if other > value:
            value = other
        off >>= 1
    return value


@cuda.jit(device=True, inline=True)
def warp_any(pred):
    """True on every lane if ``pred`` is true on some lane."""
    return cuda.ballot_sync(FULL_MASK, pred) != 0


@cuda.jit(device=True)
def warp_prefix(pred):
    """(number of lanes below this one with ``pred`` true, number of lanes with
    it true): the write position and total of a warp-wide compaction."""
    bits = cuda.ballot_sync(FULL_MASK, pred)
    lane = cuda.threadIdx.x & 31
    below = bits & ((1 << lane) - 1)
    return cuda.popc(below), cuda.popc(bits)


# ---- the subgraph buffer ----------------------------------------------------


@cuda.jit(device=True)
def append(out, n):
    """Reserves a new subgraph of ``n`` vertices in the next level; returns the
    position of its first vertex in ``out.vertices``, or -1 when the device
    buffer is full. After -1, return without side effects: the framework moves
    the level to host memory and runs the same call again. At most one append
    per ``extend`` / ``generate_initial_tasks`` call.

    Vertices are reserved before the record slot, so every slot below the
    capacity holds a whole record."""
    ctrl = out.ctrl
    pos = cuda.atomic.add(ctrl, VTAIL, n)
    if pos + n > ctrl[CAPV]:
        out.failed[out.slot] = 1
        return -1
    rec = cuda.atomic.add(ctrl, OTAIL, 1)
    if rec >= ctrl[CAPR]:
        out.failed[out.slot] = 1
        return -1
    out.offsets[rec, 0] = pos
    out.offsets[rec, 1] = pos + n
    return pos


@cuda.jit(device=True)
def warp_append(out, n):
    """Warp-cooperative :func:`append`: each lane asks for ``n`` vertices (0 for
    none); lane 0 reserves the warp's total with one atomic per counter and
    broadcasts it. Returns this lane's position, or -1 (for ``n == 0``, or when
    the buffer is full for this lane). The whole warp must call it."""
    lane = cuda.threadIdx.x & 31
    has = n > 0
    below, k = warp_prefix(has)
    start = n
    off = 1
    while off < 32:  # inclusive prefix sum of n
        other = cuda.shfl_up_sync(FULL_MASK, start, off)
        if lane >= off:
            start += other
        off <<= 1
    total = cuda.shfl_sync(FULL_MASK, start, 31)
    start -= n
    ctrl = out.ctrl
    base = -1
    rbase = 0
    if lane == 0 and k > 0:
        base = cuda.atomic.add(ctrl, VTAIL, total)
        if base + total > ctrl[CAPV]:
            base = -1
        else:
            rbase = cuda.atomic.add(ctrl, OTAIL, k)
    base = cuda.shfl_sync(FULL_MASK, base, 0)
    rbase = cuda.shfl_sync(FULL_MASK, rbase, 0)
    if not has:
        return -1
    rec = rbase + below
    if base < 0 or rec >= ctrl[CAPR]:  # this lane's subgraph did not fit
        out.failed[out.slot] = 1
        return -1
    out.offsets[rec, 0] = base + start
    out.offsets[rec, 1] = base + start + n
    return base + start


@cuda.jit(device=True)
def next_record(ctrl):
    """Index of the next unread subgraph of the current level, or -1 when the
    level is read, or this launch has queued eta entries or children that may
    fill half the free buffer space. Called by one lane."""
    if ctrl[QTAIL] >= ctrl[ETA] or ctrl[QVOL] >= ctrl[VOL_LIMIT]:
        return -1
    i = cuda.atomic.add(ctrl, OHEAD, 1)
    if i >= ctrl[LEVEL_END]:
        return -1
    return i


@cuda.jit(device=True)
def pop(ctrl, slot):
    """Takes one from the stack size ``ctrl[slot]`` without ever going below zero
    (a CAS loop, the seed's atomicSubNonNegative); returns the index taken or -1."""
    old = ctrl[slot]
    while old > 0:
        prev = cuda.atomic.cas(ctrl, slot, old, old - 1)
        if prev == old:
            return old - 1
        old = prev
    return -1


# ---- the work queue Q -------------------------------------------------------


@cuda.jit(device=True)
def push(q, k):
    """Warp-cooperative: reserves ``k`` queue entries for the warp's subgraph and
    returns the first (on every lane); the app then writes ``q.a`` and ``q.b``
    at ``base .. base + k - 1``. Returns -1 when the queue is full: return at
    once; the framework defers the subgraph and runs ``process`` on it again."""
    lane = cuda.threadIdx.x & 31
    ctrl = q.ctrl
    base = 0
    if lane == 0 and k > 0:
        base = cuda.atomic.add(ctrl, QTAIL, k)
        if base + k > ctrl[QCAP]:
            # Entries of this reservation that lie inside the queue are skipped.
            end = min(base + k, ctrl[QCAP])
            for i in range(base, end):
                q.rec[i] = -1
            q.failed[q.warp] = 1
            base = -1
        else:
            cuda.atomic.add(ctrl, QVOL, k * (q.length + 1))
            cuda.atomic.add(ctrl, QOK, k)
    base = cuda.shfl_sync(FULL_MASK, base, 0)
    if base >= 0:
        for i in range(lane, k, 32):
            q.rec[base + i] = q.record
    return base


# ---- results ------------------------------------------------------------------


@cuda.jit(device=True, inline=True)
def count(g, k, n):
    """Adds ``n`` to counter ``k`` (striped over slots; summed at the end)."""
    cuda.atomic.add(g.counters, (k, (cuda.grid(1) >> 5) & (STRIPES - 1)), n)


@cuda.jit(device=True, inline=True)
def update_max(g, k, value):
    """Raises maximum ``k`` to ``value``."""
    cuda.atomic.max(g.maxima, k, value)


@cuda.jit(device=True)
def add_to_histogram(g, row, b):
    """Adds one to bin ``b`` of histogram ``row`` (values past the last bin go
    to the last bin)."""
    last = g.histograms.shape[1] - 1
    if b > last:
        b = last
    if b < 0:
        b = 0
    cuda.atomic.add(g.histograms, (row, b), 1)


# ---- graph access -------------------------------------------------------------


@cuda.jit(device=True, inline=True)
def neighbors(g, v):
    """Sorted neighbours of ``v`` (a view of ``g.indices``)."""
    return g.indices[g.indptr[v] : g.indptr[v + 1]]


@cuda.jit(device=True, inline=True)
def degree(g, v):
    return g.indptr[v + 1] - g.indptr[v]


#: First position in sorted ``arr[lo:hi]`` whose value is >= x (the CPU's rule,
#: :func:`gthinker.setops.lower_bound`, compiled for the device).
lower_bound = cuda.jit(device=True)(setops.lower_bound.py_func)


@cuda.jit(device=True)
def contains(arr, lo, hi, x):
    """True if sorted ``arr[lo:hi]`` holds ``x`` (binary search)."""
    p = lower_bound(arr, lo, hi, x)
    return p < hi and arr[p] == x


@cuda.jit(device=True)
def adjacency_row(indptr, indices, v, ids, n, out, start, words, lane):
    """A warp writes ``out[start:start + words]``: bit j (word j // 32) set when
    ``ids[j]``, j < n, is a neighbour of ``v`` (sorted adjacency lists), one
    ballot per 32 ids; lane 0 writes. The local graphs of the bitset apps."""
    lo = indptr[v]
    hi = indptr[v + 1]
    for w in range(words):
        j = (w << 5) + lane
        hit = j < n and contains(indices, lo, hi, ids[j])
        word = cuda.ballot_sync(FULL_MASK, hit)
        if lane == 0:
            out[start + w] = word
