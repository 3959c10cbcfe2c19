"""Graphs larger than the GPU (gthinker.apps.matching.partitions): the neighbourhoods and
parts against networkx, and the GPU engines (Numba's simulator) under a tiny
``gpu_memory`` cap that forces several parts, against networkx's counts and the uncapped
run; the CPU search on the same parts for many random graphs and queries (cheap)."""

import random

import networkx as nx
import numpy as np
import pytest
from test_sm import _embeddings, _random_walk_query

import gthinker
from gthinker.apps import count, sm
from gthinker.apps.matching import partitions
from gthinker.apps.matching.planner import plan


def _graph(n, p, seed, labels=0):
    G = nx.gnp_random_graph(n, p, seed=seed)
    if labels:
        rng = random.Random(seed)
        nx.set_node_attributes(G, {v: rng.randrange(labels) for v in G}, "label")
    return G


def _local(rows, cols, seed, labels=0):
    """A grid with random diagonals, numbered row by row: neighbourhoods of consecutive
    vertices overlap, so a part holds many roots (a random graph's two hops reach half
    of it from a few)."""
    rng = random.Random(seed)
    G = nx.grid_2d_graph(rows, cols)
    G.add_edges_from(((r, c), (r + 1, c + 1)) for r in range(rows - 1) for c in range(cols - 1)
                     if rng.random() < 0.5)
    G = nx.convert_node_labels_to_integers(G, ordering="sorted")
    if labels:
        nx.set_node_attributes(G, {v: rng.randrange(labels) for v in G}, "label")
    return G


def _cap(g, share):
    """A cap of ``share`` of the graph's device bytes."""
    return int(partitions.graph_bytes(g) * share)


def test_ball_and_induced_part_match_networkx():
    rng = random.Random(0)
    for seed in range(20):
        G = _graph(40, 0.08, seed)
        g = gthinker.as_graph(G)
        roots = sorted(rng.sample(range(40), rng.randint(1, 5)))
        hops = rng.randint(0, 3)
        want = set()
        for r in roots:
            want |= set(nx.single_source_shortest_path_length(G, r, cutoff=hops))
        ids, entries = partitions.ball(g, roots, hops)
        assert ids.tolist() == sorted(want)
        assert entries == 2 * G.subgraph(want).number_of_edges()
        part = partitions.induced(g, roots, hops)
        sub = part.graph
        sub.check()
        assert part.vertices.tolist() == sorted(want)
        assert part.vertices[part.roots].tolist() == roots
        got = {(int(part.vertices[a]), int(part.vertices[b])) for a, b in sub.edge_array()}
        assert got == {tuple(sorted(e)) for e in G.subgraph(want).edges()}


def test_ball_keeps_to_allowed_vertices():
    G = nx.path_graph(6)  # 0-1-2-3-4-5
    g = gthinker.as_graph(G)
    allowed = np.ones(6, bool)
    allowed[2] = False
    ids, _ = partitions.ball(g, [0], 4, allowed)
    assert ids.tolist() == [0, 1]
    ids, _ = partitions.ball(g, [2], 1, allowed)  # a root is in whatever it is
    assert ids.tolist() == [1, 2, 3]


def test_cut_covers_the_roots_within_the_cap():
    G = _graph(120, 0.03, 3)
    g = gthinker.as_graph(G)
    cap = _cap(g, 0.4)
    ranges = partitions.cut(g, np.arange(120), 1, cap)
    assert len(ranges) >= 2
    assert np.concatenate(ranges).tolist() == list(range(120))
    for r in ranges:
        ids, entries = partitions.ball(g, r, 1)
        assert 8 * (ids.size + 1) + 4 * entries <= cap
    with pytest.raises(gthinker.GraphTooLargeError, match="raise --gpu-memory"):
        partitions.cut(g, np.arange(120), 3, 60)


def test_hops_of_an_order():
    # a path 0-1-2-3 from an end reaches 3 hops, from the middle 2; a star's centre 1
    assert partitions.hops_of([(), (0,), (1,), (2,)]) == 3
    assert partitions.hops_of([(), (0,), (0,), (1,)]) == 2
    assert partitions.hops_of([(), (0,), (0,), (0,)]) == 1
    assert partitions.hops_of([()]) == 0


def test_range_records_are_the_runs():
    data, starts = partitions.range_records([2, 3, 4, 7, 9, 10])
    assert data.tolist() == [-3, 5, -8, 8, -10, 11]
    assert starts.tolist() == [0, 2, 4, 6]


def test_cpu_search_in_parts_matches_networkx():
    """The parts' logic (roots, neighbourhoods, plan_within, the sum) on the CPU search,
    for many random graphs and queries, labeled and not, unique or not."""
    rng = random.Random(7)
    checked = 0
    for seed in range(40):
        labeled = seed % 2
        G = _graph(rng.randint(20, 45), rng.uniform(0.05, 0.2), seed, labels=3 * labeled)
        if G.number_of_edges() < 3:
            continue
        Q = _random_walk_query(G, rng.randint(2, 5), rng)
        data, query = gthinker.as_graph(G), gthinker.as_graph(Q)
        unique = bool(seed % 3 == 0)
        p = plan(data, query, unique)
        cap = _cap(data, rng.uniform(0.35, 0.7))
        try:
            res, parts = partitions.search_in_parts(data, p, cap, "cpu", threads=1)
        except gthinker.GraphTooLargeError:
            continue
        # unique: one embedding per automorphism class (the restrictions); else all
        got = res.counters["matches"] * (p.automorphisms if unique else 1)
        assert got == _embeddings(G, Q, labeled=bool(labeled)), (seed, parts)
        assert len(res.stats["parts"]) == parts
        checked += 1
    assert checked >= 25


