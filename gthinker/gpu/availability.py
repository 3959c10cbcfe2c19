"""Whether a GPU can be used here, and so where each run goes: :func:`numba_cuda`
(numba-cuda, imported once, with the simulator's shims when it is on),
:func:`device_status`, :func:`require_device` and :func:`resolve_mode`, the one place
where every run's mode is decided."""

from __future__ import annotations

import importlib
import os
import sys
import threading

from ..errors import DeviceUnavailableError
from ..options import MODES
from . import simulator

__all__ = ["OCCUPANCY_WARNINGS", "SMALL_GRAPH_EDGES", "check_mode", "device_status",
           "numba_cuda", "quiet_occupancy_warnings", "require_device", "resolve_mode",
           "small_graph"]

#: The environment variable of numba-cuda's NumbaPerformanceWarning "Grid size N will
#: likely result in GPU under-utilization": gthinker's engines size their grids
#: themselves (a small graph's launch is small on purpose), so the warning is off unless
#: this variable is set.
OCCUPANCY_WARNINGS = "NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS"

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
                quiet_occupancy_warnings()
                _cuda.update(module=cuda, error="")
        return _cuda["module"]


def quiet_occupancy_warnings() -> None:
    """Turns numba-cuda's low-occupancy warning off (``CUDA_LOW_OCCUPANCY_WARNINGS = 0``
    in ``numba.core.config`` and ``numba.cuda.core.config``, where they are), unless the
    user's environment sets :data:`OCCUPANCY_WARNINGS`. The variable is set to 0 too: numba
    reads its configuration again from the environment when a ``NUMBA_`` variable changes,
    and the GPU worker processes inherit it."""
    if OCCUPANCY_WARNINGS in os.environ:
        return
    os.environ[OCCUPANCY_WARNINGS] = "0"
    for name in ("numba.core.config", "numba.cuda.core.config"):
        try:
            config = importlib.import_module(name)
        except ImportError:  # an older numba-cuda: numba's own config only
            continue
        if hasattr(config, "CUDA_LOW_OCCUPANCY_WARNINGS"):
            config.CUDA_LOW_OCCUPANCY_WARNINGS = 0


def _no_driver() -> str:
    """Why no NVIDIA driver can be present, found without importing numba-cuda;
    '' when one may be."""
    if simulator.enabled() or not sys.platform.startswith("linux"):
        return ""
    if any(os.path.exists(p) for p in ("/dev/nvidiactl", "/dev/dxg")):  # native, WSL
        return ""
    return "no NVIDIA driver (no /dev/nvidiactl)"


_usable: dict = {}  # CUDA device id -> its description, once found usable


def device_status() -> tuple[bool, str]:
    """(usable, description): whether GPU mode can run here, and on what (this thread's
    current device) or why not. A device found usable is remembered for the process:
    every GPU job asks, and the driver's answers cost tens of microseconds."""
    reason = _no_driver()
    if reason:
        return False, reason
    cuda = numba_cuda()
    if cuda is None:
        return False, f"numba-cuda could not be imported ({_cuda['error']})"
    if simulator.enabled():
        return True, "Numba CUDA simulator (NUMBA_ENABLE_CUDASIM=1)"
    try:
        if _usable and len(cuda.gpus) == 1:
            return True, _usable[0]
        if cuda.is_available():
            dev = cuda.get_current_device()
            name = dev.name.decode() if isinstance(dev.name, bytes) else str(dev.name)
            cc = ".".join(map(str, dev.compute_capability))
            _usable[dev.id] = f"{name} (compute capability {cc})"
            return True, _usable[dev.id]
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
