"""Exceptions raised by gthinker. Catch :class:`GThinkerError` for all of them."""


class GThinkerError(Exception):
    """Base class of every error gthinker raises on purpose."""


class GraphFormatError(GThinkerError, ValueError):
    """A graph file or array could not be read; the message names the file and line."""


class TaskDefinitionError(GThinkerError, TypeError):
    """A Task subclass is malformed or its methods do not compile; names the method."""


class TaskRuntimeError(GThinkerError, RuntimeError):
    """User code failed while a job ran (an exception inside compute/spawn)."""


class SpillLimitError(GThinkerError, MemoryError):
    """The spill stack S grew past its configured limit."""


class DeviceUnavailableError(GThinkerError, RuntimeError):
    """A GPU mode was asked for but no usable CUDA GPU was found."""


class GraphTooLargeError(GThinkerError, MemoryError):
    """A graph (or a step on it) would not fit in host or device memory; says what would."""
