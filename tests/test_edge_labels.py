"""Edge labels and directed graphs: the model, the readers and writers, and matching
that honours them, against networkx's GraphMatcher / DiGraphMatcher (node and edge
matching; embeddings = subgraph monomorphisms, as tests/test_sm.py counts them) and
brute force for homomorphism and edge-isomorphism."""

from __future__ import annotations

import itertools

import networkx as nx
import numpy as np
import pytest
from networkx.algorithms import isomorphism as iso

import gthinker
from gthinker.apps import count as count_app
from gthinker.apps import sm
from gthinker.errors import GraphFormatError
from gthinker.graphs import edges, generate


def _random(rng, n, m, vlabels, elabels, directed):
    """(edges, edge labels, vertex labels or None) of a random graph on n vertices."""
    e = rng.integers(0, n, (m, 2))
    lab = rng.integers(1, elabels + 1, m)
    vl = rng.integers(0, vlabels, n) if vlabels else None
    return e, lab, vl


def _nx(e, lab, vl, n, directed):
    """The networkx graph gthinker builds from the same input: loops dropped, a repeated
    pair (directed: a repeated arc) keeps its first label."""
    G = nx.DiGraph() if directed else nx.Graph()
    G.add_nodes_from((i, {"l": 0 if vl is None else int(vl[i])}) for i in range(n))
    for (a, b), x in zip(e.tolist(), lab.tolist(), strict=True):
        if a != b and not G.has_edge(a, b):
            G.add_edge(a, b, l=x)
    return G


def _gt(e, lab, vl, n, directed):
    return gthinker.Graph.from_edges(e, num_vertices=n, labels=vl, edge_labels=lab,
                                     directed=directed)


def _connected_query(rng, nq, vlabels, elabels, directed):
    while True:
        e, lab, vl = _random(rng, nq, nq + int(rng.integers(0, 3)), vlabels, elabels, directed)
        Q = _nx(e, lab, vl, nq, directed)
        if (nx.is_weakly_connected if directed else nx.is_connected)(Q):
            return e, lab, vl, Q


def _same(a, b):
    return a["l"] == b["l"]


def _embeddings(G, Q):
    matcher = (iso.DiGraphMatcher if G.is_directed() else iso.GraphMatcher)(
        G, Q, node_match=_same, edge_match=_same)
    return sum(1 for _ in matcher.subgraph_monomorphisms_iter())


def _automorphisms(Q):
    matcher = (iso.DiGraphMatcher if Q.is_directed() else iso.GraphMatcher)(
        Q, Q, node_match=_same, edge_match=_same)
    return sum(1 for _ in matcher.isomorphisms_iter())


