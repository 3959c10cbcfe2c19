"""apps/wedges, an app in one module outside gthinker: it gets a command, with a flag for
its own option (--min-degree), through $GTHINKER_APPS or an entry point, reaches the
cluster and `gthinker warmup` once registered, and runs on a Ray cluster through its
request, without a line of the engine naming it. Counts are checked against networkx's
degrees."""

import json
import os

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
    # its own option: a flag with its help and default, checked by its rule
    r = _cli("wedges", "--help")
    assert "--min-degree K" in r.stdout and "(default: 2)" in r.stdout
    r = _cli("wedges", path, "--min-degree", "6", "--threads", "1", "-q")
    big = sum(d * (d - 1) // 2 for _, d in g.degree() if d >= 6)
    assert r.returncode == 0 and f"wedges: {big:,}" in r.stdout and big < _wedges(g)
    r = _cli("wedges", path, "--min-degree", "0")
    assert r.returncode == 2 and "min_degree must be an integer from 1" in r.stderr
    r = _cli("wedges", path, "--mode", "gpu")  # not one of its modes
    assert r.returncode == 2 and "mode must be one of cpu" in r.stderr


def test_its_option_from_python():
    g = nx.gnm_random_graph(50, 160, seed=6)
    big = sum(d * (d - 1) // 2 for _, d in g.degree() if d >= 7)
    assert wedges.count_wedges(g, min_degree=7, threads=1).counters["wedges"] == big
    with pytest.raises(ValueError, match="min_degree must be an integer from 1"):
        wedges.count_wedges(g, min_degree=0)
    with pytest.raises(TypeError, match="unknown option 'min_degre'"):
        wedges.count_wedges(g, min_degre=3)


def test_a_plugin_declares_its_app_by_an_entry_point(tmp_path):
    """A package outside gthinker that declares ``wedges = "gthinker_wedges:APP"`` in the
    ``gthinker.apps`` entry points (what pip installs as its dist-info) gets a command,
    with its options' flags."""
    info = tmp_path / "wedges_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: wedges-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[{registry.ENTRY_POINTS}]\n"
                                           "wedges = gthinker_wedges:APP\n")
    env = user_apps_env("wedges")  # its folder on the path, but not in $GTHINKER_APPS:
    env["GTHINKER_APPS"] = ""      # found through the entry point only
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), env["PYTHONPATH"]])
    r = run_cli("wedges", "--help", env=env)
    assert r.returncode == 0, r.stderr
    assert "--min-degree K" in r.stdout and "count the wedges at vertices" in r.stdout


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
    req = wedges.APP.make_request(time_budget=0.5)
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
