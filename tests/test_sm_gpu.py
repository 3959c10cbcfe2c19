"""Subgraph matching on the GPU (simulator here; GTHINKER_TEST_REAL_GPU=1 runs
the same on a real GPU): both record layouts and hybrid mode against
networkx and the CPU app, the layout conversions, and the automatic choice."""

import random

import networkx as nx
import numpy as np
import pytest
from test_sm import _embeddings, _random_walk_query

import gthinker
from gthinker.apps import sm
from gthinker.apps.matching.dispatch import choose_layout
from gthinker.apps.matching.levels_gpu import SubgraphMatchingPrefixGPU, _prefix_to_cpu

LAYOUTS = ["prefix", "expand"]


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("name", ["triangle", "4-cycle", "tailed-triangle"])
def test_gpu_layouts_match_networkx(layout, name):
    G = nx.gnp_random_graph(8, 0.4, seed=len(name))
    want = _embeddings(G, sm.pattern(name).to_networkx())
    r = sm.count(G, name, mode="gpu", gpu_mode=layout)
    assert r.gpu_mode == layout and r.mode == "gpu"
    assert r.count == want
    u = sm.count(G, name, mode="gpu", gpu_mode=layout, unique=True)
    assert u.count * u.automorphisms == want


@pytest.mark.parametrize("layout", LAYOUTS)
def test_gpu_layouts_on_labeled_queries(layout):
    rng = random.Random(7)
    G = nx.gnp_random_graph(14, 0.35, seed=7)
    nx.set_node_attributes(G, {v: rng.randrange(2) for v in G}, "label")
    for size in (2, 4):
        Q = _random_walk_query(G, size, rng)
        want = _embeddings(G, Q, labeled=True)
        assert want > 0
        assert sm.count(G, Q, mode="gpu", gpu_mode=layout).count == want, size


def test_gpu_single_vertex_query_and_no_candidates():
    G = nx.path_graph(5)
    q = gthinker.Graph.from_edges(np.zeros((0, 2), np.int64), num_vertices=1)
    for layout in LAYOUTS:
        assert sm.count(G, q, mode="gpu", gpu_mode=layout).count == 5
        assert sm.count(G, "triangle", mode="gpu", gpu_mode=layout).count == 0


@pytest.mark.parametrize("layout", LAYOUTS)
def test_hybrid_with_a_tiny_budget_stays_exact(layout):
    """A 1 us budget makes CPU tasks decompose into S, which an idle GPU may
    steal (CPU records into the layout; which moves happen is timing, so the
    conversions themselves are checked exactly below)."""
    G = nx.gnp_random_graph(11, 0.45, seed=3)
    want = _embeddings(G, sm.pattern("4-cycle").to_networkx())
    r = sm.count(G, "4-cycle", mode="hybrid", threads=2, gpu_mode=layout, time_budget=1e-6,
                 early_split=1e-6)
    assert r.count == want
    assert r.mode == "hybrid"


def test_prefix_records_convert_to_cpu_records():
    # [2, 5, 7, C = 1, 3] -> [3, 5, 7, 1], [3, 5, 7, 3]; a CPU-marked [-2, 4, 6] -> [2, 4, 6]
    data = np.array([2, 5, 7, 1, 3, -2, 4, 6], np.int32)
    starts = np.array([0, 5, 8], np.int64)
    out, ostarts = _prefix_to_cpu(data, starts)
    recs = [out[ostarts[i]:ostarts[i + 1]].tolist() for i in range(len(ostarts) - 1)]
    assert recs == [[3, 5, 7, 1], [3, 5, 7, 3], [2, 4, 6]]
    # And CPU records are marked on the way in, unchanged otherwise.
    d, s = SubgraphMatchingPrefixGPU().move_tasks_from_cpu(
        np.array([2, 4, 6, 1, 9], np.int32), np.array([0, 3, 5], np.int64))
    assert d.tolist() == [-2, 4, 6, -1, 9] and s.tolist() == [0, 3, 5]
    back, _ = _prefix_to_cpu(d, s)
    assert back.tolist() == [2, 4, 6, 1, 9]


def test_layout_choice_follows_fanout_skew():
    star = nx.star_graph(9000)  # one vertex with 9000 candidates, the rest with 1
    p = sm.plan(star, "3-path")
    assert choose_layout(gthinker.as_graph(star), p)[0] == "expand"
    G = nx.gnp_random_graph(200, 0.05, seed=1)
    g = gthinker.as_graph(G)
    assert choose_layout(g, sm.plan(g, "triangle"))[0] == "prefix"
    assert sm.choose_gpu_mode(g, sm.plan(g, "triangle"))[0] == "dfs"  # the engine first
    # fanouts are the real first-level branching: |N(v) & C(second)| per first
    # candidate; for a triangle, C = the vertices of degree >= 2
    f = sm.fanouts(g, sm.plan(g, "triangle"))
    c = {v for v in G if G.degree(v) >= 2}
    assert sorted(f.tolist()) == sorted(sum(w in c for w in G[v]) for v in c)
