"""Matching and counting on graphs with hubs (a vertex adjacent to most of the graph),
against networkx, on the CPU and on the GPU (Numba's simulator; GTHINKER_TEST_REAL_GPU=1:
a real GPU): the depth-first GPU matcher with its buffers forced down to one or two ids,
so that hub lists are read a window at a time, kept lists go virtual, the count-only
tail counts from the sources and hub levels split into window tasks; every variant of
the triangle and by-vertex clique kernels; the clique counts in every mode."""

import dataclasses
import itertools
import os
import random

import networkx as nx
import numpy as np
import pytest
from conftest import REAL_GPU
from test_sm import _embeddings, _random_walk_query

import gthinker
from gthinker.apps import count, sm
from gthinker.apps.matching import cliques_gpu, planner
from gthinker.apps.matching.dfs_gpu import WINDOW_IDS, DFSEngine, buffer_sizes
from gthinker.apps.matching.local_gpu import LOCAL, LOCAL_VARIANTS
from gthinker.apps.matching.planner import plan
from gthinker.apps.matching.search import SubgraphMatching
from gthinker.apps.matching.triangles_gpu import TRIANGLES, VARIANTS

#: T-DFS's patterns 3-6 (data/pattern/N.g of lyuheng/tdfs): tails of every kind (a kept
#: list and its parent; a list and a row; joined twins). With 5-path (two rows) and 5-cycle
#: (two enumerated levels, a one-vertex tail) below, every path of the engine runs.
TDFS = {
    "4-clique+2": [(0, 1), (0, 2), (0, 3), (0, 4), (1, 2), (1, 3), (1, 4), (2, 3)],
    "diamond+tips": [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 4), (3, 4)],
    "wheel W4": [(0, 1), (0, 2), (0, 3), (0, 4), (1, 2), (1, 4), (2, 3), (3, 4)],
    "5-clique-e": [(0, 1), (0, 2), (0, 3), (0, 4), (1, 2), (1, 3), (1, 4), (2, 3), (3, 4)],
}
#: Buffers of one id, and a budget of one element: every path of the hub code runs.
TINY = {"list_cap": 1, "window": 1, "budget": 1}


def star_and_clique(leaves=4, k=5):
    """A hub joined to every vertex of a k-clique and to ``leaves`` leaves."""
    G = nx.complete_graph(range(1, k + 1))
    G.add_edges_from((0, v) for v in range(1, k + 1 + leaves))
    return G


def hub_to_most(n=10, p=0.35, seed=3):
    """A random graph whose vertices 0 and 1 are adjacent to (nearly) all the others."""
    G = nx.gnp_random_graph(n, p, seed=seed)
    G.add_edges_from((0, v) for v in range(1, n))
    G.add_edges_from((1, v) for v in range(2, n - 1))
    return G


def bipartite_hubs(side=6, seed=2):
    """Two hubs on one side of a random bipartite graph adjacent to the whole other side,
    a few edges within the sides (triangles through the hubs)."""
    G = nx.bipartite.random_graph(side, side, 0.3, seed=seed)
    G.add_edges_from((h, v) for h in (0, 1) for v in range(side, 2 * side))
    G.add_edges_from([(0, 1), (side, side + 1), (side + 2, side + 3), (2, 3)])
    return G


def random_plus_hubs(n=14, p=0.2, seed=5):
    """A sparse random graph with three hubs added, adjacent to each other."""
    G = nx.gnp_random_graph(n, p, seed=seed)
    for h, step in ((0, 1), (1, 2), (2, 3)):
        G.add_edges_from((h, v) for v in range(0, n, step) if v != h)
    return G


def _query(edges):
    return gthinker.Graph.from_edges(np.array(edges, np.int64))


def _dfs_job(G, q, **engine):
    """Distinct matches of ``q`` by the DFS engine with knobs ``engine`` (gpu mode)."""
    g = gthinker.as_graph(G)
    p = plan(g, q, unique=True)
    res = gthinker.run(SubgraphMatching, g, mode="gpu", params=p.params,
                       gpu=DFSEngine.configured(**engine))
    return res.counters["matches"] * p.automorphisms, res.stats["gpu"]


# ---- the depth-first matcher ------------------------------------------------------------


