"""What a shaped graph is, without building one: the model's parameters
(:class:`Side`, :class:`Model`), the presets of the seed paper's graphs
(:class:`Preset`, :data:`PRESETS`) and the limits of the knobs. Imports nothing heavy,
so that the command line describes the presets and the knobs without loading the
generators (:mod:`gthinker.graphs.generate` builds the graphs, through
:mod:`gthinker.graphs.model`).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

__all__ = ["Side", "Model", "Preset", "PRESETS", "SHAPED_DEFAULTS", "MAX_CLOSURE", "MAX_GROUP",
           "MAX_VERTICES", "FULL_SCALE", "check_count", "check_number"]

#: The most vertices a graph may have (int32 ids).
MAX_VERTICES = 2**31 - 1
#: A preset's scale by default: its full size.
FULL_SCALE = 1.0
#: The knobs of :func:`gthinker.graphs.generate.shaped` that have defaults, with them
#: (the command line's too).
SHAPED_DEFAULTS = {"floor": 1.0, "closure": 0.0, "group": 2}
#: The largest closure share a model takes (closures need a Chung-Lu graph to close).
MAX_CLOSURE = 0.9
#: The largest closure group (a planted clique of group + 1 vertices).
MAX_GROUP = 16


def check_count(name, value, low, high=MAX_VERTICES) -> int:
    """``value`` as an int from ``low`` to ``high``, or a ValueError that names it."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) \
            or not low <= value <= high:
        raise ValueError(f"{name} must be an integer from {low:,} to {high:,}, got {value!r}")
    return int(value)


def check_number(name, value, low, high=math.inf, low_open=False) -> float:
    """``value`` as a finite float from ``low`` (excluded with ``low_open``) to
    ``high``, or a ValueError that names it."""
    ok = isinstance(value, numbers.Real) and not isinstance(value, bool)
    ok = ok and math.isfinite(value) and (value > low if low_open else value >= low) \
        and value <= high
    if not ok:
        where = f"{'above' if low_open else 'at least'} {low:g}"
        where += f" and at most {high:g}" if math.isfinite(high) else ""
        raise ValueError(f"{name} must be a number {where}, got {value!r}")
    return float(value)


@dataclass(frozen=True)
class Side:
    """One side of a generated graph.

    Attributes
    ----------
    size : int
        Its vertices.
    top, floor : float
        The weight curve of its non-hub vertices: a power law truncated to
        ``[floor, top]`` (about the largest and smallest expected degree, less the
        anchor edge).
    hubs : tuple of int
        The exact degrees of its hubs, whose neighbours are on the other side.
    """

    size: int
    top: float
    floor: float = 1.0
    hubs: tuple = ()


@dataclass(frozen=True)
class Model:
    """A graph to generate: ``edges`` edges on one side (a one-sided graph) or
    between two (bipartite; ``folded``: both numbered from 0), with a ``closure``
    share of them closing neighbourhoods of ``group`` vertices."""

    edges: int
    sides: tuple
    folded: bool = False
    closure: float = 0.0
    group: int = 2

    @property
    def bipartite(self) -> bool:
        return len(self.sides) == 2

    @property
    def num_vertices(self) -> int:
        sizes = [s.size for s in self.sides]
        return max(sizes) if self.folded else sum(sizes)


