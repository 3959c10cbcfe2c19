"""Frequent subgraph mining against a brute force written with networkx alone: every
connected edge subset of up to K edges, grouped by isomorphism class (labels matched),
each class's MNI support from the domains of all its embeddings."""

from __future__ import annotations

import itertools
import json

import networkx as nx
import numpy as np
import pytest
from conftest import run_cli
from networkx.algorithms import isomorphism as iso

import gthinker
from gthinker.apps import fsm
from gthinker.apps.fsm.patterns import canonical


def _random_graph(seed, n=None, m=None, labels=None):
    rng = np.random.default_rng(seed)
    n = n or int(rng.integers(5, 10))
    m = m or int(rng.integers(n - 1, 3 * n // 2))
    G = nx.gnm_random_graph(n, m, seed=seed)
    nlab = labels or int(rng.integers(1, 4))
    for v in G:
        G.nodes[v]["label"] = int(rng.integers(0, nlab))
    return G


def _edge_subsets(G, k):
    """Every connected set of 1..k edges of G (as frozensets of sorted pairs)."""
    level = {frozenset([tuple(sorted(e))]) for e in G.edges}
    out = list(level)
    for _ in range(k - 1):
        nxt = set()
        for s in level:
            verts = {v for e in s for v in e}
            for v in verts:
                for w in G[v]:
                    e = tuple(sorted((v, w)))
                    if e not in s:
                        nxt.add(s | {e})
        level = nxt
        out += list(level)
    return out


def brute_force(G, k, support, edge_label=None):
    """[(class graph, support)] of the frequent classes: the classes of G's connected
    edge subsets (Weisfeiler-Lehman hash, then networkx's isomorphism test), each
    class's embeddings all listed by networkx's monomorphism search."""
    nm = iso.categorical_node_match("label", None)
    em = iso.categorical_edge_match(edge_label, None) if edge_label else None
    classes = {}  # hash -> representatives
    for s in _edge_subsets(G, k):
        H = G.edge_subgraph(s)
        h = (len(s), nx.weisfeiler_lehman_graph_hash(H, node_attr="label", edge_attr=edge_label))
        reps = classes.setdefault(h, [])
        if not any(nx.is_isomorphic(H, r, node_match=nm, edge_match=em) for r in reps):
            reps.append(nx.Graph(H))
    out = []
    for reps in classes.values():
        for rep in reps:
            doms = {v: set() for v in rep}
            matcher = iso.GraphMatcher(G, rep, node_match=nm, edge_match=em)
            for mapping in matcher.subgraph_monomorphisms_iter():
                for g, r in mapping.items():
                    doms[r].add(g)
            sup = min(len(d) for d in doms.values())
            if sup >= support:
                out.append((rep, sup))
    return out


def _as_nx(p, edge_label=None):
    H = nx.Graph()
    for i, lab in enumerate(p.labels):
        H.add_node(i, label=lab)
    for i, j, el in p.edges:
        H.add_edge(i, j, **({edge_label: el} if edge_label else {}))
    return H


def assert_matches(res, expected, edge_label=None, exact=True):
    nm = iso.categorical_node_match("label", None)
    em = iso.categorical_edge_match(edge_label, None) if edge_label else None
    assert res.count == len(expected)
    unmatched = list(expected)
    for p, s in res.patterns:
        H = _as_nx(p, edge_label)
        hits = [x for x in unmatched if nx.is_isomorphic(H, x[0], node_match=nm, edge_match=em)]
        assert len(hits) == 1, p.text()
        if exact:
            assert s == hits[0][1], (p.text(), s, hits[0][1])
        else:  # counting stopped once every domain reached the support
            assert res.support <= s <= hits[0][1], (p.text(), s, hits[0][1])
        unmatched.remove(hits[0])
    assert not unmatched


def _cases(count, first=0):
    for seed in range(first, first + count):
        G = _random_graph(seed)
        rng = np.random.default_rng(seed + 1000)
        k = 4 if seed % 4 == 0 else int(rng.integers(2, 4))
        yield G, k, int(rng.integers(1, 4))


def test_canonical_form_is_invariant():
    rng = np.random.default_rng(0)
    for seed in range(60):
        G = _random_graph(seed, n=int(rng.integers(2, 7)))
        G = G.subgraph(max(nx.connected_components(G), key=len)).copy()
        if G.number_of_edges() == 0:
            continue
        nodes = list(G)
        base = None
        for _ in range(4):
            perm = list(rng.permutation(len(nodes)))
            pos = {v: perm[i] for i, v in enumerate(nodes)}
            labels = [0] * len(nodes)
            for v in nodes:
                labels[pos[v]] = G.nodes[v]["label"]
            edges = [(pos[u], pos[v], 0) for u, v in G.edges]
            code = canonical(labels, edges).code
            assert base is None or code == base
            base = code


def test_cpu_matches_brute_force():
    for G, k, s in _cases(80):
        assert_matches(fsm.mine(G, k, s, mode="cpu", threads=2), brute_force(G, k, s))


def test_cpu_decomposed_tasks_and_denser_graphs():
    """A tiny time budget splits every range; same patterns and supports."""
    for seed in range(4):
        G = _random_graph(500 + seed, n=12, m=24, labels=2)
        assert_matches(fsm.mine(G, 3, 3, mode="cpu", threads=2, time_budget=1e-6),
                       brute_force(G, 3, 3))


@pytest.mark.parametrize("mode", ["gpu", "hybrid"])
def test_gpu_and_hybrid_match_brute_force(mode):
    for G, k, s in _cases(6, first=300):
        k = min(k, 3)
        expected = brute_force(G, k, s)
        assert_matches(fsm.mine(G, k, s, mode=mode, threads=2), expected)
        assert_matches(fsm.mine(G, k, s, mode=mode, threads=2, exact_support=False), expected,
                       exact=False)


def test_without_exact_supports_the_same_patterns():
    for G, k, s in _cases(20, first=200):
        assert_matches(fsm.mine(G, k, s, mode="cpu", threads=2, exact_support=False),
                       brute_force(G, k, s), exact=False)


def test_unlabeled_graph_and_no_frequent_edge():
    G = nx.cycle_graph(6)
    G.add_edge(0, 3)
    res = fsm.mine(G, 3, 2, mode="cpu", threads=1)
    for v in G:
        G.nodes[v]["label"] = 0
    assert_matches(res, brute_force(G, 3, 2))
    assert fsm.mine(G, 3, 100, mode="cpu", threads=1).count == 0


def test_output_text_and_json(tmp_path):
    G = _random_graph(7, n=10, m=18, labels=2)
    out = tmp_path / "patterns.txt"
    res = fsm.mine(G, 2, 2, mode="cpu", threads=1, output=str(out))
    lines = out.read_text().splitlines()
    assert lines == res.lines() and len(lines) == res.count
    d = json.loads(json.dumps(res.to_dict()))
    assert d["frequent"] == res.count == sum(d["by_edges"])
    for entry, (p, s) in zip(d["patterns"], res.patterns, strict=True):
        assert entry["support"] == s
        assert [e[:2] for e in entry["edges"]] == [[i, j] for i, j, _ in p.edges]


def test_bad_options():
    G = _random_graph(1)
    with pytest.raises(ValueError, match="support"):
        fsm.mine(G, 2)
    with pytest.raises(ValueError, match="at most"):
        fsm.mine(G, 99, 2)
    with pytest.raises(TypeError):
        fsm.mine(G, 2, 2, bogus=1)


def test_edge_labels_when_the_graph_has_them():
    for seed in range(20):
        G = _random_graph(700 + seed, labels=2)
        rng = np.random.default_rng(seed)
        for u, v in G.edges:
            G.edges[u, v]["el"] = int(rng.integers(0, 2))
        g = gthinker.as_graph(G)
        lab = {tuple(sorted((u, v))): d["el"] for u, v, d in G.edges(data=True)}
        src = np.repeat(np.arange(g.num_vertices), np.diff(g.indptr))
        g.edge_labels = np.array([lab[tuple(sorted((int(g.ids[a]), int(g.ids[b]))))]
                                  for a, b in zip(src, g.indices, strict=True)], np.int32)
        relabeled = nx.relabel_nodes(G, {int(g.ids[i]): i for i in range(g.num_vertices)})
        assert_matches(fsm.mine(g, 3, 2, mode="cpu", threads=2),
                       brute_force(relabeled, 3, 2, "el"), "el")


def test_itertools_reference_sizes():
    """The brute force's edge subsets agree with a direct enumeration (its own check)."""
    G = _random_graph(3, n=7, m=9)
    direct = [c for r in (1, 2, 3) for c in itertools.combinations(G.edges, r)
              if nx.is_connected(G.edge_subgraph(c))]
    assert len(_edge_subsets(G, 3)) == len(direct)


def test_g2miner_format_round_trip_and_mining(tmp_path):
    """G2Miner's binary files, written by our writer (with a row left unsorted and edge
    labels), read back as the same graph; the command mines them by folder or prefix."""
    from gthinker.graphs.formats import g2miner

    G = _random_graph(11, n=9, m=14, labels=3)
    g = gthinker.as_graph(G)
    src = np.repeat(np.arange(g.num_vertices), np.diff(g.indptr))
    g.edge_labels = (np.minimum(src, g.indices) % 2).astype(np.int32)
    g2miner.write(g, tmp_path / "graph")
    meta = (tmp_path / "graph.meta.txt").read_text().split()
    assert [int(x) for x in meta[:2]] == [g.num_vertices, g.indices.size]
    back = gthinker.Graph.read(tmp_path)  # the folder
    assert np.array_equal(back.indptr, g.indptr) and np.array_equal(back.indices, g.indices)
    assert np.array_equal(back.labels, g.labels)
    assert np.array_equal(back.edge_labels, g.edge_labels)
    # an unsorted row: the labels follow their pairs
    edges = np.fromfile(tmp_path / "graph.edge.bin", "<i4")
    elab = np.fromfile(tmp_path / "graph.elabel.bin", "<u2")
    lo, hi = int(g.indptr[0]), int(g.indptr[1])
    edges[lo:hi], elab[lo:hi] = edges[lo:hi][::-1].copy(), elab[lo:hi][::-1].copy()
    edges.tofile(tmp_path / "graph.edge.bin")
    elab.tofile(tmp_path / "graph.elabel.bin")
    back = gthinker.Graph.read(tmp_path / "graph")  # the prefix
    assert np.array_equal(back.indices, g.indices)
    assert np.array_equal(back.edge_labels, g.edge_labels)
    (tmp_path / "graph.vertex.bin").write_bytes(b"\0" * 8)
    with pytest.raises(gthinker.GraphFormatError, match="row offsets"):
        gthinker.Graph.read(tmp_path / "graph.meta.txt")


def test_command_on_g2miner_files(tmp_path):

    from gthinker.graphs.formats import g2miner

    G = _random_graph(12, n=9, m=15, labels=2)
    g2miner.write(gthinker.as_graph(G), tmp_path / "graph")
    from gthinker import registry

    assert registry.get("fsm").request.__module__ == "gthinker.apps.fsm.command"
    out = run_cli("fsm", tmp_path, "--max-edges", "3", "--support", "2", "--mode", "cpu",
                  "--threads", "1", "--json", "-o", tmp_path / "p.txt")
    assert out.returncode == 0, out.stderr
    d = json.loads(out.stdout.strip().splitlines()[-1])
    expected = brute_force(G, 3, 2)
    assert d["frequent"] == len(expected)
    assert sorted(p["support"] for p in d["patterns"]) == sorted(s for _, s in expected)
    assert len((tmp_path / "p.txt").read_text().splitlines()) == len(expected)


def test_a_pattern_stopped_on_an_overcounted_domain_is_searched_again():
    # Workers count new domain vertices without a lock: two threads marking one vertex at
    # once count it twice and may stop a pattern as frequent too early. The batch finds
    # such a pattern by its marks and reopens it from them.
    from gthinker.apps.fsm.app import Batch
    from gthinker.apps.fsm.patterns import single_edge
    from gthinker.apps.fsm.search import MAXV, REACHED

    vlab = np.zeros(6, np.int32)
    by_label = np.arange(6, dtype=np.int32)
    batch = Batch([single_edge(0, 0, 0)], vlab, np.zeros(0, np.int32), by_label,
                  np.array([0, 6]), support=3, stride=2, cap=3)
    marks = batch.marks.reshape(1, 2, 6)
    marks[0, 0, :3] = 1  # slot 0 truly has 3 vertices, slot 1 only 2
    marks[0, 1, :2] = 1
    batch.found[:2] = 3  # slot 1 counted one vertex twice
    batch.dead[0] = REACHED
    batch.fails[0] = 1
    assert batch.short_of_cap().tolist() == [0]
    batch.reopen([0])
    assert batch.dead[0] == 0 and batch.fails[:MAXV].sum() == 0
    assert batch.found[:2].tolist() == [3, 2]
    marks[0, 1, 2] = 1  # the search on finds the third vertex: nothing is short now
    batch.dead[0] = REACHED
    assert batch.short_of_cap().size == 0


def test_sub_graphs_and_invariants_against_networkx():
    """The connected graphs of a pattern less one edge, and the invariant that prunes
    candidates before their canonical forms: against networkx on random patterns."""
    from gthinker.apps.fsm.patterns import invariant, sub_graphs, sub_patterns

    nm = iso.categorical_node_match("label", None)
    rng = np.random.default_rng(5)
    for seed in range(40):
        G = _random_graph(1100 + seed, n=int(rng.integers(3, 7)), labels=2)
        G = nx.convert_node_labels_to_integers(G.subgraph(max(nx.connected_components(G),
                                                              key=len)))
        if G.number_of_edges() < 2:
            continue
        labels = tuple(G.nodes[v]["label"] for v in G)
        p = canonical(labels, [(u, v, 0) for u, v in G.edges])
        expected = []
        for e in G.edges:
            H = G.copy()
            H.remove_edge(*e)
            H.remove_nodes_from([v for v in list(H) if H.degree(v) == 0])
            if nx.is_connected(H):
                expected.append(H)
        subs = sub_patterns(p)
        assert len(subs) == len(expected) == len(sub_graphs(p.labels, p.edges))
        for q in subs:
            H = _as_nx(q)
            assert sum(nx.is_isomorphic(H, x, node_match=nm) for x in expected) >= 1
            assert invariant(q.labels, q.edges) in {
                invariant(tuple(x.nodes[v]["label"] for v in x),
                          [(a, b, 0) for a, b in nx.convert_node_labels_to_integers(x).edges])
                for x in map(nx.convert_node_labels_to_integers, expected)}
        # isomorphic graphs share the invariant: the pattern renumbered at random
        perm = rng.permutation(len(labels))
        relabeled = tuple(labels[int(np.flatnonzero(perm == i)[0])] for i in range(len(labels)))
        edges = [(int(perm[u]), int(perm[v]), 0) for u, v in G.edges]
        assert invariant(relabeled, edges) == invariant(p.labels, p.edges)
        assert canonical(relabeled, edges) == p


def test_label_filter_keeps_the_vertices_with_the_neighbours_a_pattern_vertex_needs():
    """Candidates dropped by the filter (too few neighbours of some edge and vertex
    label) against a direct count on the networkx graph."""
    from gthinker.apps.fsm.neighbours import LabelFilter

    rng = np.random.default_rng(9)
    for seed in range(6):
        G = _random_graph(1300 + seed, n=30, m=70, labels=3)
        for u, v in G.edges:
            G.edges[u, v]["el"] = int(rng.integers(0, 2))
        g = gthinker.as_graph(G)
        lab = {tuple(sorted((u, v))): d["el"] for u, v, d in G.edges(data=True)}
        src = np.repeat(np.arange(g.num_vertices), np.diff(g.indptr))
        elab = np.array([lab[tuple(sorted((int(g.ids[a]), int(g.ids[b]))))]
                         for a, b in zip(src, g.indices, strict=True)], np.int32)
        vlab = np.asarray(g.labels, np.int32)
        by_label = np.argsort(vlab, kind="stable").astype(np.int32)
        label_start = np.searchsorted(vlab[by_label], np.arange(int(vlab.max()) + 2))
        filt = LabelFilter(g, vlab, elab, by_label, label_start)
        for _ in range(20):
            a = int(rng.integers(0, 4))  # label 3: no vertex has it
            needs = {}
            for _ in range(int(rng.integers(1, 4))):
                kind = (int(rng.integers(0, 3)), int(rng.integers(0, 4)))  # el 2: none
                needs[kind] = needs.get(kind, 0) + 1
            needs = tuple(sorted(needs.items()))
            expected = []
            for v in (by_label[label_start[a]:label_start[a + 1]] if a <= vlab.max() else []):
                x = int(g.ids[v])
                ok = all(sum(1 for w in G[x] if G.edges[x, w]["el"] == el
                             and G.nodes[w]["label"] == b) >= c for (el, b), c in needs)
                if ok:
                    expected.append(int(v))
            assert filt.vertices(a, needs).tolist() == expected
