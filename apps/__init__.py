"""Bundled applications, each written on the public Task API (one module per app).

- :mod:`gthinker.apps.mce`: maximal clique enumeration.
"""

from . import mce

__all__ = ["mce"]
