"""Results for pipelines, against networkx and brute force: maximal cliques of at
least k vertices (mce.run / iter_cliques ``min_size``, in every mode), the cliques
containing given vertices, the clique-size histogram, streamed clique batches,
triangles per vertex, subgraph matches as numpy arrays with any node names, and what any
Task emits streamed (gthinker.iter_results)."""

import functools
import itertools
import threading
from collections import Counter

import networkx as nx
import numpy as np
import pytest

import gthinker
from gthinker.apps import count, mce, sm
from gthinker.runtime import stream


def planted(n, p, sizes, seed):
    rng = np.random.default_rng(seed)
    G = nx.gnp_random_graph(n, p, seed=seed)
    for k in sizes:
        nodes = rng.choice(n, size=k, replace=False).tolist()
        G.add_edges_from(itertools.combinations(nodes, 2))
    G.add_nodes_from([n, n + 1])  # isolated: maximal cliques of size 1
    return G


def nx_cliques(G, min_size=1):
    return sorted(tuple(sorted(c)) for c in nx.find_cliques(G) if len(c) >= min_size)


@pytest.mark.parametrize("min_size", [1, 2, 4, 7, 30])
def test_min_size_counts_and_histogram_match_networkx(min_size):
    G = planted(150, 0.08, [12, 9, 7], seed=min_size)
    want = Counter(len(c) for c in nx_cliques(G, min_size))
    # A microsecond budget decomposes nearly every task: records are pruned too.
    for kw in ({}, {"time_budget": 1e-6, "timeout_check_interval": 1}):
        res = mce.run(G, mode="cpu", threads=2, min_size=min_size, **kw)
        assert res.histogram == dict(want)
        assert res.count == sum(want.values())
        assert res.max_size == max(want, default=0)


def test_min_size_prunes_the_search():
    G = planted(300, 0.05, [10], seed=5)
    every = mce.run(G, mode="cpu", threads=1, time_budget=1e-6, timeout_check_interval=1)
    big = mce.run(G, mode="cpu", threads=1, time_budget=1e-6, timeout_check_interval=1,
                  min_size=8)
    assert big.histogram == {10: 1}
    # Fewer subtrees are searched, so fewer of them time out and decompose.
    assert big.stats["tasks_decomposed"] < every.stats["tasks_decomposed"]


@pytest.mark.parametrize("min_size", [1, 3, 5])
def test_iter_cliques_min_size_lists_the_same_cliques_as_networkx(min_size):
    G = planted(120, 0.1, [8, 6], seed=11)
    got = sorted(tuple(c.tolist()) for c in mce.iter_cliques(G, threads=2, min_size=min_size))
    assert got == nx_cliques(G, min_size)


def test_min_size_is_checked():
    for bad in (0, -1, 2.5, "3", True):
        with pytest.raises(ValueError, match="min_size"):
            mce.run(nx.path_graph(3), mode="cpu", min_size=bad)


@pytest.mark.parametrize(("mode", "engine"), [("gpu", "bitsets"), ("hybrid", "levels")])
def test_min_size_in_gpu_modes_matches_networkx(mode, engine):
    # The GPU engines search every clique; the sizes below min_size are filtered out.
    G = nx.compose(nx.gnp_random_graph(18, 0.3, seed=4), nx.complete_graph(5))
    want = Counter(len(c) for c in nx_cliques(G, 3))
    res = mce.run(G, mode=mode, threads=2, min_size=3, gpu_engine=engine)
    assert (res.histogram, res.count, res.max_size) == (dict(want), sum(want.values()), 5)


def test_containing_gives_the_cliques_networkx_finds_with_nodes():
    G = planted(100, 0.12, [9], seed=2)
    g = gthinker.as_graph(G)
    edge = list(min(G.edges))
    for seeds in ([0], edge, list(nx_cliques(G, 9)[0][:3]), [100]):  # 100: isolated
        want = sorted(tuple(sorted(c)) for c in nx.find_cliques(G, seeds))
        got = sorted(tuple(c.tolist()) for c in mce.iter_cliques(g, containing=seeds))
        assert got == want
        res = mce.run(g, mode="cpu", containing=seeds, min_size=3)
        assert res.count == sum(len(c) >= 3 for c in want)


