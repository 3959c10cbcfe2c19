"""Host memory: what is available, what this process used at its peak, and the
check that refuses work that would not fit (a clear error, not the kernel's OOM
killer)."""

from __future__ import annotations

import resource
import sys
import time

from gthinker.errors import GraphTooLargeError

__all__ = ["available_bytes", "peak_rss_bytes", "check_fits", "describe"]


#: Seconds a reading of the available memory is reused (:func:`available_bytes`).
READING_SECONDS = 1.0
_reading = [float("-inf"), 0]  # [when, bytes]


def available_bytes() -> int:
    """Memory the system can give this process now without swapping (psutil's
    ``available``: free memory plus reclaimable caches), read again at most every
    :data:`READING_SECONDS`: jobs of a millisecond spent a tenth of it reading
    /proc/meminfo (a job's spill limit goes by it)."""
    now = time.monotonic()
    if now - _reading[0] > READING_SECONDS:
        import psutil

        _reading[:] = [now, int(psutil.virtual_memory().available)]
    return _reading[1]


def peak_rss_bytes() -> int:
    """This process's peak resident memory so far (``getrusage``)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(peak if sys.platform == "darwin" else peak * 1024)


def describe(nbytes: float) -> str:
    """``nbytes`` in words: 1.5 GiB, 300.0 MiB."""
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if nbytes >= size:
            return f"{nbytes / size:.1f} {unit}"
    return f"{int(nbytes)} bytes"


def check_fits(nbytes: int, what: str) -> None:
    """Raises :class:`GraphTooLargeError` when ``nbytes`` more would not fit in the
    memory available now (``what`` names the data)."""
    if nbytes < (1 << 28):  # below 256 MiB: not worth asking
        return
    free = available_bytes()
    if nbytes > free:
        raise GraphTooLargeError(
            f"{what} need about {describe(nbytes)} of memory, but only {describe(free)} "
            "is available; free memory, use a machine with more, or convert the graph "
            "once with `gthinker convert` on one that has it (a converted file is "
            "memory-mapped, not held twice)")
