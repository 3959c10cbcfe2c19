"""Stopping a running kernel: :class:`StopFlag` on the host, :func:`stop_requested` on
the device.

A job stops between two launches by itself (its engines look at ``handle.aborting``),
but one launch may run for minutes (a persistent kernel searching below a hub, one launch
over every edge of a graph), and a kernel cannot see the job's
:class:`~gthinker.StopToken`. A :class:`StopFlag` is one int32 in host-mapped pinned
memory: the host sets it, from any thread or a signal handler, and warps read it from the
device (a volatile load: never a cached copy) where they claim work (a task, a chunk of
edges, a window of candidates, a first vertex) at most every :data:`POLL` claims, and leave
(a kernel that leaves early still adds what it found, and its last block still resets the
launch state). What an engine needs:

* one argument: ``flag.array`` among its kernel's arguments;
* one device call where a warp claims work: ``if warp_stop_requested(stop): break``
  (:func:`stop_requested` for one thread, :func:`block_stop_requested` for a block);
* on the host, the job's flag (``setup.stop``, :class:`~gthinker.gpu.engine.EngineSetup`):
  pass its ``array`` directly, or, for a launch prepared once and kept from job to job,
  keep a flag of its own with the launch, ``clear`` it when a job starts and ``link`` it to
  the job's (``unlink`` when the job ends); and wait for a launch with :meth:`StopFlag.wait`
  (it sets the flag when the job is stopping, and on Ctrl-C while it waits) instead of a
  blocking synchronisation.

The runtime makes one flag per gpu or hybrid job and attaches it to the job's stop token
and to the Ctrl-C watch (:mod:`gthinker.stopping`: both call ``flag.stop(message)``, as
they do a job's), so ``token.set()`` reaches the kernels at once; for jobs that run
through the master, the engines' waits set their flags when the master says the job is
aborting (an error, Ctrl-C in the main thread).
"""

from __future__ import annotations

import threading
import time

import numpy as np
from numba import cuda

from . import simulator
from .availability import numba_cuda
from .device_helpers import FULL_MASK

__all__ = ["NAP_SECONDS", "POLL", "SPIN_LOOKS", "StopFlag", "block_stop_requested", "kernels_done",
           "stop_requested", "warp_stop_requested"]

#: Claims a warp makes between two looks at the flag. A look is a read of host memory
#: over PCIe (about a microsecond); a claim is a task, 32 edges or a window.
POLL = 16
#: A host thread waiting for a launch (:meth:`StopFlag.wait`) looks at it this many times
#: between mere yields of its time slice (a short launch ends within microseconds of its
#: end), then sleeps :data:`NAP_SECONDS` between looks.
SPIN_LOOKS = 2000
NAP_SECONDS = 2e-4


class StopFlag:
    """A flag that running kernels poll (see the module docstring). Its device memory is
    made when first asked for (:attr:`array`, inside the device's context: portable, so
    every device of the process can read it), so a flag that only passes a stop on to
    others (:meth:`link`) costs no pinned memory."""

    def __init__(self):
        self._lock = threading.RLock()  # set() may run in a signal handler during link()
        self._raised = False
        self._array = None
        self._linked: list[StopFlag] = []

    @property
    def array(self):
        """The int32[1] in host-mapped memory to pass to kernels (1: stop)."""
        with self._lock:
            if self._array is None:
                self._array = numba_cuda().mapped_array(1, np.int32, portable=True)
                self._array[0] = int(self._raised)
            return self._array

    def set(self) -> None:
        """Asks the kernels reading this flag, and every linked flag's, to stop."""
        with self._lock:
            self._raised = True
            if self._array is not None:
                self._array[0] = 1
            for flag in self._linked:
                flag.set()

    def stop(self, message: str = "") -> None:
        """:meth:`set`, as a :class:`~gthinker.StopToken` and the Ctrl-C watch stop a job."""
        self.set()

    def clear(self) -> None:
        """Unsets this flag (not the linked ones): a kept launch's flag, for its next job."""
        with self._lock:
            self._raised = False
            if self._array is not None:
                self._array[0] = 0

    def is_set(self) -> bool:
        return self._raised

    def link(self, flag: StopFlag) -> None:
        """From now on :meth:`set` sets ``flag`` too (at once if this one is set)."""
        with self._lock:
            self._linked.append(flag)
            if self._raised:
                flag.set()

    def unlink(self, flag: StopFlag) -> None:
        with self._lock:
            self._linked = [f for f in self._linked if f is not flag]

    def wait(self, done, stopping=None) -> None:
        """Waits until ``done()`` (e.g. :func:`kernels_done`; see :data:`SPIN_LOOKS`),
        and sets this flag once ``stopping()`` is true (the job is
        aborting). Ctrl-C while it waits (KeyboardInterrupt, or any exception) sets the
        flag too, waits for the kernels to leave and is raised again: no kernel outlives a
        stopped job. The host thread stays in Python meanwhile, so that signal handlers run
        (a blocking synchronisation would hold them back until the kernel ends)."""
        looks = 0
        try:
            while not done():
                if stopping is not None and not self._raised and stopping():
                    self.set()
                looks += 1
                time.sleep(0 if looks < SPIN_LOOKS else NAP_SECONDS)
        except BaseException:
            self.set()
            while not done():
                time.sleep(NAP_SECONDS)
            raise


def kernels_done():
    """A ``done`` for :meth:`StopFlag.wait`: true once the work launched so far on this
    thread's device (default stream) has finished. On the simulator launches are
    synchronous: always true."""
    if simulator.enabled():
        return lambda: True
    event = numba_cuda().event(timing=False)
    event.record()
    return event.query


# ---- the device side ---------------------------------------------------------------------


if simulator.enabled():
    def _load(flag):
        return flag[0]
else:
    from llvmlite import ir
    from numba import types
    from numba.cuda.extending import intrinsic

    @intrinsic
    def _load(typingctx, flag):
        """``flag[0]`` by a volatile load (``ld.volatile``): read from memory each time,
        never hoisted out of a loop nor served from a cache."""
        if getattr(flag, "dtype", None) != types.int32:
            return None  # a StopFlag's array only
        sig = types.int32(flag)

        def codegen(context, builder, signature, args):
            data = context.make_array(signature.args[0])(context, builder, args[0]).data
            fnty = ir.FunctionType(ir.IntType(32), [data.type])
            asm = ir.InlineAsm(fnty, "ld.volatile.u32 $0, [$1];", "=r,l", side_effect=True)
            return builder.call(asm, [data])

        return sig, codegen


@cuda.jit(device=True, inline=True)
def stop_requested(flag):
    """Whether the host set ``flag`` (a :attr:`StopFlag.array`), as this thread reads it."""
    return _load(flag) != 0


@cuda.jit(device=True, inline=True)
def warp_stop_requested(flag):
    """:func:`stop_requested` as lane 0 read it, on every lane: the whole warp must call it
    (converged), and it leaves together."""
    seen = 0
    if (cuda.threadIdx.x & 31) == 0:
        seen = _load(flag)
    return cuda.shfl_sync(FULL_MASK, seen, 0) != 0


@cuda.jit(device=True)
def block_stop_requested(flag):
    """:func:`stop_requested` as thread 0 of the block read it, on every thread: the whole
    block must call it (it synchronises the block twice)."""
    seen = cuda.shared.array(1, np.int32)
    if cuda.threadIdx.x == 0:
        seen[0] = _load(flag)
    cuda.syncthreads()
    stop = seen[0] != 0
    cuda.syncthreads()  # every thread has read it before thread 0 writes the next look
    return stop