def test_buffer_sizes_hold_the_largest_degree_or_windows_within_the_budget():
    # every warp fits with buffers of the largest degree: nothing cut
    assert buffer_sizes(1000, 2, 5, 100, 100 * 7 * 1000 * 4) == (1000, 1000, 100)
    # a hub of 10^6: windows of WINDOW_IDS, the lists what is left, every warp runs
    budget = 2112 * 4 * (2 * 200_000 + 5 * WINDOW_IDS)
    lcap, ccap, warps = buffer_sizes(10**6, 2, 5, 2112, budget)
    assert (ccap, warps) == (WINDOW_IDS, 2112) and lcap == 200_000
    assert warps * (2 * lcap + 5 * ccap) * 4 <= budget
    # not even windows fit every warp: fewer warps
    lcap, ccap, warps = buffer_sizes(10**6, 2, 5, 2112, 1 << 20)
    assert lcap == ccap == WINDOW_IDS and warps * 7 * WINDOW_IDS * 4 <= 1 << 20
    assert buffer_sizes(50, 1, 4, 8, 1 << 30, list_cap=3, window=2) == (3, 2, 8)


@pytest.mark.parametrize("G,name,budget", [
    (star_and_clique(3), "4-clique+2", 1),
    (hub_to_most(9), "diamond+tips", 1),
    (random_plus_hubs(12), "5-clique-e", 1),
    (bipartite_hubs(), "5-path", 1),
    (hub_to_most(8, 0.3, seed=2), "5-cycle", 12),  # some tasks descend before they split
], ids=["star+clique", "hub-to-most", "random+hubs", "bipartite", "5-cycle"])
def test_patterns_on_hub_graphs_with_one_id_buffers(G, name, budget):
    q = _query(TDFS[name]) if name in TDFS else sm.pattern(name)
    want = _embeddings(G, q.to_networkx())
    got, stats = _dfs_job(G, q, **{**TINY, "budget": budget})
    assert got == want, name
    assert stats["list_cap"] == stats["window"] == 1 and stats["tasks_split"] > 0
    assert sm.count(G, q, mode="cpu", threads=2).count == want


def test_labeled_query_on_a_hub_graph_with_one_id_buffers():
    """Count-only positions with candidate bitmaps read through virtual lists."""
    rng = np.random.default_rng(11)
    G = hub_to_most(11, 0.4, seed=11)
    nx.set_node_attributes(G, {v: int(rng.integers(2)) for v in G}, "label")
    Q = _random_walk_query(G, 5, random.Random(11))
    assert _dfs_job(G, Q, **TINY)[0] == _embeddings(G, Q, labeled=True)


def test_joined_pairs_past_the_buffers(monkeypatch):
    """A restriction between two count-only positions of different sources (the planner
    joins only twins; here one is added to 4-clique+2): the pairs x < y are counted from
    windows of the second position, as the CPU search counts them."""
    real = planner.pattern_plan

    def joined(query, **kw):
        pp = real(query, **kw)
        s = pp.num_vertices - pp.count_only
        return dataclasses.replace(pp, restrictions=pp.restrictions + ((s, s + 1),))

    monkeypatch.setattr(planner, "pattern_plan", joined)
    G = hub_to_most(8, 0.4, seed=7)
    g = gthinker.as_graph(G)
    p = plan(g, _query(TDFS["4-clique+2"]), unique=True)
    cpu = gthinker.run(SubgraphMatching, g, mode="cpu", threads=1, params=p.params)
    for knobs in (TINY, {}):
        gpu = gthinker.run(SubgraphMatching, g, mode="gpu", params=p.params,
                           gpu=DFSEngine.configured(**knobs))
        assert gpu.counters["matches"] == cpu.counters["matches"] > 0, knobs


def test_a_small_budget_picks_windows_by_itself(monkeypatch):
    """No forced sizes: a device budget below the largest degree's buffers gives windows
    (here of 2 ids, as a graph whose hubs have millions of neighbours gets WINDOW_IDS) and
    the same count."""
    from gthinker.apps.matching import dfs_gpu

    monkeypatch.setattr(dfs_gpu, "WINDOW_IDS", 2)
    G = hub_to_most(8, 0.3, seed=9)
    q = _query(TDFS["diamond+tips"])
    got, stats = _dfs_job(G, q, list_bytes=4 * 16)
    assert got == _embeddings(G, q.to_networkx())
    assert stats["window"] == 2 and 2 <= stats["list_cap"] < max(dict(G.degree).values())


