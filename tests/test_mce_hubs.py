"""MCE on graphs with hub vertices, exact against networkx ``find_cliques``.

A hub's subtree has an X of (here) most of the graph: the exclusion set is made
small (gthinker.apps.mce.local, checked against a brute force) and the search is
checked in cpu mode, and on the bitset GPU engine (Numba's CUDA simulator, tests/
conftest.py) in gpu and hybrid modes with the warps' scratch forced small, so that every
way of handling a subtree too big for a warp runs: handed back by the warps, X made
small on the host, a launch of wider warps, split into first-level branches, and
(hybrid) handed to the CPU workers. The generated presets (`gthinker generate preset`,
the seed's Table I shapes) at a tiny scale: every one in cpu mode, edit-shwiki's (a hub
beside nearly every vertex) in gpu, hybrid and auto modes.
"""

from collections import Counter

import networkx as nx
import numpy as np
import pytest

import gthinker
from gthinker.apps import mce
from gthinker.apps.mce import bitsets_gpu as mb
from gthinker.apps.mce import local
from gthinker.apps.mce.command import describe
from gthinker.graphs import generate


def _with_hubs(G, hubs, share, seed):
    """G plus ``hubs`` new vertices, each adjacent to a random ``share`` of G's
    vertices and to the other hubs."""
    rng = np.random.default_rng(seed)
    n = G.number_of_nodes()
    G = nx.convert_node_labels_to_integers(G)
    for h in range(n, n + hubs):
        G.add_edges_from((h, int(u)) for u in rng.choice(n, int(share * n), replace=False))
        G.add_edges_from((h, k) for k in range(n, h))
    return G


def star_and_cliques(seed):
    """A star (hub 0, leaves 1..26) with overlapping cliques and random edges among
    its leaves."""
    G = nx.star_graph(26)
    G.add_edges_from((u + 1, v + 1) for u, v in nx.gnp_random_graph(26, 0.15, seed=seed).edges)
    for lo, hi in ((1, 9), (6, 12), (12, 17), (15, 19), (20, 23)):
        nodes = [(u + seed) % 26 + 1 for u in range(lo, hi)]
        G.add_edges_from((a, b) for i, a in enumerate(nodes) for b in nodes[i + 1 :])
    return G


def bipartite_with_hubs(seed):
    G = nx.complete_bipartite_graph(5, 14)
    G.add_edges_from((19, u) for u in range(5, 19))  # a hub on the large side's vertices
    G.add_edges_from([(19, 0), (19, 1), (0, 1), (5, 6), (6, 7), (5, 7)])
    return _with_hubs(G, 1, 0.6, seed)


HUB_GRAPHS = {
    "star_and_cliques": star_and_cliques,
    "hub_beside_most": lambda s: _with_hubs(nx.gnp_random_graph(28, 0.2, seed=s), 1, 0.85, s),
    "bipartite_with_hubs": bipartite_with_hubs,
    "random_plus_hubs": lambda s: _with_hubs(nx.gnp_random_graph(30, 0.12, seed=s), 3, 0.7, s),
}


def _sizes(G):
    return dict(Counter(len(c) for c in nx.find_cliques(G)))


def _ordered(G):
    return gthinker.as_graph(G).degeneracy_ordered()


def _brute_rows(g, pglob, xall):
    """{row over P (frozenset of P vertices): smallest X vertex with it} for the X
    vertices with a neighbour in P."""
    ps = set(pglob.tolist())
    rows = {}
    for x in xall.tolist():
        r = frozenset(set(g.neighbors(x).tolist()) & ps)
        if r:
            rows.setdefault(r, x)
    return rows


def _subtrees(g):
    """(P, X) of every root, and of every first-level branch of every root."""
    data, starts = local.initial_records(g.indptr, g.indices, np.arange(g.num_vertices,
                                                                        dtype=np.int32))
    more, more_starts = local.first_level(g.indptr, g.indices, data, starts)
    for d, st in ((data, starts), (more, more_starts)):
        for i in range(len(st) - 1):
            rec = d[st[i] : st[i + 1]]
            nr, p, nx_ = rec[:3]
            yield rec[3 + nr : 3 + nr + p], rec[3 + nr + p : 3 + nr + p + nx_]


@pytest.mark.parametrize("kind", sorted(HUB_GRAPHS))
@pytest.mark.parametrize("side", [local.FROM_P, local.FROM_X, local.CHEAPER])
def test_x_rows_keeps_one_vertex_per_row_and_finds_covered_subtrees(kind, side):
    g = _ordered(HUB_GRAPHS[kind](1))
    covered_seen = 0
    for pglob, xall in _subtrees(g):
        xglob, rows, covered = local.x_rows(g.indptr, g.indices, pglob, xall, side)
        want = _brute_rows(g, pglob, xall)
        p = len(pglob)
        assert covered == (any(len(r) == p for r in want) if p else len(xall) > 0)
        covered_seen += covered
        if covered:
            assert len(xglob) == 0
            continue
        assert list(xglob) == sorted(set(xglob.tolist()))
        got = {frozenset(pglob[i] for i in range(p) if rows[k, i >> 6] >> (i & 63) & 1): x
               for k, x in enumerate(xglob.tolist())}
        assert all(want.get(r) == x for r, x in got.items())  # the smallest of each row
        # Left out: only single-vertex rows that a kept row of two or more holds.
        wider = set().union(*[r for r in got if len(r) > 1])
        assert all(len(r) == 1 and r <= wider for r in set(want) - set(got))
    assert covered_seen > 0


