"""gSWORD's GPU kernel. On Numba's simulator (CI): the warp code on tiny inputs,
with exact checks (warp streaming's A-Res keeps every weight exact, the seed
fixes the result whatever the block layout, inheritance keeps lanes busy,
trawled prefixes are valid). With GTHINKER_TEST_REAL_GPU=1 also the
statistical tests of every optimisation against exact counts, which need
more samples than the simulator can draw."""

import networkx as nx
import numpy as np
import pytest
from conftest import REAL_GPU
from test_gsword import RUNS, Z, _Biased, _graph, _labeled, _z

import gthinker
from gthinker.apps import gsword, sm
from gthinker.apps.gsword.gpu import GPUSampler
from gthinker.gpu.simulator import fast_switching


def _batch(cg, n, every=0, first=0):
    return gsword.Batch(first, n, every, cg.num_positions)


def _run(est, data, query, n, blocks=1, every=0, seed=3, **kw):
    cg = gsword.candidate_graph(data, query)
    s = GPUSampler(est, cg, blocks=blocks, warps=1, **kw)
    b = _batch(cg, n, every)
    with fast_switching():
        s.run(b, seed)
    return cg, b


@pytest.mark.parametrize("streaming", [True, False])
def test_streaming_keeps_weights_exact(streaming):
    """Triangles in K_34 with Alley: 33 candidates at position 1 and 32 at
    position 2, so the warp streams (A-Res) and every sample is a match worth
    exactly 34 * 33 * 32."""
    g = gthinker.Graph.from_networkx(nx.complete_graph(34))
    _, b = _run(gsword.Alley, g, "triangle", 32, streaming=streaming)
    assert b.out_valid.tolist() == [32]
    assert b.out_sum[0] == pytest.approx(32 * 34 * 33 * 32, rel=1e-12)


def test_the_seed_fixes_the_result_whatever_the_layout():
    g = _graph()
    _, one = _run(gsword.WanderJoin, g, "house", 96, blocks=1)
    _, three = _run(gsword.WanderJoin, g, "house", 96, blocks=3)
    assert one.out_sum.tolist() == three.out_sum.tolist()
    assert one.out_valid.tolist() == three.out_valid.tolist()


def test_inheritance_keeps_lanes_busy():
    g = _graph()
    _, off = _run(gsword.WanderJoin, g, "house", 64, inheritance=False)
    _, on = _run(gsword.WanderJoin, g, "house", 64, inheritance=True)
    assert on.out_valid.sum() > off.out_valid.sum()
    # Lanes that inherited share their parent's weight: a round is worth what
    # its 32 samples are worth, not 32 times one of them.
    assert on.out_sum.sum() / 64 < 20 * sm.count(g, "house", mode="cpu", threads=1).count


def test_trawled_prefixes_are_valid_partial_matches():
    data, query = _labeled()
    cg, b = _run(gsword.Alley, data, query, 64, every=3)
    G = data.to_networkx()
    Q = query.to_networkx()
    got = np.flatnonzero(b.t_depth > 0)
    assert len(got) > 0
    for s in got:
        d = int(b.t_depth[s])
        assert 3 <= d < query.num_vertices
        m = [int(cg.candidates[p][b.t_inst[s, p]]) for p in range(d)]
        assert len(set(m)) == d
        for p in range(d):
            for q in range(p):
                if Q.has_edge(int(cg.order[p]), int(cg.order[q])):
                    assert G.has_edge(m[p], m[q])


def test_estimate_in_gpu_mode_end_to_end():
    g = _graph()
    r = gsword.estimate(g, "diamond", "alley", samples=64, mode="gpu", trawl=False, batches=1)
    assert r.mode == "gpu" and r.samples == 64 and r.inheritance and r.streaming
    assert r.estimate > 0 and r.ci95[0] < r.estimate < r.ci95[1]


# ---- statistics (real GPU only) --------------------------------------------------------

real = pytest.mark.skipif(not REAL_GPU, reason="needs GTHINKER_TEST_REAL_GPU=1 (too many "
                          "samples for the simulator)")


@real
@pytest.mark.parametrize("estimator", ["wj", "alley"])
@pytest.mark.parametrize("inheritance, streaming", [(False, False), (True, False), (True, True)])
def test_gpu_unbiased(estimator, inheritance, streaming):
    data = _graph()
    for q in ("diamond", "house"):
        exact = sm.count(data, q, mode="cpu", threads=2).count
        res = [gsword.estimate(data, q, estimator, samples=20000, seed=s, mode="gpu",
                               trawl=False, inheritance=inheritance, streaming=streaming)
               for s in range(RUNS)]
        z, ratio = _z(res, exact)
        assert abs(z) < Z, (q, z)
        assert 0.6 < ratio < 1.6, (q, ratio)


@real
@pytest.mark.parametrize("estimator", ["wj", "alley"])
def test_gpu_unbiased_labeled_with_trawling(estimator):
    data, query = _labeled()
    exact = sm.count(data, query, mode="cpu", threads=2).count
    res = [gsword.estimate(data, query, estimator, samples=20000, seed=s, mode="gpu",
                           trawl=True) for s in range(RUNS)]
    assert sum(r.trawl_stats["records"] for r in res) > 0
    z, _ = _z(res, exact)
    assert abs(z) < Z


@real
def test_gpu_catches_a_bias():
    data = _graph()
    exact = sm.count(data, "diamond", mode="cpu", threads=2).count
    res = [gsword.estimate(data, "diamond", _Biased, samples=20000, seed=s, mode="gpu",
                           trawl=False) for s in range(RUNS)]
    z, _ = _z(res, exact)
    assert z < -Z
