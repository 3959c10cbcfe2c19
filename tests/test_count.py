"""Pattern counting (gthinker.apps.count) against networkx and brute force, in every mode."""

import itertools
import json
import math

import networkx as nx
import numpy as np
import pytest

import gthinker
import gthinker.graphs.generate
from gthinker import setops
from gthinker.apps import count
from gthinker.apps.matching import cliques_gpu as count_gpu
from gthinker.apps.matching.cliques_gpu import CliqueDevice


def _clique_sizes(G):
    sizes = {}
    for c in nx.enumerate_all_cliques(G):
        sizes[len(c)] = sizes.get(len(c), 0) + 1
    return sizes


def _brute_force(G, edges_of_pattern, k):
    """Distinct (not necessarily induced) subgraphs isomorphic to the pattern:
    edge sets of injective maps, deduplicated."""
    P = nx.Graph(edges_of_pattern)
    found = set()
    for nodes in itertools.permutations(G.nodes, k):
        if all(G.has_edge(nodes[a], nodes[b]) for a, b in P.edges):
            found.add(frozenset(frozenset((nodes[a], nodes[b])) for a, b in P.edges))
    return len(found)


GRAPHS = [nx.gnp_random_graph(35, 0.35, seed=0), nx.powerlaw_cluster_graph(50, 6, 0.6, seed=3),
          nx.complete_graph(9)]


@pytest.mark.parametrize("G", GRAPHS, ids=["gnp", "powerlaw", "K9"])
def test_k_cliques_and_every_size_match_networkx(G):
    ref = _clique_sizes(G)
    for k in range(1, max(ref) + 2):
        for budget in (0.1, 1e-5):  # the second decomposes nearly every task
            res = count.count(G, f"{k}-clique", mode="cpu", threads=2, time_budget=budget)
            assert res.count == ref.get(k, 0), (k, budget)
    assert count.count(G, "triangle", mode="cpu", threads=2).count == sum(
        nx.triangles(G).values()) // 3
    for budget in (0.1, 1e-5):
        res = count.count(G, "cliques", mode="cpu", threads=2, time_budget=budget)
        assert res.counts == ref and res.count == sum(ref.values())


def test_every_clique_size_is_exact_past_64_bits():
    # K_70 has C(70, 35) ~ 1.1e20 35-cliques, more than an int64 holds.
    res = count.count(nx.complete_graph(70), "cliques", mode="cpu", threads=2)
    assert res.counts == {k: math.comb(70, k) for k in range(1, 71)}
    assert res.counts[35] > 2**64


@pytest.mark.parametrize("name,edges", [
    ("4-cycle", [(0, 1), (1, 2), (2, 3), (3, 0)]),
    ("diamond", [(0, 1), (1, 2), (2, 3), (3, 0), (0, 2)]),
    ("tailed-triangle", [(0, 1), (1, 2), (0, 2), (2, 3)]),
    ("4-path", [(0, 1), (1, 2), (2, 3)]),
    ("4-star", [(0, 1), (0, 2), (0, 3)]),
])
def test_other_patterns_match_brute_force(name, edges):
    G = nx.gnp_random_graph(13, 0.4, seed=5)
    res = count.count(G, name, mode="cpu", threads=2)
    assert res.count == _brute_force(G, edges, 4)
    formula = name in ("4-cycle", "tailed-triangle")
    assert res.method == (f"formula ({name})" if formula else "subgraph matching")
    assert count.count(G, name, mode="cpu", threads=2, vertices=range(13)).count == res.count


def test_unknown_pattern_names_the_known_ones():
    with pytest.raises(ValueError, match="4-cycle"):
        count.count(nx.path_graph(3), "pentagram", mode="cpu")


def test_empty_graph_and_more_vertices_than_the_graph():
    assert count.count(nx.empty_graph(0), "triangle", mode="cpu").count == 0
    assert count.count(nx.path_graph(3), "5-clique", mode="cpu").count == 0
    assert count.count(nx.empty_graph(0), "cliques", mode="cpu").counts == {}


def test_oriented_graph_is_a_dag_of_the_same_edges():
    G = nx.powerlaw_cluster_graph(80, 4, 0.3, seed=1)
    g = gthinker.Graph.from_networkx(G)
    dag = count.oriented(g)
    assert dag.indices.size == g.num_edges
    order, _ = g.degeneracy_order()
    rank = np.argsort(order)
    pairs = set()
    for v in range(g.num_vertices):
        out = dag.indices[dag.indptr[v]:dag.indptr[v + 1]]
        assert np.all(np.diff(out) > 0) and np.all(rank[out] > rank[v])
        pairs.update((min(v, int(u)), max(v, int(u))) for u in out)
    assert pairs == {(min(a, b), max(a, b)) for a, b in g.edge_array().tolist()}
    assert np.diff(dag.indptr).max() <= g.degeneracy


