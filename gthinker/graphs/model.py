"""The shaped random-graph model behind :func:`gthinker.graphs.generate.shaped` and
the presets: a Chung-Lu graph on truncated power-law weights, with hubs of an exact
degree, one anchor edge per vertex, closures of random neighbourhoods for clustering,
a second side for bipartite graphs, and exactly the edge count asked for.

How a graph is made (each step's random numbers come from a counter-based generator
keyed by the seed, the step and the item, in ``csrc/graph_generate.cpp``, so the
graph is the same for any number of threads):

1. **Hubs.** A side's hubs get exactly their degree: distinct vertices of the other
   side (the same side for a one-sided graph), drawn by weight without replacement.
2. **Anchors.** Every other vertex that no hub touches gets one edge to a partner
   drawn by weight, so that no vertex is isolated (as in the real graphs).
3. **Chung-Lu.** The remaining edges join two vertices drawn by weight (one from
   each side for a bipartite graph). A side's non-hub vertices, heaviest first, take
   the quantiles of a power law truncated to ``[floor, top]`` whose exponent is
   solved so that the mean weight is what the edges leave for them
   (:func:`solve_exponent`).
4. **Closures.** A share of the edges closes neighbourhoods of the Chung-Lu graph: a
   center drawn uniformly, ``group`` of its neighbours drawn uniformly, and every two
   of them joined (``group=2``: a wedge closed into a triangle; larger groups plant
   cliques of ``group + 1`` vertices). Closures never touch a hub, so hub degrees
   stay exact, nor a vertex they would likely lift to the largest hub's degree (by
   its expected closure edges), so that the largest hub keeps the largest degree.

Each of steps 3 and 4 draws candidates in rounds; duplicates, loops and edges
already present are dropped, and the last round keeps just the edges still needed:
those with the smallest hashes (:func:`gthinker._core.gen_new_edges`), so the count is
exact. A *folded* bipartite graph numbers both sides from 0, as a KONECT bipartite
file reads when its two id columns are taken as one graph (the seed paper's edit-*
and trackers graphs: |V| is the larger side); the folding's loops and repeats are
made up for by more Chung-Lu edges.

Memory: the edges are kept as int32 pairs (8 bytes an edge) and each round builds
the graph so far once (16 bytes an edge while it builds); see :func:`peak_bytes`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from gthinker import _core, memory
from gthinker.graphs import csr
from gthinker.graphs.graph import Graph
from gthinker.graphs.shapes import Model, Side

__all__ = ["Side", "Model", "build", "describe", "exponents", "solve_exponent", "curve_mean",
           "peak_bytes"]

#: The exponents :func:`solve_exponent` searches (a steeper curve overflows doubles).
EXPONENT_RANGE = (-30.0, 30.0)
#: Candidates drawn beyond the estimate of what a round needs (more rounds otherwise).
_EXTRA_DRAWS = 1.03
#: The first guess of the share of candidates that are new edges.
_FIRST_YIELD = 0.97
#: Rounds before a stage gives up (the edges asked for cannot be placed).
_MAX_ROUNDS = 40
#: Standard deviations of a vertex's closure edges above their expectation that must
#: stay below the largest hub's degree for closures to touch it.
_CLOSURE_MARGIN = 3.0

# Streams of the counter-based generator, one per step (hubs and sides add their index).
_HUB_STREAM, _ANCHOR_STREAM, _CL_STREAM, _CLOSURE_STREAM = 1, 64, 128, 256
_SCATTER_KEY = 0x5EED5CA77E


def _log_phi(a: float, y: float) -> float:
    """log(expm1(a y) / a), the limit log(y) at a = 0, without overflow."""
    ay = a * y
    if abs(ay) < 1e-9:
        return math.log(y)
    if ay > 30:
        return ay - math.log(a) + math.log1p(-math.exp(-ay))
    return math.log(math.expm1(ay) / a)


def curve_mean(floor: float, top: float, exponent: float) -> float:
    """The mean of a power law with density proportional to ``x**-exponent`` on
    ``[floor, top]``.

    >>> round(curve_mean(1.0, 100.0, 2.0), 4)  # ln(100) / (1 - 1/100)
    4.6517
    """
    span = math.log(top / floor)
    if span <= 0:
        return floor
    return floor * math.exp(_log_phi(2.0 - exponent, span) - _log_phi(1.0 - exponent, span))


def solve_exponent(floor: float, top: float, mean: float) -> float:
    """The exponent of the power law on ``[floor, top]`` whose mean is ``mean``
    (bisection: the mean falls as the exponent grows).

    >>> round(solve_exponent(1.0, 100.0, 4.6517), 3)
    2.0

    Raises
    ------
    ValueError
        ``mean`` outside what a power law on ``[floor, top]`` reaches.
    """
    if top <= floor * (1 + 1e-12):
        if abs(mean - floor) > 1e-9 * floor:
            raise ValueError(f"a flat curve ({floor:g}) cannot have mean {mean:g}")
        return 0.0
    lo, hi = EXPONENT_RANGE
    if not curve_mean(floor, top, hi) <= mean <= curve_mean(floor, top, lo):
        raise ValueError(
            f"the edges leave a mean weight of {mean:,.3g} for the non-hub vertices, which "
            f"a power law between {floor:,.3g} and {top:,.3g} cannot have: give more room "
            "(a larger top weight or a smaller floor) or change the edge count")
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if curve_mean(floor, top, mid) > mean:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def describe(model: Model) -> str:
    """One line: the model's vertices, edges, hubs, weight curves (with their solved
    exponents) and closures."""
    kind = "folded bipartite" if model.folded else "bipartite" if model.bipartite else "one-sided"
    curves = "; ".join(
        f"{s.size:,} vertices, hubs {', '.join(f'{h:,}' for h in s.hubs) or 'none'}, weights "
        f"{s.floor:g} to {s.top:,.0f} (exponent {g:.2f})"
        for s, g in zip(model.sides, exponents(model), strict=True))
    closures = f", closures {model.closure:g} of groups of {model.group}" if model.closure else ""
    return f"{kind}: {model.num_vertices:,} vertices, {model.edges:,} edges; {curves}{closures}"


def peak_bytes(model: Model) -> int:
    """About the most memory :func:`build` holds: the int32 pairs of every edge (8
    bytes an edge), a round's candidates built into rows in their own memory (8, 12
    while they build), the new edges among them (8), the graph so far (8), and per
    vertex the masks and row offsets of two graphs (24 bytes)."""
    return 36 * model.edges + 24 * model.num_vertices


# ---------------------------------------------------------------------------
# Building
# ---------------------------------------------------------------------------


@dataclass
class _Run:
    """What :func:`build` holds: the edges so far (int32 pairs in one buffer), the
    sides as the kernels take them, and how to report."""

    model: Model
    seed: int
    n: int
    pairs: np.ndarray
    filled: int = 0
    sides: list = field(default_factory=list)
    hub_ids: np.ndarray | None = None
    say: Callable = lambda text: None
    rounds: dict = field(default_factory=dict)

    def add(self, new: np.ndarray) -> None:
        self.pairs[self.filled : self.filled + new.shape[0]] = new
        self.filled += new.shape[0]

    def graph(self):
        """(indptr, indices) of the edges so far (no repeats: every stage adds new ones)."""
        part = self.pairs[: self.filled]
        indptr, indices, _, _ = csr.build(part[:, 0], part[:, 1], self.n)
        return indptr, indices


def _side_tuple(side: Side, exponent: float, offset: int, key: int) -> tuple:
    hubs = len(side.hubs)
    return (side.size - hubs, float(side.floor), float(side.top), float(exponent), hubs,
            side.size, offset, key)


def exponents(model: Model) -> list[float]:
    """Each side's weight exponent (:func:`solve_exponent`): the mean weight of its
    non-hub vertices is what the Chung-Lu edges, the other side's hubs and the
    anchors draw on it.

    Raises
    ------
    ValueError
        More edges than vertex pairs, too few for the hubs and the anchors, or a mean
        weight the side's curve cannot have.
    """
    m_close = round(model.closure * model.edges)
    sides = model.sides
    n = model.num_vertices
    pairs = sides[0].size * sides[1].size if model.bipartite and not model.folded \
        else n * (n - 1) // 2
    if model.edges > pairs:
        raise ValueError(f"{model.edges:,} edges are more than the {pairs:,} pairs of vertices "
                         "they could join")
    out = []
    for i, side in enumerate(sides):
        other = sides[1 - i] if model.bipartite else side
        count = side.size - len(side.hubs)
        if count <= 0:
            raise ValueError(f"side of {side.size:,} vertices has no vertex besides its hubs")
        hub_edges = sum(sum(s.hubs) for s in sides)
        covered_other = min(other.size - len(other.hubs), sum(side.hubs))
        covered_self = min(count, sum(other.hubs))
        anchors_self = count - covered_self
        anchors_other = other.size - len(other.hubs) - covered_other
        if model.bipartite:
            cl = model.edges - m_close - hub_edges - anchors_self - anchors_other
            draws = cl + sum(other.hubs) + anchors_other
        else:
            cl = model.edges - m_close - hub_edges - anchors_self
            draws = 2 * cl + hub_edges + anchors_self
        if cl < 0:
            raise ValueError(
                f"{model.edges:,} edges are too few: the hubs and one edge for every other "
                f"vertex already take about {model.edges - m_close - cl:,}")
        out.append(solve_exponent(side.floor, side.top, draws / count))
    return out


def build(model: Model, seed: int, progress: Callable | None = None) -> Graph:
    """The graph of ``model`` for ``seed`` (see the module's description).
    ``progress(text)`` gets a line per step. Ctrl-C stops it within milliseconds
    (KeyboardInterrupt)."""
    solved = exponents(model)
    n = model.num_vertices
    memory.check_fits(peak_bytes(model), f"a generated graph of {model.edges:,} edges")
    run = _Run(model, seed, n, np.empty((model.edges, 2), np.int32),
               say=progress or (lambda text: None))
    offset = 0
    for i, (side, g) in enumerate(zip(model.sides, solved, strict=True)):
        run.sides.append(_side_tuple(side, g, offset, seed ^ (_SCATTER_KEY + i)))
        if model.bipartite and not model.folded:
            offset += side.size
    run.say(describe(model))
    t0 = time.perf_counter()
    covered = _hubs(run)
    _anchors(run, covered)
    run.say(f"hubs and anchors: {run.filled:,} edges ({time.perf_counter() - t0:.1f}s)")
    m_close = round(model.closure * model.edges)
    t0 = time.perf_counter()
    _chung_lu(run, model.edges - m_close)
    run.say(f"Chung-Lu: {run.filled:,} edges in {run.rounds['chung-lu']} rounds "
            f"({time.perf_counter() - t0:.1f}s)")
    if m_close:
        t0 = time.perf_counter()
        _closures(run, m_close)
        run.say(f"closures: {m_close:,} edges in {run.rounds['closures']} rounds "
                f"({time.perf_counter() - t0:.1f}s)")
    if run.filled != model.edges:  # pragma: no cover - the stages add exactly what is asked
        raise AssertionError(f"generated {run.filled:,} edges, not {model.edges:,}")
    return Graph.from_owned_pairs(run.pairs, n)


def _hubs(run: _Run) -> list[np.ndarray]:
    """Each hub's edges; returns per side the mask of vertices a hub touches."""
    model = run.model
    covered = [np.zeros(s.size, np.uint8) for s in model.sides]
    hub_ids = []
    parts = []
    k = 0
    for i, side in enumerate(model.sides):
        j = 1 - i if model.bipartite else i
        target = run.sides[j]
        for h, degree in enumerate(side.hubs):
            hub = _hub_id(run.sides[i], h)
            hub_ids.append(hub)
            nb = _core.gen_hub_neighbours(target, int(degree), run.seed, _HUB_STREAM + k,
                                          csr.threads())
            covered[j][nb - target[6]] = 1
            parts.append(np.column_stack([np.full(nb.size, hub, np.int32), nb]))
            k += 1
    run.hub_ids = np.asarray(hub_ids, np.int32)
    if parts:
        _add_distinct(run, np.concatenate(parts))
    return covered


def _hub_id(side: tuple, rank: int) -> int:
    """The id of a side's vertex of rank ``rank`` (a hub: rank < its hubs)."""
    return int(_core.gen_scatter(side[5], side[7], rank)) + side[6]


def _anchors(run: _Run, covered: list[np.ndarray]) -> None:
    model = run.model
    parts = []
    for i in range(len(model.sides)):
        other = run.sides[1 - i] if model.bipartite else run.sides[i]
        pairs = _core.gen_anchor_pairs(run.sides[i], other, covered[i], run.seed,
                                       _ANCHOR_STREAM + i, csr.threads())
        parts.append(pairs[pairs[:, 0] >= 0])
    _add_distinct(run, np.concatenate(parts))


def _add_distinct(run: _Run, pairs: np.ndarray) -> None:
    """Adds the distinct new edges among ``pairs`` (all of them: hubs and anchors; the
    pairs' memory is used up)."""
    indptr, indices, _, _ = csr.build_in_place(pairs, run.n)
    base = run.graph() if run.filled else (None, None)
    new, _ = _core.gen_new_edges(indptr, indices, *base, 0, pairs.shape[0], csr.threads())
    if run.filled + new.shape[0] > run.pairs.shape[0]:
        raise ValueError(f"{run.model.edges:,} edges are too few: the hubs and one edge for "
                         f"every other vertex already take {run.filled + new.shape[0]:,}")
    run.add(new)


def _fill(run: _Run, name: str, stage: int, need: int, per_draw: int, draw: Callable,
          base) -> None:
    """Adds ``need`` new edges from candidates ``draw(first, count)`` (``per_draw``
    pairs a draw), round after round; the last round keeps those with the smallest
    hashes. ``base``: the graph the candidates must not repeat (rebuilt each round)."""
    first, rounds, expect = 0, 0, _FIRST_YIELD
    while need > 0:
        rounds += 1
        if rounds > _MAX_ROUNDS:
            raise ValueError(
                f"could not place {need:,} more {name} edges in {_MAX_ROUNDS} rounds: the "
                "graph is too dense for its vertices (fewer edges or more vertices)")
        count = int(math.ceil(need * _EXTRA_DRAWS / (expect * per_draw))) + 64
        first += count
        indptr, indices, _, _ = csr.build_in_place(draw(first - count, count), run.n)
        key = int(_core.gen_mix(run.seed ^ (stage << 40) ^ rounds))
        new, available = _core.gen_new_edges(indptr, indices, *base, key, need, csr.threads())
        del indptr, indices
        run.add(new)
        need -= new.shape[0]
        expect = max(available / (count * per_draw), 1e-3)
        if need > 0:
            base = run.graph()
    run.rounds[name] = rounds


def _chung_lu(run: _Run, total: int) -> None:
    a = run.sides[0]
    b = run.sides[1] if run.model.bipartite else a

    def draw(first, count):
        return _core.gen_draw_pairs(a, b, run.seed, _CL_STREAM, first, count, csr.threads())

    need = total - run.filled
    if need < 0:
        raise ValueError(f"{run.model.edges:,} edges are too few: the hubs and one edge for every "
                         f"other vertex already take {run.filled:,}, and closures "
                         f"{run.model.edges - total:,}")
    _fill(run, "chung-lu", _CL_STREAM, need, 1, draw, run.graph())


def _closures(run: _Run, total: int) -> None:
    indptr, indices = run.graph()
    degrees = np.diff(indptr)
    centers = np.flatnonzero(degrees >= 2).astype(np.int32)
    if centers.size == 0:
        raise ValueError("no vertex has two neighbours to close: no closures possible")
    group = run.model.group
    per = group * (group - 1) // 2
    barred = np.zeros(run.n, np.uint8)
    barred[run.hub_ids] = 1
    hubs = [h for side in run.model.sides for h in side.hubs]
    if hubs:
        _bar_the_heaviest(barred, indptr, indices, degrees, max(hubs), group,
                          total / per / _FIRST_YIELD / centers.size)

    def draw(first, count):
        return _core.gen_closure_pairs(indptr, indices, centers, barred, group, run.seed,
                                       _CLOSURE_STREAM, first, count, csr.threads())

    _fill(run, "closures", _CLOSURE_STREAM, total, per, draw, (indptr, indices))


def _bar_the_heaviest(barred, indptr, indices, degrees, hub: int, group: int,
                      per_center: float) -> None:
    """Marks in ``barred`` the vertices that closures would likely lift to ``hub``'s
    degree: ``per_center`` closures at each center pick a vertex among its ``d``
    neighbours with chance ``min(1, group / d)`` and give it ``group - 1`` edges, so a
    vertex expects ``(group - 1) * per_center`` times the sum of those chances over its
    neighbours, and at most ``(group - 1) * per_center`` times its degree (only the
    vertices that could reach ``hub`` by that bound are summed)."""
    most = (group - 1) * per_center
    chance = np.minimum(1.0, group / np.maximum(degrees, 1)) * (degrees >= 2)
    for v in np.flatnonzero(degrees * (1 + most) >= hub):
        row = indices[indptr[v] : indptr[v + 1]]
        gain = most * float(chance[row].sum())
        if degrees[v] + gain + _CLOSURE_MARGIN * math.sqrt(gain) >= hub:
            barred[v] = 1
