"""The GPU side of clique counting: warp-per-edge kernels on the oriented graph.

A warp takes one edge ``(v, u)`` of the oriented graph (a prefix clique of two
vertices) or one prefix-clique record handed over by the CPU workers. The
warps of a launch stride over the edges (warp ``w`` takes edges ``w``, ``w +
W``, ...), so a hub's edges, which cost the most, spread over many warps and
the hardware's block scheduler evens out the rest; the first vertex of each
edge is read from an edge-source array, made on the device the first time an edge
kernel runs (:class:`GraphCopy`).

Every intersection is a warp's: the lanes take the shorter list 32 elements at
a time and look each one up in the longer list in two phases, first among 32
samples of it held in the warp's shared memory, then by binary search in the
one thirty-second of the list that remains (:mod:`gthinker.apps.matching.warp_sets`,
shared with the matching engine). Triangles are the size of ``out(v) & out(u)``,
nothing is written (:mod:`gthinker.apps.matching.triangles_gpu`). For k >= 5 the warp
writes the common out-neighbours of its edge (the candidates, at most ``degeneracy`` of
them) to its own slice of device memory, builds the local graph among them as
bitset rows (one ``ballot`` per 32 candidates) and searches it depth first over
the bitsets; the last two levels are counted by popcounts, as on the CPU
(:mod:`gthinker.apps.count`, :mod:`gthinker.apps.matching.bitset_gpu`). 4-cliques go by
vertex instead (:mod:`gthinker.apps.matching.local_gpu`): a block builds the local graph of
``out(v)`` once, and its warps count the triangles in the rows of v's out-neighbours.
The buffers grow with the square of the largest out-degree, which the orientation
bounds by the degeneracy however large a hub's degree: a hub costs its own rows, not
every warp's memory. Past a budget (:data:`BUFFER_BYTES`) a launch has fewer blocks.

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
from gthinker.extending import (
    POLL,
    EngineResults,
    GPUEngine,
    SharedCursor,
    StopFlag,
    guided_cuts,
    kernels_done,
    launch,
    simulator,
    warp_stop_requested,
)
from gthinker.gpu.device_helpers import FULL_MASK

from .bitset_gpu import count_candidates
from .kernel_parts import THREADS, WARPS_PER_BLOCK, finish, range_item, warp_cache
from .local_gpu import LOCAL, block_words, local_kernel
from .triangles_gpu import TRIANGLES, triangle_kernel
from .warp_sets import common_into, keep_common, load_row

__all__ = ["CliqueDevice", "CliqueEngine", "count", "shared_ranges", "WARPS_PER_BLOCK"]

#: Blocks a launch may have per SM (the warps stride over the edges beyond that):
#: 32 was within 2% of the best of 8, 32, 128 and 496 on every graph and k measured
#: (H100; 128 cost small graphs 20-30%: one atomic per block, more blocks to start).
#: The triangle kernel's variant says its own (:class:`triangles_gpu.TriangleKernel
#: <gthinker.apps.matching.triangles_gpu.TriangleKernel>`).
BLOCKS_PER_SM = 32
#: The k counted by vertex blocks (:mod:`gthinker.apps.matching.local_gpu`); other k >= 4 by
#: edges (:func:`_cliques`). Measured on the H100
#: (benchmarks/results/count_gpu_profile_h100_s4b.json):
#: 4-cliques 1.4-6.4x faster by vertex (facebook, email-Enron, R-MAT 20 and 22), 5-cliques
#: 1.07-5x faster by edge (a hub's level-0 rows are too few to spread over its block's warps).
LOCAL_K = (4,)
#: Bytes of device memory the candidate buffers and local graphs may take at most: a
#: quarter of the device's free memory, at most this much. Their size grows with the
#: square of the largest out-degree (the degeneracy); past the budget a launch has fewer
#: blocks (by arithmetic: at a degeneracy of 1,500 the by-vertex kernel got 900 of an
#: H100's 4,224 blocks under the former 2 GB and a warp's slice a block, all of them now).
BUFFER_BYTES = 8 << 30
#: The budget on the simulator (which reports no free memory).
SIMULATOR_BUFFER_BYTES = 64 << 20


# ---- kernels ------------------------------------------------------------------------------


def _cliques(indptr, indices, src, spans, nranges, k, state, result, take, cand, bits,
             stride, stop):
    """Warps striding over the edges of ranges (``spans`` as for the triangle kernel,
    :mod:`gthinker.apps.matching.triangles_gpu`), for k-cliques (k >= 4): each edge's common
    out-neighbours go to the warp's ``cand`` slice (``d = cand.size / warps``
    ids) and its (k - 2)-cliques are counted there (``bits``: ``stride`` words a warp).
    Warps leave early once the host's ``stop`` flag is set."""
    lane = cuda.threadIdx.x & 31
    cache = warp_cache()
    warp = cuda.grid(1) >> 5
    nwarps = (cuda.gridDim.x * cuda.blockDim.x) >> 5
    d = cand.size // nwarps
    at = warp * d
    mine = bits[warp * stride:(warp + 1) * stride]
    total = 0
    t = 0
    claims = 0
    for item in range(warp, spans[nranges], nwarps):
        claims += 1
        if claims % POLL == 0 and warp_stop_requested(stop):
            break
        e, t = range_item(spans, nranges, item, t)
        v = src[e]
        u = indices[e]
        n = common_into(indices, indptr[v], indptr[v + 1], indices, indptr[u], indptr[u + 1],
                         cand, at, cache, lane)
        total += count_candidates(indptr, indices, cand, at, n, k - 2, mine, k, cache, lane)
    finish(state, result, total, take, lane)


