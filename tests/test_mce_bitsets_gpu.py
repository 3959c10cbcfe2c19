"""The bitset GPU engine of MCE (gthinker.apps.mce.bitsets_gpu): exact against
networkx whether subtrees are searched whole, handed out by the node budget and
searched again as records, run in the wide-scratch pass, or shared with CPU workers.

Kernels run on Numba's CUDA simulator (tests/conftest.py), or on a real GPU with
GTHINKER_TEST_REAL_GPU=1.
"""

import os
from collections import Counter

import networkx as nx
import numpy as np
import pytest

import gthinker
from gthinker.apps import mce
from gthinker.apps.mce import bitsets_gpu as mb


def _sizes(G):
    return dict(Counter(len(c) for c in nx.find_cliques(G)))


def _ordered(G):
    g = gthinker.as_graph(G)
    order, _ = g.degeneracy_order()
    return g.reorder(order)


def _search_all(g, **kw):
    dev = mb.BitsetDevice(g, g.degeneracy + 2, blocks=1, **kw)
    work = mb.Work(np.arange(g.num_vertices)[::-1], np.zeros(0, np.int32), np.zeros(1, np.int64))
    rounds = 0
    while len(work):
        work = dev.run(work)
        rounds += 1
    hist = dev.histogram()
    return {int(s): int(c) for s, c in enumerate(hist) if c}, dev, rounds


@pytest.mark.parametrize("seed", [1, 2])
def test_node_budget_hands_out_records_and_stays_exact(seed):
    G = nx.gnp_random_graph(22, 0.45, seed=seed)
    got, dev, rounds = _search_all(_ordered(G), budget=2, consume=False)
    assert dev.spilled > 0 and rounds > 1  # records went back in as subtrees
    assert got == _sizes(G)


def _dense_core(seed):
    """A sparse graph around a dense core: subtrees of many nodes at the core."""
    return nx.compose(nx.gnp_random_graph(16, 0.15, seed=seed),
                      nx.gnp_random_graph(13, 0.75, seed=seed + 1))


@pytest.mark.parametrize("seed", [4, 5])
def test_one_launch_searches_the_records_its_warps_hand_out(seed):
    G = _dense_core(seed)
    got, dev, rounds = _search_all(_ordered(G), budget=1)
    assert got == _sizes(G)
    # Every record went through the launch's queue: one launch, nothing back to the host.
    assert dev.spilled > 1 and rounds == 1 and dev.launches == 1 and dev.spills_refused == 0
    assert (dev.queue.copy_to_host() == -1).all()  # its readers emptied every slot


def test_a_full_queue_buffer_makes_the_warps_search_the_nodes_themselves(monkeypatch):
    G = _dense_core(4)
    g = _ordered(G)
    _got, roomy, _ = _search_all(g, budget=1)
    lines = 1
    monkeypatch.setattr(mb, "SPILL_WORDS", lines * mb.LINE_WORDS)
    got, dev, rounds = _search_all(g, budget=1)
    assert got == _sizes(G) and rounds == 1 and dev.launches == 1
    # Each record takes a line at least: the buffer held one, the warps searched the rest.
    assert 0 < dev.spilled <= lines < roomy.spilled and dev.spills_refused > 0
    assert dev.buffer_peak_words <= lines * mb.LINE_WORDS


