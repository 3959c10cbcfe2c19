"""A filter on the candidates of a pattern vertex: a data vertex can be mapped to pattern
vertex ``i`` only if it has, for each (edge label, vertex label) among ``i``'s pattern
neighbours, at least as many neighbours of that kind as ``i`` has. The vertices it drops
are in no domain of ``i``, so the batch neither searches them nor counts them as
candidates: a pattern with fewer candidates than the support at some vertex is
infrequent before any search, and the others need fewer failures to stop."""

from __future__ import annotations

import numpy as np

__all__ = ["LabelFilter"]


class LabelFilter:
    """The graph's (vertex, edge label, neighbour label) counts, sorted for look-ups;
    :meth:`vertices` answers (and keeps) each (label, needs) asked, from the counts of
    each (label, edge label, neighbour label) it has looked up (kept too)."""

    def __init__(self, graph, vlab, elab, by_label, label_start):
        self.by_label, self.label_start = by_label, label_start
        n = vlab.size
        vnames, vrank = np.unique(vlab, return_inverse=True)
        enames, erank = (np.unique(elab, return_inverse=True) if elab.size
                         else (np.zeros(1, np.int64), 0))
        self.vrank = {int(x): r for r, x in enumerate(vnames.tolist())}
        self.erank = {int(x): r for r, x in enumerate(enames.tolist())}
        self.kinds = vnames.size * enames.size
        self.keys = self.counts = None
        if graph.indices.size and self.kinds * max(n, 1) < 2**62:
            src = np.repeat(np.arange(n, dtype=np.int64), np.diff(graph.indptr))
            kind = erank * vnames.size + vrank[graph.indices]
            self.keys, self.counts = np.unique(src * self.kinds + kind, return_counts=True)
        self._kept: dict = {}
        self._neighbours: dict = {}

    def vertices(self, label, needs) -> np.ndarray:
        """The vertices of ``label`` with at least ``c`` neighbours of each ``((edge
        label, vertex label), c)`` of ``needs`` (a sorted tuple), in their order in
        ``by_label``."""
        key = (label, needs)
        if key not in self._kept:
            vs = self._of_label(label)
            ok = np.ones(vs.size, bool)
            if self.keys is not None:
                for (el, b), c in needs:
                    ok &= self._count(label, el, b) >= c
            self._kept[key] = vs[ok]
        return self._kept[key]

    def _of_label(self, label):
        if 0 <= label < self.label_start.size - 1:
            return self.by_label[self.label_start[label]:self.label_start[label + 1]]
        return self.by_label[:0]

    def _count(self, label, el, b):
        """How many neighbours of label ``b`` through edges of label ``el`` each vertex of
        ``label`` has."""
        key = (label, el, b)
        if key not in self._neighbours:
            vs = self._of_label(label)
            if el not in self.erank or b not in self.vrank:
                self._neighbours[key] = np.zeros(vs.size, np.int64)
            else:
                q = (vs.astype(np.int64) * self.kinds
                     + self.erank[el] * len(self.vrank) + self.vrank[b])
                at = np.minimum(np.searchsorted(self.keys, q), self.keys.size - 1)
                self._neighbours[key] = np.where(self.keys[at] == q, self.counts[at], 0)
        return self._neighbours[key]
