"""The GPU worker and GPUContext API: buffer primitives under concurrency, host
subgraph buffering, deferral, MCE on the GPU against networkx and the CPU app,
and every error path.

Kernels run on Numba's CUDA simulator with the warp-intrinsic shim
(tests/conftest.py turns it on); with GTHINKER_TEST_REAL_GPU=1 the same tests
run on a real GPU.
"""

import os
import subprocess
import sys

import networkx as nx
import numpy as np
import pytest
from numba import cuda

import gthinker
from gthinker import gpu
from gthinker.apps import mce
from gthinker.errors import DeviceUnavailableError, GThinkerError, TaskDefinitionError
from gthinker.gpu import device_helpers as dev
from gthinker.gpu.worker import HostStack

BIG = 1 << 40
REAL_GPU = os.environ.get("GTHINKER_TEST_REAL_GPU") == "1"


def _ctrl(**slots):
    c = np.zeros(dev.CTRL_SIZE, np.int64)
    c[dev.ETA] = c[dev.VOL_LIMIT] = c[dev.CAPV] = c[dev.CAPR] = c[dev.QCAP] = BIG
    for name, value in slots.items():
        c[getattr(dev, name)] = value
    return c


# ---- buffer primitives -------------------------------------------------------------


@cuda.jit
def _take_all(ctrl, defer, seen_level, seen_defer):
    """Every warp: pop deferred entries, then read the level, until both run dry."""
    lane = cuda.threadIdx.x & 31
    while True:
        r = -1
        src = 0
        if lane == 0:
            k = gpu.pop(ctrl, dev.NDEFER_IN)
            if k >= 0:
                r = defer[k]
                src = 1
            else:
                r = gpu.next_record(ctrl)
        r = gpu.warp_broadcast(r, 0)
        src = gpu.warp_broadcast(src, 0)
        if r < 0:
            break
        if lane == 0:
            if src == 1:
                cuda.atomic.add(seen_defer, r, 1)
            else:
                cuda.atomic.add(seen_level, r, 1)


def test_next_and_pop_hand_out_every_subgraph_exactly_once():
    n_level, n_defer = 120, 40
    ctrl = _ctrl(OHEAD=0, LEVEL_END=n_level, NDEFER_IN=n_defer)
    defer = np.arange(n_defer, dtype=np.int64)[::-1].copy()
    seen_level = np.zeros(n_level, np.int64)
    seen_defer = np.zeros(n_defer, np.int64)
    _take_all[2, 64](ctrl, defer, seen_level, seen_defer)
    assert (seen_level == 1).all()
    assert (seen_defer == 1).all()
    assert ctrl[dev.NDEFER_IN] == 0  # never below zero


def test_next_stops_at_eta_entries():
    ctrl = _ctrl(OHEAD=0, LEVEL_END=100, QTAIL=5, ETA=5)
    seen = np.zeros(100, np.int64)
    _take_all[1, 32](ctrl, np.zeros(1, np.int64), seen, np.zeros(1, np.int64))
    assert seen.sum() == 0


@cuda.jit
def _append_each(vert, offs, ctrl, failed, use_warp):
    tid = cuda.grid(1)
    n = tid % 5 + 1
    out = gpu.Appender(vert, offs, ctrl, failed, tid)
    failed[tid] = 0
    if use_warp:
        pos = gpu.warp_append(out, n)
    else:
        pos = gpu.append(out, n)
    if pos >= 0:
        for i in range(n):
            vert[pos + i] = tid


