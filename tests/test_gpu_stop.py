"""Stopping GPU jobs while a kernel runs (:mod:`gthinker.gpu.stop_flag`), on Numba's
simulator: a StopToken set from another thread once the kernel's threads run stops the
depth-first matcher, the clique kernels (a gpu-mode count runs whole, without the master)
and the framework's level-by-level engine and MCE's bitset kernels (the queue kernel of gpu
mode, the launches of hybrid mode) within seconds, where the whole run takes half a minute
or more; the result is partial (never more maximal cliques of a size than networkx finds)
and no thread is left running. SIGTERM does the same to a ``gthinker count --mode gpu``
process (exit 143, the partial result printed), SIGINT to ``gthinker mce --mode gpu``
(exit 130)."""

import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter

import networkx as nx
import numpy as np
import pytest
from conftest import REAL_GPU, child_env
from numba import cuda

import gthinker
from gthinker.apps import count, mce, sm
from gthinker.apps.matching.dfs_gpu import DFSEngine
from gthinker.apps.matching.patterns import pattern
from gthinker.apps.matching.planner import plan
from gthinker.apps.matching.search import SubgraphMatching
from gthinker.apps.mce import bitsets_gpu
from gthinker.gpu.stop_flag import StopFlag, block_stop_requested, warp_stop_requested

pytestmark = pytest.mark.skipif(REAL_GPU, reason="timed against the simulator's speed")

#: Seconds from the token to the end of the run that the tests accept: the simulator's
#: warps take about a second to reach their next look at the flag on a 2-core machine,
#: and up to 13 s were seen while other simulator runs shared it; the runs stopped here
#: take minutes whole (each test also checks that the count is partial).
PROMPT = 20.0


def _block_threads():
    from numba.cuda.simulator.kernel import BlockThread

    return sum(isinstance(t, BlockThread) for t in threading.enumerate())


class _StopWhenKernelRuns:
    """Sets ``token`` from a thread of its own shortly after a simulated kernel's threads
    have started; ``at``: when it did (time.monotonic)."""

    def __init__(self, token, delay=0.3):
        self.token, self.delay, self.at = token, delay, None
        self.thread = threading.Thread(target=self._watch, daemon=True)
        self.thread.start()

    def _watch(self):
        end = time.monotonic() + 120
        while time.monotonic() < end and not _block_threads():
            time.sleep(0.01)
        time.sleep(self.delay)
        self.at = time.monotonic()
        self.token.set()

    def join(self):
        self.thread.join(10)
        assert not self.thread.is_alive()


def _stopped_run(fn):
    """``fn(token)`` with the token set while its kernel runs: (its result, seconds from
    the token to the return). Checks that no thread of the run is left."""
    before = set(threading.enumerate())
    token = gthinker.StopToken()
    watch = _StopWhenKernelRuns(token)
    res = fn(token)
    took = time.monotonic() - watch.at
    watch.join()
    assert set(threading.enumerate()) <= before, "threads left running"
    return res, took


def test_the_depth_first_matcher_stops_mid_kernel():
    """A warp looks at the flag each time its clock passes another ``budget`` elements
    (16,384 by default: microseconds on a GPU, most of a minute on the simulator, so a
    budget of 64 here); G(40, 0.5)'s 5-cliques take the simulator minutes."""
    G = nx.gnp_random_graph(40, 0.5, seed=1)
    want = sum(1 for c in nx.enumerate_all_cliques(G) if len(c) == 5)
    g = gthinker.as_graph(G)
    p = plan(g, pattern("5-clique"), unique=True)

    def run(token):
        return gthinker.run(SubgraphMatching, g, mode="gpu", params=p.params,
                            gpu=DFSEngine.configured(budget=64), stop=token)

    res, took = _stopped_run(run)
    assert res.stopped == "stop"
    assert 0 <= res.counters["matches"] < want
    assert took < PROMPT
    again = sm.count(nx.complete_graph(6), "5-clique", mode="gpu", gpu_mode="dfs", unique=True)
    assert again.count == 6 and again.stopped is None  # the kept device state is clean


@pytest.fixture(scope="module")
def triangles():
    """G(300, 0.2) and its triangles: the simulator's triangle kernel takes 2.5 minutes."""
    G = nx.gnp_random_graph(300, 0.2, seed=1)
    return G, sum(nx.triangles(G).values()) // 3


