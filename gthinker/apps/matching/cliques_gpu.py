"""The GPU side of clique counting: warp-per-edge kernels on the oriented graph.

A warp takes one edge ``(v, u)`` of the oriented graph (a prefix clique of two
vertices) or one prefix-clique record handed over by the CPU workers. The
warps of a launch stride over the edges (warp ``w`` takes edges ``w``, ``w +
W``, ...), so a hub's edges, which cost the most, spread over many warps and
the hardware's block scheduler evens out the rest; the first vertex of each
edge is read from an edge-source array kept on the device.

Every intersection is a warp's: the lanes take the shorter list 32 elements at
a time and look each one up in the longer list in two phases, first among 32
samples of it held in the warp's shared memory, then by binary search in the
one thirty-second of the list that remains (:mod:`gthinker.apps.matching.warp_sets`,
shared with the matching engine). Triangles are the
size of ``out(v) & out(u)``, nothing is written. For k >= 5 the warp writes the
common out-neighbours of its edge (the candidates, at most ``degeneracy`` of
them) to its own slice of device memory, builds the local graph among them as
bitset rows (one ``ballot`` per 32 candidates) and searches it depth first over
the bitsets; the last two levels are counted by popcounts, as on the CPU
(:mod:`gthinker.apps.count`). 4-cliques go by vertex instead (:func:`_local`):
a block builds the local graph of ``out(v)`` once, and its warps count the
triangles in the rows of v's out-neighbours.

Counts are summed per warp in int64 and added to one int64 on the device: exact
while the count is below 2**63 (``gthinker count G cliques`` counts past that on
the CPU). The last block to finish a launch resets the launch state (the work
cursor and the finished-block counter), so no copy precedes a launch; for
:func:`count` it also moves the count into mapped host memory, so a count costs
one launch and one synchronisation.

In gpu mode :func:`count` launches the edge kernel once over the whole graph,
with no job around it; the device copy of the graph is kept for the next
count on the same graph, one per CUDA device (:meth:`CliqueDevice.of`), so that
threads each inside ``with cuda.gpus[i]:`` may count on their own GPUs at once.
In hybrid mode the kernels join a job as an external worker of the master
(:func:`worker`): it takes range records ``[-1 - lo, hi]`` (the edges of first
vertices ``lo..hi-1``) and prefix records from the spill stack S, launches a
kernel per batch and adds its count to the job's result at the end; the CPU
workers take records from the same stack, so the faster device simply takes
more of them.
"""

from __future__ import annotations

import math
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from numba import cuda

import gthinker
from gthinker.extending import EngineResults, GPUEngine, SharedCursor, guided_cuts, launch
from gthinker.gpu.device_helpers import FULL_MASK, warp_sum

from .warp_sets import (
    NONE,
    common_into,
    common_size,
    find,
    keep_common,
    load_row,
    sample,
)

__all__ = ["CliqueDevice", "CliqueEngine", "count", "shared_ranges", "WARPS_PER_BLOCK"]

WARPS_PER_BLOCK = 8
THREADS = 32 * WARPS_PER_BLOCK  # per block
#: Blocks a launch may have per SM (the warps stride over the edges beyond that):
#: 32 was within 2% of the best of 8, 32, 128 and 496 on every graph and k measured
#: (H100; 128 cost small graphs 20-30%: one atomic per block, more blocks to start).
BLOCKS_PER_SM = 32
#: The k counted by vertex blocks (:func:`_local`); other k >= 4 by edges
#: (:func:`_cliques`). Measured on the H100 (benchmarks/results/count_gpu_profile_h100_s4b.json):
#: 4-cliques 1.4-6.4x faster by vertex (facebook, email-Enron, R-MAT 20 and 22), 5-cliques
#: 1.07-5x faster by edge (a hub's level-0 rows are too few to spread over its block's warps).
LOCAL_K = (4,)
#: Bytes of device memory the warps' candidate buffers may take at most.
BUFFER_BYTES = 2 << 30
_CACHE = 32 * WARPS_PER_BLOCK  # shared int32 slots of a block for sample()


