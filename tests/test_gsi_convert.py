"""benchmarks/peers/gsi_convert.py: gthinker graphs and queries in GSI's .g format, read
back and compared with the graph's own arrays, and its networkx reference counts."""

import random
import sys
from pathlib import Path

import networkx as nx
import numpy as np

import gthinker
from gthinker.apps import sm

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks" / "peers"))
import gsi_convert  # noqa: E402


def test_a_labeled_graph_round_trips(tmp_path):
    G = nx.gnp_random_graph(30, 0.2, seed=4)
    rng = random.Random(4)
    nx.set_node_attributes(G, {v: rng.randrange(3) for v in G}, "label")
    g = gthinker.as_graph(G)
    m = gsi_convert.write_graph(g, tmp_path / "g.g")
    text = (tmp_path / "g.g").read_text().splitlines()
    assert text[0] == "t # 0" and text[-1] == "t # -1"
    assert text[1].split() == ["30", str(m), str(int(g.labels.max()) + 1), "1"]
    [(n, labels, edges)] = gsi_convert.read_g(tmp_path / "g.g")
    assert n == 30 and (labels == g.labels + 1).all()
    assert m == 2 * G.number_of_edges() == len(edges)
    rows = np.repeat(np.arange(30), np.diff(g.indptr))
    assert (edges[:, 0] == rows).all() and (edges[:, 1] == g.indices).all()
    assert (edges[:, 2] == 1).all()


def test_vertex_labels_for_an_unlabeled_graph(tmp_path):
    g = gthinker.as_graph(nx.cycle_graph(12))
    gsi_convert.write_graph(g, tmp_path / "g.g", k=4)
    [(_, labels, _)] = gsi_convert.read_g(tmp_path / "g.g")
    assert sorted(np.bincount(labels - 1).tolist()) == [3, 3, 3, 3]
    assert (labels - 1 == gsi_convert.vertex_labels(12, 4)).all()


def test_both_ways_counts_are_the_undirected_embeddings(tmp_path):
    """An undirected graph and query written both ways: networkx's directed count (what
    GSI is checked against) equals the undirected embeddings."""
    G = nx.gnp_random_graph(14, 0.35, seed=2)
    g = gthinker.as_graph(G)
    gsi_convert.write_graph(g, tmp_path / "g.g")
    for name in ("triangle", "4-cycle", "3-path"):
        q = sm.as_query(name)
        gsi_convert.write_graph(q, tmp_path / "q.g")
        data, query = (gsi_convert.read_g(tmp_path / f)[0] for f in ("g.g", "q.g"))
        assert gsi_convert.monomorphisms(data, query) == sm.count(G, name, threads=1).count


def test_selftest_cases(tmp_path, capsys):
    sample = tmp_path / "sample"
    sample.mkdir()
    cycle = "t # 0\n3 3 1 1\nv 0 1\nv 1 1\nv 2 1\ne 0 1 1\ne 1 2 1\ne 2 0 1\nt # -1\n"
    path = "t # 0\n3 2 1 1\nv 0 1\nv 1 1\nv 2 1\ne 0 1 1\ne 1 2 1\nt # -1\n"
    star = "t # 0\n3 2 1 1\nv 0 1\nv 1 1\nv 2 1\ne 0 1 1\ne 2 1 1\nt # -1\n"
    for name, text in (("data.g", cycle), ("query.g", path), ("star.g", star),
                       ("triangle.g", cycle), ("wedge.g", path)):
        (sample / name).write_text(text)
    gsi_convert.selftest(tmp_path / "work", sample)
    lines = capsys.readouterr().out.splitlines()
    got = {Path(line.split()[1]).name: line.split()[2] for line in lines}
    # a directed 3-cycle: 3 directed 2-paths, no vertex with two in-edges, 3 rotations
    assert got["query.g"] == "3" and got["star.g"] == "0" and got["triangle.g"] == "3"
    assert len(got["small_queries.g"].split(",")) == 3
