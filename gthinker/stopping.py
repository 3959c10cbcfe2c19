"""Stopping jobs from outside: :class:`StopToken`, Ctrl-C from any thread, and
SIGINT / SIGTERM in command-line programs.

A job stops the same way whatever asks it to: every worker's ``ctx.timed_out()``
turns true, so it ends its current task soon; records decomposed from then on
are dropped; GPU kernels leave at their next look at the job's stop flag (a running
launch too); ``run`` returns once every worker has stopped. Three ways in:

- :class:`StopToken` (``run(..., stop=token)``): the job returns its results so
  far with ``stopped == "stop"``. A GPU job's running kernels see it at once, through
  the job's stop flag (:mod:`gthinker.gpu.stop_flag`).
- Ctrl-C in a Python program: a job running in the main thread stops and ``run``
  raises :class:`KeyboardInterrupt` there (the C++ core checks for signals every
  0.1 s). Jobs running in other threads stop too (:func:`install` chains a SIGINT
  handler that reaches them) and ``run`` raises :class:`KeyboardInterrupt` in
  each of their threads, after its workers have stopped; at exit, the
  interpreter waits for running jobs to stop (their native threads must not
  outlive it).
- :class:`SignalStop` (the command line): SIGINT and SIGTERM set a token, so the
  job ends with a result the program can still print, marked as interrupted.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import threading

__all__ = ["StopToken", "SignalStop", "install", "running", "sigints"]


class StopToken:
    """Stops a running job from outside, cleanly: ``run(..., stop=token)``.

    ``token.set()`` (from any thread, e.g. a ``threading.Timer``, or from a
    signal handler) makes the job stop the way ``limit`` does: every worker's
    ``ctx.timed_out()`` turns true so it ends its current task soon, records
    decomposed from then on are dropped, and ``run`` returns the results found
    so far with ``stopped == "stop"`` (no exception). ``set`` may be called
    before the run (the job then stops at once), during it, or after it, and
    any number of times. A token stays set; use a new one for a new run. One
    token may be given to several runs, also at the same time: it stops all.
    """

    def __init__(self):
        # Reentrant: a Python signal handler that calls set() may run on the
        # main thread while that thread is inside set() or a run's attach.
        self._lock = threading.RLock()
        self._set = False
        #: What it stops: the _core.Master of each run it is attached to, and a GPU job's
        #: stop flag (:class:`gthinker.gpu.stop_flag.StopFlag`): anything with stop(message)
        self._jobs: list = []

    def set(self) -> int:
        """Asks the attached job(s), and any later one, to stop. Thread-safe,
        idempotent. Returns how many it asked (a GPU job's stop flag counts too: 0 means
        no job is running)."""
        with self._lock:
            self._set = True
            for job in self._jobs:  # under the lock: a run cannot detach (end) meanwhile
                job.stop("stopped by its StopToken")
            return len(self._jobs)

    def is_set(self) -> bool:
        with self._lock:
            return self._set

    def attach(self, job) -> None:
        """Called by ``run`` when its job starts (stops it at once if already set)."""
        with self._lock:
            self._jobs.append(job)
            if self._set:
                job.stop("stopped by its StopToken (set before the run)")

    def detach(self, job) -> None:
        """Called by ``run`` when its job has ended."""
        with self._lock:
            self._jobs = [j for j in self._jobs if j is not job]

    def __repr__(self) -> str:
        return f"StopToken(set={self.is_set()})"


class _Running:
    """A job between its start and its end, as the SIGINT handler sees it."""

    def __init__(self, job):
        self.job = job
        self.thread = threading.get_ident()
        self.interrupted = False
        self.ended = threading.Event()


_lock = threading.Lock()
_jobs: list[_Running] = []
_installed: list = []  # [the handler it replaced], once installed
_sigints = [0]  # SIGINTs handled so far


def sigints() -> int:
    """How many times Ctrl-C was pressed so far (while :func:`install`'s handler was set)."""
    return _sigints[0]


def _stop_background_jobs(message: str) -> None:
    main = threading.main_thread().ident
    with _lock:
        for r in _jobs:
            if r.thread != main and not r.interrupted:
                r.interrupted = True
                r.job.stop(message)


def _on_sigint(signum, frame):
    if _exception_would_be_ignored(frame):
        threading.Timer(0.05, os.kill, (os.getpid(), signum)).start()  # once out of there
        return
    _sigints[0] += 1
    _stop_background_jobs("interrupted (Ctrl-C)")
    previous = _installed[0]
    if callable(previous):
        previous(signum, frame)
    elif previous == signal.SIG_DFL:
        raise KeyboardInterrupt


def _wait_at_exit(timeout: float = 30.0) -> None:
    """Native worker threads must not outlive the interpreter: stop running jobs
    (e.g. in daemon threads, or after an interrupted join) and wait for them."""
    with _lock:
        pending = list(_jobs)
        for r in pending:
            r.job.stop("the Python interpreter is exiting")
    for r in pending:
        r.ended.wait(timeout)


def install() -> None:
    """Chains the SIGINT handler that stops jobs of other threads (idempotent).
    Only the main thread can set a handler; elsewhere this does nothing, and a
    handler the program set itself (not Python's default) is left alone."""
    if _installed or threading.current_thread() is not threading.main_thread():
        return
    current = signal.getsignal(signal.SIGINT)
    if current is not signal.default_int_handler:
        return
    signal.signal(signal.SIGINT, _on_sigint)
    _installed.append(current)
    atexit.register(_wait_at_exit)


@contextlib.contextmanager
def running(job, sigints_before: int):
    """Registers ``job`` while it runs; yields its entry, whose ``interrupted``
    says whether Ctrl-C stopped it from another thread. ``sigints_before``:
    :func:`sigints` when its ``run`` was called: a Ctrl-C since then (e.g.
    while it compiled) stops the job at once."""
    entry = _Running(job)
    with _lock:
        _jobs.append(entry)
        if sigints() != sigints_before and entry.thread != threading.main_thread().ident:
            entry.interrupted = True
            job.stop("interrupted (Ctrl-C)")
    try:
        yield entry
    finally:
        with _lock:
            _jobs.remove(entry)
        entry.ended.set()


def _exception_would_be_ignored(frame) -> bool:
    """Whether an exception raised in ``frame`` would be ignored or do harm: in the
    import system's callbacks, anywhere inside a callback that LLVM calls through
    ctypes (Numba's object cache, while it compiles), or in the Python that Numba
    runs while it boxes a compiled function's result (``numba.core.serialize``: an
    exception there made the caller crash or raise SystemError)."""
    if frame is not None and frame.f_code.co_filename.startswith("<frozen importlib"):
        return True
    if frame is not None and frame.f_globals.get("__name__") == "numba.core.serialize":
        return True
    while frame is not None:
        if frame.f_globals.get("__name__", "").startswith("llvmlite.binding"):
            return True
        frame = frame.f_back
    return False


class SignalStop:
    """For command-line programs: while active, SIGINT and SIGTERM set ``token``
    (pass it to the runs as ``stop=``), so the running job ends with a partial
    result; when no job is running, they raise :class:`KeyboardInterrupt`
    instead (e.g. while a graph loads). ``signum`` is the first signal received
    (None if none), ``exit_code`` the shell's code for it (130 or 143)."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self, ending: bool = False):
        #: The program ends when the block does: on leaving it, SIGINT and SIGTERM are
        #: ignored instead of restored, so one that comes while the interpreter exits
        #: neither kills it by SIGINT (exit -2) nor changes the exit code.
        self.ending = ending
        self.token = StopToken()
        self.signum: int | None = None
        self._previous: dict = {}

    def _handle(self, signum, frame):
        if self.signum is None:
            self.signum = signum
        if self.token.set():
            return  # a job is running: it stops, and its partial result is printed
        if _exception_would_be_ignored(frame):
            # signal again once the interpreter has moved on
            threading.Timer(0.05, self._resend, (signum,)).start()
            return
        raise KeyboardInterrupt

    def _resend(self, signum) -> None:
        if self._previous:  # still handling signals (not back to the defaults)
            os.kill(os.getpid(), signum)

    @property
    def reason(self) -> str | None:
        """"interrupted" (SIGINT), "terminated" (SIGTERM) or None."""
        if self.signum is None:
            return None
        return "interrupted" if self.signum == signal.SIGINT else "terminated"

    @property
    def exit_code(self) -> int:
        return 128 + (self.signum or signal.SIGINT)

    def __enter__(self) -> SignalStop:
        if threading.current_thread() is threading.main_thread():
            for s in self.SIGNALS:
                self._previous[s] = signal.signal(s, self._handle)
        return self

    def __exit__(self, *exc) -> None:
        # Emptied first: a resend still pending (:meth:`_resend`) then sends nothing.
        previous, self._previous = self._previous, {}
        for s, handler in previous.items():
            signal.signal(s, signal.SIG_IGN if self.ending else handler)
