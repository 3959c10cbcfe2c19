"""Where the labeled search (:mod:`gthinker.apps.matching.labeled`) runs: the GPU search
(:mod:`gthinker.apps.matching.labeled_gpu`) for a count in a GPU mode (or auto with a
usable GPU) of a query it takes, else the CPU workers (said once on stderr when a GPU
was asked for or usable)."""

from __future__ import annotations

import gthinker

from .labeled import ISOMORPHISM, labeled_plan, run_labeled, say_once

__all__ = ["automorphisms", "count_labeled", "LabeledCount"]


def automorphisms(query: gthinker.Graph) -> int:
    """``|Aut(q)|`` keeping vertex labels, edge labels and directions: the embeddings of
    the query in itself."""
    p = labeled_plan(query, query)
    return int(run_labeled(p, threads=1).counters["matches"])


class LabeledCount:
    """What :func:`count_labeled` found: ``count``, ``automorphisms``, ``order``,
    ``mode`` ("cpu" or "gpu"), ``seconds``, ``threads``, ``stopped``, ``stats``,
    ``compile_seconds`` and ``why`` (why this mode)."""

    def __init__(self, **fields):
        self.__dict__.update(fields)


def count_labeled(data: gthinker.Graph, query: gthinker.Graph, semantics: str, unique: bool,
                  mode: str = "auto", **options) -> LabeledCount:
    """The embeddings of ``query`` in ``data`` (as :func:`~gthinker.apps.matching.labeled.
    effective_graphs` leaves them), or with ``unique`` the distinct subgraphs
    (isomorphism). ``options`` go to :func:`gthinker.run` (threads, limit, output,
    progress, ...); a listing run (limit, output) stays on the CPU."""
    listing = options.get("limit") is not None or options.get("output") is not None
    chosen, why = gthinker.gpu.resolve_mode(
        mode, auto="gpu", cpu_because="listing matches runs on the CPU" if listing else "")
    p = labeled_plan(data, query, semantics, limited=options.get("limit") is not None)
    aut = automorphisms(query) if semantics == ISOMORPHISM else 1
    if chosen != "cpu":
        from . import labeled_gpu  # numba-cuda only when a GPU runs it

        beyond = "listing matches runs on the CPU" if listing else labeled_gpu.takes(p)
        if not beyond:
            n, stats = labeled_gpu.count(p, options.get("stop"))
            return LabeledCount(count=n // aut if unique else n, automorphisms=aut,
                                order=p.order, mode="gpu", seconds=stats["kernel_seconds"],
                                threads=0, stopped=None, stats=stats, compile_seconds=0.0,
                                why=why or "the GPU search")
        say_once(f"the labeled search runs on the CPU: {beyond}")
        why = beyond
    res = run_labeled(p, **options)
    n = res.counters["matches"]
    return LabeledCount(count=n // aut if unique and not listing else n, automorphisms=aut,
                        order=p.order, mode=res.mode, seconds=res.seconds, threads=res.threads,
                        stopped=res.stopped, stats=res.stats,
                        compile_seconds=res.compile_seconds, why=why or "the CPU search")
