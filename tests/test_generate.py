"""Tests for gthinker.graphs.generate: seeded generators and the ``generate`` command."""

import argparse
import math

import networkx as nx
import numpy as np
import pytest

from gthinker.cli.generate import add_parser as add_generate_parser
from gthinker.cli.generate import main as run_generate
from gthinker.graphs.generate import gnp, powerlaw_cluster, rmat
from gthinker.graphs.graph import Graph

GENERATORS = [
    (rmat, (10,), {"edge_factor": 8}),
    (gnp, (500, 0.02), {}),
    (gnp, (60, 0.8), {}),  # dense branch (samples non-edges)
    (powerlaw_cluster, (500, 3, 0.4), {}),
]


@pytest.mark.parametrize(("fn", "args", "kw"), GENERATORS)
def test_reproducible_and_seed_dependent(fn, args, kw):
    g1 = fn(*args, seed=7, **kw)
    g2 = fn(*args, seed=7, **kw)
    g3 = fn(*args, seed=8, **kw)
    g1.check()
    assert g1 == g2
    assert g1 != g3
    assert np.array_equal(g1.ids, np.arange(g1.num_vertices))


def test_rmat_shape_and_report():
    g = rmat(12, edge_factor=4, seed=1)
    assert g.num_vertices == 4096  # isolated vertices kept
    r = g.report
    assert r.edges_read == 4 * 4096
    assert r.edges_read == g.num_edges + r.self_loops + r.duplicates
    assert "rmat" in r.source


def test_rmat_skew_grows_with_a():
    maxdeg = []
    for a in (0.25, 0.4, 0.57):  # (much larger a saturates: hub rows fill up)
        rest = (1 - a) / 3
        maxdeg.append(rmat(13, 8, a=a, b=rest, c=rest, seed=3).max_degree)
    assert maxdeg == sorted(maxdeg), maxdeg
    assert maxdeg[-1] > 10 * maxdeg[0]


@pytest.mark.parametrize(
    ("kw", "needle"),
    [
        ({"scale": 0}, "scale"),
        ({"scale": 31}, "scale"),
        ({"scale": 2.5}, "scale"),
        ({"scale": 5, "edge_factor": -1}, "edge_factor"),
        ({"scale": 5, "a": -0.1}, "a must be >= 0"),
        ({"scale": 5, "a": 0.6, "b": 0.3, "c": 0.3}, "<= 1"),
        ({"scale": 5, "c": float("nan")}, "c must be a number"),
        ({"scale": 5, "seed": -1}, "seed"),
    ],
)
def test_rmat_validation(kw, needle):
    with pytest.raises(ValueError, match=needle):
        rmat(**kw)


def test_gnp_and_powerlaw_validation():
    with pytest.raises(ValueError, match="p must be"):
        gnp(10, 1.5)
    with pytest.raises(ValueError, match="n must be"):
        gnp(-1, 0.5)
    with pytest.raises(ValueError, match="m must be"):
        powerlaw_cluster(10, 0, 0.5)
    with pytest.raises(ValueError, match="m must be"):
        powerlaw_cluster(10, 11, 0.5)
    with pytest.raises(ValueError, match="p must be"):
        powerlaw_cluster(10, 2, -0.5)


@pytest.mark.parametrize(("n", "p"), [(2000, 0.01), (300, 0.5), (100, 0.95)])
def test_gnp_edge_count_near_expectation(n, p):
    g = gnp(n, p, seed=5)
    g.check()
    pairs = n * (n - 1) / 2
    mean, sd = pairs * p, math.sqrt(pairs * p * (1 - p))
    assert abs(g.num_edges - mean) < 5 * sd
    assert g.report.duplicates == 0 and g.report.self_loops == 0


def test_gnp_extremes():
    assert gnp(50, 0.0).num_edges == 0
    assert gnp(50, 1.0).num_edges == 50 * 49 // 2
    assert gnp(0, 0.5).num_vertices == 0
    assert gnp(1, 0.5).num_edges == 0


def test_powerlaw_cluster_statistics():
    n, m = 2000, 4
    lo = powerlaw_cluster(n, m, 0.0, seed=2)
    hi = powerlaw_cluster(n, m, 0.9, seed=2)
    for g in (lo, hi):
        g.check()
        assert m * (n - m) * 0.95 <= g.num_edges <= m * (n - m)
        assert g.degrees().min() >= 1
        assert g.max_degree > 10 * m  # heavy tail
    assert nx.average_clustering(hi.to_networkx()) > 2 * nx.average_clustering(lo.to_networkx())


def test_powerlaw_cluster_large_is_fast():
    g = powerlaw_cluster(100_000, 3, 0.3, seed=0)
    assert g.num_vertices == 100_000
    assert g.num_edges > 290_000


# --------------------------------------------------------------------------- CLI


