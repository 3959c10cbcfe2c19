"""gSWORD's trawling: the samples stopped after ``d`` vertices get the rest of
their matches counted exactly on the CPU workers (the SM app's enumeration,
:func:`gthinker.apps.matching.search.search`), while the sampler draws the next batch.

A batch's stopped samples become records ``[slot, d, M[0], ..., M[d-1]]``
(:func:`trawl_records`; the planner's partial-match record with the sample's
trawl slot as its tag), enumerated by :class:`Trawl` tasks in a job of their own
(:class:`TrawlJob`) until the window closes; :func:`finish_trawl` adds each
sample's value to its round.
"""

from __future__ import annotations

import threading
import time

import numpy as np

import gthinker

from ..matching.planner import H_BACK, H_BACK_PTR, is_admissible
from ..matching.search import search
from .sampling import ROUND

__all__ = ["MIN_TRAWL_WINDOW", "Trawl", "TrawlJob", "WALK_STREAM", "finish_trawl",
           "provisional_trawl", "settle_trawl", "stopped_slots", "trawl_records",
           "trawl_records_of"]

#: The walks of cut-off estimates draw from the seed xor this (a stream of their own).
WALK_STREAM = 0x5DEECE66D
#: Seconds of GPU sampling below which a GPU run starts no enumeration: starting a
#: trawl job and cutting it off took 10-25 ms on the H100 machine's host (16 threads,
#: ~20,000 records), and none of them finished within windows of 1-20 ms.
MIN_TRAWL_WINDOW = 0.02


@gthinker.compiler.jit("gSWORD functions", nogil=True)
def _prefix_ok(ctx, P, M, k):
    """Is M[:k] a valid partial match of plan P (the planner's rule, and every
    backward edge a data edge)?"""
    for p in range(k):
        if not is_admissible(P, M, 0, p, -1, p, M[p]):
            return False
        for s in range(P[P[H_BACK_PTR] + p], P[P[H_BACK_PTR] + p + 1]):
            nb = ctx.neighbors(M[P[P[H_BACK] + s]])
            i = np.searchsorted(nb, M[p])
            if i >= nb.size or nb[i] != M[p]:
                return False
    return True


@gthinker.compiler.jit("gSWORD functions", nogil=True)
def _trawl_compute(ctx, rec):
    """Record [slot, k, M...]: count the matches that extend M[:k] (the SM
    app's enumeration) into histogram 0, bin slot; histogram 1, bin slot gets
    (records handed out - 1), so a slot whose enumeration finished sums to -1."""
    slot = rec[0]
    found = 0
    added = 0
    if rec.size >= 2 and _prefix_ok(ctx, ctx.params, rec[2:], rec[1]):
        found, added = search(ctx, rec, 1)
    ctx.add_to_histogram(0, slot, found)
    ctx.add_to_histogram(1, slot, added - 1)
    return 0


class Trawl(gthinker.Task):
    """CPU side of trawling: exact enumeration of a sampled partial instance."""

    histograms = ("matches", "pending")

    @staticmethod
    def compute(ctx, record):
        _trawl_compute(ctx, record)


def stopped_slots(cg, batch):
    """Which trawl slots of ``batch`` hold a prefix to enumerate: a sample stopped
    after d vertices, 0 < d < nq (0: it died first; nq: it ran to the end)."""
    depth = batch.t_depth[: batch.slots]
    return (depth > 0) & (depth < cg.num_positions)


def trawl_records(cg, batch):
    """SM records ``(data, starts)``, record i = [slot, d, data vertices...], of the
    batch's samples stopped after d vertices (:func:`stopped_slots`), and their slots."""
    nq = cg.num_positions
    slots = np.flatnonzero(stopped_slots(cg, batch))
    d = batch.t_depth[slots]
    coff = cg.candidate_offsets()
    rows = np.empty((len(slots), nq + 2), np.int64)
    rows[:, 0] = slots
    rows[:, 1] = d
    rows[:, 2:] = cg.cgi[coff[None, :] + batch.t_inst[slots]]
    keep = np.arange(nq + 2)[None, :] < (d + 2)[:, None]
    starts = np.zeros(len(slots) + 1, np.int64)
    starts[1:] = np.cumsum(d + 2)
    return slots, (rows[keep].astype(np.int32), starts)


