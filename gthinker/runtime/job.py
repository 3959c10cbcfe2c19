"""Running a Task over a graph: :func:`run` and its :class:`JobResult`."""

from __future__ import annotations

import errno
import functools
import os
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from gthinker import _core, compiler, memory, stopping
from gthinker.errors import SpillLimitError, TaskRuntimeError
from gthinker.graphs.graph import as_graph
from gthinker.options import (
    MAX_THREADS,
    MODES,
    SPILL_LIMIT_SHARE,
    GPUOptions,
    HybridOptions,
    RunOptions,
    available_cores,
    positive_int,
)
from gthinker.runtime import outputs
from gthinker.runtime.task import CODES, SPAWN_PHASE, Task
from gthinker.stopping import StopToken

__all__ = ["run", "Job", "JobResult", "RunOptions", "StopToken", "default_threads", "MODES",
           "ExternalWorker", "Assignment", "MAX_THREADS", "idle_stats", "positive_int"]


stopping.install()  # Ctrl-C also stops jobs that run in other threads

_USER_ERRORS = {
    CODES["SPAWN_RAISED"]: ("spawn", "raised an exception"),
    CODES["COMPUTE_RAISED"]: ("compute", "raised an exception"),
    CODES["HISTOGRAM_INDEX"]: ("compute", "called add_to_histogram with a row or bin out of range"),
    CODES["COUNTER_INDEX"]: ("compute", "called count with a counter index out of range"),
    CODES["MAXIMUM_INDEX"]: ("compute", "called update_max with an index out of range"),
    CODES["EMIT_INDEX"]: ("compute", "called emit with a vertex id outside the graph"),
    CODES["EMPTY_RECORD"]: ("compute", "called add_task with an empty record (a record needs "
                                       "at least one int32)"),
}


def default_threads() -> int:
    """CPU cores this process may run on (the default number of CPU worker threads)."""
    return available_cores()


def idle_stats() -> dict:
    """The stats of a job that had nothing to do: every key a job's ``stats`` has
    (``_core.Job.stats()``), all zero but ``host_peak_bytes``. Results that run no job
    (a trivial count, a graph without vertices) carry these, so that an app's results
    have the same keys whatever the graph."""
    return {"tasks_spawned": 0, "tasks_decomposed": 0, "records_computed": 0,
            "spill_peak_bytes": 0, "spill_peak_tasks": 0, "spill_limit_bytes": 0,
            "tasks_taken": 0, "vertices_taken": 0, "workers": [],
            "host_peak_bytes": memory.peak_rss_bytes()}


#: What ``output`` may hold, by the C++ writer's number for each.
OUTPUT_FORMATS = ("text", "binary")


@dataclass
class JobResult:
    """Merged results of one job.

    ``counters``, ``maxima`` and ``histograms`` map the names a Task declared
    to their values (a maximum never updated is ``None``); ``stats`` has the
    runtime's figures (tasks spawned, decomposed, spill stack peak, per worker
    busy/idle time, the process's peak resident memory ``host_peak_bytes``).
    """

    counters: dict[str, int]
    maxima: dict[str, int | None]
    histograms: dict[str, np.ndarray]
    stats: dict
    seconds: float
    threads: int
    mode: str = "cpu"
    #: ``"limit"`` when the job stopped because ``ctx.take`` handed out its
    #: last result (see ``limit``); ``"stop"`` when its ``stop`` token was set;
    #: None when it ran to the end.
    stopped: str | None = None
    #: Seconds spent compiling for this job (0 when all came from the compile
    #: cache); not part of ``seconds``, which is the work.
    compile_seconds: float = 0.0

    def to_dict(self) -> dict:
        """The result as plain JSON values (what ``--json`` prints for an app whose
        request returns it): the named results (histograms as lists), ``seconds``,
        ``compile_seconds``, ``threads``, ``mode`` and ``stopped``; ``stats`` left out."""
        return {"counters": {k: int(v) for k, v in self.counters.items()},
                "maxima": {k: None if v is None else int(v) for k, v in self.maxima.items()},
                "histograms": {k: np.asarray(h).tolist() for k, h in self.histograms.items()},
                "seconds": self.seconds, "compile_seconds": self.compile_seconds,
                "threads": self.threads, "mode": self.mode, "stopped": self.stopped}


class Assignment(NamedTuple):
    """Work the master handed to an external worker: initial ``vertices`` (a chunk
    from the front of the deque) and/or spilled task records, record ``k`` being
    ``task_data[task_starts[k]:task_starts[k + 1]]``."""

    vertices: np.ndarray
    task_data: np.ndarray
    task_starts: np.ndarray

    @property
    def num_tasks(self) -> int:
        return len(self.task_starts) - 1

    def task(self, k: int) -> np.ndarray:
        return self.task_data[self.task_starts[k] : self.task_starts[k + 1]]


