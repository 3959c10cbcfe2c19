"""``gthinker gsword``: sampling estimates as the command line and the cluster see them."""

from __future__ import annotations

import argparse
from types import SimpleNamespace

import numpy as np

from gthinker.extending import DATA_AND_QUERY, App, Request, max_compile, positive_int_arg

from ..sm.command import as_query

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
and --time-budget SECONDS once that much time has passed (both checked after
each batch; --samples is then the most to draw); the result says what stopped
it.
"""

#: The keywords of :func:`gthinker.apps.gsword.estimate` a request keeps as its own.
_OWN = ("estimator", "samples", "trawl", "batches", "seed", "order", "name", "target_error")


class GSwordRequest(Request):
    """gSWORD estimates: roots are rounds of ``ROUND`` samples. Sample ``i``'s value
    depends only on the seed and ``i``, so a range of rounds gives the same round
    sums on any node, and the merged rounds give the estimate (and standard error)
    of one process bit for bit (without trawling, whose cut-offs depend on timing;
    with it, each range trawls on its own and the estimate is as valid, not the
    same)."""

    def __init__(self, query, estimator="alley", samples=1_000_000, trawl=True, batches=None,
                 seed=0, order="quicksi", name=None, target_error=None, **kw):
        super().__init__(**kw)
        from gthinker.extending import positive_int

        from .sampling import MAX_SAMPLES

        self.label = name if name is not None else (query if isinstance(query, str)
                                                    else "query")
        self.query, self.estimator = as_query(query), estimator
        self.samples = positive_int("samples", samples, MAX_SAMPLES)
        self.trawl, self.batches, self.seed, self.order = trawl, batches, seed, order
        self.target_error = target_error

    def run(self, graph, *, threads=None, output=None, stop=None, progress=None,
            first_sample=0, **inputs):
        from . import app

        options = dict(self.options, **inputs)
        if self.time_budget is not None:
            options["time_budget"] = self.time_budget
        return app.estimate(graph, self.query, self.estimator, samples=self.samples,
                            mode=self.mode, trawl=self.trawl, batches=self.batches,
                            seed=self.seed, threads=threads, order=self.order, name=self.label,
                            target_error=self.target_error, first_sample=first_sample,
                            progress=progress, stop=stop, **options)

    def prepare(self, graph, threads) -> None:
        """Nothing: a range of no rounds is no job (each range builds what it samples)."""

    def weights(self, graph):
        from .sampling import ROUND

        return np.ones((self.samples + ROUND - 1) // ROUND)

    def run_range(self, graph, lo, hi, threads, output, stop):
        from .sampling import ROUND

        first = lo * ROUND
        n = min(hi * ROUND, self.samples) - first
        part = GSwordRequest(self.query, self.estimator, n, self.trawl,
                             None if self.batches is None else min(self.batches, n),
                             self.seed, self.order, self.label, self.target_error,
                             mode=self.mode, time_budget=self.time_budget, options=self.options)
        res = part.run(graph, threads=threads, stop=stop, first_sample=first)
        return {"rounds": res.rounds, "result": res, "stopped": res.stopped,
                "seconds": res.seconds, "compile_seconds": res.compile_seconds,
                "threads": res.threads}

    def merge(self, parts, seconds, threads, stats):
        from . import app

        first = parts[0]["result"]
        batches = [SimpleNamespace(first=f, n=n, out_sum=s, out_valid=v)
                   for p in parts for (f, n, s, v) in p["rounds"]]
        if not self.trawl:  # one batch, as one process samples it
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
            batches=len(batches), seed=self.seed, inheritance=first.inheritance,
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


def request(query, estimator="alley", **keywords) -> GSwordRequest:
    own = {k: keywords.pop(k) for k in _OWN if k in keywords}
    common = {k: keywords.pop(k) for k in ("mode", "time_budget") if k in keywords}
    return GSwordRequest(query, estimator, **own, **common, options=keywords)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--estimator", choices=["wj", "alley"], default="alley",
                   help="wj: WanderJoin (cheap samples, more of them die); alley: candidates "
                        "refined by every matched neighbour (default: alley)")
    p.add_argument("--samples", type=positive_int_arg, default=1_000_000, metavar="N",
                   help="samples to draw (default: 1000000)")
    p.add_argument("--trawl", action=argparse.BooleanOptionalAction, default=True,
                   help="count the rest of some samples exactly on the CPU workers "
                        "(default: on)")
    p.add_argument("--batches", type=positive_int_arg, default=None, metavar="N",
                   help="batches the samples are split into: trawling runs over them, and "
                        "the stopping rule is checked after each (default: 6 when trawling, "
                        "else 1; with --target-error or --time-budget, batches that double "
                        "from 1/256 of --samples up to 1/8)")
    p.add_argument("--target-error", type=_relative_error, default=None, metavar="REL",
                   help="stop once the 95%% interval is within REL of the estimate (0.01: "
                        "1%%), checked after each batch; --samples is then the most to draw "
                        "(default: draw them all)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    p.add_argument("--order", choices=["quicksi", "sm"], default="quicksi",
                   help="matching order: QuickSI (infrequent edges first) or the sm app's "
                        "(default: quicksi)")
    p.add_argument("--inheritance", action=argparse.BooleanOptionalAction, default=True,
                   help="GPU sample inheritance (default: on)")
    p.add_argument("--streaming", action=argparse.BooleanOptionalAction, default=True,
                   help="GPU warp streaming (default: on)")


def _relative_error(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"expected a relative error > 0 (0.01: 1%), "
                                         f"got {text!r}")
    return value


def from_args(args) -> dict:
    return {"estimator": args.estimator, "samples": args.samples, "trawl": args.trawl,
            "batches": args.batches, "seed": args.seed, "order": args.order,
            "target_error": args.target_error, "inheritance": args.inheritance,
            "streaming": args.streaming}


def describe(res, label=None) -> list[str]:
    name = label if label is not None else res.query
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
    return lines + [f"  unreliable interval: {warning}" for warning in res.warnings]


_STOPPED = {"target_error": "early: the interval was within the target error",
            "time_budget": "early: the time budget was spent"}


def progress(p) -> str:
    return (f"  batch {p['batch']}/{p['batches']}: {p['samples']:,} samples, "
            f"estimate {p['estimate']:.4g}")


def warmup(graph, gpu: bool):
    from . import app

    modes = ("cpu", "gpu") if gpu else ("cpu",)
    return [(f"gsword {name} ({mode})", lambda name=name, mode=mode: app.estimate(
        graph, "4-cycle", estimator=name, samples=20_000, mode=mode,
        **({"threads": 1} if mode == "cpu" else {})))
        for mode in modes for name in app.estimators()]


APP = App(
    name="gsword",
    summary="estimate subgraph counts by sampling (gSWORD)",
    description="Estimate the number of embeddings of a query graph in a data graph by "
                "sampling (WanderJoin or Alley), on the GPU or all CPU cores.",
    epilog=EPILOG,
    inputs=DATA_AND_QUERY,
    request=request,
    from_args=from_args,
    describe=describe,
    add_arguments=add_arguments,
    modes=("cpu", "gpu"),
    mode_help="gpu if a CUDA GPU is usable, else cpu",
    options=("threads", "time_budget", "gpus"),
    option_notes={"time_budget": "gsword: not a task's time but the most seconds the estimate "
                                 "samples for, checked after each batch; default: no limit"},
    progress=progress,
    warmup=warmup,
)
