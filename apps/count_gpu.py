"""The GPU side of clique counting: warp-per-edge kernels on the oriented graph.

A warp takes one edge ``(v, u)`` of the oriented graph (a prefix clique of two
vertices) or one prefix-clique record handed over by the CPU workers. Triangles
are the size of ``out(v) & out(u)``: the lanes binary-search the shorter list's
elements in the longer one, nothing is written. For k >= 4 the warp writes the
common out-neighbours (the candidates, at most ``degeneracy`` of them) to its
own slice of device memory, builds the local graph among them as bitset rows
(one ``ballot`` per 32 candidates) and searches it depth first over the
bitsets; the last two levels are counted by popcounts, as on the CPU
(:mod:`gthinker.apps.count`).

In gpu mode :func:`count` launches the edge kernel once over the whole graph,
with no job around it; the device copy of the graph is kept for the next
count on the same graph (:meth:`Device.of`). In hybrid mode the kernels join
a job as an external worker of the master (:func:`worker`): it takes range
records ``[-1 - lo, hi]`` (the edges of first vertices ``lo..hi-1``) and
prefix records from the spill stack S, launches a kernel per batch and adds
its count to the job's result at the end; the CPU workers take records from
the same stack, so the faster device simply takes more of them.
"""

from __future__ import annotations

import math
import threading
import time

import numpy as np
from numba import cuda

import gthinker
from gthinker.gpu import simulator
from gthinker.gpu.device import FULL_MASK, adjacency_row, lower_bound, warp_sum

__all__ = ["Device", "count", "worker", "WARPS_PER_BLOCK"]

WARPS_PER_BLOCK = 8
#: Edges a warp claims at a time (triangles; an eighth of it for larger cliques,
#: whose edges cost more and vary more).
EDGE_CHUNK = 64
#: Bytes of device memory the warps' candidate buffers may take at most.
BUFFER_BYTES = 2 << 30


@cuda.jit(device=True)
def _common_size(indices, a_lo, a_hi, b_lo, b_hi, lane):
    """This lane's share of ``|out(a) & out(b)|`` (lanes over the shorter list)."""
    if a_hi - a_lo > b_hi - b_lo:
        a_lo, a_hi, b_lo, b_hi = b_lo, b_hi, a_lo, a_hi
    c = 0
    for i in range(a_lo + lane, a_hi, 32):
        x = indices[i]
        p = lower_bound(indices, b_lo, b_hi, x)
        if p < b_hi and indices[p] == x:
            c += 1
    return c


@cuda.jit(device=True)
def _keep_common(cand, n, indices, b_lo, b_hi, lane):
    """``cand[:n] & indices[b_lo:b_hi]`` written over ``cand``, order kept;
    returns the new length (on every lane)."""
    kept = 0
    for base in range(0, n, 32):
        i = base + lane
        hit = False
        x = 0
        if i < n:
            x = cand[i]
            p = lower_bound(indices, b_lo, b_hi, x)
            hit = p < b_hi and indices[p] == x
        mask = cuda.ballot_sync(FULL_MASK, hit)
        cuda.syncwarp(FULL_MASK)
        if hit:
            below = mask & ((np.uint32(1) << np.uint32(lane)) - np.uint32(1))
            cand[kept + cuda.popc(below)] = x
        kept += cuda.popc(mask)
        cuda.syncwarp(FULL_MASK)
    return kept


@cuda.jit(device=True)
def _load_out(indptr, indices, v, cand, lane):
    """Copies out(v) to ``cand``; returns its length."""
    lo = indptr[v]
    for i in range(lo + lane, indptr[v + 1], 32):
        cand[i - lo] = indices[i]
    cuda.syncwarp(FULL_MASK)
    return indptr[v + 1] - lo


@cuda.jit(device=True)
def _build_rows(indptr, indices, cand, c, rows, words, lane):
    """rows[i * words + w]: bit j of word w set when cand[32 w + j] is an
    out-neighbour of cand[i]."""
    for i in range(c):
        adjacency_row(indptr, indices, cand[i], cand, c, rows, i * words, words, lane)
    cuda.syncwarp(FULL_MASK)


