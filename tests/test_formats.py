"""Graph formats and the CSR kernels behind them: the binary format (round trips,
prepared forms, truncated and corrupt files), Matrix Market, scipy .npz, edge
columns, the registry's detection by content, and the kernels checked against
independent references (networkx, brute force, level-by-level peeling in Python)."""

import gzip
import json
import os
import re
import subprocess
import sys

import networkx as nx
import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp
from conftest import child_env

import gthinker
import gthinker.graphs.generate
from gthinker import _core
from gthinker.errors import GraphFormatError
from gthinker.graphs import csr
from gthinker.graphs import files as graph_files
from gthinker.graphs.graph import Graph


def edge_set(g):
    return {frozenset(map(int, g.ids[e])) for e in g.edge_array().tolist()}


def labeled_graph(seed=0, n=80, p=0.08):
    G = nx.gnp_random_graph(n, p, seed=seed)
    G.remove_nodes_from([v for v in list(G)[:3]])  # ids no longer 0..n-1
    G.add_node(10_000)  # an isolated vertex with a far id
    for v in G:
        G.nodes[v]["label"] = (v * 7) % 5
    return Graph.from_networkx(G)


# --------------------------------------------------------------------------- kernels


def levels_order(g):
    """The level-synchronous peeling written out in Python with sets (the reference
    order): at level k, each round takes every remaining vertex of remaining degree
    <= k, by id; the level rises to the smallest remaining degree when none is left."""
    nbrs = [set(g.neighbors(v).tolist()) for v in range(g.num_vertices)]
    deg = [len(s) for s in nbrs]
    left, order, core, k = set(range(g.num_vertices)), [], [0] * g.num_vertices, 0
    while left:
        k = max(k, min(deg[v] for v in left))
        while batch := sorted(v for v in left if deg[v] <= k):
            left -= set(batch)
            for v in batch:
                order.append(v)
                core[v] = k
                for u in nbrs[v] & left:
                    deg[u] -= 1
    return order, core


def later_neighbours(g, order):
    """How many neighbours of each vertex come after it in ``order``."""
    pos = np.empty(g.num_vertices, np.int64)
    pos[order] = np.arange(g.num_vertices)
    rows = np.repeat(np.arange(g.num_vertices), g.degrees())
    return np.bincount(rows[pos[g.indices] > pos[rows]], minlength=g.num_vertices)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_degeneracy_order_is_level_peeling_and_cores_match_networkx(seed):
    G = nx.powerlaw_cluster_graph(300, 4, 0.3, seed=seed)
    G.add_edges_from(nx.complete_graph(range(400, 412)).edges())  # a 12-clique apart
    G.add_nodes_from([500, 501])  # level 0
    g = Graph.from_networkx(G)
    order, core = g.degeneracy_order()
    want_order, want_core = levels_order(g)
    assert order.tolist() == want_order
    assert core.tolist() == want_core
    assert dict(zip(g.ids.tolist(), core.tolist(), strict=True)) == nx.core_number(G)
    later = later_neighbours(g, order)
    assert np.all(later <= core) and later.max() == g.degeneracy == 11


@pytest.mark.parametrize("make", [
    lambda: gthinker.graphs.generate.rmat(18, 4, seed=2),  # rounds and level scans on many threads
    lambda: Graph.from_networkx(nx.path_graph(20_000)),  # 10,000 rounds of two vertices
    lambda: Graph.from_networkx(nx.star_graph(40_000)),  # a hub in a round of its own
    lambda: Graph.from_edges(np.zeros((0, 2), np.int64), num_vertices=5),
], ids=["rmat18", "path", "star", "empty"])
def test_degeneracy_order_is_the_same_on_any_number_of_threads(make):
    g = make()
    order, core = _core.degeneracy_order(g.indptr, g.indices, 1)
    for threads in (2, 3, 8):
        o, c = _core.degeneracy_order(g.indptr, g.indices, threads)
        assert np.array_equal(o, order) and np.array_equal(c, core)
    assert np.array_equal(np.sort(order), np.arange(g.num_vertices))
    later = later_neighbours(g, order)
    assert np.all(later <= core)
    assert later.max(initial=0) == core.max(initial=0)
    assert np.diff(g.oriented().indptr).max(initial=0) == g.degeneracy


