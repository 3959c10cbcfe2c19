"""``GPUContext``: the base class of a GPU application, and its kernels.

A GPU app is three device functions written as plain Python, which the
framework compiles with Numba-CUDA into its kernels (the user writes no
launch code and no buffer bookkeeping)::

    class Triangles(gthinker.GPUContext):
        counters = ("triangles",)

        @staticmethod
        def generate_initial_tasks(g, v, out):    # one thread per vertex
            ...gpu.append(out, n)...               # level 1
        @staticmethod
        def process(g, rec, q):                   # one warp per subgraph (optional)
            ...base = gpu.push(q, k)...            # candidates into Q
            return len(rec)
        @staticmethod
        def extend(g, rec, a, b, out):            # one thread per Q entry
            ...gpu.append(out, n) or gpu.count(g, 0, 1)...

Host hooks (ordinary methods, overridable): :meth:`initialize`,
:meth:`init_level`, :meth:`move_tasks_from_cpu`, :meth:`move_tasks_to_cpu`.
"""

from __future__ import annotations

import inspect

import numpy as np

from ..errors import TaskDefinitionError
from ..options import ETA_PER_WARP

__all__ = ["GPUContext"]


class GPUContext:
    """Base class of GPU applications (see the module docstring and
    ``docs/writing-apps.md``).

    Class attributes
    ----------------
    counters, maxima, histograms : tuple of str
        Named results, as on :class:`gthinker.Task` (a GPU app paired with a
        CPU Task declares the same names; the results are merged).
    eta_per_warp : int
        Queue entries (new subgraphs) per level and process warp; eta =
        ``eta_per_warp`` x warps of the process launch (G-ThinkerCG: 1000).
    max_fanout : int or None
        Most queue entries one ``process`` call pushes; default max degree + 1.
        The queue always has room for one such subgraph, so a level can always
        make progress.
    """

    counters: tuple[str, ...] = ()
    maxima: tuple[str, ...] = ()
    histograms: tuple[str, ...] = ()
    eta_per_warp: int = ETA_PER_WARP
    max_fanout: int | None = None

    # Device functions (static, compiled with numba.cuda.jit(device=True)).
    generate_initial_tasks = None
    process = None
    extend = None

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._kernels = None
        for name in ("counters", "maxima", "histograms"):
            value = getattr(cls, name)
            if isinstance(value, str) or not all(isinstance(x, str) for x in value):
                raise TaskDefinitionError(f"{cls.__qualname__}.{name} must be a tuple of names")
            setattr(cls, name, tuple(value))
        arity = {"generate_initial_tasks": 3, "process": 3, "extend": 5}
        for name, n in arity.items():
            fn = cls.__dict__.get(name)
            if fn is None:
                continue
            if not isinstance(fn, staticmethod):
                raise TaskDefinitionError(
                    f"{cls.__qualname__}.{name} must be a @staticmethod (device code has no self)"
                )
            got = len(inspect.signature(fn.__func__).parameters)
            if got != n:
                raise TaskDefinitionError(
                    f"{cls.__qualname__}.{name} takes {got} arguments; expected {n}"
                )

    @classmethod
    def check(cls) -> None:
        """Raises TaskDefinitionError unless the required device functions exist."""
        for name in ("generate_initial_tasks", "extend"):
            if getattr(cls, name) is None:
                raise TaskDefinitionError(f"{cls.__qualname__} must define {name}")

    # ---- host hooks ---------------------------------------------------------

    def initialize(self, graph) -> tuple:
        """Called once, before the first kernel, with the :class:`gthinker.Graph`.
        Returns a tuple of arrays (numpy: copied to the device) that device code
        sees as ``g.extra``; app buffers of a fixed size belong here. Default:
        one unused int32."""
        return (np.zeros(1, np.int32),)

    def init_level(self, depth: int) -> None:
        """Called on the host before each level step (``depth`` 1 = level 1)."""

    def move_tasks_from_cpu(self, task_data: np.ndarray, task_starts: np.ndarray):
        """Converts CPU task records (spilled tasks from S) into GPU subgraph
        records; returns ``(data, starts)``. Default: the layouts match."""
        return task_data, task_starts

    def move_tasks_to_cpu(self, data: np.ndarray, starts: np.ndarray):
        """Converts GPU subgraph records into CPU task records. Default: the
        layouts match."""
        return data, starts

    # ---- compilation --------------------------------------------------------

    @classmethod
    def engine(cls):
        """The GPU engine that runs this app (:class:`gthinker.gpu.worker.GPUWorker`,
        level by level), as ``gthinker.run`` makes it on each device."""
        if cls.__dict__.get("_engine") is None:
            from .worker import GPUWorker

            cls._engine = GPUWorker.of(cls)
        return cls._engine

    @classmethod
    def kernels(cls):
        """The app's kernels (compiled on first launch, then kept per class)."""
        if cls._kernels is None:
            cls.check()
            from .kernels import build_kernels

            cls._kernels = build_kernels(cls)
        return cls._kernels
