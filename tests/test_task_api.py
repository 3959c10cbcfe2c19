"""The Task API, tested with small apps written here the way a user would write them."""

import threading
import time

import networkx as nx
import numpy as np
import pytest
from numba import njit
from numba.core import event as numba_event

import gthinker
from gthinker import Task


class Triangles(Task):
    """Triangles through each vertex v, counted once at their smallest vertex."""

    counters = ("triangles",)
    maxima = ("most_at_one_vertex",)
    histograms = ("per_vertex",)

    @staticmethod
    def compute(ctx, record):
        v = record[0]
        nv = ctx.neighbors(v)
        c = 0
        for u in nv:
            if u <= v:
                continue
            nu = ctx.neighbors(u)
            i = 0
            j = 0
            while i < nv.size and j < nu.size:
                if nv[i] < nu[j]:
                    i += 1
                elif nv[i] > nu[j]:
                    j += 1
                else:
                    if nv[i] > u:
                        c += 1
                    i += 1
                    j += 1
        ctx.count(0, c)
        ctx.update_max(0, c)
        ctx.add_to_histogram(0, min(c, 9))


@njit
def _extend_kcliques(ctx, left, cand):
    """Counts the (left)-cliques among the sorted candidates; spills branches once timed out."""
    if left == 0:
        ctx.count(0, 1)
        return
    for i in range(cand.size):
        nb = ctx.neighbors(cand[i])
        rest = cand[i + 1:]
        child = np.empty(rest.size + 1, np.int32)
        k = 1
        for x in rest:
            j = np.searchsorted(nb, x)
            if j < nb.size and nb[j] == x:
                child[k] = x
                k += 1
        child[0] = left - 1
        if ctx.timed_out():
            ctx.add_task(child[:k])
        else:
            _extend_kcliques(ctx, left - 1, child[1:k])


class KCliques(Task):
    """Cliques of exactly k = params[0] vertices. Record: [k_left, candidates...]."""

    counters = ("cliques",)

    @staticmethod
    def spawn(ctx, v):
        nb = ctx.neighbors(v)
        later = nb[np.searchsorted(nb, v, side="right"):]
        rec = np.empty(1 + later.size, np.int32)
        rec[0] = ctx.params[0] - 1
        rec[1:] = later
        return rec

    @staticmethod
    def compute(ctx, record):
        _extend_kcliques(ctx, record[0], record[1:])


def test_second_app_triangles_match_networkx():
    G = nx.powerlaw_cluster_graph(2000, 5, 0.3, seed=4)
    g = gthinker.Graph.from_networkx(G)
    res = gthinker.run(Triangles, g, threads=2, histogram_bins=10)
    per_vertex = nx.triangles(G)
    assert res.counters["triangles"] == sum(per_vertex.values()) // 3
    assert res.maxima["most_at_one_vertex"] >= 1
    assert res.histograms["per_vertex"].sum() == G.number_of_nodes()
    assert res.stats["tasks_spawned"] == G.number_of_nodes()


@pytest.mark.parametrize("k", [3, 4, 5])
def test_kcliques_with_decomposition(k):
    G = nx.gnp_random_graph(60, 0.35, seed=k)
    want = sum(1 for c in nx.enumerate_all_cliques(G) if len(c) == k)
    g = gthinker.Graph.from_networkx(G)
    plain = gthinker.run(KCliques, g, threads=2, params=[k])
    split = gthinker.run(KCliques, g, threads=2, params=[k], time_budget=1e-6,
                         timeout_check_interval=1, flush_batch=1)
    assert plain.counters["cliques"] == want
    assert split.counters["cliques"] == want
    assert split.stats["tasks_decomposed"] > 0


def test_spawn_and_compute_are_compiled_once(monkeypatch):
    # Checked alone for a clear error, then inside the entry point: one compilation
    # each (the check once used another context type, doubling every app's compile time).
    monkeypatch.setenv("GTHINKER_CACHE_DIR", "off")

    class Degrees(Task):
        counters = ("degrees",)

        @staticmethod
        def spawn(ctx, v):
            return np.full(1, v, np.int32)

        @staticmethod
        def compute(ctx, record):
            ctx.count(0, ctx.degree(record[0]))

    compiled = []

    class Listener(numba_event.Listener):
        def on_start(self, event):
            pass

        def on_end(self, event):
            compiled.append(event.data["dispatcher"].py_func.__qualname__)

    g = nx.gnp_random_graph(30, 0.2, seed=4)
    with numba_event.install_listener("numba:compile", Listener()):
        res = gthinker.run(Degrees, g, threads=1)
    assert res.counters["degrees"] == 2 * g.number_of_edges()
    ours = sorted(name for name in compiled if name.startswith(Degrees.__qualname__))
    assert ours == [f"{Degrees.__qualname__}.compute", f"{Degrees.__qualname__}.spawn"]


