"""Tests for gthinker.graphs.graph: readers, writers, converters, degeneracy, reorder."""

import gzip
import re
import time
from pathlib import Path

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from conftest import DATA, TRUTH

from gthinker.errors import GraphFormatError
from gthinker.graphs import generate
from gthinker.graphs.graph import Graph, LoadReport

ENRON = DATA / "email-Enron-1000.txt.gz"  # SNAP format, each edge in both directions
YEAST = DATA / "yeast.graph.gz"  # the labeled .graph format


def write(path: Path, text: str) -> Path:
    path.write_bytes(text.encode())
    return path


def edge_set(g: Graph) -> set:
    """Undirected edges of g in original ids, as frozensets."""
    e = g.ids[g.edge_array()]
    return {frozenset(p) for p in e.tolist()}


def random_nx(n, p, seed):
    return nx.gnp_random_graph(n, p, seed=seed)


# --------------------------------------------------------------------------- readers


def test_read_edgelist_remaps_noncontiguous_ids(tmp_path):
    f = write(
        tmp_path / "g.txt",
        "# comment line\n% another comment\n\n100\t7\n7 5000000000000\n  100   5000000000000  \n",
    )
    g = Graph.read(f)
    g.check()
    assert g.num_vertices == 3
    assert g.num_edges == 3
    assert g.ids.tolist() == [7, 100, 5000000000000]
    assert g.ids.dtype == np.int64
    assert edge_set(g) == {frozenset({100, 7}), frozenset({7, 5000000000000}),
                           frozenset({100, 5000000000000})}
    assert g.report.lines == 6
    assert g.report.edges_read == 3


def test_read_accepts_str_path_crlf_and_numbers_after_the_edge(tmp_path):
    f = write(tmp_path / "w.txt", "1 2 0.5\r\n2\t3\t17 -1.5e3\r\n")
    g = Graph.read(str(f))
    assert g.num_edges == 2
    assert g.neighbors(1).tolist() == [0, 2]


@pytest.mark.parametrize("line", ["1 2 garbage", "1 2 3 x", "1 2 0.5abc"])
def test_a_word_after_the_edge_is_an_error_naming_the_line(tmp_path, line):
    f = write(tmp_path / "w.txt", f"0 1\n# c\n{line}\n4 5\n")
    with pytest.raises(GraphFormatError, match=re.escape(f"{f}:3: unexpected")) as info:
        Graph.read(f)
    assert repr(line) in str(info.value)


@pytest.mark.parametrize("block", [16, 1 << 25])
def test_edge_list_pairs_are_int32_until_an_id_does_not_fit(tmp_path, monkeypatch, block):
    """The scanner keeps pairs as int32 (half the memory while the rows are built) and
    widens what it holds so far when a later block brings an id past int32."""
    from gthinker.graphs.formats import text

    monkeypatch.setattr(text, "BLOCK_BYTES", block)  # 16: a block every line or two
    small = write(tmp_path / "s.txt", "".join(f"{i} {i + 1}\n" for i in range(0, 60, 3)))
    assert text.scan(small, 2, {0: 2}, narrow=True).vals.dtype == np.int32
    big = write(tmp_path / "b.txt", small.read_text() + "7 3000000000\n5 0\n")
    rec = text.scan(big, 2, {0: 2}, narrow=True)
    assert rec.vals.dtype == np.int64 and rec.vals[-2:].tolist() == [[7, 3_000_000_000], [5, 0]]
    g = Graph.read(big)
    edges = [(i, i + 1) for i in range(0, 60, 3)] + [(7, 3_000_000_000), (5, 0)]
    assert g == Graph.from_edges(np.array(edges, np.int64))


def test_self_loops_and_duplicates_counted(tmp_path):
    f = write(tmp_path / "d.txt", "0 1\n1 0\n0 1\n2 2\n1 2\n3 3\n")
    g = Graph.read(f)
    g.check()
    r = g.report
    assert isinstance(r, LoadReport)
    assert (r.self_loops, r.duplicates, r.edges_read) == (2, 2, 6)
    assert (r.num_vertices, r.num_edges) == (4, 2)
    # vertex 3 only has a self-loop: it stays, isolated
    assert g.degrees().tolist() == [1, 2, 1, 0]
    s = str(r)
    assert "d.txt" in s and "2 self-loops" in s and "2 duplicates" in s
    assert "\n" not in s


