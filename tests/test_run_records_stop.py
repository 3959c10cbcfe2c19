"""run(records=...): initial task records on S; run(stop=StopToken()): a clean external stop."""

import threading
import time

import networkx as nx
import numpy as np
import pytest
from numba import njit

import gthinker
from gthinker import StopToken, Task


class SumFirst(Task):
    """Counts record[0]; the initial task of vertex v is [v] (the default spawn)."""

    counters = ("sum", "tasks")

    @staticmethod
    def compute(ctx, record):
        ctx.count(0, record[0])
        ctx.count(1, 1)


@njit
def _leaves(ctx, depth, weight):
    """A binary tree of `depth` levels whose 2**depth leaves each count `weight`;
    once timed out, the branches not yet started become records [depth, weight]."""
    if depth == 0:
        ctx.count(0, weight)
        return
    for _ in range(2):
        if ctx.timed_out():
            rec = np.empty(2, np.int32)
            rec[0] = depth - 1
            rec[1] = weight
            ctx.add_task(rec)
        else:
            _leaves(ctx, depth - 1, weight)


class Tree(Task):
    """Record [depth, weight]: counts weight * 2**depth, decomposing as it goes."""

    counters = ("total",)

    @staticmethod
    def compute(ctx, record):
        _leaves(ctx, record[0], record[1])


class Forever(Task):
    """Never ends on its own: runs until timed out, then re-adds itself."""

    counters = ("rounds",)

    @staticmethod
    def compute(ctx, record):
        while not ctx.timed_out():
            pass
        ctx.count(0, 1)
        ctx.add_task(record)


@pytest.fixture(scope="module")
def graph():
    return gthinker.Graph.from_networkx(nx.path_graph(6))


def test_records_only_job_computes_exactly_the_records(graph):
    rng = np.random.default_rng(0)
    values = rng.integers(-1000, 1000, size=500)
    records = [np.array([v, 7, 7], np.int64) for v in values]  # int64 is cast to int32
    res = gthinker.run(SumFirst, graph, threads=3, vertices=[], records=records)
    assert res.counters == {"sum": int(values.sum()), "tasks": 500}
    assert res.stats["tasks_spawned"] == 0
    assert res.stats["records_computed"] == 500
    assert res.stats["spill_peak_tasks"] == 500
    assert res.stopped is None


def test_records_flat_form_and_besides_vertices(graph):
    data = np.array([5, 1, 2, 9, 9, 9, 40], np.int32)
    starts = np.array([0, 1, 3, 6, 7], np.int64)  # [5], [1, 2], [9, 9, 9], [40]
    res = gthinker.run(SumFirst, graph, threads=2, records=(data, starts))
    assert res.counters["sum"] == 5 + 1 + 9 + 40 + sum(range(6))
    assert res.counters["tasks"] == 4 + 6
    assert res.stats["tasks_spawned"] == 6 and res.stats["records_computed"] == 4
    # No records at all is allowed too.
    empty = gthinker.run(SumFirst, graph, threads=1, vertices=[], records=[])
    assert empty.counters["tasks"] == 0


def test_records_with_decomposition(graph):
    records = [[10, 1], [8, 3], [12, 2], [0, 5]]
    want = sum(w * 2**d for d, w in records)
    res = gthinker.run(Tree, graph, threads=2, vertices=[], records=records,
                       time_budget=1e-6, timeout_check_interval=1, flush_batch=1)
    assert res.counters["total"] == want
    assert res.stats["tasks_decomposed"] > 0
    assert res.stats["records_computed"] == len(records) + res.stats["tasks_decomposed"]


@pytest.mark.parametrize("bad, match", [
    ([np.array([1, 2]), np.array([], np.int32)], "record 1 is empty"),
    ([np.array([[1, 2]])], "record 0 must be 1-d"),
    ([np.array([1.5])], "must hold integers"),
    ([np.array([2**40])], "int32 range"),
    ([3, 4], "record 0 must be 1-d"),
    (np.array([1, 2, 3]), "list of 1-d int arrays"),
    ((np.array([1, 2], np.int32), np.array([0, 1, 1])), "increase strictly"),
    ((np.array([1, 2], np.int32), np.array([0, 3])), "increase strictly"),
    ((np.array([1, 2], np.int32), np.array([], np.int64)), "starts"),
    ((np.array([1, 2], np.int32),), r"\(data, starts\)"),
])
def test_bad_records_raise_value_error(graph, bad, match):
    with pytest.raises(ValueError, match=match):
        gthinker.run(SumFirst, graph, threads=1, records=bad)