# ---- clique counting ------------------------------------------------------------------


HUBS = [star_and_clique(6, 6), bipartite_hubs()]


@pytest.mark.parametrize("G", HUBS, ids=["star+clique", "bipartite"])
def test_clique_counts_on_hub_graphs_in_every_mode(G):
    sizes = {}
    for c in nx.enumerate_all_cliques(G):
        sizes[len(c)] = sizes.get(len(c), 0) + 1
    for k in (3, 4, 5):
        for mode in ("cpu", "gpu"):
            assert count.count(G, f"{k}-clique", mode=mode, threads=2).count == sizes.get(
                k, 0), (k, mode)


def _by_id_dag(G):
    """G oriented from the smaller id to the larger (a DAG whose hubs come first)."""
    edges = np.array(sorted((min(a, b), max(a, b)) for a, b in G.edges), np.int64)
    indptr = np.zeros(G.number_of_nodes() + 1, np.int64)
    np.add.at(indptr, edges[:, 0] + 1, 1)
    return gthinker.Graph(np.cumsum(indptr), edges[:, 1].astype(np.int32))


def _wide_hub_graph():
    """Hubs 0-2 with 66 to 70 out-neighbours (three bitset words, and lists past the 64
    from which the triangle variants sample), among a few random edges."""
    G = nx.gnp_random_graph(76, 0.03, seed=5)
    G.add_edges_from((h, v) for h in range(3) for v in range(h + 1, 76) if (v + h) % 9)
    G.add_edges_from(itertools.combinations(range(3, 9), 2))
    return G


#: The kernel variants tested: every one on a real GPU or with GTHINKER_TEST_ALL_VARIANTS=1
#: (the simulator takes some 50 s for them all); else the ones counts run (the others are
#: the variant benchmark's, benchmarks/count_gpu_variants.py).
ALL_VARIANTS = REAL_GPU or os.environ.get("GTHINKER_TEST_ALL_VARIANTS") == "1"


def _variants(every: dict, used):
    return list(every.values()) if ALL_VARIANTS else [used]


def test_triangle_kernel_variants_count_networkx_triangles():
    G = _wide_hub_graph()
    want = sum(nx.triangles(G).values()) // 3
    dag = _by_id_dag(G)  # any DAG of G will do for a kernel
    for v in _variants(VARIANTS, TRIANGLES):
        dev = cliques_gpu.CliqueDevice(dag, 3, variant=v)
        assert dev.edges([(0, dag.num_vertices)], take=True)
        assert dev.take() == want, v.name
    # ranges of first vertices (the spans path of every variant)
    dev = cliques_gpu.CliqueDevice(dag, 3, variant=VARIANTS["degree-reverse"])
    dev.edges([(0, 1), (1, 40), (40, dag.num_vertices)])
    assert dev.total() == want
    # the degree orientation a variant may name, as count() takes it
    assert cliques_gpu.count(gthinker.Graph.from_networkx(G).degree_oriented(), 3)[0] == want


def test_by_vertex_kernel_variants_count_networkx_4_cliques():
    G = nx.gnp_random_graph(42, 0.04, seed=6)  # hubs 0, 1 of 38-40 out-neighbours
    G.add_edges_from((h, v) for h in range(2) for v in range(h + 1, 42) if (v + h) % 13)
    G.add_edges_from(itertools.combinations(range(2, 8), 2))
    dag = _by_id_dag(G)
    assert np.diff(dag.indptr).max() > 32  # rows of two words: the block path
    want = sum(1 for c in nx.enumerate_all_cliques(G) if len(c) == 4)
    for v in _variants(LOCAL_VARIANTS, LOCAL):
        dev = cliques_gpu.CliqueDevice(dag, 4, variant=v)
        assert dev.local and dev.edges([(0, dag.num_vertices)], take=True)
        assert dev.take() == want, v.name


def test_edge_sources_are_made_on_the_device():
    dag = _by_id_dag(random_plus_hubs())
    copy = cliques_gpu.GraphCopy(dag)
    np.testing.assert_array_equal(
        copy.src.copy_to_host(),
        np.repeat(np.arange(dag.num_vertices, dtype=np.int32), np.diff(dag.indptr)))