@pytest.mark.parametrize("use_warp", [False, True])
@pytest.mark.parametrize("capv", [BIG, 150])
def test_concurrent_appends_keep_every_subgraph_whole(use_warp, capv):
    threads = 128
    need = sum(t % 5 + 1 for t in range(threads))  # 384 vertices in all
    vert = np.full(need + 8, -1, np.int32)
    offs = np.full((threads + 4, 2), -1, np.int64)
    ctrl = _ctrl(CAPV=min(capv, len(vert)), CAPR=len(offs))
    failed = np.zeros(threads, np.int32)
    _append_each[2, 64](vert, offs, ctrl, failed, use_warp)
    n_rec = min(int(ctrl[dev.OTAIL]), len(offs))
    owners = []
    for s, e in offs[:n_rec]:
        block = vert[s:e]
        assert len(block) and (block == block[0]).all()  # one writer per subgraph
        assert len(block) == block[0] % 5 + 1
        owners.append(int(block[0]))
    assert len(set(owners)) == len(owners)  # no subgraph twice
    assert set(owners) | set(np.flatnonzero(failed)) == set(range(threads))
    assert not set(owners) & set(np.flatnonzero(failed))
    if capv == BIG:
        assert failed.sum() == 0
    else:
        assert failed.sum() > 0  # the buffer ran out; those callers were told


@cuda.jit
def _push_each(q_rec, q_a, q_b, ctrl, wfailed, sizes):
    warp = cuda.grid(1) >> 5
    lane = cuda.threadIdx.x & 31
    if lane == 0:
        wfailed[warp] = 0
    cuda.syncwarp(gpu.FULL_MASK)
    k = sizes[warp]
    q = gpu.Queue(q_rec, q_a, q_b, ctrl, wfailed, warp, 1000 + warp, 3)
    base = gpu.push(q, k)
    if base >= 0:
        for i in range(lane, k, 32):
            q_a[base + i] = warp
            q_b[base + i] = i


def test_queue_push_is_all_or_nothing_per_subgraph():
    warps = 6
    sizes = np.array([5, 40, 3, 33, 7, 20], np.int64)
    qcap = 60
    q_rec = np.full(qcap, -7, np.int64)
    q_a = np.zeros(qcap, np.int32)
    q_b = np.zeros(qcap, np.int32)
    ctrl = _ctrl(QCAP=qcap)
    wfailed = np.zeros(warps, np.int32)
    _push_each[2, 96](q_rec, q_a, q_b, ctrl, wfailed, sizes)
    used = q_rec[: min(int(ctrl[dev.QTAIL]), qcap)]
    for w in range(warps):
        mine = np.flatnonzero(used == 1000 + w)
        if wfailed[w]:
            assert len(mine) == 0
        else:
            assert len(mine) == sizes[w]
            assert (q_a[mine] == w).all() and sorted(q_b[mine]) == list(range(sizes[w]))
    assert set(used) <= {-1} | {1000 + w for w in range(warps)}  # no torn entries
    assert wfailed.sum() >= 1  # 108 entries cannot fit in 60
    assert ctrl[dev.QVOL] == 4 * sum(s for s, f in zip(sizes, wfailed, strict=True) if not f)


@cuda.jit
def _warp_ops(vals, out):
    lane = cuda.threadIdx.x & 31
    v = vals[cuda.grid(1)]
    below, total = gpu.warp_prefix(v % 3 == 0)
    base = (cuda.grid(1) >> 5) * 32
    out[base + lane, 0] = gpu.warp_sum(v)
    out[base + lane, 1] = gpu.warp_max(v)
    out[base + lane, 2] = below
    out[base + lane, 3] = total
    out[base + lane, 4] = gpu.warp_broadcast(v, 7)
    out[base + lane, 5] = 1 if gpu.warp_any(v == 11) else 0


def test_warp_helpers():
    rng = np.random.default_rng(3)
    vals = rng.integers(0, 50, 64).astype(np.int64)
    out = np.zeros((64, 6), np.int64)
    _warp_ops[1, 64](vals, out)
    for w in range(2):
        v = vals[32 * w : 32 * w + 32]
        o = out[32 * w : 32 * w + 32]
        assert (o[:, 0] == v.sum()).all() and (o[:, 1] == v.max()).all()
        assert list(o[:, 2]) == [int((v[:i] % 3 == 0).sum()) for i in range(32)]
        assert (o[:, 3] == (v % 3 == 0).sum()).all()
        assert (o[:, 4] == v[7]).all()
        assert (o[:, 5] == int((v == 11).any())).all()


