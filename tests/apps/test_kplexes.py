"""apps/kplexes, maximal k-plexes (G-thinker's classic app, none of the bundled ones):
every maximal k-plex of at least q vertices of small random graphs, against brute force
over all vertex sets; the 1-plexes against networkx's maximal cliques; tasks decomposed;
listed through --output and iter_kplexes."""

import itertools
import json

import networkx as nx
import pytest
from conftest import import_user_app, run_cli, user_apps_env

import gthinker

app = import_user_app("kplexes", "gthinker_kplexes.app")


def _is_plex(G, S, k):
    return all(len(S) - sum(1 for u in S if G.has_edge(v, u)) <= k for v in S)


def _brute_force(G, k, q):
    """Every maximal k-plex of at least q vertices: every vertex set checked (the
    property is hereditary, so a k-plex is maximal when no one vertex can join it)."""
    nodes = list(G)
    found = set()
    for r in range(q, len(nodes) + 1):
        for S in map(frozenset, itertools.combinations(nodes, r)):
            if _is_plex(G, S, k) and not any(_is_plex(G, S | {w}, k) for w in nodes
                                             if w not in S):
                found.add(S)
    return found


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("k, q", [(1, 1), (2, 3), (2, 4), (3, 5)])
def test_as_brute_force(seed, k, q):
    G = nx.gnp_random_graph(11, 0.5, seed=seed)
    want = _brute_force(G, k, q)
    listed = [frozenset(c.tolist()) for c in app.iter_kplexes(G, k, q, threads=2)]
    assert len(listed) == len(set(listed)) and set(listed) == want
    res = app.find_kplexes(G, k, q, threads=2)
    assert res.counters["kplexes"] == len(want)
    assert res.maxima["largest"] == max(map(len, want), default=None)
    assert sum(res.histograms["size"]) == len(want)


def test_decomposed_tasks_find_the_same():
    G = nx.gnp_random_graph(14, 0.55, seed=7)
    want = _brute_force(G, 3, 5)
    res = app.find_kplexes(G, 3, 5, threads=2, time_budget=1e-6, timeout_check_interval=1)
    assert res.stats["tasks_decomposed"] > 0 and res.counters["kplexes"] == len(want) > 0


def test_one_plexes_are_maximal_cliques():
    G = nx.gnp_random_graph(40, 0.3, seed=5)
    want = {frozenset(c) for c in nx.find_cliques(G) if len(c) >= 3}
    assert {frozenset(c.tolist()) for c in app.iter_kplexes(G, 1, 3, threads=2)} == want


def test_bad_arguments():
    with pytest.raises(ValueError, match="at least 2k - 1 = 3"):
        app.find_kplexes(nx.path_graph(3), 2, 2)
    with pytest.raises(ValueError, match="k must be"):
        app.find_kplexes(nx.path_graph(3), 0)


def test_the_command_lists_them(tmp_path):
    G = nx.gnp_random_graph(11, 0.5, seed=3)
    path, out = tmp_path / "g.txt", tmp_path / "plexes.txt"
    gthinker.Graph.from_networkx(G).write(path)
    env = user_apps_env("kplexes")
    r = run_cli("kplexes", path, "-k", "2", "--min-size", "4", "--output", out, "--json",
                "-q", env=env)
    assert r.returncode == 0, r.stderr
    want = _brute_force(G, 2, 4)
    assert json.loads(r.stdout)["counters"]["kplexes"] == len(want)
    lines = out.read_text().splitlines()
    assert len(lines) == len(want) and {frozenset(map(int, x.split())) for x in lines} == want
    r = run_cli("kplexes", path, "-k", "2", "--min-size", "2", env=env)
    assert r.returncode == 2 and "at least 2k - 1" in r.stderr
