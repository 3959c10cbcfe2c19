"""Subgraph matching (CPU): embedding counts against networkx's GraphMatcher
(non-induced: subgraph monomorphisms), distinct subgraphs x |Aut(q)| =
embeddings, decomposition changes nothing, and clear errors on bad queries."""

import random

import networkx as nx
import numpy as np
import pytest
from networkx.algorithms import isomorphism as iso

import gthinker
from gthinker.apps import sm
from gthinker.apps.matching import planner

NAMED = ["triangle", "4-cycle", "diamond", "tailed-triangle", "house", "4-clique", "5-clique",
         "3-path", "5-path", "4-star", "2-clique"]


def _embeddings(G, Q, labeled=False):
    match = iso.categorical_node_match("label", None) if labeled else None
    return sum(1 for _ in iso.GraphMatcher(G, Q, node_match=match).subgraph_monomorphisms_iter())


def _automorphisms(Q, labeled=False):
    match = iso.categorical_node_match("label", None) if labeled else None
    return sum(1 for _ in iso.GraphMatcher(Q, Q, node_match=match).isomorphisms_iter())


@pytest.mark.parametrize("name", NAMED)
def test_named_patterns_match_networkx(name):
    G = nx.gnp_random_graph(26, 0.3, seed=len(name))
    Q = sm.pattern(name).to_networkx()
    want = _embeddings(G, Q)
    emb = sm.count(G, name, threads=2)
    uniq = sm.count(G, name, threads=2, unique=True)
    assert emb.count == want
    assert uniq.automorphisms == _automorphisms(Q)
    assert uniq.count * uniq.automorphisms == want


def _random_walk_query(G, size, rng):
    """A connected query cut from G by a random walk (so it has a match), labels kept."""
    start = rng.choice(list(G.nodes))
    seen = [start]
    u = start
    for _ in range(50 * size):
        if len(seen) == size:
            break
        u = rng.choice(list(G.neighbors(u))) if G.degree(u) else start
        if u not in seen:
            seen.append(u)
    Q = nx.Graph(G.subgraph(seen))
    # Drop a few non-bridge edges: queries need not be induced subgraphs.
    for e in list(Q.edges):
        if Q.number_of_edges() > size and rng.random() < 0.3:
            Q.remove_edge(*e)
            if not nx.is_connected(Q):
                Q.add_edge(*e)
    return nx.convert_node_labels_to_integers(Q)


@pytest.mark.parametrize("seed", range(6))
def test_random_labeled_queries_match_networkx(seed):
    rng = random.Random(seed)
    G = nx.gnp_random_graph(40, 0.15 + 0.03 * seed, seed=seed)
    nx.set_node_attributes(G, {v: rng.randrange(3) for v in G}, "label")
    for size in (3, 4, 5, 6):
        Q = _random_walk_query(G, size, rng)
        if Q.number_of_nodes() < size:
            continue
        want = _embeddings(G, Q, labeled=True)
        assert want > 0
        emb = sm.count(G, Q, threads=2)
        uniq = sm.count(G, Q, threads=2, unique=True)
        assert emb.count == want, (seed, size, list(Q.edges))
        assert uniq.automorphisms == _automorphisms(Q, labeled=True)
        assert uniq.count * uniq.automorphisms == want


@pytest.mark.parametrize("seed", range(4))
def test_random_unlabeled_queries_match_networkx(seed):
    rng = random.Random(100 + seed)
    G = nx.gnp_random_graph(24, 0.35, seed=seed)
    for size in (4, 5):
        Q = _random_walk_query(G, size, rng)
        want = _embeddings(G, Q)
        assert sm.count(G, Q, threads=1).count == want
        uniq = sm.count(G, Q, threads=2, unique=True)
        assert uniq.count * uniq.automorphisms == want