@cuda.jit(device=True)
def _last_two(rows, sets, s, c, words, lane):
    """This lane's share of the edges among the bits of ``sets[s:s + words]``."""
    total = 0
    for i in range(lane, c, 32):
        if (sets[s + (i >> 5)] >> (i & 31)) & 1:
            for w in range(words):
                total += cuda.popc(sets[s + w] & rows[i * words + w])
    return total


@cuda.jit(device=True)
def _local_cliques(rows, sets, rest, c, r, words, lane):
    """This lane's share of the r-cliques (r >= 2) of the oriented local graph
    on c candidates: depth first over bitsets, the last two levels counted."""
    for w in range(lane, words, 32):
        bits = c - (w << 5)
        sets[w] = np.uint32(0xFFFFFFFF) if bits >= 32 else (
            (np.uint32(1) << np.uint32(bits)) - np.uint32(1))
        rest[w] = sets[w]
    cuda.syncwarp(FULL_MASK)
    last = r - 2
    total = 0
    d = 0
    while d >= 0:
        if d == last:
            total += _last_two(rows, sets, d * words, c, words, lane)
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
def _count_candidates(indptr, indices, cand, c, r, rows, sets, rest, lane):
    """This lane's share of the r-cliques among the c candidates in ``cand``."""
    if r == 1:
        return c if lane == 0 else 0
    if c < r:
        return 0
    words = (c + 31) >> 5
    _build_rows(indptr, indices, cand, c, rows, words, lane)
    return _local_cliques(rows, sets, rest, c, r, words, lane)


def _edges(indptr, indices, lows, highs, cum, nranges, k, chunk, state, buf, stride, rows_at,
           sets_at):
    """One warp per edge of the first vertices of ranges ``lows[t]..highs[t]-1``
    (``cum``: their edge counts, summed); a warp claims ``chunk`` consecutive
    edges at a time from the cursor ``state[0]`` (one atomic per edge would
    serialise on it), finds the first one's vertex by binary search and steps
    to the next ones; the count goes to ``state[1]``."""
    lane = cuda.threadIdx.x & 31
    warp = cuda.grid(1) >> 5
    mine = buf[warp * stride : (warp + 1) * stride]
    cand = mine[:rows_at]
    rows = mine[rows_at:sets_at]
    sets_rest = mine[sets_at:]
    half = sets_rest.size >> 1
    total = 0
    claimed = 0
    end = 0
    t = -1  # the range of the last edge; -1: look it up
    e = 0
    v = 0
    while True:
        if claimed == end:
            if lane == 0:
                claimed = cuda.atomic.add(state, 0, chunk)
            claimed = cuda.shfl_sync(FULL_MASK, claimed, 0)
            end = min(claimed + chunk, cum[nranges])
            t = -1
        item = claimed
        if item >= cum[nranges]:
            break
        claimed += 1
        if t < 0 or item >= cum[t + 1]:
            t = lower_bound(cum, 0, nranges + 1, item + 1) - 1
            e = indptr[lows[t]] + item - cum[t]
            v = lower_bound(indptr, lows[t], highs[t] + 1, e + 1) - 1
        else:
            e += 1
            while e >= indptr[v + 1]:
                v += 1
        u = indices[e]
        if k == 3:
            total += _common_size(indices, indptr[v], indptr[v + 1], indptr[u], indptr[u + 1],
                                  lane)
            continue
        n = _load_out(indptr, indices, v, cand, lane)
        n = _keep_common(cand, n, indices, indptr[u], indptr[u + 1], lane)
        total += _count_candidates(indptr, indices, cand, n, k - 2, rows, sets_rest[:half],
                                   sets_rest[half:], lane)
    cuda.atomic.add(state, 1, total)


