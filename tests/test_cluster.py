"""gthinker.cluster on a local Ray cluster (``local:3``): every app gives exactly the
one-process result, roots and spilled tasks moved between workers count once, a
worker killed mid-run changes nothing (also one that gave work away or got it),
and ``--ray`` works on the command line (or says how to install Ray).

One Ray start-up for the whole file (a module fixture, about 10 s on 2 cores); each
test computes its one-process answer first, which also fills the compile cache that
the Ray workers then load from.
"""

import doctest
import json
import os
import signal
import sys
import threading
import time

import numpy as np
import pytest
from conftest import DATA

import gthinker
from gthinker import registry
from gthinker.apps import count, gsword, mce, sm
from gthinker.cli import main as cli
from gthinker.graphs import generate

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


@pytest.fixture(scope="module")
def skewed():
    """An R-MAT graph whose maximal cliques take about a second on one thread, most of
    it under a few roots."""
    return generate.rmat(11, 48, seed=1)


@pytest.fixture
def eager(cluster):
    """The cluster, moving spilled tasks as soon as a worker has room."""
    cluster.move_tasks = "eager"
    yield cluster
    cluster.move_tasks = True


def test_take_tasks_moves_work_exactly(skewed):
    """Job.take_tasks while the job runs: the records taken leave it (it neither runs
    nor waits for them), and run as a job of records they give the rest."""
    from gthinker.cluster.node import JobHandle

    one = mce.run(skewed, mode="cpu", threads=1)
    handle, out = JobHandle(), {}
    thread = threading.Thread(target=lambda: out.setdefault("res", mce.run(
        skewed, mode="cpu", threads=2, time_budget=1e-3, stop=handle)))
    thread.start()
    taken = []
    while thread.is_alive():
        job = handle.job
        if job is not None:
            job.request_tasks(4, 1.0)
            data, starts = job.take_tasks(2)
            assert starts.size >= 1 and starts[-1] == data.size
            if starts.size > 1:
                taken.append((data.copy(), starts.copy()))
        time.sleep(0.005)
    thread.join()
    res = out["res"]
    assert taken and res.stats["tasks_taken"] == sum(s.size - 1 for _, s in taken)
    assert res.count < one.count
    hist = dict(res.histogram)
    for data, starts in taken:
        rest = mce.run(skewed, mode="cpu", threads=1, vertices=np.empty(0, np.int32),
                       records=(data, starts))
        for size, n in rest.histogram.items():
            hist[size] = hist.get(size, 0) + n
    assert dict(sorted(hist.items())) == one.histogram


def test_take_vertices_moves_roots_exactly(skewed):
    """Job.take_vertices while the job runs: the roots taken were started by no
    worker and leave the job; run as a job of those roots they give the rest."""
    from gthinker.cluster.node import JobHandle

    one = mce.run(skewed, mode="cpu", threads=1)
    handle, out = JobHandle(), {}
    thread = threading.Thread(target=lambda: out.setdefault("res", mce.run(
        skewed, mode="cpu", threads=2, stop=handle)))
    thread.start()
    taken = []
    while thread.is_alive():
        job = handle.job
        if job is not None and job.unstarted_vertices() > 0:
            taken.append(job.take_vertices(3))
        time.sleep(0.002)
    thread.join()
    roots = np.concatenate(taken) if taken else np.empty(0, np.int32)
    assert roots.size and out["res"].stats["vertices_taken"] == roots.size
    assert np.unique(roots).size == roots.size
    rest = mce.run(skewed, mode="cpu", threads=1, vertices=roots)
    hist = dict(out["res"].histogram)
    for size, n in rest.histogram.items():
        hist[size] = hist.get(size, 0) + n
    assert dict(sorted(hist.items())) == one.histogram


class _Ref:
    """What a node keeps a graph under (Ray's object reference, here without Ray)."""

    def hex(self):
        return "graph"


