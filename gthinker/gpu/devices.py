"""Which CUDA devices a run uses (``--gpus N|all``), work on one of them from a
thread, and the per-device figures of a multi-GPU run put together.

A run in gpu or hybrid mode starts one GPU worker per device in
:func:`resolve_devices`; each worker uploads its own copy of the graph and
drives its device from its own thread inside :func:`on_device` (Numba-CUDA
keeps the current device per thread). Apps with their own GPU workers
(the MCE bitset engine, clique counting) do the same. :func:`graph_on_device`
keeps each graph's copy on a device with the graph, for the next run.
"""

from __future__ import annotations

import atexit
import contextlib
import numbers
import threading
from collections.abc import Sequence

import numpy as np

from ..errors import DeviceUnavailableError
from ..options import ALL_GPUS

__all__ = ["visible_devices", "resolve_devices", "current_device", "on_device", "driving",
           "graph_on_device", "device_totals", "memory_info"]


def visible_devices() -> int:
    """CUDA devices this process can use (``CUDA_VISIBLE_DEVICES`` applies); 1 on
    the simulator, 0 without a usable GPU."""
    from .availability import device_status, numba_cuda

    if not device_status()[0]:
        return 0
    return len(numba_cuda().gpus)


def resolve_devices(gpus=None) -> list[int]:
    """The device ids of a run's GPU workers, one worker each.

    ``gpus`` is None or ``"all"`` (every visible device), N (the first N) or a
    sequence of device ids (a device named twice runs two workers on it: for
    tests). Raises DeviceUnavailableError when no GPU is usable (what
    :func:`gthinker.gpu.require_device` says) or when more GPUs are asked for
    than are visible."""
    from .availability import require_device

    require_device()
    have = visible_devices()
    if gpus is None or gpus == ALL_GPUS:
        return list(range(have))
    wanted = list(range(gpus)) if isinstance(gpus, numbers.Integral) else list(gpus)
    if wanted and max(wanted) >= have:
        asked = (f"{gpus} GPUs" if isinstance(gpus, numbers.Integral)
                 else f"GPU {max(wanted)} (device ids {', '.join(map(str, wanted))})")
        raise DeviceUnavailableError(
            f"--gpus asks for {asked}, but {have} GPU{'s are' if have != 1 else ' is'} "
            f"visible here (device ids 0..{have - 1}; CUDA_VISIBLE_DEVICES narrows them). "
            "Use --gpus all (Python: gpus='all') or fewer.")
    return wanted


def current_device() -> int:
    """The id of this thread's CUDA device (0 on the simulator; with one GPU, 0
    without asking the driver, which costs tens of microseconds)."""
    from . import simulator
    from .availability import numba_cuda

    cuda = numba_cuda()
    if simulator.enabled() or len(cuda.gpus) == 1:
        return 0
    return cuda.get_current_device().id


_KEEPING = threading.Lock()


def graph_on_device(graph):
    """``(indptr, indices, labels)`` of ``graph`` on this thread's CUDA device
    (``labels`` one 0 when the graph has none; an empty array is one 0 too): copied
    there once and kept with ``graph`` (:meth:`gthinker.Graph.derived`, a copy per
    device) until the graph is freed, so that every later run on it copies nothing
    (R-MAT scale 22, 33M edges: 0.05 s and more a run)."""
    from .availability import numba_cuda

    gpu = current_device()
    with _KEEPING:
        kept = graph.derived("gpu.on_device", lambda _: {})
        if gpu not in kept:
            _check_fits(graph, gpu)
            labels = graph.labels if graph.labels is not None else np.zeros(0, np.int32)
            kept[gpu] = tuple(numba_cuda().to_device(a if a.size else np.zeros(1, a.dtype))
                              for a in (graph.indptr, graph.indices, labels))
        return kept[gpu]


def memory_info() -> tuple[int, int] | None:
    """``(free, total)`` bytes of this thread's CUDA device, or None where there are no
    figures (the simulator)."""
    from . import simulator
    from .availability import numba_cuda

    if simulator.enabled():
        return None
    try:
        free, total = numba_cuda().current_context().get_memory_info()
    except (AttributeError, NotImplementedError, TypeError):
        return None
    return int(free), int(total)