def test_kernels_give_the_same_arrays_on_one_thread_and_many():
    g = gthinker.graphs.generate.rmat(12, 8, seed=5)
    rank = np.random.default_rng(1).permutation(g.num_vertices).astype(np.int32)
    e = g.edge_array()
    for threads in (1, 3, 8):
        ip, ix, loops, dups = _core.build_csr(e[:, 1], e[:, 0], g.num_vertices, threads)
        assert np.array_equal(ip, g.indptr) and np.array_equal(ix, g.indices)
        for renumber in (False, True):
            a = _core.orient(g.indptr, g.indices, rank, renumber, threads)
            b = _core.orient(g.indptr, g.indices, rank, renumber, 1)
            assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))


def test_oriented_forms_against_brute_force():
    g = Graph.from_networkx(nx.gnp_random_graph(120, 0.1, seed=4))
    order, _ = g.degeneracy_order()
    rank = np.empty(g.num_vertices, int)
    rank[order] = np.arange(g.num_vertices)
    dag = g.oriented()
    for v in range(g.num_vertices):
        assert dag.neighbors(v).tolist() == [u for u in g.neighbors(v) if rank[u] > rank[v]]
    by_degree = np.argsort(g.degrees(), kind="stable")
    drank = np.empty(g.num_vertices, int)
    drank[by_degree] = np.arange(g.num_vertices)
    deg_dag = g.degree_oriented()
    for v in range(g.num_vertices):
        want = sorted(int(drank[u]) for u in g.neighbors(v) if drank[u] > drank[v])
        assert deg_dag.neighbors(int(drank[v])).tolist() == want
    assert np.array_equal(deg_dag.ids, g.ids[by_degree])
    ordered = g.degeneracy_ordered()
    assert ordered == g.reorder(order) and edge_set(ordered) == edge_set(g)


@pytest.mark.parametrize("threads", [1, 3, 8])
def test_build_in_place_gives_the_rows_of_build(threads, monkeypatch):
    """Rows written over their own int32 pairs (through the upper rows) are build's:
    random pairs with loops, repeats and reversed repeats, sorted input (each thread
    then reads only its rows' span of pairs), the same in order of their smaller end
    but with loops, repeats and both directions, no pairs."""
    monkeypatch.setattr(csr, "threads", lambda: threads)
    rng = np.random.default_rng(threads)
    g = gthinker.graphs.generate.rmat(10, 8, seed=3)
    mixed = rng.integers(0, 3000, (20_000, 2))
    by_low = mixed[np.argsort(mixed.min(axis=1), kind="stable")]
    cases = [rng.integers(0, 50, (400, 2)), mixed, g.edge_array(), by_low,
             np.zeros((0, 2), np.int64)]
    for pairs, n in zip(cases, [50, 3000, g.num_vertices, 3000, 4], strict=True):
        pairs = pairs.astype(np.int32)
        want = csr.build(pairs[:, 0].copy(), pairs[:, 1].copy(), n)
        mine = pairs.copy()
        indptr, indices, loops, dups = csr.build_in_place(mine, n)
        assert indices.size == 0 or np.shares_memory(indices, mine)
        assert np.array_equal(indptr, want[0]) and np.array_equal(indices, want[1])
        assert (loops, dups) == want[2:]
        h = Graph.from_owned_pairs(pairs.copy(), n)
        assert h == Graph.from_pairs(pairs[:, 0], pairs[:, 1], n)
        assert vars(h.report) == vars(Graph.from_pairs(pairs[:, 0], pairs[:, 1], n).report)
    with pytest.raises(IndexError):
        csr.build_in_place(np.array([[0, 7]], np.int32), 5)


def test_build_counts_loops_and_repeats_and_checks_ids():
    u = np.array([0, 1, 0, 2, 3, 1], np.int64)
    v = np.array([1, 0, 1, 2, 3, 2], np.int64)
    g = Graph.from_pairs(u, v, 5)
    assert (g.report.self_loops, g.report.duplicates, g.num_edges) == (2, 2, 2)
    with pytest.raises(IndexError):
        Graph.from_pairs(np.array([0]), np.array([7]), 5)


# --------------------------------------------------------------------------- binary


