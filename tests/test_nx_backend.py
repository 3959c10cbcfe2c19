"""The NetworkX backend (gthinker.apps.networkx): every implemented function against
plain NetworkX on random graphs with odd node names, ``nodes=`` arguments, empty
graphs, isolated vertices and self loops; streaming; what falls back; and, in
fresh processes, NetworkX's dispatch through the entry points and NetworkX's own
tests of these functions run with the backend."""

import inspect
import os
import re
import subprocess
import sys
import threading
from collections import Counter
from importlib.metadata import entry_points
from pathlib import Path

import networkx as nx
import pytest

from gthinker.apps.networkx import info
from gthinker.apps.networkx.decorators import ALGORITHMS
from gthinker.apps.networkx.interface import backend_interface as backend

NAMES = {
    "ints": lambda v: v,
    "strings": lambda v: f"node {v}",
    "tuples": lambda v: (v % 4, f"{v}"),
    "mixed": lambda v: (v, "t") if v % 3 == 0 else (str(v) if v % 3 == 1 else v),
}


def graph(names, seed, n=70, p=0.15):
    """A random graph with a planted clique, isolated vertices and self loops."""
    G = nx.gnp_random_graph(n, p, seed=seed)
    G.add_edges_from((a, b) for a in range(6) for b in range(a + 1, 6))
    G.add_edges_from([(3, 3), (10, 10)])
    G.add_nodes_from([n, n + 1])
    return nx.relabel_nodes(G, NAMES[names])


def on_backend(name, G, *args, **kwargs):
    """``name`` run by the backend as NetworkX would run it: can_run asked first,
    then the function on the converted graph."""
    assert backend.can_run(name, (G, *args), kwargs) is True
    return getattr(backend, name)(backend.convert_from_nx(G), *args, **kwargs)


def as_sets(cliques):
    cliques = list(cliques)
    assert all(len(set(c)) == len(c) for c in cliques)
    return Counter(map(frozenset, cliques))


def same(a, b, ordered=True):
    """Equal values of equal types (the int 0 is not 0.0), dicts in the same order
    (unless NetworkX's order is arbitrary: ``ordered=False``)."""
    assert a == b and type(a) is type(b)
    if isinstance(a, dict):
        assert not ordered or list(a) == list(b)
        assert all(type(a[k]) is type(b[k]) for k in a)


def test_the_registered_functions_are_the_documented_ones():
    assert set(ALGORITHMS) == set(info.FUNCTIONS)
    meta = info.get_info()
    assert meta["backend_name"] == "gthinker" and set(meta["functions"]) == set(ALGORITHMS)
    for name in ALGORITHMS:  # each exists in NetworkX, with the same parameters
        theirs = inspect.signature(getattr(nx, name)).parameters
        assert list(ALGORITHMS[name].signature.parameters) == [
            p for p in theirs if p not in ("backend", "backend_kwargs")]


@pytest.mark.parametrize("names", sorted(NAMES))
def test_maximal_cliques_match_networkx(names):
    G = graph(names, seed=len(names))
    want = as_sets(nx.find_cliques(G))
    assert as_sets(on_backend("find_cliques", G)) == want
    assert as_sets(on_backend("find_cliques_recursive", G)) == want
    # All nodes: NetworkX's dict follows the order of its cliques, which is arbitrary.
    same(on_backend("node_clique_number", G), nx.node_clique_number(G), ordered=False)
    some = list(G)[::7]
    same(on_backend("node_clique_number", G, some), nx.node_clique_number(G, some))
    same(on_backend("node_clique_number", G, tuple(some)), nx.node_clique_number(G, tuple(some)))
    same(on_backend("node_clique_number", G, some[1]), nx.node_clique_number(G, some[1]))


def test_small_graph_cliques_come_in_the_same_order_every_call():
    # Below min_edges one worker searches, so repeated calls agree, as NetworkX's do
    # (its test_make_max_clique_graph compares two calls); several workers' order varies.
    G = nx.gnp_random_graph(120, 0.2, seed=9)
    assert G.number_of_edges() < info.DEFAULT_CONFIG["min_edges"]
    first = list(on_backend("find_cliques", G))
    assert as_sets(first) == as_sets(nx.find_cliques(G))
    assert all(list(on_backend("find_cliques", G)) == first for _ in range(5))


@pytest.mark.parametrize("names", ["ints", "mixed"])
def test_all_cliques_come_in_networkx_order(names):
    G = graph(names, seed=3, n=40, p=0.25)
    assert list(on_backend("enumerate_all_cliques", G)) == list(nx.enumerate_all_cliques(G))


