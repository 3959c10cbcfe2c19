"""Bundled applications, each written on the public Task API (one module per app).

- :mod:`gthinker.apps.mce`: maximal clique enumeration (CPU task; its GPU engines are
  :mod:`gthinker.apps.mce_bitsets_gpu` and :mod:`gthinker.apps.mce_gpu`, loaded by
  ``mce.run(mode="gpu")``).
- :mod:`gthinker.apps.count`: triangles, k-cliques, cliques of every size, small patterns.
"""

from . import count, mce, sm

__all__ = ["count", "mce", "sm"]
