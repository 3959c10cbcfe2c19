"""Pattern-aware matching: for every connected pattern of 3 to 6 vertices (networkx's
graph atlas), |Aut| against networkx's GraphMatcher, and the counts of sm and count
(embeddings, distinct subgraphs, labeled and not, each engine the pattern plan picks:
cliques, formulas, the search with count-only last levels) against a brute force over
every injective map; motifs against igraph and a brute force over vertex sets."""

import itertools
import random
from collections import Counter

import networkx as nx
import numpy as np
import pytest
from networkx.algorithms import isomorphism as iso

import gthinker
from gthinker.apps import count, sm
from gthinker.apps.count import motifs
from gthinker.apps.matching import formulas, neighbourhoods, symmetry
from gthinker.apps.matching.pattern_plan import pattern_plan
from gthinker.apps.matching.patterns import pattern

ATLAS = [G for G in nx.graph_atlas_g() if 3 <= G.number_of_nodes() <= 6 and nx.is_connected(G)]


def _automorphisms(Q, labeled=False):
    match = iso.categorical_node_match("label", None) if labeled else None
    return sum(1 for _ in iso.GraphMatcher(Q, Q, node_match=match).isomorphisms_iter())


class _Brute:
    """Embeddings of small patterns in a small graph: every injective map, in numpy."""

    def __init__(self, G):
        n = G.number_of_nodes()
        self.adj = nx.to_numpy_array(G, nodelist=range(n), dtype=bool)
        self.labels = np.array([G.nodes[v].get("label", 0) for v in range(n)])
        self.maps = {}
        self.n = n

    def embeddings(self, Q):
        k = Q.number_of_nodes()
        if k not in self.maps:
            self.maps[k] = np.array(list(itertools.permutations(range(self.n), k)))
        m = self.maps[k]
        ok = np.ones(len(m), bool)
        for a, b in Q.edges:
            ok &= self.adj[m[:, a], m[:, b]]
        for u in Q.nodes:
            if "label" in Q.nodes[u]:
                ok &= self.labels[m[:, u]] == Q.nodes[u]["label"]
        return int(ok.sum())


