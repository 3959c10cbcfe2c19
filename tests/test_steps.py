"""gthinker.runtime.steps: a pass over the vertices in short steps on threads. Every step runs
once whatever the number of threads, each thread with its own scratch; an exception in
a step, or Ctrl-C, reaches the caller only after every step in flight has ended."""

import itertools
import os
import signal
import threading
import time

import networkx as nx
import numpy as np
import pytest

import gthinker
from gthinker.runtime import steps


def _pool_threads():
    return [t for t in threading.enumerate() if t.name.startswith("gthinker-steps")]


class _Recorder:
    """A step that sleeps a little (the GIL released, as a kernel does) and records who
    ran what; ``hook(index)`` runs at the start of every step."""

    def __init__(self, hook=lambda index: None):
        self.calls = []  # (lo, hi, id of the scratch, thread)
        self.lock = threading.Lock()
        self.in_flight = 0
        self.hook = hook

    def __call__(self, lo, hi, state):
        with self.lock:
            index = len(self.calls)
            self.calls.append((lo, hi, id(state), threading.get_ident()))
            self.in_flight += 1
        try:
            self.hook(index)
            time.sleep(0.002)
        finally:
            with self.lock:
                self.in_flight -= 1


def test_steps_cover_the_vertices_in_short_calls():
    """About STEP_ENTRIES row entries a step (a Ctrl-C lands between two of them): the
    steps cover every vertex once, in order, and only a step of one vertex holds more."""
    g = gthinker.Graph.from_networkx(nx.barabasi_albert_graph(3000, 30, seed=1))
    cuts = steps.bounds(g.indptr)
    assert cuts[0] == 0 and cuts[-1] == g.num_vertices and (np.diff(cuts) > 0).all()
    entries = np.diff(g.indptr[cuts])
    assert len(cuts) > 2
    assert ((entries <= 2 * steps.STEP_ENTRIES) | (np.diff(cuts) == 1)).all()
    assert steps.bounds(np.zeros(1, np.int64)).tolist() == [0]  # no vertices, no step


@pytest.mark.parametrize("threads", [1, 2, 4])
def test_every_step_runs_once_each_thread_with_its_own_scratch(threads):
    cuts = np.array([0, 3, 4, 9, 10, 20, 21, 40], np.int64)
    step = _Recorder()
    steps.run(step, cuts, threads, scratch=object)
    assert sorted((lo, hi) for lo, hi, _, _ in step.calls) == list(itertools.pairwise(cuts))
    owner = {}
    for _, _, state, thread in step.calls:
        assert owner.setdefault(state, thread) == thread  # a scratch stays in its thread
    assert len(owner) <= threads and not _pool_threads()


def test_an_exception_in_a_step_reaches_the_caller_after_the_others_stopped():
    def fail(index):
        if index == 3:
            raise ValueError("step 3 failed")

    step = _Recorder(fail)
    with pytest.raises(ValueError, match="step 3 failed"):
        steps.run(step, np.arange(0, 1001, dtype=np.int64), 2)
    assert step.in_flight == 0 and not _pool_threads()
    assert len(step.calls) < 1000  # no step taken after it


def test_ctrl_c_stops_the_steps_and_no_thread_runs_on():
    """A real SIGINT while the threads work: KeyboardInterrupt in the caller, raised
    once the steps in flight have ended; the rest are never started."""
    def interrupt(index):
        if index == 10:
            os.kill(os.getpid(), signal.SIGINT)

    step = _Recorder(interrupt)
    with pytest.raises(KeyboardInterrupt):
        steps.run(step, np.arange(0, 100_001, dtype=np.int64), 2)
    assert step.in_flight == 0 and not _pool_threads()
    taken = len(step.calls)
    assert taken < 100_000
    time.sleep(0.05)
    assert len(step.calls) == taken
