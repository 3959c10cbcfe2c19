"""gthinker: parallel subgraph finding on all CPU cores, a GPU, or both.

Start with :class:`Graph` (input), :class:`Task` (write an app) and :func:`run`;
bundled apps live in :mod:`gthinker.apps` (e.g. ``gthinker.apps.mce.run``).

Importing the package is cheap: the names below are imported on first use, so
``import gthinker`` loads neither Numba nor the GPU stack.
"""

import importlib

from .errors import (
    DeviceUnavailableError,
    GraphFormatError,
    GThinkerError,
    SpillLimitError,
    TaskDefinitionError,
    TaskRuntimeError,
)

__version__ = "0.1.0"

# name -> the submodule that defines it (imported on first access)
_LAZY = {
    "Graph": "graph", "LoadReport": "graph", "as_graph": "graph",
    "Task": "task", "TaskContext": "task",
    "GPUContext": "gpu.context",
    "run": "runtime", "JobResult": "runtime", "StopToken": "runtime",
    "default_threads": "runtime",
}
_SUBMODULES = ("apps", "cache", "gpu", "generate", "graph", "runtime", "task", "trace")

__all__ = [
    "Graph",
    "LoadReport",
    "as_graph",
    "Task",
    "TaskContext",
    "GPUContext",
    "gpu",
    "run",
    "JobResult",
    "StopToken",
    "default_threads",
    "GThinkerError",
    "GraphFormatError",
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
