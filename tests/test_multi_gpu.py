"""Several GPU workers in one job (``gpus=``), each with its own copy of the graph
and buffers. The simulator has one device, so there two workers share it
(``gpus=[0, 0]``, the test-only form); on a real machine with two GPUs
(GTHINKER_TEST_REAL_GPU=1) they run on devices 0 and 1. Counts are checked
against networkx."""

import itertools
import math
import os

import networkx as nx
import numpy as np
import pytest

import gthinker
from gthinker import gpu
from gthinker.apps import count, mce, sm
from gthinker.errors import DeviceUnavailableError
from gthinker.gpu.devices import device_totals


def _two():
    """Two GPU workers: on devices 0 and 1, or both on the simulator's one device."""
    return [0, 1] if gpu.visible_devices() >= 2 else [0, 0]


def _graph():
    return nx.gnp_random_graph(10, 0.5, seed=4)  # 21 edges, 17 triangles, 9 4-cliques


def test_gpus_option_takes_n_all_or_device_ids():
    keywords = gthinker.RunOptions.from_keywords
    assert keywords().gpu.gpus is None
    assert keywords(gpus="all").gpu.gpus == "all"
    assert keywords(gpus=2).gpu.gpus == 2
    assert keywords(gpus="0,2").gpu.gpus == (0, 2)
    assert keywords(gpus=[1, 1]).gpu.gpus == (1, 1)
    for bad in (0, -1, "two", True, [], [-1], 1.5):
        with pytest.raises(ValueError, match="gpus must be"):
            keywords(gpus=bad)


def test_devices_resolved_against_what_is_visible():
    have = gpu.visible_devices()  # 1 on the simulator
    assert have >= 1
    assert gpu.resolve_devices() == gpu.resolve_devices("all") == list(range(have))
    assert gpu.resolve_devices(1) == [0] and gpu.resolve_devices((0, 0)) == [0, 0]
    with pytest.raises(DeviceUnavailableError, match=f"asks for {have + 1} GPUs, but {have} GPU"):
        gpu.resolve_devices(have + 1)
    with pytest.raises(DeviceUnavailableError, match=f"GPU {have + 2}"):
        gpu.resolve_devices((0, have + 2))


def test_chunk_default_gives_every_gpu_chunks():
    o = gthinker.RunOptions().gpu
    assert o.chunk_for(10**9, 1) == 500_000  # one GPU: G-ThinkerCG's chunk
    assert o.chunk_for(4039, 2) == math.ceil(4039 / (2 * 2))  # two chunks per GPU
    assert gthinker.RunOptions.from_keywords(gpu_chunk=7).gpu.chunk_for(4039, 2) == 7


def test_stats_summed_over_devices_and_kept_per_device():
    a = {"levels": 3, "busy_seconds": 1.5, "max_depth": 4, "depth": 1, "device": "X"}
    b = {"levels": 5, "busy_seconds": 0.5, "max_depth": 2, "depth": 3, "device": "X"}
    total, each = device_totals([a, b], [0, 1])
    assert total == {"levels": 8, "busy_seconds": 2.0, "max_depth": 4, "depth": 3,
                     "device": "2 x X"}
    assert [s["device_id"] for s in each] == [0, 1] and each[1]["levels"] == 5
    assert device_totals([a], [0])[0] == a


def _per_device_sums(stats, key):
    assert [s["device_id"] for s in stats["gpus"]] == _two()
    assert stats["gpu"][key] == sum(s[key] for s in stats["gpus"])


@pytest.mark.parametrize("engine, mode", [("levels", "hybrid"), ("bitsets", "gpu"),
                                          ("bitsets", "hybrid")])
def test_mce_on_two_gpu_workers(engine, mode):
    # levels: two GPUWorkers and a CPU worker, stealing through S both ways.
    G = _graph()
    r = mce.run(G, mode=mode, threads=1, gpu_engine=engine, gpus=_two(), gpu_chunk=3)
    assert r.count == sum(1 for _ in nx.find_cliques(G))
    _per_device_sums(r.stats, "assignments" if engine == "levels" else "launches")