def _shared_arrays_asked_at_once(shared, threads):
    """The arrays ``threads`` threads got from ``shared.array`` (one line), started together."""
    import threading

    start = threading.Barrier(threads)
    got = []

    def ask():
        start.wait()
        got.append(shared.array((4,), np.int32))

    running = [threading.Thread(target=ask) for _ in range(threads)]
    for t in running:
        t.start()
    for t in running:
        t.join()
    return got


@pytest.mark.skipif(REAL_GPU, reason="the simulator's shared memory")
def test_simulated_shared_array_is_one_array_for_every_thread():
    """Numba's simulator creates a block's shared array when the first thread asks for it,
    without a lock: two threads could each create one (seen as garbage read by one lane of
    the depth-first matcher in CI). gthinker's shim creates it under a lock."""
    from numba.cuda.simulator import kernelapi

    from gthinker.gpu.availability import numba_cuda

    numba_cuda()  # installs the shim, as every GPU job does first
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # threads switch as often as they can
    try:
        for _ in range(100):
            got = _shared_arrays_asked_at_once(kernelapi.FakeCUDAShared(0), 16)
            assert len(got) == 16 and all(a is got[0] for a in got)
    finally:
        sys.setswitchinterval(old)


# ---- host stack H ---------------------------------------------------------------------


def test_host_stack_is_lifo_and_bounded():
    h = HostStack(limit_bytes=10_000)
    h.push(np.arange(6, dtype=np.int32), np.array([0, 2, 6]))
    h.push(np.arange(10, 13, dtype=np.int32), np.array([0, 1, 2, 3]))
    data, starts = h.pop(2, 100)
    assert data.tolist() == [11, 12] and starts.tolist() == [0, 1, 2]
    data, starts = h.pop(5, 100)
    assert data.tolist() == [10] and len(h) == 2
    data, starts = h.pop(5, 3)  # vertex bound: only the last record
    assert data.tolist() == [2, 3, 4, 5] and len(h) == 1
    assert h.peak_records == 5
    with pytest.raises(GThinkerError, match="host subgraph stack H"):
        h.push(np.zeros(5000, np.int32), np.array([0, 5000]))


def test_host_stack_keeps_blocks_stolen_from_s_unmovable():
    h = HostStack()
    assert not h.top_movable  # empty
    h.push(np.arange(4, dtype=np.int32), np.array([0, 2, 4]), movable=False)  # from S
    assert not h.top_movable
    h.push(np.arange(7, 9, dtype=np.int32), np.array([0, 2]))  # a level of the device
    assert h.top_movable
    assert h.pop(5, 100)[0].tolist() == [7, 8]
    assert not h.top_movable and len(h) == 2
    data, starts = h.pop(1, 100)  # partial pops keep the flag
    assert data.tolist() == [2, 3] and not h.top_movable and len(h) == 1


# ---- MCE on the GPU -------------------------------------------------------------------


def _cliques(G):
    return sum(1 for _ in nx.find_cliques(G))


GRAPHS = {
    "gnp_sparse": lambda: nx.gnp_random_graph(40, 0.12, seed=1),
    "gnp_dense": lambda: nx.gnp_random_graph(18, 0.5, seed=2),
    "planted": lambda: nx.compose(nx.complete_graph(9), nx.gnp_random_graph(30, 0.1, seed=4)),
    "star_and_isolated": lambda: nx.compose(nx.star_graph(12), nx.empty_graph(16)),
    "single_edge": lambda: nx.Graph([(0, 1)]),
}


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_mce_gpu_matches_networkx_and_cpu(name):
    G = GRAPHS[name]()
    r = mce.run(G, mode="gpu")
    c = mce.run(G, threads=2)
    assert r.count == _cliques(G)
    assert r.histogram == c.histogram and r.max_size == c.max_size
    assert r.mode == "gpu" and r.threads == 0


