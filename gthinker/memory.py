"""Host memory: what is available, what this process used at its peak, and the
check that refuses work that would not fit (a clear error, not the kernel's OOM
killer)."""

from __future__ import annotations

import resource
import sys

from gthinker.errors import GraphTooLargeError

__all__ = ["available_bytes", "peak_rss_bytes", "check_fits", "describe"]


def available_bytes() -> int:
    """Memory the system can give this process now without swapping (psutil's
    ``available``: free memory plus reclaimable caches)."""
    import psutil

    return int(psutil.virtual_memory().available)


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