def test_a_node_streams_each_units_lines(enron, tmp_path):
    """A unit that lists results streams its lines out of its job (no file): into its
    part, or appended to the node's own file once the unit has ended; the ranges'
    lines together are the cliques of one process."""
    from gthinker.cluster.node import NodeWorker

    node = NodeWorker()
    node._graphs["graph"] = enron  # as Ray would have put it there
    req = registry.get("mce").request(mode="cpu", output=str(tmp_path / "unused.txt"))
    one = {frozenset(c.tolist()) for c in mce.iter_cliques(enron, threads=1)}
    n = enron.num_vertices
    parts = [node.run_range(req, [_Ref()], lo, hi, 1, None)
             for lo, hi in ((0, n // 3), (n // 3, n))]
    lines = b"".join(p["output"] for p in parts).decode().splitlines()
    assert sum(sum(p["histogram"].values()) for p in parts) == len(lines) == len(one)
    assert {frozenset(map(int, ln.split())) for ln in lines} == one
    mine = tmp_path / "node0.txt"
    node.run_range(req, [_Ref()], 0, n, 1, str(mine))
    assert {frozenset(map(int, ln.split())) for ln in mine.read_text().splitlines()} == one
    assert not (tmp_path / "unused.txt").exists()


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


def _moved_until(run, tries=3):
    """``run()`` again until its job moved tasks or roots (each run must be exact
    anyway)."""
    for _ in range(tries):
        res, stats = run()
        if stats["tasks_moved"] + stats["roots_moved"]:
            return res, stats
    return res, stats


@needs_ray
def test_moved_tasks_merge_exactly(eager, skewed, tmp_path):
    """Spilled tasks move from busy workers to idle ones; the counts, the histogram
    and the gathered output are exactly one process's, each clique once."""
    one = mce.run(skewed, mode="cpu", threads=1, min_size=40, output=tmp_path / "one.txt")

    def run():
        res = eager.mce(skewed, mode="cpu", threads=1, min_size=40, time_budget=1e-3,
                        ranges_per_worker=2, output=tmp_path / "many.txt")
        assert (res.count, res.max_size, res.histogram) == (one.count, one.max_size,
                                                              one.histogram)
        return res, eager.last_stats

    res, c = _moved_until(run)
    assert c["tasks_moved"] + c["roots_moved"] > 0 and c["batches"] >= 1 and c["moves"]
    workers = c["per_worker"]
    for kind in ("tasks", "roots"):
        assert sum(w[f"{kind}_given"] for w in workers) == c[f"{kind}_moved"]
        assert sum(w[f"{kind}_received"] for w in workers) == c[f"{kind}_moved"]
        assert sum(m[kind] for m in c["moves"]) == c[f"{kind}_moved"]
    assert sum(w["batches"] for w in workers) == c["batches"]
    assert all(m["from"] != m["to"] for m in c["moves"])
    lines = (tmp_path / "many.txt").read_text().splitlines()
    assert len(lines) == one.count
    assert sorted(lines) == sorted((tmp_path / "one.txt").read_text().splitlines())


@needs_ray
def test_moved_clique_records_count_exactly(eager, skewed):
    """A k-clique count's range records (and prefix cliques) move between workers
    and count once."""
    one = count.count(skewed, "4-clique", mode="cpu", threads=1)

    def run():
        res = eager.count(skewed, "4-clique", mode="cpu", threads=1, time_budget=1e-3,
                          ranges_per_worker=2)
        assert res.count == one.count
        return res, eager.last_stats

    _, c = _moved_until(run)
    assert c["tasks_moved"] > 0 and c["roots_moved"] == 0


@needs_ray
@pytest.mark.parametrize("victim", ["from", "to"])
def test_killed_worker_that_moved_tasks(eager, skewed, victim):
    """SIGKILL, right after the first move, to the worker that gave the tasks (its
    unit runs again in full and the moved batch is dropped) or to the one that got
    them (the batch runs again from the driver's copy): the result is exact."""
    one = mce.run(skewed, mode="cpu", threads=1)
    killed = []

    def kill(snap):
        move = snap["last_move"]
        if not killed and move is not None:
            worker = move[victim]
            os.kill(eager.pids()[worker], signal.SIGKILL)
            killed.append(worker)

    def run():
        res = eager.mce(skewed, mode="cpu", threads=1, time_budget=1e-3, ranges_per_worker=2,
                        progress=kill)
        assert (res.count, res.histogram) == (one.count, one.histogram)
        return res, eager.last_stats

    res, c = _moved_until(run)
    assert killed and c["workers_lost"] == 1
    if victim == "to":
        assert c["batches_retried"] >= 1


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