@pytest.mark.parametrize("names", ["strings", "tuples"])
def test_nodes_argument_of_find_cliques(names):
    G = graph(names, seed=5)
    a, b, c = (NAMES[names](v) for v in (0, 1, 2))  # in the planted clique
    for nodes in ([a], [b, a], [a, b, c], [], [NAMES[names](70)]):  # 70: isolated
        for name in ("find_cliques", "find_cliques_recursive"):
            got = list(on_backend(name, G, list(nodes)))
            want = list(getattr(nx, name)(G, list(nodes)))
            assert as_sets(got) == as_sets(want)
            assert all(clique[: len(nodes)] == nodes for clique in got)  # given nodes first
    for bad in ([a, a], [a, NAMES[names](70)], ["not a node"]):
        lazy = on_backend("find_cliques", G, bad)  # a generator: checks on first next()
        with pytest.raises(ValueError, match="do not form a clique"):
            next(lazy)
        with pytest.raises(ValueError, match="do not form a clique"):
            on_backend("find_cliques_recursive", G, bad)  # checks at the call
    assert "not a list" in backend.can_run("find_cliques", (G, (a,)), {})


@pytest.mark.parametrize("names", sorted(NAMES))
def test_triangles_and_clustering_match_networkx(names):
    G = graph(names, seed=7)
    nodes = list(G)
    picks = [nodes[0], nodes[5], "absent", nodes[-1], nodes[5]]
    for make in (lambda: (), lambda: (nodes[4],), lambda: (picks,), lambda: (iter(picks),),
                 lambda: (set(nodes[::3]),)):  # fresh arguments per call (an iterator is used up)
        same(on_backend("triangles", G, *make()), nx.triangles(G, *make()))
        same(on_backend("clustering", G, *make()), nx.clustering(G, *make()))
    same(on_backend("transitivity", G), nx.transitivity(G))
    for args in ((), (nodes[::2],)):
        for zeros in (True, False):
            same(on_backend("average_clustering", G, *args, count_zeros=zeros),
                 nx.average_clustering(G, *args, count_zeros=zeros))


def test_bad_nbunch_raises_as_networkx_does():
    G = graph("strings", seed=1)
    for bad in (5, [["unhashable"]]):
        with pytest.raises(nx.NetworkXError) as theirs:
            nx.triangles(G, bad)
        with pytest.raises(nx.NetworkXError) as ours:
            on_backend("triangles", G, bad)
        assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("G", [nx.Graph(), nx.empty_graph(3), nx.Graph([("a", "a")])],
                         ids=["null", "isolated", "self-loop"])
def test_empty_graphs(G):
    assert as_sets(on_backend("find_cliques", G)) == as_sets(nx.find_cliques(G))
    assert list(on_backend("enumerate_all_cliques", G)) == list(nx.enumerate_all_cliques(G))
    same(on_backend("node_clique_number", G), nx.node_clique_number(G), ordered=False)
    for name in ("triangles", "clustering", "transitivity"):
        same(on_backend(name, G), getattr(nx, name)(G))
    if len(G) == 0:
        for func in (nx.average_clustering, lambda G: on_backend("average_clustering", G)):
            with pytest.raises(ZeroDivisionError):
                func(G)
    else:
        same(on_backend("average_clustering", G), nx.average_clustering(G))


def test_multigraph_cliques_match_and_clustering_falls_back():
    G = nx.MultiGraph(graph("ints", seed=2))
    G.add_edges_from(list(G.edges())[:20])  # parallel edges
    assert as_sets(on_backend("find_cliques", G)) == as_sets(nx.find_cliques(G))
    for name in ("triangles", "clustering", "transitivity", "average_clustering"):
        assert "multigraph" in backend.can_run(name, (G,), {})


def test_what_falls_back_says_why():
    G = graph("ints", seed=4)
    D = nx.DiGraph(G)
    assert "directed" in backend.can_run("clustering", (D,), {})
    assert "weight" in backend.can_run("clustering", (G,), {"weight": "weight"})
    assert "weight" in backend.can_run("average_clustering", (G, None, "w"), {})
    assert "single node" in backend.can_run("average_clustering", (G, 0), {})
    assert "cliques given" in backend.can_run("node_clique_number", (G,), {"cliques": []})
    assert "not in the graph" in backend.can_run("node_clique_number", (G, [0, "x"]), {})
    assert "does not take" in backend.can_run("triangles", (G,), {"weight": None})
    assert "does not implement" in backend.can_run("pagerank", (G,), {})