def test_timeout_decomposition_changes_nothing():
    G = nx.gnp_random_graph(40, 0.25, seed=7)
    for name in ("4-cycle", "house"):
        whole = sm.count(G, name, threads=2, unique=True)
        split = sm.count(G, name, threads=2, unique=True, time_budget=1e-6, early_split=0,
                         timeout_check_interval=1)
        assert split.stats["tasks_decomposed"] > 0
        assert split.count == whole.count
        assert whole.count * whole.automorphisms == _embeddings(G, sm.pattern(name).to_networkx())


def test_plan_filters_candidates_by_label_degree_and_neighbour_labels():
    # Data: a path 0-1-2 labelled A B A plus a B vertex 3 hanging off 2 and an
    # isolated-ish A vertex 4 attached to 3.
    data = gthinker.Graph.from_edges(np.array([(0, 1), (1, 2), (2, 3), (3, 4)]),
                                     labels=np.array([0, 1, 0, 1, 0]))
    # Query: B in the middle of two As.
    query = gthinker.Graph.from_edges(np.array([(0, 1), (1, 2)]), labels=np.array([0, 1, 0]))
    p = sm.plan(data, query)
    assert p.candidates[1].tolist() == [1, 3]  # label B, degree 2, two A neighbours
    # A query end (label A, degree 1, one B neighbour): 0, 2 and 4 (2 has B neighbours 1, 3).
    assert p.candidates[0].tolist() == [0, 2, 4]
    assert sm.count(data, query).count == 4  # 0-1-2, 2-1-0, 2-3-4, 4-3-2
    assert sm.count(data, query, unique=True).count == 2


def test_the_candidate_rule_is_one_function_on_every_target():
    """planner.admissible (C(u), injectivity, M(a) < M(b)) gives the same answers as
    plain Python and compiled for the CPU, reading the match from an offset or with
    the vertex at position k given apart, as the GPU reads it."""
    data = gthinker.Graph.from_networkx(nx.complete_graph(6))
    p = sm.plan(data, "triangle", unique=True)  # constraints M(0) < M(1) < M(2) by position
    P = p.params
    M = np.array([1, 3, -1], np.int32)
    tagged = np.array([7, 1, 3, -1], np.int32)  # the same match behind a one-value tag
    for v in range(6):
        want = v > 3  # position 2: unused and above both earlier vertices
        assert planner.admissible(P, M, 0, 2, -1, 2, v) == want
        assert planner.is_admissible(P, M, 0, 2, -1, 2, v) == want
        assert planner.is_admissible(P, tagged, 1, 2, -1, 2, v) == want
        assert planner.is_admissible(P, M, 0, 1, 3, 2, v) == want  # M[1] = 3 given apart
    assert planner.is_candidate(P, 0, 5) and planner.in_candidates(P, 0, 5)


def test_orders_are_picked_by_name_or_checked():
    data = gthinker.Graph.from_networkx(nx.karate_club_graph())
    q = sm.pattern("tailed-triangle")
    cands = planner.filter_candidates(data, q)
    assert planner.order_for(data, q, cands, "sm").tolist() == \
        planner.matching_order(q, cands).tolist()
    assert sorted(planner.order_for(data, q, cands, "quicksi").tolist()) == [0, 1, 2, 3]
    assert planner.order_for(data, q, cands, [3, 2, 0, 1]).tolist() == [3, 2, 0, 1]
    with pytest.raises(ValueError, match="no neighbour earlier"):
        planner.order_for(data, q, cands, [3, 0, 1, 2])
    with pytest.raises(ValueError, match="'quicksi', 'sm'"):
        planner.order_for(data, q, cands, "fastest")
    assert planner.backward_positions(q, [3, 2, 0, 1]) == [[], [0], [1], [1, 2]]


