"""What counting a pattern would cost each way, estimated before anything runs: the
matching search's enumeration against a formula's sums, so that the dispatch
(:func:`gthinker.apps.matching.counting.count_plan`, :func:`gthinker.apps.sm.count`) can
leave a search that would be astronomically larger (a 4-cycle on a graph with a hub of
millions of neighbours: every wedge through the hub is a partial match) to the formula.

**The search** (:func:`search_steps`): level by level along the pattern plan's order, up to
its count-only tail, each partial match it keeps times the list it reads to go on (the
row of the next position's backward neighbour, or the shortest of their rows, which the
intersection walks; at the tail, its intersections). The first j positions form a tree
(each hangs from its first backward neighbour), whose homomorphisms the data graph's
adjacency counts exactly, by sums over rows from the leaves up, restricted along the
tree's edges as the plan's symmetry-breaking restrictions say (``H_j``). The other
backward edges, the injectivity and the other restrictions are what the search checks:
``H_j x`` the mean, over :data:`SAMPLES` tree homomorphisms drawn in proportion to their
number (a hub weighs what its walks weigh), of the next step's cost where they pass
(importance sampling, a fixed seed: the same estimate every run). On a bipartite graph no
draw closes a triangle, so a pattern with one costs nothing past its first triangle; a
4-cycle's steps are its wedges' intersections.

**The formulas** (:func:`formula_steps`): the inner steps of their jobs, exactly from the
degrees: the per-edge sums (:class:`gthinker.apps.matching.formulas.EdgeStats`) read every
wedge, ``sum of deg^2``; the 4-cycle alone counts each cycle at its vertex of highest
degree rank (:class:`gthinker.apps.matching.formulas.FourCycles`), ``sum of deg(v)
out(v)``, ``out(v)`` its neighbours of higher rank (O(m sqrt(m)) at most, a hub's wedges
never). The neighbourhood shapes (:mod:`gthinker.apps.matching.neighbourhoods`) are not
weighed: building each vertex's neighbourhood graph has that bound, but counting in it
follows the triangles of each neighbourhood, which the degrees do not bound (the 4-wheel
on socfb-B-anon took 27 s by its formula where the search took a fraction of a second:
docs/benchmarks.md); in gpu and hybrid modes the search counts them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import gthinker
from gthinker.setops import lower_bound

from . import formulas
from .pattern_plan import PatternPlan

__all__ = ["FORMULA_RATIO", "SAMPLES", "WEIGHED_MODES", "WEIGHED_SHAPES", "Costs", "costs",
           "formula_steps", "search_steps", "weighed"]

#: Tree homomorphisms drawn per level of the search's estimate.
SAMPLES = 2048
#: In gpu and hybrid modes a shape with a formula is counted by it (on the CPU) when the
#: search would enumerate at least this many times the formula's steps: the GPU reads a
#: step many times faster than the CPU's cores (a choice that leaves the GPU every search
#: within two orders of magnitude of the formula, not a measured optimum).
FORMULA_RATIO = 100
#: The modes where the dispatch weighs the search against a formula (in the others a
#: formula always counts its shape).
WEIGHED_MODES = ("gpu", "hybrid")


@dataclass(frozen=True)
class Costs:
    """Estimated steps of the search and of the formula (None: the shape has none)."""

    search: float
    formula: float | None

    def formula_wins(self) -> bool:
        """Would the search cost :data:`FORMULA_RATIO` times the formula or more?"""
        return self.formula is not None and self.search >= FORMULA_RATIO * self.formula

    def stats(self) -> dict:
        """The comparison for a result's ``stats["costs"]``: both estimates, the ratio
        the formula needs, and which way the dispatch went."""
        return {"search_steps": self.search, "formula_steps": self.formula,
                "formula_ratio": FORMULA_RATIO,
                "by": "formula" if self.formula_wins() else "search"}

    def why(self, shape: str) -> str:
        """The comparison, in words (the result's ``mode_reason``)."""
        if self.formula is None:
            return f"the search: about {self.search:.3g} partial matches (no formula)"
        ratio = self.search / max(self.formula, 1.0)
        if self.formula_wins():
            return (f"the formula for {shape} on the CPU: the search would enumerate about "
                    f"{self.search:.3g} partial matches, {ratio:.3g}x the formula's "
                    f"{self.formula:.3g} steps (a formula from {FORMULA_RATIO}x)")
        return (f"the search: about {self.search:.3g} partial matches, {ratio:.3g}x the "
                f"formula's {self.formula:.3g} steps (a formula from {FORMULA_RATIO}x)")


def weighed(graph: gthinker.Graph | None, plan: PatternPlan, mode: str) -> Costs | None:
    """The :class:`Costs` the dispatch weighs for ``plan`` in ``mode``, or None where it
    weighs nothing (no graph, a mode outside :data:`WEIGHED_MODES`, a shape outside
    :data:`WEIGHED_SHAPES`)."""
    if graph is None or mode not in WEIGHED_MODES or plan.shape not in WEIGHED_SHAPES:
        return None
    return costs(graph, plan)


def costs(graph: gthinker.Graph, plan: PatternPlan) -> Costs:
    """The :class:`Costs` of counting ``plan``'s pattern in the unlabeled ``graph``, kept
    with the graph (the dispatch asks twice: which engine, and why)."""
    kept = graph.derived("matching.costs", lambda _: {})
    key = (plan.edges, plan.order)
    if key not in kept:
        kept[key] = Costs(search_steps(graph, plan), formula_steps(graph, plan.shape))
    return kept[key]


#: The shapes whose formula's steps the degrees bound (:func:`formula_steps`).
WEIGHED_SHAPES = frozenset({"4-cycle"}) | frozenset(formulas.FORMULAS)


def formula_steps(graph: gthinker.Graph, shape: str | None) -> float | None:
    """The steps of the formula job that counts ``shape`` (see the module docstring), or
    None when no formula of :data:`WEIGHED_SHAPES` counts it."""
    deg = graph.degrees().astype(np.float64)
    if shape == "4-cycle":
        return float(deg @ ranked_out_degrees(graph)) + graph.num_vertices
    if shape in formulas.FORMULAS:
        return float(deg @ deg) + graph.num_vertices
    return None


def ranked_out_degrees(graph: gthinker.Graph) -> np.ndarray:
    """Each vertex's neighbours of higher degree rank (by degree, ties by number): its
    row's length in :meth:`gthinker.Graph.degree_oriented`."""
    out = np.empty(graph.num_vertices, np.int64)
    _higher(graph.indptr, graph.indices, graph.degrees(), out)
    return out


@gthinker.compiler.jit("cost estimates", nogil=True)
def _higher(indptr, indices, deg, out):
    for v in range(out.size):
        k = 0
        for e in range(indptr[v], indptr[v + 1]):
            u = indices[e]
            k += deg[u] > deg[v] or (deg[u] == deg[v] and u > v)
        out[v] = k


@gthinker.compiler.jit("cost estimates", nogil=True)
def _row_sums(indptr, indices, w, above, out):
    """``out[v]``: the sum of ``w`` over v's neighbours (those above v when ``above``)."""
    for v in range(out.size):
        lo = lower_bound(indices, indptr[v], indptr[v + 1], v + 1) if above else indptr[v]
        t = 0.0
        for e in range(lo, indptr[v + 1]):
            t += w[indices[e]]
        out[v] = t


@gthinker.compiler.jit("cost estimates", nogil=True)
def _firsts(indptr, indices, at, above, out):
    """Where each ``at[k]``'s row starts (past ``at[k]`` when ``above``)."""
    for k in range(at.size):
        v = at[k]
        out[k] = lower_bound(indices, indptr[v], indptr[v + 1], v + 1) if above else indptr[v]


def search_steps(graph: gthinker.Graph, plan: PatternPlan, samples: int = SAMPLES) -> float:
    """The steps of the matching search for ``plan`` (see the module docstring): at each
    level, for each partial match it keeps, the list it reads to reach the next position
    (a row; for a position with several backward neighbours, the shortest of their rows,
    which the intersection walks), and for the count-only tail, its intersections."""
    enumerated = max(plan.num_vertices - plan.count_only, 1)
    rng = np.random.default_rng(0)
    total = float(graph.indices.size)  # the first level: each candidate's row
    for j in range(2, enumerated + 1):
        total += _level(graph, plan, j, enumerated, samples, rng)
    return total


def _level(graph, plan, j, enumerated, samples, rng) -> float:
    """The steps past the partial matches of the first j positions: their tree's
    homomorphisms (restricted along its edges as the plan restricts them) times the mean,
    over :func:`_sample`'s draws, of the next step's cost where the search keeps them."""
    parent = [-1] + [plan.backward[i][0] for i in range(1, j)]
    above = [i > 0 and (parent[i], i) in plan.restrictions for i in range(j)]
    weight = _tree_weights(graph, parent, above)
    homs = float(weight[0].sum())
    if homs == 0:
        return 0.0
    drawn = _sample(graph, parent, above, weight, samples, rng)
    keep = np.ones(samples, bool)
    for i in range(1, j):  # the backward edges beside the tree's
        for b in plan.backward[i][1:]:
            keep &= _adjacent(graph, drawn[b], drawn[i])
        for b in range(i):  # one data vertex per position
            keep &= drawn[b] != drawn[i]
    for a, b in plan.restrictions:
        if b < j:
            keep &= drawn[a] < drawn[b]
    deg = graph.degrees()
    step = np.zeros(samples)
    for t in range(j, j + 1 if j < enumerated else plan.num_vertices):  # next, or the tail
        step += np.min([deg[drawn[b]] for b in plan.backward[t] if b < j], axis=0)
    return homs * float((keep * step).mean())


def _tree_weights(graph, parent, above):
    """Per position i, ``w_i(x)``: the homomorphisms of the subtree below i with i at x."""
    j = len(parent)
    weight: list = [None] * j
    for i in range(j - 1, -1, -1):
        w = np.ones(graph.num_vertices)
        for c in range(i + 1, j):
            if parent[c] == i:
                sums = np.empty(graph.num_vertices)
                _row_sums(graph.indptr, graph.indices, weight[c], above[c], sums)
                w *= sums
        weight[i] = w
    return weight


def _sample(graph, parent, above, weight, samples, rng):
    """``samples`` tree homomorphisms drawn in proportion to their number: the first
    position by its weight, each other one among its parent's neighbours (above it, where
    a restriction says so) by its own weight."""
    indptr, indices = graph.indptr, graph.indices
    cum = np.cumsum(weight[0])
    drawn = [np.searchsorted(cum, rng.random(samples) * cum[-1], side="right")]
    for i in range(1, len(parent)):
        at = drawn[parent[i]]
        first = np.empty(samples, np.int64)
        _firsts(indptr, indices, at, above[i], first)
        end = indptr[at + 1]
        u = rng.random(samples)
        if (weight[i] == 1).all():  # a leaf: uniform
            pick = first + (u * (end - first)).astype(np.int64)
        else:
            pick = np.empty(samples, np.int64)
            for x in np.unique(at):  # each drawn vertex's row once
                mine = at == x
                lo = first[mine][0]
                row = np.cumsum(weight[i][indices[lo:indptr[x + 1]]])
                pick[mine] = lo + np.searchsorted(row, u[mine] * row[-1], side="right")
        # (a row the weights leave empty has no draws: its partial matches weigh 0)
        drawn.append(indices[np.clip(pick, 0, np.maximum(end - 1, 0))].astype(np.int64))
    return drawn


def _adjacent(graph, a, b):
    """Whether ``b[k]`` is a neighbour of ``a[k]``, for every k."""
    out = np.empty(a.size, np.bool_)
    _adjacent_pairs(graph.indptr, graph.indices, a, b, out)
    return out


@gthinker.compiler.jit("cost estimates", nogil=True)
def _adjacent_pairs(indptr, indices, a, b, out):
    for k in range(a.size):
        i = lower_bound(indices, indptr[a[k]], indptr[a[k] + 1], b[k])
        out[k] = i < indptr[a[k] + 1] and indices[i] == b[k]