def test_records_past_the_spill_limit(graph):
    with pytest.raises(gthinker.SpillLimitError, match="initial records"):
        gthinker.run(SumFirst, graph, threads=1, records=[np.zeros(1000, np.int32)],
                     spill_limit=100)


def test_stop_token_set_from_a_timer_stops_a_job_that_never_ends(graph):
    gthinker.run(Forever, graph, threads=1, vertices=[], stop=_already_set())  # compile first
    token = StopToken()
    assert not token.is_set()
    timer = threading.Timer(0.3, token.set)
    timer.start()
    start = time.perf_counter()
    res = gthinker.run(Forever, graph, threads=2, time_budget=0.01, stop=token)
    elapsed = time.perf_counter() - start
    timer.join()
    assert res.stopped == "stop"
    assert token.is_set()
    assert 0.25 < elapsed < 3.0
    assert res.counters["rounds"] > 0  # results so far are kept
    token.set()  # after the run: harmless
    assert token.is_set()


def test_stop_token_with_records_only(graph):
    token = StopToken()
    timer = threading.Timer(0.2, token.set)
    timer.start()
    res = gthinker.run(Forever, graph, threads=2, vertices=[], records=[[1], [2], [3]],
                       time_budget=0.01, stop=token)
    timer.join()
    assert res.stopped == "stop" and res.counters["rounds"] > 0


def _already_set():
    token = StopToken()
    token.set()
    token.set()  # idempotent
    return token


def test_stop_token_set_before_the_run_stops_at_once(graph):
    start = time.perf_counter()
    res = gthinker.run(Forever, graph, threads=2, time_budget=0.01, stop=_already_set())
    assert time.perf_counter() - start < 1.0
    assert res.stopped == "stop"
    assert res.counters["rounds"] == 0


def test_run_without_a_set_token_is_unaffected(graph):
    token = StopToken()
    res = gthinker.run(SumFirst, graph, threads=2, stop=token)
    assert res.stopped is None and res.counters["sum"] == sum(range(6))
    plain = gthinker.run(SumFirst, graph, threads=2)
    assert plain.stopped is None and plain.counters == res.counters
    token.set()  # after the run: nothing to stop, nothing raised
    with pytest.raises(TypeError, match="StopToken"):
        gthinker.run(SumFirst, graph, stop=threading.Event())


def test_one_token_stops_two_concurrent_runs(graph):
    token = StopToken()
    results = []

    def one():
        results.append(gthinker.run(Forever, graph, threads=1, time_budget=0.01, stop=token))

    threads = [threading.Thread(target=one) for _ in range(2)]
    for t in threads:
        t.start()
    time.sleep(0.3)
    token.set()
    for t in threads:
        t.join(timeout=5)
    assert [r.stopped for r in results] == ["stop", "stop"]


def test_job_stop_binding_before_run():
    # The raw binding: a job stopped before run ends at once, its status "stopped".
    from gthinker import _core

    g = gthinker.Graph.from_networkx(nx.path_graph(3))
    cfg = _core.JobConfig()
    for name, value in dict(threads=1, time_budget=0.1, cpu_chunk=1, cpu_task_batch=1,
                            flush_batch=1, spill_limit=1 << 20, timeout_check_interval=1,
                            gpu_chunk=1, gpu_task_batch=1, n_counters=1, limit=-1).items():
        setattr(cfg, name, value)
    job = _core.Master(g.indptr, g.indices, None, g.ids, np.arange(3, dtype=np.int32),
                       Forever.compiled().address, cfg)
    assert job.push_tasks(np.array([1, 2], np.int32), np.array([0, 1, 2], np.int64))
    job.stop()
    status = job.run(None, 1.0)
    assert status["error"] == "stopped"
    assert job.results()["counters"][0] == 0
