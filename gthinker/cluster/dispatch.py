"""One job's dispatch loop on the driver: units of work out to the worker actors,
their parts back, and work moved from busy workers to idle ones.

**Units.** A *range* is a range of roots from the :class:`~.ranges.RangeQueue`. A
*batch* is work that the driver took out of a unit running on one worker (its
*parent*: that unit's job will not run it) and handed to another worker: the
roots that no thread of the parent had started yet (run as a job of those
roots), or task records from the parent's spill stack S (run as a job of
records). A batch's work is part of its parent's, and a batch may have batches
of its own.

**Handing out.** Every worker gets a range before any gets a second one, and
each keeps ``DEPTH`` units queued, so that none waits for the driver between
ranges.

**When work moves** (``move_tasks``): once the range queue is empty and a worker
is idle, the driver asks the running workers how many unstarted roots and
spilled tasks their units hold (asking them to split their tasks early until
they hold ``WANT`` per idle worker). It takes half of the most unstarted roots
(:meth:`NodeWorker.give_roots <.node.NodeWorker.give_roots>`, from the end of
the unit's deque that its threads reach last) or, where no unit has any, half
of the fullest spill stack (the oldest records, the largest branches:
:meth:`NodeWorker.give_tasks <.node.NodeWorker.give_tasks>`), from a stack of
at least two tasks, and hands them to the idle worker. The workers are asked
again as soon as a unit ends, and every ``POLL_SECONDS`` while one is idle.
``"eager"`` (for tests) moves to every worker with room for a unit, from a
spill stack of one task.

**Workers that die: nothing lost, nothing counted twice.** The rule:

1. A unit whose worker dies before its part comes back runs again in full: a
   range goes back into the queue, a batch into the batch queue (the driver keeps
   each batch's roots or records until its part is back).
2. Everything moved out of a unit that runs again is dropped with it: its
   batches (and theirs), queued, running or done, parts and all, since the
   rerun computes their work again (and moves batches of its own).
3. So a part counts only once its unit is *final*: its part is back and its
   parent is final (a range has no parent). Only final parts merge; gathered
   output lines are written when their unit becomes final; the job ends when
   every unit still alive is final.

With ``output_per_node``, a batch appends its lines on its node when it ends; if
its parent runs again after that, those lines stay in the file beside the
rerun's (the counts are exact all the same).
"""

from __future__ import annotations

import os
import time
from collections import deque

#: Units queued on each worker at once: one running, one waiting, so a worker
#: never idles while the driver answers.
DEPTH = 2
#: The most task records (or roots) moved in one batch.
MOVE_MAX = 100_000
#: Seconds between two rounds of asking the workers for their movable work while
#: one is idle (a unit that ends asks at once).
POLL_SECONDS = 0.05
#: How long a worker asked for tasks splits its tasks early (each round of
#: asking renews it): until its spill stack holds WANT tasks per idle worker.
REQUEST_SECONDS = 0.5
WANT = 4
#: What :meth:`Dispatch._get` gives for a unit whose worker is gone.
LOST = object()


class Unit:
    """A range of roots or a batch of moved roots or records, and where it stands.
    ``moved``: a batch's ``("roots", roots)`` or ``("records", data, starts)``."""

    __slots__ = ("uid", "rng", "moved", "parent", "children", "worker", "part", "final",
                 "dead", "size")

    def __init__(self, uid, rng, moved=None, parent=None, size=0):
        self.uid, self.rng, self.moved, self.parent = uid, rng, moved, parent
        self.children: list[Unit] = []
        self.worker = -1
        self.part = None
        self.final = self.dead = False
        self.size = size  # roots or records of a batch

    @property
    def is_range(self) -> bool:
        return self.parent is None