def test_small_graphs_and_single_nodes_stay_with_networkx_under_automatic_dispatch():
    small = nx.karate_club_graph()
    assert "small graph" in backend.should_run("find_cliques", (small,), {})
    big = nx.gnm_random_graph(2000, info.DEFAULT_CONFIG["min_edges"], seed=1)
    assert backend.should_run("find_cliques", (big,), {}) is True
    assert "one node" in backend.should_run("triangles", (big, 0), {})


def test_find_cliques_streams_and_stops_when_closed(tmp_path, monkeypatch):
    # K(3,...,3) with 11 parts: 3**11 maximal cliques, megabytes of output.
    G = nx.relabel_nodes(nx.complete_multipartite_graph(*[3] * 11), str)
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    cliques = on_backend("find_cliques", G)
    assert len(next(cliques)) == 11
    assert any(t.name == "gthinker-stream" for t in threading.enumerate())
    cliques.close()
    assert not any(t.name == "gthinker-stream" for t in threading.enumerate())
    assert not list(tmp_path.iterdir())


def test_converted_graph_round_trips():
    G = graph("mixed", seed=9)
    H = backend.convert_to_nx(backend.convert_from_nx(G))
    assert list(H) == list(G)
    assert set(map(frozenset, H.edges)) == {frozenset(e) for e in G.edges if e[0] != e[1]}
    assert backend.convert_to_nx([1, 2]) == [1, 2]  # results other than graphs pass through


# ---- NetworkX's own machinery, in fresh processes ---------------------------------------

ENTRY_POINTS = """[networkx.backends]
gthinker = gthinker.apps.networkx.interface:backend_interface

[networkx.backend_info]
gthinker = gthinker.apps.networkx.info:get_info
"""


def networkx_env(tmp_path, **settings):
    """The environment of a fresh process in which NetworkX finds the backend through
    its entry points: those of the installed package, or, in a source checkout
    whose package metadata predates them, the same entry points in a dist-info
    folder on the path (how an installed package declares them)."""
    env = dict(os.environ, **settings)
    if not entry_points(group="networkx.backends", name="gthinker"):
        meta = tmp_path / "gthinker_nx_entry_points-0.dist-info"
        meta.mkdir()
        (meta / "METADATA").write_text("Metadata-Version: 2.1\nName: gthinker-nx\nVersion: 0\n")
        (meta / "entry_points.txt").write_text(ENTRY_POINTS)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(tmp_path),
                                                          env.get("PYTHONPATH")]))
    return env


def test_entry_points_in_pyproject_are_the_ones_tests_use():
    tomllib = pytest.importorskip("tomllib", reason="tomllib is Python 3.11+")
    pyproject = Path(__file__).resolve().parents[1] / "pyproject.toml"
    if not pyproject.exists():
        pytest.skip("no pyproject.toml beside the tests (tests run outside the checkout)")
    tables = tomllib.loads(pyproject.read_text())["project"]["entry-points"]
    text = "\n".join(f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in tables[group].items())
                       for group in ("networkx.backends", "networkx.backend_info"))
    assert text == ENTRY_POINTS


def test_networkx_dispatches_to_the_backend(tmp_path):
    script = Path(__file__).with_name("nx_backend_dispatch.py")
    env = networkx_env(tmp_path, NETWORKX_BACKEND_PRIORITY="gthinker")
    out = subprocess.run([sys.executable, str(script)], env=env, cwd=tmp_path,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "dispatch checks passed" in out.stdout


def test_networkx_own_clique_and_cluster_tests_pass_with_the_backend(tmp_path):
    env = networkx_env(tmp_path, NETWORKX_TEST_BACKEND="gthinker", NETWORKX_FALLBACK_TO_NX="True")
    # Run from an empty folder, so that this project's pytest settings do not apply;
    # NetworkX's dispatch log says which calls the backend served.
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
         "-o", "log_cli=true", "--log-cli-level=DEBUG",
         "--pyargs", "networkx.algorithms.tests.test_clique",
         "networkx.algorithms.tests.test_cluster"],
        env=env, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout[-5000:] + out.stderr[-5000:]
    assert re.search(r"\b\d+ passed", out.stdout) and not re.search(r"\b\d+ failed", out.stdout)
    served = set(re.findall(r"Using backend 'gthinker' for call to '(\w+)'", out.stdout))
    assert served == set(ALGORITHMS)
