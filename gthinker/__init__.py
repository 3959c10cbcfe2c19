"""gthinker: parallel subgraph finding on all CPU cores, a GPU, or both.

Start with :class:`Graph` (input), :class:`Task` (write an app) and :func:`run`;
bundled apps live in :mod:`gthinker.apps` (e.g. ``gthinker.apps.mce.run``).
"""

from . import gpu
from .errors import (
    DeviceUnavailableError,
    GraphFormatError,
    GThinkerError,
    SpillLimitError,
    TaskDefinitionError,
    TaskRuntimeError,
)
from .gpu.context import GPUContext
from .graph import Graph, LoadReport, as_graph
from .runtime import JobResult, StopToken, default_threads, run
from .task import Task, TaskContext

__version__ = "0.1.0"

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