@pytest.mark.parametrize("side", [local.FROM_P, local.FROM_X])
def test_x_rows_with_hundreds_of_distinct_rows(side):
    # P: 12 vertices; X: 300, each adjacent to a random third of P (rows mostly distinct,
    # so the row table grows past any small size).
    rng = np.random.default_rng(5)
    edges = [(x, u) for x in range(12, 312) for u in range(12) if rng.random() < 0.35]
    g = gthinker.Graph.from_edges(np.array(edges), num_vertices=312)
    pglob, xall = np.arange(12, dtype=np.int32), np.arange(12, 312, dtype=np.int32)
    xglob, rows, covered = local.x_rows(g.indptr, g.indices, pglob, xall, side)
    want = _brute_rows(g, pglob, xall)
    got = {frozenset(i for i in range(12) if rows[k, 0] >> i & 1): x
           for k, x in enumerate(xglob.tolist())}
    assert not covered and len(got) > 200
    assert all(want[r] == x for r, x in got.items())
    wider = set().union(*[r for r in got if len(r) > 1])
    assert all(len(r) == 1 and r <= wider for r in set(want) - set(got))


def _records_on_cpu(g, data, starts):
    """The maximal cliques below the records (data, starts), by the CPU search."""
    res = gthinker.run(mce.MaximalCliques, g, vertices=[], records=(data, starts),
                       histogram_bins=g.degeneracy + 2, params=[1], threads=2)
    hist = res.histograms["size"]
    return {int(s): int(c) for s, c in enumerate(hist) if c}


@pytest.mark.parametrize("kind", sorted(HUB_GRAPHS))
def test_compacted_records_and_their_branches_hold_the_same_cliques(kind):
    G = HUB_GRAPHS[kind](2)
    g = _ordered(G)
    data, starts = local.initial_records(g.indptr, g.indices,
                                         np.arange(g.num_vertices, dtype=np.int32))
    small, small_starts, before, after = local.compact_records(g.indptr, g.indices, data, starts)
    assert after < before
    assert _records_on_cpu(g, small, small_starts) == _sizes(G)
    branches = local.first_level(g.indptr, g.indices, small, small_starts)
    assert _records_on_cpu(g, *branches) == _sizes(G)


@pytest.mark.parametrize("kind", sorted(HUB_GRAPHS))
@pytest.mark.parametrize("seed", [1, 2])
def test_cpu_mode_on_hub_graphs(kind, seed):
    G = HUB_GRAPHS[kind](seed)
    r = mce.run(G, mode="cpu", threads=2)
    assert r.histogram == _sizes(G)
    # Every task decomposes: the records carry the small X of their parents.
    tiny = mce.run(G, mode="cpu", threads=2, time_budget=1e-6, cpu_task_batch=1,
                   timeout_check_interval=1)
    assert tiny.histogram == _sizes(G) and tiny.stats["tasks_decomposed"] > 0


def _search_all(g, **kw):
    dev = mb.BitsetDevice(g, g.degeneracy + 2, blocks=1, **kw)
    work = mb.Work(np.arange(g.num_vertices)[::-1], np.zeros(0, np.int32), np.zeros(1, np.int64))
    while len(work):
        work = dev.run(work)
    hist = dev.histogram()
    return {int(s): int(c) for s, c in enumerate(hist) if c}, dev


# Scratch bytes for the simulator's 2 warps: 96 leave a warp 12 words (the floor: 24),
# so nearly every subtree is split on the host; 400 let small ones run on a warp and
# others on the two warps' scratch together; with half of it for ids (1/4 by default),
# the warps have ids for subtrees whose X' then does not fit their bitsets.
@pytest.mark.parametrize("kind, scratch, id_share, path", [
    ("random_plus_hubs", 96, mb.ID_SHARE, "split"),
    ("random_plus_hubs", 400, mb.ID_SHARE, "wide"),
    ("hub_beside_most", 300, 0.5, "returned_by_warps")])
def test_small_scratch_takes_every_path_and_stays_exact(kind, scratch, id_share, path,
                                                        monkeypatch):
    # The host's work in steps of a few records, on two threads.
    monkeypatch.setattr(mb, "HOST_STEP_WORDS", 64)
    G = HUB_GRAPHS[kind](1)
    got, dev = _search_all(_ordered(G), scratch_bytes=scratch, id_share=id_share,
                           host_threads=2)
    assert dev.big[path] > 0 and dev.big["compacted"] > 0
    assert dev.big["x_after"] < dev.big["x_before"]
    assert got == _sizes(G)