def test_subtrees_too_wide_for_the_warp_scratch_run_in_a_wide_pass():
    G = nx.compose(nx.gnp_random_graph(24, 0.3, seed=3), nx.complete_graph(9))
    g = _ordered(G)
    later = np.array([(g.neighbors(v) > v).sum() for v in range(g.num_vertices)])
    ids, bits = mb.record_need(later, np.diff(g.indptr) - later)
    # Room for the widest subtree once, not once per warp (the simulator runs 2 warps).
    got, dev, _ = _search_all(g, scratch_bytes=4 * (int(bits.max()) + int(ids.max())) * 3 // 2)
    assert dev.bit_stride < int(bits.max())
    assert dev.big["wide"] > 0 and dev.big["split"] == 0
    assert got == _sizes(G)


@pytest.mark.parametrize("mode", ["gpu", "hybrid"])
def test_modes_with_the_bitset_engine_match_networkx(mode):
    G = nx.compose(nx.gnp_random_graph(28, 0.3, seed=4), nx.complete_graph(7))
    G.add_node(40)  # isolated: a maximal clique of size 1
    r = mce.run(G, mode=mode, threads=2, gpu_node_budget=3, gpu_engine="bitsets")
    assert r.histogram == _sizes(G) and r.count == sum(_sizes(G).values())
    assert r.max_size == max(_sizes(G)) and r.mode == mode
    assert r.stats["gpu"]["launches"] >= 1


def test_cpu_records_searched_on_the_gpu_stay_exact():
    # CPU tasks decompose at once into S; the GPU, one vertex per assignment, takes
    # batches of those records once the deque is empty.
    G = nx.gnp_random_graph(30, 0.35, seed=6)
    r = mce.run(G, mode="hybrid", threads=1, gpu_chunk=1, time_budget=1e-6, early_split=0,
                timeout_check_interval=1, cpu_task_batch=1, gpu_task_batch=5,
                gpu_engine="bitsets")
    assert r.stats["tasks_decomposed"] > 0
    assert r.histogram == _sizes(G)


def test_engine_options_are_checked():
    with pytest.raises(ValueError, match="gpu_engine"):
        mce.run(nx.path_graph(3), mode="gpu", gpu_engine="warp")
    with pytest.raises(ValueError, match="eta_per_warp: options of the GPU worker .*the "
                                         "bitsets engine does not take"):
        mce.run(nx.path_graph(3), mode="gpu", gpu_engine="bitsets", eta_per_warp=4)
    with pytest.raises(TypeError, match="gpu_options.*one keyword per option"):
        mce.run(nx.path_graph(3), mode="gpu", gpu_options={"eta_per_warp": 4})


def test_auto_engine_takes_bitsets_whatever_the_degree():
    star = mce.run(nx.star_graph(40), mode="gpu")  # a hub of degree 40
    assert star.stats["gpu_engine"] == "bitsets" and star.count == 40
    # The engine is gpu_engine's choice alone: the GPU worker's options do not pick levels.
    with pytest.raises(ValueError, match="buffer_bytes, tau_c: options of the GPU worker"):
        mce.run(nx.path_graph(5), mode="gpu", buffer_bytes=1 << 20, tau_c=1)
    levels = mce.run(nx.path_graph(5), mode="gpu", gpu_engine="levels", eta_per_warp=4)
    assert levels.stats["gpu_engine"] == "levels" and levels.count == 4


@pytest.mark.skipif(os.environ.get("GTHINKER_TEST_REAL_GPU") == "1",
                    reason="monkeypatches WIDE_WORDS, a constant compiled into the cached kernel "
                           "(only the simulator reads it anew)")
@pytest.mark.parametrize("consume", [False, True])
def test_wide_subtrees_hand_out_their_first_level_and_stay_exact(consume, monkeypatch):
    monkeypatch.setattr(mb, "WIDE_WORDS", 0)  # every subtree counts as wide
    G = nx.compose(nx.gnp_random_graph(26, 0.35, seed=8), nx.star_graph(12))
    got, dev, rounds = _search_all(_ordered(G), consume=consume)
    assert dev.spilled > 0 and (rounds == 1 if consume else rounds > 1)
    assert got == _sizes(G)


def test_a_record_wider_than_any_initial_subtree_gets_its_own_scratch():
    # R = {}, P = every vertex: the whole search in one record, whose id list is longer
    # than any vertex's, so it must run in the wide pass.
    G = nx.compose(nx.gnp_random_graph(14, 0.4, seed=9), nx.complete_graph(5))
    g = _ordered(G)
    n = g.num_vertices
    dev = mb.BitsetDevice(g, g.degeneracy + 2, blocks=1)
    work = mb.Work(np.zeros(0, np.int32), np.array([0, n, 0, *range(n)], np.int32),
                   np.array([0, 3 + n], np.int64))
    assert work.needs(dev.later, dev.earlier)[0][0] > dev.id_stride
    while len(work):
        work = dev.run(work)
    hist = dev.histogram()
    assert {int(s): int(c) for s, c in enumerate(hist) if c} == _sizes(G)


def test_the_trace_draws_the_bitset_engines_busy_intervals(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    from gthinker.runtime import trace

    drawn = []
    monkeypatch.setattr(trace.Tracer, "write",
                        lambda self, path, start, seconds: drawn.append(self.gpus))
    G = nx.gnp_random_graph(24, 0.35, seed=8)
    r = mce.run(G, mode="gpu", gpu_engine="bitsets", gpu_node_budget=3,
                trace=tmp_path / "t.png")
    assert r.histogram == _sizes(G)
    (gpus,) = drawn
    (timeline,) = [g.timeline for g in gpus]  # one band: the one device
    assert 1 <= len(timeline) <= r.stats["gpu"]["launches"]
    assert all(a < b for a, b in timeline)
    assert sum(b - a for a, b in timeline) == pytest.approx(r.stats["gpu"]["kernel_seconds"])