def test_empty_file_is_empty_graph(tmp_path):
    g = Graph.read(write(tmp_path / "e.txt", ""))
    assert (g.num_vertices, g.num_edges, g.max_degree, g.degeneracy) == (0, 0, 0, 0)
    g.check()
    g2 = Graph.read(write(tmp_path / "c.txt", "# only a comment\n\n"))
    assert g2.num_vertices == 0


def test_gzip_roundtrip(tmp_path):
    g = Graph.from_networkx(random_nx(60, 0.1, 3))
    for name in ("a.txt", "a.txt.gz", "a.graph", "a.graph.gz"):
        g.write(tmp_path / name)
        h = Graph.read(tmp_path / name)
        h.check()
        assert h == Graph(g.indptr, g.indices, g.ids, h.labels)
    with gzip.open(tmp_path / "a.txt.gz", "rt") as fh:
        assert fh.readline().startswith("#")


def test_edgelist_write_keeps_original_ids(tmp_path):
    f = write(tmp_path / "o.txt", "10 20\n20 30\n")
    g = Graph.read(f)
    g.write(tmp_path / "out.txt")
    lines = [x for x in (tmp_path / "out.txt").read_text().splitlines() if not x.startswith("#")]
    assert lines == ["10\t20", "20\t30"]
    h = Graph.read(tmp_path / "out.txt")
    assert h == g


def test_labeled_roundtrip_and_labels(tmp_path):
    text = "t 4 3\nv 0 5 1\nv 1 6 2\nv 2 5 2\nv 3 9 1\ne 0 1\ne 1 2 7\ne 2 3\n"
    g = Graph.read(write(tmp_path / "l.graph", text))
    g.check()
    assert g.labels.tolist() == [5, 6, 5, 9]
    assert g.num_edges == 3
    g.write(tmp_path / "m.graph")
    assert Graph.read(tmp_path / "m.graph") == g
    # explicit format overrides the extension
    g.write(tmp_path / "m.txt", format="graph")
    assert Graph.read(tmp_path / "m.txt", format="graph") == g


def test_labeled_format_unlabeled_graph_writes_zero_labels(tmp_path):
    g = Graph.from_edges([[0, 1], [1, 2]])
    g.write(tmp_path / "z.graph")
    h = Graph.read(tmp_path / "z.graph")
    assert h.labels.tolist() == [0, 0, 0]


BAD_EDGELISTS = [
    ("one_field.txt", "# c\n1 2\n3\n", 3, "'3'"),
    ("float.txt", "1.5 2\n", 1, "'1.5'"),
    ("negative.txt", "1 2\n2 -3\n", 2, "-3"),
    ("overflow.txt", "1 2\n99999999999999999999 1\n", 2, "int64"),
]


def test_bad_edgelist_message_format(tmp_path):
    f = write(tmp_path / "x.txt", "1 2\n2.5 3\n")  # a number, not a name: an error
    with pytest.raises(GraphFormatError, match=re.escape(
            f"{f}:2: expected two integer vertex ids, got '2.5'")):
        Graph.read(f)
    f = write(tmp_path / "w.txt", "1 2\n\n5\tabc\n4x 5\n")  # words: names (docs/formats.md)
    assert Graph.read(f).node_names == ["1", "2", "4x", "5", "abc"]


def test_missing_file(tmp_path):
    f = tmp_path / "nope.txt"
    with pytest.raises(GraphFormatError, match=re.escape(f"{f}: no such file")):
        Graph.read(f)
    with pytest.raises(GraphFormatError, match="no such file"):
        Graph.read(tmp_path / "nope.graph.gz")


def test_corrupt_gzip(tmp_path):
    f = write(tmp_path / "bad.txt.gz", "not gzip at all")
    with pytest.raises(GraphFormatError, match="bad.txt.gz"):
        Graph.read(f)