def trawl_records_of(cg, batches):
    """:func:`trawl_records` of several batches as one job's records, each tagged with
    its slot plus the slots of the batches before it. Returns (records, [(batch,
    slots, offset)]) for :func:`settle_trawl`."""
    parts, data, starts, offset, at = [], [], [np.zeros(1, np.int64)], 0, 0
    for b in batches:
        slots, (d, st) = trawl_records(cg, b)
        d = d.copy()
        d[st[:-1]] += offset
        data.append(d)
        starts.append(st[1:] + at)
        parts.append((b, slots, offset))
        offset += b.slots
        at += d.size
    records = (np.concatenate(data) if data else np.zeros(0, np.int32), np.concatenate(starts))
    return records, parts


def provisional_trawl(cg, batch):
    """Adds the trawled samples' values as their cut-off estimates (``batch.walked``
    times the weight; a slot that ran to the end: its weight) to their rounds,
    before any enumeration: :func:`settle_trawl` corrects the finished ones."""
    nq = cg.num_positions
    if batch.every <= 0 or not batch.slots:
        return
    depth = batch.t_depth[: batch.slots]
    value = np.where(depth == nq, 1.0, batch.walked) * batch.t_weight[: batch.slots]
    value[depth == 0] = 0.0
    rounds = (np.arange(batch.slots) * batch.every) // ROUND
    batch.out_sum += np.bincount(rounds, value, minlength=batch.rounds)
    batch.out_valid += np.bincount(rounds[depth == nq], minlength=batch.rounds)
    batch.t_depth[: batch.slots][depth == nq] = 0  # no record: it is a full sample


def settle_trawl(batch, slots, matches, finished, stats):
    """The enumerations of ``batch``'s trawled samples ended (``finished``) or were
    cut off: a finished one's value becomes weight x its exact count (its cut-off
    estimate, added by :func:`provisional_trawl`, is taken back)."""
    done = slots[finished]
    if done.size:
        batch.out_sum += np.bincount((done * batch.every) // ROUND, batch.t_weight[done]
                                     * (matches[finished] - batch.walked[done]),
                                     minlength=batch.rounds)
    stats["matches"] += int(matches[finished].sum())
    stats["records"] += len(slots)
    stats["finished"] += int(finished.sum())
    stats["cut_off"] += int((~finished).sum())


class TrawlJob:
    """Enumerates a batch's trawled prefixes on the CPU workers, in a thread,
    until ``cut()``."""

    def __init__(self, data, plan_params, records, slots, threads):
        self.stop = gthinker.StopToken()
        self.result = None
        self.error = None
        self.slots = slots
        self.started = time.perf_counter()

        def work():
            try:
                self.result = gthinker.run(
                    Trawl, data, vertices=np.zeros(0, np.int32), records=records,
                    params=plan_params, threads=threads,
                    histogram_bins=max(int(slots.max()) + 1 if len(slots) else 1, 1),
                    stop=self.stop)
            except BaseException as exc:  # noqa: BLE001 - re-raised by cut()
                self.error = exc

        self.thread = threading.Thread(target=work, name="gsword-trawl", daemon=True)
        self.thread.start()

    def wait(self, seconds):
        """Waits until ``seconds`` after the start, or until the enumeration ends."""
        self.thread.join(max(0.0, self.started + seconds - time.perf_counter()))

    def cut(self):
        """Stops the enumeration; returns (matches, finished) per slot."""
        self.stop.set()
        self.thread.join()
        if self.error is not None:
            raise self.error
        hist = self.result.histograms
        matches = hist["matches"][self.slots]
        finished = hist["pending"][self.slots] == -1
        return matches, finished


def finish_trawl(ns, cg, batch, slots, matches, finished, seed, walks, refines, stats):
    """Adds each trawled sample's value to its round: W_d x (its exact count
    when the enumeration finished, else a fresh sampled estimate of it from
    ``walks`` walks, with ``ns``, the estimator's CPU namespace)."""
    rest = matches.astype(np.float64)
    cut = np.flatnonzero(~finished)
    if cut.size:
        values = np.empty(cut.size)
        ns["_walk_many"](cg.cgp, cg.cgi, batch.t_inst, batch.t_depth,
                         np.ascontiguousarray(slots[cut], dtype=np.int64),
                         np.int64(seed ^ WALK_STREAM), np.int64(batch.first),
                         np.int64(batch.every), np.int64(walks), refines, values)
        rest[cut] = values
    np.add.at(batch.out_sum, (slots * batch.every) // ROUND, batch.t_weight[slots] * rest)
    stats["matches"] += int(matches[finished].sum())
    stats["records"] += len(slots)
    stats["finished"] += int(finished.sum())
    stats["cut_off"] += int((~finished).sum())