def test_a_gpu_clique_count_stops_mid_kernel(triangles):
    """``count`` in gpu mode launches one kernel over every edge, with no master: the
    token reaches it through the job's stop flag."""
    G, want = triangles
    res, took = _stopped_run(lambda token: count.count(G, "triangle", mode="gpu", stop=token))
    assert res.mode == "gpu" and 0 <= res.count < want
    assert took < PROMPT
    assert count.count(nx.complete_graph(5), "triangle", mode="gpu").count == 10


def test_the_level_by_level_engine_stops_mid_kernel():
    G = nx.gnp_random_graph(30, 0.5, seed=1)
    want = sum(1 for c in nx.enumerate_all_cliques(G) if len(c) == 5)
    res, took = _stopped_run(lambda token: sm.count(G, "5-clique", mode="gpu",
                                                    gpu_mode="prefix", unique=True, stop=token))
    assert res.stopped == "stop" and 0 <= res.count < want
    assert took < PROMPT


def test_a_flag_passes_a_stop_on_and_clears():
    job, kept, other = StopFlag(), StopFlag(), StopFlag()
    job.link(kept)
    kept.set()
    assert kept.is_set() and not job.is_set()  # a link runs one way
    kept.clear()
    job.stop("stopped by its StopToken")
    assert job.is_set() and kept.is_set()
    job.link(other)  # linked after the stop: set at once
    assert other.is_set()
    job.unlink(kept)
    kept.clear()
    job.set()
    assert not kept.is_set()


def test_the_wait_sets_the_flag_when_the_job_stops_and_on_ctrl_c():
    flag = StopFlag()
    looks = []
    flag.wait(lambda: len(looks) > 3 or looks.append(1), stopping=lambda: len(looks) == 2)
    assert flag.is_set()

    flag = StopFlag()
    seen = []

    def done():  # Ctrl-C during the wait; the "kernel" ends once it sees the flag
        seen.append(flag.is_set())
        if len(seen) == 2:
            raise KeyboardInterrupt
        return flag.is_set()

    with pytest.raises(KeyboardInterrupt):
        flag.wait(done)
    assert flag.is_set() and seen[-1]


def test_warps_and_blocks_leave_when_the_host_sets_the_flag():
    """A kernel that loops until its warps (:func:`warp_stop_requested`) and its block
    (:func:`block_stop_requested`) see the flag: set from the host while it runs."""
    @cuda.jit
    def spin(stop, out):
        n = 0
        while not warp_stop_requested(stop):
            n += 1
        while not block_stop_requested(stop):
            n += 1
        out[cuda.threadIdx.x] = n

    flag = StopFlag()
    out = np.zeros(64, np.int64)
    timer = threading.Timer(0.5, flag.set)
    timer.start()
    t0 = time.monotonic()
    spin[1, 64](flag.array, out)
    timer.join()
    assert 0.4 < time.monotonic() - t0 < PROMPT and (out > 0).all()


def _tasks(pid) -> int:
    return len(os.listdir(f"/proc/{pid}/task"))


