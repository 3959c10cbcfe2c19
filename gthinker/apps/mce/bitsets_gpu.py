"""Maximal cliques on the GPU: one warp per subtree, searched depth first over bitsets.

The GPU engine behind ``mce.run(mode="gpu" | "hybrid")``. A warp takes one
subtree: an initial vertex ``v`` (``R = {v}``, ``P`` = its later neighbours,
``X`` = its earlier ones in degeneracy order) or a task record of the CPU
workers (``[|R|, |P|, |X|, R..., P..., X...]``, the layout of
:mod:`gthinker.apps.mce`). It drops from ``X`` the vertices with no neighbour
in ``P``, builds the subtree's induced graph over ``P`` and the rest of ``X``
as bitset rows (one ``ballot`` per 32 vertices), and runs Bron-Kerbosch with
Tomita pivoting on it: every set operation is a few 32-bit words per lane, the
pivot is a warp-wide maximum of popcounts. As on the CPU, the pivot step
settles a node at once when a vertex of ``X`` is adjacent to all of ``P`` or
``P`` is itself a clique.

Load balance: a warp claims subtrees from a shared cursor, heaviest first.
Once it has visited ``budget`` nodes of one subtree, every further branch it
meets is written out as a task record instead of searched (G-ThinkerCG's
timeout decomposition, counted in nodes so that it is the same on every
device). In gpu mode the records are a queue of the launch: its warps take them
once the input is taken, and the launch ends when all is searched (see
:func:`_subtrees`). In hybrid mode they go back to the host: to the CPU workers
through the spill stack S when they are idle, the rest to the next launch.

Counts land in a per-warp histogram of clique sizes (no atomics on the hot
path), summed on the host at the end.

Stopping: the warps look at the job's stop flag (:mod:`gthinker.gpu.stop_flag`) as
they claim subtrees and inside long ones, and leave (see :func:`_subtrees`); the host
then drops the work left, so a stopped job's counts are those found so far (partial,
never more than the graph has).

Hubs: a warp's scratch is sized by what the graph's subtrees need, within
``SCRATCH_BYTES`` for all warps, not by the largest one. A subtree that does not fit
(a hub's, whose X may hold millions of vertices) goes to the CPU workers in hybrid
mode, or has its X made small on the host (:mod:`gthinker.apps.mce.local`) and runs
on a warp, on fewer and wider warps, or split into its first-level branches
(:class:`BitsetDevice`).
"""

from __future__ import annotations

import math
import time
from concurrent.futures import ThreadPoolExecutor, wait

import numpy as np
from numba import cuda

import gthinker
from gthinker import setops
from gthinker.extending import (
    NO_MAXIMUM,
    POLL,
    EngineResults,
    GPUEngine,
    StopFlag,
    WorkPool,
    deal,
    kernels_done,
    launch,
    simulator,
    steps,
    warp_stop_requested,
)
from gthinker.gpu.device_helpers import (
    FULL_MASK,
    adjacency_row,
    contains,
    lower_bound,
    warp_max,
    warp_prefix,
    warp_sum,
)

from .local import compact_records, first_level, initial_records
from .options import SCRATCH_BYTES, SCRATCH_FREE_SHARE

__all__ = ["BitsetDevice", "BitsetsEngine", "record_need"]

WARPS_PER_BLOCK = 8
#: Blocks a launch has per multiprocessor (each warp searches subtrees until none is left).
BLOCKS_PER_SM = 8
#: Nodes a warp searches in one subtree before it hands the rest out as records.
NODE_BUDGET = 1 << 14
#: Nodes a warp searches in one subtree between two looks at the job's stop flag (a
#: read of host memory; a node is a few bitset words a lane): past the node budget a warp
#: hands its branches out, but where the record buffer is full it searches them itself,
#: with no bound on the nodes.
STOP_NODES = 1 << 10
#: What a warp did with a subtree (:func:`_subtree`): searched it (its branches past the
#: node budget handed out), found it too wide for its scratch (not searched), or left it
#: half searched (the job is stopping: the warp leaves at once).
SEARCHED, TOO_WIDE, STOPPED = range(3)
#: A subtree whose bitsets span more words than this (X' of thousands of vertices, at a
#: hub) is not searched in place, where every node would scan them all: its first-level
#: branches go out at once as records, each with the smaller X of its own branch.
WIDE_WORDS = 48
#: The most of a warp's scratch its id list (P, X, R) may take: a subtree whose X is
#: longer (a hub's) is made small on the host first (:mod:`gthinker.apps.mce.local`).
ID_SHARE = 1 / 4
#: A warp's scratch is at least this many id and bitset words: enough for any subtree
#: with one candidate, so that splitting a subtree into branches always ends.
MIN_ID_WORDS = 8
MIN_BIT_WORDS = 16
MIN_WARP_WORDS = MIN_ID_WORDS + MIN_BIT_WORDS
#: What the engine counts of the subtrees too big for a warp's scratch (its ``stats``):
#: how many there were; went to the CPU workers (hybrid); had X made small on the host
#: (X vertices before and after); were settled there (an X vertex covers P, or P is
#: empty); ran in a launch of wider warps; were split into first-level branches; and
#: how many subtrees the warps handed back because X' did not fit their bitsets.
BIG_FIGURES = ("big_subtrees", "to_cpu", "compacted", "x_before", "x_after",
               "settled_on_host", "wide", "split", "returned_by_warps")
#: Share of the records a launch hands out that go to idle CPU workers (hybrid mode);
#: the rest are searched by the next launch. Half, the most a launch gives away: on
#: facebook_combined (H100, 16 cores) 1/8, 1/4 and 1/2 took 3.48, 3.24 and 3.13 s
#: (benchmarks/results/mce_hybrid_sweep_h100.json); what the CPU workers leave in S
#: the GPU takes back once its own work is done.
CPU_SHARE = 1 / 2
#: int32 words for records written out by one launch.
SPILL_WORDS = 1 << 26
#: Whether a launch's warps search the records they hand out (the kernel's queue) where
#: nothing else wants them (gpu mode): see :meth:`BitsetDevice.run`.
QUEUE = True
#: int32 words of a 128-byte line: a record of a launch's queue starts a line of its own.
LINE_WORDS = 32
#: Nanoseconds a warp without work naps before it looks at the queue again, doubled
#: after each look up to the most.
IDLE_NAP_NS = 128
IDLE_NAP_MAX_NS = 8192
#: The launch's control words (``octl``): record words written to ``out``, input
#: subtrees skipped, records published to the queue and claimed from it, busy warps,
#: queue records handed back (too wide for the warps), records not written (``out`` full).
O_USED, O_SKIPPED, O_PUBLISHED, O_CLAIMED, O_BUSY, O_RETURNED, O_REFUSED = range(7)
N_OCTL = 7
#: Record words one step of the host's work on big subtrees takes (steps run on threads).
HOST_STEP_WORDS = 1 << 20
#: Seconds between two looks of a job run whole (:meth:`BitsetsEngine.run_whole`) at its
#: devices' threads, for progress lines.
PROGRESS_LOOK_SECONDS = 0.25
#: Chunks of each GPU's share of the roots in hybrid mode with several GPUs
#: (:meth:`BitsetsEngine.share_roots`): the first of every share go first, the last, the
#: lightest roots, are where the CPU workers take from.
HYBRID_PIECES = 4
#: Candidates per doubling of a root's estimated work, 2^(|P| / COST_HALVING): the
#: maximal cliques under a root of facebook_combined grow as 2^(0.19 |P|) (a least-squares
#: fit of log2 over its 4,039 roots, R^2 0.83); ordering by it puts the 125 roots that hold
#: 99% of the work first. Only the order and the ratios matter (several GPUs share by it).
COST_HALVING = 5