def test_binary_round_trip_keeps_everything(tmp_path):
    g = labeled_graph()
    g.save(tmp_path / "g.csr", prepare="all")
    h = Graph.read(tmp_path / "g.csr")
    assert h == g and h.node_names == g.node_names and vars(h.report) == vars(g.report)
    for name in ("indptr", "indices", "ids", "labels"):
        assert not getattr(h, name).flags.writeable
    # prepared forms come back from the file, equal to computing them again
    fresh = Graph(g.indptr, g.indices, g.ids, g.labels)
    assert all(np.array_equal(a, b) for a, b in zip(h.degeneracy_order(),
                                                    fresh.degeneracy_order(), strict=True))
    assert h.oriented() == fresh.oriented()
    assert h.degeneracy_ordered() == fresh.degeneracy_ordered()
    assert h.degree_oriented() == fresh.degree_oriented()
    # text -> binary -> text keeps ids and labels exactly
    h.write(tmp_path / "back.graph")
    h.write(tmp_path / "back.txt")
    assert Graph.read(tmp_path / "back.graph").labels.tolist() == g.labels.tolist()
    assert Graph.read(tmp_path / "back.txt") == Graph(g.indptr, g.indices, g.ids)


def test_binary_keeps_node_names_of_every_json_kind(tmp_path):
    G = nx.Graph([("a", ("t", 1)), (("t", 1), 2.5), (2.5, ("x", ("y", -3))), ("a", 7)])
    g = Graph.from_networkx(G)
    g.save(tmp_path / "n.bin")  # detected by content, whatever the name
    h = Graph.read(tmp_path / "n.bin")
    assert h.node_names == g.node_names
    assert nx.utils.graphs_equal(h.to_networkx(), g.to_networkx())


def test_binary_refuses_unstorable_names(tmp_path):
    g = Graph.from_networkx(nx.Graph([(frozenset({1}), 2)]))
    with pytest.raises(ValueError, match="cannot be stored"):
        g.save(tmp_path / "x.csr")
    assert not any(tmp_path.iterdir())  # no partial file, no temporary left


def test_app_forms_kept_with_the_graph_are_saved(tmp_path):
    g = gthinker.graphs.generate.rmat(9, 8, seed=2)
    g.derived("some.app.form", lambda gr: (gr.degrees() * 2, 7))
    g.save(tmp_path / "a.csr")
    h = Graph.load(tmp_path / "a.csr")
    kept, seven = h.derived("some.app.form", lambda gr: pytest.fail("built again"))
    assert seven == 7 and np.array_equal(kept, g.degrees() * 2)


def test_forms_of_an_older_revision_are_computed_again(tmp_path, monkeypatch):
    """A file whose degeneracy order came from an older gthinker (no revision stored:
    Batagelj-Zaversnik's order) has it and the forms made from it computed again, so
    every copy of a graph gives the same order; the other forms are restored."""
    g = gthinker.graphs.generate.rmat(9, 8, seed=3)
    fresh = Graph(g.indptr, g.indices, g.ids)
    order, core = fresh.degeneracy_order()
    reverse = np.ascontiguousarray(order[::-1])  # stands for another order
    stand_in = g.reorder(reverse)  # and for the forms made from it
    g.derived("degeneracy", lambda _: (reverse, core))
    g.derived("oriented", lambda _: stand_in)
    g.derived("ordered", lambda _: stand_in)
    g.degree_in_rows()
    monkeypatch.setattr(Graph, "FORM_REVISIONS", {})  # written as before revisions
    g.save(tmp_path / "old.csr")
    monkeypatch.undo()
    g.save(tmp_path / "new.csr")
    old, new = Graph.load(tmp_path / "old.csr"), Graph.load(tmp_path / "new.csr")
    assert np.array_equal(old.degeneracy_order()[0], fresh.degeneracy_order()[0])
    assert old.oriented() == fresh.oriented()
    assert old.degeneracy_ordered() == fresh.degeneracy_ordered()
    assert np.array_equal(new.degeneracy_order()[0], reverse)  # this revision: restored
    assert new.oriented() == stand_in
    for h in (old, new):
        kept = h.derived("degree-oriented", lambda _: pytest.fail("built again"))
        assert kept == g.degree_oriented()


@pytest.fixture
def saved(tmp_path):
    g = gthinker.graphs.generate.rmat(10, 8, seed=1)
    path = tmp_path / "g.csr"
    g.save(path, prepare=["degeneracy"])
    return path, path.read_bytes()


@pytest.mark.parametrize("cut", [0, 5, 30, 200, 5000, -1])
def test_truncated_binary_file_is_a_clear_error(saved, cut):
    path, data = saved
    path.write_bytes(data[:cut] if cut >= 0 else data[:-1])
    with pytest.raises(GraphFormatError, match=re.escape(str(path)) + ": (truncated|not a)"):
        Graph.read(path)