BAD_LABELED = [
    ("nohead.graph", "v 0 1 0\n", 1, "header"),
    ("headlate.graph", "# c\nv 0 1 0\nt 1 0\n", 2, "header"),
    ("few_e.graph", "t 3 3\nv 0 1 1\nv 1 1 2\nv 2 5 1\ne 0 1\ne 1 2\n", 1, "3 edges"),
    ("many_e.graph", "t 3 1\nv 0 1 1\nv 1 1 2\nv 2 5 1\ne 0 1\ne 1 2\n", 6, "more 'e' lines"),
    ("few_v.graph", "t 3 1\nv 0 1 1\nv 1 1 1\ne 0 1\n", 1, "3 vertices"),
    ("many_v.graph", "t 2 1\nv 0 1 1\nv 1 1 1\nv 2 1 0\ne 0 1\n", 4, "more 'v' lines"),
    ("vrange.graph", "t 2 1\nv 0 1 1\nv 7 1 1\ne 0 1\n", 3, "out of range"),
    ("vdup.graph", "t 2 1\nv 0 1 1\nv 0 1 1\ne 0 1\n", 3, "defined twice"),
    ("erange.graph", "t 2 1\nv 0 1 1\nv 1 1 1\ne 0 2\n", 4, "out of range"),
    ("degree.graph", "t 3 2\nv 0 1 1\nv 1 1 2\nv 2 5 2\ne 0 1\ne 1 2\n", 4, "degree"),
    ("label.graph", "t 2 1\nv 0 x 1\nv 1 1 1\ne 0 1\n", 2, "'x'"),
    ("neglabel.graph", "t 2 1\nv 0 1 1\nv 1 -4 1\ne 0 1\n", 3, "'-4'"),
    ("eshort.graph", "t 2 1\nv 0 1 1\nv 1 1 1\ne 0\n", 4, "'e 0'"),
    ("tag.graph", "t 2 1\nv 0 1 1\nv 1 1 1\nx 0 1\n", 4, "unknown line"),
]


@pytest.mark.parametrize(("name", "text", "line", "needle"), BAD_EDGELISTS + BAD_LABELED)
def test_bad_input_names_file_and_line(tmp_path, name, text, line, needle):
    f = write(tmp_path / name, text)
    with pytest.raises(GraphFormatError) as info:
        Graph.read(f)
    msg = str(info.value)
    assert msg.startswith(f"{f}:{line}: "), msg
    assert needle in msg, msg
    assert info.value.__cause__ is None or not isinstance(info.value.__cause__, GraphFormatError)


# --------------------------------------------------------------------------- converters


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_converters_agree_with_networkx(seed):
    G = random_nx(80, 0.08, seed)
    G.add_node(200)  # isolated, non-contiguous id
    a = Graph.from_networkx(G)
    a.check()
    assert a.num_vertices == G.number_of_nodes()
    assert a.num_edges == G.number_of_edges()
    assert edge_set(a) == {frozenset(e) for e in G.edges()}
    assert a.ids[-1] == 200 and a.degrees()[-1] == 0

    nodes = sorted(G.nodes)
    A = nx.to_scipy_sparse_array(G, nodelist=nodes, format="csr")
    b = Graph.from_scipy(A)
    assert np.array_equal(a.indptr, b.indptr)
    assert np.array_equal(a.indices, b.indices)

    edges = np.array(list(G.edges()), dtype=np.int64)
    c = Graph.from_edges(edges, num_vertices=201)
    keep = np.isin(np.arange(201), nodes)
    assert c.num_edges == a.num_edges
    assert np.array_equal(c.degrees()[keep], a.degrees())
    d = Graph.from_edges(edges)  # remapped: isolated vertex 200 is absent
    assert d.num_vertices == np.unique(edges).size
    assert edge_set(d) == edge_set(a)

    back = a.to_networkx()
    assert nx.utils.graphs_equal(back, G)


def test_from_scipy_asymmetric_and_diagonal():
    M = sp.coo_matrix(([1, 2, 3, 0, 5], ([0, 1, 2, 0, 3], [1, 1, 0, 3, 2])), shape=(4, 4))
    g = Graph.from_scipy(M.tocsr())
    g.check()
    assert g.report.self_loops == 1
    assert edge_set(g) == {frozenset({0, 1}), frozenset({0, 2}), frozenset({2, 3})}
    # symmetric matrix: each edge seen twice
    h = Graph.from_scipy(sp.csr_array(nx.to_scipy_sparse_array(nx.path_graph(5))))
    assert h.report.duplicates == 4 and h.num_edges == 4
    with pytest.raises(GraphFormatError, match="square"):
        Graph.from_scipy(sp.csr_matrix((2, 3)))


