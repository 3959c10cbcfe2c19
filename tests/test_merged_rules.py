"""Where newcomer's inputs and label rule meet main's edge labels and exact counts: a
GSI file found by its first line, the vertex-label rule keeping edge labels and
directions (against networkx's matchers), a labeled query of several vertex labels and
edge labels in count, --induced refused where inclusion-exclusion does not hold, and
gsword's exact count that says what became of the labels."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
from networkx.algorithms import isomorphism as iso

import gthinker
from gthinker.apps import count, gsword, sm
from gthinker.apps.gsword.command import describe


def _graph(rng, n, m, vlabels, elabels, directed):
    """(gthinker graph, networkx graph) of the same random input: loops dropped, a
    repeated pair keeps its first label."""
    e = rng.integers(0, n, (m, 2))
    lab = rng.integers(1, elabels + 1, m)
    vl = rng.integers(0, vlabels, n)
    G = nx.DiGraph() if directed else nx.Graph()
    G.add_nodes_from((i, {"l": int(vl[i])}) for i in range(n))
    for (a, b), x in zip(e.tolist(), lab.tolist(), strict=True):
        if a != b and not G.has_edge(a, b):
            G.add_edge(a, b, l=x)
    g = gthinker.Graph.from_edges(e, num_vertices=n, labels=vl, edge_labels=lab,
                                  directed=directed)
    return g, G


def _embeddings(G, Q, vertex_labels=True):
    def same(a, b):
        return a["l"] == b["l"]

    matcher = (iso.DiGraphMatcher if G.is_directed() else iso.GraphMatcher)(
        G, Q, node_match=same if vertex_labels else None, edge_match=same)
    return sum(1 for _ in matcher.subgraph_monomorphisms_iter())


def _query(rng, nq, vlabels, elabels, directed):
    while True:
        q, Q = _graph(rng, nq, nq + 1, vlabels, elabels, directed)
        if (nx.is_weakly_connected if directed else nx.is_connected)(Q):
            return q, Q


def test_a_gsi_file_is_found_by_its_first_line_and_a_graph_file_still_is(tmp_path):
    g, _ = _graph(np.random.default_rng(1), 12, 30, 2, 3, True)
    g.write(tmp_path / "g.g")
    (tmp_path / "g.g").rename(tmp_path / "data")  # no suffix: its "t # 0" line says GSI
    assert gthinker.Graph.read(tmp_path / "data") == g
    (tmp_path / "l.graph").write_text("t 2 1\nv 0 1 1\nv 1 2 1\ne 0 1\n")
    (tmp_path / "l.graph").rename(tmp_path / "labeled")
    back = gthinker.Graph.read(tmp_path / "labeled")  # its "t 2 1" line says .graph
    assert back.labels.tolist() == [1, 2] and not back.directed and back.num_edges == 1


@pytest.mark.parametrize("directed", [False, True])
def test_ignore_labels_drops_vertex_labels_and_keeps_edge_labels(directed):
    rng = np.random.default_rng(5 + directed)
    data, G = _graph(rng, 9, 24, 2, 2, directed)
    query, Q = _query(rng, 3, 2, 2, directed)
    honoured = sm.count(data, query, mode="cpu", threads=1)
    assert honoured.count == _embeddings(G, Q) and honoured.labels == "honoured"
    ignored = sm.count(data, query, mode="cpu", threads=1, ignore_labels=True)
    assert ignored.count == _embeddings(G, Q, vertex_labels=False)
    assert ignored.labels == "ignored: --ignore-labels"


def test_count_takes_a_query_of_several_vertex_labels_with_edge_labels():
    rng = np.random.default_rng(3)
    data, G = _graph(rng, 10, 30, 2, 2, False)
    while True:
        query, Q = _query(rng, 3, 2, 2, False)
        if np.unique(query.labels).size > 1:
            break
    auts = sum(1 for _ in iso.GraphMatcher(
        Q, Q, node_match=lambda a, b: a["l"] == b["l"],
        edge_match=lambda a, b: a["l"] == b["l"]).isomorphisms_iter())
    res = count.count(data, query, mode="cpu", threads=1)
    assert res.count * auts == _embeddings(G, Q) and res.labels == "honoured"


def test_induced_is_refused_with_edge_labels_or_other_semantics():
    rng = np.random.default_rng(4)
    data, _ = _graph(rng, 8, 20, 1, 2, False)
    query, _ = _query(rng, 3, 1, 2, False)
    with pytest.raises(ValueError, match="induced"):
        sm.count(data, query, mode="cpu", threads=1, induced=True)
    with pytest.raises(ValueError, match="induced"):
        count.count(data, query, mode="cpu", threads=1, induced=True)
    with pytest.raises(ValueError, match="induced"):
        sm.count(data, "triangle", induced=True, semantics="homomorphism")


def test_gsword_counts_exactly_and_says_what_became_of_the_labels():
    nxg = nx.powerlaw_cluster_graph(200, 4, 0.3, seed=1)
    nx.set_node_attributes(nxg, 1, "label")  # every data vertex labeled
    data = gthinker.Graph.from_networkx(nxg)
    assert data.labels is not None
    exact = sm.count(data, "house", mode="cpu", threads=1)
    r = gsword.estimate(data, "house", "wj", samples=10**8, target_error=1e-4, mode="cpu",
                        threads=1, trawl=False)
    assert r.estimate == exact.count and r.exact is not None
    assert r.labels == exact.labels == "ignored: the query has none"
    assert r.to_dict()["labels"] == r.labels and r.to_dict()["exact"] == r.exact
    assert describe(r)[-1] == f"  labels {r.labels}"
    g, _ = _graph(np.random.default_rng(2), 8, 20, 1, 2, False)
    q, _ = _query(np.random.default_rng(2), 3, 1, 2, False)
    with pytest.raises(ValueError, match="edge labels"):
        gsword.estimate(g, q, "wj", samples=1000, mode="cpu", threads=1, ignore_labels=True)
