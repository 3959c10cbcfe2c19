"""Range records of first vertices, ``[-1 - lo, hi]``: cutting the vertices into
ranges of alike work, and handing a timed-out range's rest on. Shared by the
counting tasks (cliques, triangles, formulas)."""

from __future__ import annotations

import numpy as np

import gthinker

__all__ = ["spill_rest", "work_ranges"]


@gthinker.compiler.jit("counting functions", nogil=True)
def _spill_range(ctx, lo, hi):
    task = np.empty(2, np.int32)
    task[0] = -1 - lo
    task[1] = hi
    ctx.add_task(task)


@gthinker.compiler.jit("counting functions", nogil=True)
def spill_rest(ctx, v, hi):
    """A timed-out range task hands the rest of its range, [v, hi), on in two halves."""
    mid = (v + hi) >> 1
    if v < mid:
        _spill_range(ctx, v, mid)
    _spill_range(ctx, mid, hi)


def work_ranges(work: np.ndarray, parts: int, lo: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """About ``parts`` range records ``[-1 - a, b]`` of alike work, from the cumulative
    work ``work`` (``work[i]``: before vertex ``lo + i``; ``work[0] = 0``)."""
    hi = lo + work.size - 1
    cuts = lo + np.searchsorted(work[1:], np.linspace(0, work[-1], parts + 1)[1:-1]) \
        if hi > lo else []
    bounds = np.unique(np.concatenate([[lo], cuts, [hi]])).astype(np.int64)
    data = np.empty((bounds.size - 1, 2), np.int32)
    data[:, 0] = -1 - bounds[:-1]
    data[:, 1] = bounds[1:]
    return data.ravel(), np.arange(0, data.size + 1, 2, dtype=np.int64)
