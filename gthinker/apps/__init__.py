"""The bundled applications, one package each, every one written on the public API.

- :mod:`gthinker.apps.mce`: maximal clique enumeration (``mce.run``).
- :mod:`gthinker.apps.sm`: subgraph matching (``sm.count``, ``sm.match``).
- :mod:`gthinker.apps.count`: triangles, k-cliques, cliques of every size, patterns
  (``count.count``).
- :mod:`gthinker.apps.gsword`: sampling-based estimates (``gsword.estimate``).
- :mod:`gthinker.apps.matching`: what sm, count and gsword share, and the only thing
  they share (no app imports another): the matching planner, named patterns, the
  matching search and the counting engines.
- :mod:`gthinker.apps.networkx`: the NetworkX backend, over the apps.

Each app package exposes its public names from its ``app`` module, imported on first
use (so that reading an app's command-line declaration loads no compiler), declares
every option once in its ``options`` module, and declares itself to the engine in its
``command`` module (see ``docs/architecture.md``, "Adding an app").
"""

import importlib

from .. import stopping

# Where a program imports an app in its main thread and runs it in another, Ctrl-C still
# reaches the job (the app's own modules, which install this too, load on first use).
stopping.install()


def facade(package: str, module: str = "app"):
    """A module ``__getattr__`` for the app package ``package``: its public names are
    those of ``package.module``, imported when one is first asked for."""

    def __getattr__(name):
        if name.startswith("_"):
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(f"{package}.{module}"), name)

    return __getattr__
