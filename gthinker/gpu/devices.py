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
import os
import sys
import threading
import weakref
from collections.abc import Sequence

import numpy as np

from ..errors import DeviceUnavailableError
from ..options import ALL_GPUS

__all__ = ["visible_devices", "resolve_devices", "by_work", "job_devices", "current_device",
           "on_device", "driving", "graph_on_device", "device_totals", "profile_line",
           "PROFILE_ENV", "at_exit", "memory_info"]

#: Set to 1 to have each GPU's figures of every multi-GPU job printed to stderr when the job
#: ends (:func:`profile_line`: busy, launch, wait, copy and host seconds per GPU).
PROFILE_ENV = "GTHINKER_GPU_PROFILE"
#: The figures :func:`profile_line` prints, where a device's figures have them.
PROFILE_FIGURES = ("wall_seconds", "busy_seconds", "kernel_seconds", "launch_seconds",
                   "sync_seconds", "copy_seconds", "host_seconds", "thread_cpu_seconds",
                   "launches", "given", "taken")


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


def by_work(gpus, fills) -> list[int]:
    """:func:`resolve_devices`, and where ``gpus`` is the default (None or ``"all"``),
    the first ``fills(n)`` of its ``n`` devices (at least one): how many the job's
    estimated work fills, so that a small job runs on the first device alone, the others
    not even initialised (an explicit number or list of devices is taken as it is)."""
    devices = resolve_devices(gpus)
    if len(devices) > 1 and (gpus is None or gpus == ALL_GPUS):
        devices = devices[: max(1, min(len(devices), int(fills(len(devices)))))]
    return devices


def job_devices(gpus, engine, graph, roots) -> list[int]:
    """:func:`by_work` for a gpu or hybrid job of ``engine`` (a
    :class:`~gthinker.gpu.engine.GPUEngine` class) over ``roots`` (its initial vertices:
    a range or an array): :meth:`GPUEngine.gpus_for
    <gthinker.gpu.engine.GPUEngine.gpus_for>` says how many its estimated work fills."""
    if isinstance(roots, range):
        roots = (slice(roots.start, roots.stop) if roots.step == 1
                 else np.arange(roots.start, roots.stop, roots.step))
    return by_work(gpus, lambda have: engine.gpus_for(graph, roots, have))


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
    _note_driven(gpu)
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
    figures (the simulator says infinite)."""
    import math

    from .availability import numba_cuda

    try:
        free, total = numba_cuda().current_context().get_memory_info()
    except (AttributeError, NotImplementedError, TypeError):
        return None
    if not (math.isfinite(free) and math.isfinite(total)):
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
        _note_driven(None)
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
# "double free or corruption (!prev)" and as a segmentation fault, rc 139, after
# tests/test_multi_gpu.py passed on real GPUs). So at exit, while Python is alive, in this
# order (:func:`_leave`): the hooks of :func:`at_exit` run (the GPU worker's kept subgraph
# buffers are dropped), each device with an active primary context (whichever thread made
# it: a GPU worker made on the main thread without a device id makes device 0's) finishes
# its work and frees what its context has deferred, and one more reference to the main
# thread's handle of each is taken and never given back, so that no release runs after
# finalization; the driver frees the contexts when the process ends, as for any process.

_driven: set = set()  # real CUDA devices this process drove (None: the current one)
_exit_hooks: list = []


def at_exit(hook) -> None:
    """Runs ``hook()`` at exit before the devices are finished and their contexts pinned
    (:func:`_leave`): what holds device memory in a module (kept buffers) lets go of it."""
    _exit_hooks.append(hook)


def _note_driven(device: int | None) -> None:
    from . import simulator

    if device in _driven or simulator.enabled():
        return
    with _KEEPING:
        if not _driven:
            # atexit runs its hooks last registered first: the weakref finalizers' hook
            # (numba-cuda frees device memory and unloads modules from finalizers)
            # registered before this one, so that _leave runs first and the finalizers
            # find the deallocation queues disabled.
            weakref.finalize(_leave, lambda: None)
            atexit.register(_leave)
        _driven.add(None if device is None else int(device))


def _active_devices(cuda) -> list[int]:
    """The devices whose primary context is active in this process, asked of the driver
    without making any (where it cannot say: those this process drove by id)."""
    known = {d for d in _driven if d is not None}
    try:
        from cuda.bindings import driver as cu

        found = set()
        for device in range(len(cuda.gpus)):
            err, _flags, active = cu.cuDevicePrimaryCtxGetState(cu.CUdevice(device))
            if err == cu.CUresult.CUDA_SUCCESS and active:
                found.add(device)
        return sorted(found | known)
    except Exception:  # noqa: BLE001 - another binding: the devices noted on the way
        return sorted(known | ({0} if None in _driven else set()))


def _leave() -> None:
    """At exit: the teardown in order (see above)."""
    from .availability import numba_cuda

    for hook in _exit_hooks:
        try:
            hook()
        except Exception:  # noqa: BLE001 - leaving anyway
            pass
    cuda = numba_cuda()
    for device in _active_devices(cuda):
        try:
            with cuda.gpus[device]:
                cuda.synchronize()
                pending = cuda.current_context().deallocations
                pending.clear()
                # What the interpreter's exit still frees (its weakref finalizers run
                # after this hook: module unloads among them, which aborted a 4-GPU
                # process with "double free or corruption") stays queued: the driver frees
                # a process's device memory and modules when it ends.
                pending.disable().__enter__()
        except Exception:  # noqa: BLE001 - leaving anyway
            pass
        _pin_primary_context(cuda, device)


def _pin_primary_context(cuda, device: int) -> None:
    """The main thread's primary-context handle of ``device``, with a reference that
    outlives the interpreter (see above)."""
    import ctypes

    try:
        core = type(cuda.gpus[device]._device._dev)(device)  # cuda.core's, this thread's
        core.set_current()
        context = core.context
    except Exception:  # noqa: BLE001 - another numba-cuda or cuda.core: nothing to pin
        return
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


def profile_line(device: int, figures: dict) -> None:
    """Prints ``device``'s :data:`PROFILE_FIGURES` in ``figures`` to stderr where
    :data:`PROFILE_ENV` is set (to anything but 0)."""
    if os.environ.get(PROFILE_ENV, "0").strip() in ("", "0"):
        return
    shown = [f"{k} {figures[k]:.4g}" for k in PROFILE_FIGURES
             if isinstance(figures.get(k), (int, float))]
    print(f"gthinker gpu profile: GPU {device}: {', '.join(shown)}", file=sys.stderr, flush=True)


def device_totals(per_device: Sequence[dict], devices: Sequence[int],
                  final: bool = False) -> tuple[dict, list]:
    """``(totals, per_device)``: the figures of several GPU workers as one dict
    with the same keys (numbers summed, maxima kept as maxima, device names
    joined), and the list of each worker's figures with its ``device_id``; ``final``
    (a job's end): each printed by :func:`profile_line` where :data:`PROFILE_ENV` asks."""
    listed = [{**s, "device_id": int(d)} for s, d in zip(per_device, devices, strict=True)]
    for s, d in zip(per_device, devices, strict=True) if final else ():
        profile_line(d, s)
    if len(per_device) == 1:
        return dict(per_device[0]), listed
    keys = [k for k in per_device[0] if all(k in s for s in per_device)]
    return {k: _total(k, [s[k] for s in per_device]) for k in keys}, listed