def _prefixes(indptr, indices, data, starts, nrec, k, state, buf, stride, rows_at, sets_at):
    """One warp per prefix-clique record ``data[starts[t]:starts[t + 1]]``."""
    lane = cuda.threadIdx.x & 31
    warp = cuda.grid(1) >> 5
    mine = buf[warp * stride : (warp + 1) * stride]
    cand = mine[:rows_at]
    rows = mine[rows_at:sets_at]
    sets_rest = mine[sets_at:]
    half = sets_rest.size >> 1
    total = 0
    while True:
        t = 0
        if lane == 0:
            t = cuda.atomic.add(state, 0, 1)
        t = cuda.shfl_sync(FULL_MASK, t, 0)
        if t >= nrec:
            break
        s = starts[t]
        j = starts[t + 1] - s
        v = data[s]
        n = _load_out(indptr, indices, v, cand, lane)
        for p in range(1, j):
            x = data[s + p]
            n = _keep_common(cand, n, indices, indptr[x], indptr[x + 1], lane)
        total += _count_candidates(indptr, indices, cand, n, k - j, rows, sets_rest[:half],
                                   sets_rest[half:], lane)
    cuda.atomic.add(state, 1, total)


_KERNELS = {}


def kernels():
    """The two kernels, compiled once per process (or loaded from the compile cache)."""
    if not _KERNELS:
        for name, fn in (("edges", _edges), ("prefixes", _prefixes)):
            compiled = cuda.jit(fn)
            if not simulator.enabled():  # the simulator compiles nothing
                gthinker.cache.attach(compiled, target="cuda", name=f"count_{name}",
                                      label="clique counting (GPU kernels)")
            _KERNELS[name] = compiled
    return _KERNELS


