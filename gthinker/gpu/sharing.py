"""Sharing a job's roots among several GPUs by estimated cost, not by count.

Equal ranges of roots leave GPUs idle: on facebook_combined 99% of the MCE work sits
under 125 of its 4,039 roots, all near the end of the degeneracy order, so the last of
four equal chunks held nearly all of it (one GPU busy to the end). Here
the roots are put heavy first (by an engine's estimate, :meth:`GPUEngine.root_costs
<gthinker.gpu.engine.GPUEngine.root_costs>`) and cut into chunks of guided size: each
chunk holds about ``1 / (2 x workers)`` of the estimated cost still left, so the heavy
roots come in small chunks that spread over every GPU first, and the chunks shrink
towards the end, when an even finish matters. The workers take the chunks in order from
one shared queue: the master's vertex deque (``JobConfig.gpu_cuts``), or a
:class:`SharedCursor` where an engine runs its job without the master.

>>> guided_cuts(np.array([8.0, 4, 2, 1, 1, 0, 0, 0]), workers=2).tolist()
[1, 2, 3, 4, 5, 8]
"""

from __future__ import annotations

import threading

import numpy as np

__all__ = ["guided_cuts", "heavy_first", "SharedCursor"]

#: A chunk holds at least this share of the whole estimated cost over the workers (so
#: that the tail of light roots does not become thousands of tiny chunks).
MIN_SHARE = 1 / 64


def heavy_first(costs: np.ndarray) -> np.ndarray:
    """The positions of ``costs`` from the largest to the smallest (ties keep their
    order)."""
    return np.argsort(-np.asarray(costs, np.float64), kind="stable")


def guided_cuts(costs: np.ndarray, workers: int) -> np.ndarray:
    """Ends (exclusive positions, increasing, the last ``len(costs)``) of chunks of the
    items ``costs`` in order: each chunk takes items until it holds half of its even
    share of the cost still left, ``left / (2 x workers)``, but at least ``MIN_SHARE /
    workers`` of the whole, and at least one item (costs all zero: all alike)."""
    costs = np.maximum(np.asarray(costs, np.float64), 0.0)
    n = len(costs)
    if n == 0:
        return np.zeros(0, np.int64)
    if not costs.sum() > 0:  # no estimate: every root alike
        costs = np.ones(n)
    prefix = np.concatenate([[0.0], np.cumsum(costs)])
    total = prefix[-1]
    floor = total * MIN_SHARE / workers
    cuts = []
    at = 0
    while at < n:
        want = max((total - prefix[at]) / (2 * workers), floor)
        end = int(np.searchsorted(prefix, prefix[at] + want, side="left"))
        at = min(n, max(at + 1, end))
        cuts.append(at)
    return np.asarray(cuts, np.int64)


class SharedCursor:
    """Chunks ``[lo, hi)`` of a sequence (from ``start`` to each of ``cuts`` in turn),
    handed out in order to the threads that ask
    (:meth:`next`), one at a time: the host-side queue of engines that run a job
    without the master (one thread per GPU). Thread-safe."""

    def __init__(self, cuts, start: int = 0):
        self._cuts = [int(start), *(int(c) for c in cuts)]
        self._next = 0
        self._lock = threading.Lock()

    def next(self) -> tuple[int, int] | None:
        """The next chunk, or None once all are taken."""
        with self._lock:
            i = self._next
            if i + 1 >= len(self._cuts):
                return None
            self._next += 1
        return self._cuts[i], self._cuts[i + 1]