def record_need(p, nx):
    """(id words, bitset words) a warp needs for a subtree with |P| = p, |X| = nx
    (X' is at most X). Works on numpy arrays too."""
    pw = (p + 31) >> 5
    kw = (p + nx + 31) >> 5
    return 2 * p + nx + 1, p * kw + nx * pw + (p + 1) * (2 * pw + kw)


# ---- device helpers ------------------------------------------------------------------


@cuda.jit(device=True)
def _adjacent_to_any(indptr, indices, x, ids, p):
    """True if vertex x has a neighbour among the sorted ids[:p] (shorter side searched)."""
    lo = indptr[x]
    hi = indptr[x + 1]
    if hi - lo < p:
        for j in range(lo, hi):
            if contains(ids, 0, p, indices[j]):
                return True
    else:
        for i in range(p):
            if contains(indices, lo, hi, ids[i]):
                return True
    return False


@cuda.jit(device=True)
def _load(indptr, indices, data, start, v, ids, lane):
    """Writes P then X (global ids) to ``ids``; returns (|R|, p, nx) on every lane.
    ``data[start:]``: the subtree's record (an input record, or one of the launch's
    queue in ``out``), or ``start`` is -1 and ``v`` its initial vertex."""
    if start >= 0:
        nr = data[start]
        p = data[start + 1]
        nx = data[start + 2]
        for i in range(lane, p + nx, 32):
            ids[i] = data[start + 3 + nr + i]
    else:
        lo = indptr[v]
        hi = indptr[v + 1]
        split = lower_bound(indices, lo, hi, v) - lo
        nr = 1
        p = hi - lo - split
        nx = split
        for i in range(lane, p, 32):
            ids[i] = indices[lo + split + i]
        for i in range(lane, nx, 32):
            ids[p + i] = indices[lo + i]
    cuda.syncwarp(FULL_MASK)
    return nr, p, nx


@cuda.jit(device=True)
def _keep_blocking(indptr, indices, ids, p, nx, lane):
    """Compacts X (ids[p:p + nx]) in place to X', the vertices with a neighbour in P."""
    kept = 0
    for base in range(0, nx, 32):
        i = base + lane
        x = 0
        keep = False
        if i < nx:
            x = ids[p + i]
            keep = _adjacent_to_any(indptr, indices, x, ids, p)
        below, total = warp_prefix(keep)  # a ballot: every read of this round is done
        if keep:
            ids[p + kept + below] = x
        kept += total
        cuda.syncwarp(FULL_MASK)
    return kept


@cuda.jit(device=True)
def _build_rows(indptr, indices, ids, p, q, kw, pw, bits, lane):
    """bits[i*kw:(i+1)*kw]: P vertex i's row over P and X' (local indices: P
    first, then X'); after them, X' vertex x's row over P (pw words)."""
    for i in range(p):
        adjacency_row(indptr, indices, ids[i], ids, p + q, bits, i * kw, kw, lane)
    cuda.syncwarp(FULL_MASK)
    rx = p * kw
    for x in range(q):
        j = p + x
        for w in range(pw):
            i = (w << 5) + lane
            hit = i < p and (bits[i * kw + (j >> 5)] >> np.uint32(j & 31)) & 1 != 0
            word = cuda.ballot_sync(FULL_MASK, hit)
            if lane == 0:
                bits[rx + x * pw + w] = word
    cuda.syncwarp(FULL_MASK)


@cuda.jit(device=True)
def _row_count(bits, ps, row, pw):
    c = 0
    for t in range(pw):
        c += cuda.popc(bits[ps + t] & bits[row + t])
    return c


@cuda.jit(device=True)
def _pivot(bits, ps, xs, p, pw, kw, lane):
    """Tomita pivot of the node whose P and X start at ``ps`` and ``xs``: a local
    index, or -1 (a vertex of X is adjacent to all of P: nothing below is
    maximal) or -2 (P is a clique that no vertex of X extends). Clears from X
    the vertices with no neighbour in P. Same value on every lane."""
    size = 0
    for t in range(lane, pw, 32):
        size += cuda.popc(bits[ps + t])
    size = warp_sum(size)
    rx = p * kw
    best = np.int64(-1)
    not_clique = False
    for w in range(pw):
        word = bits[ps + w]
        if word == 0:
            continue
        u = (w << 5) + lane
        if (word >> np.uint32(lane)) & 1:
            c = _row_count(bits, ps, u * kw, pw)
            not_clique = not_clique or c != size - 1
            key = (np.int64(c) << 32) | np.int64(u)
            if key > best:
                best = key
    for w in range(kw):
        word = bits[xs + w]
        if word == 0:
            continue
        u = (w << 5) + lane
        c = 0
        inx = (word >> np.uint32(lane)) & 1 != 0
        if inx:
            c = _row_count(bits, ps, u * kw if u < p else rx + (u - p) * pw, pw)
            key = (np.int64(c) << 32) | np.int64(u)
            if key > best:
                best = key
        if cuda.ballot_sync(FULL_MASK, c == size) != 0:
            return -1
        kept = cuda.ballot_sync(FULL_MASK, c > 0)
        if lane == 0:
            bits[xs + w] = kept
        cuda.syncwarp(FULL_MASK)
    if cuda.ballot_sync(FULL_MASK, not_clique) == 0:
        return -2
    return np.int32(warp_max(best) & 0xFFFFFFFF)


@cuda.jit(device=True)
def _spill(out, octl, queue, data, start, v, nr, ids, rl, d, bits, ps, xs, p, pw, kw, lane):
    """Writes node (R + rl[:d], P at ps, X at xs) as a task record into ``out``;
    False if ``out`` is full (the caller searches the node itself). With a ``queue``
    (not empty), the record goes to the launch's queue (:func:`_publish`)."""
    np_ = 0
    for t in range(lane, pw, 32):
        np_ += cuda.popc(bits[ps + t])
    np_ = warp_sum(np_)
    nx = 0
    for t in range(lane, kw, 32):
        nx += cuda.popc(bits[xs + t])
    nx = warp_sum(nx)
    size = 3 + nr + d + np_ + nx
    room = size
    if queue.size:  # a record of its own 128-byte lines: see _publish
        room = (size + LINE_WORDS - 1) // LINE_WORDS * LINE_WORDS
    at = -1
    if lane == 0:
        old = octl[O_USED]
        while old + room <= out.size:
            seen = cuda.atomic.cas(octl, O_USED, old, old + room)
            if seen == old:
                at = old
                break
            old = seen
        if at < 0:
            cuda.atomic.add(octl, O_REFUSED, 1)
    at = cuda.shfl_sync(FULL_MASK, at, 0)
    if at < 0:
        return False
    if lane == 0:
        out[at] = nr + d
        out[at + 1] = np_
        out[at + 2] = nx
        k = at + 3
        if start >= 0:
            for i in range(nr):
                out[k] = data[start + 3 + i]
                k += 1
        else:
            out[k] = v
            k += 1
        for i in range(d):
            out[k] = ids[rl + i]
            k += 1
        for u in range(p):
            if (bits[ps + (u >> 5)] >> np.uint32(u & 31)) & 1:
                out[k] = ids[u]
                k += 1
        # X bits below p are former P vertices, from p on X' vertices: two sorted runs.
        i = 0
        j = p
        n = kw << 5
        while True:
            while i < p and not (bits[xs + (i >> 5)] >> np.uint32(i & 31)) & 1:
                i += 1
            while j < n and not (bits[xs + (j >> 5)] >> np.uint32(j & 31)) & 1:
                j += 1
            if i >= p and j >= n:
                break
            if j >= n or (i < p and ids[i] < ids[j]):
                out[k] = ids[i]
                i += 1
            else:
                out[k] = ids[j]
                j += 1
            k += 1
        if queue.size:
            _publish(octl, queue, at)
    cuda.syncwarp(FULL_MASK)
    return True


