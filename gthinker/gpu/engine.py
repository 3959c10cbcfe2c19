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

from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from ..options import RunOptions
from .devices import driving

if TYPE_CHECKING:
    from .stop_flag import StopFlag

__all__ = ["EngineResults", "EngineSetup", "GPUEngine", "NO_MAXIMUM"]


class EngineSetup(NamedTuple):
    """What the runtime tells each engine of its job."""

    params: np.ndarray  #: the job's ``params`` (int64)
    histogram_bins: int  #: bins of each histogram
    cpu_threads: int  #: CPU workers beside it (0 in gpu mode)
    options: RunOptions  #: the job's options (``options.gpu``, ``options.hybrid``)
    device: int | None  #: its CUDA device (None: the current one)
    peers: int  #: the job's other GPU engines
    #: The job's :class:`~gthinker.gpu.stop_flag.StopFlag`, set when the job stops: its
    #: ``array`` (or a kept flag :meth:`~gthinker.gpu.stop_flag.StopFlag.link`\ ed to it)
    #: goes to the kernels, which leave when they see it (None: a setup made by hand).
    stop: StopFlag | None = None
    #: A job run whole (:meth:`GPUEngine.run_whole`): ``progress(counters, figures)``, to
    #: call with the counters found so far and the figures summed over the devices as
    #: often as convenient (the runtime passes them on to the job's progress callback every
    #: ``progress_interval``; it may raise, to stop the job). None: no progress wanted.
    progress: Callable[[np.ndarray, dict], None] | None = None


class EngineResults(NamedTuple):
    """An engine's results, in the order its class declares the names."""

    counters: np.ndarray  #: int64, one per counter
    maxima: np.ndarray  #: int64, one per maximum (int64 min: none seen)
    histograms: list  #: one int64 array per histogram


#: :attr:`GPUEngine.spread_cost` of an engine that keeps the default :meth:`root_costs`
#: (the wedges at the roots, sum of squared degrees): see docs/gpu.md ("Several GPUs").
SPREAD_WEDGES = 5e8

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
    #: The estimated work (the sum of :meth:`root_costs`) each GPU of a job with the
    #: default ``gpus`` gets at least (:meth:`gpus_for`): a GPU more costs its start-up,
    #: its launches and a share of a small job's tail, which a smaller share does not pay
    #: back (None: every visible GPU).
    spread_cost: float | None = SPREAD_WEDGES
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
    def share_roots(cls, graph, roots: np.ndarray, workers: int, mode: str):
        """How a job through the master shares ``roots`` (int32, in the master's order)
        among ``workers`` GPUs: ``(roots in deque order, chunk ends)`` (the master hands
        the next chunk to whichever GPU asks), or None (the roots' order, equal chunks).
        Default: by :meth:`root_costs` (:mod:`gthinker.gpu.sharing`), heavy first in gpu
        mode (hybrid mode keeps their order, whose back the CPU workers take), in chunks of
        guided size (:func:`~gthinker.gpu.sharing.guided_cuts`)."""
        from .sharing import guided_cuts, heavy_first

        costs = cls.root_costs(graph, roots)
        if costs is None:
            return None
        if mode == "gpu":
            order = heavy_first(costs)
            roots, costs = roots[order], costs[order]
        return roots, guided_cuts(costs, workers)

    @classmethod
    def gpus_for(cls, graph, roots, have: int) -> int:
        """How many of ``have`` GPUs a job over ``roots`` (an array or a slice of
        vertices) takes with the default ``gpus``: its estimated work (the sum of
        :meth:`root_costs`) over :attr:`spread_cost`, at least one and at most ``have``
        (all where either is None)."""
        if have <= 1 or cls.spread_cost is None:
            return have
        costs = cls.root_costs(graph, roots)
        if costs is None:
            return have
        return int(min(have, max(1, float(np.sum(costs)) // cls.spread_cost)))

    @classmethod
    def run_whole(cls, graph, setup: EngineSetup, devices, vertices):
        """The whole gpu-mode job on ``devices`` without the master, where the engine
        can: ``(EngineResults, [snapshot per device])``, or None (the job runs
        through the master). ``vertices``: the job's initial vertices, a ``range`` where
        they are one (all of them: ``range(n)``), else an int32 array."""
        return None
