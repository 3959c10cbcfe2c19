"""apps/wedges, an app in one module outside gthinker: it gets a command through
$GTHINKER_APPS, reaches the cluster and `gthinker warmup` once registered, and runs on
a Ray cluster through its request, without a line of the engine naming it. Counts are
checked against networkx's degrees."""

import json

import networkx as nx
import pytest
from conftest import import_user_app, run_cli, user_apps_env

import gthinker
from gthinker import registry

wedges = import_user_app("wedges", "gthinker_wedges")


def _cli(*args):
    return run_cli(*args, env=user_apps_env("wedges"))


def _wedges(g):
    return sum(d * (d - 1) // 2 for _, d in g.degree())


def test_count_wedges():
    g = nx.gnm_random_graph(50, 160, seed=3)
    assert wedges.count_wedges(g, threads=2).counters["wedges"] == _wedges(g)
    assert wedges.count_wedges(nx.empty_graph(0), threads=1).counters["wedges"] == 0


def test_an_app_outside_gthinker_gets_a_command(tmp_path):
    g = nx.gnm_random_graph(60, 200, seed=4)
    path = tmp_path / "g.txt"
    gthinker.Graph.from_networkx(g).write(path)
    r = _cli("--help")
    assert r.returncode == 0 and "wedges" in r.stdout and "count wedges" in r.stdout
    r = _cli("wedges", "--help")
    assert r.returncode == 0 and "--threads" in r.stdout and "--ray" in r.stdout
    r = _cli("wedges", path, "--json", "--threads", "2", "-q")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["counters"]["wedges"] == _wedges(g) and out["threads"] == 2
    assert out["graph"]["edges"] == 200
    r = _cli("wedges", path, "--threads", "1", "-q")
    assert r.returncode == 0 and f"wedges: {_wedges(g):,}" in r.stdout
    r = _cli("wedges", path, "--mode", "gpu")  # not one of its modes
    assert r.returncode == 2 and "invalid choice" in r.stderr


def test_an_app_registered_at_run_time_reaches_the_cluster_and_warmup():
    from gthinker import cluster
    from gthinker.cli import warmup

    registry.register(wedges.APP, replace=True)
    assert callable(cluster.wedges)  # gthinker.cluster.<app>(graph, cluster=...)
    assert "wedges (cpu)" in [name for name, _ in warmup.steps(gpu=False)]
    with pytest.raises(AttributeError, match="no app named"):
        cluster.Cluster.__getattr__(object.__new__(cluster.Cluster), "no_such_app")
    with pytest.raises(ValueError, match="registered already"):
        registry.register(registry.App(**{**wedges.APP.__dict__, "summary": "other"}))
    g = nx.gnm_random_graph(30, 80, seed=2)
    req = wedges.APP.request(time_budget=0.5)
    assert req.run(gthinker.as_graph(g), threads=2).counters["wedges"] == _wedges(g)


def test_an_app_runs_on_a_ray_cluster_through_its_request(tmp_path):
    """Its request is pickled to the workers (the module is on their PYTHONPATH), their
    parts merged: the count of one process."""
    pytest.importorskip("ray")
    g = nx.gnm_random_graph(200, 900, seed=5)
    path = tmp_path / "g.txt"
    gthinker.Graph.from_networkx(g).write(path)
    r = _cli("wedges", path, "--ray", "local:2", "--threads", "1", "--json", "-q")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["counters"]["wedges"] == _wedges(g) and out["cluster"]["workers"] == 2