def _prefixes(indptr, indices, data, starts, nrec, k, state, result, take, cand, bits, stride,
              stop):
    """One warp per prefix-clique record ``data[starts[t]:starts[t + 1]]``, taken
    from the cursor ``state[0]``, until the records or the host's ``stop`` flag say so."""
    lane = cuda.threadIdx.x & 31
    cache = warp_cache()
    warp = cuda.grid(1) >> 5
    nwarps = (cuda.gridDim.x * cuda.blockDim.x) >> 5
    d = cand.size // nwarps
    at = warp * d
    mine = bits[warp * stride:(warp + 1) * stride]
    total = 0
    claims = 0
    while True:
        claims += 1
        if claims % POLL == 0 and warp_stop_requested(stop):
            break
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
        total += count_candidates(indptr, indices, cand, at, n, k - j, mine, k, cache, lane)
    finish(state, result, total, take, lane)


def kernels():
    """The kernels, compiled once per process (or loaded from the compile cache): the
    triangle and by-vertex kernels in their chosen variants (:data:`triangles_gpu.TRIANGLES
    <gthinker.apps.matching.triangles_gpu.TRIANGLES>`, :data:`local_gpu.LOCAL
    <gthinker.apps.matching.local_gpu.LOCAL>`)."""
    found = {name: launch.kernel(fn, name=f"count_{name}", label="clique counting (GPU kernels)")
             for name, fn in (("cliques", _cliques), ("prefixes", _prefixes))}
    found["triangles"] = triangle_kernel()
    found["local"] = local_kernel()
    found["sources"] = _sources_kernel()
    return found


def _sources_kernel():
    return launch.kernel(_fill_sources, name="count_fill_sources",
                         label="clique counting (GPU kernels)")


# ---- the device copy ----------------------------------------------------------------------


_MAKING = threading.Lock()  # CliqueDevice.of: one maker at a time (the kept dict is shared)


def _fill_sources(indptr, n, src):
    """``src[e] = v`` for every edge ``e`` of row ``v``: a thread a vertex (grid-stride)."""
    for v in range(cuda.grid(1), n, cuda.gridsize(1)):
        for e in range(indptr[v], indptr[v + 1]):
            src[e] = v


class GraphCopy:
    """An oriented graph's arrays on one device: ``indptr``, ``indices`` and, made on the
    device the first time an edge kernel needs it, ``src`` (each edge's first vertex)."""

    def __init__(self, dag):
        self.indptr, self.indices, _labels = gthinker.gpu.graph_on_device(dag)
        self.n = dag.num_vertices
        self.m = int(dag.indptr[-1])
        self._src = None

    @property
    def src(self):
        if self._src is None:
            self._src = cuda.device_array(max(self.m, 1), np.int32)
            if self.m:
                _sources_kernel()[launch.blocks(4, self.n, THREADS), THREADS](
                    self.indptr, np.int64(self.n), self._src)
        return self._src


