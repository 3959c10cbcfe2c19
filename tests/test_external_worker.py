"""External workers: the slot a GPU worker will use, driven here by plain Python threads.

They take big chunks from the front of the vertex deque and, once it is empty, batches of
spilled tasks from S; CPU workers take small chunks from the back. Checked: every vertex
and every task is done exactly once, whoever does it.
"""

import networkx as nx
import numpy as np
import pytest

import gthinker
from gthinker import Task


class Visit(Task):
    """Marks each vertex it is given: histogram bin v counts visits of vertex v."""

    histograms = ("visits",)

    @staticmethod
    def compute(ctx, record):
        ctx.add_to_histogram(0, record[0])


class SpillAll(Task):
    """Every vertex becomes a spilled record [v, 1]; records are marked when computed."""

    histograms = ("visits",)

    @staticmethod
    def compute(ctx, record):
        if record.size == 1:
            child = np.empty(2, np.int32)
            child[0] = record[0]
            child[1] = 1
            ctx.add_task(child)
        else:
            ctx.add_to_histogram(0, record[0])


def graph(n):
    return gthinker.Graph.from_networkx(nx.path_graph(n))


def test_external_takes_front_chunks_cpus_take_the_back():
    n = 5000
    g = graph(n)
    seen = []

    def fake_gpu(worker):
        while (work := worker.wait()) is not None:
            seen.append(work.vertices.copy())
            worker.done()

    res = gthinker.run(Visit, g, threads=2, external=[fake_gpu], gpu_chunk=700, histogram_bins=n)
    cpu = res.histograms["visits"]
    ext = np.zeros(n, np.int64)
    for chunk in seen:
        np.add.at(ext, chunk, 1)
    assert np.array_equal(cpu + ext, np.ones(n))  # each vertex exactly once
    assert seen and np.array_equal(seen[0], np.arange(700))  # first chunk: the deque's front
    assert all(len(c) <= 700 for c in seen)
    assert cpu[-1] == 1  # the back went to the CPU workers
    gpu_stats = [w for w in res.stats["workers"] if w["kind"] == "gpu"]
    assert gpu_stats[0]["chunks"] == len(seen)


def test_external_worker_alone():
    n = 2345
    order = np.random.default_rng(1).permutation(n)
    chunks = []

    def fake_gpu(worker):
        while (work := worker.wait()) is not None:
            chunks.append(work.vertices.copy())
            worker.done()

    gthinker.run(Visit, graph(n), threads=0, external=[fake_gpu], vertices=order, gpu_chunk=1000)
    assert [len(c) for c in chunks] == [1000, 1000, 345]
    assert np.array_equal(np.concatenate(chunks), order)


def test_stealing_both_ways_loses_and_repeats_nothing():
    """The external worker pushes its vertices to S as records (as a GPU moves tasks
    to the CPUs) and computes records it steals from S once the deque is empty."""
    n = 4000
    ext_visits = np.zeros(n, np.int64)
    batches = []

    def fake_gpu(worker):
        while (work := worker.wait()) is not None:
            if len(work.vertices):
                data = np.stack([work.vertices, np.ones_like(work.vertices)], axis=1).ravel()
                starts = np.arange(0, len(data) + 1, 2)
                assert worker.push_tasks(data, starts)
            for k in range(work.num_tasks):
                rec = work.task(k)
                assert len(rec) == 2 and rec[1] == 1
                ext_visits[rec[0]] += 1
            batches.append(work.num_tasks)
            worker.done()

    res = gthinker.run(SpillAll, graph(n), threads=2, external=[fake_gpu], gpu_chunk=500,
                       gpu_task_batch=300, histogram_bins=n)
    assert np.array_equal(res.histograms["visits"] + ext_visits, np.ones(n))
    assert sum(batches) == ext_visits.sum()
    assert res.stats["records_computed"] + ext_visits.sum() == res.stats["tasks_decomposed"] + (
        n - res.stats["tasks_spawned"])


def test_a_failing_external_worker_stops_the_job():
    def broken(worker):
        worker.wait()
        raise RuntimeError("device fell over")

    with pytest.raises(RuntimeError, match="device fell over"):
        gthinker.run(Visit, graph(3000), threads=1, external=[broken], gpu_chunk=100,
                     histogram_bins=3000)


def test_threads_zero_needs_an_external_worker():
    with pytest.raises(ValueError, match="threads"):
        gthinker.run(Visit, graph(10), threads=0)


def test_vertices_handed_back_are_done_once_by_the_cpus():
    n = 3000
    g = graph(n)
    kept = []
    errors = []

    def generous(worker):
        while (work := worker.wait()) is not None:
            v = work.vertices
            try:
                worker.give_back_vertices(np.array([n], np.int32))  # not a vertex
            except IndexError as exc:
                errors.append(str(exc))
            worker.give_back_vertices(v[len(v) // 2 :])  # the back half, unstarted
            kept.append(v[: len(v) // 2].copy())
            worker.done()

    res = gthinker.run(Visit, g, threads=2, external=[generous], gpu_chunk=900,
                       histogram_bins=n)
    visits = res.histograms["visits"].copy()
    for chunk in kept:
        np.add.at(visits, chunk, 1)
    assert (visits == 1).all()
    assert errors and "not a vertex" in errors[0]
    assert sum(len(c) for c in kept) > 0


@pytest.mark.parametrize("name", ["early_split", "gpu_idle_split"])
def test_split_thresholds_must_be_seconds(name):
    with pytest.raises(ValueError, match=name):
        gthinker.run(Visit, graph(10), threads=1, **{name: -1})
    with pytest.raises(ValueError, match=name):
        gthinker.run(Visit, graph(10), threads=1, **{name: "fast"})