def test_corrupt_binary_metadata_rows_and_checksums(saved):
    path, data = saved
    meta_end = 24 + int.from_bytes(data[12:16], "little")
    bad = bytearray(data)
    bad[30] ^= 0xFF  # inside the metadata
    path.write_bytes(bytes(bad))
    with pytest.raises(GraphFormatError, match="metadata does not match its checksum"):
        Graph.read(path)
    meta = json.loads(data[24:meta_end])  # the layout, to aim at the sections
    at = meta["sections"]["indices"]["offset"]
    bad = bytearray(data)
    bad[at:at + 4] = (10**6).to_bytes(4, "little")  # a neighbour id out of range
    path.write_bytes(bytes(bad))
    with pytest.raises(GraphFormatError, match="section 'indices' does not match its checksum"):
        Graph.read(path)  # the checksums come first; the rows then (a file without them)
    at = meta["sections"]["derived/degeneracy/1"]["offset"]
    bad = bytearray(data)
    bad[at] ^= 1  # a core number: rows still fine, only the checksum sees it
    path.write_bytes(bytes(bad))
    Graph.read(path)
    with pytest.raises(GraphFormatError, match="does not match its checksum"):
        Graph.load(path, verify=True)
    bad = bytearray(data)
    bad[8] = 9  # a version from the future
    path.write_bytes(bytes(bad))
    with pytest.raises(GraphFormatError, match="version 9"):
        Graph.read(path)


# --------------------------------------------------------------------------- other formats


def test_matrix_market_against_scipy(tmp_path):
    A = sp.random(40, 40, density=0.1, random_state=3, format="coo")
    for field, symmetry in (("real", "general"), ("integer", "general"), ("pattern", "general")):
        M = A if field == "real" else sp.coo_matrix((np.ones(A.nnz, int), (A.row, A.col)), A.shape)
        scipy.io.mmwrite(tmp_path / "a.mtx", M, field=field, symmetry=symmetry)
        want = Graph.from_scipy(scipy.io.mmread(tmp_path / "a.mtx"))
        assert Graph.read(tmp_path / "a.mtx") == want
    S = sp.coo_matrix(A + A.T)
    scipy.io.mmwrite(tmp_path / "s.mtx", S, symmetry="symmetric")
    assert Graph.read(tmp_path / "s.mtx") == Graph.from_scipy(S)
    # the size line is no edge (issue 35: it was read as one)
    (tmp_path / "t.txt").write_text("%%MatrixMarket matrix coordinate pattern symmetric\n"
                                    "5 5 1\n2 1\n")
    g = Graph.read(tmp_path / "t.txt")  # found by its banner, whatever the name
    assert (g.num_vertices, edge_set(g)) == (5, {frozenset({0, 1})})


def test_matrix_market_round_trip_keeps_ids_and_labels(tmp_path):
    g = labeled_graph(1)
    g.write(tmp_path / "g.mtx")
    h = Graph.read(tmp_path / "g.mtx")
    assert h == g
    g.write(tmp_path / "g.mtx.gz")
    assert Graph.read(tmp_path / "g.mtx.gz") == g


@pytest.mark.parametrize(("text", "line", "needle"), [
    ("%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n", 1, "dense"),
    ("%%MatrixMarket matrix coordinate complex general\n2 2 1\n1 2 1 0\n", 1, "complex"),
    ("%%MatrixMarket matrix coordinate pattern general\n2 3 1\n1 2\n", 2, "square"),
    ("%%MatrixMarket matrix coordinate pattern general\n3 3 2\n1 2\n", 2, "declares 2"),
    ("%%MatrixMarket matrix coordinate pattern general\n3 3 1\n1 4\n", None, "outside"),
    ("%%MatrixMarket matrix coordinate real general\n3 3 1\n1 2 x\n", 3, "'x'"),
    ("%%MatrixMarket matrix coordinate pattern general\n% only comments\n", 3, "size line"),
])
def test_bad_matrix_market_files(tmp_path, text, line, needle):
    f = tmp_path / "b.mtx"
    f.write_text(text)
    with pytest.raises(GraphFormatError) as info:
        Graph.read(f)
    msg = str(info.value)
    assert msg.startswith(f"{f}:{line}: " if line else f"{f}: ") and needle in msg, msg


