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
import os
import sys
import threading

from ..errors import DeviceUnavailableError
from . import simulator
from .context import GPUContext
from .devices import (
    current_device,
    device_totals,
    driving,
    graph_on_device,
    on_device,
    pinned,
    resolve_devices,
    visible_devices,
)

__all__ = ["GPUContext", "SMALL_GRAPH_EDGES", "check_mode", "current_device", "device_status",
           "device_totals",
           "driving", "graph_on_device", "on_device", "pinned", "release_buffers",
           "require_device", "resolve_devices", "resolve_mode", "small_graph", "visible_devices"]

MODES = ("cpu", "gpu", "hybrid")

#: Graphs with fewer edges stay on the CPU in auto mode: starting the GPU costs
#: more than their whole search.
SMALL_GRAPH_EDGES = 20_000


def small_graph(graph) -> str:
    """Why ``graph`` is too small for the GPU in auto mode, or ''."""
    if graph.num_edges < SMALL_GRAPH_EDGES:
        return f"a small graph (< {SMALL_GRAPH_EDGES:,} edges)"
    return ""

_lock = threading.Lock()
_cuda: dict = {}  # "module": numba.cuda or None, "error": why it could not be imported
_warned: set = set()


def numba_cuda():
    """``numba.cuda`` (with the simulator's shims installed when it is on), or
    None when numba-cuda cannot be imported; :func:`device_status` says why."""
    with _lock:
        if "module" not in _cuda:
            try:
                from numba import cuda
            except Exception as exc:  # noqa: BLE001 - numba-cuda missing or broken
                _cuda.update(module=None, error=f"{type(exc).__name__}: {exc}")
            else:
                if simulator.enabled():
                    simulator.install()
                _cuda.update(module=cuda, error="")
        return _cuda["module"]


if simulator.enabled():  # tests: the shims go in before any GPU module is imported
    numba_cuda()


def __getattr__(name):
    """The device helpers (:mod:`gthinker.gpu.device`), imported on first use."""
    if name.startswith("__"):
        raise AttributeError(name)
    if numba_cuda() is None:
        raise AttributeError(f"gthinker.gpu.{name} needs numba-cuda, which could not be "
                             f"imported ({_cuda['error']}); pip install 'gthinker[gpu]'")
    device = importlib.import_module(f"{__name__}.device")
    if name not in device.__all__:  # e.g. a submodule: the import system tries it next
        raise AttributeError(f"module 'gthinker.gpu' has no attribute {name!r}")
    value = globals()[name] = getattr(device, name)  # found directly from now on
    return value


def _no_driver() -> str:
    """Why no NVIDIA driver can be present, found without importing numba-cuda;
    '' when one may be."""
    if simulator.enabled() or not sys.platform.startswith("linux"):
        return ""
    if any(os.path.exists(p) for p in ("/dev/nvidiactl", "/dev/dxg")):  # native, WSL
        return ""
    return "no NVIDIA driver (no /dev/nvidiactl)"


def device_status() -> tuple[bool, str]:
    """(usable, description): whether GPU mode can run here, and on what or why not."""
    reason = _no_driver()
    if reason:
        return False, reason
    cuda = numba_cuda()
    if cuda is None:
        return False, f"numba-cuda could not be imported ({_cuda['error']})"
    if simulator.enabled():
        return True, "Numba CUDA simulator (NUMBA_ENABLE_CUDASIM=1)"
    try:
        if cuda.is_available():
            dev = cuda.get_current_device()
            name = dev.name.decode() if isinstance(dev.name, bytes) else str(dev.name)
            cc = ".".join(map(str, dev.compute_capability))
            return True, f"{name} (compute capability {cc})"
        reason = (cuda.cuda_error() or "no CUDA device found").strip()
    except Exception as exc:  # noqa: BLE001
        reason = f"{type(exc).__name__}: {exc}".strip()
    return False, reason.splitlines()[0] if reason else "no CUDA device found"


def require_device() -> str:
    """Returns the device description, or raises DeviceUnavailableError with
    what was looked for, what failed and how to go on."""
    ok, what = device_status()
    if not ok:
        fix = ("Install it with pip install 'gthinker[gpu]' (numba-cuda must match numpy: "
               "numba-cuda 0.30.4 needs numpy < 2.5). " if "numba-cuda" in what else "")
        raise DeviceUnavailableError(
            f"GPU mode needs a CUDA GPU usable by Numba, and none is usable here: "
            f"{what.rstrip('.')}. "
            "Looked for the NVIDIA driver (libcuda), numba-cuda and a CUDA device. "
            f"{fix}Run on the CPU instead with --mode cpu (Python: mode='cpu')."
        )
    return what


def check_mode(mode, allowed=MODES) -> str:
    """``mode`` when it is ``"auto"`` or one of ``allowed``, else ValueError: the
    apps check it before any work, :func:`resolve_mode` decides it later."""
    if mode != "auto" and mode not in allowed:
        raise ValueError(f"mode must be one of auto, {', '.join(allowed)}; got {mode!r}")
    return mode


def resolve_mode(mode: str, *, allowed=MODES, auto: str = "hybrid",
                 cpu_because: str = "") -> tuple[str, str]:
    """The mode a run takes, and why: the one place where it is decided.

    ``mode`` is ``"auto"`` or one of ``allowed``. An explicit GPU mode is checked
    (DeviceUnavailableError says what failed). ``"auto"`` becomes ``auto`` (the
    app's best GPU mode) where a real CUDA GPU is usable, unless ``cpu_because``
    gives a reason to stay on the CPU (the job is small, or lists results);
    else ``"cpu"``. A GPU that is there but cannot be set up (numba-cuda fails
    to import, no device) is said once on stderr."""
    check_mode(mode, allowed)
    if mode != "auto":
        if mode != "cpu":
            require_device()
        return mode, ""
    if cpu_because:
        return "cpu", cpu_because
    ok, what = device_status()
    if ok and not simulator.enabled():
        return auto, f"GPU: {what}"
    if ok:
        return "cpu", "simulator: not used by auto"
    if not _no_driver() and what not in _warned:  # a driver, but no usable GPU
        _warned.add(what)
        print(f"gthinker: running on the CPU; the GPU cannot be used: {what}",
              file=sys.stderr, flush=True)
    return "cpu", f"no usable GPU ({what.rstrip('.')})"


def release_buffers() -> None:
    """Frees the device subgraph buffers that GPU jobs keep from one run to the
    next in this process (one per device, most of its memory; keeping it saves
    about 0.2 s per job). Call it before other GPU work in the same process."""
    from .worker import release_buffers as release

    release()