def test_containing_checks_its_vertices():
    G = nx.path_graph(5)
    with pytest.raises(ValueError, match="do not form a clique"):
        mce.run(G, mode="cpu", containing=[0, 2])
    with pytest.raises(ValueError, match="do not form a clique"):
        mce.run(G, mode="cpu", containing=[1, 1])
    with pytest.raises(ValueError, match="vertex 9 is not in the graph"):
        mce.run(G, mode="cpu", containing=[9])
    with pytest.raises(ValueError, match="CPU only"):
        mce.run(G, mode="gpu", containing=[0])
    named = nx.relabel_nodes(G, {i: f"v{i}" for i in G})
    assert mce.run(named, mode="cpu", containing=["v1", "v2"]).count == 1
    with pytest.raises(ValueError, match="'x' is not in the graph"):
        mce.run(named, mode="cpu", containing=["x"])


def test_clique_batches_stream_while_the_search_runs(tmp_path, monkeypatch):
    # K(3,3,...,3) with 11 parts has 3**11 maximal cliques of 11 vertices: megabytes
    # of output, more than the pipe and the workers' buffers hold.
    G = nx.complete_multipartite_graph(*[3] * 11)
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    def searches():
        return {t for t in threading.enumerate() if t.name == "gthinker-stream"}

    before = searches()  # an earlier test's generator may still be collected
    batches = mce.iter_clique_batches(G, threads=2)
    first = next(batches)
    assert np.all(np.diff(first.offsets) == 11)
    # The search is still running: its writer waits for the consumer.
    mine = searches() - before
    assert len(mine) == 1
    batches.close()  # stops the search, leaves no pipe behind
    assert not any(t.is_alive() for t in mine)
    assert not list(tmp_path.iterdir())
    total = sum(b.offsets.size - 1 for b in mce.iter_clique_batches(G, threads=2))
    assert total == 3**11


def test_an_error_in_the_search_reaches_the_consumer(tmp_path, monkeypatch):
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    with pytest.raises(ValueError, match="do not form a clique"):
        list(mce.iter_cliques(nx.path_graph(4), containing=[0, 3]))
    assert not list(tmp_path.iterdir())


def test_triangles_per_vertex_match_networkx():
    G = nx.disjoint_union(nx.powerlaw_cluster_graph(400, 5, 0.5, seed=3), nx.empty_graph(3))
    g = gthinker.as_graph(G)
    want = nx.triangles(G)
    for kw in ({}, {"time_budget": 1e-6, "timeout_check_interval": 1}):
        res = count.count(g, "triangle", per_vertex=True, threads=2, **kw)
        assert res.per_vertex.tolist() == [want[v] for v in g.ids.tolist()]
        assert res.count == sum(want.values()) // 3
    assert count.count(nx.Graph(), "triangle", per_vertex=True).per_vertex.size == 0
    with pytest.raises(ValueError, match="per_vertex counts triangles"):
        count.count(G, "4-clique", per_vertex=True)
    with pytest.raises(ValueError, match="CPU only"):
        count.count(G, "triangle", per_vertex=True, mode="gpu")