@pytest.mark.parametrize("mode", ["gpu", "hybrid"])
def test_gpu_and_hybrid_counts_equal_networkx(mode):
    G = nx.gnp_random_graph(24, 0.45, seed=7)
    ref = _clique_sizes(G)
    for k in range(3, max(ref) + 2):
        res = count.count(G, f"{k}-clique", mode=mode, threads=2, time_budget=1e-4)
        assert res.count == ref.get(k, 0) and res.mode == mode, k


def test_gpu_counts_prefix_records_from_the_cpu():
    G = nx.gnp_random_graph(20, 0.5, seed=2)
    g = gthinker.Graph.from_networkx(G)
    dag = count.oriented(g)
    edges = [(v, int(u)) for v in range(g.num_vertices)
             for u in dag.indices[dag.indptr[v]:dag.indptr[v + 1]]]
    data = np.array(edges, np.int32).ravel()
    starts = np.arange(0, data.size + 1, 2, dtype=np.int64)
    for k in (3, 4, 5):
        dev = CliqueDevice(dag, k, blocks=1)
        dev.prefixes(data, starts)  # every edge as a prefix record = every k-clique once
        assert dev.total() == _clique_sizes(G).get(k, 0), k


def test_gpu_kernels_on_long_lists_and_wide_local_graphs():
    """Three hubs with 35-36 out-neighbours each (the id order is the DAG):
    intersections that search past the 32 samples, and local graphs of two
    bitset words (4-cliques by vertex, 5-cliques by edge); triangles run twice on
    the kept device copy, whose launch state resets itself."""
    rng = np.random.default_rng(5)
    G = nx.gnp_random_graph(40, 0.02, seed=5)
    leaves = rng.permutation(np.arange(3, 40))
    G.add_edges_from((h, int(x)) for h in range(3) for x in np.roll(leaves, h)[:35])
    G.add_edges_from(itertools.combinations([0, 1, 2, *map(int, leaves[8:12])], 2))
    edges = np.array(sorted((min(a, b), max(a, b)) for a, b in G.edges), np.int64)
    indptr = np.zeros(41, np.int64)
    np.add.at(indptr, edges[:, 0] + 1, 1)
    dag = gthinker.Graph(np.cumsum(indptr), edges[:, 1].astype(np.int32))
    common = set(dag.indices[dag.indptr[0]:dag.indptr[1]]) & set(
        dag.indices[dag.indptr[1]:dag.indptr[2]])
    assert len(common) > 32  # the edge (0, 1) has candidates in two words
    ref = _clique_sizes(G)
    for k in (3, 3, 4, 5):
        assert count_gpu.count(dag, k)[0] == ref[k], k
    assert count_gpu.count(dag, 3, vertices=range(1, 40))[0] == _clique_sizes(
        G.subgraph(range(1, 40)))[3]


def test_setops_agree_with_numpy():
    rng = np.random.default_rng(0)
    for na, nb in [(0, 5), (5, 0), (10, 10), (3, 200), (200, 3), (50, 60)]:
        a = np.unique(rng.integers(0, 300, na)).astype(np.int32)
        b = np.unique(rng.integers(0, 300, nb)).astype(np.int32)
        common = np.intersect1d(a, b)
        assert setops.intersect_size(a, b) == common.size
        out = np.empty(max(a.size, 1), np.int32)
        n = setops.intersect(a, a.size, b, out)
        assert np.array_equal(out[:n], common)
        pos = np.empty(max(a.size, b.size, 1), np.int32)
        n = setops.intersect_positions(a, b, pos)
        assert np.array_equal(b[pos[:n]], common)


def test_cli_count_json(tmp_path, capsys):
    from gthinker.cli.main import main

    G = nx.gnp_random_graph(30, 0.3, seed=4)
    path = tmp_path / "g.txt"
    nx.write_edgelist(G, path, data=False)
    g = gthinker.Graph.read(path)  # the file drops isolated vertices; count what it holds
    ref = _clique_sizes(g.to_networkx())
    assert main(["count", str(path), "4-clique", "--json", "-q", "--mode", "cpu"]) == 0
    assert json.loads(capsys.readouterr().out)["count"] == ref.get(4, 0)
    assert main(["count", str(path), "cliques", "--json", "-q", "--mode", "cpu"]) == 0
    got = json.loads(capsys.readouterr().out)["counts"]
    assert {int(k): v for k, v in got.items()} == ref
    assert main(["count", str(path), "no-such-pattern", "-q"]) == 2


