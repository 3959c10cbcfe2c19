"""How every kernel is compiled, sized and launched, in one place.

* :func:`kernel`: ``cuda.jit`` of a kernel function, once per process (keyed by its
  name and any compile-time values), its machine code kept in gthinker's compile cache
  so that a later process loads it (the simulator compiles nothing).
* :func:`multiprocessors` and :func:`blocks`: launch geometry from the device (one
  block on the simulator, which runs every thread as a Python thread).
* :class:`Launch`: a launch with fixed arguments. The first call goes through
  Numba-CUDA's dispatcher (which compiles or loads the kernel); from the second on, the
  arguments are marshalled once and each call launches with them directly. The
  dispatcher's type checks and marshalling took 80-300 us a launch on the GPU machine's
  host, more than a small graph's kernel. This is the one place that reaches into
  Numba-CUDA's internals: where they are not the ones it was written for (another
  version, the simulator), every call goes through the dispatcher.
"""

from __future__ import annotations

import threading

from gthinker import compiler

from . import simulator
from .availability import numba_cuda

__all__ = ["Launch", "blocks", "kernel", "multiprocessors"]

_compiled: dict = {}
_lock = threading.Lock()


def kernel(fn, *, name: str, label: str, key=(), options=None):
    """``cuda.jit(fn, **options)``, compiled once per process for ``(name, key)`` and kept
    in the compile cache under ``name`` (``label`` names it in messages). ``options``:
    compiler options such as ``launch_bounds`` (the simulator takes none of them)."""
    with _lock:
        found = _compiled.get((name, key))
        if found is None:
            if simulator.enabled():  # the simulator compiles nothing
                found = numba_cuda().jit(fn)
            else:
                found = numba_cuda().jit(fn, **dict(options or {}))
                compiler.attach(found, target="cuda", name=name, label=label)
            _compiled[(name, key)] = found
        return found


def multiprocessors() -> int:
    """Streaming multiprocessors of this thread's device (1 on the simulator)."""
    if simulator.enabled():
        return 1
    return int(numba_cuda().get_current_device().MULTIPROCESSOR_COUNT)


def blocks(per_multiprocessor: int, items: int | None = None, per_block: int = 1) -> int:
    """Blocks of a launch: ``per_multiprocessor`` on each multiprocessor (one block on
    the simulator), no more than ``items`` need at ``per_block`` items a block."""
    n = 1 if simulator.enabled() else multiprocessors() * int(per_multiprocessor)
    if items is not None:
        n = min(n, -(-int(items) // int(per_block)))
    return max(1, n)


class Launch:
    """A launch of ``compiled`` on ``grid`` blocks of ``block`` threads with fixed
    ``args``: call it to launch (asynchronously), :attr:`wait` waits for it."""

    def __init__(self, compiled, grid, block, args):
        self.kernel = compiled
        self.grid, self.block = int(grid), int(block)
        self.args = args  # kept alive: the marshalled arguments point into them
        self._calls = 0
        self._direct = None
        self.wait = numba_cuda().synchronize  #: waits for the launch

    def __call__(self):
        if self._direct is not None:
            self._direct()
            return
        self._dispatch()
        self._calls += 1
        if self._calls == 2:  # a launch that repeats: marshal it once
            self._direct = self._marshal() or self._dispatch

    def _dispatch(self):
        self.kernel[self.grid, self.block](*self.args)

    def _marshal(self):
        """A function that launches with the arguments marshalled now, or None."""
        if simulator.enabled():
            return None
        try:
            from cuda.core import LaunchConfig, launch
            from numba.cuda.cudadrv import driver

            compiled = self.kernel.overloads[tuple(self.kernel.typeof_pyval(a)
                                                   for a in self.args)]
            stream = driver._to_core_stream(0)
            values: list = []
            for ty, val in zip(compiled.argument_types, self.args, strict=True):
                compiled._prepare_args(ty, val, stream, [], values)
            config = LaunchConfig(grid=self.grid, block=self.block, shmem_size=0)
            fn = compiled._codelibrary.get_cufunc().kernel
        except Exception:  # noqa: BLE001 - any mismatch: keep the dispatcher
            return None
        self.wait = getattr(stream, "sync", numba_cuda().synchronize)  # the default stream's
        return lambda: launch(stream, config, fn, *values)
