"""Bundled applications, each written on the public Task API (one module per app).

- :mod:`gthinker.apps.mce`: maximal clique enumeration (CPU task; its GPU side is
  :mod:`gthinker.apps.mce_gpu`, loaded by ``mce.run(mode="gpu")``).
"""

from . import mce, sm

__all__ = ["mce", "sm"]
