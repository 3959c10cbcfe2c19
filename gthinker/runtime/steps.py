"""A pass over a graph's vertices in short steps, on threads, that Ctrl-C stops at once.

Preparations written in Numba (``nogil=True`` kernels over a range of vertices) run
through :func:`run`: the vertices are cut into steps of about :data:`STEP_ENTRIES` row
entries (:func:`bounds`), and each thread takes the next step from a shared cursor
until none is left. Every call returns to Python within a fraction of a second, so:

- the calling (main) thread, which waits in short timeouts, notices Ctrl-C
  (:class:`KeyboardInterrupt`) at once; it then tells the threads to take no further
  step, waits for the steps they are in, and raises it;
- an exception in a step stops the other threads the same way and is raised in the
  caller.

No thread is left running when :func:`run` returns or raises. Each thread gets its own
scratch (e.g. a mark array), made once by ``scratch()``; the steps must write disjoint
memory, so that the result is the same for any number of threads.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait

import numpy as np

from gthinker.runtime.job import default_threads

__all__ = ["STEP_ENTRIES", "bounds", "run"]

#: Row entries of the vertices one step covers: a kernel that reads each entry's row
#: once more returns to Python often enough that Ctrl-C stops it within a fraction
#: of a second (steps a graph takes: docs/benchmarks.md, "Measurements behind the
#: code's constants").
STEP_ENTRIES = 1 << 16

#: Seconds between the caller's looks for Ctrl-C while the threads work.
_POLL = 0.05


def bounds(indptr) -> np.ndarray:
    """Vertex bounds of the steps (int64, from 0 to ``n``, increasing): about
    :data:`STEP_ENTRIES` row entries each; a step of one vertex may hold more."""
    n, m, entries = indptr.size - 1, int(indptr[-1]), STEP_ENTRIES
    cuts = np.searchsorted(indptr, np.arange(entries, m, entries), side="right")
    return np.unique(np.concatenate([[0], cuts, [n]])).astype(np.int64)


class _Cursor:
    """The steps not yet taken, shared by the threads; ``stop()`` ends the handing out."""

    def __init__(self, cuts: np.ndarray):
        self._steps = itertools.pairwise(cuts.tolist())
        self._lock = threading.Lock()
        self._stopped = False

    def take(self) -> tuple[int, int] | None:
        """The next step ``(lo, hi)``, or None when none is left or after :meth:`stop`."""
        with self._lock:
            return None if self._stopped else next(self._steps, None)

    def stop(self) -> None:
        with self._lock:
            self._stopped = True


def _work(step, cursor: _Cursor, scratch) -> None:
    """One thread: ``step(lo, hi, state)`` for each step it takes, ``state = scratch()``."""
    state = scratch()
    while (taken := cursor.take()) is not None:
        step(*taken, state)


def run(step: Callable, cuts: np.ndarray, threads: int | None = None,
        scratch: Callable = lambda: None) -> None:
    """``step(lo, hi, state)`` for every step ``[lo, hi)`` between the ``cuts``
    (:func:`bounds`), on ``threads`` threads (all cores by default), each with its own
    ``state = scratch()``. With one thread or one step, they run in the calling thread."""
    threads = min(threads or default_threads(), max(cuts.size - 1, 1))
    cursor = _Cursor(cuts)
    if threads == 1:
        _work(step, cursor, scratch)
        return
    with ThreadPoolExecutor(threads, "gthinker-steps") as pool:
        try:
            futures = [pool.submit(_work, step, cursor, scratch) for _ in range(threads)]
            while wait(futures, _POLL, FIRST_EXCEPTION).not_done:
                if any(f.done() and f.exception() is not None for f in futures):
                    break
        finally:  # Ctrl-C, or a step raised: no new step; leaving waits for the rest
            cursor.stop()
    for f in futures:
        f.result()
