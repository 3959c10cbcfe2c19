"""The depth-first GPU matcher (gthinker.apps.matching.dfs_gpu, T-DFS's techniques) on Numba's
simulator (GTHINKER_TEST_REAL_GPU=1: on a real GPU): counts against networkx's
monomorphisms on small random graphs, labeled and unlabeled, through the timeout
decomposition and a full queue, from CPU records and in hybrid jobs; its program (the
intersections it keeps) checked on every small pattern."""

import itertools
import os
import random

import networkx as nx
import numpy as np
import pytest
from test_sm import _automorphisms, _embeddings, _random_walk_query

import gthinker
from gthinker.apps import count, sm
from gthinker.apps.matching.dfs_plan import MAX_QUERY, fits, intersections, program
from gthinker.apps.matching.dispatch import choose_gpu_mode
from gthinker.apps.matching.pattern_plan import pattern_plan
from gthinker.apps.matching.planner import plan
from gthinker.apps.matching.search import SubgraphMatching

#: T-DFS's patterns 1-7 (its data/pattern/N.g), then shapes whose tails differ: a star
#: and a path counted from position 1, twins, a pair apart, a pair joined.
TDFS = {
    "diamond": [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3)],
    "4-clique": [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)],
    "4-clique+2": [(0, 1), (0, 2), (0, 3), (0, 4), (1, 2), (1, 3), (1, 4), (2, 3)],
    "diamond+tips": [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 4), (3, 4)],
    "wheel W4": [(0, 1), (0, 2), (0, 3), (0, 4), (1, 2), (1, 4), (2, 3), (3, 4)],
    "5-clique-e": [(0, 1), (0, 2), (0, 3), (0, 4), (1, 2), (1, 3), (1, 4), (2, 3), (3, 4)],
    "5-clique": [(a, b) for a, b in itertools.combinations(range(5), 2)],
}
SHAPES = ["triangle", "3-path", "4-star", "4-cycle", "house", "tailed-triangle", "5-path",
          "bull", "K2,3"]


def _query(edges):
    return gthinker.Graph.from_edges(np.array(edges, np.int64))


def _dfs(G, q, **keywords):
    return sm.count(G, q, mode="gpu", gpu_mode="dfs", **keywords)


@pytest.mark.parametrize("name", list(TDFS))
def test_tdfs_patterns_match_networkx(name):
    G = nx.gnp_random_graph(8, 0.6, seed=len(name))
    q = _query(TDFS[name])
    res = _dfs(G, q)
    assert res.count == _embeddings(G, q.to_networkx()), name
    assert res.gpu_mode == "dfs" and res.mode == "gpu"
    assert res.stats["gpu"]["launches"] == 1


def test_shapes_of_every_tail_match_networkx():
    G = nx.gnp_random_graph(7, 0.5, seed=4)
    for name in SHAPES:
        res = _dfs(G, name)
        assert res.count == _embeddings(G, sm.pattern(name).to_networkx()), name
    assert _dfs(G, "house", unique=True).count * 2 == _embeddings(
        G, sm.pattern("house").to_networkx())


#: Every connected pattern of 3 to 6 vertices (networkx's graph atlas): all of them on a
#: real GPU; on the simulator (where a six-vertex pattern takes seconds) every fifth of
#: 3 to 5 vertices and the densest of 6.
ATLAS = [Q for Q in nx.graph_atlas_g() if 3 <= len(Q) <= 6 and nx.is_connected(Q)]
ATLAS_RUN = ATLAS if os.environ.get("GTHINKER_TEST_REAL_GPU") == "1" else (
    [Q for Q in ATLAS if len(Q) <= 5][::5] + ATLAS[-1:])


def test_atlas_patterns_count_exactly_unique_or_not():
    G = nx.gnp_random_graph(7, 0.65, seed=3)
    for Q in ATLAS_RUN:
        q = gthinker.Graph.from_networkx(Q)
        want = _embeddings(G, Q)
        res = _dfs(G, q)
        assert res.count == want and res.gpu_mode == "dfs", sorted(Q.edges)
        assert _dfs(G, q, unique=True).count * _automorphisms(Q) == want, sorted(Q.edges)


def test_a_six_vertex_pattern_and_single_vertices_and_edges():
    G = nx.gnp_random_graph(8, 0.6, seed=2)
    six = _query([(0, 1), (1, 2), (2, 0), (2, 3), (3, 4), (4, 5), (5, 3), (0, 5)])
    assert _dfs(G, six).count == _embeddings(G, six.to_networkx())
    one = gthinker.Graph.from_edges(np.zeros((0, 2), np.int64), num_vertices=1)
    assert _dfs(G, one).count == 8
    assert _dfs(G, "2-path").count == 2 * G.number_of_edges()
    assert _dfs(nx.empty_graph(5), "triangle").count == 0


def test_labeled_queries_match_networkx():
    rng = random.Random(11)
    G = nx.gnp_random_graph(12, 0.4, seed=11)
    nx.set_node_attributes(G, {v: rng.randrange(2) for v in G}, "label")
    for size in (3, 4, 5):
        Q = _random_walk_query(G, size, rng)
        want = _embeddings(G, Q, labeled=True)
        assert want > 0
        assert _dfs(G, Q).count == want, size


