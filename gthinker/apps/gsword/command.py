"""``gthinker gsword``: sampling estimates as the command line and the cluster see them."""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

import numpy as np

from gthinker.extending import DATA_AND_QUERY, App, Request, max_compile

from ..matching.patterns import portable_query
from .options import ESTIMATORS, GSwordOptions

EPILOG = """\
examples:
  gthinker gsword data.graph query.graph                  # Alley, 10^6 samples
  gthinker gsword data.graph queries/ --estimator wj --json
  gthinker gsword g.txt 4-cycle --samples 100000 --seed 7 --mode cpu
  gthinker gsword data.graph query.graph --target-error 0.01 --samples 100000000

Estimates the number of embeddings (as `gthinker sm` counts them) by random
walks on the candidate graph: WanderJoin (wj) or Alley. The estimate is
unbiased; the output gives its standard error and a 95% confidence interval.
With --trawl (default), some samples stop after a few vertices and the CPU
workers count the rest of their matches exactly while the next batch is
sampled (this helps where valid samples are rare). --mode gpu samples on the
GPU (sample inheritance and warp streaming; --no-inheritance and
--no-streaming turn them off); --mode cpu on all CPU cores.
--target-error REL stops once the 95% interval is within REL of the estimate
and --time-limit SECONDS once that much time has passed (both checked after
each batch, and on the CPU the time limit within a batch too; --samples is then
the most to draw); the result says what stopped it.
"""

class GSwordRequest(Request):
    """gSWORD estimates: roots are rounds of ``ROUND`` samples. Sample ``i``'s value
    depends only on the seed and ``i``, so a range of rounds gives the same round
    sums on any node, and the merged rounds give the estimate (and standard error)
    of one process bit for bit (without trawling, whose cut-offs depend on timing;
    with it, each range trawls on its own and the estimate is as valid, not the
    same)."""

    def __init__(self, query, **keywords):
        super().__init__(portable_query(query), **keywords)
        name = self.options.name
        self.label = name if name is not None else (query if isinstance(query, str)
                                                    else "query")

    def call(self, graph, query, **keywords):
        from . import app

        if keywords.get("name") is None:
            keywords["name"] = self.label
        return app.estimate(graph, query, **keywords)

    def prepare(self, graph, threads) -> None:
        """Nothing: a range of no rounds is no job (each range builds what it samples)."""

    def weights(self, graph):
        from .sampling import ROUND

        return np.ones((self.options.samples + ROUND - 1) // ROUND)

    def run_range(self, graph, lo, hi, threads, output, stop):
        from .sampling import ROUND

        first = lo * ROUND
        n = min(hi * ROUND, self.options.samples) - first
        batches = self.options.batches
        options = replace(self.options, samples=n, name=self.label, exact_if_cheaper=False,
                          batches=None if batches is None else min(batches, n))
        part = GSwordRequest(self.inputs[0], options=options, **self.rest)
        res = part.run(graph, threads=threads, stop=stop, first_sample=first)
        return {"rounds": res.rounds, "result": res, "stopped": res.stopped,
                "seconds": res.seconds, "compile_seconds": res.compile_seconds,
                "threads": res.threads}

    def merge(self, parts, seconds, threads, stats):
        from . import app

        first = parts[0]["result"]
        batches = [SimpleNamespace(first=f, n=n, out_sum=s, out_valid=v)
                   for p in parts for (f, n, s, v) in p["rounds"]]
        if not self.options.trawl:  # one batch, as one process samples it
            batches.sort(key=lambda b: b.first)
            batches = [SimpleNamespace(
                first=0, n=sum(b.n for b in batches),
                out_sum=np.concatenate([b.out_sum for b in batches]),
                out_valid=np.concatenate([b.out_valid for b in batches]))] if batches else []
        total = sum(b.n for b in batches)
        return app.GSwordResult(
            query=self.label, samples=total, **app.summary(batches),
            seconds=seconds, samples_per_second=(
                None if first.samples_per_second is None or seconds <= 0 else total / seconds),
            sampling_seconds=sum(p["result"].sampling_seconds for p in parts),
            build_seconds=max(p["result"].build_seconds for p in parts),
            estimator=first.estimator, mode=first.mode, trawl=first.trawl,
            batches=len(batches), seed=self.options.seed, inheritance=first.inheritance,
            streaming=first.streaming, order=first.order, candidates=first.candidates,
            trawl_stats=_summed([p["result"].trawl_stats for p in parts]), threads=threads,
            compile_seconds=max_compile(parts),
            rounds=[(b.first, b.n, b.out_sum, b.out_valid) for b in batches])


def _summed(dicts):
    out: dict = {}
    for d in dicts:
        for k, v in d.items():
            out[k] = out.get(k, 0) + v
    return out


def describe(res, label=None) -> list[str]:
    name = label if label is not None else res.query
    if res.estimate is None:  # stopped before its first batch ended: the reason is its warning
        return [f"{name}: no estimate: {'; '.join(res.warnings)}, total {res.seconds:.2f}s"]
    said = [f"  labels {res.labels}"] if res.labels else []
    if res.exact is not None:
        return [f"{name}: {int(res.estimate):,} embeddings, {res.exact}; total "
                f"{res.seconds:.2f}s"] + said
    if res.samples_per_second is None:
        return [f"{name}: 0 embeddings (a query vertex has no candidate in the data graph; "
                f"nothing to sample), total {res.seconds:.2f}s"]
    lo, hi = res.ci95
    lines = [f"{name}: about {res.estimate:.6g} embeddings (95% CI {lo:.4g} .. {hi:.4g}, "
             f"stderr {res.stderr:.3g}); {res.samples:,} samples in "
             f"{res.sampling_seconds:.3f}s ({res.samples_per_second:,.0f}/s, "
             f"{res.estimator}, {res.mode}), valid ratio {res.valid_ratio:.3g}, "
             f"total {res.seconds:.2f}s"]
    if res.stopped in _STOPPED:
        lines.append(f"  stopped {_STOPPED[res.stopped]}")
    return lines + said + [f"  unreliable interval: {warning}" for warning in res.warnings]


_STOPPED = {"target_error": "early: the interval was within the target error",
            "time_limit": "early: the time limit was reached"}


def progress(p) -> str:
    return (f"  batch {p['batch']}/{p['batches']}: {p['samples']:,} samples, "
            f"estimate {p['estimate']:.4g}")


def warmup(graph, gpu: bool):
    from . import app

    modes = ("cpu", "gpu") if gpu else ("cpu",)
    return [(f"gsword {name} ({mode})", lambda name=name, mode=mode: app.estimate(
        graph, "4-cycle", estimator=name, samples=20_000, mode=mode,
        **({"threads": 1} if mode == "cpu" else {})))
        for mode in modes for name in ESTIMATORS]


APP = App(
    name="gsword",
    summary="estimate subgraph counts by sampling (gSWORD)",
    description="Estimate the number of embeddings of a query graph in a data graph by "
                "sampling (WanderJoin or Alley), on the GPU or all CPU cores.",
    epilog=EPILOG,
    inputs=DATA_AND_QUERY,
    options=GSwordOptions,
    request=GSwordRequest,
    describe=describe,
    progress=progress,
    warmup=warmup,
)