@pytest.mark.parametrize("kind, mode", [("star_and_cliques", "gpu"), ("random_plus_hubs", "gpu"),
                                        ("hub_beside_most", "hybrid"),
                                        ("bipartite_with_hubs", "hybrid")])
def test_gpu_and_hybrid_modes_on_hub_graphs(kind, mode):
    G = HUB_GRAPHS[kind](3)
    r = mce.run(G, mode=mode, threads=2, gpu_scratch_bytes=400, gpu_node_budget=4)
    assert r.histogram == _sizes(G) and r.stats["gpu_engine"] == "bitsets"
    gpu = r.stats["gpu"]
    assert gpu["big_subtrees"] > 0
    if mode == "hybrid":
        assert gpu["to_cpu"] > 0  # the hubs' roots went to the CPU workers


def test_memory_peaks_are_in_the_stats_and_the_text():
    G = HUB_GRAPHS["hub_beside_most"](1)
    g = gthinker.as_graph(G)
    r = mce.run(g, mode="gpu", gpu_scratch_bytes=400)
    gpu = r.stats["gpu"]
    graph_bytes = g.indptr.nbytes + g.indices.nbytes
    assert r.stats["gpu_peak_bytes"] == gpu["peak_bytes"] >= graph_bytes + gpu["scratch_bytes"]
    assert gpu["scratch_bytes"] <= 400
    assert r.stats["host_peak_bytes"] > 0
    assert r.to_dict()["stats"]["gpu_peak_bytes"] == gpu["peak_bytes"]
    text = "\n".join(describe(r))
    assert "GPU peak" in text and "host peak" in text and "big subtrees:" in text
    cpu = mce.run(G, mode="cpu", threads=1)
    assert "gpu_peak_bytes" not in cpu.stats and "host peak" in "\n".join(describe(cpu))


def test_a_small_record_buffer_splits_uploads_and_refused_spills_are_searched(monkeypatch):
    # 64 words: most records a warp writes out do not fit (it searches them itself), and a
    # round's records go up in several launches of at most 64 words each.
    monkeypatch.setattr(mb, "SPILL_WORDS", 64)
    G = HUB_GRAPHS["hub_beside_most"](2)
    g = _ordered(G)
    dev = mb.BitsetDevice(g, g.degeneracy + 2, blocks=1, budget=1, scratch_bytes=400)
    data, starts = local.initial_records(g.indptr, g.indices,
                                         np.arange(g.num_vertices, dtype=np.int32))
    work = mb.Work.of_records(data, starts)
    assert data.size > 64 and len(list(work.pieces(64))) > 1
    launches = []
    while len(work):
        before = dev.launches
        work = dev.run(work)
        launches.append(dev.launches - before)
    assert max(launches) > 1 and dev.spilled > 0
    hist = dev.histogram()
    assert {int(s): int(c) for s, c in enumerate(hist) if c} == _sizes(G)


def _networkx(g):
    """The networkx graph of a gthinker graph (internal ids)."""
    G = nx.Graph()
    G.add_nodes_from(range(g.num_vertices))
    src = np.repeat(np.arange(g.num_vertices), np.diff(g.indptr))
    G.add_edges_from(zip(src.tolist(), g.indices.tolist(), strict=True))
    return G


@pytest.mark.parametrize("name", sorted(generate.PRESETS))
def test_cpu_mode_on_the_generated_presets(name):
    """The seed's Table I graphs as `gthinker generate preset` shapes them (hubs of a
    fifth to most of the vertices in the folded bipartite ones), at a tiny scale."""
    g = generate.preset(name, scale=0.0003)
    assert g.max_degree > 80
    r = mce.run(g, mode="cpu", threads=2)
    assert r.histogram == _sizes(_networkx(g))


@pytest.mark.parametrize("mode", ["gpu", "auto"])
def test_gpu_and_auto_modes_on_a_generated_hub_graph(mode):
    """edit-shwiki's shape (a hub beside nearly every vertex) on the bitset engine,
    with a scratch too small for the hub's subtree in gpu mode (hybrid mode's hub roots
    on the CPU workers: test_gpu_and_hybrid_modes_on_hub_graphs)."""
    g = generate.preset("edit-shwiki", scale=0.00005)
    assert g.max_degree > g.num_vertices // 2
    r = mce.run(g, mode=mode, threads=2, gpu_scratch_bytes=4096)
    assert r.histogram == _sizes(_networkx(g))
    if mode == "gpu":
        assert r.stats["gpu"]["big_subtrees"] > 0
    if mode != "auto":
        assert r.stats["gpu_engine"] == "bitsets"