def test_gil_is_released_during_a_job():
    G = nx.gnp_random_graph(3000, 0.02, seed=1)
    g = gthinker.Graph.from_networkx(G)
    gthinker.run(KCliques, g, threads=1, params=[4])  # compile first
    ticks = 0
    stop = False

    def spin():
        nonlocal ticks
        while not stop:
            ticks += 1

    t = threading.Thread(target=spin)
    t.start()
    start = time.perf_counter()
    res = gthinker.run(KCliques, g, threads=1, params=[4])
    elapsed = time.perf_counter() - start
    stop = True
    t.join()
    assert res.counters["cliques"] > 0
    # A Python thread starved of the GIL would manage only a few hundred increments.
    assert ticks > 10_000 * max(elapsed, 0.01)


def test_progress_callback_and_vertices_subset():
    g = gthinker.Graph.from_networkx(nx.path_graph(10))
    seen = []
    res = gthinker.run(Triangles, g, threads=1, vertices=[0, 1, 2], progress=seen.append,
                       progress_interval=0.0, histogram_bins=10)
    assert res.stats["tasks_spawned"] == 3
    with pytest.raises(ValueError, match="vertices"):
        gthinker.run(Triangles, g, vertices=[11])


def test_definition_errors_name_the_method():
    err = gthinker.TaskDefinitionError
    with pytest.raises(err, match=r"NoStatic\.compute must be a @staticmethod"):
        class NoStatic(Task):
            def compute(self, record):
                pass

    with pytest.raises(gthinker.TaskDefinitionError, match=r"Arity\.compute must take exactly 2"):
        class Arity(Task):
            @staticmethod
            def compute(ctx):
                pass

    with pytest.raises(gthinker.TaskDefinitionError, match=r"Missing must define compute"):
        class Missing(Task):
            pass

    class Uncompilable(Task):
        @staticmethod
        def compute(ctx, record):
            d = {"a": object()}
            ctx.count(0, len(d))

    with pytest.raises(err, match=r"Uncompilable\.compute does not compile"):
        Uncompilable.compiled()

    class BadSpawn(Task):
        @staticmethod
        def spawn(ctx, v):
            return v

        @staticmethod
        def compute(ctx, record):
            pass

    with pytest.raises(gthinker.TaskDefinitionError, match=r"BadSpawn\.spawn must return"):
        BadSpawn.compiled()


def test_runtime_errors_name_the_method():
    g = gthinker.Graph.from_networkx(nx.relabel_nodes(nx.path_graph(5), lambda v: v + 100))

    class Raises(Task):
        @staticmethod
        def compute(ctx, record):
            if record[0] == 3:
                raise ValueError("boom")

    with pytest.raises(gthinker.TaskRuntimeError, match=r"Raises\.compute raised.*vertex 103"):
        gthinker.run(Raises, g, threads=2)

    class BadBin(Task):
        histograms = ("h",)

        @staticmethod
        def compute(ctx, record):
            ctx.add_to_histogram(0, 1000)

    with pytest.raises(gthinker.TaskRuntimeError, match="add_to_histogram"):
        gthinker.run(BadBin, g, histogram_bins=4)

    class Checked(Task):
        boundscheck = True

        @staticmethod
        def compute(ctx, record):
            ctx.count(0, record[5])

    with pytest.raises(gthinker.TaskRuntimeError, match=r"Checked\.compute raised"):
        gthinker.run(Checked, g)

    with pytest.raises(TypeError, match="subclass of gthinker.Task"):
        gthinker.run(int, g)


def test_arrays_handed_to_the_runtime_must_be_int32():
    class Int64Record(Task):
        @staticmethod
        def compute(ctx, record):
            if ctx.timed_out():
                ctx.add_task(np.zeros(3, np.int64))

    with pytest.raises(gthinker.TaskDefinitionError, match=r"ctx.add_task takes a 1-d int32 array"):
        Int64Record.compiled()


def test_emit_checks_vertex_ids(tmp_path):
    g = gthinker.Graph.from_networkx(nx.path_graph(4))

    class EmitsGarbage(Task):
        @staticmethod
        def compute(ctx, record):
            out = np.empty(1, np.int32)
            out[0] = record[0] + 1000
            ctx.emit(out)

    with pytest.raises(gthinker.TaskRuntimeError, match="emit with a vertex id outside"):
        gthinker.run(EmitsGarbage, g, output=tmp_path / "o.txt")


def test_errors_in_spawn_name_spawn():
    g = gthinker.Graph.from_networkx(nx.path_graph(4))

    class CountsInSpawn(Task):
        @staticmethod
        def spawn(ctx, v):
            ctx.count(7)
            return np.empty(0, np.int32)

        @staticmethod
        def compute(ctx, record):
            pass

    with pytest.raises(gthinker.TaskRuntimeError, match=r"CountsInSpawn\.spawn called count"):
        gthinker.run(CountsInSpawn, g)


def test_progress_callback_errors_propagate():
    G = nx.gnp_random_graph(700, 0.3, seed=2)  # about a second of work: several ticks
    g = gthinker.Graph.from_networkx(G)

    def broken(snapshot):
        raise RuntimeError("my progress bar broke")

    with pytest.raises(RuntimeError, match="my progress bar broke"):
        gthinker.run(KCliques, g, threads=2, params=[6], progress=broken, progress_interval=0.0)
