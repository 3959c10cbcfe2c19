"""gthinker.cluster on a local Ray cluster (``local:3``): every app gives exactly the
one-process result, a worker killed mid-run changes nothing, and ``--ray`` works on
the command line (or says how to install Ray).

One Ray start-up for the whole file (a module fixture, about 10 s on 2 cores); each
test computes its one-process answer first, which also fills the compile cache that
the Ray workers then load from.
"""

import doctest
import json
import os
import signal
import sys

import pytest
from conftest import DATA

import gthinker
from gthinker import cli
from gthinker.apps import count, gsword, mce, sm

try:
    import ray
except ImportError:
    ray = None

needs_ray = pytest.mark.skipif(ray is None, reason='Ray is not installed '
                                                   '(pip install "gthinker[ray]")')
ENRON = str(DATA / "email-Enron-1000.txt.gz")


@pytest.fixture(scope="module")
def cluster():
    from gthinker.cluster import connect

    c = connect("local:3")  # the CLI's --ray local:3 finds the same one
    yield c
    c.shutdown()


@pytest.fixture(scope="module")
def enron():
    return gthinker.Graph.read(ENRON)


def test_range_queue_examples():
    from gthinker.cluster import ranges

    assert doctest.testmod(ranges).failed == 0


@needs_ray
def test_mce_same_as_one_process(cluster, enron):
    one = mce.run(enron, mode="cpu", threads=1)
    many = cluster.mce(enron, mode="cpu", threads=1)
    assert (many.count, many.max_size, many.histogram) == (one.count, one.max_size,
                                                             one.histogram)
    c = many.stats["cluster"]
    assert c["workers"] == 3 and c["ranges"] > 3 and c["retried"] == 0
    assert sum(w["ranges"] for w in c["per_worker"]) == c["ranges"]


@needs_ray
@pytest.mark.parametrize("pattern", ["4-clique", "cliques", "4-cycle"])
def test_count_same_as_one_process(cluster, enron, pattern):
    one = count.count(enron, pattern, mode="cpu", threads=1)
    many = cluster.count(enron, pattern, mode="cpu", threads=1)
    assert (many.count, many.counts, many.method) == (one.count, one.counts, one.method)


@needs_ray
def test_sm_same_as_one_process_and_output_gathered(cluster, tmp_path):
    data = gthinker.Graph.read(DATA / "yeast.graph.gz")
    query = str(DATA / "queries" / "yeast" / "query_sparse_16_3.graph")
    one = sm.count(data, query, mode="cpu", threads=1, output=tmp_path / "one.txt")
    many = cluster.sm(data, query, mode="cpu", threads=1, output=tmp_path / "many.txt")
    assert many.count == one.count > 0
    lines = sorted((tmp_path / "many.txt").read_text().splitlines())
    assert lines == sorted((tmp_path / "one.txt").read_text().splitlines())


@needs_ray
def test_gsword_same_seed_same_estimate(cluster, enron):
    opts = dict(samples=30_000, trawl=False, seed=7, mode="cpu")
    one = gsword.estimate(enron, "4-cycle", "alley", threads=1, **opts)
    many = cluster.gsword(enron, "4-cycle", "alley", threads=1, ranges_per_worker=4, **opts)
    assert cluster.last_stats["ranges"] > 3
    assert (many.estimate, many.stderr, many.samples, many.valid_ratio) == (
        one.estimate, one.stderr, one.samples, one.valid_ratio)


@needs_ray
def test_own_task_counters_and_histograms_merge(cluster, enron):
    ordered = enron.reorder(enron.degeneracy_order()[0])
    opts = dict(params=[1], histogram_bins=enron.degeneracy + 2, threads=1)
    one = gthinker.run(mce.MaximalCliques, ordered, **opts)
    many = cluster.run(mce.MaximalCliques, ordered, **opts)
    assert many.counters == one.counters and many.maxima == one.maxima
    assert (many.histograms["size"] == one.histograms["size"]).all()


@needs_ray
def test_killed_worker_loses_no_work(cluster, enron):
    """SIGKILL to a worker that holds ranges: they run again elsewhere, and the
    result is still exact; the next job starts a new worker in its place."""
    one = mce.run(enron, mode="cpu", threads=1)
    killed = []

    def kill_one(snap):
        if not killed and snap["running"]:
            worker = next(iter(snap["running"]))
            os.kill(cluster.pids()[worker], signal.SIGKILL)
            killed.append(worker)

    many = cluster.mce(enron, mode="cpu", threads=1, ranges_per_worker=64, progress=kill_one)
    assert killed
    assert (many.count, many.histogram) == (one.count, one.histogram)
    c = many.stats["cluster"]
    assert c["workers_lost"] == 1 and c["retried"] >= 1
    assert cluster.count(enron, "triangle", mode="cpu", threads=1).count == \
        count.count(enron, "triangle", mode="cpu", threads=1).count
    assert cluster.num_workers == 3 and cluster.last_stats["workers_lost"] == 0


@needs_ray
def test_cli_ray_flag(cluster, capsys):
    assert cli.main(["mce", ENRON, "--mode", "cpu", "--threads", "1", "--json", "-q",
                     "--ray", "local:3"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["count"] == mce.run(ENRON, mode="cpu", threads=1).count
    assert out["cluster"]["workers"] == 3


def test_ray_flag_without_ray_says_how_to_install(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray fails
    monkeypatch.setattr("gthinker.cluster._clusters", {})
    assert cli.main(["count", ENRON, "triangle", "--ray", "local:2", "-q"]) == 2
    assert 'pip install "gthinker[ray]"' in capsys.readouterr().err


def test_bad_address():
    from gthinker.cluster import parse_address

    assert parse_address("local:4") == 4 and parse_address("auto") is None
    with pytest.raises(ValueError, match="N >= 1"):
        parse_address("local:0")


@pytest.mark.parametrize("shadowed", [True, False])
def test_ray_starts_where_workers_import_this_gthinker(tmp_path, monkeypatch, shadowed):
    """Ray puts the driver's current folder first on the workers' sys.path, so run
    from a gthinker checkout other than the imported one, Ray starts elsewhere."""
    from gthinker.cluster.driver import start_ray

    if shadowed:  # a checkout whose core is not built, as in CI after pip install .
        (tmp_path / "gthinker").mkdir()
        (tmp_path / "gthinker" / "__init__.py").write_text("raise ImportError\n")
    monkeypatch.chdir(tmp_path)
    seen = []

    class FakeRay:
        @staticmethod
        def init(**args):
            seen.append((os.getcwd(), args))

    start_ray(FakeRay, num_cpus=2)
    imported_from = os.path.dirname(os.path.dirname(os.path.realpath(gthinker.__file__)))
    expected = imported_from if shadowed else str(tmp_path)
    assert seen == [(os.path.realpath(expected), {"num_cpus": 2})]
    assert os.getcwd() == os.path.realpath(tmp_path)
