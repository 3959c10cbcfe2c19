"""The support searches of one batch of patterns on the framework's CPU workers.

A task record is ``[p, i, lo, hi]``: pattern ``p`` of the batch, its vertex ``i``, and the
candidates ``by_label[lo:hi]`` of that vertex (the data vertices of its label that the
batch's filter keeps). The
initial records cut each (pattern, vertex) into ranges so that every worker has work from
the first level on; a task past its time budget hands the two halves of what it has not
searched to other workers (the runtime's timeout decomposition). ``params`` carry the
addresses of the batch's arrays (:class:`Batch`).
"""

from __future__ import annotations

import numpy as np
from numba import carray, njit, types

from gthinker.extending import Task, pointer_intrinsic

from .search import INFREQUENT, MAXV, PLAN_LEN, REACHED, build

__all__ = ["SupportTask", "params"]

_i32 = pointer_intrinsic(types.int32)
_i64 = pointer_intrinsic(types.int64)
_u8 = pointer_intrinsic(types.uint8)

_check_vertex, _reached = build(njit(nogil=True))

# params: the addresses and sizes of the batch's arrays
(_VLAB, _ELAB, _NELAB, _PLANS, _NPAT, _MARKS, _N, _STRIDE, _FAILS, _DEAD, _CAND, _BYLABEL,
 _NBYLABEL, _SUPPORT, _FOUND, _CAP, _NPARAMS) = range(17)


def params(batch) -> np.ndarray:
    """The ``params`` of a run over ``batch`` (a :class:`gthinker.apps.fsm.app.Batch`)."""
    p = np.zeros(_NPARAMS, np.int64)
    p[_VLAB], p[_ELAB], p[_NELAB] = (batch.vlab.ctypes.data, batch.elab.ctypes.data,
                                     batch.elab.size)
    p[_PLANS], p[_NPAT] = batch.plans.ctypes.data, batch.num_patterns
    p[_MARKS], p[_N], p[_STRIDE] = batch.marks.ctypes.data, batch.n, batch.stride
    p[_FAILS], p[_DEAD] = batch.fails.ctypes.data, batch.dead.ctypes.data
    p[_CAND], p[_BYLABEL] = batch.cand.ctypes.data, batch.by_label.ctypes.data
    p[_NBYLABEL] = batch.by_label.size
    p[_SUPPORT] = batch.support
    p[_FOUND], p[_CAP] = batch.found.ctypes.data, batch.cap
    return p


@njit(nogil=True)
def _search_range(ctx, P, rec):
    n, npat, stride = P[_N], P[_NPAT], P[_STRIDE]
    vlab = carray(_i32(P[_VLAB]), n)
    elab = carray(_i32(P[_ELAB]), max(P[_NELAB], 1))
    plans = carray(_i32(P[_PLANS]), (npat * MAXV, PLAN_LEN))
    marks = carray(_u8(P[_MARKS]), npat * stride * n)
    fails = carray(_i64(P[_FAILS]), npat * MAXV)
    dead = carray(_u8(P[_DEAD]), npat)
    cand = carray(_i64(P[_CAND]), npat * MAXV)
    by_label = carray(_i32(P[_BYLABEL]), max(P[_NBYLABEL], 1))
    found = carray(_i64(P[_FOUND]), npat * MAXV)
    p, i, lo, hi = rec[0], rec[1], rec[2], rec[3]
    plan = plans[p * MAXV + i]
    base = p * stride * n
    mapped = np.empty(MAXV, np.int64)
    cursor = np.empty(MAXV, np.int64)
    has_el = P[_NELAB] > 0
    for k in range(lo, hi):
        if dead[p]:
            return
        if ctx.timed_out() and hi - k > 1:
            mid = (k + hi) // 2
            ctx.add_task(np.array([p, i, k, mid], np.int32))
            ctx.add_task(np.array([p, i, mid, hi], np.int32))
            return
        v = by_label[k]
        if marks[base + i * n + v]:
            continue
        ctx.count(0)
        if _check_vertex(ctx.indptr, ctx.indices, vlab, elab, has_el, plan, v, marks,
                         base, n, mapped, cursor, found, p * MAXV):
            if P[_CAP] > 0 and _reached(found, p * MAXV, plan[0], P[_CAP]):
                dead[p] = REACHED
        else:
            fails[p * MAXV + i] += 1  # racy: a lost increment only stops later
            if cand[p * MAXV + i] - fails[p * MAXV + i] < P[_SUPPORT]:
                dead[p] = INFREQUENT


class SupportTask(Task):
    """One range of candidates of one pattern vertex (records only; no vertex roots)."""

    counters = ("searches",)

    @staticmethod
    def compute(ctx, record):
        _search_range(ctx, ctx.params, record)
