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
    :meth:`vertices` answers (and keeps) each (label, needs) asked."""

    def __init__(self, graph, vlab, elab, by_label, label_start):
        self.by_label, self.label_start = by_label, label_start
        n = vlab.size
        self.vnames, vrank = np.unique(vlab, return_inverse=True)
        self.enames, erank = (np.unique(elab, return_inverse=True) if elab.size
                              else (np.zeros(1, np.int64), 0))
        self.kinds = self.vnames.size * self.enames.size
        self.keys = self.counts = None
        if graph.indices.size and self.kinds * max(n, 1) < 2**62:
            src = np.repeat(np.arange(n, dtype=np.int64), np.diff(graph.indptr))
            kind = erank * self.vnames.size + vrank[graph.indices]
            self.keys, self.counts = np.unique(src * self.kinds + kind, return_counts=True)
        self._kept: dict = {}

    def vertices(self, label, needs) -> np.ndarray:
        """The vertices of ``label`` with at least ``c`` neighbours of each ``((edge
        label, vertex label), c)`` of ``needs`` (a sorted tuple), in their order in
        ``by_label``."""
        key = (label, needs)
        if key not in self._kept:
            self._kept[key] = self._vertices(label, needs)
        return self._kept[key]

    def _vertices(self, label, needs):
        if 0 <= label < self.label_start.size - 1:
            vs = self.by_label[self.label_start[label]:self.label_start[label + 1]]
        else:
            vs = self.by_label[:0]
        if self.keys is None:
            return vs
        ok = np.ones(vs.size, bool)
        for (el, b), c in needs:
            e, r = np.searchsorted(self.enames, el), np.searchsorted(self.vnames, b)
            if (e >= self.enames.size or self.enames[e] != el or r >= self.vnames.size
                    or self.vnames[r] != b):
                return vs[:0]
            q = vs.astype(np.int64) * self.kinds + e * self.vnames.size + r
            at = np.minimum(np.searchsorted(self.keys, q), self.keys.size - 1)
            ok &= (self.keys[at] == q) & (self.counts[at] >= c)
        return vs[ok]
