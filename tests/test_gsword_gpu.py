"""gSWORD's GPU kernel. On Numba's simulator (CI): the warp code on tiny inputs,
with exact checks (warp streaming's A-Res keeps every weight exact, the seed
fixes the result whatever the block layout, inheritance keeps lanes busy,
trawled prefixes are valid). With GTHINKER_TEST_REAL_GPU=1 also the
statistical tests of every optimisation against exact counts, which need
more samples than the simulator can draw."""

import json

import networkx as nx
import numpy as np
import pytest
from conftest import REAL_GPU, run_cli
from test_gsword import RUNS, Z, _Biased, _graph, _labeled, _z

import gthinker
from gthinker.apps import gsword, sm
from gthinker.apps.gsword.gpu import GPUSampler
from gthinker.apps.gsword.sampling import namespace
from gthinker.apps.gsword.trawl import WALK_STREAM
from gthinker.gpu.simulator import fast_switching


def _batch(cg, n, every=0, first=0):
    return gsword.Batch(first, n, every, cg.num_positions)


def _run(est, data, query, n, blocks=None, every=0, seed=3, walks=1, gpus=None, **kw):
    cg = gsword.candidate_graph(data, query)
    options = gthinker.RunOptions.from_keywords(blocks=blocks, threads_per_block=32, gpus=gpus)
    s = GPUSampler(est, cg, options=options, **kw)
    b = _batch(cg, n, every)
    with fast_switching():
        s.run(b, seed, walks)
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


@pytest.mark.filterwarnings("ignore:.*Grid size.*will likely result in GPU under")  # on purpose
def test_the_seed_fixes_the_result_whatever_the_layout():
    g = _graph()
    _, one = _run(gsword.WanderJoin, g, "house", 96, blocks=1)
    _, three = _run(gsword.WanderJoin, g, "house", 96, blocks=3)
    assert one.out_sum.tolist() == three.out_sum.tolist()
    assert one.out_valid.tolist() == three.out_valid.tolist()


def _two():
    """Two GPUs: devices 0 and 1, or two samplers on the simulator's one device."""
    return [0, 1] if gthinker.gpu.visible_devices() >= 2 else [0, 0]


@pytest.mark.parametrize("estimator", [gsword.WanderJoin, gsword.Alley])
def test_two_gpus_share_the_rounds_and_draw_the_same_samples(estimator):
    """--gpus: each GPU samples its share of a batch's rounds (and of the trawled
    samples); a sample's value depends on the seed and its index only, so two GPUs give
    one GPU's round sums and trawled prefixes, to the bit."""
    data, query = _labeled()
    _, one = _run(estimator, data, query, 96, every=5, seed=4, walks=2)
    _, two = _run(estimator, data, query, 96, every=5, seed=4, walks=2, gpus=_two())
    for field in ("out_sum", "out_valid", "t_inst", "t_depth", "t_weight", "walked"):
        assert getattr(two, field).tolist() == getattr(one, field).tolist(), field
    assert one.out_valid.sum() > 0 and (one.t_depth > 0).sum() > 0


def test_each_gpus_sampler_is_an_engine_with_its_results():
    """A SamplingEngine per device, each with its share's rounds and valid samples."""
    data, query = _labeled()
    cg = gsword.candidate_graph(data, query)
    options = gthinker.RunOptions.from_keywords(threads_per_block=32, gpus=_two())
    sampler = GPUSampler(gsword.WanderJoin, cg, options=options)
    b = _batch(cg, 96)
    with fast_switching():
        sampler.run(b, 6)
    assert [e.device for e in sampler.engines] == _two()
    assert all(isinstance(e, gthinker.extending.GPUEngine) for e in sampler.engines)
    rounds, valid = sum(e.results().counters for e in sampler.engines).tolist()
    assert rounds == b.rounds == 3 and valid == b.out_valid.sum() > 0


def test_estimate_on_two_gpus():
    with fast_switching():
        one = gsword.estimate(_graph(), "diamond", "alley", samples=128, mode="gpu",
                              trawl=False, batches=2, gpus=1)
        two = gsword.estimate(_graph(), "diamond", "alley", samples=128, mode="gpu",
                              trawl=False, batches=2, gpus=_two())
    assert two.estimate == one.estimate and two.stderr == one.stderr
    assert [s["device_id"] for s in two.stats["gpus"]] == _two()
    assert two.stats["gpu"]["rounds"] == 4 == sum(s["rounds"] for s in two.stats["gpus"])
    assert [s["rounds"] for s in two.stats["gpus"]] == [2, 2]
    valid = round(two.valid_ratio * two.samples)  # full matches drawn, on both GPUs
    assert two.stats["gpu"]["valid"] == one.stats["gpu"]["valid"] == valid > 0
    with pytest.raises(gthinker.DeviceUnavailableError, match="--gpus asks for"):
        gsword.estimate(_graph(), "diamond", mode="gpu", samples=64,
                        gpus=gthinker.gpu.visible_devices() + 1)