@pytest.mark.parametrize("gpu_mode, name", [("dfs", "tailed-triangle"), ("prefix", "3-path")])
def test_gpu_sm_in_parts_matches_uncapped_and_networkx(gpu_mode, name):
    G = _local(8, 2, 11)
    g = gthinker.as_graph(G)
    whole = sm.count(G, name, mode="gpu", gpu_mode=gpu_mode)
    res = sm.count(G, name, mode="gpu", gpu_mode=gpu_mode, gpu_memory=_cap(g, 0.8))
    assert res.count == whole.count == _embeddings(G, sm.pattern(name).to_networkx())
    assert 2 <= len(res.stats["parts"]) <= 3
    assert "parts of at most" in res.mode_reason
    assert "parts" not in whole.stats


def test_gpu_sm_in_parts_labeled():
    G = _local(8, 2, 5, labels=2)
    Q = _random_walk_query(G, 3, random.Random(5))
    g = gthinker.as_graph(G)
    res = sm.count(G, Q, mode="gpu", gpu_mode="dfs", gpu_memory=_cap(g, 0.8))
    assert res.count == _embeddings(G, Q, labeled=True)
    assert len(res.stats["parts"]) >= 2


def test_gpu_count_in_parts():
    G = _local(8, 2, 2)
    G.add_edges_from((v, v + 1) for v in range(1, 15, 4))  # a square's other diagonal:
    G.add_edges_from((v, v + 3) for v in range(0, 13, 4))  # some 4-cliques
    g = gthinker.as_graph(G)
    triangles = sum(nx.triangles(G).values()) // 3
    k4 = sum(1 for c in nx.enumerate_all_cliques(G) if len(c) == 4)
    assert k4 > 0
    for pattern, want in (("triangle", triangles), ("4-clique", k4)):
        res = count.count(G, pattern, mode="gpu", gpu_memory=_cap(g, 0.5))
        assert res.count == want, pattern
        assert len(res.stats["parts"]) >= 2


def test_a_cap_above_the_graph_changes_nothing():
    G = _local(4, 2, 1)
    g = gthinker.as_graph(G)
    assert partitions.cap_for(g, partitions.graph_bytes(g)) is None
    assert partitions.cap_for(g, partitions.graph_bytes(g) - 1) == partitions.graph_bytes(g) - 1
    res = count.count(G, "triangle", mode="gpu", gpu_memory=partitions.graph_bytes(g) * 4)
    assert "parts" not in res.stats and res.count == sum(nx.triangles(G).values()) // 3
    with pytest.raises(ValueError, match="gpu_memory"):
        sm.count(G, "4-cycle", mode="gpu", gpu_memory=0)


def test_help_lists_gpu_memory():
    from gthinker.apps.count.options import CountOptions
    from gthinker.apps.sm.options import SMOptions

    for options in (SMOptions, CountOptions):
        assert "gpu_memory" in {f.name for f in options.__dataclass_fields__.values()}


def _hub(n, seed):
    """A path 0..n-1 with chords, and hub n joined to every third vertex: its two hops
    reach everything, so it alone exceeds a cap its edges fit."""
    rng = random.Random(seed)
    G = nx.path_graph(n)
    G.add_edges_from((v, v + 2) for v in range(n - 2) if rng.random() < 0.5)
    G.add_edges_from((n, v) for v in range(0, n, 3))
    return G


def test_a_hub_is_searched_from_its_edges():
    hubs = 0
    for seed in range(8):
        G = _hub(30, seed)
        data = gthinker.as_graph(G)
        for name in ("4-cycle", "house", "tailed-triangle"):
            Q = sm.pattern(name)
            for unique in (True, False):
                p = plan(data, Q, unique)
                res, parts = partitions.search_in_parts(data, p, _cap(data, 0.5), "cpu",
                                                        threads=1)
                got = res.counters["matches"] * (p.automorphisms if unique else 1)
                assert got == _embeddings(G, Q.to_networkx()), (seed, name, unique)
                hubs += any(f["from_records"] for f in res.stats["parts"])
    assert hubs >= 10


def test_gpu_hub_edges_in_parts():
    G = _hub(12, 1)
    g = gthinker.as_graph(G)
    whole = sm.count(G, "4-cycle", mode="cpu", threads=1)
    res = sm.count(G, "4-cycle", mode="gpu", gpu_mode="dfs", gpu_memory=_cap(g, 0.6))
    assert res.count == whole.count == _embeddings(G, sm.pattern("4-cycle").to_networkx())
    assert any(f["from_records"] for f in res.stats["parts"])


def test_without_a_cap_parts_follow_the_free_memory(monkeypatch):
    g = gthinker.as_graph(_local(6, 3, 0))
    need = partitions.graph_bytes(g)
    for free, want in ((3 * need, None), (need, need - need // 2),
                       (need + partitions.WORKING_BYTES * 3, None)):
        monkeypatch.setattr(gthinker.gpu, "memory_info", lambda free=free: (free, 2 * free))
        assert partitions.cap_for(g, None) == want, free
    monkeypatch.setattr(gthinker.gpu, "memory_info", lambda: None)  # the simulator
    assert partitions.cap_for(g, None) is None
