"""The inputs users have: standard input, compressed files, vertex names, query folders."""

import bz2
import gzip
import json
import lzma
import subprocess
import sys
import tempfile

import networkx as nx
import numpy as np
import pytest
from conftest import child_env
from conftest import run_cli as cli

import gthinker
from gthinker.errors import GraphFormatError
from gthinker.graphs.files import natural_key

COMPRESS = {"gz": gzip.compress, "bz2": bz2.compress, "xz": lzma.compress}


def _zstd():
    zstandard = pytest.importorskip("zstandard")
    return zstandard.ZstdCompressor().compress


def _edge_text(G) -> bytes:
    return "".join(f"{u} {v}\n" for u, v in G.edges).encode()


def _cli_stdin(data: bytes, *args):
    return subprocess.run([sys.executable, "-m", "gthinker", *map(str, args)], input=data,
                          capture_output=True, timeout=300, env=child_env(),
                          cwd=tempfile.gettempdir())


@pytest.mark.parametrize("kind", ["gz", "bz2", "xz", "zst"])
def test_each_compression_reads_the_same_graph(tmp_path, kind):
    G = nx.gnm_random_graph(40, 120, seed=4)
    compress = _zstd() if kind == "zst" else COMPRESS[kind]
    path = tmp_path / f"g.txt.{kind}"
    path.write_bytes(compress(_edge_text(G)))
    g = gthinker.Graph.read(path)
    assert nx.utils.graphs_equal(g.to_networkx(), nx.Graph(G.edges))
    # and written compressed too: the round trip keeps the graph
    out = tmp_path / f"out.txt.{kind}"
    g.write(out)
    assert out.read_bytes()[:2] != b"# "  # compressed, not text
    assert gthinker.Graph.read(out) == g


def test_a_labeled_graph_through_bzip2_and_standard_input(tmp_path):
    text = b"t 3 3\nv 0 1 2\nv 1 1 2\nv 2 2 2\ne 0 1\ne 1 2\ne 0 2\n"
    path = tmp_path / "g.graph.bz2"
    path.write_bytes(bz2.compress(text))
    g = gthinker.Graph.read(path)
    assert g.labels.tolist() == [1, 1, 2] and g.num_edges == 3
    # standard input: the format is peeked at (a 't' header, through xz)
    r = _cli_stdin(lzma.compress(text), "sm", "-", path, "--json", "-q")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["count"] == 2  # the two automorphisms keeping labels


@pytest.mark.parametrize("kind", ["plain", "gz", "bz2"])
def test_standard_input_counts_as_the_file_does(tmp_path, kind):
    G = nx.gnp_random_graph(30, 0.3, seed=2)
    data = _edge_text(G)
    data = data if kind == "plain" else COMPRESS[kind](data)
    r = _cli_stdin(data, "count", "-", "triangle", "--json", "-q")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["count"] == sum(nx.triangles(G).values()) // 3


def test_a_binary_graph_on_standard_input_is_a_clear_error(tmp_path):
    g = gthinker.Graph.from_networkx(nx.path_graph(4))
    g.save(tmp_path / "g.csr")
    r = _cli_stdin((tmp_path / "g.csr").read_bytes(), "count", "-", "triangle")
    assert r.returncode == 2 and b"give its path" in r.stderr
    assert b"Traceback" not in r.stderr


def test_an_unknown_compression_is_named_not_echoed(tmp_path):
    import zlib

    path = tmp_path / "g.txt.zz"  # zlib without gzip's header: not a kind gthinker reads
    path.write_bytes(zlib.compress(_edge_text(nx.complete_graph(30)), 9))
    with pytest.raises(GraphFormatError) as err:
        gthinker.Graph.read(path)
    assert "binary data" in str(err.value) and "bzip2" in str(err.value)
    assert all(ch.isprintable() for ch in str(err.value))


def test_zstandard_without_its_package_names_the_package(tmp_path, monkeypatch):
    path = tmp_path / "g.txt.zst"
    path.write_bytes(b"\x28\xb5\x2f\xfd" + bytes(20))
    monkeypatch.setitem(sys.modules, "zstandard", None)  # import fails
    with pytest.raises(GraphFormatError, match="pip install zstandard"):
        gthinker.Graph.read(path)


