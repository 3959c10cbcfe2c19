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

An engine whose search spreads over a launch's many warps (MCE's bitsets: a launch takes
every subtree it is given, heavy ones side by side) is better served by :func:`deal`: each
GPU gets one share of the roots of about even estimated cost at once, and searches it as
one GPU searches a whole job (its heavy roots in its first launch); small chunks would
leave each launch a few subtrees, each GPU a long chain of narrow launches. What is
left uneven at the end (the estimate is rough) moves through a :class:`WorkPool`: a GPU
whose share is done takes half of what another still holds.

>>> [s.tolist() for s in deal(np.array([1.0, 8, 1, 4, 2, 1]), workers=2)]
[[1, 5], [3, 4, 0, 2]]
"""

from __future__ import annotations

import heapq
import threading

import numpy as np

__all__ = ["deal", "guided_cuts", "heavy_first", "SharedCursor", "WorkPool"]

#: :func:`deal` gives each of the heaviest this many roots (times the workers) to the
#: share with the least estimated cost so far; the lighter rest go round the shares in
#: turn (a Python loop over millions of light roots would cost more than it evens out).
DEAL_EXACT = 4096
#: Seconds a :class:`WorkPool` waiter sleeps between looks at a stop.
POOL_LOOK_SECONDS = 0.05
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


def deal(costs: np.ndarray, workers: int) -> list[np.ndarray]:
    """``workers`` shares of the positions of ``costs`` of about even total, each heavy
    first: the heaviest (:data:`DEAL_EXACT` per worker) one by one to the share with the
    least so far (ties: the lowest share), the rest round the shares in turn."""
    costs = np.maximum(np.asarray(costs, np.float64), 0.0)
    order = heavy_first(costs)
    owner = np.empty(len(order), np.int64)
    exact = min(len(order), DEAL_EXACT * workers)
    loads = [(0.0, k) for k in range(workers)]
    for i in range(exact):
        load, k = heapq.heappop(loads)
        owner[i] = k
        heapq.heappush(loads, (load + costs[order[i]], k))
    rest = np.arange(len(order) - exact)
    lightest_first = [k for _, k in sorted(loads)]
    owner[exact:] = np.asarray(lightest_first, np.int64)[rest % workers] if len(rest) else 0
    return [order[owner == k] for k in range(workers)]


class WorkPool:
    """Work handed between the threads of several GPUs that run a job without the master
    (one thread per GPU): a thread whose own work is done calls :meth:`take`, which waits
    until another thread :meth:`give` some, or returns None once every thread waits
    with the pool empty (the job is done), or after :meth:`close` (a thread failed or the
    job stops). A busy thread asks :meth:`hungry` between launches. Thread-safe."""

    def __init__(self, workers: int):
        self._workers = int(workers)
        self._items: list = []
        self._waiting = 0
        self._closed = False
        self._cond = threading.Condition()

    def hungry(self) -> bool:
        """Whether a thread waits for work and none is in the pool (a racy look: enough
        to decide whether to give)."""
        return self._waiting > 0 and not self._items and not self._closed

    def give(self, item) -> None:
        with self._cond:
            self._items.append(item)
            self._cond.notify()

    def close(self) -> None:
        """Every waiting and later :meth:`take` returns None."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    def take(self, stopped=lambda: False):
        """An item given by another thread, or None (see the class docstring); looks at
        ``stopped()`` every :data:`POOL_LOOK_SECONDS` while it waits."""
        with self._cond:
            self._waiting += 1
            try:
                while not self._items and not self._closed:
                    if self._waiting == self._workers or stopped():
                        self._closed = True
                        self._cond.notify_all()
                        break
                    self._cond.wait(POOL_LOOK_SECONDS)
                return self._items.pop() if self._items else None
            finally:
                self._waiting -= 1
