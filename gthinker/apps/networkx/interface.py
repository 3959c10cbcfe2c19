"""The object NetworkX loads for the backend (entry point ``networkx.backends``):
graph conversion both ways, ``can_run`` / ``should_run``, and one attribute per
implemented function."""

from __future__ import annotations

from . import clique, cluster  # noqa: F401  (their decorators register the algorithms)
from .decorators import ALGORITHMS, ask
from .graph import BackendGraph

__all__ = ["BackendInterface", "backend_interface"]


class BackendInterface:
    """What NetworkX's dispatcher asks of a backend (networkx/utils/backends.py)."""

    @staticmethod
    def convert_from_nx(graph, *, edge_attrs=None, node_attrs=None, preserve_edge_attrs=False,
                        preserve_node_attrs=False, preserve_graph_attrs=False, name=None,
                        graph_name=None) -> BackendGraph:
        """The backend graph of a NetworkX graph. No attributes are kept: every
        implemented function reads the structure only (weighted calls fall back)."""
        if isinstance(graph, BackendGraph):
            return graph
        return BackendGraph.from_networkx(graph)

    @staticmethod
    def convert_to_nx(obj, *, name=None):
        """A backend graph as a :class:`networkx.Graph`; any other result as it is."""
        return obj.to_networkx() if isinstance(obj, BackendGraph) else obj

    @staticmethod
    def can_run(name, args, kwargs):
        """True if the backend gives NetworkX's exact result for these arguments,
        else a string that says why not (NetworkX then runs its own, where the
        caller allows falling back)."""
        algorithm = ALGORITHMS.get(name)
        if algorithm is None:
            return f"gthinker does not implement {name}"
        return ask(algorithm.can_run, algorithm, args, kwargs)

    @staticmethod
    def should_run(name, args, kwargs):
        """With automatic dispatch: True if running here should pay off (a graph
        big enough that converting and starting workers cost less than they save)."""
        algorithm = ALGORITHMS[name]
        return ask(algorithm.should_run, algorithm, args, kwargs)


for _name, _algorithm in ALGORITHMS.items():
    setattr(BackendInterface, _name, staticmethod(_algorithm.func))

#: The instance the ``networkx.backends`` entry point names.
backend_interface = BackendInterface()