def test_bad_queries_get_clear_errors():
    G = nx.path_graph(5)
    with pytest.raises(ValueError, match="empty"):
        sm.count(G, gthinker.Graph.from_edges(np.zeros((0, 2), np.int64), num_vertices=0))
    with pytest.raises(ValueError, match="disconnected"):
        sm.count(G, nx.Graph([(0, 1), (2, 3)]))
    assert sm.count(G, "6-path").count == 0  # larger than the data: no embedding (issue 17)
    labeled = nx.path_graph(3)
    nx.set_node_attributes(labeled, {0: 1, 1: 2, 2: 1}, "label")
    with pytest.raises(ValueError, match="2 different vertex labels and the data graph none"):
        sm.count(G, labeled)
    with pytest.raises(ValueError, match="unknown query pattern"):
        sm.pattern("pentagram")
    with pytest.raises(ValueError, match="k >= 2"):
        sm.pattern("1-clique")


def test_no_match_counts_zero():
    assert sm.count(nx.path_graph(6), "triangle").count == 0
    assert sm.count(nx.star_graph(5), "4-cycle", unique=True).count == 0


@pytest.mark.parametrize("name", ["email-Enron-1000.txt.gz", "facebook-1000.txt.gz"])
def test_triangles_of_real_graphs(name):
    from conftest import DATA, TRUTH

    triangles = TRUTH[name]["triangles"]  # networkx and scipy agreed (tests/data/make.py)
    g = gthinker.Graph.read(DATA / name)
    assert sm.count(g, "triangle", unique=True).count == triangles
    assert sm.count(g, "triangle").count == 6 * triangles


@pytest.mark.parametrize("query", ["query_dense_16_2", "query_dense_16_3", "query_dense_16_4",
                                   "query_sparse_16_3"])
def test_labeled_queries_of_a_real_graph(query):
    from conftest import DATA, TRUTH

    want = TRUTH["yeast.graph.gz"]["embeddings"][query]  # igraph VF2 and LAD agreed
    assert want > 0  # queries were cut from the data graph
    g = gthinker.Graph.read(DATA / "yeast.graph.gz")
    q = gthinker.Graph.read(DATA / "queries" / "yeast" / f"{query}.graph")
    res = sm.count(g, q, threads=2)
    assert res.count == want
    uniq = sm.count(g, q, threads=2, unique=True)
    assert uniq.count * uniq.automorphisms == want


