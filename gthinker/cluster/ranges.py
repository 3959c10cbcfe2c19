"""The driver's work queue: ranges of initial vertices (roots), large first, smaller as
it drains, and the ranges of lost workers handed out again."""

from __future__ import annotations

import numpy as np


class RangeQueue:
    """Hands out ranges ``[lo, hi)`` of ``len(weights)`` roots, from the back (the
    degeneracy order's heavy end, as the master serves CPU workers) to the front.

    Guided self-scheduling on estimated work: a range holds about
    ``1 / (2 * workers)`` of the work still in the queue, but at least
    ``1 / (workers * ranges_per_worker)`` of all of it (and at least one root),
    so the first ranges are large and the last ones small enough to even out
    the workers' finishing times. Ranges given back (their worker died) come
    out again before new ones.

    >>> q = RangeQueue(np.ones(100), workers=2, ranges_per_worker=4)
    >>> q.next(), q.next()
    ((75, 100), (56, 75))
    >>> q.give_back((56, 75)); q.next()
    (56, 75)
    >>> [q.next() for _ in range(5)], bool(q)
    ([(42, 56), (29, 42), (16, 29), (3, 16), (0, 3)], False)
    """

    def __init__(self, weights, workers: int, ranges_per_worker: int = 16):
        weights = np.asarray(weights, np.float64)
        self._prefix = np.concatenate([[0.0], np.cumsum(weights)])
        self._hi = weights.size
        total = float(self._prefix[-1])
        self._share = 1.0 / (2 * workers)
        self._least = total / (workers * ranges_per_worker)
        self._again: list[tuple[int, int]] = []
        self.handed_out = 0

    def __bool__(self) -> bool:
        return bool(self._again) or self._hi > 0

    def next(self) -> tuple[int, int]:
        """The next range; IndexError when the queue is empty."""
        if self._again:
            return self._again.pop()
        if self._hi <= 0:
            raise IndexError("no range left")
        hi = self._hi
        want = max(self._prefix[hi] * self._share, self._least)
        lo = int(np.searchsorted(self._prefix, self._prefix[hi] - want, side="right")) - 1
        lo = min(max(lo, 0), hi - 1)
        self._hi = lo
        self.handed_out += 1
        return lo, hi

    def give_back(self, rng: tuple[int, int]) -> None:
        """Queues a range again (its worker was lost before it finished)."""
        self._again.append(rng)
