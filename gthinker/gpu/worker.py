"""The GPU worker: a host thread that drives an app's kernels over a device
buffer of subgraphs (G-ThinkerCG's BFS-DFS hybrid with host subgraph buffering).

The device buffer is one stack of subgraph records (``vert``: int32 vertices,
``offs``: [start, end) per record). A *level* is a run of records on it. One
step on the top level L(i) runs ``process`` (one warp per subgraph of L(i),
at most eta queue entries) and ``extend`` (one thread per entry), which
appends L(i+1) above L(i). The unread rest of L(i) stays where it is (the
level stack remembers its read position) and the worker descends to
L(i+1); a level fully read is popped and its space reused (backtracking).

When the buffer passes 95% of its capacity, the new level is copied to the
host stack H and the worker stays on L(i). Once the level stack is empty,
up to eta subgraphs come back from H as a new level 1 before any new
initial vertices are taken, so H stays small and the order stays near DFS.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import psutil
from numba import cuda

from gthinker import compiler

from ..errors import GThinkerError
from ..options import (
    BUFFER_SHARE,
    EXTEND_BLOCKS_PER_SM,
    EXTEND_THREADS,
    HOST_LIMIT_SHARE,
    PROCESS_BLOCKS_PER_SM,
    PROCESS_THREADS,
    GPUOptions,
    HybridOptions,
    RunOptions,
)
from . import launch
from .availability import device_status
from .device_helpers import (
    CAPR,
    CAPV,
    CTRL_SIZE,
    ETA,
    LEVEL_END,
    NDEFER_IN,
    NDEFER_OUT,
    NRETRY,
    OHEAD,
    OTAIL,
    QCAP,
    QOK,
    QTAIL,
    QVOL,
    STRIPES,
    VOL_LIMIT,
    VTAIL,
)
from .devices import at_exit, driving, graph_on_device, on_device
from .engine import EngineResults, EngineSetup, GPUEngine
from .simulator import enabled as simulator_enabled
from .simulator import fast_switching
from .stop_flag import StopFlag, kernels_done

__all__ = ["GPUWorker", "HostStack"]

_OVERFLOW = 0.95


class HostStack:
    """H: subgraph records in host memory, as a stack of blocks ``(data, starts)``
    (record k of a block is ``data[starts[k]:starts[k + 1]]``, the same layout
    as task records in the master's S). Grows as needed; never device memory.

    A block is *movable* (to the CPUs' S) unless it came from S itself: the
    GPU keeps what it stole, or the two sides would pass it to and fro."""

    def __init__(self, limit_bytes: int | None = None):
        self.limit_bytes = limit_bytes
        self._blocks: list[tuple[np.ndarray, np.ndarray, bool]] = []
        self.records = 0
        self.vertices = 0
        self.peak_records = 0
        self.peak_bytes = 0
        self.pushes = 0
        self.pops = 0

    def __len__(self) -> int:
        return self.records

    @property
    def top_movable(self) -> bool:
        return bool(self._blocks) and self._blocks[-1][2]

    def push(self, data: np.ndarray, starts: np.ndarray, movable: bool = True) -> None:
        k = len(starts) - 1
        if k <= 0:
            return
        self._blocks.append((data, starts, movable))
        self.records += k
        self.vertices += int(starts[-1])
        self.pushes += 1
        self.peak_records = max(self.peak_records, self.records)
        self.peak_bytes = max(self.peak_bytes, self.vertices * 4 + self.records * 8)
        if self.limit_bytes is not None and self.peak_bytes > self.limit_bytes:
            raise GThinkerError(
                f"the host subgraph stack H passed its limit of {self.limit_bytes:,} bytes "
                f"({self.records:,} subgraphs): the search frontier outgrew the device buffer "
                "and host memory. Lower eta_per_warp (--eta-per-warp) so levels stay smaller, "
                "or raise host_limit_bytes"
            )

    def pop(self, max_records: int, max_vertices: int):
        """Up to ``max_records`` records (and ``max_vertices`` vertices, at least
        one record) from the top block; returns ``(data, starts)``."""
        data, starts, movable = self._blocks[-1]
        k = len(starts) - 1
        lo = max(0, k - max_records)
        # Keep the vertex total bounded (a record or more always moves).
        while lo < k - 1 and starts[k] - starts[lo] > max_vertices:
            lo += (k - lo + 1) // 2
        if lo == 0:
            self._blocks.pop()
        else:
            self._blocks[-1] = (data[: starts[lo]], starts[: lo + 1], movable)
        out_data = data[starts[lo] : starts[k]]
        out_starts = starts[lo:] - starts[lo]
        self.records -= k - lo
        self.vertices -= int(out_starts[-1])
        self.pops += 1
        return out_data, out_starts


@dataclass
class _Level:
    rec_lo: int  # first record
    rec_hi: int  # end of records
    head: int  # next record to read
    v_lo: int  # first vertex slot (the level's space starts here)


@compiler.jit("the GPU worker", nogil=True)
def _gather(offs, verts, v_lo):
    """Packs records [start, end) of ``verts`` (offsets relative to v_lo) into
    ``(data, starts)``, without temporaries the size of the data."""
    m = offs.shape[0]
    starts = np.zeros(m + 1, np.int64)
    for k in range(m):
        starts[k + 1] = starts[k] + offs[k, 1] - offs[k, 0]
    data = np.empty(starts[m], np.int32)
    for k in range(m):
        data[starts[k] : starts[k + 1]] = verts[offs[k, 0] - v_lo : offs[k, 1] - v_lo]
    return data, starts


# The subgraph buffer (most of the device's memory) is kept from one job to the
# next in a process, one per device: freeing and allocating ~100 GB costs about
# 0.2 s per job, more than a whole small subgraph-matching query.
# release_buffers() gives them back.
_kept: dict = {}  # device id -> (vertices, offsets)


def release_buffers() -> None:
    """See :func:`gthinker.gpu.release_buffers`."""
    devices = list(_kept)
    _kept.clear()
    if simulator_enabled() or not cuda.is_available():
        return
    for device in devices or [None]:
        with on_device(device):
            cuda.current_context().deallocations.clear()


at_exit(_kept.clear)  # dropped before the devices are finished at exit (devices.py)


def _new_buffer(budget):
    """(vertices, offsets) device arrays for ``budget`` bytes: 4/5 vertices, 1/5 offsets."""
    return (cuda.device_array(budget * 4 // 5 // 4, np.int32),
            cuda.device_array((budget // 5 // 16, 2), np.int64))


def _subgraph_buffer(budget_for, device):
    """(vertices, offsets) device arrays and the budget: the pair kept on ``device``
    (taken out of the keep while this job uses it) when it is within 10% of what
    this job may use (it is allocated already, so it cannot run the device out of
    memory), else a new pair."""
    kept = _kept.pop(device, None)
    kept_bytes = kept[0].nbytes + kept[1].nbytes if kept else 0
    budget = budget_for(kept_bytes)
    if kept and 0.9 * budget <= kept_bytes <= 1.1 * budget:  # free memory moves a little
        return kept, budget
    if kept:
        del kept
        cuda.current_context().deallocations.clear()
        budget = budget_for(0)
    return _new_buffer(budget), budget


class GPUWorker(GPUEngine):
    """Runs a :class:`gthinker.GPUContext` app on one CUDA device (or Numba's
    simulator): the framework's GPU engine (:mod:`gthinker.gpu.engine`) for every
    GPUContext app (:meth:`of`). ``__call__(worker)`` is the loop an
    :class:`gthinker.runtime.job.ExternalWorker` slot runs.

    ``device`` is the CUDA device id (None: the current device); the set-up,
    the loop and :meth:`results` run on it, whichever thread calls them.
    ``peers`` is the number of other GPU workers in the job: while one of them
    waits for work, this one hands work to S as it does for idle CPU workers.
    """

    name = "levels"
    worker_options = True

    @classmethod
    def of(cls, app_cls) -> type[GPUEngine]:
        """The engine that runs the :class:`gthinker.GPUContext` app ``app_cls`` (made
        by the runtime as ``engine(graph, setup)``, like every engine)."""

        def __init__(self, graph, setup: EngineSetup):
            cls.__init__(self, app_cls, graph, params=setup.params,
                         histogram_bins=setup.histogram_bins, cpu_threads=setup.cpu_threads,
                         options=setup.options.gpu, hybrid=setup.options.hybrid,
                         device=setup.device, peers=setup.peers, stop=setup.stop)

        return type(f"{app_cls.__qualname__}Engine", (cls,), {
            "__init__": __init__, "counters": app_cls.counters, "maxima": app_cls.maxima,
            "histograms": app_cls.histograms})

    def __init__(self, app_cls, graph, *, params=(), histogram_bins=2, cpu_threads=0,
                 options: GPUOptions | None = None, hybrid: HybridOptions | None = None,
                 device: int | None = None, peers: int = 0, stop: StopFlag | None = None,
                 **settings):
        """``options`` and ``hybrid`` (:mod:`gthinker.options`), or their fields as
        ``settings`` keywords (``eta_per_warp=``, ``tau_c=``, ...); ``stop``: the job's
        stop flag, which the process kernel polls (None: a flag of its own)."""
        run_options = RunOptions.from_keywords(
            RunOptions(gpu=options or GPUOptions(), hybrid=hybrid or HybridOptions()),
            **settings)
        self.options, self.hybrid = run_options.gpu, run_options.hybrid
        self.device, self.peers = device, int(peers)
        self.app = app_cls()
        self.kern = app_cls.kernels()
        self.simulated = simulator_enabled()
        self.t0 = time.perf_counter()
        self.n_counters = len(app_cls.counters)
        self.n_maxima = len(app_cls.maxima)
        self.n_hists = len(app_cls.histograms)
        self.hist_bins = histogram_bins if app_cls.histograms else 1
        self.stop = stop if stop is not None else StopFlag()
        self._aborting = lambda: False  # the assignment's (drain)
        with on_device(device):
            self.d_stop = self.stop.array
            self._launch_geometry(app_cls, graph)
            # Graph, results and the app's own buffers first; the subgraph buffer
            # takes what is left.
            self._upload(graph, params)
            self._allocate_queues()
            self._allocate_subgraph_buffer(graph)
            self._set_up_stealing(cpu_threads)
            _gather(np.zeros((1, 2), np.int64), np.zeros(1, np.int32), 0)  # compiled or loaded
            self.stats = self._initial_stats()
        self.timeline: list[tuple[float, float]] = []  # GPU busy intervals
        self._live_at = time.perf_counter()
        self.live_counters = np.zeros(self.n_counters, np.int64)
        self.stack: list[_Level] = []
        self.otail = 0
        self.vtail = 0
        self.ndefer = 0
        self.pending = np.zeros(0, np.int32)

    def _launch_geometry(self, app_cls, graph):
        """Grids of the process and extend kernels, warps, eta and the queue size."""
        o = self.options
        if self.simulated:  # a Python thread per GPU thread
            pthreads, ethreads = 64, 32
        else:
            pthreads, ethreads = PROCESS_THREADS, EXTEND_THREADS
        pblocks = launch.blocks(PROCESS_BLOCKS_PER_SM)
        eblocks = launch.blocks(EXTEND_BLOCKS_PER_SM)
        if o.blocks is not None:
            pblocks = eblocks = o.blocks
        if o.threads_per_block is not None:
            pthreads = ethreads = o.threads_per_block
        self.pgrid = (pblocks, pthreads)
        self.egrid = (eblocks, ethreads)
        self.warps = pblocks * pthreads // 32
        self.eta = int(o.eta_per_warp or app_cls.eta_per_warp) * self.warps
        n = graph.num_vertices
        fanout = int(o.fanout or app_cls.max_fanout or (int(graph.max_degree) + 1 if n else 1))
        self.qcap = self.eta + self.eta // 2 + fanout

    def _upload(self, graph, params):
        """The graph, the params, the result arrays and the app's own arrays, on the device."""
        self.d_indptr, self.d_indices, self.d_labels = graph_on_device(graph)
        self.d_params = cuda.to_device(np.ascontiguousarray(
            params if len(params) else [0], dtype=np.int64))
        self.d_counters = cuda.to_device(np.zeros((max(1, self.n_counters), STRIPES), np.int64))
        self.d_maxima = cuda.to_device(np.full(max(1, self.n_maxima), np.iinfo(np.int64).min,
                                               np.int64))
        self.d_hists = cuda.to_device(np.zeros((max(1, self.n_hists), self.hist_bins), np.int64))
        extra = tuple(cuda.to_device(a) if isinstance(a, np.ndarray) else a
                      for a in self.app.initialize(graph))
        self.g_args = (self.d_indptr, self.d_indices, self.d_labels, self.d_params,
                       self.d_counters, self.d_maxima, self.d_hists, extra)

    def _allocate_queues(self):
        """The work queues Q and R, and the per-warp defer and failure flags."""
        eblocks, ethreads = self.egrid
        self.q = [cuda.device_array(self.qcap, np.int64), cuda.device_array(self.qcap, np.int32),
                  cuda.device_array(self.qcap, np.int32)]
        self.r = [cuda.device_array(self.qcap, np.int64), cuda.device_array(self.qcap, np.int32),
                  cuda.device_array(self.qcap, np.int32)]
        self.d_defer_in = cuda.device_array(2 * self.warps + 1, np.int64)
        self.d_defer_out = cuda.device_array(2 * self.warps + 1, np.int64)
        self.d_wfailed = cuda.device_array(self.warps, np.int32)
        self.d_failed = cuda.device_array(eblocks * ethreads, np.int32)  # generate, extend
        self.d_gen_in = cuda.device_array(self.eta, np.int32)
        self.d_gen_retry = cuda.device_array(self.eta, np.int32)

    def _allocate_subgraph_buffer(self, graph):
        """The device subgraph buffer (what device memory is left, or ``buffer_bytes``),
        its overflow marks and the control block."""
        buffer_bytes = self.options.buffer_bytes
        record_bound = int(graph.max_degree) + 8 if graph.num_vertices else 8
        self._keep_buffer = False
        if self.simulated:
            budget = int(buffer_bytes or 1 << 20)
            pair = _new_buffer(budget)
        else:
            def budget_for(kept_bytes):
                free, _total = cuda.current_context().get_memory_info()
                b = int((free + kept_bytes) * BUFFER_SHARE)
                return min(b, int(buffer_bytes)) if buffer_bytes else b

            self._buffer_key = cuda.get_current_device().id
            pair, budget = _subgraph_buffer(budget_for, self._buffer_key)
            self._keep_buffer = buffer_bytes is None  # only the default, whole-device one
        self.d_vert, self.d_offs = pair
        self.capv, self.capr = pair[0].shape[0], pair[1].shape[0]
        # Room kept free above a level for its children: a new level that
        # crosses the mark goes to H, so at least one child always fits.
        self.reserve_v = max(int(self.capv * (1 - _OVERFLOW)), 2 * record_bound)
        self.reserve_r = max(int(self.capr * (1 - _OVERFLOW)), 2)
        if self.capv < 4 * self.reserve_v or self.capr < 8:
            raise GThinkerError(
                f"GPU subgraph buffer of {budget:,} bytes is too small for this graph "
                f"(a subgraph may need {record_bound:,} vertices, and the buffer must hold "
                f"several); raise the buffer size (buffer_bytes= / --buffer-bytes)"
            )
        self.ctrl = np.zeros(CTRL_SIZE, np.int64)
        self.ctrl[ETA] = self.eta
        self.ctrl[CAPV] = self.capv
        self.ctrl[CAPR] = self.capr
        self.ctrl[QCAP] = self.qcap
        self.d_ctrl = cuda.to_device(self.ctrl)

    def _set_up_stealing(self, cpu_threads):
        """The host stack H and the hybrid mode's GPU-to-CPU stealing
        (H -> S, and unstarted chunk vertices back)."""
        host_limit_bytes = self.options.host_limit_bytes
        if host_limit_bytes is None:
            host_limit_bytes = int(psutil.virtual_memory().available * HOST_LIMIT_SHARE)
        self.H = HostStack(int(host_limit_bytes))
        h = self.hybrid
        self.cpu_threads = int(cpu_threads)
        self.tau_c = self.cpu_threads // 2 if h.tau_c is None else h.tau_c
        self.steal_bound = h.steal_bound
        self.steal_batch = h.steal_batch
        self.give_back = h.give_back
        self.level_steal = h.level_steal
        self.steal_interval = h.steal_interval
        self._steal_at = 0.0
        self._per_cpu = 1  # level steals: subgraphs per idle CPU worker
        self._polls_since_steal = 0
        self._ext = None

    def _initial_stats(self) -> dict:
        return {
            "device": device_status()[1],
            "eta": self.eta,
            "warps": self.warps,
            "buffer_bytes": self.capv * 4 + self.capr * 16,
            "buffer_vertices": self.capv,
            "buffer_records": self.capr,
            "peak_vertices": 0,
            "peak_records": 0,
            "levels": 0,
            "max_depth": 0,
            "launches": 0,
            "retries": 0,
            "deferred": 0,
            "to_host": 0,
            "assignments": 0,
            "initial_vertices": 0,
            "tasks_from_cpu": 0,
            "kernel_seconds": 0.0,
            "busy_seconds": 0.0,
            # graph upload, buffer allocation, app initialize (not in the job's seconds)
            "setup_seconds": time.perf_counter() - self.t0,
            "tasks_to_cpu": 0,
            "steals_to_cpu": 0,
            "vertices_given_back": 0,
            "give_backs": 0,
            "steals_from_cpu": 0,
            "level_steals": 0,
            "starved_polls": 0,  # polls that found CPUs idle and nothing to give them
            "longest_step_seconds": 0.0,
            "level_tasks_to_cpu": 0,
        }

    # ---- the worker loop ---------------------------------------------------------

    def __call__(self, worker) -> None:
        with driving(self.device, worker) as worker:
            self._ext = worker if self.cpu_threads > 0 or self.peers else None
            while (work := worker.wait()) is not None:
                self._assignment(work, worker)
                worker.done()

    def _assignment(self, work, worker) -> None:
        """Runs one assignment of the master to its end."""
        t = time.perf_counter()
        self.stats["assignments"] += 1
        if work.num_tasks:  # CPU-to-GPU stealing: spilled tasks from S, into H
            data, starts = self.app.move_tasks_from_cpu(work.task_data, work.task_starts)
            self.H.push(np.ascontiguousarray(data, np.int32),
                        np.ascontiguousarray(starts, np.int64), movable=False)
            self.stats["tasks_from_cpu"] += work.num_tasks
            self.stats["steals_from_cpu"] += 1
        self.pending = np.ascontiguousarray(work.vertices, np.int32)
        self.stats["initial_vertices"] += len(self.pending)
        self.drain(lambda: worker.aborting)
        end = time.perf_counter()
        self.stats["busy_seconds"] += end - t
        self.timeline.append((t, end))

    def _feed_cpus(self, levels: bool = True) -> None:
        """GPU-to-CPU stealing, checked every few milliseconds while more than
        tau_c CPU workers are idle, or another GPU worker waits for work while S
        is empty (multi-GPU: it takes what lands in S). In this order:

        1. a batch of subgraphs from H to S (if S holds fewer than steal_bound;
           not those that came from S);
        2. half of the chunk's vertices not yet started, back to the master;
        3. unread subgraphs from the device stack, lowest levels first (the
           largest subtrees the GPU holds; at most half of a level's unread
           rest, then the next level up): k per idle CPU worker, where k starts at
           1, doubles when the CPUs are idle again at the next poll (their
           share was too light) and halves after four polls that found them busy.

        ``levels=False`` (inside a step, while the top level is being read)
        leaves the level stack alone.
        """
        ext = self._ext
        now = time.perf_counter()
        if ext is None or now - self._steal_at < self.steal_interval:
            return
        self._steal_at = now
        idle = ext.idle_cpu_workers()
        cpus_hungry = idle > self.tau_c
        idle_gpus = ext.idle_peers() if self.peers and ext.spill_tasks() == 0 else 0
        self._polls_since_steal += 1
        if not cpus_hungry and not idle_gpus:
            if self._polls_since_steal >= 4:
                self._per_cpu = max(1, self._per_cpu // 2)
                self._polls_since_steal = 0
            return
        if self.H.top_movable and ext.spill_tasks() < self.steal_bound:
            data, starts = self.H.pop(self.steal_batch, np.iinfo(np.int64).max)
            data, starts = self.app.move_tasks_to_cpu(data, starts)
            if ext.push_tasks(data, starts):
                self.stats["tasks_to_cpu"] += len(starts) - 1
                self.stats["steals_to_cpu"] += 1
        elif self.give_back and len(self.pending) > 1:
            k = len(self.pending) // 2
            ext.give_back_vertices(self.pending[-k:])  # the back: CPU-friendly end
            self.pending = self.pending[:-k]
            self.stats["vertices_given_back"] += k
            self.stats["give_backs"] += 1
        elif levels and self.level_steal and ext.spill_tasks() < self.steal_bound:
            if self._polls_since_steal == 1:
                self._per_cpu = min(2 * self._per_cpu, self.steal_batch)
            self._polls_since_steal = 0
            # An idle GPU gets as much as a level may give (half of its unread rest).
            want = (idle * self._per_cpu if cpus_hungry else 0) + idle_gpus * self.steal_batch
            if not self._steal_from_levels(max(1, min(want, self.steal_batch))):
                self.stats["starved_polls"] += 1
        else:
            self.stats["starved_polls"] += 1

    def _steal_from_levels(self, want: int) -> bool:
        """Moves up to ``want`` unread records to S, from the end of each level
        with unread records, lowest level first (at most half of a level's
        unread rest), until ``want`` are found. A level just ends earlier: the
        records' space stays dead until it is popped. Runs between launches,
        so no kernel reads the levels meanwhile."""
        taken = []
        for level in self.stack:
            unread = level.rec_hi - level.head
            if unread <= 0:
                continue
            m = min(want, (unread + 1) // 2)
            lo = level.rec_hi - m
            offs = self.d_offs[lo : level.rec_hi].copy_to_host()
            v_lo, v_hi = int(offs[:, 0].min()), int(offs[:, 1].max())
            taken.append((level, lo, *_gather(offs, self.d_vert[v_lo:v_hi].copy_to_host(), v_lo)))
            want -= m
            if want <= 0:
                break
        if not taken:
            return False
        data = np.concatenate([t[2] for t in taken])
        starts = np.zeros(sum(len(t[3]) - 1 for t in taken) + 1, np.int64)
        k = 0
        for t in taken:
            n = len(t[3]) - 1
            starts[k + 1 : k + n + 1] = t[3][1:] + starts[k]
            k += n
        m = len(starts) - 1
        data, starts = self.app.move_tasks_to_cpu(data, starts)
        if not self._ext.push_tasks(data, starts):
            return False
        for level, lo, _, _ in taken:
            level.rec_hi = lo
        self.stats["tasks_to_cpu"] += m
        self.stats["level_tasks_to_cpu"] += m
        self.stats["steals_to_cpu"] += 1
        self.stats["level_steals"] += 1
        return True

    def drain(self, aborting=lambda: False) -> None:
        """Runs until the level stack, H and the pending vertices are empty, or
        ``aborting()`` (looked at between launches and while one runs: it sets the stop
        flag, and the kernel leaves)."""
        self._aborting = aborting
        while not aborting():
            self._feed_cpus()
            if not self.stack:
                if len(self.H):
                    self._level_from_host()
                elif len(self.pending):
                    self._generate()
                else:
                    return
                continue
            t = time.perf_counter()
            self._step()
            self.stats["longest_step_seconds"] = max(self.stats["longest_step_seconds"],
                                                     time.perf_counter() - t)

    # ---- kernels -----------------------------------------------------------------

    def _launch(self, kernel, grid, *args):
        t = time.perf_counter()
        if self.simulated:
            with fast_switching():
                kernel[grid](*self.g_args, *args)
        else:
            kernel[grid](*self.g_args, *args)
        self.stats["launches"] += 1
        self.stats["kernel_seconds"] += time.perf_counter() - t

    def _sync_ctrl(self):
        t = time.perf_counter()
        self.stop.wait(kernels_done(), self._aborting)
        self.d_ctrl.copy_to_host(self.ctrl)
        self.stats["kernel_seconds"] += time.perf_counter() - t
        self.stats["peak_vertices"] = max(self.stats["peak_vertices"],
                                          min(int(self.ctrl[VTAIL]), self.capv))
        self.stats["peak_records"] = max(self.stats["peak_records"],
                                         min(int(self.ctrl[OTAIL]), self.capr))
        if t - self._live_at > 1.0:  # counters for progress lines, about once a second
            self._live_at = t
            self.live_counters = self.d_counters.copy_to_host().sum(axis=1)[: self.n_counters]

    def _generate(self):
        c = self.ctrl
        batch = self.pending[: self.eta]
        self.pending = self.pending[len(batch):]
        self.d_gen_in[: len(batch)].copy_to_device(batch)
        lo, v_lo = self.otail, self.vtail
        c[OTAIL], c[VTAIL], c[NRETRY] = lo, v_lo, 0
        # Level 1 takes at most half of the free space: its children need room.
        c[CAPV] = v_lo + (self.capv - v_lo) // 2
        c[CAPR] = lo + (self.capr - lo) // 2
        self.d_ctrl.copy_to_device(c)
        self._launch(self.kern.generate, self.egrid, self.d_gen_in, len(batch),
                     self.d_vert, self.d_offs, self.d_ctrl, self.d_failed, self.d_gen_retry)
        self._sync_ctrl()
        c[CAPV], c[CAPR] = self.capv, self.capr
        hi = min(int(c[OTAIL]), lo + (self.capr - lo) // 2)
        v_hi = min(int(c[VTAIL]), v_lo + (self.capv - v_lo) // 2)
        if c[NRETRY]:
            self.stats["retries"] += int(c[NRETRY])
            if hi == lo:
                raise GThinkerError("GPU subgraph buffer too small for one initial subgraph; "
                                    "raise the buffer size")
            retry = self.d_gen_retry[: int(c[NRETRY])].copy_to_host()
            self.pending = np.concatenate([retry, self.pending])
        self._push_level(lo, hi, v_lo, v_hi)

    def _push_level(self, lo, hi, v_lo, v_hi):
        """Makes records [lo, hi) the new top level, or sends them to H when the
        buffer has passed its overflow mark."""
        if hi <= lo:
            self.otail, self.vtail = lo, v_lo
            return
        if self.stack and (hi > self.capr - self.reserve_r or v_hi > self.capv - self.reserve_v):
            self._to_host(lo, hi, v_lo, v_hi)
            self.otail, self.vtail = lo, v_lo
            return
        self.stack.append(_Level(lo, hi, lo, v_lo))
        self.otail, self.vtail = hi, v_hi
        self.stats["max_depth"] = max(self.stats["max_depth"], len(self.stack))

    def _to_host(self, lo, hi, v_lo, v_hi):
        offs = self.d_offs[lo:hi].copy_to_host()
        verts = self.d_vert[v_lo:v_hi].copy_to_host()
        self.H.push(*_gather(offs, verts, v_lo))
        self.stats["to_host"] += 1

    def _level_from_host(self):
        data, starts = self.H.pop(max(1, min(self.eta, (self.capr - self.otail) // 2)),
                                  (self.capv - self.vtail) // 2)
        m = len(starts) - 1
        lo, v_lo = self.otail, self.vtail
        if v_lo + len(data) > self.capv or lo + m > self.capr:
            raise GThinkerError("GPU subgraph buffer too small for a subgraph from the host "
                                "stack; raise the buffer size")
        if len(data):
            self.d_vert[v_lo : v_lo + len(data)].copy_to_device(np.ascontiguousarray(data))
        offs = np.empty((m, 2), np.int64)
        offs[:, 0] = v_lo + starts[:-1]
        offs[:, 1] = v_lo + starts[1:]
        self.d_offs[lo : lo + m].copy_to_device(offs)
        self.stack.append(_Level(lo, lo + m, lo, v_lo))
        self.otail, self.vtail = lo + m, v_lo + len(data)
        self.stats["max_depth"] = max(self.stats["max_depth"], len(self.stack))

    def _step(self):
        top = self.stack[-1]
        if top.head >= top.rec_hi and self.ndefer == 0:  # backtrack
            self.stack.pop()
            self.otail, self.vtail = top.rec_lo, top.v_lo
            return
        self.app.init_level(len(self.stack))
        self.stats["levels"] += 1
        c = self.ctrl
        lo, v_lo = self.otail, self.vtail
        c[OHEAD], c[LEVEL_END] = top.head, top.rec_hi
        c[OTAIL], c[VTAIL] = lo, v_lo
        c[QTAIL] = c[NDEFER_OUT] = c[NRETRY] = c[QVOL] = c[QOK] = 0
        c[NDEFER_IN] = self.ndefer
        # A level takes at most eta entries, and no more subgraphs than their
        # children (each at most its parent's size + 1) can fill half the free space.
        c[ETA] = max(1, min(self.eta, (self.capr - lo - self.reserve_r) // 2))
        c[VOL_LIMIT] = max(1, (self.capv - v_lo - self.reserve_v) // 2)
        self.d_ctrl.copy_to_device(c)
        self._launch(self.kern.process, self.pgrid, self.d_vert, self.d_offs, self.d_ctrl,
                     *self.q, self.d_defer_in, self.d_defer_out, self.d_wfailed, self.d_stop)
        self._launch(self.kern.extend, self.egrid, self.d_vert, self.d_offs, self.d_ctrl,
                     *self.q, self.d_failed, *self.r, self.d_stop)
        self._sync_ctrl()
        queued = int(min(c[QTAIL], self.qcap))
        while c[NRETRY]:
            # The buffer is full: the new level so far goes to H, and the entries
            # whose append failed run again in the freed space.
            self.stats["retries"] += int(c[NRETRY])
            hi = min(int(c[OTAIL]), self.capr)
            if hi == lo:
                raise GThinkerError("GPU subgraph buffer too small: the current level leaves "
                                    "no room for one new subgraph; raise the buffer size")
            self._to_host(lo, hi, v_lo, min(int(c[VTAIL]), self.capv))
            self._feed_cpus(levels=False)  # retries can take long: H -> S meanwhile
            self.q, self.r = self.r, self.q
            c[QTAIL], c[NRETRY] = c[NRETRY], 0
            c[OTAIL], c[VTAIL] = lo, v_lo
            self.d_ctrl.copy_to_device(c)
            self._launch(self.kern.extend, self.egrid, self.d_vert, self.d_offs, self.d_ctrl,
                         *self.q, self.d_failed, *self.r, self.d_stop)
            self._sync_ctrl()
        n_in, n_out = int(c[NDEFER_IN]), int(c[NDEFER_OUT])
        if n_out:
            self.d_defer_in[n_in : n_in + n_out].copy_to_device(self.d_defer_out[:n_out])
            self.stats["deferred"] += n_out
        self.ndefer = n_in + n_out
        top.head = int(min(c[OHEAD], top.rec_hi))
        hi = min(int(c[OTAIL]), self.capr)
        if queued and not c[QOK]:
            # Even the push that found Q empty failed: it needs more than Q holds.
            raise GThinkerError(
                f"GPU work queue too small: one subgraph pushed more than its {self.qcap:,} "
                f"entries; set max_fanout on {type(self.app).__qualname__} (or fanout=, "
                "--fanout) to the most entries one process call pushes")
        self._push_level(lo, hi, v_lo, min(int(c[VTAIL]), self.capv))

    # ---- results -----------------------------------------------------------------

    def close(self) -> None:
        """Called once the job is over: keeps the device subgraph buffer for the
        next job in this process (see :func:`release_buffers`)."""
        if self._keep_buffer and self._buffer_key not in _kept:
            _kept[self._buffer_key] = (self.d_vert, self.d_offs)
        self._keep_buffer = False

    def results(self) -> EngineResults:
        with on_device(self.device):
            counters = self.d_counters.copy_to_host().sum(axis=1)[: self.n_counters]
            maxima = self.d_maxima.copy_to_host()[: self.n_maxima]
            hists = self.d_hists.copy_to_host()[: self.n_hists]
        return EngineResults(counters, maxima, list(hists))

    def snapshot(self) -> dict:
        s = dict(self.stats)
        s["host_stack_records"] = len(self.H)
        s["host_stack_peak_records"] = self.H.peak_records
        s["host_stack_peak_bytes"] = self.H.peak_bytes
        s["host_stack_pushes"] = self.H.pushes
        s["host_stack_pops"] = self.H.pops
        s["depth"] = len(self.stack)
        return s
