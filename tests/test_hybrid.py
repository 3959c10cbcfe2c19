"""Hybrid mode: CPU workers and the GPU worker in one job (GPU on the simulator
here). Results must be identical in every mode, and work moved either way
(S -> H, H -> S, chunk vertices handed back) must be counted exactly once."""

import json
import os
import subprocess
import sys

import networkx as nx
import pytest

import gthinker
from gthinker.apps import mce


def _cliques(G):
    return sum(1 for _ in nx.find_cliques(G))


def _moved(r):
    s = r.stats["gpu"]
    return {k: s[k] for k in ("tasks_from_cpu", "tasks_to_cpu", "vertices_given_back")}


@pytest.mark.parametrize("seed", [1, 2])
def test_same_results_in_every_mode(seed):
    G = nx.compose(nx.gnp_random_graph(24, 0.25, seed=seed), nx.complete_graph(7))
    by_mode = {m: mce.run(G, mode=m, threads=2) for m in ("cpu", "gpu", "hybrid")}
    ref = _cliques(G)
    for m, r in by_mode.items():
        assert r.count == ref, m
        assert r.histogram == by_mode["cpu"].histogram, m
        assert r.max_size == by_mode["cpu"].max_size, m
    assert by_mode["hybrid"].mode == "hybrid" and by_mode["hybrid"].threads == 2


class _OneAssignment:
    """Stands in for the master's handle: one assignment, then the end."""

    def __init__(self, work):
        self.work = [work]
        self.done_calls = 0
        self.aborting = False

    def wait(self):
        return self.work.pop() if self.work else None

    def done(self):
        self.done_calls += 1


def test_cpu_records_stolen_from_s_run_on_the_gpu_exactly_once():
    # What the master hands an idle GPU once the deque is empty: a batch of
    # CPU task records from S (here: every vertex's initial record, and the
    # master-side hand-over itself is tested in test_external_worker.py).
    import numpy as np

    from gthinker.apps.mce.levels_gpu import MaximalCliquesGPU
    from gthinker.apps.mce.local import initial_record
    from gthinker.gpu.worker import GPUWorker
    from gthinker.runtime.job import Assignment

    G = nx.gnp_random_graph(30, 0.3, seed=3)
    g = gthinker.as_graph(G)
    order, _ = g.degeneracy_order()
    g = g.reorder(order)
    recs = [initial_record(g.indptr, g.indices, v) for v in range(g.num_vertices)]
    starts = np.zeros(len(recs) + 1, np.int64)
    starts[1:] = np.cumsum([len(r) for r in recs])
    handle = _OneAssignment(Assignment(np.zeros(0, np.int32), np.concatenate(recs), starts))
    worker = GPUWorker(MaximalCliquesGPU, g, histogram_bins=g.max_degree + 2)
    worker(handle)
    counters, _, _ = worker.results()
    s = worker.snapshot()
    assert s["tasks_from_cpu"] == g.num_vertices and s["steals_from_cpu"] == 1
    assert s["host_stack_pops"] >= 1 and handle.done_calls == 1
    # Vertices with an empty P have R maximal only if X is empty too: the GPU
    # process step counts those, as the CPU task would.
    assert counters[0] == _cliques(G)


def test_cpu_to_gpu_stealing_end_to_end_stays_exact():
    # CPU tasks decompose at once into S; the GPU takes one vertex at a time,
    # then batches of S once the deque is empty (how much moves depends on timing).
    G = nx.gnp_random_graph(40, 0.3, seed=3)
    r = mce.run(G, mode="hybrid", threads=1, gpu_chunk=1, time_budget=1e-6, early_split=0,
                timeout_check_interval=1, cpu_task_batch=1, gpu_task_batch=5)
    assert r.stats["tasks_decomposed"] > 0
    assert r.count == _cliques(G)


def test_gpu_to_cpu_stealing_moves_h_to_s():
    # The GPU's chunk is the whole graph; a tiny device buffer fills H, and
    # tau_c = -1 hands H batches to the CPU whenever S is below steal_bound.
    # How much moves depends on timing (2 to 7 moves to H in quiet runs; once, on a
    # loaded 2-core CI run, none): a run where nothing moved is run again.
    G = nx.gnp_random_graph(45, 0.3, seed=3)
    for _ in range(4):
        r = mce.run(G, mode="hybrid", threads=1, cpu_chunk=1,
                    gpu_engine="levels",
                    tau_c=-1, buffer_bytes=1500, eta_per_warp=2, steal_batch=3,
                    give_back=False, level_steal=False)
        assert r.count == _cliques(G)
        s = r.stats["gpu"]
        moved = (s["to_host"], s["tasks_to_cpu"], s["steals_to_cpu"])
        if min(moved) > 0:
            break
    assert min(moved) > 0, moved
    assert s["level_tasks_to_cpu"] == 0


def test_gpu_hands_back_unstarted_vertices():
    G = nx.gnp_random_graph(30, 0.3, seed=3)
    r = mce.run(G, mode="hybrid", threads=1, cpu_chunk=1, gpu_engine="levels",
                tau_c=-1)
    assert r.stats["gpu"]["vertices_given_back"] > 0
    assert r.count == _cliques(G)


def test_gpu_hands_unread_level_records_to_idle_cpus():
    # A buffer big enough that H stays empty, and no vertex hand-back: idle CPU
    # workers can only get work from the unread ends of the GPU's levels.
    G = nx.compose(nx.gnp_random_graph(30, 0.3, seed=5), nx.complete_graph(8))
    r = mce.run(G, mode="hybrid", threads=2, cpu_chunk=1,
                gpu_engine="levels",
                tau_c=-1, give_back=False, steal_interval=0)
    s = r.stats["gpu"]
    assert s["to_host"] == 0 and s["vertices_given_back"] == 0
    assert s["level_steals"] > 0 and s["level_tasks_to_cpu"] == s["tasks_to_cpu"] > 0
    cpu = mce.run(G, mode="cpu", threads=1)
    assert r.count == cpu.count == _cliques(G) and r.histogram == cpu.histogram


