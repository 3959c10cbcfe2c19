"""GPU side of gthinker: :class:`GPUContext` apps, their device helpers, the GPU
worker, :func:`resolve_mode`, where every run's mode is decided, and
:func:`resolve_devices`, which GPUs it runs on (one GPU worker each).

Device helpers (call them from ``generate_initial_tasks``, ``process`` and
``extend``): :func:`append`, :func:`warp_append`, :func:`push`,
:func:`count`, :func:`update_max`, :func:`add_to_histogram`,
:func:`neighbors`, :func:`degree`, :func:`contains`, :func:`lower_bound`,
and the warp helpers :func:`lane_id`, :func:`warp_broadcast`,
:func:`warp_sum`, :func:`warp_max`, :func:`warp_any`, :func:`warp_prefix`.

Needs numba-cuda (``pip install "gthinker[gpu]"``), imported only when a GPU is
looked for or a device helper is first used. With ``NUMBA_ENABLE_CUDASIM=1``
everything runs on Numba's CUDA simulator, with the warp intrinsics it lacks
supplied by :mod:`gthinker.gpu.simulator`.
"""

from __future__ import annotations

import importlib

from .availability import (
    SMALL_GRAPH_EDGES,
    check_mode,
    device_status,
    numba_cuda,
    require_device,
    resolve_mode,
    small_graph,
)
from .context import GPUContext
from .devices import (
    by_work,
    current_device,
    device_totals,
    driving,
    graph_on_device,
    memory_info,
    on_device,
    resolve_devices,
    visible_devices,
)
from .simulator import enabled as _simulated

__all__ = ["GPUContext", "SMALL_GRAPH_EDGES", "by_work", "check_mode", "current_device",
           "device_status", "device_totals", "driving", "graph_on_device", "memory_info",
           "numba_cuda", "on_device",
           "release_buffers",
           "require_device", "resolve_devices", "resolve_mode", "small_graph", "visible_devices"]

if _simulated():  # tests: the shims go in before any GPU module is imported
    numba_cuda()


def __getattr__(name):
    """The device helpers (:mod:`gthinker.gpu.device_helpers`), imported on first use."""
    if name.startswith("__"):
        raise AttributeError(name)
    if numba_cuda() is None:
        raise AttributeError(f"gthinker.gpu.{name} needs numba-cuda, which could not be "
                             f"imported ({device_status()[1]}); pip install 'gthinker[gpu]'")
    device = importlib.import_module(f"{__name__}.device_helpers")
    if name not in device.__all__:  # e.g. a submodule: the import system tries it next
        raise AttributeError(f"module 'gthinker.gpu' has no attribute {name!r}")
    value = globals()[name] = getattr(device, name)  # found directly from now on
    return value


def release_buffers() -> None:
    """Frees the device subgraph buffers that GPU jobs keep from one run to the
    next in this process (one per device, most of its memory; keeping it saves
    about 0.2 s per job). Call it before other GPU work in the same process."""
    from .worker import release_buffers as release

    release()
