"""Warp intrinsics for Numba's CUDA simulator.

The simulator (``NUMBA_ENABLE_CUDASIM=1``) runs each GPU thread of a block as a
Python thread but has no ``shfl_sync``, ``ballot_sync`` and friends (nor
``nanosleep``, which here yields to the other threads). This
module adds them: the lanes of a warp meet at a barrier, publish their value
in an exchange slot, meet again, and each computes its result from the
warp's values. That is exact for converged warps, which is what warp-centric
code (and every kernel of gthinker) requires; a lane that skips a call makes
the others fail with a clear error instead of hanging. It also puts a lock
around the simulator's creation of shared arrays, which lacks one.

:func:`install` is called by :mod:`gthinker.gpu` when the simulator is on,
so apps (and their tests) can run GPU code on any machine.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from contextlib import contextmanager

__all__ = ["install", "enabled", "fast_switching", "turn", "turn_given_up"]

#: Seconds a lane waits at a barrier or warp call for the others before the run fails as a
#: deadlock (a divergent warp): long enough for a 2-core machine under heavy load, where
#: every simulated lane is a Python thread.
_TIMEOUT = 300.0
_lock = threading.Lock()


def enabled() -> bool:
    """Whether Numba runs CUDA code on its simulator (read without importing Numba
    when it is not imported yet)."""
    config = sys.modules.get("numba.core.config")
    if config is not None:
        return bool(config.ENABLE_CUDASIM)
    return os.environ.get("NUMBA_ENABLE_CUDASIM", "0").strip() not in ("", "0")


class _Warp:
    """Exchange slots of one warp, double-buffered so one barrier per call
    suffices, and a spinning barrier (the simulator's threads wake far
    faster from a yield loop than from condition variables)."""

    def __init__(self, parties):
        self.parties = parties
        self.slots = ([0] * parties, [0] * parties)
        self.arrived = 0
        self.generation = 0
        self.lock = threading.Lock()

    def wait(self):
        with self.lock:
            gen = self.generation
            self.arrived += 1
            if self.arrived == self.parties:
                self.arrived = 0
                self.generation += 1
                return gen
        deadline = time.monotonic() + _TIMEOUT
        while self.generation == gen:
            time.sleep(0)
            if time.monotonic() > deadline:
                raise RuntimeError(
                    "warp intrinsic: not every lane of the warp reached the call "
                    "(warp-level calls need a converged warp)"
                )
        return gen


def _warp():
    thread = threading.current_thread()
    mine = getattr(thread, "_gthinker_warp", None)  # a thread lives in one block
    if mine is not None:
        return mine
    manager = thread._manager
    block = 1
    for d in manager._block_dim:
        block *= d
    w = thread.thread_id // 32
    with _lock:
        warps = manager.__dict__.setdefault("_gthinker_warps", {})
        warp = warps.get(w)
        if warp is None:
            warp = warps[w] = _Warp(min(32, block - 32 * w))
    thread._gthinker_warp = warp, thread.thread_id % 32
    return thread._gthinker_warp


def _exchange(value):
    warp, lane = _warp()
    # The buffer of this call is chosen by the generation parity; a lane can
    # only write the same buffer again two calls later, after every lane has
    # passed the next barrier, i.e. after every lane has read this one.
    slots = warp.slots[warp.generation & 1]
    slots[lane] = value
    warp.wait()
    return list(slots), lane


def _mask_values(mask, values):
    return [(i, v) for i, v in enumerate(values) if (mask >> i) & 1]


def _shfl_sync(self, mask, value, src):
    values, _ = _exchange(value)
    return values[src % len(values)]


def _shfl_up_sync(self, mask, value, delta):
    values, lane = _exchange(value)
    return values[lane - delta] if lane >= delta else value


def _shfl_down_sync(self, mask, value, delta):
    values, lane = _exchange(value)
    return values[lane + delta] if lane + delta < len(values) else value


def _shfl_xor_sync(self, mask, value, lane_mask):
    values, lane = _exchange(value)
    other = lane ^ lane_mask
    return values[other] if other < len(values) else value


def _ballot_sync(self, mask, predicate):
    values, _ = _exchange(bool(predicate))
    bits = 0
    for i, v in _mask_values(mask, values):
        if v:
            bits |= 1 << i
    return bits


def _any_sync(self, mask, predicate):
    values, _ = _exchange(bool(predicate))
    return int(any(v for _, v in _mask_values(mask, values)))


def _all_sync(self, mask, predicate):
    values, _ = _exchange(bool(predicate))
    return int(all(v for _, v in _mask_values(mask, values)))


def _syncwarp(self, mask=0xFFFFFFFF):
    _exchange(0)


def _activemask(self):
    warp, _ = _warp()
    return (1 << warp.parties) - 1


def _lanemask_lt(self):
    return (1 << (threading.current_thread().thread_id % 32)) - 1


def _nanosleep(self, ns):
    time.sleep(0)  # a spinning lane lets the others run


@contextmanager
def fast_switching(interval: float = 1e-4):
    """Runs a block with a short GIL switch interval: the simulator's threads
    then meet at warp calls about ten times faster."""
    old = sys.getswitchinterval()
    sys.setswitchinterval(min(old, interval))
    try:
        yield
    finally:
        sys.setswitchinterval(old)


# While a simulated kernel runs, the simulator swaps the ``cuda`` global of every
# module whose device code it runs (and it runs one kernel at a time), so host code
# of several GPU workers (one per device) must not overlap: they take turns.
_turn = threading.Lock()


@contextmanager
def turn():
    """Holds the simulator's one turn to drive a GPU (a no-op without the simulator)."""
    if not enabled():
        yield
        return
    with _turn:
        yield


