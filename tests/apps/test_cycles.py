"""apps/cycles, a user app with a CPU Task and a GPUContext sharing one record: the
simple k-cycles of small random graphs against networkx's simple_cycles, on the CPU
workers (with tasks decomposed), the GPU worker (Numba's CUDA simulator), both
(hybrid: paths stolen both ways) and two GPU workers (--gpus)."""

import json

import networkx as nx
import pytest
from conftest import import_user_app, run_cli, user_apps_env

import gthinker
from gthinker import gpu

app = import_user_app("cycles", "gthinker_cycles.app")


def _cycles(G, k):
    return sum(1 for c in nx.simple_cycles(G, length_bound=k) if len(c) == k)


def _graph():
    return nx.gnp_random_graph(10, 0.5, seed=4)  # 21 edges: 17 triangles, 72 5-cycles


@pytest.mark.parametrize("k", [3, 4, 6])
def test_cpu_with_and_without_decomposition(k):
    G = nx.gnp_random_graph(16, 0.4, seed=k)
    want = _cycles(G, k)
    assert want > 0
    assert app.count_cycles(G, k, mode="cpu", threads=2).counters["cycles"] == want
    split = app.count_cycles(G, k, mode="cpu", threads=2, time_budget=1e-6,
                             timeout_check_interval=1)
    assert split.counters["cycles"] == want and split.stats["tasks_decomposed"] > 0


def test_gpu_and_hybrid():
    G = _graph()
    assert app.count_cycles(G, 5, mode="gpu").counters["cycles"] == _cycles(G, 5)
    # hybrid, tasks timing out at once: the CPU worker and the GPU hand paths to each other
    r = app.count_cycles(G, 5, mode="hybrid", threads=1, time_budget=1e-6, gpu_chunk=2)
    assert r.counters["cycles"] == _cycles(G, 5) and r.mode == "hybrid"


def test_two_gpu_workers():
    G = _graph()
    two = [0, 1] if gpu.visible_devices() >= 2 else [0, 0]
    r = app.count_cycles(G, 4, mode="gpu", gpus=two, gpu_chunk=3)
    assert r.counters["cycles"] == _cycles(G, 4)
    assert [s["device_id"] for s in r.stats["gpus"]] == two


def test_bad_k_and_the_command(tmp_path):
    with pytest.raises(ValueError, match="at least 3"):
        app.count_cycles(_graph(), 2)
    path = tmp_path / "g.txt"
    G = _graph()
    gthinker.Graph.from_networkx(G).write(path)
    env = user_apps_env("cycles")
    r = run_cli("cycles", path, "-k", "5", "--mode", "cpu", "--json", "-q", env=env)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["counters"]["cycles"] == _cycles(G, 5)
    r = run_cli("cycles", path, "-k", "2", env=env)
    assert r.returncode == 2 and "at least 3" in r.stderr
    r = run_cli("cycles", "--help", env=env)
    assert r.returncode == 0 and "--gpus" in r.stdout
