"""Depth-first subgraph matching on the GPU, T-DFS's way, as a GPU engine.

:class:`DFSEngine` (a :class:`gthinker.gpu.engine.GPUEngine`) counts the matches of a
matching plan (:func:`gthinker.apps.matching.planner.plan`, the job's ``params``) with the
techniques of T-DFS (Yuan et al., "Faster Depth-First Subgraph Matching on GPUs"): a warp
per task searching depth first on its own stack of candidate lists in device memory,
timeout decomposition into a lock-free device task queue, edge filtering of the initial
edges, intersections reused across siblings (kept per backward set, each computed at the
shallowest level where its inputs are known), the symmetry-breaking restrictions as bounds
on the sorted candidate lists, and the pattern plan's count-only last positions counted
from sizes. Labeled queries filter by the plan's candidate bitmaps (label, degree,
neighbour labels). The kernel is :mod:`gthinker.apps.matching.dfs_kernel`; what it computes when
is :mod:`gthinker.apps.matching.dfs_plan`.

The runtime drives it like every engine: it is served the job's first vertices in chunks
(their edges are its initial tasks) and, in hybrid mode, batches of the CPU workers'
records ``[k, M...]`` (input tasks as they are); between slices of a chunk it hands half
of what is left back to idle CPU workers. The graph's copy, the buffers and the kernel's
launch are kept with the graph on each device (:meth:`DFSDevice.of`), so a job on a graph
already used costs one upload of its plan, one launch and the wait: a small job's fixed
cost is a few hundred microseconds.
"""

from __future__ import annotations

import threading
import time

import numpy as np

import gthinker
from gthinker.extending import EngineResults, GPUEngine, launch, simulator

from . import dfs_kernel as K
from .dfs_plan import program
from .planner import H_BITMAP, H_WORDS

__all__ = ["DFSDevice", "DFSEngine"]

#: Blocks a launch has per multiprocessor: the kernel takes 118 registers a thread (ptxas,
#: sm_90), so two blocks of 256 threads fill an H100 multiprocessor's registers.
BLOCKS_PER_SM = 2
#: Threads of a block (on the simulator one warp: each simulated thread is a Python one,
#: and a second warp would mostly spin waiting for work).
THREADS = 32 * K.WARPS_PER_BLOCK


def _threads(asked) -> int:
    if asked is not None:
        return int(asked)
    return 32 if simulator.enabled() else THREADS


_KEEPING = threading.Lock()


class DFSDevice:
    """The engine's state on one device for one graph: the graph's copy, the kernel's
    arrays (grown as jobs need), the task queue and the prepared launch."""

    @classmethod
    def of(cls, graph, queue_records: int, threads=None) -> DFSDevice:
        """The state kept with ``graph`` for this thread's device."""
        gpu = gthinker.gpu.current_device()
        with _KEEPING:
            kept = graph.derived("sm.dfs_gpu", lambda _: {})
            dev = kept.get(gpu)
            if dev is None or (dev.queue_records, dev.threads) != (queue_records,
                                                                  _threads(threads)):
                dev = kept[gpu] = cls(graph, queue_records, threads)
            return dev

    def __init__(self, graph, queue_records: int, threads=None):
        cuda = gthinker.gpu.numba_cuda()
        self.cuda = cuda
        self.indptr, self.indices, _ = gthinker.gpu.graph_on_device(graph)
        self.host_indptr = graph.indptr
        self.n = graph.num_vertices
        self.max_degree = max(int(graph.max_degree), 1)
        self.queue_records = int(queue_records)
        self.queue = cuda.to_device(np.full(self.queue_records * K.QW, -1, np.int32))
        self.result = cuda.mapped_array(K.RESULT, np.int64)
        self.blocks = launch.blocks(BLOCKS_PER_SM)
        self.threads = _threads(threads)
        self.warps = self.blocks * self.threads // 32
        self.buffers = {}  # name -> device array (grown)
        self.launch = None
        self.lock = threading.Lock()  # one job at a time on this state
        self.dirty = False  # an aborted run left tasks in the queue
        self.description = gthinker.gpu.device_status()[1]

    def buffer(self, name, size, dtype):
        """Device array ``name`` with room for ``size`` items (a new one drops the
        prepared launch)."""
        have = self.buffers.get(name)
        if have is None or have.size < size:
            grown = max(int(size), 1) if have is None else max(int(size), 2 * have.size)
            self.buffers[name] = self.cuda.device_array(grown, dtype)
            self.launch = None
        return self.buffers[name]

    def kernel_launch(self):
        """The launch over the current buffers (made again after a buffer grew)."""
        if self.launch is None:
            b = self.buffers
            compiled = launch.kernel(K.match, name="sm_dfs", label="subgraph matching (DFS GPU)")
            self.launch = launch.Launch(compiled, self.blocks, self.threads, (
                self.indptr, self.indices, b["arr"], b["lists"], self.queue, b["roots"],
                b["rcum"], b["rdata"], b["rstarts"], self.result))
        return self.launch

    def reset_queue(self):
        if self.dirty:
            self.queue.copy_to_device(np.full(self.queue_records * K.QW, -1, np.int32))
            self.dirty = False