def test_mce_gpu_empty_graph():
    assert mce.run(nx.Graph(), mode="gpu").count == 0


def test_tiny_device_buffer_overflows_to_host_and_stays_exact():
    G = nx.gnp_random_graph(26, 0.4, seed=7)
    r = mce.run(G, mode="gpu", gpu_engine="levels",
                buffer_bytes=1100, eta_per_warp=4)
    s = r.stats["gpu"]
    assert s["to_host"] > 0 and s["host_stack_pops"] > 0 and s["retries"] > 0
    assert s["host_stack_peak_records"] > 0 and s["buffer_vertices"] == 220
    assert r.count == _cliques(G)


# One block on purpose (real-GPU runs): Numba-CUDA says such a grid under-uses the GPU.
_ONE_BLOCK = pytest.mark.filterwarnings("ignore:.*Grid size.*will likely result in GPU under")


@_ONE_BLOCK
def test_full_queue_defers_subgraphs_and_stays_exact():
    G = nx.gnp_random_graph(22, 0.4, seed=5)
    # One block of two warps, as on the simulator, so that a GPU run defers too.
    r = mce.run(G, mode="gpu", gpu_engine="levels", eta_per_warp=1, fanout=1, blocks=1,
                threads_per_block=64)
    assert r.stats["gpu"]["deferred"] > 0 and r.stats["gpu"]["levels"] > 10
    assert r.count == _cliques(G)


def test_chunks_from_the_master():
    G = nx.gnp_random_graph(30, 0.2, seed=9)
    r = mce.run(G, mode="gpu", gpu_chunk=7, gpu_engine="levels")
    assert r.stats["gpu"]["assignments"] == 5
    assert r.count == _cliques(G)


def test_buffer_too_small_for_the_graph_is_a_clear_error():
    with pytest.raises(GThinkerError, match="too small"):
        mce.run(nx.star_graph(200), mode="gpu", gpu_engine="levels",
                buffer_bytes=500)


def test_gpu_mode_refuses_output_listing(tmp_path):
    with pytest.raises(ValueError, match="CPU only"):
        mce.run(nx.path_graph(3), mode="gpu", output=tmp_path / "c.txt")


# ---- a user's GPU app -----------------------------------------------------------------


class TrianglesGPU(gthinker.GPUContext):
    """Triangles u < v < w: level 1 = one subgraph [u] per vertex; no process
    (one queue entry per subgraph); extend counts the triangles with smallest u."""

    counters = ("triangles",)

    @staticmethod
    def generate_initial_tasks(g, u, out):
        pos = gpu.append(out, 1)  # one subgraph [u] per vertex
        if pos >= 0:
            out.vertices[pos] = u

    @staticmethod
    def extend(g, rec, a, b, out):
        u = rec[0]
        lo = g.indptr[u]
        hi = g.indptr[u + 1]
        for j in range(lo, hi):
            v = g.indices[j]
            if v <= u:
                continue
            for k in range(g.indptr[v], g.indptr[v + 1]):
                w = g.indices[k]
                if w > v and gpu.contains(g.indices, lo, hi, w):
                    gpu.count(g, 0, 1)


def test_user_app_without_process():
    G = nx.gnp_random_graph(40, 0.2, seed=11)
    r = gthinker.run(None, gthinker.Graph.from_networkx(G), mode="gpu", gpu=TrianglesGPU)
    assert r.counters["triangles"] == sum(nx.triangles(G).values()) // 3


