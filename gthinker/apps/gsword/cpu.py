"""gSWORD's CPU sampler: batches of samples on the framework's CPU workers, one
task record per chunk of rounds (the walk itself is :mod:`gthinker.apps.gsword.sampling`'s)."""

from __future__ import annotations

import numpy as np
from numba import njit

import gthinker

from .sampling import namespace

__all__ = ["CPUSampler", "sampling_task"]


def sampling_task(est):
    """The Task that samples on the CPU workers with estimator ``est``: record
    [r_lo, r_hi], rounds of the current batch; params carry the batch and the
    addresses of its arrays (see :meth:`CPUSampler.run`)."""
    ns = namespace(est, "cpu")
    cached = ns.get("_cpu_task_class")
    if cached is not None:
        return cached
    from numba import carray, types

    from gthinker.extending import pointer_intrinsic

    f64 = pointer_intrinsic(types.float64)
    i64 = pointer_intrinsic(types.int64)
    i32 = pointer_intrinsic(types.int32)
    sample_rounds = ns["_sample_rounds"]
    refines = bool(est.refines)

    @njit(nogil=True)
    def run_rounds(P, rec):
        cgp = carray(i64(P[0]), P[1])
        cgi = carray(i32(P[2]), P[3])
        rounds = P[8]
        nslots = P[12]
        nq = P[13]
        out_sum = carray(f64(P[9]), rounds)
        out_valid = carray(i64(P[10]), rounds)
        t_inst = carray(i32(P[11]), (max(nslots, 1), nq))
        t_depth = carray(i64(P[14]), max(nslots, 1))
        t_weight = carray(f64(P[15]), max(nslots, 1))
        sample_rounds(cgp, cgi, P[4], P[5], P[6], rec[0], rec[1], P[7], refines,
                      out_sum, out_valid, t_inst, t_depth, t_weight)

    def compute(ctx, record):
        run_rounds(ctx.params, record)

    cls = type(f"GSwordSample_{est.name}", (gthinker.Task,), {
        "compute": staticmethod(compute), "__doc__": "gSWORD sampling on the CPU workers.",
    })
    ns["_cpu_task_class"] = cls
    return cls


class CPUSampler:
    """Samples a batch on the framework's CPU workers: one record per chunk of rounds."""

    CHUNK = 8  # rounds per task record

    def __init__(self, est, cg, data, threads):
        self.task = sampling_task(est)
        self.task.compiled()
        self.cg = cg
        self.data = data
        self.threads = threads

    def run(self, batch, seed, stop=None):
        """Fills ``batch`` (a :class:`gthinker.apps.gsword.sampling.Batch`)."""
        cg = self.cg
        nq = cg.num_positions
        if cg.empty():
            return
        starts = np.arange(0, batch.rounds, self.CHUNK, dtype=np.int64)
        recs = np.stack([starts, np.minimum(starts + self.CHUNK, batch.rounds)], 1)
        data = recs.astype(np.int32).ravel()
        rec_starts = np.arange(0, 2 * len(recs) + 1, 2, dtype=np.int64)
        P = np.array([
            cg.cgp.ctypes.data, cg.cgp.size, cg.cgi.ctypes.data, cg.cgi.size,
            seed, batch.first, batch.n, batch.every,
            batch.rounds, batch.out_sum.ctypes.data, batch.out_valid.ctypes.data,
            batch.t_inst.ctypes.data, batch.slots, nq, batch.t_depth.ctypes.data,
            batch.t_weight.ctypes.data], np.int64)
        gthinker.run(self.task, self.data, vertices=np.zeros(0, np.int32),
                     records=(data, rec_starts), params=P, threads=self.threads,
                     histogram_bins=1, stop=stop)