class ExternalWorker:
    """A worker of the master that runs outside the C++ pool, on a Python thread.

    This is how the GPU worker joins a job (it launches kernels from Python):
    it is one more worker in the master's queue W, served chunks from the
    *front* of the vertex deque (``gpu_chunk`` vertices) and, once the deque
    is empty, batches of spilled tasks from S (``gpu_task_batch``). The loop::

        while (work := worker.wait()) is not None:
            ...process work.vertices and work.task(k)...
            worker.done()

    ``wait`` releases the GIL while it blocks. ``push_tasks`` moves records
    onto S for the CPU workers.
    """

    def __init__(self, job, slot: int, peers: list | None = None):
        self._job = job
        self.slot = slot
        self._busy = False
        self._waiting = False
        # The job's external workers (this one included), to see which wait.
        self._peers = [self] if peers is None else peers

    def wait(self) -> Assignment | None:
        """Next assignment, or None once the job is over."""
        self._waiting = True
        try:
            got = self._job.external_wait(self.slot)
        finally:
            self._waiting = False
        if got is None:
            return None
        self._busy = True
        return Assignment(*got)

    def done(self) -> None:
        """Reports the current assignment finished (the worker goes back into W)."""
        if self._busy:
            self._busy = False
            self._job.external_done(self.slot)

    def push_tasks(self, task_data, task_starts) -> bool:
        """Pushes records onto S; False if the job is stopping or S is full."""
        return self._job.push_tasks(
            np.ascontiguousarray(task_data, np.int32), np.ascontiguousarray(task_starts, np.int64)
        )

    def idle_cpu_workers(self) -> int:
        return self._job.idle_cpu_workers()

    def idle_peers(self) -> int:
        """The job's other external workers (the other GPUs) that wait for work
        now: work pushed onto S while the vertex deque is empty goes to them."""
        return sum(p._waiting for p in self._peers if p is not self)

    def spill_tasks(self) -> int:
        """Tasks in S now (read without the master lock)."""
        return self._job.spill_tasks()

    def unstarted_vertices(self) -> int:
        """Initial vertices no worker has started yet (in the deque or handed back)."""
        return int(self._job.unstarted_vertices())

    def give_back_vertices(self, vertices) -> None:
        """Hands unstarted initial vertices back to the master; CPU workers take
        them after S and before the back of the deque."""
        self._job.return_vertices(np.ascontiguousarray(vertices, np.int32))

    @property
    def aborting(self) -> bool:
        """True once the job is stopping (error or Ctrl-C): finish up quickly."""
        return self._job.aborting()


def _drive_external(job, worker, fn, errors):
    try:
        fn(worker)
    except BaseException as exc:  # noqa: BLE001 - re-raised by run()
        errors.append(exc)
        job.external_fail(f"external worker {getattr(fn, '__name__', fn)!s} failed: {exc!r}")
    finally:
        # Whatever happened, leave the slot idle and keep answering the master,
        # so that the job can end instead of waiting for this worker forever.
        worker.done()
        while worker.wait() is not None:
            worker.done()


def _record_arrays(records):
    """Initial task records as (data int32, starts int64), or raises ValueError."""
    int32 = np.iinfo(np.int32)

    def as_int32(a, what):
        a = np.asarray(a)
        if a.ndim != 1:
            raise ValueError(f"records: {what} must be 1-d, got shape {a.shape}")
        if a.size and a.dtype.kind not in "iu":
            raise ValueError(f"records: {what} must hold integers, got dtype {a.dtype}")
        if a.size and (a.min() < int32.min or a.max() > int32.max):
            raise ValueError(f"records: {what} has values outside the int32 range")
        return np.ascontiguousarray(a, np.int32)

    if isinstance(records, tuple):
        if len(records) != 2:
            raise ValueError("records as a tuple must be (data, starts); pass a list for a "
                             "sequence of records")
        data = as_int32(records[0], "data")
        starts = np.asarray(records[1])
        if starts.ndim != 1 or starts.size < 1 or starts.dtype.kind not in "iu":
            raise ValueError("records: starts must be a 1-d integer array of length k + 1")
        starts = np.ascontiguousarray(starts, np.int64)
        if starts[0] < 0 or starts[-1] > data.size or np.any(np.diff(starts) <= 0):
            raise ValueError(f"records: starts must increase strictly (every record non-empty) "
                             f"within 0..len(data)={data.size}")
        return data, starts
    if isinstance(records, np.ndarray) or not isinstance(records, Sequence):
        raise ValueError("records must be a list of 1-d int arrays or a tuple (data, starts), "
                         f"got {type(records).__name__}")
    parts = [as_int32(r, f"record {i}") for i, r in enumerate(records)]
    for i, r in enumerate(parts):
        if r.size == 0:
            raise ValueError(f"records: record {i} is empty")
    starts = np.zeros(len(parts) + 1, np.int64)
    np.cumsum([r.size for r in parts], out=starts[1:])
    data = np.concatenate(parts) if parts else np.empty(0, np.int32)
    return data, starts