# ---- cliques among the candidates -------------------------------------------------------


@cuda.jit(device=True)
def _build_row(indptr, indices, cand, at, c, i, rows, words, cache, lane):
    """rows[i * words + w]: bit j of word w set when cand[at + 32 w + j] is an
    out-neighbour of cand[at + i] (one ballot per 32 candidates)."""
    w = cand[at + i]
    lo = indptr[w]
    hi = indptr[w + 1]
    sample(indices, lo, hi, cache, lane)
    for word in range(words):
        j = (word << 5) + lane
        x = cand[at + j] if j < c else NONE
        hit = find(indices, lo, hi, cache, x) and j < c
        bits = cuda.ballot_sync(FULL_MASK, hit)
        if lane == 0:
            rows[i * words + word] = bits


@cuda.jit(device=True)
def _build_rows(indptr, indices, cand, at, c, rows, words, cache, lane):
    """Every row of the local graph among ``cand[at:at + c]`` (:func:`_build_row`)."""
    for i in range(c):
        _build_row(indptr, indices, cand, at, c, i, rows, words, cache, lane)
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
def _local_cliques(rows, sets, rest, c, r, words, first, lane):
    """This lane's share of the r-cliques (r >= 2) of the oriented local graph
    on c candidates (among the out-neighbours of candidate ``first`` when it is
    >= 0): depth first over bitsets, the last two levels counted."""
    cuda.syncwarp(FULL_MASK)  # every lane is done with the last call's sets
    for w in range(lane, words, 32):
        bits = c - (w << 5)
        if first >= 0:
            sets[w] = rows[first * words + w]
        else:
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
def _count_candidates(indptr, indices, cand, at, c, r, bits, k, cache, lane):
    """This lane's share of the r-cliques among the c candidates ``cand[at:at + c]``;
    ``bits``: the warp's bitset slice (rows, then 2 (k - 1) words per level)."""
    if r == 1:
        return c if lane == 0 else 0
    if c < r:
        return 0
    if r == 2:  # the edges among the candidates: no local graph
        total = 0
        for i in range(c):
            w = cand[at + i]
            total += common_size(cand, at, at + c, indices, indptr[w], indptr[w + 1], cache,
                                  lane)
        return total
    words = (c + 31) >> 5
    sets_at = bits.size - 2 * (k - 1) * words
    _build_rows(indptr, indices, cand, at, c, bits[:sets_at], words, cache, lane)
    half = (k - 1) * words
    return _local_cliques(bits[:sets_at], bits[sets_at:sets_at + half],
                          bits[sets_at + half:], c, r, words, -1, lane)


# ---- kernels ------------------------------------------------------------------------------


@cuda.jit(device=True, inline=True)
def _warp_cache():
    """This warp's 32 slots of shared memory for :func:`warp_sets.sample
    <gthinker.apps.matching.warp_sets.sample>`."""
    cache = cuda.shared.array(_CACHE, np.int32)
    w = cuda.threadIdx.x >> 5
    return cache[w * 32:(w + 1) * 32]


@cuda.jit(device=True)
def _finish(state, result, total, take, lane):
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


def _triangles(indptr, indices, src, spans, nranges, state, result, take):
    """Warps striding over the edges of ranges: ``spans[:nranges + 1]`` their
    cumulative edge counts, ``spans[nranges + 1 + t]`` the first edge of range t;
    each adds ``|out(v) & out(u)|`` for its edges ``(v, u)``."""
    lane = cuda.threadIdx.x & 31
    cache = _warp_cache()
    nwarps = (cuda.gridDim.x * cuda.blockDim.x) >> 5
    total = 0
    t = 0
    for item in range(cuda.grid(1) >> 5, spans[nranges], nwarps):
        while item >= spans[t + 1]:
            t += 1
        e = spans[nranges + 1 + t] + item - spans[t]
        v = src[e]
        u = indices[e]
        total += common_size(indices, indptr[v], indptr[v + 1], indices, indptr[u],
                              indptr[u + 1], cache, lane)
    _finish(state, result, total, take, lane)