class Fanout(gthinker.GPUContext):
    counters = ("n",)

    @staticmethod
    def generate_initial_tasks(g, v, out):
        pos = gpu.append(out, 1)
        if pos >= 0:
            out.vertices[pos] = v

    @staticmethod
    def process(g, rec, q):
        base = gpu.push(q, 50)
        if base >= 0:
            for i in range(gpu.lane_id(), 50, 32):
                q.a[base + i] = i
        return len(rec)

    @staticmethod
    def extend(g, rec, a, b, out):
        gpu.count(g, 0, 1)


@_ONE_BLOCK
def test_process_fanout_larger_than_the_queue_is_a_clear_error():
    g = gthinker.Graph.from_networkx(nx.path_graph(4))
    assert gthinker.run(None, g, mode="gpu", gpu=Fanout).counters["n"] == 200
    with pytest.raises(GThinkerError, match="queue too small"):
        gthinker.run(None, g, mode="gpu", gpu=Fanout,
                     gpu_options={"eta_per_warp": 1, "fanout": 10, "blocks": 1,
                                  "threads_per_block": 64})


def test_gpu_context_definition_errors():
    with pytest.raises(TaskDefinitionError, match="staticmethod"):
        type("Bad", (gthinker.GPUContext,), {"extend": lambda g, r, a, b, o: None})
    with pytest.raises(TaskDefinitionError, match="expected 5"):
        type("Bad", (gthinker.GPUContext,), {"extend": staticmethod(lambda g, r, o: None)})
    with pytest.raises(TaskDefinitionError, match="must define extend"):
        gthinker.run(None, nx.path_graph(3), mode="gpu", gpu=type(
            "NoExtend", (gthinker.GPUContext,),
            {"generate_initial_tasks": TrianglesGPU.__dict__["generate_initial_tasks"]}))


def test_run_argument_errors():
    with pytest.raises(TypeError, match="GPUContext subclass"):
        gthinker.run(None, nx.path_graph(3), mode="gpu")
    with pytest.raises(TypeError, match="differ"):
        gthinker.run(mce.MaximalCliques, nx.path_graph(3), mode="gpu", gpu=TrianglesGPU)
    with pytest.raises(TypeError, match="required in mode='cpu'"):
        gthinker.run(None, nx.path_graph(3))


# ---- no GPU --------------------------------------------------------------------------


def test_missing_numba_cuda_is_reported(monkeypatch):
    monkeypatch.setattr(gthinker.gpu.availability, "_no_driver", lambda: "")
    monkeypatch.setattr(gthinker.gpu.availability, "_cuda",
                        {"module": None, "error": "ImportError: no module"})
    with pytest.raises(DeviceUnavailableError, match="--mode cpu"):
        mce.run(nx.path_graph(3), mode="gpu")


@pytest.mark.skipif(REAL_GPU, reason="this machine has a GPU")
def test_cli_gpu_mode_without_a_gpu_stops_at_once(tmp_path):
    path = tmp_path / "g.txt"
    path.write_text("0 1\n1 2\n")
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    r = subprocess.run([sys.executable, "-m", "gthinker", "mce", str(path), "--mode", "gpu"],
                       capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert r.returncode == 2
    assert "CUDA GPU" in r.stderr and "--mode cpu" in r.stderr
    assert "Traceback" not in r.stderr and "loaded" not in r.stderr  # before reading the graph


def test_cli_gpu_mode_on_the_simulator(tmp_path):
    G = nx.gnp_random_graph(25, 0.2, seed=2)
    path = tmp_path / "g.txt"
    path.write_text("".join(f"{u} {v}\n" for u, v in G.edges))
    r = subprocess.run([sys.executable, "-m", "gthinker", "mce", str(path), "--mode", "gpu",
                        "--json", "-q"], capture_output=True, text=True, cwd=tmp_path,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    import json

    out = json.loads(r.stdout)
    assert out["count"] == _cliques(G) and out["mode"] == "gpu"
    assert out["stats"]["gpu"]["launches"] >= 1
