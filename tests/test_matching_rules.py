"""Induced matching, the one rule for labels, per-vertex counts and output that says what
it counted (sm, count, gsword), against networkx and brute force."""

import itertools
import json

import networkx as nx
import pytest
from conftest import run_cli as cli
from networkx.algorithms import isomorphism

import gthinker
from gthinker.apps import count, gsword, sm
from gthinker.apps.matching.induced import supergraphs

QUERIES = {
    "4-path": nx.path_graph(4),
    "4-star": nx.star_graph(3),
    "4-cycle": nx.cycle_graph(4),
    "tailed-triangle": nx.Graph([(0, 1), (1, 2), (2, 0), (2, 3)]),
    "diamond": nx.Graph([(0, 1), (1, 2), (2, 0), (0, 3), (1, 3)]),
    "bull-like": nx.Graph([(0, 1), (1, 2), (2, 0), (0, 3), (1, 4)]),
}


def _induced_embeddings(G, Q, labels=False) -> int:
    """networkx: the induced subgraph isomorphisms of Q into G (maps of Q's vertices)."""
    match = isomorphism.categorical_node_match("label", None) if labels else None
    return sum(1 for _ in isomorphism.GraphMatcher(G, Q, node_match=match)
               .subgraph_isomorphisms_iter())


def _automorphisms(Q) -> int:
    return sum(1 for _ in isomorphism.GraphMatcher(Q, Q).isomorphisms_iter())


@pytest.mark.parametrize("name", list(QUERIES))
def test_induced_matches_networkx(name):
    G = nx.gnp_random_graph(16, 0.35, seed=len(name))
    Q = QUERIES[name]
    want = _induced_embeddings(G, Q)
    res = sm.count(G, Q, induced=True, mode="cpu", threads=2)
    assert res.count == want and res.induced
    assert sm.count(G, Q, induced=True, unique=True, mode="cpu", threads=2).count == \
        want // _automorphisms(Q)
    assert count.count(G, Q, induced=True, mode="cpu", threads=2).count == \
        want // _automorphisms(Q)


def test_induced_labeled_matching_matches_networkx():
    G = nx.gnp_random_graph(18, 0.4, seed=7)
    nx.set_node_attributes(G, {v: v % 2 for v in G}, "label")
    Q = nx.path_graph(4)
    nx.set_node_attributes(Q, {0: 0, 1: 1, 2: 1, 3: 0}, "label")
    res = sm.count(G, Q, induced=True, mode="cpu", threads=2)
    assert res.count == _induced_embeddings(G, Q, labels=True) and res.labels == "honoured"


def test_induced_counts_agree_with_the_motif_counts():
    G = nx.gnp_random_graph(25, 0.3, seed=3)
    motifs = count.count(G, "motifs", size=4, threads=2).counts
    for name in ("4-path", "4-star", "4-cycle", "tailed-triangle", "diamond"):
        assert count.count(G, name, induced=True, threads=2).count == motifs[name]


def test_supergraph_coefficients_sum_as_inclusion_exclusion():
    # the query plus every set of its non-edges: the signs of a class sum to its coefficient
    q = gthinker.Graph.from_networkx(nx.path_graph(5))
    total = sum(c for _, c in supergraphs(q))
    assert total == 0  # sum over all 2^6 subsets of (-1)^|S|, grouped
    with pytest.raises(ValueError, match="non-edges"):
        supergraphs(gthinker.Graph.from_networkx(nx.path_graph(7)))


def _labeled(seed=2):
    G = nx.gnp_random_graph(30, 0.3, seed=seed)
    nx.set_node_attributes(G, {v: v % 3 for v in G}, "label")
    return G


def test_an_unlabeled_query_ignores_the_data_graphs_labels_and_says_so():
    G = _labeled()
    plain = nx.Graph(G.edges)
    plain.add_nodes_from(G)
    want = sm.count(plain, "4-cycle", mode="cpu", threads=2).count
    res = sm.count(G, "4-cycle", mode="cpu", threads=2)
    assert res.count == want and res.labels == "ignored: the query has none"
    res = count.count(G, "triangle", threads=2)
    assert res.count == sum(nx.triangles(plain).values()) // 3
    assert res.labels.startswith("ignored")