def run(
    task: type[Task] | None,
    graph,
    *,
    mode: str = "cpu",
    gpu=None,
    options: RunOptions | None = None,
    vertices: Sequence[int] | np.ndarray | None = None,
    records: Sequence[Sequence[int] | np.ndarray] | tuple[np.ndarray, np.ndarray] | None = None,
    params: Sequence[int] = (),
    histogram_bins: int | None = None,
    output: str | os.PathLike | None = None,
    output_format: str = "text",
    limit: int | None = None,
    progress: Callable[[dict], None] | None = None,
    external: Sequence[Callable[[ExternalWorker], None]] = (),
    trace: str | os.PathLike | None = None,
    stop: StopToken | None = None,
    gpu_options: dict | GPUOptions | HybridOptions | None = None,
    **option_keywords,
) -> JobResult:
    """Runs ``task`` over ``graph`` on ``threads`` CPU workers and returns the merged results.

    Parameters
    ----------
    task : Task subclass, or None
        The application's CPU side (None is allowed in ``mode="gpu"``).
    graph : gthinker.Graph, or anything :func:`gthinker.as_graph` accepts
    mode : {"cpu", "gpu", "hybrid"}
        Where to run: the CPU worker pool, the GPU worker alone, or both
        (G-ThinkerCG's co-processing, with stealing both ways).
    gpu : GPUContext subclass or GPU engine class, optional
        The application's GPU side (required in gpu and hybrid modes): a
        :class:`gthinker.GPUContext` app (run level by level by the GPU worker) or a
        :class:`gthinker.gpu.engine.GPUEngine` subclass; one runs on each device of
        ``gpus``. It declares the same counters, maxima and histograms as ``task``.
    options : RunOptions, optional
        How the master schedules the job: ``threads`` (default: every core this
        process may use; 0 in gpu mode, and allowed beside an ``external``
        worker), ``time_budget``, ``early_split``, ``gpu_idle_split``,
        ``cpu_chunk``, ``cpu_task_batch``, ``flush_batch``,
        ``timeout_check_interval``, ``spill_limit``, ``progress_interval``,
        and the GPU worker's (``options.gpu``: :class:`GPUOptions`) and
        stealing (``options.hybrid``: :class:`HybridOptions`) options. Each
        field, its default and its rule is described in
        :mod:`gthinker.options`.
    **option_keywords
        The same options as keywords, by field name (``time_budget=0.5``,
        ``gpu_chunk=1024``, ``tau_c=2``); they override ``options``.
    gpu_options : dict, GPUOptions or HybridOptions, optional
        The GPU worker's and stealing options as one dict (the older form of
        the keywords above: ``eta_per_warp``, ``buffer_bytes``,
        ``host_limit_bytes``, ``blocks``, ``threads_per_block``, ``fanout``,
        ``tau_c``, ``steal_bound``, ``steal_batch``, ``give_back``,
        ``level_steal``, ``steal_interval``).
    vertices : array of int, optional
        Initial vertices in deque order; default all vertices, 0..n-1
        (``[]`` for none, e.g. a job of ``records`` only).
    records : list of 1-d int arrays, or tuple ``(data, starts)``, optional
        Initial task records, instead of or besides the vertices: each is
        pushed onto the spill stack S before the workers start and computed
        by ``compute(ctx, record)`` like a decomposed task (S is served before
        the vertex deque; in gpu/hybrid modes the GPU worker takes from S
        too). Either a list (any non-tuple sequence) of records, or the flat
        form ``(data, starts)``: int32 ``data`` and int64 ``starts`` of length
        k + 1, record i being ``data[starts[i]:starts[i + 1]]``. Records must
        be 1-d, non-empty and fit in int32 (else ValueError); they count in
        ``stats["records_computed"]`` and the spill peak, and must fit in
        ``spill_limit`` (else :class:`SpillLimitError`).
    params : sequence of int
        Per-run parameters, seen by compiled code as ``ctx.params``.
    histogram_bins : int, optional
        Bins of each histogram; default max degree + 2.
    output : path, optional
        File that ``ctx.emit`` writes results to.
    output_format : {"text", "binary"}
        ``"text"``: a line per result, its original ids separated by spaces;
        ``"binary"``: a record per result, its length then its original ids, int64 each
        (what :func:`gthinker.runtime.stream.batches` reads from a pipe while the job runs).
    limit : int, optional
        Stop the job once ``ctx.take(n)`` calls have handed out this many
        results (e.g. ``--limit N`` matches): each call gets at most what is
        left, the one that takes the last stops every worker, and the result
        says ``stopped="limit"``. CPU workers only (cpu mode). Without a
        limit, ``ctx.take(n)`` returns ``n``.
    progress : callable, optional
        Called with a snapshot dict every ``progress_interval`` seconds.
    stop : StopToken, optional
        Stops the job cleanly once ``stop.set()`` is called (from another
        thread; or before the run, which then stops at once): like ``limit``,
        every worker ends its current task soon (``ctx.timed_out()`` turns
        true), records decomposed from then on are dropped, and the results
        so far are returned with ``stopped="stop"`` (no exception).
    trace : path, optional
        Write a PNG timeline (CPU workers busy, GPU busy, S and H sizes,
        steals) sampled every 0.1 s; needs matplotlib.
    external : sequence of callables
        Workers outside the CPU pool (the GPU worker): each ``fn(worker)`` runs
        on its own thread with an :class:`ExternalWorker` handle, served
        ``gpu_chunk`` vertices and ``gpu_task_batch`` records per assignment.
        One with a ``timeline`` attribute (a list of ``(start, end)``
        ``time.perf_counter`` pairs, its device's busy intervals) gets a busy
        band in the ``trace``.
    """
    sigints_before = stopping.sigints()  # a Ctrl-C from here on (compiling, say) stops the job
    options = RunOptions.from_keywords(options, gpu_options, **option_keywords)
    job = Job(task, graph, mode=mode, gpu=gpu, options=options, vertices=vertices,
              records=records, params=params, histogram_bins=histogram_bins, output=output,
              output_format=output_format, limit=limit, progress=progress, external=external,
              trace=trace, stop=stop)
    return job.run(sigints_before)