@pytest.mark.parametrize("names", ["tuples", "mixed"])
def test_matches_are_arrays_of_node_names(names):
    G = nx.gnp_random_graph(25, 0.3, seed=8)
    label = {"tuples": lambda v: (v // 5, v % 5),
             "mixed": lambda v: (v, "t") if v % 3 == 0 else (str(v) if v % 3 == 1 else v)}[names]
    H = nx.relabel_nodes(G, label)
    rows = sm.match(H, "triangle", unique=True, threads=2)
    assert rows.dtype == object and rows.shape[1] == 3
    got = sorted(sorted(map(repr, r)) for r in rows.tolist())
    want = sorted(sorted(map(repr, c)) for c in nx.enumerate_all_cliques(H) if len(c) == 3)
    assert got == want
    paths = sm.match(H, "3-path", threads=2)  # embeddings: every automorphic image too
    brute = [(a, b, c) for b in H for a in H[b] for c in H[b] if a != c]
    assert sorted(map(repr, map(tuple, paths.tolist()))) == sorted(map(repr, brute))


def _decode_records(words):
    out, at = [], 0
    while at < words.size:
        out.append(tuple(sorted(words[at + 1:at + 1 + words[at]].tolist())))
        at += 1 + words[at]
    return sorted(out)


def test_binary_output_file_holds_the_same_results_as_text(tmp_path):
    G = planted(60, 0.1, [6, 5], seed=8)
    mce.run(G, threads=2, output=tmp_path / "c.txt")
    mce.run(G, threads=2, output=tmp_path / "c.bin", output_format="binary")
    text = sorted(tuple(sorted(map(int, line.split())))
                  for line in (tmp_path / "c.txt").read_text().splitlines())
    assert _decode_records(np.fromfile(tmp_path / "c.bin", np.int64)) == text == nx_cliques(G)
    with pytest.raises(ValueError, match="output_format"):
        mce.run(G, threads=2, output=tmp_path / "c.x", output_format="csv")


def test_any_job_streams_through_the_runtime_service():
    """gthinker.runtime.stream.batches is not MCE's: subgraph matches stream the same way."""
    G = planted(40, 0.15, [5], seed=2)
    found = []
    for batch in stream.batches(functools.partial(sm.count, G, "triangle", unique=True,
                                                         mode="cpu", threads=2)):
        for a, b in zip(batch.offsets[:-1], batch.offsets[1:], strict=True):
            found.append(tuple(sorted(batch.values[a:b].tolist())))
    want = sorted(tuple(sorted(t)) for t in itertools.combinations(G, 3)
                  if all(G.has_edge(u, v) for u, v in itertools.combinations(t, 2)))
    assert sorted(found) == want  # each triangle once


class _Edges(gthinker.Task):
    """Emits each edge once, from its smaller end: any Task that emits."""

    @staticmethod
    def compute(ctx, record):
        v = record[0]
        for u in ctx.neighbors(v):
            if u > v:
                ctx.emit(np.array([v, u], np.int32))


def test_iter_results_streams_what_any_task_emits():
    """gthinker.iter_results: each emitted result as an array of original ids (node names
    for named nodes), and stream.text: the same results as text lines."""
    G = nx.gnm_random_graph(200, 1500, seed=1)
    G = nx.relabel_nodes(G, {v: 3 * v + 1 for v in G})  # ids that are not positions
    want = sorted(tuple(sorted(e)) for e in G.edges())
    got = [tuple(sorted(r.tolist())) for r in gthinker.iter_results(_Edges, G, threads=2)]
    assert sorted(got) == want
    named = nx.relabel_nodes(G, lambda v: f"v{v}")
    got = {frozenset(r) for r in gthinker.iter_results(_Edges, named, threads=2)}
    assert got == {frozenset(e) for e in named.edges()}
    lines = b"".join(stream.text(functools.partial(gthinker.run, _Edges, gthinker.as_graph(G),
                                                   threads=2))).decode().splitlines()
    assert sorted(tuple(sorted(map(int, ln.split()))) for ln in lines) == want


def test_iter_results_closed_early_stops_its_job(tmp_path, monkeypatch):
    """A complete graph's 1.1 million edges are megabytes of results, more than the pipe
    holds: closing the generator after the first stops the job and leaves no pipe."""
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    n = 1500
    g = gthinker.Graph.from_edges(np.column_stack(np.triu_indices(n, 1)))
    before = {t for t in threading.enumerate() if t.name == "gthinker-stream"}
    results = gthinker.iter_results(_Edges, g, threads=2)
    assert next(results).size == 2
    mine = {t for t in threading.enumerate() if t.name == "gthinker-stream"} - before
    assert len(mine) == 1  # the job is still running: its writer waits for the reader
    results.close()
    assert not any(t.is_alive() for t in mine) and not list(tmp_path.iterdir())