def test_cli_counts_a_pattern_and_a_query_directory(tmp_path):
    import json
    import subprocess
    import sys

    G = nx.gnp_random_graph(30, 0.3, seed=9)
    data = tmp_path / "g.txt"
    data.write_text("".join(f"{u} {v}\n" for u, v in G.edges))
    qdir = tmp_path / "queries"
    qdir.mkdir()
    for name in ("diamond", "4-cycle"):
        (qdir / f"{name}.txt").write_text(
            "".join(f"{u} {v}\n" for u, v in sm.PATTERNS[name]))

    def cli(*args):
        r = subprocess.run([sys.executable, "-m", "gthinker", "sm", str(data), *args,
                            "--threads", "2", "-q"], capture_output=True, text=True,
                           cwd=tmp_path, timeout=300)
        return r

    r = cli("triangle", "--unique", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["count"] == sum(nx.triangles(G).values()) // 3
    r = cli(str(qdir), "--json")
    lines = [json.loads(x) for x in r.stdout.splitlines()]
    assert [x["query"] for x in lines] == ["4-cycle.txt", "diamond.txt"]
    for x in lines:
        q = sm.pattern(x["query"][:-4]).to_networkx()
        assert x["count"] == _embeddings(G, q)
    r = cli(str(tmp_path / "missing.graph"))
    assert r.returncode == 2 and "no such file" in r.stderr


def _embedding_rows(G, Q):
    """Every embedding as a tuple: the data vertex of query vertex 0, 1, ..."""
    rows = set()
    for m in iso.GraphMatcher(G, Q).subgraph_monomorphisms_iter():  # data -> query
        inv = {q: d for d, q in m.items()}
        rows.add(tuple(inv[u] for u in range(Q.number_of_nodes())))
    return rows


@pytest.mark.parametrize("name", ["4-cycle", "tailed-triangle"])
def test_match_lists_exactly_the_embeddings(name):
    G = nx.gnp_random_graph(20, 0.3, seed=4)
    Q = sm.pattern(name).to_networkx()
    want = _embedding_rows(G, Q)
    rows = sm.match(G, name, threads=2, time_budget=1e-6)  # split tasks list theirs too
    assert rows.shape == (len(want), Q.number_of_nodes())
    assert {tuple(r) for r in rows.tolist()} == want
    uniq = sm.match(G, name, threads=2, unique=True)
    assert len(uniq) * sm.count(G, name, unique=True).automorphisms == len(want)
    assert {tuple(r) for r in uniq.tolist()} <= want


def test_match_keeps_original_ids_and_node_names():
    G = nx.relabel_nodes(nx.cycle_graph(4), {0: "a", 1: "b", 2: "c", 3: "d"})
    rows = sm.match(G, "3-path", threads=1)
    assert len(rows) == 8 and all(G.has_edge(r[0], r[1]) and G.has_edge(r[1], r[2])
                                  for r in rows)
    g = gthinker.Graph.from_edges(np.array([(0, 1), (1, 2), (2, 0)]))
    g.ids = np.array([10, 20, 30])
    assert sorted(sm.match(g, "triangle", unique=True, threads=1)[0].tolist()) == [10, 20, 30]


@pytest.mark.parametrize("threads", [1, 2])
def test_limit_stops_at_exactly_n_matches(threads):
    G = nx.gnp_random_graph(40, 0.3, seed=5)
    total = sm.count(G, "4-cycle", threads=threads).count
    for limit in (1, 37, total - 1):
        r = sm.count(G, "4-cycle", threads=threads, limit=limit, time_budget=1e-5)
        assert r.count == limit and r.stopped == "limit" and r.mode == "cpu"
    r = sm.count(G, "4-cycle", threads=threads, limit=total + 5)
    assert r.count == total and r.stopped is None
    rows = sm.match(G, "4-cycle", threads=threads, limit=25)
    valid = _embedding_rows(G, sm.pattern("4-cycle").to_networkx())
    assert len(rows) == 25 and {tuple(r) for r in rows.tolist()} <= valid


def test_limit_and_listing_options_are_checked():
    G = nx.path_graph(5)
    with pytest.raises(ValueError, match="limit must be an integer from 1"):
        sm.count(G, "3-path", limit=0)
    with pytest.raises(ValueError, match="CPU only"):
        sm.count(G, "3-path", mode="gpu", limit=3)
    with pytest.raises(ValueError, match="gpu_mode"):
        sm.count(G, "3-path", gpu_mode="sideways")
    with pytest.raises(ValueError, match="mode must be"):
        sm.count(G, "3-path", mode="tpu")


def test_cli_lists_matches_and_checks_its_options(tmp_path):
    import subprocess
    import sys

    G = nx.gnp_random_graph(25, 0.3, seed=2)
    data = tmp_path / "g.txt"
    data.write_text("".join(f"{u} {v}\n" for u, v in G.edges))

    def cli(*args):
        return subprocess.run([sys.executable, "-m", "gthinker", "sm", str(data), *args,
                               "--threads", "2", "-q"], capture_output=True, text=True,
                              cwd=tmp_path, timeout=300)

    out = tmp_path / "m.txt"
    r = cli("triangle", "--unique", "--output", str(out))
    assert r.returncode == 0, r.stderr
    rows = {tuple(sorted(map(int, line.split()))) for line in out.read_text().splitlines()}
    assert rows == {tuple(sorted(c)) for c in nx.enumerate_all_cliques(G) if len(c) == 3}
    r = cli("triangle", "--limit", "5", "--output", str(out))
    assert r.returncode == 0 and "stopped at --limit" in r.stdout
    assert len(out.read_text().splitlines()) == 5
    r = cli(str(tmp_path), "--output", str(out))  # a directory of queries
    assert r.returncode == 2 and "one query" in r.stderr
    r = cli("triangle", "--limit", "0")
    assert r.returncode == 2 and "--limit" in r.stderr