class Job:
    """One job: a task over a graph on the master's workers, from set-up to results.

    :func:`run` is ``Job(...).run()``. The steps, each a method:

    1. ``__init__``: check the task's sides and the mode (:meth:`_check_sides`),
       resolve the options against the job (:meth:`_resolve_options`) and
       prepare its inputs (:meth:`_prepare_inputs`); nothing is started.
    2. :meth:`run`: start the GPU workers (:meth:`_start_gpu_workers`), the trace
       and progress ticker (:meth:`_tick`), build the C++ job (:meth:`_core_job`),
       run the external workers' threads (:meth:`_start_external`) and the
       master under the Ctrl-C watch, and always stop and join them.
    3. :meth:`_finish`: raise what failed, write the trace, merge the CPU and
       GPU results into a :class:`JobResult` (:meth:`_result`).
    """

    def __init__(self, task, graph, *, mode="cpu", gpu=None, options=None, vertices=None,
                 records=None, params=(), histogram_bins=None, output=None,
                 output_format="text", limit=None, progress=None, external=(), trace=None,
                 stop=None):
        self.task, self.gpu, self.mode = task, gpu, mode
        if output_format not in OUTPUT_FORMATS:
            raise ValueError(f"output_format must be one of {', '.join(OUTPUT_FORMATS)}, "
                             f"got {output_format!r}")
        self.output_format = output_format
        self.options = RunOptions() if options is None else options
        self.external = list(external)
        self.output, self.progress, self.trace, self.stop = output, progress, trace, stop
        self.engine = None  # the GPU engine class (gpu and hybrid modes)
        self.names_from = self._check_sides()
        self._resolve_options(limit)
        outputs.check_output(output, [graph])  # before a graph file is read
        self.record_arrays = _record_arrays(records) if records is not None else None
        self._prepare_inputs(graph, vertices, params, histogram_bins)
        self.gpu_workers: list = []  # one GPU engine per device (gpu and hybrid modes)
        self.devices: list[int] = []
        #: The job's StopFlag (gpu and hybrid modes): its kernels leave when it is set.
        self.stop_flag = None
        #: Ends of the GPU workers' chunks in :attr:`init` (several GPUs; see _share_roots).
        self.gpu_cuts = np.zeros(0, np.int64)
        self.tracer = None
        self.out = None  # the output file while the job runs (outputs.Output)

    # ---- set-up ---------------------------------------------------------------------

    def _check_sides(self):
        """Checks the mode and the app's CPU and GPU sides; returns the side that
        names the results (finding the GPU first in gpu and hybrid modes)."""
        task, gpu, mode = self.task, self.gpu, self.mode
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
        if task is not None and (not (isinstance(task, type) and issubclass(task, Task))
                                 or task is Task):
            raise TypeError(f"task must be a subclass of gthinker.Task, got {task!r}")
        if mode == "cpu":
            if task is None:
                raise TypeError("task is required in mode='cpu'")
            return task
        from gthinker.gpu import require_device

        self.engine = _engine_of(gpu, mode)
        ignored = [] if self.engine.worker_options else self.options.worker_settings()
        if ignored:
            raise ValueError(
                f"{', '.join(ignored)}: options of the GPU worker (the level-by-level engine of "
                f"GPUContext apps), which the {self.engine.name} engine does not take")
        if mode == "hybrid" and task is None:
            raise TypeError("mode='hybrid' needs the CPU task too")
        if task is not None:
            for what in ("counters", "maxima", "histograms"):
                if getattr(task, what) != getattr(self.engine, what):
                    raise TypeError(f"{task.__qualname__}.{what} and {gpu.__qualname__}.{what} "
                                    "differ; the CPU and GPU sides must declare the same results")
        require_device()
        return self.engine

    def _resolve_options(self, limit):
        """The thread count, spill limit and result limit this job runs with."""
        threads = self.options.threads
        if self.mode == "gpu":
            threads = 0
        elif threads is None:
            threads = default_threads()
        elif not (self.external or self.mode != "cpu") or threads != 0:
            threads = positive_int("threads", threads, MAX_THREADS)  # 0 needs an external worker
        self.threads = threads
        if limit is not None:
            limit = positive_int("limit", limit)
            if self.mode != "cpu":
                raise ValueError(f"limit runs on the CPU workers only (mode='cpu'), "
                                 f"not in {self.mode!r}")
        self.limit = limit
        if self.stop is not None and not isinstance(self.stop, StopToken):
            raise TypeError(f"stop must be a gthinker.StopToken, got {self.stop!r}")

    def _prepare_inputs(self, graph, vertices, params, histogram_bins):
        """The graph, the initial vertices, the params and the histogram width."""
        self.graph = graph = as_graph(graph)
        self.compiled_before = compiler.compile_seconds()
        n = graph.num_vertices
        #: The initial vertices: a range where they were given as one (or not given: all
        #: of them), else an int32 array; :attr:`init` is the array the master takes.
        if vertices is None:
            self.roots = range(n)
        elif isinstance(vertices, range):
            ends = sorted((vertices[0], vertices[-1])) if len(vertices) else (0, 0)
            if len(vertices) and (ends[0] < 0 or ends[1] >= n):
                raise ValueError(f"vertices must be vertex indices in [0, {n}), got {vertices}")
            self.roots = vertices
        else:
            init = np.ascontiguousarray(vertices, dtype=np.int64)
            if init.ndim != 1 or (init.size and (init.min() < 0 or init.max() >= n)):
                raise ValueError(f"vertices must be a 1-d array of vertex indices in [0, {n})")
            self.roots = init.astype(np.int32)
        self.params = np.ascontiguousarray(params, dtype=np.int64).ravel()
        if histogram_bins is None:
            histogram_bins = int(graph.max_degree) + 2 if n else 2
        self.histogram_bins = positive_int("histogram_bins", histogram_bins)

    @functools.cached_property
    def init(self) -> np.ndarray:
        """The initial vertices in deque order (int32), as the master takes them."""
        r = self.roots
        return np.arange(r.start, r.stop, r.step, dtype=np.int32) if isinstance(r, range) else r

    @functools.cached_property
    def spill_limit(self) -> int:
        """Bytes the spill stack S may hold: ``options.spill_limit``, or half the memory
        available when the job starts."""
        limit = self.options.spill_limit
        return positive_int("spill_limit", int(memory.available_bytes() * SPILL_LIMIT_SHARE)
                            if limit is None else limit)

    def _start_gpu_workers(self):
        """The GPU engines (gpu and hybrid modes), one per device of ``options.gpu.gpus``,
        made on their devices, as the first external workers, and the tracer that
        samples them."""
        if self.mode in ("gpu", "hybrid"):
            from gthinker.gpu import on_device, simulator

            if self.engine.one_per_device:  # an engine that holds its device: once each
                self.devices = list(dict.fromkeys(self.devices))

            def start(device):
                with on_device(device):
                    return self.engine(self.graph, self._engine_setup(device))

            if len(self.devices) == 1 or simulator.enabled():  # the simulator: one at a time
                self.gpu_workers = [start(d) for d in self.devices]
            else:  # each device uploads its copy of the graph at the same time
                with ThreadPoolExecutor(len(self.devices), "gthinker-gpu-setup") as pool:
                    self.gpu_workers = list(pool.map(start, self.devices))
            self.external[:0] = self.gpu_workers
        if self.trace is not None:
            from gthinker.runtime.trace import Tracer

            # The GPU workers, and external workers that keep a timeline (an app's own
            # GPU engine): a busy band each.
            self.tracer = Tracer(self.threads,
                                 [w for w in self.external if hasattr(w, "timeline")])

    def _share_roots(self):
        """With several GPUs: the roots in the order and the GPUs' chunks the engine
        shares them in (:meth:`GPUEngine.share_roots
        <gthinker.gpu.engine.GPUEngine.share_roots>`: by estimated cost, so that the heavy
        roots spread over every GPU; each GPU takes the next chunk from the master's deque
        as it finishes one)."""
        if len(self.devices) < 2 or not len(self.init):
            return
        shared = self.engine.share_roots(self.graph, self.init, len(self.devices), self.mode)
        if shared is not None:
            self.init, self.gpu_cuts = shared

    def _engine_setup(self, device):
        from gthinker.gpu.engine import EngineSetup

        return EngineSetup(params=self.params, histogram_bins=self.histogram_bins,
                           cpu_threads=self.threads, options=self.options, device=device,
                           peers=len(self.devices) - 1, stop=self.stop_flag)


    def _config(self):
        """The C++ master's settings (``_core.JobConfig``): each field by its name, from
        the options (where every default and rule is written once) as this job resolves
        them, or from the job itself."""
        o, names_from = self.options, self.names_from
        values = {
            "threads": self.threads,
            "external_workers": len(self.external),
            "time_budget": o.time_budget,
            "early_split": o.early_split_seconds,
            "gpu_idle_split": o.gpu_idle_split_seconds,
            "cpu_chunk": o.cpu_chunk,
            "cpu_task_batch": o.cpu_task_batch,
            "flush_batch": o.flush_batch,
            "spill_limit": self.spill_limit,
            "timeout_check_interval": o.timeout_check_interval,
            "gpu_chunk": o.gpu.chunk_for(len(self.init), len(self.external),
                                         guided=len(self.gpu_cuts) > 0),
            "gpu_cuts": self.gpu_cuts.tolist(),
            "gpu_task_batch": o.gpu.gpu_task_batch,
            "n_counters": len(names_from.counters),
            "n_maxima": len(names_from.maxima),
            "hist_rows": len(names_from.histograms),
            "hist_bins": self.histogram_bins if names_from.histograms else 0,
            "params": self.params.tolist(),
            "output": self.out.writer_path if self.out is not None else "",
            "output_format": OUTPUT_FORMATS.index(self.output_format),
            "limit": -1 if self.limit is None else self.limit,
        }
        config = _core.JobConfig()
        fields = {name for name in dir(config) if not name.startswith("_")}
        if fields != set(values):  # a field added on one side only
            raise AssertionError(f"JobConfig fields and the job's settings differ: "
                                 f"{sorted(fields ^ set(values))}")
        for name, value in values.items():
            setattr(config, name, value)
        return config

    def _core_job(self):
        """The C++ job (compiling the task's entry point if it is not cached yet)."""
        g = self.graph
        runs_task = self.task is not None and self.threads
        entry_address = self.task.compiled().address if runs_task else 0
        try:
            return _core.Master(g.indptr, g.indices, g.labels, g.ids, self.init, entry_address,
                             self._config())
        except RuntimeError as exc:  # e.g. the output file cannot be opened
            message = str(exc)
            if self.out is not None:
                message = message.replace(self.out.writer_path, os.fspath(self.output))
            raise OSError(message) from None

    # ---- running ----------------------------------------------------------------------

    def _tick(self):
        """The master's tick callback and its interval: adds the GPU worker's figures
        and live counters to each snapshot, samples the trace, and calls
        ``progress`` when it is due."""
        progress, interval = self.progress, self.options.progress_interval
        if not self.gpu_workers and self.tracer is None:
            return progress, interval
        due = [interval]

        def on_tick(snap):
            self._with_gpu(snap)
            if self.tracer is not None:
                self.tracer.sample(snap)
            if progress is not None and snap["elapsed"] >= due[0]:
                due[0] = snap["elapsed"] + interval
                progress(snap)

        return on_tick, (0.1 if self.tracer is not None else interval)

    def _start_external(self, job, errors, started):
        """One thread per external worker (the GPU worker first), appended to
        ``started`` as each starts."""
        peers: list[ExternalWorker] = []
        peers += [ExternalWorker(job, self.threads + i, peers) for i in range(len(self.external))]
        for i, (fn, worker) in enumerate(zip(self.external, peers, strict=True)):
            t = threading.Thread(target=_drive_external, args=(job, worker, fn, errors),
                                 name=f"gthinker-external-{i}", daemon=True)
            t.start()
            started.append(t)

    def _push_records(self, job):
        records = self.record_arrays
        if records is not None and len(records[1]) > 1 and not job.push_tasks(*records):
            raise SpillLimitError(
                f"the {len(records[1]) - 1} initial records do not fit in the spill "
                f"stack S (spill_limit={self.spill_limit} bytes). Raise spill_limit.")

    def run(self, sigints_before: int | None = None) -> JobResult:
        """Runs the job to its end and returns its results (raises what failed). The
        ``output`` file is put in place only when the job ran to its end (or its
        limit): a failed or stopped job leaves the file that was there."""
        if sigints_before is None:
            sigints_before = stopping.sigints()
        names = None
        if self.graph.node_names is not None and self.output_format == "text":
            names = dict(zip(self.graph.ids.tolist(), self.graph.node_names, strict=True))
        self.out = (outputs.Output(self.output, [self.graph], names)
                    if self.output is not None else None)
        try:
            result = self._run(sigints_before)
            if self.out is not None and result.stopped in (None, "limit"):
                self.out.commit()
            return result
        finally:
            if self.out is not None:
                self.out.discard()

    def _run(self, sigints_before: int) -> JobResult:
        if self.mode in ("gpu", "hybrid"):
            from gthinker.gpu.devices import job_devices
            from gthinker.gpu.stop_flag import StopFlag

            self.devices = job_devices(self.options.gpu.gpus, self.engine, self.graph,
                                       self.roots)
            self.stop_flag = StopFlag()
            whole = self._run_whole(sigints_before)
            if whole is not None:
                return whole
            self._share_roots()
        self._start_gpu_workers()
        on_tick, tick_interval = self._tick()
        job = self._core_job()
        errors: list[BaseException] = []
        start = time.perf_counter()
        compiled_at_start = compiler.compile_seconds()
        started: list[threading.Thread] = []
        try:
            self._push_records(job)
            if self.stop is not None:
                self.stop.attach(job)
                if self.stop_flag is not None:  # the running kernels see the token at once
                    self.stop.attach(self.stop_flag)
            self._start_external(job, errors, started)
            with stopping.running(job, sigints_before) as watch:
                status = job.run(on_tick, tick_interval)
        finally:
            if self.stop is not None:
                self.stop.detach(job)
                if self.stop_flag is not None:
                    self.stop.detach(self.stop_flag)
            for t in started:
                t.join()
            for gpu_worker in self.gpu_workers:
                gpu_worker.close()
        compiled_in_run = compiler.compile_seconds() - compiled_at_start  # GPU kernels, at launch
        seconds = time.perf_counter() - start - compiled_in_run
        if errors:
            raise errors[0]
        if watch.interrupted:  # Ctrl-C reached this job's thread through the SIGINT handler
            raise KeyboardInterrupt
        return self._finish(job, status, start, seconds)

    # ---- finishing --------------------------------------------------------------------

    def _finish(self, job, status, start, seconds) -> JobResult:
        """Raises for a failed status, writes the trace, and gathers the results."""
        _raise_for_status(self.task, self.graph, status, self.output)
        trace_error = None
        if self.tracer is not None:
            # The end state, also for jobs shorter than one tick.
            self.tracer.sample(self._with_gpu(job.snapshot()))
            try:
                self.tracer.write(self.trace, start, seconds)
            except OSError as exc:  # keep the job's result; the caller learns why in stats
                trace_error = f"cannot write the trace to {self.trace}: {exc.strerror or exc}"
        stats = job.stats()
        if trace_error:
            stats["trace_error"] = trace_error
        stopped = {"limit": "limit", "stopped": "stop"}.get(status["error"])
        return self._result(job.results(), stats, seconds, stopped)

    def _run_whole(self, sigints_before: int) -> JobResult | None:
        """A gpu-mode job that its engine runs whole, without the master
        (:meth:`GPUEngine.run_whole <gthinker.gpu.engine.GPUEngine.run_whole>`), where
        nothing needs the master; else None. Its stop token and Ctrl-C reach the
        kernels through the job's stop flag (there is no master to stop): the result
        is then partial, ``stopped == "stop"``."""
        if (self.mode != "gpu" or self.record_arrays is not None or self.output is not None
                or self.limit is not None or self.trace is not None
                or (self.stop is not None and self.stop.is_set())):
            return None
        from gthinker.gpu import device_totals

        start, compiled = time.perf_counter(), compiler.compile_seconds()
        flag = self.stop_flag
        if self.stop is not None:
            self.stop.attach(flag)
        try:
            with stopping.running(flag, sigints_before) as watch:
                setup = self._engine_setup(None)._replace(progress=self._whole_progress(start))
                done = self.engine.run_whole(self.graph, setup, self.devices, self.roots)
        finally:
            if self.stop is not None:
                self.stop.detach(flag)
        if watch.interrupted:  # Ctrl-C reached this job's thread through the SIGINT handler
            raise KeyboardInterrupt
        if done is None:
            return None
        results, figures = done
        seconds = time.perf_counter() - start - (compiler.compile_seconds() - compiled)
        stats: dict = {}
        stats["gpu"], stats["gpus"] = device_totals(figures, self.devices, final=True)
        return self._named(results, stats, seconds, "stop" if flag.is_set() else None)

    def _whole_progress(self, start: float):
        """``report(counters, gpu)`` for an engine that runs the job whole: calls the job's
        progress callback with a snapshot of the master's form (its task and spill
        figures 0: there is no master) every ``progress_interval``; None without one."""
        if self.progress is None:
            return None
        interval = self.options.progress_interval
        due = [start + interval]

        def report(counters, gpu):
            now = time.perf_counter()
            if now < due[0]:
                return
            due[0] = now + interval
            self.progress({"elapsed": now - start, "tasks_done": 0, "tasks_decomposed": 0,
                           "spill_tasks": 0, "spill_bytes": 0, "idle_cpu_workers": 0,
                           "counters": [int(c) for c in counters], "gpu": gpu})

        return report

    def _result(self, res, stats, seconds, stopped) -> JobResult:
        """The CPU workers' results plus the GPU engines', by the names the app declared."""
        counter_values = np.asarray(res["counters"], np.int64)
        maxima_values = np.asarray(res["maxima"], np.int64)
        hists = [np.asarray(h, np.int64) for h in res["histograms"]]
        for gpu_worker in self.gpu_workers:
            g_counters, g_maxima, g_hists = gpu_worker.results()
            counter_values = counter_values + g_counters
            maxima_values = np.maximum(maxima_values, g_maxima)
            hists = [h + g_hists[i][: len(h)] for i, h in enumerate(hists)]
        if self.gpu_workers:
            stats["gpu"], stats["gpus"] = self._gpu_snapshots(final=True)
        return self._named((counter_values, maxima_values, hists), stats, seconds, stopped)

    def _named(self, results, stats, seconds, stopped) -> JobResult:
        """The JobResult of ``results`` (counters, maxima, histograms in the order the
        app declares their names)."""
        counter_values, maxima_values, hists = results
        stats["host_peak_bytes"] = memory.peak_rss_bytes()  # this process's, so far
        names_from = self.names_from
        minimum = np.iinfo(np.int64).min
        counters = zip(names_from.counters, counter_values, strict=True)
        maxima = zip(names_from.maxima, maxima_values, strict=True)
        return JobResult(
            counters={k: int(v) for k, v in counters},
            maxima={k: (None if v == minimum else int(v)) for k, v in maxima},
            histograms={k: hists[i] for i, k in enumerate(names_from.histograms)},
            stats=stats,
            seconds=seconds,
            threads=self.threads,
            mode=self.mode,
            stopped=stopped,
            compile_seconds=compiler.compile_seconds() - self.compiled_before,
        )

    def _gpu_snapshots(self, final: bool = False) -> tuple[dict, list[dict]]:
        """The GPU workers' figures: summed over the devices, and per device (``final``:
        the job's end)."""
        from gthinker.gpu import device_totals

        return device_totals([w.snapshot() for w in self.gpu_workers], self.devices, final)

    def _with_gpu(self, snap):
        """Adds the GPU workers' figures to a master snapshot, and their counters
        (as of the last second or so) to the CPU workers'."""
        if self.gpu_workers:
            snap["gpu"], snap["gpus"] = self._gpu_snapshots()
            live = sum(w.live_counters for w in self.gpu_workers)
            snap["counters"] = [int(a) + int(b) for a, b in
                                zip(snap["counters"], live, strict=True)]
        return snap