@dataclass(frozen=True)
class Preset:
    """A graph shape of the seed paper's Table I (``docs/generating.md``).

    ``vertices``, ``edges`` (undirected: the table's |E| counts each edge twice) and
    ``max_degree`` are the real graph's; ``clustering`` its average clustering
    coefficient where known. ``sides`` (full size), ``folded``, ``closure`` and
    ``group`` make the model; ``note`` says where the model departs from the graph.
    """

    name: str
    about: str
    vertices: int
    edges: int
    max_degree: int
    clustering: float | None
    sides: tuple
    folded: bool = False
    closure: float = 0.0
    group: int = 2
    note: str = ""

    def model(self, scale: float = FULL_SCALE) -> Model:
        """The model at ``scale`` (0 < scale <= 1): side sizes, edges, hub degrees and
        top weights times ``scale``; a top weight stays at least three times its side's
        mean degree (the hubs grow with it, keeping their ratio to it), so that a small
        graph keeps its heavy tail (fewer vertices than a hub needs cap it)."""
        scale = check_number("scale", scale, 0.0, FULL_SCALE, low_open=True)
        edges = max(1, round(self.edges * scale))
        sizes = [max(2, round(s.size * scale)) for s in self.sides]
        sides = []
        for i, s in enumerate(self.sides):
            mean = 2 * edges / sum(sizes) if len(sizes) == 1 else edges / sizes[i]
            top = max(s.top * scale, 3 * mean, s.floor)
            grown = top / (s.top * scale)  # the hubs keep their ratio to the top weight
            other = sizes[1 - i] if len(sizes) == 2 else sizes[i] - len(s.hubs) - 1
            hubs = tuple(min(round(h * scale * grown), other) for h in s.hubs)
            sides.append(Side(sizes[i], top, s.floor, hubs))
        return Model(edges, tuple(sides), folded=self.folded, closure=self.closure,
                     group=self.group)


def _social(name, about, n, m, dmax, clustering, floor, closure, group, note=""):
    """A one-sided preset: the hub has the largest degree, the next weights start at half."""
    return Preset(name, about, n, m, dmax, clustering, (Side(n, dmax / 2, floor, (dmax,)),),
                  closure=closure, group=group, note=note)


#: The presets by name: the shapes of seven graphs of the seed paper's Table I.
PRESETS = {p.name: p for p in (
    _social("soc-pokec", "Pokec friendships (SNAP soc-Pokec, undirected)",
            1_632_803, 22_301_964, 14_854, 0.109, 6.0, 0.25, 3),
    _social("soc-livejournal", "LiveJournal friendships (Network Repository soc-livejournal)",
            4_033_137, 27_933_062, 2_651, 0.274, 3.0, 0.45, 3,
            "no big dense communities (degeneracy 10); the clustering is SNAP's "
            "soc-LiveJournal1's"),
    _social("socfb-B-anon", "Facebook friendships, anonymized (Network Repository socfb-B-anon)",
            2_937_612, 20_959_854, 4_356, None, 3.5, 0.25, 3),
    Preset("edit-shwiki", "Serbo-Croatian Wikipedia edits: users and pages (KONECT edit-shwiki), "
           "folded", 4_579_000, 6_265_000, 4_043_000, None,
           (Side(4_579_000, 20_000.0), Side(572_000, 100_000.0, 1.0, (4_043_000,))), folded=True,
           note="the users' side (1/8 of the pages) and the top weights are assumed"),
    Preset("edit-enwiktionary", "English Wiktionary edits: users and pages (KONECT "
           "edit-enwiktionary), folded", 5_812_000, 27_115_000, 3_504_000, None,
           (Side(5_812_000, 50_000.0), Side(1_453_000, 1_000_000.0, 1.0, (3_504_000,))),
           folded=True, note="the users' side (1/4 of the pages) and the top weights are assumed"),
    _social("wikipedia_link_sr", "Serbian Wikipedia hyperlinks (KONECT wikipedia_link_sr, "
            "undirected)", 3_175_000, 103_300_000, 369_000, None, 22.0, 0.25, 4,
            "toned down: a thinner tail (floor 22) and 5-cliques, for an MCE that ends; the "
            "real graph's big overlapping cliques are not modelled"),
    Preset("trackers", "Web domains and the trackers they embed (KONECT trackers), folded",
           27_665_730, 140_613_762, 11_571_952, None,
           (Side(27_665_730, 100_000.0, 1.0, (1_100_065,)),
            Side(12_756_244, 6_000_000.0, 1.0, (11_571_952,))), folded=True,
           note="the top weights of the two sides are assumed"),
)}