def _buffer_budget() -> int:
    """Bytes the buffers of a :class:`CliqueDevice` may take (see :data:`BUFFER_BYTES`)."""
    if simulator.enabled():
        return SIMULATOR_BUFFER_BYTES
    free, _total = cuda.current_context().get_memory_info()
    return int(min(BUFFER_BYTES, free // 4))


class CliqueDevice:
    """The oriented graph on one CUDA device, the candidate buffers and local graphs of
    its warps (by edge) or blocks (by vertex), and the launch state.

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

    def __init__(self, dag, k, blocks=None, arrays=None, local=None, variant=None):
        """``blocks``: at most this many blocks a launch (default: per SM, as the kernel
        says); ``arrays``: the :class:`GraphCopy` of another CliqueDevice of ``dag``;
        ``local``: whole ranges of k >= 4 by vertex (default: k in :data:`LOCAL_K`);
        ``variant``: of the triangle kernel (k = 3) or of the by-vertex kernel
        (default: :data:`triangles_gpu.TRIANGLES`, :data:`local_gpu.LOCAL`)."""
        self.k = int(k)
        self.host_indptr = dag.indptr
        self.n = dag.num_vertices
        self.arrays = arrays if arrays is not None else GraphCopy(dag)
        self.indptr, self.indices = self.arrays.indptr, self.arrays.indices
        d = max(int(np.diff(dag.indptr).max()) if self.n else 0, 1)
        words = (d + 31) >> 5 if self.k > 3 else 0  # triangles need no local graph
        self.d = d  # candidates: prefix records need them for triangles too
        self.stride = max(d * words + 2 * (self.k - 1) * words, 1)  # words of a warp
        #: whole ranges of k >= 4 by vertex blocks (else by edges)
        self.local = self.k > 3 and (self.k in LOCAL_K if local is None else bool(local))
        self.variant = variant or (TRIANGLES if self.k == 3 else LOCAL if self.local else None)
        self.max_blocks = int(launch.blocks(BLOCKS_PER_SM) if blocks is None else blocks)
        #: blocks of a triangle launch (no buffers)
        self.triangle_blocks = self.max_blocks if blocks is not None or self.k != 3 else int(
            launch.blocks(self.variant.blocks_per_sm))
        if self.local:  # a block's rows and its warps' sets; its candidates
            self.block_stride = block_words(d, self.k)
            per_block = 4 * (self.block_stride + d)
        else:  # each warp's
            self.block_stride = WARPS_PER_BLOCK * self.stride
            per_block = 4 * WARPS_PER_BLOCK * (self.stride + d)
        self.blocks = max(1, min(self.max_blocks, _buffer_budget() // per_block))
        per = 1 if self.local else WARPS_PER_BLOCK
        # at least one block of prefix warps (hybrid records): d candidates and stride
        # words a warp
        self.cand = cuda.device_array(max(self.blocks * per, WARPS_PER_BLOCK) * d, np.int32)
        self.bits = cuda.device_array(max(self.blocks * self.block_stride,
                                          WARPS_PER_BLOCK * self.stride), np.uint32)
        #: blocks of a prefix-record launch
        self.prefix_blocks = max(1, min(self.max_blocks, self.bits.size // (
            WARPS_PER_BLOCK * self.stride), self.cand.size // (WARPS_PER_BLOCK * d)))
        self.state = cuda.to_device(np.zeros(4, np.int64))  # [cursor, count, blocks done, -]
        self.result = cuda.mapped_array(1, np.int64)
        #: The kernels' stop flag, kept with the prepared launches: each count clears it
        #: and links it to its job's (:meth:`watching`).
        self.stop = StopFlag()
        self._launches: dict = {}  # prepared launches of single ranges
        self._wait = cuda.synchronize  # waits for the last launch
        self.lock = threading.Lock()  # one count at a time on this state
        self.description = gthinker.gpu.device_status()[1]

    def reset(self):
        """Count from zero again."""
        self.state.copy_to_device(np.zeros(4, np.int64))

    def watching(self, stop: StopFlag | None) -> None:
        """This device's kernels stop when the job's ``stop`` flag is set (from now on;
        None: nothing stops them but the end)."""
        self.stop.clear()
        if stop is not None:
            stop.link(self.stop)

    def unwatch(self, stop: StopFlag | None) -> None:
        if stop is not None:
            stop.unlink(self.stop)

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
        stop = self.stop.array
        if self.local:
            items, spans = self._spans(ranges, True)
            if not (items and self.host_indptr[-1]):
                return None
            return launch.Launch(self.kernel(), min(items, self.blocks), THREADS, (
                *head, spans, nr, np.int64(self.k), *tail, self.cand, self.bits,
                np.int64(self.block_stride), stop))
        items, spans = self._spans(ranges, False)
        if not items:
            return None
        if self.k == 3:
            return launch.Launch(self.kernel(), self._grid(items, self.triangle_blocks), THREADS,
                                 (*head, self.arrays.src, spans, nr, *tail, stop))
        grid = self._grid(items, self.blocks)
        return launch.Launch(self.kernel(), grid, THREADS, (
            *head, self.arrays.src, spans, nr, np.int64(self.k), *tail,
            self.cand[:grid * WARPS_PER_BLOCK * self.d], self.bits, np.int64(self.stride), stop))

    def kernel(self):
        """The compiled kernel that counts from ranges of first vertices here."""
        if self.local:
            return local_kernel(self.variant)
        if self.k == 3:
            return triangle_kernel(self.variant)
        return kernels()["cliques"]

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
            grid = self._grid(nrec, self.prefix_blocks)
            kernels()["prefixes"][grid, THREADS](
                self.indptr, self.indices, cuda.to_device(data), cuda.to_device(starts),
                np.int64(nrec), np.int64(self.k), self.state, self.result, np.int64(0),
                self.cand[:grid * WARPS_PER_BLOCK * self.d], self.bits, np.int64(self.stride),
                self.stop.array)

    def take(self) -> int:
        """The count a launch with ``take`` moved to the mapped result (waits for it, in
        Python: Ctrl-C stops the kernel, :meth:`StopFlag.wait
        <gthinker.gpu.stop_flag.StopFlag.wait>`)."""
        self.stop.wait(lambda: self.result[0] >= 0)
        self._wait()
        total = int(self.result[0])
        if total < 0:
            raise RuntimeError("count_gpu: the launch had not finished when its count was read")
        return total

    def total(self) -> int:
        """The count so far (waits for the launches)."""
        return int(self.state.copy_to_host()[1])


def count(dag, k, vertices: range | None = None, stop: StopFlag | None = None
          ) -> tuple[int, dict]:
    """The k-cliques of ``dag`` (whose first vertex is in ``vertices``) on the
    current CUDA device alone, without a job: one launch over every edge and one
    synchronisation; the count so far once ``stop`` is set (the job's flag). Returns the
    count and ``kernel_seconds`` (launch to result), ``setup_seconds`` (the device copy of
    ``dag`` and the buffers, when not kept from an earlier count), ``launches`` and
    ``device``."""
    t0 = time.perf_counter()
    dev = CliqueDevice.of(dag, k)
    lo, hi = (0, dag.num_vertices) if vertices is None else (vertices.start, vertices.stop)
    with dev.lock:
        t1 = time.perf_counter()
        dev.watching(stop)
        try:
            launched = dev.edges([(lo, hi)] if hi > lo else [], take=True)
            total = dev.take() if launched else 0
        finally:
            dev.unwatch(stop)
    return total, {"kernel_seconds": time.perf_counter() - t1, "setup_seconds": t1 - t0,
                   "launches": int(launched), "device": dev.description}


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
        self.dev.watching(setup.stop)
        self.busy = 0.0
        self.launches = 0

    def run(self, work, handle) -> None:
        ranges, data, starts = _split(work)
        t0 = time.perf_counter()
        self.launches += self.dev.edges(ranges)
        self.dev.prefixes(data, starts)
        self.dev.stop.wait(kernels_done(), lambda: handle.aborting)
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
        self.dev.unwatch(self.setup.stop)
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
                done = [count(dag, k, vertices, setup.stop)]
        else:
            cursor = shared_ranges(dag, len(devices), vertices)
            with ThreadPoolExecutor(len(devices), "gthinker-count-gpu") as pool:
                done = list(pool.map(lambda d: _count_shared(dag, k, d, cursor, setup.stop),
                                     devices))
        total = np.array([sum(c for c, _ in done)], np.int64)
        return EngineResults(total, np.zeros(0, np.int64), []), [f for _, f in done]


def shared_ranges(dag, workers: int, within: range):
    """A :class:`~gthinker.gpu.sharing.SharedCursor` over ranges of first vertices of
    ``within`` with about even estimated cost, guided (:func:`~gthinker.gpu.sharing.
    guided_cuts`): a vertex's cost is its out-degree squared (the wedges its edges
    start, which every clique count above 2 grows with)."""
    out = np.diff(dag.indptr[within.start : within.stop + 1]).astype(np.float64)
    return SharedCursor(within.start + guided_cuts(out * out, workers), start=within.start)


def _count_shared(dag, k, device, cursor, stop=None):
    """The k-cliques of the ranges this device's thread takes from ``cursor`` (none once
    ``stop`` is set), and its figures summed over its launches."""
    total, seconds, setup, launches = 0, 0.0, 0.0, 0
    with gthinker.gpu.driving(device):
        description = gthinker.gpu.device_status()[1]
        while not (stop is not None and stop.is_set()) and (got := cursor.next()) is not None:
            found, figures = count(dag, k, range(*got), stop)
            total += found
            seconds += figures["kernel_seconds"]
            setup += figures["setup_seconds"]
            launches += figures["launches"]
    return total, {"kernel_seconds": seconds, "setup_seconds": setup, "launches": launches,
                   "device": description}
