"""Running a Task over a graph: :func:`run` and its :class:`JobResult`."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import psutil

from . import _core, cache, stopping
from .errors import SpillLimitError, TaskRuntimeError
from .graph import as_graph
from .stopping import StopToken
from .task import CODES, SPAWN_PHASE, Task

__all__ = ["run", "JobResult", "StopToken", "default_threads", "MODES", "ExternalWorker",
           "Assignment"]

MODES = ("cpu", "gpu", "hybrid")

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
    """CPU cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


@dataclass
class JobResult:
    """Merged results of one job.

    ``counters``, ``maxima`` and ``histograms`` map the names a Task declared
    to their values (a maximum never updated is ``None``); ``stats`` has the
    runtime's figures (tasks spawned, decomposed, spill stack peak, per worker
    busy/idle time).
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

    def __init__(self, job, slot: int):
        self._job = job
        self.slot = slot
        self._busy = False

    def wait(self) -> Assignment | None:
        """Next assignment, or None once the job is over."""
        got = self._job.external_wait(self.slot)
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

    def spill_tasks(self) -> int:
        """Tasks in S now (read without the master lock)."""
        return self._job.spill_tasks()

    def give_back_vertices(self, vertices) -> None:
        """Hands unstarted initial vertices back to the master; CPU workers take
        them after S and before the back of the deque."""
        self._job.return_vertices(np.ascontiguousarray(vertices, np.int32))

    @property
    def aborting(self) -> bool:
        """True once the job is stopping (error or Ctrl-C): finish up quickly."""
        return self._job.aborting()


def _drive_external(job, slot, fn, errors):
    worker = ExternalWorker(job, slot)
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


#: The most CPU worker threads one job starts (each is an OS thread with its own stack).
MAX_THREADS = 4096
_INT64_MAX = 2**63 - 1


def positive_int(name, value, maximum=_INT64_MAX):
    """``value`` as an int in 1..maximum, or ValueError naming the range."""
    if (isinstance(value, bool) or not isinstance(value, (int, np.integer))
            or not 1 <= value <= maximum):
        raise ValueError(f"{name} must be an integer from 1 to {maximum:,}, got {value!r}")
    return int(value)


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
    threads: int | None = None,
    time_budget: float = 0.1,
    early_split: float | None = None,
    gpu_idle_split: float | None = None,
    cpu_chunk: int = 50,
    cpu_task_batch: int = 8,
    flush_batch: int = 64,
    timeout_check_interval: int = 64,
    spill_limit: int | None = None,
    vertices: Sequence[int] | np.ndarray | None = None,
    records: Sequence[Sequence[int] | np.ndarray] | tuple[np.ndarray, np.ndarray] | None = None,
    params: Sequence[int] = (),
    histogram_bins: int | None = None,
    output: str | os.PathLike | None = None,
    limit: int | None = None,
    progress: Callable[[dict], None] | None = None,
    progress_interval: float = 2.0,
    external: Sequence[Callable[[ExternalWorker], None]] = (),
    gpu_chunk: int = 500_000,
    gpu_task_batch: int = 100_000,
    gpu_options: dict | None = None,
    trace: str | os.PathLike | None = None,
    stop: StopToken | None = None,
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
    gpu : GPUContext subclass, optional
        The application's GPU side (required in gpu and hybrid modes); it declares
        the same counters, maxima and histograms as ``task``.
    threads : int, optional
        CPU workers; default: every core this process may use (0 in gpu
        mode). 0 is allowed when an ``external`` worker is given.
    time_budget : float
        Seconds a task may run before ``ctx.timed_out()`` turns true and it
        should decompose (G-ThinkerCG's tau_time, 0.1 s).
    early_split : float, optional
        While a CPU worker is idle and S is empty, running tasks time out after
        this many seconds instead of ``time_budget`` (demand-driven splitting,
        which keeps the critical path of deep search trees short). Default
        ``time_budget / 20``; 0 turns it off.
    gpu_idle_split : float, optional
        The same while the GPU worker waits for work and S is empty (hybrid).
        Default ``early_split``. A shorter value (a GPU finishes a split
        task's rest far sooner than one core) is meant for the tail of short
        hybrid jobs; it is not measured on a GPU yet. 0 turns it off.
    cpu_chunk : int
        Initial vertices per CPU assignment, taken from the back of the deque.
    cpu_task_batch : int
        Spilled tasks per CPU assignment, taken from the top of S.
    flush_batch : int
        Decomposed tasks a worker buffers before flushing them to S in one lock.
    timeout_check_interval : int
        ``ctx.timed_out()`` reads the clock once every this many calls (1: every call).
    spill_limit : int, optional
        Bytes S may hold before the job fails with :class:`SpillLimitError`;
        default half the memory available when the job starts.
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
        File that ``ctx.emit`` writes result lines to.
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
        on its own thread with an :class:`ExternalWorker` handle.
    gpu_chunk, gpu_task_batch : int
        Vertices from the front of the deque, and spilled tasks once it is empty,
        per assignment to an external worker (G-ThinkerCG: 500,000 and 100,000).
    gpu_options : dict, optional
        GPU worker settings: ``eta_per_warp`` (new subgraphs per level and
        warp), ``buffer_bytes`` (cap on the device subgraph buffer; default 85%
        of the free device memory), ``host_limit_bytes`` (cap on the host
        subgraph stack H; default half the free host memory), ``blocks``,
        ``threads_per_block``, ``fanout`` (queue entries one subgraph may need);
        hybrid stealing: ``tau_c`` (GPU-to-CPU stealing starts while more than
        this many CPU workers are idle; default half of them), ``steal_bound``
        (only while S holds fewer tasks; default 1,000,000), ``steal_batch``
        (subgraphs moved from H to S at a time; default 1,000,000),
        ``give_back`` (also hand unstarted vertices of the GPU's chunk back to
        idle CPU workers; default True), ``level_steal`` (also hand idle CPU
        workers unread subgraphs from the GPU's device levels; default True),
        ``steal_interval`` (seconds between the GPU's checks; default 0.005).
    """
    sigints_before = stopping.sigints()  # a Ctrl-C from here on (compiling, say) stops the job
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    if task is not None and (not (isinstance(task, type) and issubclass(task, Task))
                             or task is Task):
        raise TypeError(f"task must be a subclass of gthinker.Task, got {task!r}")
    names_from = task
    external = list(external)
    gpu_worker = None
    if mode in ("gpu", "hybrid"):
        from .gpu import GPUContext, require_device

        if not (isinstance(gpu, type) and issubclass(gpu, GPUContext)) or gpu is GPUContext:
            raise TypeError(f"mode={mode!r} needs gpu=<a GPUContext subclass>, got {gpu!r}")
        if mode == "hybrid" and task is None:
            raise TypeError("mode='hybrid' needs the CPU task too")
        if task is not None:
            for what in ("counters", "maxima", "histograms"):
                if getattr(task, what) != getattr(gpu, what):
                    raise TypeError(f"{task.__qualname__}.{what} and {gpu.__qualname__}.{what} "
                                    "differ; the CPU and GPU sides must declare the same results")
        require_device()
        names_from = gpu
        if mode == "gpu":
            threads = 0
    elif task is None:
        raise TypeError("task is required in mode='cpu'")
    if threads is None:
        threads = default_threads()
    elif not ((external or mode != "cpu") and threads == 0):  # an external worker may run alone
        threads = positive_int("threads", threads, MAX_THREADS)
    gpu_chunk = positive_int("gpu_chunk", gpu_chunk)
    gpu_task_batch = positive_int("gpu_task_batch", gpu_task_batch)
    if not (isinstance(time_budget, (int, float)) and time_budget > 0):
        raise ValueError(f"time_budget must be a positive number of seconds, got {time_budget!r}")
    if early_split is None:
        early_split = time_budget / 20
    if not (isinstance(early_split, (int, float)) and early_split >= 0):
        raise ValueError(f"early_split must be a number of seconds >= 0, got {early_split!r}")
    if gpu_idle_split is None:
        gpu_idle_split = early_split
    if not (isinstance(gpu_idle_split, (int, float)) and gpu_idle_split >= 0):
        raise ValueError(f"gpu_idle_split must be a number of seconds >= 0, "
                         f"got {gpu_idle_split!r}")
    cpu_chunk = positive_int("cpu_chunk", cpu_chunk)
    cpu_task_batch = positive_int("cpu_task_batch", cpu_task_batch)
    flush_batch = positive_int("flush_batch", flush_batch)
    timeout_check_interval = positive_int("timeout_check_interval", timeout_check_interval)
    if spill_limit is None:
        spill_limit = psutil.virtual_memory().available // 2
    spill_limit = positive_int("spill_limit", spill_limit)
    if limit is not None:
        limit = positive_int("limit", limit)
        if mode != "cpu":
            raise ValueError(f"limit runs on the CPU workers only (mode='cpu'), not in {mode!r}")
    if stop is not None and not isinstance(stop, StopToken):
        raise TypeError(f"stop must be a gthinker.StopToken, got {stop!r}")
    record_arrays = _record_arrays(records) if records is not None else None

    graph = as_graph(graph)
    compiled_before = cache.compile_seconds()
    n = graph.num_vertices
    if vertices is None:
        init = np.arange(n, dtype=np.int32)
    else:
        init = np.ascontiguousarray(vertices, dtype=np.int64)
        if init.ndim != 1 or (init.size and (init.min() < 0 or init.max() >= n)):
            raise ValueError(f"vertices must be a 1-d array of vertex indices in [0, {n})")
        init = init.astype(np.int32)
    params = np.ascontiguousarray(params, dtype=np.int64).ravel()
    if histogram_bins is None:
        histogram_bins = int(graph.max_degree) + 2 if n else 2
    histogram_bins = positive_int("histogram_bins", histogram_bins)

    if mode in ("gpu", "hybrid"):
        from .gpu.worker import GPUWorker

        gpu_worker = GPUWorker(gpu, graph, params=params, histogram_bins=histogram_bins,
                               cpu_threads=threads, **(gpu_options or {}))
        external.insert(0, gpu_worker)
    tracer = None
    if trace is not None:
        from .trace import Tracer

        tracer = Tracer(threads, gpu_worker)
    on_tick, tick_interval = _ticker(progress, progress_interval, gpu_worker, tracer)
    entry_address = task.compiled().address if task is not None and threads else 0
    config = {
        "threads": threads,
        "time_budget": float(time_budget),
        "early_split": float(early_split),
        "gpu_idle_split": float(gpu_idle_split),
        "cpu_chunk": cpu_chunk,
        "cpu_task_batch": cpu_task_batch,
        "flush_batch": flush_batch,
        "spill_limit_bytes": spill_limit,
        "timeout_check_interval": timeout_check_interval,
        "n_counters": len(names_from.counters),
        "n_maxima": len(names_from.maxima),
        "hist_rows": len(names_from.histograms),
        "hist_bins": histogram_bins if names_from.histograms else 0,
        "params": params.tolist(),
        "output": os.fspath(output) if output is not None else "",
        "limit": -1 if limit is None else limit,
        "external_workers": len(external),
        "gpu_chunk": gpu_chunk,
        "gpu_task_batch": gpu_task_batch,
    }
    try:
        job = _core.Job(
            graph.indptr, graph.indices, graph.labels, graph.ids, init,
            entry_address, config,
        )
    except RuntimeError as exc:  # e.g. the output file cannot be opened
        raise OSError(str(exc)) from None
    errors: list[BaseException] = []
    drivers = [
        threading.Thread(target=_drive_external, args=(job, threads + i, fn, errors),
                         name=f"gthinker-external-{i}", daemon=True)
        for i, fn in enumerate(external)
    ]
    start = time.perf_counter()
    compiled_at_start = cache.compile_seconds()
    started = []
    try:
        if record_arrays is not None and len(record_arrays[1]) > 1:
            if not job.push_tasks(*record_arrays):
                raise SpillLimitError(
                    f"the {len(record_arrays[1]) - 1} initial records do not fit in the spill "
                    f"stack S (spill_limit={spill_limit} bytes). Raise spill_limit.")
        if stop is not None:
            stop.attach(job)
        for t in drivers:
            t.start()
            started.append(t)
        with stopping.running(job, sigints_before) as watch:
            status = job.run(on_tick, tick_interval)
    finally:
        if stop is not None:
            stop.detach(job)
        for t in started:
            t.join()
        if gpu_worker is not None:
            gpu_worker.close()
    compiled_in_run = cache.compile_seconds() - compiled_at_start  # GPU kernels, at first launch
    seconds = time.perf_counter() - start - compiled_in_run
    if errors:
        raise errors[0]
    if watch.interrupted:  # Ctrl-C reached this job's thread through the SIGINT handler
        raise KeyboardInterrupt
    _raise_for_status(task, graph, status)
    stopped = {"limit": "limit", "stopped": "stop"}.get(status["error"])
    trace_error = None
    if tracer is not None:
        # The end state, also for jobs shorter than one tick.
        tracer.sample(_with_gpu(job.snapshot(), gpu_worker))
        try:
            tracer.write(trace, start, seconds)
        except OSError as exc:  # keep the job's result; the caller learns why in stats
            trace_error = f"cannot write the trace to {trace}: {exc.strerror or exc}"

    res = job.results()
    stats = job.stats()
    counter_values = np.asarray(res["counters"], np.int64)
    maxima_values = np.asarray(res["maxima"], np.int64)
    hists = [np.asarray(h, np.int64) for h in res["histograms"]]
    if gpu_worker is not None:
        g_counters, g_maxima, g_hists = gpu_worker.results()
        counter_values = counter_values + g_counters
        maxima_values = np.maximum(maxima_values, g_maxima)
        hists = [h + g_hists[i][: len(h)] for i, h in enumerate(hists)]
        stats["gpu"] = gpu_worker.snapshot()
    if trace_error:
        stats["trace_error"] = trace_error
    minimum = np.iinfo(np.int64).min
    counters = zip(names_from.counters, counter_values, strict=True)
    maxima = zip(names_from.maxima, maxima_values, strict=True)
    return JobResult(
        counters={k: int(v) for k, v in counters},
        maxima={k: (None if v == minimum else int(v)) for k, v in maxima},
        histograms={k: hists[i] for i, k in enumerate(names_from.histograms)},
        stats=stats,
        seconds=seconds,
        threads=threads,
        mode=mode,
        stopped=stopped,
        compile_seconds=cache.compile_seconds() - compiled_before,
    )


def _with_gpu(snap, gpu_worker):
    """Adds the GPU worker's figures to a master snapshot, and its counters (as
    of the last second or so) to the CPU workers'."""
    if gpu_worker is not None:
        snap["gpu"] = gpu_worker.snapshot()
        snap["counters"] = [int(a) + int(b) for a, b in
                            zip(snap["counters"], gpu_worker.live_counters, strict=True)]
    return snap


def _ticker(progress, progress_interval, gpu_worker, tracer):
    """The job's tick callback: adds the GPU worker's figures and live counters
    to each snapshot, samples the trace, and calls ``progress`` when it is due."""
    if gpu_worker is None and tracer is None:
        return progress, progress_interval
    due = [progress_interval]

    def on_tick(snap):
        _with_gpu(snap, gpu_worker)
        if tracer is not None:
            tracer.sample(snap)
        if progress is not None and snap["elapsed"] >= due[0]:
            due[0] = snap["elapsed"] + progress_interval
            progress(snap)

    return on_tick, (0.1 if tracer is not None else progress_interval)


def _raise_for_status(task, graph, status):
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
    if kind == "output":
        raise OSError(status["message"])
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