class DFSEngine(GPUEngine):
    """The depth-first GPU matcher (see the module docstring). Knobs (``configured``):
    ``budget`` (list elements a warp reads before it splits its task), ``list_bytes``
    (device memory the warps' candidate lists may take: fewer warps run where a graph's
    largest degree needs it), ``queue_records`` (the task queue's capacity) and
    ``block_threads`` (threads of a block; None: 256, one warp on the simulator)."""

    counters = ("matches",)
    name = "dfs"
    one_per_device = True
    budget = 1 << 14
    list_bytes = 4 << 30
    queue_records = 1 << 20
    block_threads = None

    def __init__(self, graph, setup):
        super().__init__(graph, setup)
        self.params = np.asarray(setup.params, np.int64)
        self.prog = program(self.params)
        self.total = 0
        self.busy = 0.0
        self.launches = 0
        self.splits = 0
        self.queue_full = 0
        self.dev = DFSDevice.of(graph, self.queue_records, self.block_threads)
        self.dev.lock.acquire()
        self._held = True
        try:
            self._prepare()
        except BaseException:
            self.close()
            raise

    def _prepare(self):
        """Sizes this job's buffers and fills the host copy of the control words, the
        params and the program (uploaded with each launch)."""
        dev, prog = self.dev, self.prog
        cap = dev.max_degree
        stride = prog.buffers * cap
        self.active = int(max(1, min(dev.warps, self.list_bytes // (4 * stride))))
        dev.buffer("lists", self.active * stride, np.int32)
        for name, dtype in (("roots", np.int32), ("rcum", np.int64), ("rdata", np.int32),
                            ("rstarts", np.int64)):
            dev.buffer(name, 1, dtype)
        host = np.zeros(K.CTRL + self.params.size + prog.array.size, np.int64)
        host[K.CTRL:K.CTRL + self.params.size] = self.params
        host[K.CTRL + self.params.size:] = prog.array
        host[[K.C_N, K.C_QCAP, K.C_WARPS, K.C_STRIDE, K.C_CAP, K.C_BUDGET, K.C_PB, K.C_GB]] = (
            dev.n, dev.queue_records * K.QW, self.active, stride, cap, self.budget, K.CTRL,
            K.CTRL + self.params.size)
        self.host = host
        dev.buffer("arr", host.size, np.int64)

    # ---- one assignment ---------------------------------------------------------------

    def run(self, work, handle) -> None:
        vertices = np.asarray(work.vertices)
        records = (work.task_data, work.task_starts) if work.num_tasks else None
        if self.prog.nq == 1:  # no edges: a first vertex is a match
            self.total += self._single(vertices, work.num_tasks)
            return
        if records is not None:
            self._check_records(work)
        slices = [vertices]
        if self.setup.cpu_threads and len(vertices) > 1:  # hybrid: slices, to give back
            slices = np.array_split(vertices, min(8, len(vertices)))
        for i, part in enumerate(slices):
            self._launch(part, records if i == 0 else None, handle)
            rest = slices[i + 1:]
            if rest and handle.idle_cpu_workers() > 0 and not handle.aborting:
                left = np.concatenate(rest)
                half = len(left) // 2
                if half:
                    handle.give_back_vertices(left[half:])
                    slices[i + 1:] = np.array_split(left[:half], min(len(rest), half))
            if handle.aborting:
                break

    def _single(self, vertices, records: int) -> int:
        words, at = int(self.params[H_WORDS]), int(self.params[H_BITMAP])
        bits = self.params[at:at + words].view(np.uint64)
        v = vertices.astype(np.int64)
        return int(((bits[v >> 6] >> (v & 63).astype(np.uint64)) & np.uint64(1)).sum()) + records

    def _check_records(self, work):
        ks = work.task_data[work.task_starts[:-1]]
        if ks.size and (ks.min() < 1 or ks.max() > self.prog.first_counted):
            raise ValueError(f"the DFS engine takes partial matches of 1..{self.prog.first_counted}"
                             f" positions, got records of {ks.min()}..{ks.max()}")

    def _items(self, vertices):
        """Control words of the initial items of ``vertices``, their edges (or the vertices
        themselves: :data:`dfs_kernel.C_BY_VERTEX`): a range's edges are consecutive; any
        other set of first vertices goes up with its edge counts."""
        dev, host = self.dev, self.host
        n = len(vertices)
        by_vertex = self.prog.first_counted < 2
        host[K.C_BY_VERTEX] = by_vertex
        if n == 0:
            host[[K.C_MODE, K.C_NROOTS, K.C_ELO, K.C_NITEMS]] = 0
            return
        if n and int(vertices[-1]) - int(vertices[0]) == n - 1 and (
                n < 3 or bool((np.diff(vertices) == 1).all())):
            lo, hi = int(vertices[0]), int(vertices[-1]) + 1
            host[[K.C_MODE, K.C_NROOTS, K.C_ELO, K.C_NITEMS]] = (0, 0, lo, n) if by_vertex \
                else (0, 0, dev.host_indptr[lo], dev.host_indptr[hi] - dev.host_indptr[lo])
            return
        if by_vertex:
            dev.buffer("roots", n, np.int32)[:n].copy_to_device(vertices.astype(np.int32))
            host[[K.C_MODE, K.C_NROOTS, K.C_ELO, K.C_NITEMS]] = 1, n, 0, n
            return
        v = vertices.astype(np.int64)
        cum = np.zeros(n + 1, np.int64)
        np.cumsum(dev.host_indptr[v + 1] - dev.host_indptr[v], out=cum[1:])
        dev.buffer("roots", n, np.int32)[:n].copy_to_device(vertices.astype(np.int32))
        dev.buffer("rcum", n + 1, np.int64)[:n + 1].copy_to_device(cum)
        host[[K.C_MODE, K.C_NROOTS, K.C_ELO, K.C_NITEMS]] = 1, n, 0, cum[-1]

    def _records(self, records):
        dev, host = self.dev, self.host
        if records is None:
            host[K.C_NRECS] = 0
            return
        data, starts = records
        dev.buffer("rdata", data.size, np.int32)[:data.size].copy_to_device(
            np.ascontiguousarray(data, np.int32))
        dev.buffer("rstarts", starts.size, np.int64)[:starts.size].copy_to_device(
            np.ascontiguousarray(starts, np.int64))
        host[K.C_NRECS] = starts.size - 1

    def _launch(self, vertices, records, handle):
        dev, host = self.dev, self.host
        self._items(vertices)
        self._records(records)
        if host[K.C_NITEMS] == 0 and host[K.C_NRECS] == 0:
            return
        for slot in (K.C_CURSOR, K.C_RCURSOR, K.C_BUSY, K.C_QSIZE, K.C_QFRONT, K.C_QBACK,
                     K.C_COUNT, K.C_DONE, K.C_SPLITS, K.C_FULL):
            host[slot] = 0
        dev.reset_queue()
        go = dev.kernel_launch()
        dev.buffers["arr"][:host.size].copy_to_device(host)
        result = dev.result
        result[:] = 0
        t0 = time.perf_counter()
        with simulator.fast_switching():  # (the simulator's warps meet faster; else nothing)
            go()
        self._wait(result, handle)
        go.wait()
        t1 = time.perf_counter()
        self.busy += t1 - t0
        self.timeline.append((t0, t1))
        self.launches += 1
        self.splits += int(result[K.R_SPLITS])
        self.queue_full += int(result[K.R_FULL])
        if result[K.R_ABORT]:
            dev.dirty = True
        self.total += int(result[K.R_COUNT])
        self.live_counters[0] = self.total

    def _wait(self, result, handle):
        """Waits for the kernel's done flag; asks it to stop when the job is stopping."""
        spins = 0
        while not result[K.R_DONE]:
            if handle is not None and handle.aborting and not result[K.R_ABORT]:
                result[K.R_ABORT] = 1
            spins += 1
            time.sleep(0 if spins < 2000 else 2e-4)

    # ---- results ------------------------------------------------------------------------

    def results(self) -> EngineResults:
        return EngineResults(np.array([self.total], np.int64), np.zeros(0, np.int64), [])

    def snapshot(self) -> dict:
        return {"kernel_seconds": self.busy, "launches": self.launches, "warps": self.active,
                "tasks_split": self.splits, "queue_full": self.queue_full,
                "lists_kept": len(self.prog.lists), "device": self.dev.description}

    def close(self) -> None:
        if self._held:
            self._held = False
            self.dev.lock.release()