def _job(G, q, mode="gpu", **engine):
    """The matching job of query q with the DFS engine's knobs ``engine``."""
    from gthinker.apps.matching.dfs_gpu import DFSEngine

    g = gthinker.as_graph(G)
    p = plan(g, q, unique=True)
    gpu = DFSEngine.configured(**engine)
    res = gthinker.run(SubgraphMatching, g, mode=mode, params=p.params, gpu=gpu,
                       threads=2 if mode == "hybrid" else None)
    return res, p.automorphisms


@pytest.mark.parametrize("name", ["wheel W4", "house"])
def test_timeout_decomposition_and_a_full_queue_stay_exact(name):
    """A budget of one element splits every task it can into the device queue; a queue
    of two records is full at once, and the warps go on by themselves."""
    G = nx.gnp_random_graph(8, 0.6, seed=6)
    q = _query(TDFS[name]) if name in TDFS else sm.pattern(name)
    want = _embeddings(G, q.to_networkx())
    res, aut = _job(G, q, budget=1)
    assert res.counters["matches"] * aut == want
    assert res.stats["gpu"]["tasks_split"] > 0
    res, aut = _job(G, q, budget=1, queue_records=2, block_threads=64)
    assert res.counters["matches"] * aut == want
    assert res.stats["gpu"]["queue_full"] > 0


def test_cpu_records_and_hybrid_jobs():
    """Partial matches handed over as CPU records ([k, M...], k = 1 and 2) count what
    their subtrees hold; a hybrid job with tiny budgets (records through S) is exact."""
    from gthinker.apps.matching.dfs_gpu import DFSEngine

    G = nx.gnp_random_graph(9, 0.6, seed=8)
    g = gthinker.as_graph(G)
    q = _query(TDFS["diamond+tips"])
    p = plan(g, q, unique=True)
    recs = [np.array([1, v], np.int32) for v in range(4)]  # roots 0..3 as records
    recs += [np.array([2, v, u], np.int32) for v in range(4, 9) for u in G[v]]
    res = gthinker.run(SubgraphMatching, g, mode="gpu", params=p.params, gpu=DFSEngine,
                       vertices=[], records=recs)
    cpu = gthinker.run(SubgraphMatching, g, mode="cpu", threads=1, params=p.params,
                       vertices=[], records=recs)
    assert res.counters["matches"] == cpu.counters["matches"] > 0
    small = nx.gnp_random_graph(7, 0.6, seed=8)
    hybrid = sm.count(small, q, mode="hybrid", threads=2, gpu_mode="dfs", time_budget=1e-6,
                      early_split=1e-6)
    assert hybrid.count == _embeddings(small, q.to_networkx()) and hybrid.mode == "hybrid"


def test_count_app_on_the_gpu_takes_the_dfs_engine():
    G = nx.gnp_random_graph(9, 0.5, seed=3)
    res = count.count(G, "house", mode="gpu")
    assert res.count * 2 == _embeddings(G, sm.pattern("house").to_networkx())
    assert res.mode == "gpu"


def test_programs_keep_each_backward_set_once_at_its_depth():
    """For every connected pattern of 3-6 vertices: each position's source is the
    intersection over its backward positions, each kept list one row more than its
    parent, computed once its last position is matched."""
    atlas = [Q for Q in nx.graph_atlas_g() if 3 <= len(Q) <= 6 and nx.is_connected(Q)]
    for Q in atlas:
        pp = pattern_plan(gthinker.Graph.from_networkx(Q))
        lists, sources = intersections([list(b) for b in pp.backward])
        sets = []
        for parent, x, depth in lists:
            base = sets[parent] if parent >= 0 else {-1 - parent}
            assert x not in base and depth == max(base | {x})
            sets.append(base | {x})
        assert len({frozenset(s) for s in sets}) == len(sets)  # each kept once
        for d, b in enumerate(pp.backward[1:], start=1):
            code = sources[d]
            assert (sets[code] if code >= 0 else {-1 - code}) == set(b), (sorted(Q.edges), d)


def test_program_of_a_wheel_reuses_its_hub_rim_list():
    G = nx.complete_graph(6)
    prog = program(plan(G, "4-wheel", unique=True).params)
    assert prog.lists == [(-1, 1, 1), (0, 2, 2)]  # {0, 1}, then {0, 1} & row(2)
    assert prog.sources[3] == prog.sources[4] == 1  # the twins count C(|list|, 2)
    assert prog.first_counted == 3


def test_the_engine_choice():
    G = nx.gnp_random_graph(40, 0.2, seed=1)
    p = plan(G, "house", unique=True)
    assert choose_gpu_mode(gthinker.as_graph(G), p)[0] == "dfs"
    big = plan(G, f"{MAX_QUERY + 1}-path", unique=True)
    assert "vertices" in fits(big.params)
    assert choose_gpu_mode(gthinker.as_graph(G), big)[0] in ("prefix", "expand")
    with pytest.raises(ValueError, match="gpu_mode='dfs'"):
        _dfs(G, f"{MAX_QUERY + 1}-path")
    with pytest.raises(ValueError, match="gpu_mode must be one of"):
        sm.count(G, "house", mode="gpu", gpu_mode="bfs")
