"""Apps declare themselves once (gthinker.registry): the bundled ones through entry
points, an app outside gthinker through $GTHINKER_APPS, and each appears in the
command line, the cluster and `gthinker warmup` without a line of the engine naming it."""

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import networkx as nx
import pytest

import gthinker
from gthinker import registry

TOY = Path(__file__).parent / "toy_apps"


def _cli(*args, apps="wedges", path=()):
    env = dict(os.environ, GTHINKER_APPS=apps,
               PYTHONPATH=os.pathsep.join(filter(None, [*map(str, path), str(TOY),
                                                        os.environ.get("PYTHONPATH")])))
    return subprocess.run([sys.executable, "-m", "gthinker", *map(str, args)],
                          capture_output=True, text=True, timeout=300, env=env,
                          cwd=tempfile.gettempdir())


def _wedges(g):
    return sum(d * (d - 1) // 2 for _, d in g.degree())


def test_the_bundled_apps_are_registered_by_entry_points():
    apps = registry.apps()
    assert {"mce", "sm", "count", "gsword"} <= set(apps)
    for app in apps.values():
        assert app.request.__module__.startswith("gthinker.apps.")


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
    assert out["count"] == _wedges(g) and out["threads"] == 2
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


def test_a_plugin_declares_its_app_by_an_entry_point(tmp_path):
    """A package outside gthinker that declares ``wedges = "wedges:APP"`` in the
    ``gthinker.apps`` entry points (what pip installs as its dist-info) gets a command,
    with its options' flags."""
    info = tmp_path / "wedges_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: wedges-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[{registry.ENTRY_POINTS}]\nwedges = wedges:APP\n")
    r = _cli("wedges", "--help", apps="", path=[tmp_path])
    assert r.returncode == 0, r.stderr
    assert "--min-degree K" in r.stdout and "count the wedges at vertices" in r.stdout


def test_a_bad_gthinker_apps_entry_says_so():
    r = _cli("--help", apps="no_such_module_here")
    assert r.returncode != 0 and "no_such_module_here" in r.stderr


def test_an_app_registered_at_run_time_reaches_the_cluster_and_warmup(monkeypatch):
    monkeypatch.syspath_prepend(str(TOY))
    import wedges

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
    assert req.run(gthinker.as_graph(g), threads=2).count == _wedges(g)


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
    assert out["count"] == _wedges(g) and out["cluster"]["workers"] == 2