def test_triangles_at_the_middle_vertex_match_networkx_on_skewed_graphs():
    # R-MAT: hubs with thousands of in-neighbours; budget 1e-5 splits nearly every range.
    g = gthinker.graphs.generate.rmat(10, edge_factor=12, seed=3)
    G = g.to_networkx()
    ref = sum(nx.triangles(G).values()) // 3
    for budget in (0.1, 1e-5):
        res = count.count(g, "triangle", mode="cpu", threads=2, time_budget=budget)
        assert res.count == ref and res.mode == "cpu", budget
    # ranges of first vertices (the cluster's split) take the first-vertex path and add up
    n = g.num_vertices
    parts = [count.count(g, "triangle", mode="cpu", threads=2, vertices=range(a, min(a + 300, n)))
             for a in range(0, n, 300)]
    assert sum(p.count for p in parts) == ref


def test_middle_graph_in_rows_reverse_the_out_rows():
    g = gthinker.Graph.from_networkx(nx.powerlaw_cluster_graph(120, 5, 0.5, seed=2))
    mg = count.middle_graph(g)
    dag = mg.dag
    out = {(v, int(u)) for v in range(dag.num_vertices)
           for u in dag.indices[dag.indptr[v]:dag.indptr[v + 1]]}
    assert all(u > v for v, u in out) and len(out) == g.num_edges
    ins = set()
    for u in range(dag.num_vertices):
        for k in range(mg.in_ptr[u], mg.in_ptr[u + 1]):
            v, off = int(mg.in_src[k]), int(mg.in_off[k])
            assert dag.indices[dag.indptr[v] + off - 1] == u  # v's row goes on after u
            ins.add((v, u))
    assert ins == out
    assert np.all(np.diff(mg.work) > 0)
    # the renumbered graph is the same graph: original ids map its edges back
    back = {frozenset((int(dag.ids[v]), int(dag.ids[u]))) for v, u in out}
    assert back == {frozenset((int(g.ids[a]), int(g.ids[b]))) for a, b in g.edge_array().tolist()}


@pytest.mark.parametrize("name", ["cocktail", "join", "near-cliques"])
def test_every_clique_size_where_pivots_are_universal_or_p_is_small(name):
    # Graphs whose pivot-tree nodes have universal vertices (joined to everything) and
    # small remainders: the shortcuts of the one-word walk (universal vertices moved to
    # the pivots at once, small P tallied by listing its cliques).
    if name == "cocktail":  # K_{2,2,...,2}: every vertex misses one other
        G = nx.complement(nx.Graph([(2 * i, 2 * i + 1) for i in range(11)]))
    elif name == "join":  # a 6-clique joined to a sparse random graph
        G = nx.complement(nx.disjoint_union(nx.empty_graph(6),
                                            nx.complement(nx.gnp_random_graph(30, 0.2, seed=1))))
    else:  # cliques of 8-12 vertices, each missing a few edges, sharing vertices
        rng = np.random.default_rng(4)
        G = nx.Graph()
        for _ in range(12):
            nodes = rng.choice(60, size=rng.integers(8, 13), replace=False).tolist()
            G.add_edges_from(e for e in itertools.combinations(nodes, 2) if rng.random() > 0.08)
    ref = _clique_sizes(G)
    for budget in (0.1, 1e-5):
        res = count.count(G, "cliques", mode="cpu", threads=2, time_budget=budget)
        assert res.counts == ref, budget


def test_unowned_views_share_the_array():
    from numba import njit

    from gthinker.bits import unowned

    @njit
    def f(a):
        b = unowned(a)
        b[0] = 7
        return b[1:3].sum() + unowned(a.reshape(2, 5))[1, 1]

    a = np.arange(10)
    assert f(a) == 1 + 2 + 6 and a[0] == 7


def test_bitset_count_and_gather_match_numpy():
    from numba import njit

    from gthinker.bits import count_bits, gather

    @njit
    def f(words, ids):
        out = np.full(ids.size + 1, -1, np.int64)
        end = gather(words, words.size, ids, out, 1)
        return count_bits(words, words.size), end, out

    rng = np.random.default_rng(3)
    words = rng.integers(-(2**63), 2**63 - 1, size=3, dtype=np.int64)
    ids = rng.permutation(192) * 10
    bits = np.unpackbits(words.view(np.uint8), bitorder="little").astype(bool)
    n, end, out = f(words, ids)
    assert n == bits.sum() and end == 1 + n
    assert out[0] == -1 and list(out[1:end]) == list(ids[np.flatnonzero(bits)])