@cuda.jit(device=True)
def _read(arr, i):
    """arr[i] read at L2 (an atomic add of 0), never a stale line of this SM's L1."""
    return cuda.atomic.add(arr, i, 0)


@cuda.jit(device=True)
def _publish(octl, queue, at):
    """Lane 0, its record written at ``out[at:]``: puts it in the launch's queue. The
    record starts a 128-byte line and no other record shares its lines, so no reader's
    L1 holds a line of it from before; the fence makes it visible before its start."""
    cuda.threadfence()
    i = cuda.atomic.add(octl, O_PUBLISHED, 1)
    cuda.atomic.exch(queue, i, at)


@cuda.jit(device=True)
def _take_record(octl, queue):
    """Lane 0: the start in ``out`` of the next published record, claimed; -1 if none
    waits. Its slot of ``queue`` is -1 again after (as the host filled it)."""
    r = _read(octl, O_CLAIMED)
    while r < _read(octl, O_PUBLISHED):
        seen = cuda.atomic.cas(octl, O_CLAIMED, r, r + 1)
        if seen == r:
            at = cuda.atomic.exch(queue, r, -1)
            while at < 0:  # its writer counted it and has not stored its start yet
                cuda.nanosleep(32)
                at = cuda.atomic.exch(queue, r, -1)
            cuda.threadfence()
            return at
        r = seen
    return -1


@cuda.jit(device=True)
def _claim(cursor, nitems, inputs, octl, queue, lane):
    """The warp's next subtree, (t, at) on every lane: input item t (while ``inputs``:
    the cursor had not passed ``nitems`` when the warp last looked), or the record at
    ``out[at:]`` of the launch's queue, or (-1, -1) if none is left now. With a queue,
    the warp counts as busy (``octl[O_BUSY]``) from before it claims until its subtree
    is done (:func:`_done`): while a warp is busy, more records may come."""
    t = -1
    at = -1
    if lane == 0:
        if inputs:
            if queue.size:
                cuda.atomic.add(octl, O_BUSY, 1)
            t = cuda.atomic.add(cursor, 0, 1)
            if t >= nitems:
                t = -1
                if queue.size:
                    cuda.atomic.add(octl, O_BUSY, -1)
        if t < 0 and queue.size and _read(octl, O_PUBLISHED) > _read(octl, O_CLAIMED):
            cuda.atomic.add(octl, O_BUSY, 1)
            at = _take_record(octl, queue)
            if at < 0:
                cuda.atomic.add(octl, O_BUSY, -1)
    t = cuda.shfl_sync(FULL_MASK, t, 0)
    at = cuda.shfl_sync(FULL_MASK, at, 0)
    cuda.threadfence()
    return t, at


@cuda.jit(device=True)
def _done(octl, queue, lane):
    """The warp's subtree is searched (its records published): it is no longer busy."""
    if lane == 0 and queue.size:
        cuda.atomic.add(octl, O_BUSY, -1)
    cuda.syncwarp(FULL_MASK)


@cuda.jit(device=True)
def _nobody_busy(octl, naps, lane):
    """True (every lane) if no warp is busy; else the warp naps first, longer after
    each try (``naps``: tries so far), so that idle warps do not crowd the busy ones'
    atomics."""
    idle = 0
    if lane == 0:
        idle = 1 if _read(octl, O_BUSY) == 0 else 0
    idle = cuda.shfl_sync(FULL_MASK, idle, 0)
    if idle == 0:
        cuda.nanosleep(np.uint32(min(IDLE_NAP_NS << min(naps, 6), IDLE_NAP_MAX_NS)))
    return idle != 0


@cuda.jit(device=True)
def _report(hist, hrow, size, lane):
    if lane == 0:
        hist[hrow + size] += 1


@cuda.jit(device=True)
def _set_branches(bits, ps, cs, piv, p, pw, kw, lane):
    """C = P minus the pivot's neighbours."""
    row = piv * kw if piv < p else p * kw + (piv - p) * pw
    for t in range(lane, pw, 32):
        bits[cs + t] = bits[ps + t] & ~bits[row + t]
    cuda.syncwarp(FULL_MASK)


@cuda.jit(device=True)
def _settle_or_branch(bits, ps, xs, cs, p, pw, kw, hist, hrow, size_r, lane):
    """Pivot step of a node: True if it has branches (now in ``cs``); False if
    it was settled at once (its one maximal clique, if any, counted)."""
    piv = _pivot(bits, ps, xs, p, pw, kw, lane)
    if piv == -1:
        return False
    if piv == -2:
        n = 0
        for t in range(lane, pw, 32):
            n += cuda.popc(bits[ps + t])
        _report(hist, hrow, size_r + warp_sum(n), lane)
        return False
    _set_branches(bits, ps, cs, piv, p, pw, kw, lane)
    return True


@cuda.jit(device=True)
def _pop_branch(bits, cs, pw, lane):
    """Takes the lowest bit of C (-1 if none); same value on every lane."""
    v = -1
    for w in range(pw):
        word = bits[cs + w]
        if word != 0:
            v = (w << 5) + cuda.ffs(word) - 1
            cuda.syncwarp(FULL_MASK)
            if lane == 0:
                bits[cs + w] = word & (word - np.uint32(1))
            break
    cuda.syncwarp(FULL_MASK)
    return v


@cuda.jit(device=True)
def _search(bits, ids, p, q, nr, rl, hist, hrow, budget, out, octl, queue, data, start, v0,
            stop, lane):
    """Bron-Kerbosch with pivoting over the local bitset graph (rows built).
    Level d's P, X and untaken branches C are at ``stack + d * level``. True if it
    left the subtree half searched, the host having set ``stop`` (looked at every
    :data:`STOP_NODES` nodes)."""
    pw = (p + 31) >> 5
    kw = (p + q + 31) >> 5
    level = 2 * pw + kw
    stack = p * kw + q * pw
    for w in range(lane, pw, 32):
        bits[stack + w] = np.uint32(0xFFFFFFFF) if p - (w << 5) >= 32 else (
            (np.uint32(1) << np.uint32(p - (w << 5))) - np.uint32(1))
    for w in range(lane, kw, 32):
        lo = max(p, w << 5)
        hi = min(p + q, (w + 1) << 5)
        word = np.uint32(0)
        for b in range(lo, hi):
            word |= np.uint32(1) << np.uint32(b & 31)
        bits[stack + pw + w] = word
    cuda.syncwarp(FULL_MASK)
    if not _settle_or_branch(bits, stack, stack + pw, stack + pw + kw, p, pw, kw, hist, hrow,
                             nr, lane):
        return False
    nodes = 0
    d = 0
    while d >= 0:
        ps = stack + d * level
        xs = ps + pw
        v = _pop_branch(bits, xs + kw, pw, lane)
        if v < 0:
            d -= 1
            continue
        if lane == 0:
            ids[rl + d] = ids[v]
        pc = ps + level
        xc = pc + pw
        any_p = False
        for t in range(lane, pw, 32):
            x = bits[ps + t] & bits[v * kw + t]
            bits[pc + t] = x
            any_p = any_p or x != 0
        any_x = False
        for t in range(lane, kw, 32):
            x = bits[xs + t] & bits[v * kw + t]
            bits[xc + t] = x
            any_x = any_x or x != 0
        any_p = cuda.ballot_sync(FULL_MASK, any_p) != 0
        any_x = cuda.ballot_sync(FULL_MASK, any_x) != 0
        if lane == 0:
            bits[ps + (v >> 5)] &= ~(np.uint32(1) << np.uint32(v & 31))
            bits[xs + (v >> 5)] |= np.uint32(1) << np.uint32(v & 31)
        cuda.syncwarp(FULL_MASK)
        nodes += 1
        if nodes % STOP_NODES == 0 and warp_stop_requested(stop):
            return True
        if not any_p:
            if not any_x:
                _report(hist, hrow, nr + d + 1, lane)
            continue
        if nodes > budget and _spill(out, octl, queue, data, start, v0, nr, ids, rl, d + 1, bits,
                                     pc, xc, p, pw, kw, lane):
            continue
        if _settle_or_branch(bits, pc, xc, xc + kw, p, pw, kw, hist, hrow, nr + d + 1, lane):
            d += 1
    return False


