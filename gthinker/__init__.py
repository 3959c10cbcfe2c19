"""gthinker: parallel subgraph finding on all CPU cores, a GPU, or both.

Start with :class:`Graph` (input), :class:`Task` (write an app), :func:`run` and
:func:`iter_results` (the results a Task emits, while it runs); everything an app
author needs is in :mod:`gthinker.extending`; bundled apps live in :mod:`gthinker.apps`
(e.g. ``gthinker.apps.mce.run``).

Importing the package is cheap: the names below are imported on first use, so
``import gthinker`` loads neither Numba nor the GPU stack.
"""

import importlib
import importlib.machinery
from pathlib import Path

_HERE = Path(__file__).parent


def _check_core_is_built():
    """Fail at once, saying what to do, when this folder has no built C++ core.

    That happens when Python imports the source folder (``./gthinker`` at the
    repository root comes first on ``sys.path``) rather than an installed gthinker:
    without this check the first use fails later with a misleading circular-import
    or missing-module error.
    """
    if importlib.machinery.PathFinder.find_spec(f"{__name__}._core", __path__) is None:
        raise ImportError(
            f"gthinker's C++ core (gthinker._core) is not built in this source folder "
            f"({_HERE}), which Python imported instead of an installed gthinker "
            f"(the current directory, say, comes first on sys.path). Run `pip install -e .` in "
            f"{_HERE.parent} to build it here, or run Python from another folder to use "
            f"the installed gthinker.",
            name=__name__,
        )


_check_core_is_built()

from .errors import (  # noqa: E402 - after the checks above, which need nothing else
    DeviceUnavailableError,
    GraphFormatError,
    GraphTooLargeError,
    GThinkerError,
    SpillLimitError,
    TaskDefinitionError,
    TaskRuntimeError,
)

__version__ = "0.1.0"

# name -> the submodule that defines it (imported on first access)
_LAZY = {
    "Graph": "graphs.graph", "LoadReport": "graphs.graph", "as_graph": "graphs.graph",
    "Task": "runtime.task", "TaskContext": "runtime.task",
    "GPUContext": "gpu.context",
    "run": "runtime.job", "Job": "runtime.job", "JobResult": "runtime.job",
    "StopToken": "runtime.job", "default_threads": "runtime.job",
    "iter_results": "runtime.stream",
    "RunOptions": "options", "GPUOptions": "options", "HybridOptions": "options",
}
_SUBMODULES = ("apps", "cli", "cluster", "compiler", "extending", "gpu", "graphs", "memory",
               "options", "registry", "runtime", "setops")

__all__ = [
    "Graph",
    "LoadReport",
    "as_graph",
    "Task",
    "TaskContext",
    "GPUContext",
    "gpu",
    "run",
    "iter_results",
    "Job",
    "JobResult",
    "RunOptions",
    "GPUOptions",
    "HybridOptions",
    "StopToken",
    "default_threads",
    "GThinkerError",
    "GraphFormatError",
    "GraphTooLargeError",
    "TaskDefinitionError",
    "TaskRuntimeError",
    "SpillLimitError",
    "DeviceUnavailableError",
]


def __getattr__(name):
    if name in _LAZY:
        value = getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    elif name in _SUBMODULES:
        value = importlib.import_module(f".{name}", __name__)
    else:
        raise AttributeError(f"module 'gthinker' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY) | set(_SUBMODULES))