def test_ignore_labels_matches_the_structure_only():
    G = _labeled()
    Q = nx.path_graph(3)
    nx.set_node_attributes(Q, {0: 0, 1: 1, 2: 2}, "label")
    honoured = sm.count(G, Q, mode="cpu", threads=2)
    ignored = sm.count(G, Q, ignore_labels=True, mode="cpu", threads=2)
    match = isomorphism.categorical_node_match("label", None)
    assert honoured.count == sum(1 for _ in isomorphism.GraphMatcher(
        G, Q, node_match=match).subgraph_monomorphisms_iter())
    assert ignored.count == sum(1 for _ in isomorphism.GraphMatcher(
        nx.Graph(G.edges), nx.path_graph(3)).subgraph_monomorphisms_iter())
    assert ignored.labels == "ignored: --ignore-labels"


def test_a_query_of_one_label_on_an_unlabeled_graph_is_matched_unlabeled():
    G = nx.gnp_random_graph(20, 0.3, seed=5)
    Q = nx.cycle_graph(4)
    nx.set_node_attributes(Q, 0, "label")
    res = sm.count(G, Q, mode="cpu", threads=2)
    assert res.count == sm.count(G, nx.cycle_graph(4), mode="cpu", threads=2).count
    assert res.labels.startswith("ignored: the query's are all 0")
    nx.set_node_attributes(Q, {0: 0, 1: 1, 2: 0, 3: 1}, "label")
    with pytest.raises(ValueError, match="different vertex labels"):
        sm.count(G, Q)
    with pytest.raises(ValueError, match="different vertex labels"):
        gsword.estimate(G, Q, samples=1000, mode="cpu")
    est = gsword.estimate(G, Q, samples=1000, mode="cpu", ignore_labels=True)
    assert est.labels == "ignored: --ignore-labels"


def test_count_honours_a_labeled_pattern_of_one_label(tmp_path):
    G = _labeled(4)
    Q = nx.complete_graph(3)
    nx.set_node_attributes(Q, 1, "label")
    want = sum(1 for c in itertools.combinations(G, 3)
               if all(G.nodes[v]["label"] == 1 for v in c)
               and all(G.has_edge(a, b) for a, b in itertools.combinations(c, 2)))
    res = count.count(G, Q, threads=2)
    assert res.count == want and res.labels == "honoured"
    Q.nodes[0]["label"] = 2
    with pytest.raises(ValueError, match="gthinker sm"):
        count.count(G, Q)


def test_per_vertex_on_the_command_line_names_each_vertex(tmp_path):
    G = nx.Graph()
    names = [f"n{i}@x.org" for i in range(12)]
    H = nx.gnp_random_graph(12, 0.5, seed=8)
    G.add_edges_from((names[u], names[v]) for u, v in H.edges)
    path = tmp_path / "named.csv"
    path.write_text("a,b\n" + "".join(f"{u},{v}\n" for u, v in G.edges))
    want = {v: sum(1 for a, b in itertools.combinations(G[v], 2) if G.has_edge(a, b))
            for v in G}  # brute force
    r = cli("count", path, "triangle", "--per-vertex", "--json", "-q")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["per_vertex"] == want
    r = cli("count", path, "triangle", "--per-vertex", "-q")
    rows = r.stdout.splitlines()
    start = rows.index("per vertex (vertex, triangles at it):") + 1
    assert {line.split()[0]: int(line.split()[1]) for line in rows[start:]} == want
    r = cli("count", path, "4-cycle", "--per-vertex")
    assert r.returncode == 2 and "not 'triangle'" in r.stderr


def test_output_names_the_pattern_and_says_induced_or_not(tmp_path):
    G = nx.gnp_random_graph(25, 0.3, seed=11)
    path = tmp_path / "g.txt"
    path.write_text("".join(f"{u} {v}\n" for u, v in G.edges))
    c4 = tmp_path / "c4.txt"
    c4.write_text("0 1\n1 2\n2 3\n3 0\n")
    plain = count.count(G, "4-cycle", threads=2).count
    induced = count.count(G, "motifs", size=4, threads=2).counts["4-cycle"]
    assert induced < plain
    r = cli("count", path, c4, "-q")
    assert r.returncode == 0 and f"c4.txt: {plain:,} (non-induced)" in r.stdout, r.stderr
    r = cli("count", path, "4-cycle", "--induced", "-q")
    assert f"4-cycle: {induced:,} (induced)" in r.stdout, r.stderr
    r = cli("count", path, "motifs", "--size", "4", "-q")
    assert f"4-cycle: {induced:,} (induced)" in r.stdout
    r = cli("sm", path, c4, "--induced", "--unique", "-q")
    assert f"c4.txt: {induced:,} distinct subgraphs (induced)" in r.stdout, r.stderr