@cuda.jit(device=True)
def _subtree(indptr, indices, src, start, v, ids, bits, bit_stride, hist, hrow, budget, out,
             octl, queue, stop, lane):
    """Searches one subtree: the record at ``src[start:]``, or (``start`` -1) vertex
    ``v``'s; SEARCHED, STOPPED, or TOO_WIDE if its bitsets (over P and X') would not fit
    in ``bit_stride`` words: it is not searched, the host takes it back."""
    nr, p, nx = _load(indptr, indices, src, start, v, ids, lane)
    if p == 0:
        if nx == 0:
            _report(hist, hrow, nr, lane)
        return SEARCHED
    q = _keep_blocking(indptr, indices, ids, p, nx, lane)
    pw = (p + 31) >> 5
    kw = (p + q + 31) >> 5
    if p * kw + q * pw + (p + 1) * (2 * pw + kw) > bit_stride:  # record_need's bits
        return TOO_WIDE
    _build_rows(indptr, indices, ids, p, q, kw, pw, bits, lane)
    if _search(bits, ids, p, q, nr, p + nx, hist, hrow, 0 if kw > WIDE_WORDS else budget, out,
               octl, queue, src, start, v, stop, lane):
        return STOPPED
    return SEARCHED


def _subtrees(indptr, indices, verts, nverts, data, starts, nrec, cursor, ids_buf, id_stride,
              bits_buf, bit_stride, hist, nbins, budget, out, octl, skipped, queue, back, stop):
    """One warp per subtree: records ``data[starts[t]:starts[t + 1]]`` first,
    then the initial vertices ``verts`` (heaviest first, as given). A subtree whose
    bitsets (over P and X') would not fit in ``bit_stride`` words is not searched:
    its number t goes to ``skipped[octl[O_SKIPPED]++]``.

    With a ``queue`` (not empty, all -1), the records the warps write out are a queue
    of the launch, searched by its warps once the input is taken (a warp waits while
    others are busy: they may write more); one that does not fit goes back to the host
    as its start in ``out``, at ``back[octl[O_RETURNED]++]``. The launch ends when all
    is searched. Without one, the records stay in ``out`` for the host.

    Each warp looks at the job's ``stop`` flag (:mod:`gthinker.gpu.stop_flag`) before its
    first claim and every :data:`~gthinker.gpu.stop_flag.POLL` claims or naps after, and
    inside a subtree every :data:`STOP_NODES` nodes, and leaves once it is set: what it
    found is counted, the rest of the launch's work is dropped (published records too).
    A warp leaves between two subtrees, no longer busy (a subtree left half searched is
    done), and a waiting warp looks at the flag as it naps: none waits for records that
    warps which left will never publish."""
    lane = cuda.threadIdx.x & 31
    warp = cuda.grid(1) >> 5
    ids = ids_buf[warp * id_stride : (warp + 1) * id_stride]
    bits = bits_buf[warp * bit_stride : (warp + 1) * bit_stride]
    hrow = warp * nbins
    inputs = True
    last_look = False
    naps = 0
    claims = 0
    while True:
        if claims % POLL == 0 and warp_stop_requested(stop):
            break
        claims += 1
        t, at = _claim(cursor, nrec + nverts, inputs, octl, queue, lane)
        if t < 0 and at < 0:
            # Nobody busy: a last look at the queue (a warp may have published and
            # finished since this one looked), then the warp ends.
            inputs = False
            if last_look or not queue.size:
                break
            last_look = _nobody_busy(octl, naps, lane)
            naps += 1
            continue
        last_look = False
        naps = 0
        if at >= 0:
            done = _subtree(indptr, indices, out, at, -1, ids, bits, bit_stride, hist, hrow,
                            budget, out, octl, queue, stop, lane)
            if done == TOO_WIDE and lane == 0:
                back[cuda.atomic.add(octl, O_RETURNED, 1)] = at
        else:
            start = -1
            v = -1
            if t < nrec:
                start = starts[t]
            else:
                v = verts[t - nrec]
            done = _subtree(indptr, indices, data, start, v, ids, bits, bit_stride, hist, hrow,
                            budget, out, octl, queue, stop, lane)
            if done == TOO_WIDE and lane == 0:
                skipped[cuda.atomic.add(octl, O_SKIPPED, 1)] = t
        _done(octl, queue, lane)
        if done == STOPPED:  # (it saw the flag: no need to wait for its next look)
            break


def _watch(futures, setup, engines, devices, pool) -> None:
    """Waits for the devices' threads of :meth:`BitsetsEngine.run_whole`, passing their
    cliques so far and figures to ``setup.progress`` meanwhile; where that raises (or
    Ctrl-C), sets the job's stop flag, waits for the threads and raises it."""
    try:
        while wait(futures, timeout=PROGRESS_LOOK_SECONDS).not_done:
            if setup.progress is not None:
                figures = gthinker.gpu.device_totals([e.snapshot() for e in engines], devices)
                setup.progress(sum(e.live_counters for e in engines), figures[0])
    except BaseException:
        if setup.stop is not None:
            setup.stop.set()
        pool.close()
        wait(futures)
        raise


def kernel():
    """The subtree kernel, compiled once per process (or loaded from the compile cache)."""
    return launch.kernel(_subtrees, name="mce_subtrees", label="MCE (GPU bitset kernel)")


@gthinker.compiler.jit("MCE GPU host functions", nogil=True)
def _record_starts(data, used):
    """Start offsets of the self-delimiting records in ``data[:used]``."""
    starts = [0]
    at = 0
    while at < used:
        at += 3 + data[at] + data[at + 1] + data[at + 2]
        starts.append(at)
    return np.array(starts, np.int64)


def _gather_records(data, at):
    """(data, starts) of the self-delimiting records starting at ``data[at]``."""
    lens = 3 + data[at].astype(np.int64) + data[at + 1] + data[at + 2]
    starts = np.zeros(len(at) + 1, np.int64)
    np.cumsum(lens, out=starts[1:])
    return data[np.repeat(at - starts[:-1], lens) + np.arange(starts[-1])], starts


_NO_IDS = np.zeros(0, np.int32)