def parse(argv):
    parser = argparse.ArgumentParser(prog="gthinker")
    sub = parser.add_subparsers(dest="command")
    add_generate_parser(sub)
    return parser.parse_args(argv)


@pytest.mark.parametrize(
    ("argv", "fn", "kw"),
    [
        (["rmat", "--scale", "8", "--edge-factor", "4", "--seed", "3"], rmat,
         {"scale": 8, "edge_factor": 4, "seed": 3}),
        (["gnp", "--n", "300", "--p", "0.05"], gnp, {"n": 300, "p": 0.05}),
        (["powerlaw", "--n", "300", "--m", "2", "--p", "0.5", "--seed", "1"], powerlaw_cluster,
         {"n": 300, "m": 2, "p": 0.5, "seed": 1}),
    ],
)
@pytest.mark.parametrize("name", ["out.txt", "out.txt.gz", "out.graph", "out.graph.gz"])
def test_cli_writes_readable_file(tmp_path, capsys, argv, fn, kw, name):
    out = tmp_path / name
    args = parse(["generate", *argv, "-o", str(out)])
    assert args.func is run_generate
    assert run_generate(args) == 0
    # One report line after the progress lines ("[   0.1s] ..."); a fresh compile cache
    # adds its one-time "compiling" notice before it.
    lines = [x for x in capsys.readouterr().err.strip().splitlines()
             if not x.startswith(("gthinker: compiling", "["))]
    assert len(lines) == 1 and str(out) in lines[0] and "vertices" in lines[0]
    back = Graph.read(out)
    expected = fn(**kw)
    if name.startswith("out.graph"):
        assert back.labels.tolist() == [0] * expected.num_vertices
        assert back.num_vertices == expected.num_vertices
        assert np.array_equal(back.indptr, expected.indptr)
        assert np.array_equal(back.indices, expected.indices)
    else:
        # the edge list keeps isolated vertices in comment lines: the same graph
        assert np.array_equal(back.ids, expected.ids)
        assert np.array_equal(back.indptr, expected.indptr)
        assert np.array_equal(back.indices, expected.indices)


@pytest.mark.parametrize("prepare", [None, "none", "degeneracy"])
def test_cli_binary_output_keeps_the_prepared_forms(tmp_path, capsys, prepare):
    """A .csr from generate is the graph, with convert's default prepared forms (or the
    --prepare ones), equal to what a run would compute on the text file."""
    out = tmp_path / "g.csr"
    argv = ["generate", "rmat", "--scale", "9", "--seed", "5", "-o", str(out)]
    assert run_generate(parse(argv + ([] if prepare is None else ["--prepare", prepare]))) == 0
    back = Graph.load(out)
    fresh = rmat(9, seed=5)
    assert back == fresh
    kept = back.prepared()
    want = {None: {"degeneracy", "oriented"}, "none": set(), "degeneracy": {"degeneracy"}}
    assert set(kept) - {"max_degree"} == want[prepare]  # the summary line's max degree
    if "oriented" in kept:
        assert np.array_equal(kept["oriented"].indices, fresh.oriented().indices)
    if "degeneracy" in kept:
        assert np.array_equal(kept["degeneracy"][1], fresh.degeneracy_order()[1])


def test_cli_format_flag(tmp_path, capsys):
    out = tmp_path / "g.dat"
    args = parse(["generate", "gnp", "--n", "40", "--p", "0.2", "-o", str(out),
                  "--format", "graph"])
    assert run_generate(args) == 0
    assert out.read_text().startswith("t 40 ")
    back = Graph.read(out, format="graph")
    assert np.array_equal(back.indices, gnp(40, 0.2).indices)


@pytest.mark.parametrize(
    "argv",
    [
        ["rmat", "--scale", "40"],
        ["rmat", "--scale", "5", "--a", "0.9", "--b", "0.9"],
        ["gnp", "--n", "10", "--p", "2"],
        ["powerlaw", "--n", "10", "--m", "20", "--p", "0.1"],
    ],
)
def test_cli_bad_parameters(tmp_path, capsys, argv):
    out = tmp_path / "x.txt"
    assert run_generate(parse(["generate", *argv, "-o", str(out)])) == 2
    err = capsys.readouterr().err
    assert "error" in err and "Traceback" not in err
    assert not out.exists()


def test_cli_unwritable_output(tmp_path, capsys):
    out = tmp_path / "missing-dir" / "x.txt"
    assert run_generate(parse(["generate", "gnp", "--n", "5", "--p", "0.5", "-o", str(out)])) == 2
    assert "cannot write" in capsys.readouterr().err


def test_cli_help_mentions_options(capsys):
    with pytest.raises(SystemExit) as info:
        parse(["generate", "rmat", "--help"])
    assert info.value.code == 0
    text = capsys.readouterr().out
    for opt in ("--scale", "--edge-factor", "--a", "--b", "--c", "--seed", "-o", "--format"):
        assert opt in text
