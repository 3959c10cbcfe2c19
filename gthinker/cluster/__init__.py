"""Running gthinker jobs on many hosts through Ray (``pip install "gthinker[ray]"``).

One Ray actor per node runs the local runtime (all of that node's cores and GPUs,
in any mode); the graph's CSR arrays go into Ray's object store once and every
node reads them zero-copy; the driver hands out ranges of initial vertices
(large first, smaller as its queue drains), and merges the parts of the ranges
that completed: counts, histograms, Python-int clique counts and gSWORD's round
sums add up to exactly what one process gives. A worker that dies loses no
work: its unfinished ranges run again elsewhere. See ``docs/cluster.md``.

>>> from gthinker import cluster                                # doctest: +SKIP
>>> cluster.mce("email-Enron.txt.gz", cluster="local:3", threads=1).count  # doctest: +SKIP
226859

``address`` (``cluster=``) is ``"local:N"`` (N workers on this machine: the same
code path, for tests and laptops), ``"auto"`` (the Ray cluster this machine
belongs to), ``"HOST:PORT"`` or ``"ray://HOST:PORT"``; or a :class:`Cluster`.
Importing this package does not import Ray; the first job does.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .driver import Cluster

__all__ = ["Cluster", "RAY_HINT", "RayNotInstalled", "connect", "parse_address",
           "require_ray", "run"]

_LAZY = ("Cluster", "RAY_HINT", "RayNotInstalled", "parse_address", "require_ray")
_clusters: dict = {}


def __getattr__(name):
    """The driver's names (loaded, with the runtime they need, on first use), and the
    apps of the registry: ``cluster.mce(graph, cluster=..., **keywords)`` runs
    :meth:`Cluster.mce` (an app's request) on the cluster at ``cluster``."""
    if name in _LAZY:
        return getattr(importlib.import_module(".driver", __name__), name)
    if not name.startswith("_"):
        from ..registry import apps

        if name in apps():
            def run_app(graph, *args, cluster, **keywords):
                return getattr(connect(cluster), name)(graph, *args, **keywords)

            run_app.__name__ = name
            return run_app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def connect(cluster: str | Cluster) -> Cluster:
    """The :class:`Cluster` for an address (started once per process and kept), or
    ``cluster`` itself."""
    from .driver import Cluster, parse_address

    if isinstance(cluster, Cluster):
        return cluster
    parse_address(cluster)
    found = _clusters.get(cluster)
    if found is None or not found.num_workers:
        found = _clusters[cluster] = Cluster(cluster)
    return found


def run(task, graph, *, cluster, **options):
    """:func:`gthinker.run` of ``task`` on a Ray cluster: see :meth:`Cluster.run`."""
    return connect(cluster).run(task, graph, **options)