class Work:
    """Subtrees to search: initial vertices and/or task records (CPU layout)."""

    def __init__(self, verts, data, starts):
        self.verts = np.ascontiguousarray(verts, np.int32)
        self.data = np.ascontiguousarray(data, np.int32)
        self.starts = np.ascontiguousarray(starts, np.int64)

    @classmethod
    def of_records(cls, data, starts) -> Work:
        return cls(_NO_IDS, data, starts)

    @classmethod
    def empty(cls) -> Work:
        return cls.of_records(_NO_IDS, np.zeros(1, np.int64))

    @property
    def num_records(self):
        return len(self.starts) - 1

    def __len__(self):
        return len(self.verts) + self.num_records

    def sizes(self, later, earlier):
        """(|P|, |X|) of each record, then of each vertex (int64 arrays)."""
        heads = self.starts[:-1]
        p = np.concatenate([self.data[heads + 1], later[self.verts]]).astype(np.int64)
        nx = np.concatenate([self.data[heads + 2], earlier[self.verts]]).astype(np.int64)
        return p, nx

    def needs(self, later, earlier):
        """(id words, bitset words) of each record, then of each vertex."""
        return record_need(*self.sizes(later, earlier))

    def take(self, mask):
        """The subtrees where ``mask`` (records first, then vertices) is true (this work
        itself where it is all true: no copy of the records, which a launch's host work
        between two launches would otherwise make for every record each time)."""
        if mask.all():
            return self
        nrec = self.num_records
        keep = np.flatnonzero(mask[:nrec])
        lens = self.starts[keep + 1] - self.starts[keep]
        starts = np.zeros(len(keep) + 1, np.int64)
        np.cumsum(lens, out=starts[1:])
        idx = (np.repeat(self.starts[keep] - starts[:-1], lens) + np.arange(starts[-1]))
        return Work(self.verts[mask[nrec:]], self.data[idx], starts)

    def __add__(self, other: Work) -> Work:
        if not len(other):
            return self
        if not len(self):
            return other
        return Work(np.concatenate([self.verts, other.verts]),
                    np.concatenate([self.data, other.data]),
                    np.concatenate([self.starts, other.starts[1:] + self.starts[-1]]))

    def as_records(self, graph) -> Work:
        """Every subtree as a record (the vertices' initial records after the records)."""
        data, starts = initial_records(graph.indptr, graph.indices, self.verts)
        return Work.of_records(self.data, self.starts) + Work.of_records(data, starts)

    def pieces(self, words):
        """This work in parts of at most ``words`` record words each (a longer record
        alone), the vertices with the last: what one launch uploads."""
        n = self.num_records
        if self.starts[-1] <= words or n <= 1:
            yield self
            return
        mask = np.zeros(len(self), bool)
        i = 0
        while i < n:
            j = max(i + 1, int(np.searchsorted(self.starts, self.starts[i] + words, "right")) - 1)
            mask[:] = False
            mask[i:j] = True
            if j >= n:
                mask[n:] = True
            yield self.take(mask)
            i = j


@gthinker.compiler.jit("MCE functions", nogil=True)
def _earlier(indptr, indices):
    """Each vertex's neighbours with a smaller id (rows are sorted)."""
    n = indptr.size - 1
    out = np.empty(n, np.int64)
    for v in range(n):
        out[v] = setops.lower_bound(indices, indptr[v], indptr[v + 1], v) - indptr[v]
    return out


def _sides(graph):
    """(later, earlier): each vertex's neighbours after and before it, its P and X
    at the top of the search."""
    earlier = _earlier(graph.indptr, graph.indices)
    return np.diff(graph.indptr) - earlier, earlier


def _scratch_budget(setting: int) -> int:
    """``setting``, or less where the device has less than twice that free."""
    try:
        free, _total = cuda.current_context().get_memory_info()
    except (AttributeError, NotImplementedError, TypeError):  # the simulator has no figures
        return int(setting)
    return int(min(setting, free * SCRATCH_FREE_SHARE))