class Dispatch:
    """Runs one request (:class:`gthinker.runtime.request.Request`) on the workers ``actors``
    (their ``info``) and keeps every figure of it; :meth:`parts` gives the final parts
    for the request's merge."""

    def __init__(self, ray, actors, info, address, request, ref, threads, per_node, progress,
                 stop, queue, move_tasks=True):
        self.ray, self.actors, self.info, self.address = ray, actors, info, address
        self.request, self.ref, self.queue = request, ref, queue
        self.threads_each, self.progress, self.stop = threads, progress, stop
        if move_tasks not in (True, False, "eager"):
            raise ValueError(f"move_tasks must be True, False or 'eager', got {move_tasks!r}")
        self.move = move_tasks if request.movable else False
        n = len(actors)
        self.alive = set(range(n))
        self.load = [0] * n
        self.units: dict[int, Unit] = {}
        self.inflight: dict = {}  # object ref -> unit
        self.waiting: deque[Unit] = deque()  # batches to run again
        self.ran = [0] * n  # final ranges per worker
        self.ran_batches = [0] * n
        self.busy = [0.0] * n
        self.width = [0] * n  # threads each worker ran with
        # Tasks and roots moved out of each worker's units, and into each one's.
        self.given, self.received = [0] * n, [0] * n
        self.roots_given, self.roots_received = [0] * n, [0] * n
        # (from, to) -> [batches, tasks, roots]
        self.moves: dict[tuple[int, int], list[int]] = {}
        self.retried = self.batches_retried = self.dropped = 0
        self.lost: list[int] = []
        self.stopped = False
        self.out = None
        self.next_poll = 0.0
        self.last_move: dict | None = None
        self.node_outputs = [None] * n
        if request.output is not None:
            if per_node:
                self.node_outputs = [f"{request.output}.node{i}" for i in range(n)]
                for path in self.node_outputs:  # (on this machine; each node makes its own)
                    if os.path.exists(path):
                        os.remove(path)
            else:
                self.out = open(request.output, "wb")
        self.t0 = time.perf_counter()
        self.seconds = self.prepare_seconds = 0.0

    # ---- handing out --------------------------------------------------------------

    def _new_unit(self, rng, moved=None, parent=None, size=0) -> Unit:
        unit = Unit(len(self.units), rng, moved, parent, size)
        self.units[unit.uid] = unit
        if parent is not None:
            parent.children.append(unit)
        return unit

    def _send(self, unit: Unit, i: int) -> None:
        actor, common = self.actors[i], (self.threads_each, self.node_outputs[i])
        if unit.is_range:
            obj = actor.run_range.remote(self.request, [self.ref], *unit.rng, *common,
                                         unit=unit.uid)
        elif unit.moved[0] == "roots":
            obj = actor.run_roots.remote(self.request, [self.ref], unit.moved[1], *common,
                                         unit=unit.uid)
        else:
            obj = actor.run_batch.remote(self.request, [self.ref], *unit.moved[1:], *common,
                                         unit=unit.uid)
        unit.worker = i
        self.inflight[obj] = unit
        self.load[i] += 1

    def _submit(self) -> None:
        """Fills every worker's queue, a level at a time: each worker gets a unit
        before any gets a second one (the first ranges are the largest)."""
        for level in range(DEPTH):
            for i in sorted(self.alive):
                if self.load[i] > level:
                    continue
                while self.waiting and self.waiting[0].dead:
                    self.waiting.popleft()
                if self.waiting:
                    self._send(self.waiting.popleft(), i)
                elif self.queue:
                    self._send(self._new_unit(self.queue.next()), i)
                else:
                    return

    def prepare(self) -> None:
        """Every worker loads the graph and prepares the app's forms of it, all at
        once, before the clock of the job starts (as one process's ``seconds``
        leave out its preparing); ``prepare_seconds`` says how long it took."""
        t0 = time.perf_counter()
        refs = {self.actors[i].prepare.remote(self.request, [self.ref], self.threads_each): i
                for i in sorted(self.alive)}
        for obj, i in refs.items():
            if self._get(obj) is LOST:  # the others go on
                self._lose(i)
        self.prepare_seconds = time.perf_counter() - t0
        self.t0 = time.perf_counter()

    def loop(self) -> None:
        ray = self.ray
        while self.queue or self.inflight or self.waiting:
            if self.stop is not None and self.stop.is_set() and not self.stopped:
                self.stopped = True
                self.halt()
            if not self.stopped:
                self._submit()
                if self.move:
                    self._move()
            if not self.inflight:
                if not self.stopped:
                    raise RuntimeError(f"every worker of the Ray cluster died; "
                                       f"{len(self.lost)} lost in this job")
                break
            moving = self.move and not self.queue
            ready, _ = ray.wait(list(self.inflight), num_returns=1,
                                timeout=POLL_SECONDS if moving else 0.1)
            for obj in ready:
                self._collect(obj)
        self.seconds = time.perf_counter() - self.t0

    # ---- moving work ----------------------------------------------------------------

    def _move(self) -> None:
        """Idle workers get unstarted roots or spilled tasks from the busiest
        workers (once the range queue is empty)."""
        if self.queue or any(not u.dead for u in self.waiting):
            return
        room = DEPTH if self.move == "eager" else 1
        idle = sorted((i for i in self.alive if self.load[i] < room), key=lambda i: self.load[i])
        busy = [i for i in sorted(self.alive) if self.load[i] > 0]
        now = time.perf_counter()
        if not idle or not busy or now < self.next_poll:
            return
        self.next_poll = now + POLL_SECONDS
        movable = self._movable(busy, WANT * len(idle))
        least = 1 if self.move == "eager" else 2
        for to in idle:
            kind, src = _source(movable, to, least)
            if src is None:
                return
            tasks, roots = movable[src]
            n = roots if kind == "roots" else tasks
            got = self._take(src, to, kind, min(MOVE_MAX, max(1, n // 2)))
            left = 0 if got is None else n - got
            movable[src] = (tasks, left) if kind == "roots" else (left, roots)
            if got:
                self._report()

    def _movable(self, workers, want) -> dict[int, tuple[int, int]]:
        """``(spilled tasks, unstarted roots)`` of each worker's running unit (those
        that answer within a second), asking each to split its tasks early until
        its spill stack holds ``want``."""
        ray = self.ray
        refs = {self.actors[i].spilled.remote(want, REQUEST_SECONDS): i for i in workers}
        ready, _ = ray.wait(list(refs), num_returns=len(refs), timeout=1.0)
        out = {}
        for obj in ready:
            try:
                tasks, roots = ray.get(obj)
            except ray.exceptions.RayError:
                continue  # the worker died: its units fail on their own
            out[refs[obj]] = (int(tasks), int(roots))
        return out

    def _take(self, src: int, to: int, kind: str, k: int) -> int | None:
        """Moves up to ``k`` unstarted roots (``kind`` "roots") or spilled tasks
        ("records") out of worker ``src``'s running unit into a new batch, sent
        to worker ``to``; the number moved, or None when there was nothing to
        take."""
        ray = self.ray
        actor = self.actors[src]
        give = actor.give_roots if kind == "roots" else actor.give_tasks
        try:  # no time-out: work taken out of the job must reach the driver
            got = ray.get(give.remote(k))
        except ray.exceptions.RayError:
            return None  # the worker died: its units fail and run again
        if got is None:
            return None
        uid, *moved = got
        n = int(moved[0].size if kind == "roots" else moved[1].size - 1)
        parent = self.units.get(uid)
        if parent is None or parent.dead:  # moved out of work that runs again anyway
            return n
        batch = self._new_unit(parent.rng, (kind, *moved), parent, size=n)
        self._send(batch, to)
        pair = self.moves.setdefault((src, to), [0, 0, 0])
        pair[0] += 1
        if kind == "roots":
            self.roots_given[src] += n
            self.roots_received[to] += n
            pair[2] += n
        else:
            self.given[src] += n
            self.received[to] += n
            pair[1] += n
        self.last_move = {"from": src, "to": to, kind: n}
        return n

    # ---- parts coming back --------------------------------------------------------

    def _collect(self, obj) -> None:
        unit = self.inflight.pop(obj)
        i = unit.worker
        self.load[i] -= 1
        part = self._get(obj)
        if part is LOST:
            self._lose(i)
            self._run_again(unit)
            return
        self.next_poll = 0.0  # ask for movable work at once: this worker has room
        self.busy[i] += part["seconds"]
        self.width[i] = max(self.width[i], part["threads"])
        if unit.dead:  # an ancestor runs again: this part is in its rerun
            self.dropped += 1
            return
        if part.get("stopped"):  # a unit cut short counts for nothing
            return
        unit.part, unit.moved = part, None
        if unit.is_range or unit.parent.final:
            self._finalize(unit)
        self._report()

    def _get(self, obj):
        """``ray.get(obj)``, or ``LOST`` when its worker (or its node) is gone; an
        exception the app raised there is raised here (the job fails)."""
        ray = self.ray
        try:
            return ray.get(obj)
        except ray.exceptions.RayTaskError as exc:
            if not isinstance(exc.cause, Exception):
                raise
            raise exc.cause from exc
        except ray.exceptions.RayError:
            return LOST

    def _lose(self, i: int) -> None:
        if i in self.alive:
            self.alive.discard(i)
            self.lost.append(i)

    def _run_again(self, unit: Unit) -> None:
        """Rule 1 and 2 of the module docstring: ``unit`` (its worker died) runs
        again; what was moved out of it is dropped."""
        if unit.dead:
            return
        self._drop(unit)
        if unit.is_range:
            self.queue.give_back(unit.rng)
            self.retried += 1
        else:
            self.waiting.append(self._new_unit(unit.rng, unit.moved, unit.parent, unit.size))
            self.batches_retried += 1

    def _drop(self, unit: Unit) -> None:
        unit.dead = True
        if unit.parent is not None:
            unit.parent.children.remove(unit)
        for child in list(unit.children):
            if child.part is not None:
                self.dropped += 1
            self._drop(child)

    def _finalize(self, unit: Unit) -> None:
        """Rule 3: the part counts; so do its batches' parts that are back."""
        unit.final = True
        data = unit.part.pop("output", None)
        if data and self.out is not None:
            self.out.write(data)
        if unit.is_range:
            self.ran[unit.worker] += 1
        else:
            self.ran_batches[unit.worker] += 1
        for child in unit.children:
            if child.part is not None:
                self._finalize(child)

    def _report(self) -> None:
        if self.progress is None:
            return
        self.progress({"elapsed": time.perf_counter() - self.t0,
                       "ranges_done": sum(self.ran), "units_running": len(self.inflight),
                       "ranges_running": sum(u.is_range for u in self.inflight.values()),
                       "running": {k: n for k, n in enumerate(self.load) if n},
                       "workers": len(self.alive), "workers_lost": len(self.lost),
                       "tasks_moved": sum(self.given), "roots_moved": sum(self.roots_given),
                       "last_move": self.last_move})

    # ---- the end --------------------------------------------------------------------

    def parts(self) -> list[dict]:
        """The final parts, ranges in root order, each followed by its batches."""
        final = [u for u in self.units.values() if u.final]
        return [u.part for u in sorted(final, key=lambda u: (u.rng, u.uid))]

    def halt(self) -> None:
        """Asks every worker to stop its unit (a stop token, Ctrl-C, an error)."""
        for i in self.alive:
            self.actors[i].stop.remote()

    def close(self) -> None:
        if self.out is not None:
            self.out.close()

    def threads(self) -> int:
        return sum(self.width)

    def stats(self, put_seconds, weights_seconds=0.0) -> dict:
        info = self.info
        return {"cluster": {
            "address": self.address, "workers": len(info), "ranges": sum(self.ran),
            "retried": self.retried, "workers_lost": len(self.lost),
            "graph_put_seconds": round(put_seconds, 6),
            "weights_seconds": round(weights_seconds, 6),
            "prepare_seconds": round(self.prepare_seconds, 6), "stopped": self.stopped,
            "move_tasks": self.move, "tasks_moved": sum(self.given),
            "roots_moved": sum(self.roots_given),
            "batches": sum(self.ran_batches), "batches_retried": self.batches_retried,
            "parts_dropped": self.dropped,
            "moves": [{"from": a, "to": b, "batches": n, "tasks": t, "roots": r}
                      for (a, b), (n, t, r) in sorted(self.moves.items())],
            "per_worker": [{"host": info[i]["host"], "pid": info[i]["pid"], "ranges": self.ran[i],
                            "batches": self.ran_batches[i], "tasks_given": self.given[i],
                            "tasks_received": self.received[i],
                            "roots_given": self.roots_given[i],
                            "roots_received": self.roots_received[i], "threads": self.width[i],
                            "busy_seconds": round(self.busy[i], 6), "lost": i in self.lost}
                           for i in range(len(info))],
        }}


def _source(movable: dict[int, tuple[int, int]], to: int, least: int):
    """``(kind, worker)``: where worker ``to`` takes work from, given each running
    worker's ``(spilled tasks, unstarted roots)``: the most unstarted roots, or,
    where no unit has any, the fullest spill stack of at least ``least`` tasks;
    ``(None, None)`` when there is none."""
    roots = {i: r for i, (_, r) in movable.items() if i != to and r > 0}
    if roots:
        return "roots", max(roots, key=lambda i: (roots[i], -i))
    tasks = {i: t for i, (t, _) in movable.items() if i != to and t >= least}
    if tasks:
        return "records", max(tasks, key=lambda i: (tasks[i], -i))
    return None, None
