"""The top-level apps/ folder: apps written as a user would, on gthinker's public
surface (gthinker.extending) only (tests/test_imports.py checks their imports). Each is
a folder with a README and a pyproject that declares it through the ``gthinker.apps``
entry point; together they load through $GTHINKER_APPS (a new folder needs no change in
gthinker/, nor here), and one installs as a real plugin that the registry finds through
its entry point."""

import json
import shutil
import subprocess
import sys

import networkx as nx
import pytest
from conftest import (
    USER_APPS,
    child_env,
    import_user_app,
    in_ranges,
    run_cli,
    user_app,
    user_apps_env,
)

import gthinker
from gthinker import extending

NAMES = sorted(p.name for p in USER_APPS.iterdir() if (p / "pyproject.toml").exists())


def test_there_are_apps_and_each_has_a_readme():
    assert {"kcliques", "wedges", "cycles", "kplexes"} <= set(NAMES)
    for name in NAMES:
        assert (USER_APPS / name / "README.md").read_text().startswith(f"# {name}")
        user_app(name)  # declares an entry point


def test_all_load_together_through_gthinker_apps():
    r = run_cli("--help", env=user_apps_env(*NAMES))
    assert r.returncode == 0, r.stderr
    for name in NAMES:
        assert f"    {name}" in r.stdout


def _count_cycles(g, k):
    return sum(1 for c in nx.simple_cycles(g, length_bound=k) if len(c) == k)


@pytest.mark.parametrize("name, keywords, counter, want", [
    ("wedges", {"min_degree": 3}, "wedges",
     lambda g: sum(d * (d - 1) // 2 for _, d in g.degree() if d >= 3)),
    ("kcliques", {"k": 4}, "cliques",
     lambda g: sum(1 for c in nx.enumerate_all_cliques(g) if len(c) == 4)),
    ("cycles", {"k": 4, "mode": "cpu"}, "cycles", lambda g: _count_cycles(g, 4)),
    ("kplexes", {"k": 1}, "kplexes", lambda g: sum(1 for _ in nx.find_cliques(g))),
])
def test_each_apps_request_runs_in_ranges_as_on_a_cluster(name, keywords, counter, want):
    """Its request, made from its options as the command line and gthinker.cluster make
    it, run range by range as a cluster's nodes run it (without Ray) and merged: the
    count networkx gives."""
    g = nx.powerlaw_cluster_graph(60, 3, 0.4, seed=2)
    declared = import_user_app(name, user_app(name)[1]).APP
    req = declared.make_request(time_budget=1e-3, **keywords)
    assert req.options.keywords().items() >= keywords.items()
    assert in_ranges(req, gthinker.as_graph(g)).counters[counter] == want(g) > 0


def test_every_name_of_the_surface_resolves_and_importing_it_loads_no_numba(tmp_path):
    for name in extending.__all__:
        assert getattr(extending, name) is not None, name
        assert not name.startswith("_")
    with pytest.raises(AttributeError, match="has no 'Nope'"):
        extending.Nope  # noqa: B018
    code = ("import sys; from gthinker.extending import App, AppOptions, JobRequest, "
            "option_field, positive_int; print('numba' in sys.modules)")
    # (in a folder of its own: ``python -c`` puts its current folder first on sys.path, and
    # the checkout's source folder has no built core when gthinker was installed without -e)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env=child_env(), timeout=120, cwd=tmp_path)
    assert r.returncode == 0 and r.stdout.strip() == "False", r.stderr


def test_an_app_installs_as_a_plugin(tmp_path):
    """pip installs apps/wedges into a folder (a copy: the build leaves nothing in the
    source), and a Python with that folder on its path finds the app through its entry
    point: its command runs."""
    # pip builds it with this environment's setuptools (the test extra's)
    pytest.importorskip("setuptools", minversion="70.1")
    source, target = tmp_path / "wedges", tmp_path / "site"
    shutil.copytree(USER_APPS / "wedges", source, ignore=shutil.ignore_patterns("__pycache__"))
    r = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
                        "--no-build-isolation", "--no-index", "--target", str(target),
                        str(source)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    env = child_env()
    env["PYTHONPATH"] = f"{target}:{env['PYTHONPATH']}"
    code = ("from importlib.metadata import entry_points; from gthinker import registry; "
            "ep, = [e for e in entry_points(group='gthinker.apps') if e.name == 'wedges']; "
            "print(ep.value, registry.get('wedges').request.__module__)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                       timeout=120, cwd=tmp_path)
    assert r.returncode == 0 and r.stdout.split() == ["gthinker_wedges:APP",
                                                      "gthinker_wedges"], r.stderr
    g = nx.gnm_random_graph(30, 70, seed=8)
    gthinker.Graph.from_networkx(g).write(tmp_path / "g.txt")
    r = run_cli("wedges", tmp_path / "g.txt", "--json", "-q", "--threads", "1", env=env)
    assert r.returncode == 0, r.stderr
    want = sum(d * (d - 1) // 2 for _, d in g.degree())
    assert json.loads(r.stdout)["counters"]["wedges"] == want