@contextmanager
def turn_given_up():
    """Gives the turn (held by this thread) to other GPU workers for a block, e.g.
    while waiting for work (a no-op without the simulator)."""
    if not enabled():
        yield
        return
    _turn.release()
    try:
        yield
    finally:
        _turn.acquire()


_shared_lock = threading.Lock()


def _shared_array(self, shape, dtype, alignment=None):
    """The simulator's ``cuda.shared.array``, with its one missing piece: a lock. Every
    thread of a block asks for the array, and the first to ask creates it; without the
    lock two threads could both find none and create one each, so that lanes of one warp
    wrote and read different "shared" arrays (a rare failure, seen on loaded 2-core
    machines). Same rules otherwise: an allocation is known by its caller's file and
    line; size 0 is the dynamic shared memory."""
    import numpy as np
    from numba.core import types
    from numba.np import numpy_support

    if alignment is not None:
        raise RuntimeError("Array alignment is not supported in cudasim")
    if isinstance(dtype, types.Type):
        dtype = numpy_support.as_dtype(dtype)
    if shape == 0:
        count = self._dynshared_size // dtype.itemsize
        return np.frombuffer(self._dynshared.data, dtype=dtype, count=count)
    frame = sys._getframe(1)
    caller = (frame.f_code.co_filename, frame.f_lineno)
    with _shared_lock:
        res = self._allocations.get(caller)
        if res is None:
            res = self._allocations[caller] = np.empty(shape, dtype)
    return res


#: Seconds between two looks of a block's manager at its threads.
_POLL = 0.001


def _run_block(self, grid_point, *args):
    """The simulator's BlockManager.run, polling its threads every ``_POLL``
    seconds instead of in a busy loop (which took the GIL from the threads it
    waits for: simulated kernels run about 25% faster). Same rules: a thread's
    exception aborts the block; when every live thread waits at syncthreads,
    all are released."""
    import numpy as np
    from numba.cuda.simulator.kernel import BlockThread

    threads = []
    for block_point in np.ndindex(*self._block_dim):
        t = BlockThread(lambda: self._f(*args), self, grid_point, block_point, self._debug)
        t.start()
        threads.append(t)
    live = threads
    while live:
        time.sleep(_POLL)
        for t in live:
            if t.exception:
                for other in threads:
                    other.abort = True
                    other.syncthreads_blocked = False
                    other.syncthreads_event.set()
                raise t.exception[0].with_traceback(t.exception[1])
        live = [t for t in live if t.is_alive()]
        if live and all(t.syncthreads_blocked for t in live):
            for t in live:
                t.syncthreads_blocked = False
                t.syncthreads_event.set()
    for t in threads:
        if t.exception:
            raise t.exception[0].with_traceback(t.exception[1])


def install() -> None:
    """Adds the warp intrinsics to the simulator's fake ``cuda`` module, a block
    manager that does not spin and shared arrays created under a lock (idempotent)."""
    from numba.cuda.simulator import kernel, kernelapi

    if {"_block_dim", "_f", "_debug"} <= set(vars(kernel.BlockManager(None, (1,), (1,), False))):
        kernel.BlockManager.run = _run_block  # else a numba-cuda of another layout: keep its own

    shared = kernelapi.FakeCUDAShared
    if {"_allocations", "_dynshared", "_dynshared_size"} <= set(vars(shared(0))):
        shared.array = _shared_array  # else a numba-cuda of another layout: keep its own

    module = kernelapi.FakeCUDAModule
    for name, fn in {
        "shfl_sync": _shfl_sync,
        "shfl_up_sync": _shfl_up_sync,
        "shfl_down_sync": _shfl_down_sync,
        "shfl_xor_sync": _shfl_xor_sync,
        "ballot_sync": _ballot_sync,
        "any_sync": _any_sync,
        "all_sync": _all_sync,
        "syncwarp": _syncwarp,
        "activemask": _activemask,
        "lanemask_lt": _lanemask_lt,
        "nanosleep": _nanosleep,
    }.items():
        setattr(module, name, fn)