def _cliques(indptr, indices, src, spans, nranges, k, state, result, take, cand, bits,
             stride):
    """As :func:`_triangles`, for k-cliques (k >= 4): each edge's common
    out-neighbours go to the warp's ``cand`` slice (``d = cand.size / warps``
    ids) and its (k - 2)-cliques are counted there (``bits``: ``stride`` words a warp)."""
    lane = cuda.threadIdx.x & 31
    cache = _warp_cache()
    warp = cuda.grid(1) >> 5
    nwarps = (cuda.gridDim.x * cuda.blockDim.x) >> 5
    d = cand.size // nwarps
    at = warp * d
    mine = bits[warp * stride:(warp + 1) * stride]
    total = 0
    t = 0
    for item in range(warp, spans[nranges], nwarps):
        while item >= spans[t + 1]:
            t += 1
        e = spans[nranges + 1 + t] + item - spans[t]
        v = src[e]
        u = indices[e]
        n = common_into(indices, indptr[v], indptr[v + 1], indices, indptr[u], indptr[u + 1],
                         cand, at, cache, lane)
        total += _count_candidates(indptr, indices, cand, at, n, k - 2, mine, k, cache, lane)
    _finish(state, result, total, take, lane)


def _local(indptr, indices, spans, nranges, k, state, result, take, cand, bits, stride):
    """k-cliques (k >= 4), a block per first vertex v (the blocks stride over the
    vertices of ranges: ``spans`` as in :func:`_triangles`, in vertices): the
    block's warps copy out(v) to the block's ``cand`` slice and build the local
    graph among it once (bitset rows, warp w taking rows w, w + 8, ...); warp w
    then takes the edges (v, out(v)[i]), i = w, w + 8, ..., and counts the
    (k - 2)-cliques in the row of out(v)[i]. ``bits``: ``stride`` words a warp."""
    lane = cuda.threadIdx.x & 31
    cache = _warp_cache()
    mine = cuda.threadIdx.x >> 5
    at = cuda.blockIdx.x * (cand.size // cuda.gridDim.x)
    block = bits[cuda.blockIdx.x * WARPS_PER_BLOCK * stride:
                 (cuda.blockIdx.x + 1) * WARPS_PER_BLOCK * stride]
    total = 0
    t = 0
    for item in range(cuda.blockIdx.x, spans[nranges], cuda.gridDim.x):
        while item >= spans[t + 1]:
            t += 1
        v = spans[nranges + 1 + t] + item - spans[t]
        lo = indptr[v]
        c = indptr[v + 1] - lo
        if c >= k - 1:  # the same on every thread of the block
            words = (c + 31) >> 5
            for i in range(cuda.threadIdx.x, c, cuda.blockDim.x):
                cand[at + i] = indices[lo + i]
            cuda.syncthreads()
            for i in range(mine, c, WARPS_PER_BLOCK):
                _build_row(indptr, indices, cand, at, c, i, block, words, cache, lane)
            cuda.syncthreads()
            s = c * words + mine * 2 * (k - 1) * words
            for i in range(mine, c, WARPS_PER_BLOCK):
                total += _local_cliques(block, block[s:], block[s + (k - 1) * words:], c,
                                        k - 2, words, i, lane)
            cuda.syncthreads()  # the next vertex overwrites cand and the rows
    _finish(state, result, total, take, lane)


def _prefixes(indptr, indices, data, starts, nrec, k, state, result, take, cand, bits, stride):
    """One warp per prefix-clique record ``data[starts[t]:starts[t + 1]]``, taken
    from the cursor ``state[0]``."""
    lane = cuda.threadIdx.x & 31
    cache = _warp_cache()
    warp = cuda.grid(1) >> 5
    nwarps = (cuda.gridDim.x * cuda.blockDim.x) >> 5
    d = cand.size // nwarps
    at = warp * d
    mine = bits[warp * stride:(warp + 1) * stride]
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
        if j == 1:
            n = load_row(indptr, indices, v, cand, at, lane)
        else:
            x = data[s + 1]
            n = common_into(indices, indptr[v], indptr[v + 1], indices, indptr[x],
                             indptr[x + 1], cand, at, cache, lane)
        for p in range(2, j):
            x = data[s + p]
            n = keep_common(cand, at, n, indices, indptr[x], indptr[x + 1], cache, lane)
        total += _count_candidates(indptr, indices, cand, at, n, k - j, mine, k, cache, lane)
    _finish(state, result, total, take, lane)


def kernels():
    """The kernels, compiled once per process (or loaded from the compile cache)."""
    return {name: launch.kernel(fn, name=f"count_{name}", label="clique counting (GPU kernels)")
            for name, fn in (("triangles", _triangles), ("cliques", _cliques), ("local", _local),
                             ("prefixes", _prefixes))}


# ---- the device copy ----------------------------------------------------------------------


_MAKING = threading.Lock()  # CliqueDevice.of: one maker at a time (the kept dict is shared)


class CliqueDevice:
    """The oriented graph on one CUDA device, each warp's candidate buffer and
    the launch state.

    :meth:`of` keeps one per oriented graph and CUDA device (the last k asked
    for), so that counting again on the same graph copies nothing to the device."""

    @classmethod
    def of(cls, dag, k, blocks=None) -> CliqueDevice:
        """The copy of ``dag`` on the current CUDA device for k-cliques: the one
        kept with ``dag`` when it was made there for the same k (one k at a time: a
        buffer may take gigabytes). Callable from threads, each in its own
        ``with cuda.gpus[i]:``."""
        gpu = gthinker.gpu.current_device()
        with _MAKING:
            kept = dag.derived("count.CliqueDevice", lambda _: {})
            dev = kept.get(gpu)
            if dev is not None and dev.k == k and blocks is None:
                return dev
            dev = cls(dag, k, blocks, arrays=None if dev is None else dev.arrays)
            if blocks is None:
                kept[gpu] = dev
        return dev

    def __init__(self, dag, k, blocks=None, arrays=None, local=None):
        self.k = int(k)
        self.host_indptr = dag.indptr
        self.n = dag.num_vertices
        if arrays is None:  # the graph's copy on this device, and each edge's source
            indptr, indices, _labels = gthinker.gpu.graph_on_device(dag)
            src = np.repeat(np.arange(self.n, dtype=np.int32), np.diff(dag.indptr))
            arrays = (indptr, indices, cuda.to_device(src))
        self.arrays = arrays
        self.indptr, self.indices, self.src = arrays
        d = max(int(np.diff(dag.indptr).max()) if self.n else 0, 1)
        words = (d + 31) >> 5 if self.k > 3 else 0  # triangles need no local graph
        self.d = d  # candidates: prefix records need them for triangles too
        self.stride = max(d * words + 2 * (self.k - 1) * words, 1)
        #: whole ranges of k >= 4 by vertex blocks (else by edges)
        self.local = self.k > 3 and (self.k in LOCAL_K if local is None else bool(local))
        self.max_blocks = int(launch.blocks(BLOCKS_PER_SM) if blocks is None else blocks)
        block_bytes = 4 * (self.stride + self.d) * WARPS_PER_BLOCK
        self.blocks = max(1, min(self.max_blocks, BUFFER_BYTES // block_bytes))
        warps = self.blocks * WARPS_PER_BLOCK
        self.cand = cuda.device_array(warps * d, np.int32)
        self.bits = cuda.device_array(warps * self.stride, np.uint32)
        self.state = cuda.to_device(np.zeros(4, np.int64))  # [cursor, count, blocks done, -]
        self.result = cuda.mapped_array(1, np.int64)
        self._launches: dict = {}  # prepared launches of single ranges
        self._wait = cuda.synchronize  # waits for the last launch
        self.lock = threading.Lock()  # one count at a time on this state
        self.description = gthinker.gpu.device_status()[1]

    def reset(self):
        """Count from zero again."""
        self.state.copy_to_device(np.zeros(4, np.int64))

    def _spans(self, ranges, by_vertex):
        """The number of items (edges, or vertices when ``by_vertex``) of ``ranges``
        and their spans on the device: cumulative item counts, then each range's
        first item."""
        lows, highs = (np.array(x, np.int64) for x in zip(*ranges, strict=True))
        nr = len(ranges)
        spans = np.zeros(2 * nr + 1, np.int64)
        if by_vertex:
            np.cumsum(highs - lows, out=spans[1:nr + 1])
            spans[nr + 1:] = lows
        else:
            np.cumsum(self.host_indptr[highs] - self.host_indptr[lows], out=spans[1:nr + 1])
            spans[nr + 1:] = self.host_indptr[lows]
        return int(spans[nr]), cuda.to_device(spans)

    def _grid(self, items, limit):
        return max(1, min(limit, math.ceil(items / WARPS_PER_BLOCK)))

    def _launch_for(self, ranges, take):
        """The launch that counts from the first vertices of ``ranges``; None when
        they have no edge."""
        nr = np.int64(len(ranges))
        head = (self.indptr, self.indices)
        tail = (self.state, self.result, np.int64(take))
        if self.local:
            items, spans = self._spans(ranges, True)
            if not (items and self.host_indptr[-1]):
                return None
            return launch.Launch(kernels()["local"], min(items, self.blocks), THREADS, (
                *head, spans, nr, np.int64(self.k), *tail, self.cand, self.bits,
                np.int64(self.stride)))
        items, spans = self._spans(ranges, False)
        if not items:
            return None
        if self.k == 3:
            return launch.Launch(kernels()["triangles"], self._grid(items, self.max_blocks),
                                 THREADS, (*head, self.src, spans, nr, *tail))
        grid = self._grid(items, self.blocks)
        return launch.Launch(kernels()["cliques"], grid, THREADS, (
            *head, self.src, spans, nr, np.int64(self.k), *tail,
            self.cand[:grid * WARPS_PER_BLOCK * self.d], self.bits, np.int64(self.stride)))

    def edges(self, ranges, take=False) -> bool:
        """Counts from the edges of the first vertices of every ``(lo, hi)``; with
        ``take``, the count so far moves to ``result`` (see :meth:`take`).
        Returns whether a kernel was launched. A single range's launch is kept
        (counting a whole graph again copies and marshals nothing)."""
        if not ranges:
            return False
        key = (tuple(ranges), take) if len(ranges) == 1 else None
        launch = self._launches.get(key) if key else None
        if launch is None:
            launch = self._launch_for(ranges, take) or False
            if key:
                self._launches[key] = launch
        if launch:
            if take:
                self.result[0] = -1  # a count is never negative: take() checks the wait
            launch()
            self._wait = launch.wait
        return bool(launch)

    def prefixes(self, data, starts):
        nrec = len(starts) - 1
        if nrec:
            kernels()["prefixes"][self._grid(nrec, self.blocks), THREADS](
                self.indptr, self.indices, cuda.to_device(data), cuda.to_device(starts),
                np.int64(nrec), np.int64(self.k), self.state, self.result, np.int64(0),
                self.cand[:self._grid(nrec, self.blocks) * WARPS_PER_BLOCK * self.d], self.bits,
                np.int64(self.stride))

    def take(self) -> int:
        """The count a launch with ``take`` moved to the mapped result (waits for it)."""
        self._wait()
        total = int(self.result[0])
        if total < 0:
            raise RuntimeError("count_gpu: the launch had not finished when its count was read")
        return total

    def total(self) -> int:
        """The count so far (waits for the launches)."""
        return int(self.state.copy_to_host()[1])


def count(dag, k, vertices: range | None = None) -> tuple[int, dict]:
    """The k-cliques of ``dag`` (whose first vertex is in ``vertices``) on the
    current CUDA device alone, without a job: one launch over every edge and one
    synchronisation. Returns the count and ``kernel_seconds`` (launch to result),
    ``launches`` and ``device``."""
    dev = CliqueDevice.of(dag, k)
    lo, hi = (0, dag.num_vertices) if vertices is None else (vertices.start, vertices.stop)
    with dev.lock:
        t0 = time.perf_counter()
        launched = dev.edges([(lo, hi)] if hi > lo else [], take=True)
        total = dev.take() if launched else 0
    return total, {"kernel_seconds": time.perf_counter() - t0, "launches": int(launched),
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


class CliqueEngine(GPUEngine):
    """Clique counting as a GPU engine (:mod:`gthinker.gpu.engine`) on the oriented graph
    (``params[0]`` = k): it counts from the range records ``[-1 - lo, hi]`` (the edges of
    first vertices ``lo..hi-1``) and prefix records it takes from S, a launch per batch;
    the CPU workers take records from the same stack, so the faster device simply takes
    more of them. A gpu-mode job needs no master (:meth:`run_whole`): one launch over
    the edges per device."""

    counters = ("cliques",)
    name = "cliques"
    one_per_device = True  # it holds its device's CliqueDevice (one count at a time) for the job

    def __init__(self, dag, setup):
        super().__init__(dag, setup)
        self.dev = CliqueDevice.of(dag, int(setup.params[0]))
        self.dev.lock.acquire()
        self.dev.reset()
        self.busy = 0.0
        self.launches = 0

    def run(self, work, handle) -> None:
        ranges, data, starts = _split(work)
        t0 = time.perf_counter()
        self.launches += self.dev.edges(ranges)
        self.dev.prefixes(data, starts)
        cuda.synchronize()
        t1 = time.perf_counter()
        self.busy += t1 - t0
        self.timeline.append((t0, t1))
        self.launches += len(starts) > 1

    def results(self) -> EngineResults:
        return EngineResults(np.array([self.total], np.int64), np.zeros(0, np.int64), [])

    def snapshot(self) -> dict:
        return {"kernel_seconds": self.busy, "launches": self.launches,
                "device": self.dev.description}

    def close(self) -> None:
        """Reads the count (the job is over) and hands the device's copy back, reset
        for the next count."""
        with gthinker.gpu.on_device(self.device):
            self.total = self.dev.total()
            self.dev.reset()
        self.dev.lock.release()

    @classmethod
    def run_whole(cls, dag, setup, devices, vertices):
        """The k-cliques whose first vertex is in ``vertices`` (a range of them), without
        the master: on one device, one launch over their edges; on several, one thread
        per device takes ranges of first vertices of about even estimated cost, the
        heavy ones in small ranges, from one shared cursor until none is left
        (:func:`shared_ranges`), a launch each."""
        if not isinstance(vertices, range) or vertices.step != 1:
            return None
        k = int(setup.params[0])
        if len(devices) == 1:
            with gthinker.gpu.driving(devices[0]):
                done = [count(dag, k, vertices)]
        else:
            cursor = shared_ranges(dag, len(devices), vertices)
            with ThreadPoolExecutor(len(devices), "gthinker-count-gpu") as pool:
                done = list(pool.map(lambda d: _count_shared(dag, k, d, cursor), devices))
        total = np.array([sum(c for c, _ in done)], np.int64)
        return EngineResults(total, np.zeros(0, np.int64), []), [f for _, f in done]


def shared_ranges(dag, workers: int, within: range):
    """A :class:`~gthinker.gpu.sharing.SharedCursor` over ranges of first vertices of
    ``within`` with about even estimated cost, guided (:func:`~gthinker.gpu.sharing.
    guided_cuts`): a vertex's cost is its out-degree squared (the wedges its edges
    start, which every clique count above 2 grows with)."""
    out = np.diff(dag.indptr[within.start : within.stop + 1]).astype(np.float64)
    return SharedCursor(within.start + guided_cuts(out * out, workers), start=within.start)


def _count_shared(dag, k, device, cursor):
    """The k-cliques of the ranges this device's thread takes from ``cursor``, and its
    figures summed over its launches."""
    total, seconds, launches = 0, 0.0, 0
    with gthinker.gpu.driving(device):
        description = gthinker.gpu.device_status()[1]
        while (got := cursor.next()) is not None:
            found, figures = count(dag, k, range(*got))
            total += found
            seconds += figures["kernel_seconds"]
            launches += figures["launches"]
    return total, {"kernel_seconds": seconds, "launches": launches, "device": description}