class Device:
    """The oriented graph on the device, and each warp's candidate buffer.

    :meth:`of` keeps one per oriented graph (the last k asked for), so that
    counting again on the same graph copies nothing to the device."""

    @classmethod
    def of(cls, dag, k, blocks=None) -> Device:
        """The device copy of ``dag`` for k-cliques: the one kept with ``dag`` when
        it was made for the same k (one at a time: a buffer may take gigabytes)."""
        kept = dag.derived("count_gpu.Device", lambda _: [None])
        dev = kept[0]
        if dev is not None and dev.k == k and blocks is None:
            return dev
        dev = cls(dag, k, blocks, arrays=None if dev is None else (dev.indptr, dev.indices))
        if blocks is None:
            kept[0] = dev
        return dev

    def __init__(self, dag, k, blocks=None, arrays=None):
        self.k = int(k)
        self.host_indptr = dag.indptr
        self.indptr, self.indices = arrays or (cuda.to_device(dag.indptr),
                                               cuda.to_device(dag.indices))
        self.n = dag.num_vertices
        d = int(np.diff(dag.indptr).max()) if self.n else 0
        words = (d + 31) >> 5 if self.k > 3 else 0  # triangles need no local graph
        self.rows_at = d
        self.sets_at = d + d * words
        self.stride = max(self.sets_at + 2 * (self.k - 1) * words, 1)
        if blocks is None:
            sms = 1 if simulator.enabled() else cuda.get_current_device().MULTIPROCESSOR_COUNT
            blocks = sms * 8
        block_bytes = 4 * self.stride * WARPS_PER_BLOCK
        self.blocks = max(1, min(int(blocks), BUFFER_BYTES // block_bytes))
        self.buf = cuda.device_array(self.blocks * WARPS_PER_BLOCK * self.stride, np.uint32)
        self.state = cuda.to_device(np.zeros(2, np.int64))  # [cursor, count]
        self._cursor = self.state[0:1]
        self._fresh = True  # the cursor is 0 (no launch since reset)
        self._ranges: dict = {}
        self.lock = threading.Lock()  # one count at a time on this state
        self.description = gthinker.gpu.device_status()[1]

    def reset(self):
        """Count from zero again."""
        self.state.copy_to_device(np.zeros(2, np.int64))
        self._fresh = True

    def _launch(self, kernel, items, *args):
        blocks = max(1, min(self.blocks, math.ceil(items / WARPS_PER_BLOCK)))
        if not self._fresh:
            self._cursor.copy_to_device(np.zeros(1, np.int64))
        self._fresh = False
        kernel[blocks, 32 * WARPS_PER_BLOCK](self.indptr, self.indices, *args, self.state,
                                             self.buf, np.int64(self.stride),
                                             np.int64(self.rows_at), np.int64(self.sets_at))

    def _range_arrays(self, ranges):
        """lows, highs and cumulative edge counts of ``ranges`` on the device (those
        of a single range kept: counting a whole graph again copies nothing)."""
        key = tuple(ranges) if len(ranges) == 1 else None
        if key in self._ranges:
            return self._ranges[key]
        lows, highs = (np.array(x, np.int64) for x in zip(*ranges, strict=True))
        cum = np.zeros(len(ranges) + 1, np.int64)
        np.cumsum(self.host_indptr[highs] - self.host_indptr[lows], out=cum[1:])
        arrays = int(cum[-1]), cuda.to_device(lows), cuda.to_device(highs), cuda.to_device(cum)
        if key is not None:
            self._ranges[key] = arrays
        return arrays

    def edges(self, ranges):
        """Counts from the edges of the first vertices of every ``(lo, hi)``."""
        if not ranges:
            return
        edges, lows, highs, cum = self._range_arrays(ranges)
        if edges:
            chunk = EDGE_CHUNK if self.k == 3 else EDGE_CHUNK // 8
            self._launch(kernels()["edges"], edges // chunk + 1, lows, highs, cum,
                         np.int64(len(ranges)), np.int64(self.k), np.int64(chunk))

    def prefixes(self, data, starts):
        nrec = len(starts) - 1
        if nrec:
            self._launch(kernels()["prefixes"], nrec, cuda.to_device(data),
                         cuda.to_device(starts), np.int64(nrec), np.int64(self.k))

    def total(self) -> int:
        """The count so far (waits for the launches)."""
        return int(self.state.copy_to_host()[1])


def count(dag, k, vertices: range | None = None) -> tuple[int, dict]:
    """The k-cliques of ``dag`` (whose first vertex is in ``vertices``) on the GPU
    alone, without a job: one launch over every edge. Returns the count and
    ``kernel_seconds`` (launch to result), ``launches`` and ``device``."""
    dev = Device.of(dag, k)
    lo, hi = (0, dag.num_vertices) if vertices is None else (vertices.start, vertices.stop)
    with dev.lock:
        t0 = time.perf_counter()
        dev.reset()
        dev.edges([(lo, hi)] if hi > lo else [])
        total = dev.total()
    return total, {"kernel_seconds": time.perf_counter() - t0, "launches": int(hi > lo),
                   "device": dev.description}


def _split(work):
    """Range records and prefix records of an assignment."""
    ranges = []
    data = []
    starts = [0]
    for t in range(work.num_tasks):
        rec = work.task(t)
        if rec[0] < 0:
            ranges.append((-1 - int(rec[0]), int(rec[1])))
        else:
            data.append(rec)
            starts.append(starts[-1] + rec.size)
    flat = np.concatenate(data).astype(np.int32) if data else np.zeros(0, np.int32)
    return ranges, flat, np.asarray(starts, np.int64)


def worker(dag, k, result: dict, blocks=None):
    """An external worker (``gthinker.run(..., external=[...])``) that counts
    the k-cliques of the records it is given on the GPU. When the job ends,
    ``result`` has ``count``, ``kernel_seconds`` (launches to synchronisation,
    summed), ``launches`` and ``device``."""

    def count_on_gpu(handle):
        dev = Device.of(dag, k, blocks)
        with dev.lock:
            dev.reset()
            busy = 0.0
            launches = 0
            while (work := handle.wait()) is not None:
                ranges, data, starts = _split(work)
                t0 = time.perf_counter()
                dev.edges(ranges)
                dev.prefixes(data, starts)
                cuda.synchronize()
                busy += time.perf_counter() - t0
                launches += bool(ranges) + (len(starts) > 1)
                handle.done()
            result.update(count=dev.total(), kernel_seconds=busy, launches=launches,
                          device=dev.description)

    return count_on_gpu
