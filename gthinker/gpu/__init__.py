"""GPU side of gthinker: :class:`GPUContext` apps, their device helpers, and the
GPU worker.

Device helpers (call them from ``generate_initial_tasks``, ``process`` and
``extend``): :func:`append`, :func:`warp_append`, :func:`push`,
:func:`count`, :func:`update_max`, :func:`add_to_histogram`,
:func:`neighbors`, :func:`degree`, :func:`contains`, :func:`lower_bound`,
and the warp helpers :func:`lane_id`, :func:`warp_broadcast`,
:func:`warp_sum`, :func:`warp_max`, :func:`warp_any`, :func:`warp_prefix`.

Needs numba-cuda (``pip install "gthinker[gpu]"``). With
``NUMBA_ENABLE_CUDASIM=1`` everything runs on Numba's CUDA simulator, with
the warp intrinsics it lacks supplied by :mod:`gthinker.gpu.simulator`.
"""

from __future__ import annotations

from ..errors import DeviceUnavailableError
from .context import GPUContext

__all__ = ["GPUContext", "device_status", "release_buffers", "require_device", "resolve_mode"]

try:
    from numba import cuda as _cuda
except Exception as _exc:  # noqa: BLE001 - numba-cuda missing or broken
    _cuda = None
    _IMPORT_ERROR = f"{type(_exc).__name__}: {_exc}"
else:
    _IMPORT_ERROR = ""
    from . import simulator as _simulator

    if _simulator.enabled():
        _simulator.install()
    from .device import *  # noqa: F403
    from .device import __all__ as _device_all

    __all__ += _device_all


def device_status() -> tuple[bool, str]:
    """(usable, description): whether GPU mode can run here, and on what or why not."""
    if _cuda is None:
        return False, f"numba-cuda could not be imported ({_IMPORT_ERROR})"
    from .simulator import enabled

    if enabled():
        return True, "Numba CUDA simulator (NUMBA_ENABLE_CUDASIM=1)"
    try:
        if _cuda.is_available():
            dev = _cuda.get_current_device()
            name = dev.name.decode() if isinstance(dev.name, bytes) else str(dev.name)
            cc = ".".join(map(str, dev.compute_capability))
            return True, f"{name} (compute capability {cc})"
        reason = (_cuda.cuda_error() or "no CUDA device found").strip()
    except Exception as exc:  # noqa: BLE001
        reason = f"{type(exc).__name__}: {exc}".strip()
    return False, reason.splitlines()[0] if reason else "no CUDA device found"


def require_device() -> str:
    """Returns the device description, or raises DeviceUnavailableError with
    what was looked for and how to run without a GPU."""
    ok, what = device_status()
    if not ok:
        raise DeviceUnavailableError(
            f"GPU mode needs a CUDA GPU usable by Numba, and none is usable here: "
            f"{what.rstrip('.')}. "
            "Looked for numba-cuda, the NVIDIA driver (libcuda) and a CUDA device. "
            "Run on the CPU instead with --mode cpu (Python: mode='cpu')."
        )
    return what


def resolve_mode(mode: str) -> tuple[str, str]:
    """Turns ``"auto"`` into ``"hybrid"`` on a machine with a usable CUDA GPU
    (the simulator does not count) and ``"cpu"`` elsewhere; returns (mode, why)."""
    if mode != "auto":
        return mode, ""
    ok, what = device_status()
    from .simulator import enabled

    if ok and not enabled():
        return "hybrid", f"GPU: {what}"
    return "cpu", f"no usable GPU ({what.rstrip('.')})" if not ok else "simulator: not used by auto"


def release_buffers() -> None:
    """Frees the device subgraph buffer that GPU jobs keep from one run to the
    next in this process (most of the device's memory; keeping it saves about
    0.2 s per job). Call it before other GPU work in the same process."""
    from .worker import release_buffers as release

    release()