def test_from_networkx_named_nodes_and_labels():
    G = nx.DiGraph()
    G.add_node("b", label=2)
    G.add_node("a", label=7)
    G.add_node(("t", 1), label=3)
    G.add_edges_from([("a", "b"), ("b", "a"), ("a", ("t", 1))])
    g = Graph.from_networkx(G)
    g.check()
    assert g.node_names == ["b", "a", ("t", 1)]
    assert g.ids.tolist() == [0, 1, 2]
    assert g.labels.tolist() == [2, 7, 3]
    assert g.num_edges == 2
    back = g.to_networkx()
    assert {frozenset(e) for e in back.edges()} == {frozenset({"a", "b"}),
                                                    frozenset({"a", ("t", 1)})}
    assert back.nodes["a"]["label"] == 7
    r = g.reorder(np.array([2, 0, 1]))
    assert r.node_names == [("t", 1), "b", "a"]


def test_from_networkx_partial_labels_ignored():
    G = nx.path_graph(3)
    G.nodes[0]["label"] = 1
    assert Graph.from_networkx(G).labels is None


def test_from_edges_validation():
    with pytest.raises(GraphFormatError, match=r"shape \(m, 2\)"):
        Graph.from_edges([1, 2, 3])
    with pytest.raises(GraphFormatError, match=r"shape \(m, 2\)"):
        Graph.from_edges(np.zeros((3, 3), dtype=int))
    with pytest.raises(GraphFormatError, match="non-negative"):
        Graph.from_edges([[0, 1], [2, -1]])
    with pytest.raises(GraphFormatError, match="integers"):
        Graph.from_edges([[0.5, 1.0]])
    with pytest.raises(GraphFormatError, match="out of range"):
        Graph.from_edges([[0, 5]], num_vertices=5)
    with pytest.raises(GraphFormatError, match="labels"):
        Graph.from_edges([[0, 1]], labels=[1, 2, 3])
    g = Graph.from_edges([], num_vertices=4)
    assert (g.num_vertices, g.num_edges) == (4, 0)
    g = Graph.from_edges([[0, 3]], num_vertices=5, labels=[1, 2, 3, 4, 5])
    assert g.labels.dtype == np.int32 and g.degrees().tolist() == [1, 0, 0, 1, 0]


def test_arrays_are_contiguous_readonly_and_typed():
    g = Graph.from_edges([[0, 1], [1, 2]])
    for arr, dt in ((g.indptr, np.int64), (g.indices, np.int32), (g.ids, np.int64)):
        assert arr.dtype == dt and arr.flags.c_contiguous and not arr.flags.writeable
    assert "n=3" in repr(g) and "m=2" in repr(g)
    with pytest.raises(IndexError):
        g.neighbors(3)


def test_check_detects_violations():
    good = Graph.from_edges([[0, 1], [1, 2]])
    good.check()
    asym = Graph(np.array([0, 1, 1]), np.array([1]))
    with pytest.raises(AssertionError):
        asym.check()
    loop = Graph(np.array([0, 1, 2]), np.array([0, 0]))
    with pytest.raises(AssertionError):
        loop.check()
    unsorted = Graph(np.array([0, 2, 3, 4]), np.array([2, 1, 0, 0]))
    with pytest.raises(AssertionError, match="increasing"):
        unsorted.check()


# --------------------------------------------------------------------------- algorithms


def _with_clique(G):
    G.add_edges_from(nx.complete_graph(12).edges())
    return G


@pytest.mark.parametrize("make", [
    *(lambda seed=seed: _with_clique(nx.powerlaw_cluster_graph(300, 4, 0.3, seed=seed))
      for seed in range(4)),
    lambda: nx.gnp_random_graph(400, 0.03, seed=5),
    lambda: nx.gnp_random_graph(150, 0.4, seed=6),
    lambda: nx.barabasi_albert_graph(2000, 6, seed=7),
    lambda: generate.rmat(11, 8, seed=8).to_networkx(),
], ids=["powerlaw0", "powerlaw1", "powerlaw2", "powerlaw3", "gnp-sparse", "gnp-dense",
        "barabasi-albert", "rmat11"])