def _signalled_cli(args, sig, threads):
    """``python -m gthinker ARGS --json`` on the simulator, sent ``sig`` once the process
    has ``threads`` threads (a simulated kernel's threads are the process's): (exit code,
    the JSON result, stderr, seconds from the signal to the exit)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "gthinker", *map(str, args), "--json"], stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, env=child_env(NUMBA_ENABLE_CUDASIM="1"),
        cwd=tempfile.gettempdir())
    end = time.monotonic() + 120
    while time.monotonic() < end and proc.poll() is None and _tasks(proc.pid) < threads:
        time.sleep(0.02)
    time.sleep(0.3)
    proc.send_signal(sig)
    sent = time.monotonic()
    out, err = proc.communicate(timeout=120)
    took = time.monotonic() - sent
    assert "Traceback" not in err
    return proc.returncode, json.loads(out.splitlines()[-1]), err, took


linux_proc = pytest.mark.skipif(not os.path.isdir(f"/proc/{os.getpid()}/task"),
                                reason="Linux /proc")


@linux_proc
def test_sigterm_stops_a_gpu_count_and_prints_it_partial(triangles, tmp_path):
    """``gthinker count G triangle --mode gpu``: SIGTERM once the simulated kernel runs
    (its 256 threads are the process's) ends it with 143 and the partial count."""
    G, want = triangles
    path = tmp_path / "g.txt"
    gthinker.Graph.from_networkx(G).write(path)
    code, result, err, took = _signalled_cli(["count", path, "triangle", "--mode", "gpu"],
                                             signal.SIGTERM, 200)
    assert code == 143, err
    assert result["partial"] and result["stopped"] == "terminated"
    assert 0 <= result["count"] < want
    assert took < PROMPT


# ---- MCE's bitset kernels --------------------------------------------------------------


@pytest.fixture(scope="module")
def sparse():
    """G(600, 0.02) and its maximal cliques by size (networkx): the simulator's MCE kernel
    takes a minute over its 600 subtrees."""
    G = nx.gnp_random_graph(600, 0.02, seed=1)
    return G, Counter(len(c) for c in nx.find_cliques(G))


def _never_overcounted(histogram, sizes) -> bool:
    """No more maximal cliques of any size than networkx finds (``histogram``: size ->
    count, keys ints or strings)."""
    return all(c <= sizes.get(int(s), 0) for s, c in histogram.items())


@pytest.mark.parametrize("mode", ["gpu", "hybrid"])
def test_an_mce_gpu_run_stops_mid_kernel(sparse, mode):
    """gpu mode runs whole (one queue kernel searches every root); hybrid mode through the
    master, whose per-launch kernel has the roots (its chunk holds them all here)."""
    G, sizes = sparse
    res, took = _stopped_run(lambda token: mce.run(G, mode=mode, threads=1, stop=token))
    assert res.stopped == "stop" and res.mode == mode
    assert 0 <= res.count < sum(sizes.values())
    assert _never_overcounted(res.histogram, sizes)
    assert took < PROMPT


def test_a_stopped_bitset_device_drops_its_work_and_searches_exactly_after():
    """A stop before the launch: nothing searched, nothing left to do. A stop while the
    queue kernel runs (a node budget of 1: most of its work is records of its queue, some
    left unclaimed): the cliques found so far, never more. The same device, its flag
    cleared, then searches the graph exactly (the queue's slots were emptied)."""
    G = nx.compose(nx.gnp_random_graph(40, 0.1, seed=4), nx.gnp_random_graph(16, 0.7, seed=5))
    sizes = Counter(len(c) for c in nx.find_cliques(G))
    g = gthinker.as_graph(G).degeneracy_ordered()
    flag = StopFlag()
    flag.set()
    dev = bitsets_gpu.BitsetDevice(g, g.degeneracy + 2, blocks=1, budget=1, stop=flag)
    roots = bitsets_gpu.Work(np.arange(g.num_vertices)[::-1], np.zeros(0, np.int32),
                             np.zeros(1, np.int64))
    assert len(dev.run(roots)) == 0 and dev.histogram().sum() == 0
    flag.clear()
    watch = _StopWhenKernelRuns(flag, delay=0.5)
    assert len(dev.run(roots)) == 0
    watch.join()
    partial = dev.histogram()
    assert _never_overcounted(dict(enumerate(partial.tolist())), sizes)
    assert partial.sum() < sum(sizes.values())
    flag.clear()
    work = roots
    while len(work):
        work = dev.run(work)
    whole = dev.histogram() - partial
    assert {s: int(c) for s, c in enumerate(whole) if c} == sizes


@linux_proc
def test_sigint_stops_an_mce_gpu_run_and_prints_it_partial(sparse, tmp_path):
    """``gthinker mce G --mode gpu``: Ctrl-C once the queue kernel runs (its 64 simulated
    threads) ends it with 130 and the cliques found so far, marked partial."""
    G, sizes = sparse
    path = tmp_path / "g.txt"
    gthinker.Graph.from_networkx(G).write(path)
    code, result, err, took = _signalled_cli(["mce", path, "--mode", "gpu"], signal.SIGINT,
                                             64)
    assert code == 130, err
    assert result["partial"] and result["stopped"] == "interrupted"
    assert 0 <= result["count"] < sum(sizes.values())
    assert _never_overcounted(result["histogram"], sizes)
    assert took < PROMPT
