"""apps/kcliques, the tutorial app of docs/writing-apps.md: k-cliques and the cliques of
1..k vertices by size, against networkx, with tasks decomposed or not, from Python and
from its command (found through $GTHINKER_APPS)."""

import json

import networkx as nx
import numpy as np
import pytest
from conftest import import_user_app, run_cli, user_apps_env

import gthinker

app = import_user_app("kcliques", "gthinker_kcliques.app")


def _by_size(G, k):
    return np.bincount([len(c) for c in nx.enumerate_all_cliques(G) if len(c) <= k],
                       minlength=k + 1).tolist()


@pytest.mark.parametrize("k", [3, 5])
def test_cliques_by_size_as_networkx_with_and_without_decomposition(k):
    G = nx.gnp_random_graph(60, 0.3, seed=k)
    want = _by_size(G, k)
    whole = app.count_kcliques(G, k, threads=2)
    # a clock read at every timed_out() and a tiny budget: branches go to other workers
    split = app.count_kcliques(G, k, threads=2, time_budget=1e-6, timeout_check_interval=1)
    assert split.stats["tasks_decomposed"] > 0
    for res in (whole, split):
        assert res.counters["cliques"] == want[k]
        assert res.histograms["size"].tolist() == want


def test_empty_and_edgeless_graphs():
    assert app.count_kcliques(nx.empty_graph(0), 3, threads=1).counters["cliques"] == 0
    res = app.count_kcliques(nx.empty_graph(4), 3, threads=1)
    assert res.counters["cliques"] == 0 and res.histograms["size"].tolist() == [0, 4, 0, 0]


def test_the_command(tmp_path):
    G = nx.gnp_random_graph(40, 0.3, seed=1)
    path = tmp_path / "g.txt"
    gthinker.Graph.from_networkx(G).write(path)
    env = user_apps_env("kcliques")
    r = run_cli("kcliques", path, "-k", "4", "--json", "-q", "--threads", "2", env=env)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["counters"]["cliques"] == _by_size(G, 4)[4]
    assert out["histograms"]["size"] == _by_size(G, 4)
    r = run_cli("kcliques", path, "-k", "0", env=env)
    assert r.returncode == 2 and "k must be an integer from 1" in r.stderr