def test_subgraph_matching_on_two_gpu_workers():
    G = _graph()
    # (a clique would go to the clique engine: a wedge runs the matcher; the level-by-level
    # one runs a worker per GPU, the depth-first one an engine per device)
    want = sum(d * (d - 1) // 2 for _, d in G.degree())
    r = sm.count(G, "3-path", unique=True, mode="gpu", gpus=_two(), gpu_chunk=3,
                 gpu_mode="prefix")
    assert r.count == want
    _per_device_sums(r.stats, "initial_vertices")
    assert sm.count(G, "3-path", unique=True, mode="gpu", gpus=_two(), gpu_chunk=3).count == want


class Edges(gthinker.GPUContext):
    """A user GPU app: counts each edge once, from its smaller end."""

    counters = ("edges",)

    @staticmethod
    def generate_initial_tasks(g, v, out):
        pos = gpu.append(out, 1)
        if pos >= 0:
            out.vertices[pos] = v

    @staticmethod
    def extend(g, rec, a, b, out):
        v = rec[0]
        for j in range(g.indptr[v], g.indptr[v + 1]):
            if g.indices[j] > v:
                gpu.count(g, 0, 1)


def test_user_app_on_two_gpu_workers():
    G = _graph()
    r = gthinker.run(None, G, mode="gpu", gpu=Edges, gpus=_two(), gpu_chunk=2)
    assert r.counters["edges"] == G.number_of_edges()
    _per_device_sums(r.stats, "assignments")


def test_clique_count_split_over_two_gpus():
    G = _graph()
    want = sum(1 for c in nx.enumerate_all_cliques(G) if len(c) == 4)
    r = count.count(G, "4-clique", mode="gpu", gpus=_two())
    assert r.count == want
    assert len(r.stats["gpus"]) == 2
    # hybrid: one count_gpu worker per distinct device, beside a CPU worker
    r = count.count(G, "4-clique", mode="hybrid", threads=1, gpus=_two())
    assert r.count == want
    assert [s["device_id"] for s in r.stats["gpus"]] == sorted(set(_two()))


def test_gpu_worker_feeds_an_idle_peer_gpu():
    # With S empty and another GPU worker waiting, the GPU hands back half of its
    # chunk's unstarted vertices, as it does for idle CPU workers.
    from gthinker.apps.mce.levels_gpu import MaximalCliquesGPU
    from gthinker.gpu.worker import GPUWorker

    class Ext:
        given = []

        def idle_cpu_workers(self):
            return 0

        def idle_peers(self):
            return 1

        def spill_tasks(self):
            return 0

        def give_back_vertices(self, v):
            self.given.append(v.tolist())

    for peers in (0, 1):
        w = GPUWorker(MaximalCliquesGPU, gthinker.as_graph(nx.path_graph(4)), peers=peers)
        w._ext, w.pending = Ext(), np.arange(6, dtype=np.int32)
        w._feed_cpus()
        assert Ext.given == ([] if peers == 0 else [[3, 4, 5]])


def test_too_many_gpus_is_a_clear_error_on_the_command_line(tmp_path, capsys):
    from gthinker.cli.main import main

    path = tmp_path / "g.txt"
    path.write_text("".join(f"{u} {v}\n" for u, v in itertools.combinations(range(5), 2)))
    more = str(gpu.visible_devices() + 1)
    assert main(["mce", str(path), "--mode", "gpu", "--gpus", more, "-q"]) == 2
    assert f"--gpus asks for {more} GPUs, but" in capsys.readouterr().err
    assert main(["count", str(path), "triangle", "--mode", "gpu", "--gpus", more, "-q"]) == 2
    assert f"--gpus asks for {more} GPUs" in capsys.readouterr().err


# ---- sharing roots by estimated cost (gthinker.gpu.sharing) ----------------------------


def test_guided_cuts_give_heavy_roots_small_chunks_and_cover_every_root():
    from gthinker.gpu.sharing import MIN_SHARE, guided_cuts, heavy_first

    rng = np.random.default_rng(3)
    costs = np.exp2(rng.integers(0, 20, 500)).astype(np.float64)
    order = heavy_first(costs)
    assert np.all(np.diff(costs[order]) <= 0)
    cuts = guided_cuts(costs[order], workers=2)
    assert cuts[-1] == 500 and np.all(np.diff(cuts) > 0)
    prefix = np.concatenate([[0.0], np.cumsum(costs[order])])
    chunk = np.diff(prefix[np.concatenate([[0], cuts])])
    left = prefix[-1] - prefix[np.concatenate([[0], cuts[:-1]])]
    several = np.diff(np.concatenate([[0], cuts])) > 1  # a chunk of one root may exceed it
    bound = np.maximum(left / 4, prefix[-1] * MIN_SHARE / 2) + costs.max()
    assert np.all(chunk[several] <= bound[several])
    assert guided_cuts(np.zeros(0), 2).size == 0
    assert guided_cuts(np.zeros(9), 2).tolist() == guided_cuts(np.ones(9), 2).tolist()


def test_shared_cursor_hands_each_chunk_to_one_thread():
    from concurrent.futures import ThreadPoolExecutor

    from gthinker.gpu.sharing import SharedCursor

    cursor = SharedCursor(range(5, 1005, 5), start=2)

    def drain(_):
        got = []
        while (r := cursor.next()) is not None:
            got.append(r)
        return got

    with ThreadPoolExecutor(4) as pool:
        taken = sorted(r for part in pool.map(drain, range(4)) for r in part)
    assert taken[0] == (2, 5) and len(taken) == 200
    assert all(a[1] == b[0] for a, b in itertools.pairwise(taken))


def test_master_cuts_gpu_chunks_by_estimated_cost():
    # Edges on two GPU workers: the roots go heavy first (squared degree) in chunks of
    # even estimated cost, one assignment each (no vertices handed back to an idle peer).
    from gthinker.gpu.sharing import guided_cuts

    G = nx.barabasi_albert_graph(60, 3, seed=2)
    r = gthinker.run(None, G, mode="gpu", gpu=Edges, gpus=_two(), give_back=False,
                     level_steal=False)
    assert r.counters["edges"] == G.number_of_edges()
    degrees = np.array([d for _, d in sorted(G.degree())], np.float64)
    chunks = len(guided_cuts(np.sort(degrees**2)[::-1], 2))
    assert chunks > 4
    assert sum(s["assignments"] for s in r.stats["gpus"]) == chunks


def test_mce_heavy_roots_spread_over_two_gpu_workers():
    # A dense core under a few roots, as in facebook_combined: both GPU workers search.
    G = nx.gnp_random_graph(40, 0.08, seed=5)
    G.add_edges_from(itertools.combinations(range(30, 40), 2))
    r = mce.run(G, mode="gpu", gpu_engine="bitsets", gpus=_two())
    assert r.count == sum(1 for _ in nx.find_cliques(G))
    assert all(s["launches"] > 0 for s in r.stats["gpus"])


def test_mce_chunk_tails_wait_in_s_while_roots_remain():
    # A chunk's tail of records, fewer than the warps, goes to S while roots wait in the
    # deque (the master's path: hybrid mode, and gpu mode where it needs the master); the
    # job run whole has no chunks. The engine's rule, with a handle that records it:
    import gthinker.gpu.engine as engine_module
    from gthinker.apps.mce.bitsets_gpu import BitsetsEngine, Work

    G = gthinker.as_graph(nx.gnp_random_graph(20, 0.3, seed=7))

    class Handle:
        def __init__(self, unstarted):
            self.unstarted, self.pushed = unstarted, []

        def unstarted_vertices(self):
            return self.unstarted

        def push_tasks(self, data, starts):
            self.pushed.append(len(starts) - 1)
            return True

    def engine(peers):
        setup = engine_module.EngineSetup(np.zeros(0, np.int64), 8, 0,
                                          gthinker.RunOptions(), None, peers)
        return BitsetsEngine(G, setup)

    tail = Work.of_records(np.array([1, 1, 0, 3, 5], np.int32), np.array([0, 5], np.int64))
    e = engine(1)
    assert e.dev.warps > 1 and e._park(tail, h := Handle(3)) and h.pushed == [1]
    assert e.parked == 1
    assert not e._park(tail, Handle(0))  # no roots left: the engine searches it
    assert not engine(0)._park(tail, Handle(3))  # one GPU: nothing to make room for
    wide = Work.of_records(np.tile(tail.data, e.dev.warps),
                           np.arange(e.dev.warps + 1, dtype=np.int64) * 5)
    assert not e._park(wide, Handle(3))  # enough records to fill the warps
    # and the count, in hybrid mode with small chunks and a tiny node budget
    H = nx.gnp_random_graph(60, 0.15, seed=7)
    H.add_edges_from(itertools.combinations(range(45, 60), 2))
    r = mce.run(H, mode="hybrid", threads=1, gpu_engine="bitsets", gpus=_two(), gpu_chunk=4,
                gpu_node_budget=2)
    assert r.count == sum(1 for _ in nx.find_cliques(H))


_CHILD_JOB = """
import networkx as nx
from gthinker import gpu
from gthinker.apps import count, mce
gpus = [0, 1] if gpu.visible_devices() >= 2 else [0, 0]
G = nx.gnp_random_graph(30, 0.3, seed=1)
assert mce.run(G, mode="gpu", gpu_engine="bitsets", gpus=gpus).count == \\
    sum(1 for _ in nx.find_cliques(G))
assert count.count(G, "4-clique", mode="gpu", gpus=gpus).count == \\
    sum(1 for c in nx.enumerate_all_cliques(G) if len(c) == 4)
assert count.count(G, "4-clique", mode="hybrid", threads=1, gpus=gpus).count > 0
print("done")
"""


@pytest.mark.skipif(os.environ.get("GTHINKER_TEST_REAL_GPU") != "1",
                    reason="the exit abort is a CUDA driver's; the simulator has no contexts "
                           "to pin (a 25 s child process that could not fail)")
def test_multi_gpu_process_exits_cleanly(tmp_path):
    # The real-GPU run of this file passed and then aborted at exit ("double free or
    # corruption (!prev)", gthinker/gpu/devices.py says why): a child process runs
    # multi-GPU jobs on devices 0 and 1 (0 twice with one GPU) and must exit with status 0.
    import subprocess
    import sys

    from conftest import child_env

    # (cwd: a `python -c` child puts its current folder first on sys.path, and the
    # checkout's source folder has no built core when CI installs without -e)
    done = subprocess.run([sys.executable, "-c", _CHILD_JOB], env=child_env(), cwd=tmp_path,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().endswith("done")
    assert "double free" not in done.stderr and "corruption" not in done.stderr


# ---- the number of GPUs a job takes, by its estimated work --------------------------------


@pytest.fixture
def four_visible(monkeypatch):
    """Four GPUs visible (the simulator has one: only for choosing, nothing runs on them)."""
    from gthinker.gpu import devices

    monkeypatch.setattr(devices, "visible_devices", lambda: 4)


def test_default_gpus_take_as_many_gpus_as_the_work_fills(four_visible):
    from gthinker.gpu.devices import job_devices
    from gthinker.gpu.engine import GPUEngine

    G = gthinker.as_graph(nx.gnp_random_graph(50, 0.2, seed=3))
    wedges = float(np.sum(np.diff(G.indptr).astype(np.float64) ** 2))  # the default estimate
    roots = range(G.num_vertices)
    for per_gpu, want in ((wedges * 2, 1), (wedges / 2.5, 2), (wedges / 3.5, 3), (wedges / 99, 4)):
        engine = GPUEngine.configured(spread_cost=per_gpu)
        assert job_devices(None, engine, G, roots) == list(range(want))
        assert job_devices("all", engine, G, roots) == list(range(want))
        assert job_devices(4, engine, G, roots) == [0, 1, 2, 3]  # asked for: as asked
        assert job_devices((2, 1), engine, G, roots) == [2, 1]
    # the roots given, not the graph's: every other vertex, their wedges alone
    engine = GPUEngine.configured(spread_cost=wedges / 6)
    half = float(np.sum(np.diff(G.indptr)[::2].astype(np.float64) ** 2))
    want = int(min(4, half // (wedges / 6)))
    assert 1 < want < 4
    assert job_devices(None, engine, G, range(0, G.num_vertices, 2)) == list(range(want))
    assert job_devices(None, engine, G, np.arange(0, G.num_vertices, 2)) == list(range(want))
    unweighed = type("Unweighed", (GPUEngine,), {"spread_cost": None})
    assert job_devices(None, unweighed, G, roots) == [0, 1, 2, 3]


def test_a_small_job_runs_on_one_gpu_with_the_default(four_visible):
    # MCE (bitsets, run whole) and a clique count: the default takes one GPU of the four.
    G = _graph()
    r = mce.run(G, mode="gpu", gpu_engine="bitsets")
    assert r.count == sum(1 for _ in nx.find_cliques(G))
    assert [s["device_id"] for s in r.stats["gpus"]] == [0]
    r = count.count(G, "4-clique", mode="gpu")
    assert r.count == sum(1 for c in nx.enumerate_all_cliques(G) if len(c) == 4)
    assert [s["device_id"] for s in r.stats["gpus"]] == [0]


def test_gsword_takes_as_many_gpus_as_its_samples_fill(four_visible):
    from gthinker.apps import gsword
    from gthinker.apps.gsword.gpu import SPREAD_SAMPLES
    from gthinker.gpu.devices import by_work

    def fills(samples):
        return lambda have: samples // SPREAD_SAMPLES

    assert by_work(None, fills(1000)) == [0]
    assert by_work(None, fills(2 * SPREAD_SAMPLES + 1)) == [0, 1]
    assert by_work("all", fills(10**12)) == [0, 1, 2, 3]
    assert by_work(3, fills(1000)) == [0, 1, 2]
    # an estimate of 64 samples with the default gpus: one sampler, on the first GPU
    r = gsword.estimate(_graph(), "diamond", "alley", samples=64, mode="gpu", trawl=False)
    assert [s["device_id"] for s in r.stats["gpus"]] == [0]


@pytest.mark.parametrize("gpus", [[0, 0, 0], [0, 0, 0, 0, 0]])
def test_gsword_on_any_number_of_gpus_is_one_gpus_estimate(gpus):
    # 96 samples: 3 rounds over 3 or 5 samplers (two of the five get none); a sample's
    # value depends on the seed and its index alone: the same estimate to the bit.
    from gthinker.apps import gsword
    from gthinker.gpu.simulator import fast_switching

    with fast_switching():
        one = gsword.estimate(_graph(), "diamond", "alley", samples=96, mode="gpu",
                              trawl=False, gpus=1, seed=7)
        many = gsword.estimate(_graph(), "diamond", "alley", samples=96, mode="gpu",
                               trawl=False, gpus=gpus, seed=7)
    assert many.estimate == one.estimate and many.stderr == one.stderr
    assert sum(s["rounds"] for s in many.stats["gpus"]) == 3
    assert sorted(s["rounds"] for s in many.stats["gpus"])[-1] == 1
    assert many.stats["gpu"]["valid"] == one.stats["gpu"]["valid"]


# ---- MCE on several GPUs without the master (BitsetsEngine.run_whole) ---------------------


def test_deal_gives_even_shares_heavy_first():
    from gthinker.gpu.sharing import deal

    rng = np.random.default_rng(5)
    costs = np.exp2(rng.integers(0, 16, 3000)).astype(np.float64)
    for workers in (1, 2, 3, 4, 7):
        shares = deal(costs, workers)
        together = np.sort(np.concatenate(shares))
        assert together.tolist() == list(range(3000))  # every root once
        loads = [costs[s].sum() for s in shares]
        assert max(loads) - min(loads) <= costs.max()  # LPT: within the largest item
        assert all(np.all(np.diff(costs[s]) <= 0) for s in shares)  # heavy first


def test_work_pool_ends_when_every_thread_waits():
    from concurrent.futures import ThreadPoolExecutor

    from gthinker.gpu.sharing import WorkPool

    pool = WorkPool(3)
    done = []

    def worker(k):
        # Thread 0 starts with 5 items of work and gives every other one away while
        # the others wait; they finish what they take. No item lost, none twice.
        work = list(range(5)) if k == 0 else []
        while True:
            if not work:
                got = pool.take()
                if got is None:
                    return
                work = [got]
            item = work.pop()
            done.append(item)
            if work and pool.hungry():
                pool.give(work.pop())

    with ThreadPoolExecutor(3) as threads:
        list(threads.map(worker, range(3)))
    assert sorted(done) == [0, 1, 2, 3, 4]
    closed = WorkPool(2)
    closed.close()
    assert closed.take() is None


@pytest.mark.parametrize("gpus", [[0, 0], [0, 0, 0]])
def test_mce_run_whole_on_several_gpus_shares_and_balances(gpus):
    # A dense core under a few roots, as in facebook_combined: every engine searches, and
    # the records the warps hand out move between them (a small node budget).
    from gthinker.apps.mce.bitsets_gpu import BitsetsEngine

    G = nx.gnp_random_graph(40, 0.08, seed=5)
    G.add_edges_from(itertools.combinations(range(28, 40), 2))
    want = sorted(len(c) for c in nx.find_cliques(G))
    r = mce.run(G, mode="gpu", gpu_engine="bitsets", gpus=gpus, gpu_node_budget=4)
    assert r.count == len(want) and r.max_size == want[-1]
    assert [s["device_id"] for s in r.stats["gpus"]] == gpus
    assert all(s["launches"] > 0 and s["wall_seconds"] > 0 for s in r.stats["gpus"])
    given = sum(s["given"] for s in r.stats["gpus"])
    assert given == sum(s["taken"] for s in r.stats["gpus"])
    assert BitsetsEngine.gpus_for(gthinker.as_graph(G), slice(0, 40), 4) == 1  # small: one


def test_mce_through_the_master_takes_one_chunk_of_even_cost_per_gpu():
    # Gpu mode through the master: the roots dealt, one chunk a GPU; hybrid: in pieces.
    from gthinker.apps.mce.bitsets_gpu import HYBRID_PIECES, BitsetsEngine

    G = gthinker.as_graph(nx.barabasi_albert_graph(80, 4, seed=1))
    roots = np.arange(G.num_vertices, dtype=np.int32)
    costs = BitsetsEngine.root_costs(G, roots)
    for workers in (2, 3, 4):
        order, cuts = BitsetsEngine.share_roots(G, roots, workers, "gpu")
        assert sorted(order.tolist()) == roots.tolist() and len(cuts) == workers
        assert cuts[-1] == len(roots) and np.all(np.diff(cuts) > 0)
        loads = [costs[part].sum() for part in np.split(order, cuts[:-1])]
        assert max(loads) - min(loads) <= costs.max()
        # hybrid: the same shares in HYBRID_PIECES chunks each, every share's first piece
        # (its heaviest roots) before any second piece
        hybrid, pieces = BitsetsEngine.share_roots(G, roots, workers, "hybrid")
        assert len(pieces) == workers * HYBRID_PIECES and pieces[-1] == len(roots)
        chunks = np.split(hybrid, pieces[:-1])
        shares = [np.concatenate(chunks[k::workers]) for k in range(workers)]
        assert [sorted(s.tolist()) for s in shares] == \
            [sorted(p.tolist()) for p in np.split(order, cuts[:-1])]
        firsts = [costs[c].max() for c in chunks[:workers]]
        assert min(firsts) >= max(costs[c].max() for c in chunks[workers:])
    order, cuts = BitsetsEngine.share_roots(G, roots[:2], 4, "gpu")  # fewer roots than GPUs
    assert sorted(order.tolist()) == [0, 1] and cuts.tolist() == [1, 2]


# ---- leaving the process: the teardown's order ------------------------------------------


def test_exit_teardown_runs_in_order(monkeypatch):
    # At exit: the hooks (kept buffers dropped), then each active device finished (its
    # work synchronised, its deferred frees done) and its context pinned, device by device.
    import contextlib

    from gthinker.gpu import availability, devices, worker

    assert worker._kept.clear in devices._exit_hooks
    calls = []

    class Context:
        class deallocations:  # noqa: N801 - numba's attribute
            @staticmethod
            def clear():
                calls.append(("free", current[0]))

    current = [None]

    class Device:
        def __init__(self, d):
            self.d = d

        def __enter__(self):
            current[0] = self.d

        def __exit__(self, *exc):
            current[0] = None

    class Cuda:
        gpus = [Device(0), Device(1)]

        @staticmethod
        def synchronize():
            calls.append(("sync", current[0]))

        @staticmethod
        def current_context():
            return Context

    monkeypatch.setattr(availability, "numba_cuda", lambda: Cuda)
    monkeypatch.setattr(devices, "_exit_hooks", [lambda: calls.append(("hook", None))])
    monkeypatch.setattr(devices, "_active_devices", lambda cuda: [0, 1])
    monkeypatch.setattr(devices, "_pin_primary_context",
                        lambda cuda, d: calls.append(("pin", d)))
    with contextlib.suppress(Exception):
        devices._leave()
    assert calls == [("hook", None), ("sync", 0), ("free", 0), ("pin", 0),
                     ("sync", 1), ("free", 1), ("pin", 1)]


def test_mce_run_whole_reports_progress(monkeypatch):
    # Without the master, the engine's watch passes the cliques so far and the devices'
    # figures to the job's progress callback, in the master's snapshot form.
    from gthinker.apps.mce import bitsets_gpu

    # No wait between looks: a look comes before even a real GPU's millisecond job ends.
    monkeypatch.setattr(bitsets_gpu, "PROGRESS_LOOK_SECONDS", 0.0)
    G = nx.gnp_random_graph(14, 0.4, seed=1)
    want = sum(1 for _ in nx.find_cliques(G))
    seen = []
    r = mce.run(G, mode="gpu", gpu_engine="bitsets", gpus=[0, 0], progress=seen.append,
                progress_interval=0.0)
    assert r.count == want and "wall_seconds" in r.stats["gpus"][0]  # run whole
    assert seen, "no progress line"
    for snap in seen:
        assert 0 <= snap["counters"][0] <= want and snap["tasks_done"] == 0
        assert snap["gpu"]["launches"] >= 0 and snap["elapsed"] >= 0


def test_profile_lines_only_at_a_jobs_end_and_when_asked(monkeypatch, capsys):
    from gthinker.gpu.devices import PROFILE_ENV

    figures = [{"wall_seconds": 1.5, "sync_seconds": 1.0, "launches": 3, "device": "X"},
               {"wall_seconds": 1.25, "sync_seconds": 0.5, "launches": 2, "device": "X"}]
    monkeypatch.delenv(PROFILE_ENV, raising=False)
    device_totals(figures, [0, 1], final=True)
    monkeypatch.setenv(PROFILE_ENV, "1")
    device_totals(figures, [0, 1])  # a progress tick: nothing
    assert capsys.readouterr().err == ""
    device_totals(figures, [0, 1], final=True)
    err = capsys.readouterr().err.splitlines()
    assert err == ["gthinker gpu profile: GPU 0: wall_seconds 1.5, sync_seconds 1, launches 3",
                   "gthinker gpu profile: GPU 1: wall_seconds 1.25, sync_seconds 0.5, launches 2"]


_CHILD_EXIT_ORDER = """
import weakref
from gthinker.gpu import devices

class Allocation:  # stands for numba-cuda's device memory, freed by a finalizer at exit
    pass

devices.at_exit(lambda: print("teardown"))
devices._note_driven(0)  # the first device driven, then its first allocation
kept = Allocation()
weakref.finalize(kept, print, "finalizer")
"""


def test_teardown_runs_before_the_exit_finalizers(tmp_path):
    # numba-cuda frees memory and unloads modules from weakref finalizers, which the
    # interpreter calls at exit; the teardown must come first (it disables those frees).
    import subprocess
    import sys

    from conftest import child_env

    env = {k: v for k, v in child_env().items() if k != "NUMBA_ENABLE_CUDASIM"}
    done = subprocess.run([sys.executable, "-c", _CHILD_EXIT_ORDER], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["teardown", "finalizer"]