class BitsetDevice:
    """The graph on the device, the warps' scratch and histograms, the spill buffer,
    and the host side of the subtrees too big for a warp's scratch.

    Each warp has ``id_stride`` int32 words for ids and ``bit_stride`` uint32 words
    for bitsets, sized by what the graph's subtrees need, within ``scratch_bytes``
    for all warps (an id list at most ``id_share`` of a warp's part). A subtree
    that does not fit, such as a hub's with an X of millions, is never searched with
    its whole X: in hybrid mode it goes to the CPU workers (``to_cpu``); otherwise
    the host makes its X small (:func:`.local.compact_records`), and it runs on a
    warp, in a launch of fewer, wider warps over the same scratch, or split into its
    first-level branches (:func:`.local.first_level`), each with a smaller P. The host
    work runs on ``host_threads`` threads (all cores in gpu mode, where they are idle).
    ``consume`` (default :data:`QUEUE`): a launch's warps search the records they hand
    out (see :meth:`run`)."""

    def __init__(self, graph, nbins, blocks=None, budget=NODE_BUDGET,
                 scratch_bytes=SCRATCH_BYTES, id_share=ID_SHARE, host_threads=1, consume=None,
                 stop=None):
        self.graph = graph
        #: The job's stop flag: its kernels leave once it is set, and what is left of
        #: the work is dropped (:meth:`run` returns nothing more to do). Its waits for a
        #: launch poll (:meth:`_wait`), and set it once ``aborting()`` is true (the job
        #: through the master is stopping: the engine sets it).
        self.stop = stop if stop is not None else StopFlag()
        self.d_stop = self.stop.array
        self.aborting = None
        self.host_threads = int(host_threads)
        self.indptr, self.indices, _labels = gthinker.gpu.graph_on_device(graph)
        self.later, self.earlier = graph.derived("mce_bitsets_gpu.sides", _sides)
        self.nbins = int(nbins)
        self.budget = int(budget)
        # The simulator runs each thread as an OS thread: one block of two warps there.
        self.per_block = 2 if simulator.enabled() else WARPS_PER_BLOCK
        blocks = launch.blocks(BLOCKS_PER_SM) if blocks is None else blocks
        scratch = _scratch_budget(scratch_bytes)
        self.warps = int(max(1, min(int(blocks) * self.per_block, scratch // 4 // MIN_WARP_WORDS)))
        words = max(MIN_WARP_WORDS, scratch // 4 // self.warps)
        ids_need, bits_need = record_need(self.later, self.earlier)
        self.id_stride = int(np.clip(ids_need.max(initial=1), MIN_ID_WORDS,
                                     max(MIN_ID_WORDS, int(words * id_share))))
        self.bit_stride = int(np.clip(bits_need.max(initial=1), MIN_BIT_WORDS,
                                      max(MIN_BIT_WORDS, words - self.id_stride)))
        self.ids = cuda.device_array(self.warps * self.id_stride, np.int32)
        self.bits = cuda.device_array(self.warps * self.bit_stride, np.uint32)
        self.hist = cuda.to_device(np.zeros(self.warps * self.nbins, np.int64))
        self.host_hist = np.zeros(self.nbins, np.int64)  # subtrees settled on the host
        self.cursor = cuda.device_array(1, np.int64)
        self.octl = cuda.device_array(N_OCTL, np.int64)  # see O_USED and the rest
        self.out = cuda.device_array(SPILL_WORDS, np.int32)
        self.consume = QUEUE if consume is None else bool(consume)
        self.queue_on = self.consume  # this run's launches search their records
        # The launch's queue: a slot per record that fits ``out`` (each takes a line at
        # least), -1 until its start is stored; its readers leave it -1 again.
        slots = SPILL_WORDS // LINE_WORDS + 1
        self.queue = cuda.to_device(np.full(slots, -1, np.int64))
        self.no_queue = cuda.device_array(0, np.int64)
        self.back = cuda.device_array(slots, np.int64)
        #: A launch's subtrees are copied into these (grown by doubling, kept): no device
        #: allocation, and no deferred free, per launch.
        self.staging: dict = {}
        self.scratch_bytes = 4 * (self.ids.size + self.bits.size)
        self.fixed_bytes = (graph.indptr.nbytes + graph.indices.nbytes + self.scratch_bytes
                            + 8 * self.hist.size + 4 * self.out.size + 8 * N_OCTL + 8
                            + 16 * slots)
        self.peak_bytes = self.fixed_bytes
        self.launches = 0
        self.seconds = 0.0
        # Where the time of run() goes (the profile of a multi-GPU run): in the launch
        # call (argument marshalling), waiting for the kernels, and copying to and from
        # the device; the rest of ``seconds`` is host work (and waits for the GIL).
        self.launch_seconds = self.sync_seconds = self.copy_seconds = 0.0
        self.timeline: list[tuple[float, float]] = []  # busy intervals, for the trace
        self.spilled = 0
        self.buffer_peak_words = 0  # record words in out at its fullest (of SPILL_WORDS)
        self.spills_refused = 0  # nodes a warp searched itself, out being full
        self.big = dict.fromkeys(BIG_FIGURES, 0)
        self.host_seconds = 0.0

    def run(self, work: Work, to_cpu=None) -> Work:
        """Searches ``work``; returns what is left: the subtrees too big for any warp,
        split on the host, and (``consume`` off, or hybrid mode) the branches the warps
        handed out (node budget spent). ``to_cpu(data, starts) -> bool``, where given,
        is offered the initial vertices too big for a warp's scratch, as records, before
        anything else is done with them (hybrid mode).

        With ``consume`` (gpu mode), the warps of a launch search the records they hand
        out themselves (the kernel's queue): a launch ends when its input and every
        branch of it is searched, with no tail of launches each a few warps busy. In
        hybrid mode the records come back to the host, which gives the idle CPU workers
        their share (the engine's loop), and the next launch searches the rest."""
        self.queue_on = self.consume and to_cpu is None
        t0 = time.perf_counter()
        self.octl.copy_to_device(np.zeros(N_OCTL, np.int64))
        p, nx = work.sizes(self.later, self.earlier)
        # Ids must fit to load the subtree; the bitsets need X' (known on the device,
        # which hands back the subtrees whose X' is too wide): P alone must fit here.
        fits = ((record_need(p, nx)[0] <= self.id_stride)
                & (record_need(p, 0)[1] <= self.bit_stride))
        back = self._launch(work.take(fits), self.id_stride, self.bit_stride, self.warps)
        self.big["returned_by_warps"] += len(back)
        left = self._too_big(work.take(~fits) + back, to_cpu)
        t = time.perf_counter()
        used = 0
        if not self.queue_on and not self.stop.is_set():  # the launches' records, in out
            ctl = self.octl.copy_to_host()
            used = int(ctl[O_USED])
            self._note_buffer(ctl)
        data = self.out[:used].copy_to_host() if used else np.zeros(0, np.int32)
        t1 = time.perf_counter()
        self.copy_seconds += t1 - t
        self.seconds += t1 - t0
        self.timeline.append((t0, t1))
        handed = Work.of_records(data, _record_starts(data, used))
        self.spilled += handed.num_records
        return handed + left

    def _too_big(self, big: Work, to_cpu) -> Work:
        """The subtrees that do not fit a warp: to the CPU workers (vertices, where
        ``to_cpu`` takes them), else X made small and searched on a warp or a wider
        one, else split into first-level branches, which are returned."""
        if not len(big) or self.stop.is_set():
            return Work.empty()
        t0 = time.perf_counter()
        self.big["big_subtrees"] += len(big)
        graph = self.graph
        if to_cpu is not None and len(big.verts):
            roots = Work(big.verts, _NO_IDS, np.zeros(1, np.int64)).as_records(graph)
            if to_cpu(roots.data, roots.starts):
                self.big["to_cpu"] += len(big.verts)
                big = Work.of_records(big.data, big.starts)
        rec = big.as_records(graph)
        self.big["compacted"] += rec.num_records
        before = rec.num_records
        rec = self._compacted(rec)
        if self.stop.is_set():  # (the compaction left the rest of its steps)
            return Work.empty()
        rec = self._settle_empty(rec, before)
        p, nx = rec.sizes(self.later, self.earlier)
        ids_need, bits_need = record_need(p, nx)
        warp = (ids_need <= self.id_stride) & (bits_need <= self.bit_stride)
        wide = ~warp & (ids_need <= self.ids.size) & (bits_need <= self.bits.size)
        self.host_seconds += time.perf_counter() - t0
        again = self._launch(rec.take(warp), self.id_stride, self.bit_stride, self.warps)
        if wide.any():
            id_stride, bit_stride = int(ids_need[wide].max()), int(bits_need[wide].max())
            warps = min(int(wide.sum()), self.ids.size // id_stride,
                        self.bits.size // bit_stride, self.warps)
            self.big["wide"] += int(wide.sum())
            again = again + self._launch(rec.take(wide), id_stride, bit_stride, warps)
        split = rec.take(~warp & ~wide) + again
        if not len(split):
            return Work.empty()
        t0 = time.perf_counter()
        self.big["split"] += len(split)
        data, starts = first_level(graph.indptr, graph.indices, split.data, split.starts)
        self.host_seconds += time.perf_counter() - t0
        return Work.of_records(data, starts)

    def _compacted(self, rec: Work) -> Work:
        """``rec`` with X made small (:func:`.local.compact_records`), covered records left
        out; on ``host_threads`` threads, in steps of at most about :data:`HOST_STEP_WORDS`
        record words, and at least four steps a thread where there are records enough
        (a few hubs' records make few words but much work)."""
        graph = self.graph
        n = rec.num_records
        cuts = np.unique(np.concatenate([
            np.searchsorted(rec.starts, np.arange(0, rec.starts[-1], HOST_STEP_WORDS)),
            np.arange(0, n, max(1, n // (4 * self.host_threads))), [n]])).astype(np.int64)
        parts = {}

        def step(lo, hi, _state):
            if self.stop.is_set():  # the job is stopping: the steps left are dropped
                return
            at = rec.starts[lo : hi + 1]
            parts[lo] = compact_records(graph.indptr, graph.indices,
                                        rec.data[at[0] : at[-1]], at - at[0])

        steps.run(step, cuts, self.host_threads)
        done = Work.empty()
        for lo in sorted(parts):
            data, starts, before, after = parts[lo]
            self.big["x_before"] += int(before)
            self.big["x_after"] += int(after)
            done = done + Work.of_records(data, starts)
        return done

    def _settle_empty(self, rec: Work, before: int) -> Work:
        """``rec`` without its records of empty P, counted here (R is maximal if X is
        empty too); ``before``: the records there were before the covered ones went."""
        heads = rec.starts[:-1]
        empty = rec.data[heads + 1] == 0
        maximal = empty & (rec.data[heads + 2] == 0)
        np.add.at(self.host_hist, np.minimum(rec.data[heads[maximal]], self.nbins - 1), 1)
        self.big["settled_on_host"] += before - rec.num_records + int(empty.sum())
        return rec.take(~empty)

    def _launch(self, work, id_stride, bit_stride, warps) -> Work:
        """Searches ``work`` with ``warps`` warps of the given scratch strides; returns
        the subtrees the warps handed back (X' too wide for ``bit_stride``); nothing once
        the job is stopping."""
        back = Work.empty()
        for part in work.pieces(SPILL_WORDS):
            if len(part) and not self.stop.is_set():
                back = back + self._launch_part(part, id_stride, bit_stride, warps)
        return back

    def _staged(self, name, array, dtype, length=0):
        """A device view of ``array``'s length (or ``length``; at least 1) in this
        device's staging buffer ``name``, with ``array`` copied in (None: nothing)."""
        n = max(1, length, len(array) if array is not None else 0)
        buf = self.staging.get(name)
        if buf is None or buf.size < n:
            buf = self.staging[name] = cuda.device_array(max(n, 2 * (0 if buf is None
                                                                       else buf.size)), dtype)
            self.peak_bytes = max(self.peak_bytes, self.fixed_bytes + sum(
                b.size * b.dtype.itemsize for b in self.staging.values()))
        if array is not None and len(array):
            buf[: len(array)].copy_to_device(np.ascontiguousarray(array, dtype))
        return buf[:n]

    def _wait(self):
        """Waits for this thread's launches by polling (:meth:`StopFlag.wait`), not by a
        blocking synchronisation, which may hold the GIL while it waits: the other
        GPUs' threads then could not launch (a job on several GPUs ran no faster)."""
        t = time.perf_counter()
        self.stop.wait(kernels_done(), self.aborting)
        self.sync_seconds += time.perf_counter() - t

    def _launch_part(self, work, id_stride, bit_stride, warps) -> Work:
        per_block = min(self.per_block, warps)  # the launch's warps fit its scratch
        # With the queue every warp gets work, from the input or from branches of it.
        wanted = warps if self.queue_on else math.ceil(len(work) / per_block)
        blocks = max(1, min(warps // per_block, wanted))
        t = time.perf_counter()
        self.cursor.copy_to_device(np.zeros(1, np.int64))
        if self.queue_on:  # every record of a launch is searched by it: out starts empty
            self.octl.copy_to_device(np.zeros(N_OCTL, np.int64))
        else:
            self.octl[O_SKIPPED : O_SKIPPED + 1].copy_to_device(np.zeros(1, np.int64))
        verts = self._staged("verts", work.verts, np.int32)
        data = self._staged("data", work.data, np.int32)
        starts = self._staged("starts", work.starts, np.int64)
        skipped = self._staged("skipped", None, np.int32, len(work))
        t1 = time.perf_counter()
        self.copy_seconds += t1 - t
        kernel()[blocks, 32 * per_block](
            self.indptr, self.indices, verts, np.int64(len(work.verts)), data, starts,
            np.int64(work.num_records), self.cursor, self.ids, np.int64(id_stride), self.bits,
            np.int64(bit_stride), self.hist, np.int64(self.nbins), np.int64(self.budget),
            self.out, self.octl, skipped, self.queue if self.queue_on else self.no_queue,
            self.back, self.d_stop)
        self.launch_seconds += time.perf_counter() - t1
        self._wait()
        self.launches += 1
        if self.stop.is_set():  # its warps may have left work behind: dropped
            self._reset_queue()
            return Work.empty()
        t = time.perf_counter()
        ctl = self.octl.copy_to_host()
        mask = np.zeros(len(work), bool)
        if ctl[O_SKIPPED]:
            mask[skipped[: ctl[O_SKIPPED]].copy_to_host()] = True
        self.copy_seconds += time.perf_counter() - t
        if not self.queue_on:
            return work.take(mask)
        if ctl[O_CLAIMED] != ctl[O_PUBLISHED] or ctl[O_BUSY] != 0:
            raise RuntimeError(f"MCE GPU kernel: a launch ended with records left in its queue "
                               f"(published, claimed, busy warps: {ctl[O_PUBLISHED]}, "
                               f"{ctl[O_CLAIMED]}, {ctl[O_BUSY]})")
        self.spilled += int(ctl[O_PUBLISHED])
        self._note_buffer(ctl)
        return work.take(mask) + self._returned(int(ctl[O_RETURNED]), int(ctl[O_USED]))

    def _reset_queue(self):
        """After a stopped launch: the slots of the queue that its warps left unread are
        -1 again (a slot read before its record's start is stored must read -1)."""
        if self.queue_on:
            self.queue.copy_to_device(np.full(self.queue.size, -1, np.int64))

    def _note_buffer(self, ctl):
        """Counts what ``out`` held at its fullest, and the records it had no room for."""
        self.buffer_peak_words = max(self.buffer_peak_words, int(ctl[O_USED]))
        self.spills_refused += int(ctl[O_REFUSED])

    def _returned(self, n, used) -> Work:
        """The ``n`` records of a launch's queue its warps handed back (too wide)."""
        if not n:
            return Work.empty()
        at = np.sort(self.back[:n].copy_to_host())
        data = self.out[:used].copy_to_host()
        return Work.of_records(*_gather_records(data, at))

    def histogram(self) -> np.ndarray:
        return self.hist.copy_to_host().reshape(self.warps, self.nbins).sum(axis=0) + \
            self.host_hist

    def figures(self) -> dict:
        """Memory, the record buffer's use and the handling of big subtrees (the engine's
        snapshot adds them)."""
        return {"scratch_bytes": self.scratch_bytes,
                "buffer_peak_words": self.buffer_peak_words,
                "spills_refused": self.spills_refused,
                "warp_scratch_bytes": 4 * (self.id_stride + self.bit_stride),
                "peak_bytes": self.peak_bytes, "host_seconds": self.host_seconds,
                "launch_seconds": self.launch_seconds, "sync_seconds": self.sync_seconds,
                "copy_seconds": self.copy_seconds, **self.big}


class BitsetsEngine(GPUEngine):
    """The bitset search as a GPU engine (:mod:`gthinker.gpu.engine`): it searches the
    subtrees of the vertices and records it is given; records its warps hand out go to
    the next launch, or to S while CPU workers (or other GPUs) are idle; in hybrid mode the
    roots too big for a warp go to S at once. Its figures: ``kernel_seconds``,
    ``launches``, ``spilled``, ``pushed``, ``device`` and :meth:`BitsetDevice.figures`
    (memory, and the subtrees too big for a warp)."""

    counters = ("cliques",)
    maxima = ("max_size",)
    histograms = ("size",)
    name = "bitsets"
    #: Nodes a warp searches in one subtree before it hands the rest out as records.
    budget = NODE_BUDGET
    #: The share of handed-out records offered to idle CPU workers.
    cpu_share = CPU_SHARE
    #: Blocks per launch (None: BLOCKS_PER_SM on each multiprocessor).
    blocks = None

    #: Bytes of device memory for the warps' scratch (see :class:`BitsetDevice`).
    scratch_bytes = SCRATCH_BYTES
    #: Estimated work (:meth:`root_costs` summed) per GPU of a job with the default
    #: ``gpus``: facebook_combined's roots sum to 4.0e8 and took 4.1 s on one H100, so
    #: each GPU gets about 0.1 s of work or more.
    spread_cost = 1e7

    def __init__(self, graph, setup):
        super().__init__(graph, setup)
        host_threads = 1 if setup.cpu_threads else gthinker.options.available_cores()
        self.dev = BitsetDevice(graph, setup.histogram_bins, self.blocks, self.budget,
                                self.scratch_bytes, host_threads=host_threads, stop=setup.stop)
        self.dev.timeline = self.timeline  # its launches' busy intervals
        self.pushed = 0
        self.parked = 0  # records of a chunk's tail left in S for later (see _park)
        # A job run whole (run_whole): records given to and taken from the other GPUs,
        # the thread's wall and CPU seconds, and its histogram (read on its device).
        self.given = self.taken = 0
        self.wall_seconds = self.thread_cpu_seconds = 0.0
        self.hist = None

    @classmethod
    def root_costs(cls, graph, roots):
        """2^(|P| / COST_HALVING) at each root (P: its later neighbours)."""
        later, _earlier = graph.derived("mce_bitsets_gpu.sides", _sides)
        return np.exp2(np.minimum(later[roots], 4000) / COST_HALVING)

    def run(self, got, handle) -> None:
        dev = self.dev
        # The warps claim subtrees in this order: on one GPU the chunk reversed (the
        # master hands roots in degeneracy order: the back ones have the largest P); with
        # several, whose chunks come heavy first (Job._share_roots), the largest P first.
        if self.setup.peers:
            verts = got.vertices[np.argsort(-dev.later[got.vertices], kind="stable")]
        else:
            verts = got.vertices[::-1]
        work = Work(verts, got.task_data, got.task_starts)
        # Hybrid mode: the roots too big for a warp (hubs) go to the CPU workers at once.
        to_cpu = handle.push_tasks if self.setup.cpu_threads else None
        dev.aborting = lambda: handle.aborting  # a running launch stops with the job
        while len(work) and not handle.aborting:
            work = dev.run(work, to_cpu)
            if self._park(work, handle):
                return
            idle, idle_gpus = handle.idle_cpu_workers(), handle.idle_peers()
            if (idle or idle_gpus) and work.num_records > 1:
                share = np.zeros(len(work), bool)
                n = max(8 * idle, int(work.num_records * self.cpu_share))
                if idle_gpus:  # another GPU waits (multi-GPU): half of the records
                    n = work.num_records // 2
                share[: min(work.num_records // 2, n)] = True
                given = work.take(share)
                if handle.push_tasks(given.data, given.starts):
                    self.pushed += given.num_records
                    work = work.take(~share)

    def _park(self, work: Work, handle) -> bool:
        """With several GPUs: the records a chunk left, too few to fill the warps, go to
        S while roots wait in the deque, and the next chunk comes at once (V before S).
        Drained chunk by chunk, each chunk's last launches ran a few warps each: on
        facebook_combined 160 launches a GPU for 30 on one, 6.5 s busy for 4.1 s (4
        H200s, docs/benchmarks.md). Whether they went."""
        if not self.setup.peers or not 0 < work.num_records < self.dev.warps:
            return False
        if not handle.unstarted_vertices() or not handle.push_tasks(work.data, work.starts):
            return False
        self.parked += work.num_records
        return True

    @classmethod
    def share_roots(cls, graph, roots, workers, mode):
        """The roots dealt in shares of about even estimated cost, one per GPU, each to be
        searched as one GPU searches a whole job (see :meth:`run_whole`): in gpu mode (a
        job through the master) a chunk per share; in hybrid mode each share in
        :data:`HYBRID_PIECES` chunks, the first pieces of every share first (their
        heaviest roots: every GPU starts on its heavy part), so that the CPU workers take
        from the back the last pieces, the lightest roots."""
        shares = deal(cls.root_costs(graph, roots), workers)
        pieces = HYBRID_PIECES if mode == "hybrid" else 1
        parts = [np.array_split(share, pieces) for share in shares]
        chunks = [part[j] for j in range(pieces) for part in parts if len(part[j])]
        ends = np.cumsum([len(c) for c in chunks]).astype(np.int64)
        return roots[np.concatenate(chunks)], ends

    @classmethod
    def run_whole(cls, graph, setup, devices, vertices):
        """A gpu-mode job without the master: the roots dealt to the devices in shares
        of about even estimated cost (:func:`gthinker.gpu.sharing.deal`), each searched
        as one GPU searches a whole job (the share's heavy roots side by side in its
        first launch), one thread per device; a device whose share is done takes half
        of the records another has left (:class:`~gthinker.gpu.sharing.WorkPool`)."""
        roots = (np.arange(vertices.start, vertices.stop, dtype=np.int32)
                 if isinstance(vertices, range) else np.asarray(vertices, np.int32))
        shares = deal(cls.root_costs(graph, roots), len(devices))
        n = len(devices)
        host_threads = max(1, gthinker.options.available_cores() // n)

        def made(k):
            with gthinker.gpu.on_device(devices[k]):
                engine = cls(graph, setup._replace(device=devices[k], peers=n - 1))
            engine.dev.host_threads = host_threads  # the cores shared among the devices
            return engine

        pool = WorkPool(n)

        def drive(k):
            try:
                engine = engines[k]
                with gthinker.gpu.driving(engine.device):
                    engine.whole(Work(roots[shares[k]], _NO_IDS, np.zeros(1, np.int64)), pool)
            finally:
                pool.close()  # (a failed thread: the others stop waiting for it)

        if n == 1 or simulator.enabled():  # the simulator: set up one at a time
            engines = [made(k) for k in range(n)]
        else:  # each device uploads its copy of the graph at the same time
            with ThreadPoolExecutor(n, "gthinker-mce-setup") as threads:
                engines = list(threads.map(made, range(n)))
        with ThreadPoolExecutor(n, "gthinker-mce-gpu") as threads:
            futures = [threads.submit(drive, k) for k in range(n)]
            _watch(futures, setup, engines, devices, pool)
        for f in futures:
            f.result()  # a thread's error
        figures = [e.snapshot() for e in engines]
        hist = np.sum([e.hist for e in engines], axis=0)
        return cls._results_of(hist), figures

    def whole(self, work: Work, pool: WorkPool) -> None:
        """This device's part of :meth:`run_whole` (on its thread, on its device): its
        share, then what the other devices give, until every device waits; while another
        waits, half of its records after each launch go to the pool. Its histogram is
        read at the end (:attr:`hist`)."""
        t0, c0 = time.perf_counter(), time.thread_time()
        stop = self.setup.stop
        stopped = stop.is_set if stop is not None else (lambda: False)
        live_at = t0
        while not stopped():
            if not len(work):
                with simulator.turn_given_up():
                    got = pool.take(stopped)
                if got is None:
                    break
                work = got
                self.taken += got.num_records
            work = self.dev.run(work)
            if self.setup.progress is not None and time.perf_counter() - live_at > 1.0:
                live_at = time.perf_counter()  # cliques so far, for progress lines
                self.live_counters = np.array([self.dev.histogram().sum()], np.int64)
            if work.num_records > 1 and pool.hungry():
                share = np.zeros(len(work), bool)
                share[: work.num_records // 2] = True
                pool.give(work.take(share))
                self.given += work.num_records // 2
                work = work.take(~share)
        self.hist = self.dev.histogram()
        self.wall_seconds = time.perf_counter() - t0
        self.thread_cpu_seconds = time.thread_time() - c0

    @staticmethod
    def _results_of(hist) -> EngineResults:
        sizes = np.flatnonzero(hist)
        return EngineResults(np.array([hist.sum()], np.int64),
                             np.array([sizes[-1] if sizes.size else NO_MAXIMUM], np.int64),
                             [hist])

    def results(self) -> EngineResults:
        return self._results_of(self.dev.histogram())

    def snapshot(self) -> dict:
        return {"kernel_seconds": self.dev.seconds, "launches": self.dev.launches,
                "spilled": self.dev.spilled, "pushed": self.pushed, "parked": self.parked,
                "given": self.given, "taken": self.taken, "wall_seconds": self.wall_seconds,
                "thread_cpu_seconds": self.thread_cpu_seconds,
                "device": gthinker.gpu.device_status()[1], **self.dev.figures()}
