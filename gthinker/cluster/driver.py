"""The driver: Ray start-up, one worker actor per node, the range queue and the merge.

The driver keeps all the state that matters (the queue, which ranges and moved
batches of tasks are running where, the parts that came back), so a lost actor
loses only the units it held: they run again elsewhere. A unit counts only once
its part has come back and, for a batch moved out of another unit, once that
unit's part counts too; a unit that runs again drops what was moved out of it.
So nothing is counted twice (the rule in full: :mod:`gthinker.cluster.dispatch`).
"""

from __future__ import annotations

import os
import time
import weakref

from gthinker.graphs.graph import as_graph
from gthinker.runtime.job import default_threads
from gthinker.runtime.request import Request, TaskRequest

from ..errors import GThinkerError
from ..registry import get as get_app
from .dispatch import Dispatch
from .node import NodeWorker, graph_payload
from .ranges import RangeQueue

RAY_HINT = ('running on a Ray cluster needs Ray: pip install "gthinker[ray]" '
            '(or pip install "ray>=2.9")')


class RayNotInstalled(ImportError, GThinkerError):
    """``ray`` is not installed (the message says how to install it)."""


def require_ray():
    """The ``ray`` module, or :class:`RayNotInstalled` saying how to install it."""
    try:
        import ray
    except ImportError as exc:
        raise RayNotInstalled(RAY_HINT) from exc
    return ray


def parse_address(address: str) -> int | None:
    """N for ``"local:N"`` (N worker actors on this machine), None for the address
    of a running Ray cluster (``"auto"``, ``"HOST:PORT"``, ``"ray://HOST:PORT"``)."""
    if not isinstance(address, str) or not address:
        raise ValueError(f"a Ray address must be 'local:N', 'auto', 'HOST:PORT' or "
                         f"'ray://HOST:PORT', got {address!r}")
    if address.startswith("local:"):
        text = address[len("local:"):]
        if not text.isdigit() or int(text) < 1:
            raise ValueError(f"'local:N' needs a number of workers N >= 1, got {address!r}")
        return int(text)
    return None


def start_ray(ray, **init_args) -> None:
    """``ray.init(**init_args)``, so that the workers import the gthinker this
    process imported.

    Ray puts the driver's current folder first on every worker's ``sys.path``. Run
    from a gthinker source checkout other than the gthinker imported here (an
    installed one, say), the workers would import the checkout's: another version,
    or one whose C++ core is not built. There ``ray.init`` runs from the folder
    holding the imported package instead, and the current folder is restored.
    """
    import gthinker

    here = os.getcwd()
    ours = os.path.dirname(os.path.realpath(gthinker.__file__))
    theirs = os.path.realpath(os.path.join(here, "gthinker"))
    if theirs == ours or not os.path.isfile(os.path.join(theirs, "__init__.py")):
        ray.init(**init_args)
        return
    os.chdir(os.path.dirname(ours))
    try:
        ray.init(**init_args)
    finally:
        os.chdir(here)