def _engine_of(gpu, mode):
    """The GPU engine class that ``gpu=`` names: a GPUContext app's (the GPU worker,
    level by level) or a :class:`~gthinker.gpu.engine.GPUEngine` subclass as it is."""
    from gthinker.gpu import GPUContext
    from gthinker.gpu.engine import GPUEngine

    if isinstance(gpu, type) and issubclass(gpu, GPUContext) and gpu is not GPUContext:
        return gpu.engine()
    if isinstance(gpu, type) and issubclass(gpu, GPUEngine) and gpu is not GPUEngine:
        return gpu
    raise TypeError(f"mode={mode!r} needs gpu=<a GPUContext subclass, or a GPU engine: a "
                    f"gthinker.gpu.engine.GPUEngine subclass>, got {gpu!r}")


def _raise_for_status(task, graph, status, output=None):
    kind = status["error"]
    if kind in ("none", "limit", "stopped"):  # stopped on request: not an error
        return
    if kind == "interrupted":
        raise KeyboardInterrupt
    if kind == "spill_limit":
        raise SpillLimitError(
            status["message"] + ". Raise spill_limit (--spill-limit) or the time budget, "
            "so that fewer tasks are decomposed."
        )
    if kind == "output":  # code: the errno (EPIPE makes a BrokenPipeError)
        code, path = int(status["code"]), os.fspath(output)
        if code == errno.EPIPE:
            raise OSError(code, f"the reader of {path} closed it before every result was "
                                f"written (broken pipe)")
        raise OSError(code, f"writing results to {path} failed: {os.strerror(code)}")
    if kind == "memory":
        raise MemoryError(status["message"])
    code = status["code"]
    method, what = _USER_ERRORS.get(code % SPAWN_PHASE, ("compute", f"failed (code {code})"))
    if code >= SPAWN_PHASE:
        method = "spawn"
    where = ""
    if status["vertex"] >= 0:
        where = f" on the task of vertex {int(graph.ids[status['vertex']])}"
    elif method == "compute":
        where = " on a decomposed task record"
    hint = ""
    if status["code"] in (CODES["SPAWN_RAISED"], CODES["COMPUTE_RAISED"]) and not task.boundscheck:
        hint = " (set boundscheck = True on the class to catch out-of-range indexing too)"
    raise TaskRuntimeError(f"{task.__qualname__}.{method} {what}{where}{hint}")