def _named_graph():
    """A graph on names (e-mail addresses, words) and its networkx twin."""
    rng = np.random.default_rng(5)
    names = [f"user{i}@example.org" if i % 3 else f"w{i}" for i in range(25)]
    G = nx.Graph()
    for _ in range(90):
        u, v = rng.choice(25, 2, replace=False)
        G.add_edge(names[u], names[v])
    return G


def test_names_in_a_csv_are_mapped_and_mapped_back(tmp_path):
    G = _named_graph()
    path = tmp_path / "mail.csv"
    path.write_text("from,to,weight\n" + "".join(f"{u},{v},1.5\n" for u, v in G.edges))
    g = gthinker.Graph.read(path)
    assert nx.utils.graphs_equal(g.to_networkx(), G)
    out = tmp_path / "cliques.txt"
    r = cli("mce", path, "-o", out, "-q")
    assert r.returncode == 0, r.stderr
    got = sorted(sorted(line.split()) for line in out.read_text().splitlines())
    assert got == sorted(sorted(c) for c in nx.find_cliques(G))
    r = cli("sm", path, "triangle", "--unique", "-o", "-", "-q")
    assert r.returncode == 0, r.stderr
    found = [frozenset(line.split()) for line in r.stdout.splitlines()]
    want = {frozenset(c) for c in nx.enumerate_all_cliques(G) if len(c) == 3}
    assert len(found) == len(want) and set(found) == want


def test_a_name_after_integer_lines_reads_the_file_again(tmp_path):
    path = tmp_path / "mixed.txt"
    path.write_text("1 2\n2 3\n3 1\n3 carol\ncarol 1\n")
    g = gthinker.Graph.read(path)
    assert g.node_names == ["1", "2", "3", "carol"]
    assert sorted(map(sorted, g.to_networkx().edges)) == sorted(
        map(sorted, [("1", "2"), ("2", "3"), ("1", "3"), ("3", "carol"), ("1", "carol")]))


def test_a_query_directory_runs_in_natural_order_and_skips_other_files(tmp_path):
    data = tmp_path / "g.txt"
    data.write_bytes(_edge_text(nx.gnp_random_graph(20, 0.4, seed=1)))
    qdir = tmp_path / "queries"
    qdir.mkdir()
    names = [f"q_{k}.txt" for k in (10, 2, 1, 11)]
    for name in names:
        (qdir / name).write_text("0 1\n1 2\n")
    (qdir / "README").write_text("queries of the paper\n")
    (qdir / ".hidden.txt").write_text("not a query\n")
    r = cli("sm", data, qdir, "--json", "-q")
    assert r.returncode == 0, r.stderr
    order = [json.loads(line)["query"] for line in r.stdout.splitlines()]
    assert order == sorted(names, key=lambda n: int(n[2:-4]))
    r = cli("sm", data, qdir, "--json")
    assert r.stderr.count("skipped 2 file") == 1 and "README" in r.stderr


def test_natural_key_orders_numbers_by_value():
    names = ["16_10", "16_2", "16_1", "8_3", "a", "16_1b"]
    assert sorted(names, key=natural_key) == ["8_3", "16_1", "16_1b", "16_2", "16_10", "a"]


def test_names_with_comments_quotes_and_a_header(tmp_path):
    path = tmp_path / "people.csv"
    path.write_text('src,dst\n# a comment\n"smith, ann",bob\n\nbob,"carl"\n% another\n'
                    'carl,"smith, ann",3\n')
    g = gthinker.Graph.read(path)
    assert g.node_names == ["bob", "carl", "smith, ann"] and g.num_edges == 3
    path.write_text("src,dst\nann\n")
    with pytest.raises(GraphFormatError, match="people.csv:2: expected two vertex ids"):
        gthinker.Graph.read(path)
    ints = tmp_path / "ints.csv"
    ints.write_text("source,target\n5,6\n6,7\n")  # a header, then integer ids
    g = gthinker.Graph.read(ints)
    assert g.node_names is None and g.ids.tolist() == [5, 6, 7] and g.num_edges == 2
    r = _cli_stdin(b"x y\ny z\nz x\n", "mce", "-", "-o", "-", "-q")
    assert r.returncode == 0 and sorted(r.stdout.split()) == [b"x", b"y", b"z"], r.stderr
