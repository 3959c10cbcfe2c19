"""Maximal clique enumeration against networkx, across thread counts and decomposition."""

from collections import Counter

import networkx as nx
import numpy as np
import pytest

import gthinker
from gthinker.apps import mce


def reference(G):
    sizes = Counter(len(c) for c in nx.find_cliques(G))
    return sum(sizes.values()), max(sizes, default=0), dict(sizes)


def check(G, **kw):
    res = mce.run(gthinker.Graph.from_networkx(G), **kw)
    count, max_size, hist = reference(G)
    assert (res.count, res.max_size, res.histogram) == (count, max_size, hist)
    return res


def planted(n, p, sizes, seed):
    rng = np.random.default_rng(seed)
    G = nx.gnp_random_graph(n, p, seed=seed)
    for k in sizes:
        nodes = rng.choice(n, size=k, replace=False).tolist()
        G.add_edges_from((a, b) for i, a in enumerate(nodes) for b in nodes[i + 1 :])
    return G


GRAPHS = {
    "gnp_sparse": lambda s: nx.gnp_random_graph(120, 0.05, seed=s),
    "gnp_dense": lambda s: nx.gnp_random_graph(40, 0.5, seed=s),
    "gnp_near_complete": lambda s: nx.gnp_random_graph(50, 0.9, seed=s),
    "powerlaw": lambda s: nx.powerlaw_cluster_graph(300, 6, 0.4, seed=s),
    "planted": lambda s: planted(150, 0.08, [12, 9, 15], s),
    "with_isolated": lambda s: nx.disjoint_union(nx.gnp_random_graph(30, 0.2, seed=s),
                                                 nx.empty_graph(5)),
}


@pytest.mark.parametrize("kind", sorted(GRAPHS))
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_matches_networkx(kind, seed):
    check(GRAPHS[kind](seed), threads=2)


@pytest.mark.parametrize("threads", [1, 2, 4])
def test_thread_counts_and_forced_decomposition(threads):
    G = planted(200, 0.1, [18, 14], seed=7)
    plain = check(G, threads=threads)
    # A budget of a microsecond makes nearly every task time out and decompose.
    tiny = check(G, threads=threads, time_budget=1e-6, cpu_task_batch=1, flush_batch=1,
                 timeout_check_interval=1)
    assert tiny.stats["tasks_decomposed"] > 100
    assert tiny.stats["spill_peak_bytes"] > 0
    assert plain.count == tiny.count
    total = tiny.stats["tasks_spawned"] + tiny.stats["records_computed"]
    assert tiny.stats["records_computed"] == tiny.stats["tasks_decomposed"]  # none lost or redone
    assert total == G.number_of_nodes() + tiny.stats["tasks_decomposed"]


def test_small_cases():
    empty = gthinker.Graph.from_edges(np.empty((0, 2), np.int64))
    res = mce.run(empty)
    assert (res.count, res.max_size, res.histogram) == (0, 0, {})
    check(nx.Graph([(5, 9)]))
    check(nx.empty_graph(4))  # four cliques of size 1
    check(nx.complete_graph(30))
    check(nx.complete_graph(400))  # every vertex task is dominated by an earlier vertex
    check(nx.disjoint_union(nx.complete_graph(6), nx.path_graph(5)))


def test_output_file_has_every_clique_in_original_ids(tmp_path):
    G = nx.relabel_nodes(planted(80, 0.1, [10], seed=3), lambda v: 1000 + 7 * v)
    G.add_node(99999)  # isolated vertex with an id of its own
    out = tmp_path / "cliques.txt"
    res = mce.run(gthinker.Graph.from_networkx(G), threads=2, output=out, time_budget=1e-6,
                 timeout_check_interval=1)
    got = sorted(tuple(sorted(map(int, line.split()))) for line in out.read_text().splitlines())
    want = sorted(tuple(sorted(c)) for c in nx.find_cliques(G))
    assert got == want
    assert res.count == len(want)


@pytest.mark.parametrize("name", ["email-Enron-1000.txt.gz", "facebook-1000.txt.gz"])
def test_real_graphs_known_count(name):
    from conftest import DATA, TRUTH

    want = TRUTH[name]  # igraph and networkx agreed (tests/data/make.py)
    g = gthinker.Graph.read(DATA / name)
    res = mce.run(g, threads=2)
    assert res.count == want["maximal_cliques"]
    assert res.max_size == want["max_clique"]
    assert res.histogram == {int(k): v for k, v in want["maximal_clique_sizes"].items()}
    heavy = mce.run(g, threads=2, time_budget=1e-6, timeout_check_interval=1)
    assert heavy.stats["tasks_decomposed"] > 0
    assert (heavy.count, heavy.histogram) == (res.count, res.histogram)


def test_bad_parameters():
    g = gthinker.Graph.from_networkx(nx.path_graph(3))
    with pytest.raises(ValueError, match="threads"):
        mce.run(g, threads=0)
    with pytest.raises(ValueError, match="time_budget"):
        mce.run(g, time_budget=-1)
    with pytest.raises(ValueError, match="mode"):
        mce.run(g, mode="quantum")
    with pytest.raises(ValueError, match="does not exist"):
        mce.run(g, output="/nonexistent-dir/x.txt")


def test_spill_limit_is_a_clear_error():
    G = planted(200, 0.1, [20], seed=1)
    with pytest.raises(gthinker.SpillLimitError, match="spill stack S"):
        mce.run(gthinker.Graph.from_networkx(G), threads=2, time_budget=1e-6, flush_batch=1,
                timeout_check_interval=1, spill_limit=64)


def test_matches_igraph_on_a_skewed_graph():
    igraph = pytest.importorskip("igraph")
    from gthinker.graphs.generate import rmat

    g = rmat(11, edge_factor=6, seed=5)
    ig = igraph.Graph(n=g.num_vertices, edges=g.edge_array().tolist())
    sizes = Counter(len(c) for c in ig.maximal_cliques())
    res = mce.run(g, threads=2)
    assert res.count == sum(sizes.values())
    assert res.histogram == dict(sizes)


def test_inputs_users_hold_and_iterating_cliques(tmp_path):
    import scipy.sparse as sp

    G = nx.relabel_nodes(planted(60, 0.1, [8], seed=9), lambda v: f"n{v}")
    want = sorted(sorted(c) for c in nx.find_cliques(G))
    got = sorted(sorted(c) for c in mce.iter_cliques(G, threads=2))
    assert got == want  # node names come back for non-integer networkx nodes

    H = planted(60, 0.1, [8], seed=9)
    edges = np.array(H.edges(), dtype=np.int64) + 10
    want = sorted(sorted(v + 10 for v in c) for c in nx.find_cliques(H) if len(c) > 1)
    assert sorted(c.tolist() for c in mce.iter_cliques(edges, threads=1)) == want
    matrix = sp.csr_array(nx.to_scipy_sparse_array(H))
    assert mce.run(matrix).count == sum(1 for _ in nx.find_cliques(H))
    path = tmp_path / "h.txt"
    gthinker.as_graph(edges).write(path)
    assert mce.run(str(path)).count == len(want)
    with pytest.raises(TypeError, match="cannot make a graph from dict"):
        mce.run({"a": 1})