def _check_fits(graph, gpu) -> None:
    """Raises GraphTooLargeError, before anything is copied, when the graph's arrays
    would not fit in the device's free memory (the simulator has no figures)."""
    from ..errors import GraphTooLargeError
    from ..memory import describe

    need = graph.indptr.nbytes + graph.indices.nbytes + (
        graph.labels.nbytes if graph.labels is not None else 0)
    figures = memory_info()
    if figures is None:
        return
    free, total = figures
    if need > free:
        raise GraphTooLargeError(
            f"the graph ({graph.num_vertices:,} vertices, {graph.num_edges:,} edges) needs "
            f"{describe(need)} on GPU {gpu}, which has {describe(free)} free of "
            f"{describe(total)}; a graph of up to about {int(free) // 8:,} edges would fit "
            "(8 bytes an edge and 8 a vertex); run it with --mode cpu, or on a GPU with more "
            "memory")


def on_device(device: int | None):
    """A context in which this thread's CUDA calls go to ``device`` (None: the
    current device, as before multi-GPU)."""
    if device is None:
        return contextlib.nullcontext()
    from .availability import numba_cuda

    _note_driven(device)
    return numba_cuda().gpus[device]


# ---- leaving the process cleanly ---------------------------------------------------------
#
# cuda.core (under numba-cuda) keeps each thread's primary contexts in a thread_local cache
# of reference-counted handles whose last release calls cuDevicePrimaryCtxRelease through
# cuda.bindings' Cython wrapper. The main thread's cache is destroyed by libc after
# Py_Finalize, where that wrapper touches a finalized interpreter's thread state: the
# process aborts at exit (NVIDIA/cuda-python#2743, fixed upstream by #2744; seen here as
# "double free or corruption (!prev)" after tests/test_multi_gpu.py passed on 2 H200s, where
# the runtime closes every engine on the main thread, inside its device). While Python is alive
# (atexit), one more reference to the main thread's handle of each device this process drove
# is taken and never given back, so no release runs after finalization; the driver frees the
# contexts when the process ends, as it does for any process.

_driven: set = set()  # real CUDA devices this process drove


def _note_driven(device: int) -> None:
    from . import simulator

    if device in _driven or simulator.enabled():
        return
    with _KEEPING:
        if not _driven:
            atexit.register(_pin_primary_contexts)
        _driven.add(int(device))


def _pin_primary_contexts() -> None:
    """At exit: the main thread's primary-context handle of each device in ``_driven``,
    with a reference that outlives the interpreter (see above)."""
    import ctypes

    from .availability import numba_cuda

    cuda = numba_cuda()
    for device in sorted(_driven):
        try:
            core = type(cuda.gpus[device]._device._dev)(device)  # cuda.core's, this thread's
            core.set_current()
            context = core.context
        except Exception:  # noqa: BLE001 - another numba-cuda or cuda.core: nothing to pin
            continue
        ctypes.pythonapi.Py_IncRef(ctypes.py_object(context))


@contextlib.contextmanager
def driving(device: int | None, handle=None):
    """The context of a GPU worker's thread: its CUDA calls go to ``device``, and
    on the simulator, which runs one kernel at a time, GPU workers take turns
    (``handle.wait()`` gives the turn up while it waits). Yields the handle to use."""
    from . import simulator

    with on_device(device), simulator.turn():
        yield _TakingTurns(handle) if simulator.enabled() and handle is not None else handle


class _TakingTurns:
    """An external worker's handle whose ``wait`` gives up the simulator's turn."""

    def __init__(self, handle):
        self._handle = handle

    def __getattr__(self, name):
        return getattr(self._handle, name)

    def wait(self):
        from .simulator import turn_given_up

        with turn_given_up():
            return self._handle.wait()


def _total(key, values):
    if all(isinstance(v, str) for v in values):
        distinct = sorted(set(values))
        if len(distinct) == 1 and len(values) > 1:
            return f"{len(values)} x {distinct[0]}"
        return "; ".join(distinct)
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        # Maxima stay maxima (the deepest level stack, the longest step); the
        # rest add up over the devices.
        return max(values) if key.startswith(("max_", "longest_")) or key == "depth" else \
            sum(values)
    return values[0]


def device_totals(per_device: Sequence[dict], devices: Sequence[int]) -> tuple[dict, list]:
    """``(totals, per_device)``: the figures of several GPU workers as one dict
    with the same keys (numbers summed, maxima kept as maxima, device names
    joined), and the list of each worker's figures with its ``device_id``."""
    listed = [{**s, "device_id": int(d)} for s, d in zip(per_device, devices, strict=True)]
    if len(per_device) == 1:
        return dict(per_device[0]), listed
    keys = [k for k in per_device[0] if all(k in s for s in per_device)]
    return {k: _total(k, [s[k] for s in per_device]) for k in keys}, listed