def _cases(seed, count):
    rng = np.random.default_rng(seed)
    for i in range(count):
        directed = bool(i % 2)
        vlabels = (0, 2)[(i // 2) % 2]
        elabels = int(rng.integers(1, 4))
        n = int(rng.integers(5, 10))
        e, lab, vl = _random(rng, n, int(rng.integers(n, 3 * n)), vlabels, elabels, directed)
        nq = int(rng.integers(2, 5))
        qe, ql, qv, Q = _connected_query(rng, nq, vlabels, elabels, directed)
        yield (_gt(e, lab, vl, n, directed), _nx(e, lab, vl, n, directed),
               _gt(qe, ql, qv, nq, directed), Q)


@pytest.mark.parametrize("seed", range(4))
def test_embeddings_and_distinct_subgraphs_match_networkx(seed):
    """60 random labeled graphs per seed, directed and not, with and without vertex
    labels: embeddings equal GraphMatcher's / DiGraphMatcher's monomorphisms, and
    distinct subgraphs equal them divided by |Aut(q)|."""
    for data, G, query, Q in _cases(seed, 60):
        want = _embeddings(G, Q)
        got = sm.count(data, query, threads=1)
        assert got.count == want
        assert got.automorphisms == _automorphisms(Q)
        assert sm.count(data, query, threads=1, unique=True).count == want // got.automorphisms


def _brute(G, Q, semantics):
    """Maps of Q's vertices to G's that keep vertex labels and map every query edge to a
    data edge of its label and direction; homomorphism: any such map; edge-isomorphism:
    distinct query edges to distinct data edges."""
    qn, gn = list(Q.nodes), list(G.nodes)
    found = 0
    for image in itertools.product(gn, repeat=len(qn)):
        f = dict(zip(qn, image, strict=True))
        if any(Q.nodes[u]["l"] != G.nodes[f[u]]["l"] for u in qn):
            continue
        used = []
        ok = True
        for a, b, x in Q.edges(data="l"):
            if not G.has_edge(f[a], f[b]) or G.edges[f[a], f[b]]["l"] != x:
                ok = False
                break
            used.append((f[a], f[b]) if G.is_directed() else frozenset((f[a], f[b])))
        if ok and (semantics == "homomorphism" or len(set(used)) == len(used)):
            found += 1
    return found


@pytest.mark.parametrize("semantics", ["homomorphism", "edge-isomorphism"])
def test_homomorphisms_and_edge_isomorphisms_match_brute_force(semantics):
    for data, G, query, Q in _cases(7, 60):
        if G.number_of_nodes() ** Q.number_of_nodes() > 4000:
            continue
        assert sm.count(data, query, threads=1, semantics=semantics).count == \
            _brute(G, Q, semantics)


def test_semantics_on_unlabeled_shapes_by_count_and_sm():
    """Homomorphisms of a path of 3 vertices: the sum of squared degrees; of a triangle
    in K4: 4 * 3 * 2 (no vertex can repeat along a triangle's edges)."""
    g = nx.gnm_random_graph(12, 30, seed=3)
    want = sum(d * d for _, d in g.degree())
    assert count_app.count(g, "3-path", semantics="homomorphism", threads=1).count == want
    assert sm.count(g, "3-path", semantics="homomorphism", threads=1).count == want
    assert count_app.count(nx.complete_graph(4), "triangle", semantics="homomorphism",
                           threads=1).count == 24
    with pytest.raises(ValueError, match="unique"):
        sm.count(g, "3-path", semantics="homomorphism", unique=True)
    with pytest.raises(ValueError, match="semantics"):
        count_app.count(g, "cliques", semantics="homomorphism")


def test_queries_without_edge_labels_or_directions_use_the_skeleton(capsys):
    """A plain query on an edge-labeled, directed graph matches its undirected skeleton
    (said once on stderr); a directed query on an undirected graph is refused."""
    rng = np.random.default_rng(5)
    e, lab, _ = _random(rng, 30, 120, 0, 3, True)
    data = _gt(e, lab, None, 30, True)
    plain = gthinker.Graph(data.indptr, data.indices)
    assert sm.count(data, "4-cycle", threads=1).count == sm.count(plain, "4-cycle",
                                                                   threads=1).count
    assert count_app.count(data, "triangle", threads=1).count == \
        count_app.count(plain, "triangle", threads=1).count
    err = capsys.readouterr().err
    assert "undirected skeleton" in err
    q = gthinker.Graph.from_edges([(0, 1), (1, 2)], directed=True)
    with pytest.raises(ValueError, match="directed"):
        sm.count(plain, q)
    lq = gthinker.Graph.from_edges([(0, 1), (1, 2)], edge_labels=[1, 2])
    with pytest.raises(ValueError, match="edge labels"):
        sm.count(plain, lq)


@pytest.mark.parametrize("semantics", ["isomorphism", "homomorphism", "edge-isomorphism"])
def test_the_gpu_search_counts_what_the_cpu_counts(semantics):
    """The GPU search (the simulator here) on random labeled graphs, directed and not,
    against networkx (isomorphism) or brute force."""
    for data, G, query, Q in itertools.islice(_cases(3, 40), 0, 40, 5):
        got = sm.count(data, query, semantics=semantics, mode="gpu")
        if not got.method.startswith("subgraph matching ("):
            continue  # uniform labels on both sides: the plain engines counted it
        assert got.mode == "gpu"
        want = _embeddings(G, Q) if semantics == "isomorphism" else _brute(G, Q, semantics)
        assert got.count == want


def test_queries_the_gpu_search_does_not_take_run_on_the_cpu(capsys):
    """A query beyond the GPU search's stack runs on the CPU, said once on stderr."""
    from gthinker.apps.matching.labeled_gpu import MAX_QUERY

    n = MAX_QUERY + 1
    path = [(i, i + 1) for i in range(n - 1)]
    query = gthinker.Graph.from_edges(path, edge_labels=[1 + i % 2 for i in range(n - 1)],
                                      directed=True)
    data = gthinker.Graph.from_edges(path + [(0, n - 1)], edge_labels=[1 + i % 2 for i in
                                                                       range(n - 1)] + [1],
                                     directed=True)
    for _ in range(2):
        got = sm.count(data, query, mode="gpu", threads=1)
        assert got.count == 1 and got.mode == "cpu"
    assert capsys.readouterr().err.count("runs on the CPU") == 1


def test_limit_and_output_list_labeled_embeddings(tmp_path):
    rng = np.random.default_rng(2)
    e, lab, _ = _random(rng, 10, 40, 0, 2, False)
    data = _gt(e, lab, None, 10, False)
    query = gthinker.Graph.from_edges([(0, 1), (1, 2)], edge_labels=[1, 2])
    total = sm.count(data, query, threads=1).count
    rows = sm.match(data, query, threads=1)
    G = _nx(e, lab, None, 10, False)
    assert len(rows) == total == len({tuple(r) for r in rows.tolist()})
    for a, b, c in rows.tolist():
        assert G.edges[a, b]["l"] == 1 and G.edges[b, c]["l"] == 2
    if total > 2:
        assert sm.count(data, query, threads=1, limit=2).count == 2


# ---- the model ------------------------------------------------------------------------


def test_from_edges_keeps_first_labels_and_directions():
    g = gthinker.Graph.from_edges([(0, 1), (1, 2), (2, 0), (1, 0), (0, 1)],
                                  edge_labels=[5, 6, 7, 8, 9], directed=True)
    assert g.directed and g.report.duplicates == 1 and g.num_edges == 3
    arcs = {(int(a), int(b)): int(x) for a, b, x in zip(*edges.arcs(g), strict=True)}
    assert arcs == {(0, 1): 5, (1, 2): 6, (2, 0): 7, (1, 0): 8}
    u = gthinker.Graph.from_edges([(0, 1), (1, 0), (1, 2)], edge_labels=[4, 5, 6])
    assert not u.directed and u.report.duplicates == 1
    assert dict(zip(map(tuple, u.edge_array().tolist()), edges.arcs(u)[2].tolist(),
                    strict=True)) == {(0, 1): 4, (1, 2): 6}
    with pytest.raises(GraphFormatError, match="one label per edge"):
        gthinker.Graph.from_edges([(0, 1)], edge_labels=[1, 2])
    with pytest.raises(GraphFormatError, match="edge labels must"):
        gthinker.Graph.from_edges([(0, 1)], edge_labels=[-1])


def test_reorder_keeps_edge_labels_and_directions():
    g = _sample()
    order = np.random.default_rng(1).permutation(g.num_vertices)
    r = g.reorder(order)
    r.check()
    arcs = {(int(g.ids[a]), int(g.ids[b]), int(x)) for a, b, x in zip(*edges.arcs(g),
                                                                       strict=True)}
    assert {(int(r.ids[a]), int(r.ids[b]), int(x))
            for a, b, x in zip(*edges.arcs(r), strict=True)} == arcs


def test_keyed_rows_hold_every_arc_once_per_direction_sorted_by_key():
    rng = np.random.default_rng(4)
    for directed in (False, True):
        e, lab, _ = _random(rng, 20, 80, 0, 3, directed)
        g = _gt(e, lab, None, 20, directed)
        G = _nx(e, lab, None, 20, directed)
        kptr, nb, keys = edges.keyed_rows(g)
        got = set()
        for v in range(20):
            row = list(zip(keys[kptr[v]:kptr[v + 1]].tolist(), nb[kptr[v]:kptr[v + 1]].tolist(),
                           strict=True))
            assert row == sorted(row) and len(set(row)) == len(row)
            got |= {(v, w, k) for k, w in row}
        want = set()
        for a, b, x in G.edges(data="l"):
            want |= ({(a, b, edges.key_of(x, edges.OUT)), (b, a, edges.key_of(x, edges.IN))}
                     if directed else {(a, b, x), (b, a, x)})
        assert got == want


# ---- readers and writers ---------------------------------------------------------------


def _sample(directed=True, vlabels=3):
    rng = np.random.default_rng(9)
    e, lab, vl = _random(rng, 40, 150, vlabels, 4, directed)
    return _gt(e, lab, vl, 40, directed)


def test_gsi_format_round_trips_and_reads_gsi_sample(tmp_path):
    g = _sample()
    g.write(tmp_path / "g.g")
    assert gthinker.Graph.read(tmp_path / "g.g") == g
    (tmp_path / "q.g").write_text("t # 0\n3 3 1 2\nv 0 1\nv 1 1\nv 2 1\ne 0 1 1\ne 1 2 2\n"
                                  "e 2 0 1\nt # -1\n")
    q = gthinker.Graph.read(tmp_path / "q.g")
    assert q.directed and q.labels.tolist() == [1, 1, 1]
    assert sorted(zip(*[a.tolist() for a in edges.arcs(q)], strict=True)) == \
        [(0, 1, 1), (1, 2, 2), (2, 0, 1)]
    (tmp_path / "two.g").write_text("t # 0\n1 0 1 1\nv 0 1\nt # 1\n1 0 1 1\nv 0 1\nt # -1\n")
    with pytest.raises(GraphFormatError, match="second graph"):
        gthinker.Graph.read(tmp_path / "two.g")
    (tmp_path / "bad.g").write_text("t # 0\n2 1 1 1\nv 0 1\nv 1 1\ne 0 5 1\nt # -1\n")
    with pytest.raises(GraphFormatError, match="out of range"):
        gthinker.Graph.read(tmp_path / "bad.g")


@pytest.mark.parametrize("fmt,directed", [("edgelist-labeled", False),
                                          ("edgelist-directed", True),
                                          ("edgelist-directed-labeled", True)])
def test_edge_lists_with_labels_or_directions_round_trip(tmp_path, fmt, directed):
    g = _sample(directed, vlabels=0)
    if "labeled" not in fmt:
        g = gthinker.Graph(g.indptr, g.indices, ids=g.ids, directions=g.directions)
    g.write(tmp_path / "g.txt")
    back = gthinker.Graph.read(tmp_path / "g.txt", format=fmt)
    assert back == g
    plain = gthinker.Graph.read(tmp_path / "g.txt")  # the label column read as a weight
    assert plain.plain and np.array_equal(plain.indices, g.indices)


def test_graph_format_reads_edge_labels_when_every_line_has_one(tmp_path):
    g = _sample(False)
    g.write(tmp_path / "g.graph")
    assert gthinker.Graph.read(tmp_path / "g.graph") == g
    (tmp_path / "mixed.graph").write_text("t 3 2\nv 0 1 1\nv 1 1 2\nv 2 1 1\ne 0 1 5\ne 1 2\n")
    assert gthinker.Graph.read(tmp_path / "mixed.graph").edge_labels is None
    with pytest.raises(ValueError, match=".g"):
        _sample(True).write(tmp_path / "d.graph")


def test_binary_format_keeps_labels_and_directions(tmp_path):
    for g in (_sample(True), _sample(False), _sample(True, vlabels=0)):
        g.save(tmp_path / "g.csr")
        back = gthinker.Graph.load(tmp_path / "g.csr", verify=True)
        assert back == g and back.directed == g.directed


def test_generated_labels_are_skewed_and_reproducible():
    g = generate.label_edges(generate.rmat(10, seed=1), 8, skew=0.6, seed=3, directed=True)
    src, dst, lab = edges.arcs(g)
    share = np.bincount(lab, minlength=9)[1:] / lab.size
    assert abs(share[0] - 0.6) < 0.03 and share[1:].max() < 0.1 and lab.min() >= 1
    assert g.directed and src.size == generate.rmat(10, seed=1).num_edges
    assert generate.label_edges(generate.rmat(10, seed=1), 8, skew=0.6, seed=3,
                                directed=True) == g


def test_cli_generates_and_matches_an_edge_labeled_graph(tmp_path):
    from gthinker.cli.main import main

    out = tmp_path / "r.g"
    assert main(["generate", "rmat", "--scale", "7", "--edge-labels", "3", "--directed",
                 "-o", str(out), "-q"]) == 0
    g = gthinker.Graph.read(out)
    (tmp_path / "q.g").write_text("t # 0\n3 2 1 2\nv 0 1\nv 1 1\nv 2 1\ne 0 1 1\ne 1 2 2\n"
                                  "t # -1\n")
    q = gthinker.Graph.read(tmp_path / "q.g")
    G = _nx(np.column_stack(edges.arcs(g)[:2]), edges.arcs(g)[2], None, g.num_vertices, True)
    Q = _nx(np.array([[0, 1], [1, 2]]), np.array([1, 2]), None, 3, True)
    assert sm.count(g, q, threads=1).count == _embeddings(G, Q)
    assert main(["sm", str(out), str(tmp_path / "q.g"), "--semantics", "homomorphism",
                 "--threads", "1"]) == 0