def test_degeneracy_matches_networkx(make):
    G = make()
    g = Graph.from_networkx(G)
    order, core = g.degeneracy_order()
    assert order.dtype == np.int32 and core.dtype == np.int32
    assert np.array_equal(np.sort(order), np.arange(g.num_vertices))
    ref = nx.core_number(G)
    assert core.tolist() == [ref[int(i)] for i in g.ids]
    k = g.degeneracy
    assert k == max(ref.values())
    pos = np.empty(g.num_vertices, dtype=np.int64)
    pos[order] = np.arange(g.num_vertices)
    rows = np.repeat(np.arange(g.num_vertices), g.degrees())
    later = np.bincount(rows[pos[g.indices] > pos[rows]], minlength=g.num_vertices)
    assert np.all(later <= core) and later.max() == k  # at most its core number after each


def test_reorder_invariants():
    G = random_nx(100, 0.07, 11)
    g = Graph.from_edges(np.array(list(G.edges())) * 3 + 5, labels=None)
    g = Graph(g.indptr, g.indices, g.ids, labels=np.arange(g.num_vertices) % 7, report=g.report)
    order, _ = g.degeneracy_order()
    r = g.reorder(order)
    r.check()
    assert np.array_equal(r.ids, g.ids[order])
    assert np.array_equal(r.labels, g.labels[order])
    assert r.report is g.report
    assert edge_set(r) == edge_set(g)
    # edge (i, j) in r <=> (order[i], order[j]) in g
    e = r.edge_array()
    assert all(g.neighbors(int(order[i])).tolist().count(int(order[j])) == 1
               for i, j in e[:50].tolist())
    rng = np.random.default_rng(0)
    perm = rng.permutation(g.num_vertices)
    back = r.reorder(np.argsort(order))
    assert back == g
    assert g.reorder(perm).reorder(np.argsort(perm)) == g
    with pytest.raises(ValueError, match="permutation"):
        g.reorder(np.zeros(g.num_vertices, dtype=int))
    with pytest.raises(ValueError):
        g.reorder(np.arange(3))


# --------------------------------------------------------------------------- real data


def test_email_enron():
    want = TRUTH[ENRON.name]
    Graph.read(ENRON)  # warm-up: numba initialisation is paid once per process
    t = time.perf_counter()
    g = Graph.read(ENRON)
    elapsed = time.perf_counter() - t
    assert g.num_vertices == want["num_vertices"]
    assert g.num_edges == want["num_edges"]
    assert g.max_degree == want["max_degree"]
    assert g.report.edges_read == want["edge_lines"]
    assert (g.report.duplicates, g.report.self_loops) == (want["duplicates"], want["self_loops"])
    g.check()
    assert elapsed < 1.0, f"{ENRON.name} took {elapsed:.3f}s"
    assert g.degeneracy == want["degeneracy"]


def test_labeled_yeast():
    want = TRUTH[YEAST.name]
    g = Graph.read(YEAST)
    g.check()
    assert g.num_vertices == want["num_vertices"]
    assert g.num_edges == want["num_edges"]
    assert np.unique(g.labels).size == want["num_labels"]


def test_derived_is_built_once_per_key_and_graph():
    g = Graph.from_edges(np.array([[0, 1], [1, 2]]))
    calls = []

    def build(h):
        calls.append(h)
        return h.degrees() * 2

    first = g.derived("twice", build)
    assert first.tolist() == [2, 4, 2] and g.derived("twice", build) is first
    assert calls == [g]
    other = Graph.from_edges(np.array([[0, 1]]))
    assert other.derived("twice", build).tolist() == [2, 2] and len(calls) == 2


def test_isolated_vertex_comments(tmp_path):
    # ids listed as isolated join the vertices with edges, once each, in id order
    f = write(tmp_path / "iso.txt", "# isolated vertices: 9 0004 30\n# isolated vertices: 9 2\n"
                                    "2 5\n5 7\n")
    g = Graph.read(f)
    assert g.ids.tolist() == sorted({2, 5, 7, 9, 4, 30})
    assert edge_set(g) == {frozenset((2, 5)), frozenset((5, 7))}
    bad = write(tmp_path / "bad.txt", "# a graph\n# isolated vertices: 3 x4\n1 2\n")
    with pytest.raises(GraphFormatError, match=re.escape(f"{bad}:2: expected non-negative")):
        Graph.read(bad)
    huge = write(tmp_path / "huge.txt", f"# isolated vertices: 1 {2**63}\n1 2\n")
    with pytest.raises(GraphFormatError, match="does not fit in int64"):
        Graph.read(huge)