class Cluster:
    """Worker actors on a Ray cluster (one per node, or ``N`` on this machine for
    ``"local:N"``), ready to run jobs.

    Parameters
    ----------
    address : str
        ``"local:N"`` starts Ray here (unless it is running already) with ``N``
        workers; ``"auto"``, ``"HOST:PORT"`` or ``"ray://HOST:PORT"`` joins a
        running cluster and starts one worker on every node with CPUs.
    move_tasks : True, False or "eager"
        Whether the spilled tasks of a busy worker move to an idle one once the
        range queue is empty (mce, sm and Tasks; see
        :mod:`gthinker.cluster.dispatch`); ``"eager"`` moves them as soon as a
        worker has room, from any worker that has one (for tests). The
        attribute of the same name may be changed between jobs.

    Each job (:meth:`mce`, :meth:`count`, :meth:`sm`, :meth:`gsword`, :meth:`run`)
    puts the graph into the object store once; workers lost in a job are
    replaced at the start of the next one. Use as a context manager, or call
    :meth:`shutdown`.
    """

    def __init__(self, address: str = "local:2", move_tasks: bool | str = True):
        self._local = parse_address(address)
        self.move_tasks = move_tasks
        ray = require_ray()
        self.address = address
        self._owns_ray = False
        if not ray.is_initialized():
            if self._local is not None:
                start_ray(ray, num_cpus=self._local, include_dashboard=False,
                          configure_logging=False)
            else:
                start_ray(ray, address=address, configure_logging=False)
            self._owns_ray = True
        self._actors: list = []
        self._info: list[dict] = []
        self._nodes: list[str | None] = []
        # (weak reference to the graph, the keys of its prepared forms sent, object ref)
        self._graph = (None, set(), None)
        #: The last job's figures (workers, ranges, ranges run again, workers lost,
        #: per worker); also in the result's ``stats["cluster"]`` where it has stats.
        self.last_stats: dict = {}
        self._ensure_workers()

    # ---- workers --------------------------------------------------------------

    def _actor_options(self, node: str | None) -> dict:
        ray = require_ray()
        # No CPUs reserved on this machine (local:N), so the workers start beside a Ray
        # that someone started with fewer; one on each node of a cluster.
        opts = {"max_concurrency": 4, "max_restarts": 0,
                "num_cpus": 0 if node is None else 1}
        cache = os.environ.get("GTHINKER_CACHE_DIR")
        if cache:  # the nodes share the driver's compile cache folder, where it is set
            opts["runtime_env"] = {"env_vars": {"GTHINKER_CACHE_DIR": cache}}
        if node is None:
            gpus = ray.cluster_resources().get("GPU", 0)
            opts["num_gpus"] = gpus / self._local if gpus else 0
        else:
            from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

            res = next(n["Resources"] for n in ray.nodes() if n["NodeID"] == node)
            opts["num_gpus"] = res.get("GPU", 0)  # the node's GPUs are its worker's
            opts["scheduling_strategy"] = NodeAffinitySchedulingStrategy(node, soft=False)
        return opts

    def _wanted_nodes(self) -> list[str | None]:
        ray = require_ray()
        if self._local is not None:
            return [None] * self._local
        return [n["NodeID"] for n in ray.nodes()
                if n["Alive"] and n["Resources"].get("CPU", 0) > 0]

    def _ensure_workers(self) -> None:
        """Drops the workers that do not answer and starts the missing ones."""
        ray = require_ray()
        keep = []
        if self._actors:
            pings = [a.describe.remote() for a in self._actors]
            for k, ping in enumerate(pings):
                try:
                    ray.get(ping, timeout=30)
                    keep.append(k)
                except ray.exceptions.RayError:
                    pass
        self._actors = [self._actors[k] for k in keep]
        self._info = [self._info[k] for k in keep]
        self._nodes = [self._nodes[k] for k in keep]
        missing = list(self._wanted_nodes())
        for node in self._nodes:
            if node in missing:
                missing.remove(node)
        if not missing and self._actors:
            return
        remote = ray.remote(NodeWorker)
        new = [remote.options(**self._actor_options(node)).remote() for node in missing]
        self._info += ray.get([a.describe.remote() for a in new], timeout=300)
        self._actors += new
        self._nodes += missing
        if not self._actors:
            raise RuntimeError(f"the Ray cluster at {self.address!r} has no node with CPUs")

    @property
    def num_workers(self) -> int:
        return len(self._actors)

    def pids(self) -> list[int]:
        """The process id of each worker actor (on its node)."""
        return [info["pid"] for info in self._info]

    def workers(self) -> list[dict]:
        """Each worker's host, process id, cores and compile cache folder."""
        return [dict(info) for info in self._info]

    def shutdown(self) -> None:
        """Ends the worker actors (and Ray, when this object started it)."""
        ray = require_ray()
        for a in self._actors:
            ray.kill(a)
        self._actors, self._info, self._nodes = [], [], []
        if self._owns_ray and ray.is_initialized():
            ray.shutdown()
        self._owns_ray = False

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.shutdown()

    # ---- jobs -----------------------------------------------------------------

    def _put(self, graph):
        """The graph's object ref: put once, kept while the same Graph comes back
        with the same prepared forms."""
        ray = require_ray()
        held, forms, ref = self._graph
        if held is not None and held() is graph and forms == set(graph.derived_graphs()):
            return ref, 0.0
        t0 = time.perf_counter()
        ref = ray.put(graph_payload(graph))
        self._graph = (weakref.ref(graph), set(graph.derived_graphs()), ref)
        return ref, time.perf_counter() - t0

    def run_request(self, request: Request, graph, *, threads: int | None = None,
                    ranges_per_worker: int = 16, output_per_node: bool = False,
                    progress=None, stop=None):
        """Runs ``request`` (an app's, :mod:`gthinker.runtime.request`) over ``graph`` on every
        worker; returns the app's result."""
        graph = as_graph(graph)
        done = request.local(graph)
        if done is not None:  # nothing to split: computed here
            self.last_stats = {"address": self.address, "workers": self.num_workers,
                               "ranges": 0, "retried": 0, "workers_lost": 0, "tasks_moved": 0,
                               "batches": 0}
            return done
        ray = require_ray()
        self._ensure_workers()
        t0 = time.perf_counter()
        queue = RangeQueue(request.weights(graph), self.num_workers, ranges_per_worker)
        weights_seconds = time.perf_counter() - t0
        ref, put_seconds = self._put(graph)  # with what the estimates prepared
        if threads is None and self._local is not None:
            threads = max(1, default_threads() // self._local)
        run = Dispatch(ray, list(self._actors), list(self._info), self.address, request, ref,
                       threads, output_per_node, progress, stop, queue,
                       move_tasks=self.move_tasks)
        try:
            run.prepare()
            run.loop()
        except BaseException:
            run.halt()
            raise
        finally:
            run.close()
        stats = run.stats(put_seconds, weights_seconds)
        self.last_stats = stats["cluster"]
        result = request.merge(run.parts(), run.seconds, run.threads(), stats)
        if run.stopped and hasattr(result, "stopped"):
            result.stopped = "stop"
        return result

    def run(self, task, graph, *, mode: str = "cpu", threads: int | None = None,
            time_budget: float | None = None, output=None, progress=None, stop=None,
            ranges_per_worker: int = 16, output_per_node: bool = False, **options):
        """:func:`gthinker.run` of a Task over the cluster (initial vertices split in
        ranges); returns the merged :class:`gthinker.JobResult`."""
        for name in ("vertices", "records", "limit"):
            if name in options:
                raise ValueError(f"{name}= is not supported on a cluster (the driver splits "
                                 "the initial vertices itself)")
        request = TaskRequest(task, mode=mode, time_budget=time_budget, output=output,
                              **options)
        return self.run_request(request, graph, threads=threads,
                                ranges_per_worker=ranges_per_worker,
                                output_per_node=output_per_node, progress=progress, stop=stop)

    def __getattr__(self, name):
        """An app of the registry by its name: ``cluster.mce(graph, **keywords)``,
        ``cluster.sm(data, query, **keywords)``, ... run that app's request over the
        cluster and return the app's own result (the keywords of the app's function,
        and ``threads``, ``progress``, ``stop``, ``ranges_per_worker``,
        ``output_per_node``)."""
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            app = get_app(name)
        except KeyError as exc:
            raise AttributeError(str(exc)) from None

        def run_app(graph, *args, threads=None, progress=None, stop=None,
                    ranges_per_worker=16, output_per_node=False, **keywords):
            return self.run_request(app.make_request(*args, **keywords), graph, threads=threads,
                                    ranges_per_worker=ranges_per_worker,
                                    output_per_node=output_per_node, progress=progress,
                                    stop=stop)

        run_app.__name__ = name
        return run_app