def test_npz_and_scipy_round_trips(tmp_path):
    g = labeled_graph(2)
    g.write(tmp_path / "g.npz")
    assert Graph.read(tmp_path / "g.npz") == g
    M = sp.load_npz(tmp_path / "g.npz")  # scipy reads what gthinker writes
    assert Graph.from_scipy(M) == Graph(g.indptr, g.indices)
    assert Graph.from_scipy(g.to_scipy()) == Graph(g.indptr, g.indices)
    sp.save_npz(tmp_path / "s.npz", sp.csr_matrix(nx.to_scipy_sparse_array(nx.path_graph(5))))
    assert Graph.read(tmp_path / "s.npz").num_edges == 4


def test_edge_columns_without_a_python_loop():
    src = np.array([10, 20, 30, 30], np.int32)
    dst = np.array([20, 30, 10, 40], np.uint16)
    g = Graph.from_columns(src, dst)
    assert g == Graph.from_edges(np.column_stack([src, dst]))

    class Column:  # what pandas and pyarrow columns offer
        def __init__(self, a):
            self.a = a

        def to_numpy(self, zero_copy_only=True):
            return self.a

    assert Graph.from_columns(Column(src), Column(dst)) == g
    with pytest.raises(GraphFormatError, match="same length"):
        Graph.from_columns(src, dst[:2])
    with pytest.raises(GraphFormatError, match="integers"):
        Graph.from_columns(src.astype(float), dst)


def test_formats_found_by_content_then_name(tmp_path):
    g = labeled_graph(3)
    for name, want in (("a.txt", "edgelist"), ("b.graph", "graph"), ("c.mtx", "mtx"),
                       ("d.npz", "npz")):
        g.write(tmp_path / name)
        os.rename(tmp_path / name, tmp_path / (name + ".data"))
        found = graph_files.format_name(tmp_path / (name + ".data"), None)
        assert found == want  # a .graph file by its 't' header line
    g.save(tmp_path / "e.txt")
    assert graph_files.format_name(tmp_path / "e.txt", None) == "binary"
    with gzip.open(tmp_path / "m.dat.gz", "wb") as fh:
        fh.write(b"%%MatrixMarket matrix coordinate pattern general\n2 2 1\n2 1\n")
    assert Graph.read(tmp_path / "m.dat.gz").num_edges == 1


def test_convert_command_round_trip(tmp_path):
    g = labeled_graph(4)
    g.write(tmp_path / "g.mtx")
    env = child_env()
    run = [sys.executable, "-m", "gthinker", "convert"]
    r = subprocess.run(run + [str(tmp_path / "g.mtx"), str(tmp_path / "g.csr")],
                       capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert r.returncode == 0 and "prepared: degeneracy, oriented" in r.stderr, r.stderr
    h = Graph.load(tmp_path / "g.csr")
    assert h == g and "oriented" in h.prepared()
    r = subprocess.run(run + [str(tmp_path / "g.csr"), "--verify"], capture_output=True,
                       text=True, env=env, cwd=tmp_path, timeout=300)
    assert r.returncode == 0 and "checks out" in r.stderr
    r = subprocess.run(run + [str(tmp_path / "g.csr"), str(tmp_path / "g.csr")],
                       capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert r.returncode == 2 and "OUT is GRAPH" in r.stderr


def test_in_rows_against_brute_force():
    dag = gthinker.graphs.generate.rmat(10, 8, seed=6).oriented()
    in_ptr, in_src, in_pos, after = csr.in_rows(dag.indptr, dag.indices)
    for u in range(dag.num_vertices):
        want = [(v, p) for v in range(dag.num_vertices)
                for p, w in enumerate(dag.neighbors(v).tolist()) if w == u]
        got = list(zip(in_src[in_ptr[u]:in_ptr[u + 1]].tolist(),
                       in_pos[in_ptr[u]:in_ptr[u + 1]].tolist(), strict=True))
        assert got == want
        assert after[u] == sum(dag.degrees()[v] - p - 1 for v, p in want)


@pytest.mark.parametrize("compress", [False, True])
def test_a_pipe_is_read_once_plain_or_gzip(compress, tmp_path):
    data = b"# a pipe\n10 20\n20 30\n30 10\n"
    code = ("import gthinker; g = gthinker.Graph.read('/dev/stdin'); "
            "print(g.num_edges, g.ids.tolist())")
    r = subprocess.run([sys.executable, "-c", code], input=gzip.compress(data) if compress
                       else data, capture_output=True, env=child_env(), cwd=tmp_path, timeout=120)
    assert r.stdout.decode().split("\n")[0] == "3 [10, 20, 30]", r.stderr