def test_the_command_takes_gpus(tmp_path):
    data, query = _labeled()
    files = [tmp_path / "data.graph", tmp_path / "query.graph"]
    data.write(files[0])
    query.write(files[1])
    common = [*files, "--mode", "gpu", "--samples", "64", "--no-trawl", "--json", "-q"]
    r = run_cli("gsword", *common, "--gpus", ",".join(map(str, _two())))
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert [s["device_id"] for s in out["stats"]["gpus"]] == _two()
    one = gsword.estimate(data, query, mode="gpu", samples=64, trawl=False)
    assert out["estimate"] == one.estimate and out["samples"] == 64
    r = run_cli("gsword", *common, "--gpus", gthinker.gpu.visible_devices() + 1)
    assert r.returncode == 2 and "--gpus asks for" in r.stderr


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
    got = np.flatnonzero((b.t_depth > 0) & (b.t_depth < query.num_vertices))
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


@pytest.mark.parametrize("estimator", [gsword.WanderJoin, gsword.Alley])
def test_trawled_samples_and_their_walks_are_the_cpus(estimator):
    """The GPU's trawl kernel draws the prefixes the CPU sampler stops at, and its
    walks kernel the CPU's cut-off estimates, to the bit (same seed)."""
    data, query = _labeled()
    nq = query.num_vertices
    cg, gpu = _run(estimator, data, query, 96, every=2, seed=5, walks=3)
    cpu = _batch(cg, 96, 2)
    ns = namespace(estimator, "cpu")
    ns["_sample_rounds"](cg.cgp, cg.cgi, 5, 0, 96, 0, cpu.rounds, 2, estimator.refines,
                         cpu.out_sum, cpu.out_valid, cpu.t_inst, cpu.t_depth, cpu.t_weight)
    stopped = (gpu.t_depth > 0) & (gpu.t_depth < nq)  # the CPU notes only these
    assert stopped.sum() > 5
    assert cpu.t_depth.tolist() == np.where(stopped, gpu.t_depth, 0).tolist()
    assert (cpu.t_inst[stopped] == gpu.t_inst[stopped]).all()
    assert cpu.t_weight[stopped].tolist() == gpu.t_weight[stopped].tolist()
    slots = np.flatnonzero(stopped).astype(np.int64)
    walked = np.empty(slots.size)
    ns["_walk_many"](cg.cgp, cg.cgi, cpu.t_inst, cpu.t_depth, slots, np.int64(5 ^ WALK_STREAM),
                     np.int64(0), np.int64(2), np.int64(3), estimator.refines, walked)
    assert walked.tolist() == gpu.walked[slots].tolist()


def test_gpu_pipeline_gives_the_cpus_estimate():
    """Without inheritance and streaming the GPU draws the CPU's samples, and with
    windows long enough for every enumeration to finish, trawling gives the same
    values: the same estimate (the GPU's pipeline adds a trawled sample's cut-off
    estimate, then the correction to its exact value)."""
    data, query = _labeled()
    kw = dict(samples=192, seed=2, trawl=True, batches=3, trawl_samples=16, trawl_window=30.0)
    with fast_switching():
        gpu = gsword.estimate(data, query, "wj", mode="gpu", inheritance=False,
                              streaming=False, **kw)
    cpu = gsword.estimate(data, query, "wj", mode="cpu", threads=2, **kw)
    assert gpu.trawl_stats["records"] == cpu.trawl_stats["records"] > 0
    assert gpu.trawl_stats["finished"] == gpu.trawl_stats["records"]
    assert gpu.trawl_stats["matches"] == cpu.trawl_stats["matches"]
    assert gpu.estimate == pytest.approx(cpu.estimate, rel=1e-12)
    assert gpu.valid_ratio == cpu.valid_ratio and gpu.stopped is None


def test_no_trawl_job_where_the_gpu_is_done_too_soon(monkeypatch):
    """Batches that will sample for less than MIN_TRAWL_WINDOW start no enumeration:
    every trawled sample takes its walk estimate (the simulator's batch times mean
    nothing, so the first batch's is set here)."""
    data, query = _labeled()
    monkeypatch.setattr(GPUSampler, "batch_seconds", lambda self, batch: 1e-6)
    with fast_switching():
        r = gsword.estimate(data, query, "wj", mode="gpu", samples=192, seed=2, batches=3,
                            trawl_samples=16)
    assert r.trawl_stats["records"] > 0 and r.trawl_stats["finished"] == 0
    assert r.trawl_stats["cut_off"] == r.trawl_stats["records"]
    assert r.trawl_stats["trawl_seconds"] == 0 and r.estimate > 0


def test_gpu_stops_one_batch_after_the_rule_says_so():
    """The GPU launches a batch before it waits for the one before: a rule met
    after the first batch keeps the second, already launched."""
    with fast_switching():
        r = gsword.estimate(_graph(), "diamond", "wj", samples=256, mode="gpu", trawl=False,
                            batches=4, time_limit=1e-6)
    assert r.stopped == "time_limit" and r.samples == 128 and r.batches == 2


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
