"""A GPU engine written outside gthinker (gthinker.gpu.engine, docs/gpu.md "Adding a GPU
engine") takes the road of the bundled ones: one per device, work from the master in gpu
and hybrid jobs, results merged by name with the CPU workers', its figures in stats."""

import networkx as nx
import numpy as np
import pytest
from numba import cuda

import gthinker
import gthinker.graphs.generate
from gthinker.gpu import launch
from gthinker.gpu.engine import EngineResults, GPUEngine


def _degrees(indptr, vertices, n, total):
    """Adds the degree of each vertex (how many edge ends it holds); the threads stride
    over the vertices (a launch may have fewer threads than vertices)."""
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        v = vertices[i]
        cuda.atomic.add(total, 0, indptr[v + 1] - indptr[v])


class Ends(gthinker.Task):
    counters = ("ends",)

    @staticmethod
    def spawn(ctx, v):
        return np.full(1, v, np.int32)

    @staticmethod
    def compute(ctx, record):
        ctx.count(0, ctx.degree(record[0]))


class EndsEngine(GPUEngine):
    counters = ("ends",)
    name = "ends"
    #: a knob, set with EndsEngine.configured(threads=...)
    threads = 32

    def __init__(self, graph, setup):
        super().__init__(graph, setup)
        self.indptr, _, _ = gthinker.gpu.graph_on_device(graph)
        self.kernel = launch.kernel(_degrees, name="test_degrees", label="a test engine")
        self.total = cuda.to_device(np.zeros(1, np.int64))
        self.assignments = 0

    def run(self, work, handle):
        self.assignments += 1
        if len(work.vertices):
            n = len(work.vertices)
            self.kernel[launch.blocks(4, n, self.threads), self.threads](
                self.indptr, cuda.to_device(work.vertices), n, self.total)
            cuda.synchronize()

    def results(self):
        return EngineResults(self.total.copy_to_host(), np.zeros(0, np.int64), [])

    def snapshot(self):
        return {"assignments": self.assignments, "device": "test"}


def _graph():
    return gthinker.as_graph(nx.gnm_random_graph(300, 1200, seed=3))


@pytest.mark.parametrize("mode", ["gpu", "hybrid"])
def test_an_engine_runs_gpu_and_hybrid_jobs(mode):
    g = _graph()
    res = gthinker.run(Ends, g, mode=mode, gpu=EndsEngine, threads=2, gpu_chunk=64)
    assert res.counters["ends"] == 2 * g.num_edges
    assert res.stats["gpu"]["assignments"] >= 1 and res.stats["gpus"][0]["device"] == "test"
    if mode == "gpu":
        assert res.threads == 0 and res.stats["gpu"]["assignments"] >= 300 // 64


def test_an_engine_alone_needs_no_task():
    g = _graph()
    res = gthinker.run(None, g, mode="gpu", gpu=EndsEngine.configured(threads=64))
    assert res.counters["ends"] == 2 * g.num_edges


def test_engine_settings_and_names_are_checked():
    with pytest.raises(TypeError, match="no setting"):
        EndsEngine.configured(budget=3)

    class Other(Ends):  # the same task under another counter's name
        counters = ("other",)

    with pytest.raises(TypeError, match="declare the same results"):
        gthinker.run(Other, _graph(), mode="hybrid", gpu=EndsEngine)
    with pytest.raises(TypeError, match="GPU engine"):
        gthinker.run(Ends, _graph(), mode="gpu", gpu=object)


class WholeEngine(EndsEngine):
    """The same count, and a gpu-mode job run whole (no master) where it can."""

    @classmethod
    def run_whole(cls, graph, setup, devices, vertices):
        if not isinstance(vertices, range):
            return None
        ends = int(np.diff(graph.indptr)[vertices.start:vertices.stop].sum())
        return (EngineResults(np.array([ends], np.int64), np.zeros(0, np.int64), []),
                [{"whole": 1, "device": "test"} for _ in devices])


def test_a_job_run_whole_skips_the_master_only_where_it_can():
    g = _graph()
    whole = gthinker.run(Ends, g, mode="gpu", gpu=WholeEngine, vertices=range(10, 200))
    assert whole.counters["ends"] == int(np.diff(g.indptr)[10:200].sum())
    assert whole.stats["gpu"] == {"whole": 1, "device": "test"}
    assert "tasks_spawned" not in whole.stats
    listed = gthinker.run(Ends, g, mode="gpu", gpu=WholeEngine, vertices=[5, 9])
    assert listed.counters["ends"] == g.degrees()[[5, 9]].sum()
    assert "whole" not in listed.stats["gpu"]


class _SmallDevice:
    """A CUDA module whose one device has ``free`` bytes free; counts copies to it."""

    def __init__(self, free):
        self.free, self.copies, self.gpus = free, 0, [0]

    def current_context(self):
        return type("Context", (), {"get_memory_info": lambda _: (self.free, 4 * self.free)})()

    def to_device(self, array):
        self.copies += 1
        return array


def test_a_graph_larger_than_the_device_is_refused_before_any_copy(monkeypatch):
    from gthinker.gpu import availability

    g = gthinker.graphs.generate.rmat(10, 8, seed=1)
    need = g.indptr.nbytes + g.indices.nbytes
    small = _SmallDevice(need - 1)
    monkeypatch.setattr(availability, "numba_cuda", lambda: small)
    with pytest.raises(gthinker.errors.GraphTooLargeError, match="--mode cpu") as info:
        gthinker.gpu.graph_on_device(g)
    assert f"{g.num_edges:,} edges" in str(info.value) and small.copies == 0
    roomy = _SmallDevice(need + 1)
    monkeypatch.setattr(availability, "numba_cuda", lambda: roomy)
    assert len(gthinker.gpu.graph_on_device(g)) == 3 and roomy.copies == 3
