"""The one road every GPU side takes: :class:`GPUEngine`.

A GPU engine is a job's GPU side on one CUDA device. ``gthinker.run(task, graph,
mode="gpu" | "hybrid", gpu=ENGINE)`` makes one per device of ``gpus`` (on that
device), and drives each as an external worker of the master: it is served chunks of
initial vertices from the front of the vertex deque V and, once V is empty, batches of
spilled task records from S; while CPU workers (hybrid mode) or other GPUs wait, it may
hand records back to S. When the job ends the runtime merges every engine's results
into the job's by the names the job declares (counters summed, maxima kept as maxima,
histograms summed) and its figures into ``stats["gpu"]`` (totals) and
``stats["gpus"]`` (per device). A ``gpu=`` that is a :class:`~gthinker.GPUContext`
subclass runs on :class:`~gthinker.gpu.worker.GPUWorker`, the framework's
level-by-level engine with host buffering H; the bundled apps' own engines (MCE's bitset
search, counting's clique kernels) are subclasses of this class, so a user's
GPUContext app and the bundled engines take the same road.

Writing an engine (``docs/gpu.md``, "Adding a GPU engine"): subclass
:class:`GPUEngine`, declare ``counters``, ``maxima`` and ``histograms`` (the job's
CPU task declares the same), and implement

* ``__init__(self, graph, setup)``: prepare on the device (the runtime calls it inside
  ``on_device(setup.device)``): upload or reuse the graph
  (:func:`gthinker.gpu.graph_on_device`), allocate buffers;
* ``run(self, work, handle)``: one assignment (``work.vertices``, ``work.task(k)``);
  ``handle`` is the :class:`~gthinker.runtime.job.ExternalWorker` (``push_tasks``,
  ``idle_cpu_workers``, ``idle_peers``, ``aborting``);
* ``results(self)``: an :class:`EngineResults` in the declared order;
* ``snapshot(self)``: its figures (``device``, ``launches``, ``kernel_seconds``, ...);

and, optionally, :meth:`GPUEngine.run_whole`, a whole gpu-mode job without the master
(for engines whose work is one launch per device: the runtime takes it when nothing
needs the master). Kernels come from :mod:`gthinker.gpu.launch`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..options import RunOptions
from .devices import driving

__all__ = ["EngineResults", "EngineSetup", "GPUEngine", "NO_MAXIMUM"]


class EngineSetup(NamedTuple):
    """What the runtime tells each engine of its job."""

    params: np.ndarray  #: the job's ``params`` (int64)
    histogram_bins: int  #: bins of each histogram
    cpu_threads: int  #: CPU workers beside it (0 in gpu mode)
    options: RunOptions  #: the job's options (``options.gpu``, ``options.hybrid``)
    device: int | None  #: its CUDA device (None: the current one)
    peers: int  #: the job's other GPU engines


class EngineResults(NamedTuple):
    """An engine's results, in the order its class declares the names."""

    counters: np.ndarray  #: int64, one per counter
    maxima: np.ndarray  #: int64, one per maximum (int64 min: none seen)
    histograms: list  #: one int64 array per histogram


#: A maximum no engine saw (what a CPU worker's maxima start from).
NO_MAXIMUM = np.iinfo(np.int64).min


class GPUEngine:
    """Base class of GPU engines (see the module docstring)."""

    counters: tuple[str, ...] = ()
    maxima: tuple[str, ...] = ()
    histograms: tuple[str, ...] = ()
    #: Its name in ``stats`` and messages.
    name = "gpu"
    #: One engine per distinct device even where ``gpus`` names a device twice (an
    #: engine that holds its device's state for the whole job).
    one_per_device = False
    #: Whether it reads the GPU worker's options (``GPUOptions.WORKER_FIELDS`` and
    #: ``HybridOptions``): only the GPU worker does; a job that sets them for another
    #: engine is an error (they would do nothing).
    worker_options = False

    def __init__(self, graph, setup: EngineSetup):
        self.setup = setup
        self.device = setup.device
        #: Busy intervals of its device (``time.perf_counter`` pairs, kept by the
        #: engine): the trace draws them.
        self.timeline: list[tuple[float, float]] = []
        #: Counters found so far, for progress lines (engines may leave them at 0).
        self.live_counters = np.zeros(len(self.counters), np.int64)

    @classmethod
    def configured(cls, **settings) -> type[GPUEngine]:
        """This engine with class attributes ``settings`` (its own knobs: a node budget,
        a share of work for the CPUs, ...): what ``gpu=`` takes."""
        unknown = [k for k in settings if not hasattr(cls, k)]
        if unknown:
            raise TypeError(f"{cls.__name__} has no setting {', '.join(unknown)}")
        return type(cls.__name__, (cls,), {k: v for k, v in settings.items() if v is not None})

    # ---- driven by the runtime ----------------------------------------------------------

    def __call__(self, handle) -> None:
        """The external worker's loop, on the engine's device."""
        with driving(self.device, handle) as handle:
            while (work := handle.wait()) is not None:
                self.run(work, handle)
                handle.done()

    def run(self, work, handle) -> None:
        raise NotImplementedError

    def results(self) -> EngineResults:
        raise NotImplementedError

    def snapshot(self) -> dict:
        return {}

    def close(self) -> None:
        """Called once the job is over (on any thread)."""

    @classmethod
    def root_costs(cls, graph, roots: np.ndarray) -> np.ndarray | None:
        """The estimated work under each of ``roots`` (float64, only their order and
        ratios matter), by which a job on several GPUs puts the heavy roots first and
        cuts them into chunks of even cost (:mod:`gthinker.gpu.sharing`); None keeps
        the roots' order and equal chunks. Default: the squared degree (the wedges at
        a root, what a search of two levels or more grows with)."""
        return np.diff(graph.indptr)[roots].astype(np.float64) ** 2

    @classmethod
    def run_whole(cls, graph, setup: EngineSetup, devices, vertices):
        """The whole gpu-mode job on ``devices`` without the master, where the engine
        can: ``(EngineResults, [snapshot per device])``, or None (the job runs
        through the master). ``vertices``: the job's initial vertices, a ``range`` where
        they are one (all of them: ``range(n)``), else an int32 array."""
        return None