def test_automorphisms_and_restrictions_of_every_small_pattern():
    rng = random.Random(1)
    for Q in ATLAS:
        q = gthinker.Graph.from_networkx(Q)
        p = pattern_plan(q)
        assert p.automorphisms == _automorphisms(Q), sorted(Q.edges)
        assert all(i < j for i, j in p.restrictions)
        assert sorted(p.order) == list(range(Q.number_of_nodes()))
        assert 1 <= p.count_only < Q.number_of_nodes()
        assert (p.clique is not None) == (Q.number_of_edges() == len(Q) * (len(Q) - 1) // 2)
        Q = Q.copy()
        nx.set_node_attributes(Q, {v: rng.randrange(2) for v in Q}, "label")
        lp = pattern_plan(gthinker.Graph.from_networkx(Q))
        assert lp.automorphisms == _automorphisms(Q, labeled=True)


def test_shapes_and_isomorphism():
    for name in ["house", "bull", "4-wheel", "5-path", "6-star"]:
        q = pattern(name)
        perm = np.random.default_rng(0).permutation(q.num_vertices)
        shuffled = gthinker.Graph.from_edges(
            np.array([(perm[a], perm[b]) for a, b in q.to_networkx().edges()]))
        assert pattern_plan(shuffled).shape == name
        assert symmetry.isomorphic(symmetry.adjacency(q), symmetry.adjacency(shuffled))
    assert not symmetry.isomorphic(symmetry.adjacency(pattern("5-path")),
                                   symmetry.adjacency(pattern("5-star")))
    assert pattern_plan(pattern("diamond")).count_only == 2  # twins {1, 3} on edge {0, 2}
    assert pattern_plan(pattern("6-star")).count_only == 5  # C(deg, 5) at the centre


@pytest.mark.parametrize("seed,most", [(0, 6), (1, 5)])
def test_every_pattern_up_to_6_vertices_counts_exactly(seed, most):
    G = nx.gnp_random_graph(9, 0.55 - 0.1 * seed, seed=seed)
    brute = _Brute(G)
    g = gthinker.Graph.from_networkx(G)
    for Q in (Q for Q in ATLAS if len(Q) <= most):
        want = brute.embeddings(Q)
        aut = _automorphisms(Q)
        q = gthinker.Graph.from_networkx(Q)
        emb = sm.count(g, q, mode="cpu", threads=2)
        assert emb.count == want, (sorted(Q.edges), emb.method)
        assert sm.count(g, q, mode="cpu", threads=2, unique=True).count * aut == want
        assert count.count(g, q, mode="cpu", threads=2).count * aut == want


def test_labeled_patterns_count_exactly():
    rng = random.Random(5)
    G = nx.gnp_random_graph(10, 0.6, seed=5)
    nx.set_node_attributes(G, {v: rng.randrange(2) for v in G}, "label")
    brute = _Brute(G)
    g = gthinker.Graph.from_networkx(G)
    for Q in ATLAS[: 2 + 6 + 21]:  # 3 to 5 vertices
        Q = Q.copy()
        nx.set_node_attributes(Q, {v: rng.randrange(2) for v in Q}, "label")
        q = gthinker.Graph.from_networkx(Q)
        want = brute.embeddings(Q)
        assert sm.count(g, q, mode="cpu", threads=2).count == want, sorted(Q.nodes("label"))
        uniq = sm.count(g, q, mode="cpu", threads=2, unique=True)
        assert uniq.count * _automorphisms(Q, labeled=True) == want


def test_one_label_queries_count_in_that_label():
    G = nx.gnp_random_graph(12, 0.6, seed=2)
    nx.set_node_attributes(G, {v: v % 2 for v in G}, "label")
    brute = _Brute(G)
    for name in ["4-clique", "4-cycle", "diamond", "house"]:
        Q = pattern(name).to_networkx()
        nx.set_node_attributes(Q, 1, "label")
        res = sm.count(G, Q, mode="cpu", threads=2)
        assert res.count == brute.embeddings(Q), name
        if name != "diamond":  # the clique engine or a formula
            assert res.method != "subgraph matching", name


def test_a_clique_given_as_a_file_or_graph_takes_the_clique_engine(tmp_path):
    G = nx.gnp_random_graph(30, 0.5, seed=3)
    path = tmp_path / "k5.txt"
    path.write_text("".join(f"{a} {b}\n" for a, b in itertools.combinations(range(5), 2)))
    for q in (str(path), nx.complete_graph(5)):
        res = count.count(G, q, mode="cpu", threads=2)
        assert res.method == "cliques (oriented)"
        assert res.count == count.count(G, "5-clique", mode="cpu", threads=2).count
        assert sm.count(G, q, mode="cpu", threads=2).count == res.count * 120


def test_the_search_counts_the_formula_shapes_too():
    from gthinker.apps.matching import dispatch, planner

    G = nx.gnp_random_graph(25, 0.35, seed=11)
    g = gthinker.Graph.from_networkx(G)
    for name in formulas.FORMULAS + neighbourhoods.SHAPES:
        res = count.count(g, name, mode="cpu", threads=2)
        assert res.method == f"formula ({name})"
        job, _, _ = dispatch.run_plan(g, planner.plan(g, name, unique=True), "cpu", threads=2)
        assert job.counters["matches"] == res.count, name
        parts = [count.count(g, name, mode="cpu", threads=2, vertices=range(a, b)).count
                 for a, b in ((0, 7), (7, 25))]
        assert sum(parts) == res.count, name


@pytest.mark.parametrize("seed", range(4))
def test_neighbourhood_formulas_against_brute_force(seed):
    """The dense shapes and the 5-cycle (neighbourhoods.py) on small random graphs,
    odd seeds with a hub joined to every vertex and a second one to half of them."""
    n = 13
    G = nx.gnp_random_graph(n, 0.35 + 0.1 * (seed % 3), seed=seed)
    if seed % 2:
        G.add_edges_from((0, v) for v in range(1, n))
        G.add_edges_from((1, v) for v in range(2, n, 2))
    brute = _Brute(G)
    for name in neighbourhoods.SHAPES:
        Q = pattern(name).to_networkx()
        res = count.count(G, name, mode="cpu", threads=2)
        assert res.method == f"formula ({name})"
        assert res.count * _automorphisms(Q) == brute.embeddings(Q), name


def test_neighbourhood_formulas_on_cliques_and_empty_graphs():
    """In K5 a 5-vertex shape has 5! / |Aut| copies; K5 with a pendant and an isolated
    vertex has no more of the dense shapes; a graph without edges has none."""
    k5 = nx.complete_graph(5)
    tailed = k5.copy()
    tailed.add_edges_from([(4, 5)])
    tailed.add_node(6)
    counts = count.count(tailed, "motifs", size=5, mode="cpu", threads=2, induced=False).counts
    for name in neighbourhoods.SHAPES:
        want = 120 // pattern_plan(pattern(name)).automorphisms
        assert count.count(k5, name, mode="cpu", threads=2).count == want, name
        if name not in ("tailed-4-clique", "4-clique-wedge", "gem", "4-wheel-minus-spoke"):
            assert counts[name] == want, name  # a pendant makes none of these
        assert count.count(nx.empty_graph(6), name, mode="cpu", threads=2).count == 0
    assert counts["tailed-4-clique"] == 20 + 4  # K5's, and the pendant on the 4-cliques at 4


def _prepared_by_networkx(G):
    """The arrays of neighbourhoods.Neighbourhoods from networkx, in its numbering (rank:
    by degree, ties by vertex): each row's triangle lists (empty towards a smaller
    vertex), the ranked vertices' triangle entries, every vertex's cumulative work."""
    order = sorted(G, key=lambda v: (G.degree(v), v))
    rank = {v: r for r, v in enumerate(order)}
    lists, local, work = [], [], [0]
    for v in order:
        for u in sorted(G[v], key=rank.get):
            common = nx.common_neighbors(G, v, u) if rank[u] > rank[v] else ()
            lists.append(sorted(rank[w] for w in common))
        local.append(2 * nx.triangles(G, v))
    for v in sorted(G):
        work.append(work[-1] + 1 + sum(G.degree(u) + len(list(nx.common_neighbors(G, v, u)))
                                       ** 2 for u in G[v]))
    return [rank[v] for v in sorted(G)], lists, local, work


@pytest.mark.parametrize("seed", range(3))
def test_neighbourhood_preparation_on_threads_matches_networkx(seed, monkeypatch):
    """The prepared graph (each edge's triangles counted once, from its larger end, and
    listed from its smaller end's row) in steps of 64 row entries on 1 and 3 threads:
    the same arrays, and those networkx gives."""
    monkeypatch.setattr(gthinker.runtime.steps, "STEP_ENTRIES", 64)
    G = nx.gnp_random_graph(60, 0.1 + 0.1 * seed, seed=seed)
    G.add_edges_from((0, v) for v in range(1, 60, 2))  # a hub
    G.add_nodes_from(range(60, 63))  # and isolated vertices
    rank, lists, local, work = _prepared_by_networkx(G)
    for threads in (1, 3):
        p = neighbourhoods.neighbourhoods(gthinker.Graph.from_networkx(G), threads)
        assert p.rank.tolist() == rank
        assert [p.tidx[a:b].tolist() for a, b in itertools.pairwise(p.tptr)] == lists
        assert p.local.tolist() == local and p.work.tolist() == work
        rows = [sorted(rank[u] for u in G[v]) for v in sorted(G, key=rank.__getitem__)]
        assert [p.graph.neighbors(r).tolist() for r in range(len(G))] == rows


def test_listing_still_enumerates_every_embedding():
    G = nx.gnp_random_graph(12, 0.5, seed=4)
    for name in ["diamond", "5-star", "4-cycle"]:
        rows = sm.match(G, name, threads=2)
        assert len(rows) == sm.count(G, name, threads=2).count
        assert len({tuple(r) for r in rows.tolist()}) == len(rows)


def test_count_only_tails_survive_decomposition():
    G = nx.gnp_random_graph(40, 0.3, seed=8)
    for name in ["diamond", "5-path", "bull", "K2,3", "book"]:
        whole = sm.count(G, name, mode="cpu", threads=2, unique=True)
        split = sm.count(G, name, mode="cpu", threads=2, unique=True, time_budget=1e-6,
                         early_split=0, timeout_check_interval=1, vertices=range(40))
        assert split.count == whole.count, name
        assert split.stats["tasks_decomposed"] > 0, name


def _induced_brute(G, k):
    """Induced motif counts by vertex sets, keyed by motif name."""
    names = motifs.motif_names(k)
    reps = {n: pattern(n).to_networkx() for n in names}
    out = Counter({n: 0 for n in names})
    for S in itertools.combinations(G.nodes, k):
        H = G.subgraph(S)
        if nx.is_connected(H):
            out[next(n for n in names if nx.is_isomorphic(H, reps[n]))] += 1
    return dict(out)


def test_motifs_match_igraph_and_brute_force():
    ig = pytest.importorskip("igraph")
    G = nx.gnp_random_graph(13, 0.45, seed=6)
    g = ig.Graph(edges=list(G.edges()), n=13)
    for k in (3, 4):
        res = count.count(G, "motifs", size=k, mode="cpu", threads=2)
        ours = res.counts
        theirs = [int(x) for x in g.motifs_randesu(size=k) if x == x]  # nan: disconnected
        assert sorted(ours.values()) == sorted(theirs)
        assert ours == _induced_brute(G, k)
    res = count.count(G, "motifs", size=5, mode="cpu", threads=2)
    assert res.counts == _induced_brute(G, 5)
    plain = count.count(G, "motifs", size=5, mode="cpu", threads=2, induced=False).counts
    for name in ("house", "5-cycle", "bull"):
        assert plain[name] == count.count(G, name, mode="cpu", threads=2).count


def test_stopped_motifs_start_nothing_more():
    """A stop token set before (as Ctrl-C sets it during a job) ends a motif run after
    its first job: no neighbourhood graph prepared, no further shape started."""
    g = gthinker.as_graph(nx.gnp_random_graph(12, 0.5, seed=2))
    stop = gthinker.StopToken()
    stop.set()
    res = count.count(g, "motifs", size=5, mode="cpu", threads=2, stop=stop)
    assert res.stats["not_counted"] == motifs.motif_names(5)
    assert set(res.counts.values()) == {0}
    assert "count.neighbourhoods" not in g.prepared()
    whole = count.count(g, "motifs", size=5, mode="cpu", threads=2)
    assert whole.stats["not_counted"] == [] and whole.counts == _induced_brute(g.to_networkx(), 5)


def test_motif_names_are_every_connected_graph_once():
    for k in motifs.SIZES:
        names = motifs.motif_names(k)
        atlas = [G for G in nx.graph_atlas_g() if len(G) == k and nx.is_connected(G)]
        assert len(names) == len(atlas)
        for G in atlas:
            assert sum(nx.is_isomorphic(G, pattern(n).to_networkx()) for n in names) == 1


def test_motif_and_pattern_errors():
    with pytest.raises(ValueError, match="3, 4, 5"):
        count.count(nx.path_graph(4), "motifs", size=6, mode="cpu")
    with pytest.raises(ValueError, match="size"):
        count.count(nx.path_graph(4), "motifs", mode="cpu")
    with pytest.raises(ValueError, match="size"):
        count.count(nx.path_graph(4), "triangle", size=3, mode="cpu")


def test_motifs_in_gpu_mode_equal_the_cpu_counts():
    """Modes gpu and hybrid run the cliques and the searched shapes there (the simulator
    here), the formulas on the CPU; the counts are the CPU's."""
    G = nx.gnp_random_graph(9, 0.5, seed=4)
    cpu = count.count(G, "motifs", size=4, mode="cpu", threads=1)
    gpu = count.count(G, "motifs", size=4, mode="gpu")
    assert gpu.counts == cpu.counts and gpu.mode == "gpu"
    assert "diamond" in gpu.mode_reason and "4-cycle" not in gpu.mode_reason


def test_gpu_mode_counts_embeddings_as_distinct_times_automorphisms():
    """The GPU matcher (on the simulator here) takes the plan's restrictions and order
    as they are; embeddings are its distinct subgraphs times |Aut|."""
    G = nx.gnp_random_graph(7, 0.6, seed=9)
    want = _Brute(G).embeddings(pattern("house").to_networkx())
    res = sm.count(G, "house", mode="gpu")
    assert res.count == want and res.mode == "gpu" and res.automorphisms == 2


def test_auto_leaves_count_only_levels_out_of_the_small_search_rule():
    from gthinker.apps.matching import dispatch

    big = gthinker.Graph.from_networkx(nx.gnm_random_graph(3000, 30_000, seed=1))
    # a 5-star enumerates only its centre: at most 3,000 partial matches
    assert "small search" in dispatch.small_search(sm.plan(big, "5-star", True))
    assert dispatch.small_search(sm.plan(big, "5-path", True)) == ""