def test_level_steals_take_level_ends_lowest_level_first():
    import numpy as np

    from gthinker.apps.mce.levels_gpu import MaximalCliquesGPU
    from gthinker.gpu.worker import GPUWorker, _Level

    w = GPUWorker(MaximalCliquesGPU, gthinker.as_graph(nx.path_graph(4)))
    n = 10  # record i = [i, 100 + i], at vertex slots 2i, 2i + 1
    w.d_vert[: 2 * n].copy_to_device(np.array([[i, 100 + i] for i in range(n)], np.int32).ravel())
    w.d_offs[:n].copy_to_device(np.array([[2 * i, 2 * i + 2] for i in range(n)], np.int64))
    low, high = _Level(0, 4, 1, 0), _Level(4, 10, 4, 8)  # 3 and 6 unread records
    w.stack = [low, high]

    class Ext:
        pushed = []

        def push_tasks(self, data, starts):
            self.pushed.append((data.tolist(), starts.tolist()))
            return True

    w._ext = Ext()
    assert w._steal_from_levels(4)
    # Half of the low level's unread rest (its last 2), then 2 from the end of the next.
    assert Ext.pushed == [([2, 102, 3, 103, 8, 108, 9, 109], [0, 2, 4, 6, 8])]
    assert (low.rec_hi, high.rec_hi) == (2, 8) and w.stats["level_tasks_to_cpu"] == 4
    assert w._steal_from_levels(100)  # 1 of the low level's 1 unread, 2 of the high's 4
    assert Ext.pushed[-1] == ([1, 101, 6, 106, 7, 107], [0, 2, 4, 6])
    assert (low.rec_hi, high.rec_hi) == (1, 6)
    low.head, high.head = low.rec_hi, high.rec_hi
    assert not w._steal_from_levels(5)  # nothing unread


def test_no_stealing_when_thresholds_forbid_it():
    G = nx.gnp_random_graph(30, 0.3, seed=4)
    r = mce.run(G, mode="hybrid", threads=1, cpu_chunk=1,
                gpu_engine="levels",
                tau_c=1, buffer_bytes=1500, eta_per_warp=2)
    assert _moved(r)["tasks_to_cpu"] == 0 and _moved(r)["vertices_given_back"] == 0
    assert r.count == _cliques(G)


@pytest.mark.skipif(os.environ.get("GTHINKER_TEST_REAL_GPU") == "1",
                    reason="this machine has a real GPU: auto picks it")
def test_auto_mode_uses_the_cpu_without_a_real_gpu():
    r = mce.run(nx.path_graph(5))  # default mode="auto"; the simulator does not count
    assert r.mode == "cpu" and r.count == 4
    assert gthinker.gpu.resolve_mode("auto")[0] == "cpu"
    assert gthinker.gpu.resolve_mode("gpu") == ("gpu", "")


def test_hybrid_needs_both_sides():
    from gthinker.apps.mce.levels_gpu import MaximalCliquesGPU

    with pytest.raises(TypeError, match="CPU task too"):
        gthinker.run(None, nx.path_graph(3), mode="hybrid", gpu=MaximalCliquesGPU)
    with pytest.raises(TypeError, match="GPUContext subclass"):
        gthinker.run(mce.MaximalCliques, nx.path_graph(3), mode="hybrid")


def test_cli_hybrid_json_and_trace(tmp_path):
    pytest.importorskip("matplotlib")
    G = nx.gnp_random_graph(25, 0.2, seed=5)
    path = tmp_path / "g.txt"
    path.write_text("".join(f"{u} {v}\n" for u, v in G.edges))
    png = tmp_path / "trace.png"
    r = subprocess.run([sys.executable, "-m", "gthinker", "mce", str(path), "--mode",
                        "hybrid", "--threads", "2", "--json", "--trace", str(png), "-q",
                        # idle CPUs would get work at once, but both ways are switched off
                        "--gpu-engine", "levels", "--tau-c", "-1", "--no-give-back",
                        "--no-level-steal"],
                       capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["count"] == _cliques(G) and out["mode"] == "hybrid"
    gpu = out["stats"]["gpu"]
    assert {"tasks_from_cpu", "tasks_to_cpu", "vertices_given_back", "level_steals"} <= set(gpu)
    assert gpu["vertices_given_back"] == gpu["level_steals"] == gpu["tasks_to_cpu"] == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_cli_auto_says_which_mode(tmp_path):
    path = tmp_path / "g.txt"
    path.write_text("0 1\n1 2\n")
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    r = subprocess.run([sys.executable, "-m", "gthinker", "mce", str(path)],
                       capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert r.returncode == 0, r.stderr
    # a 2-edge graph stays on the CPU whether or not a GPU is there
    assert "mode: cpu (a small graph" in r.stderr
    assert "maximal cliques: 2" in r.stdout


def test_trace_in_cpu_mode(tmp_path):
    pytest.importorskip("matplotlib")
    png = tmp_path / "cpu.png"
    r = mce.run(nx.gnp_random_graph(60, 0.3, seed=1), mode="cpu", threads=2, trace=png)
    assert r.count == _cliques(nx.gnp_random_graph(60, 0.3, seed=1))
    assert png.read_bytes()[:4] == b"\x89PNG"
