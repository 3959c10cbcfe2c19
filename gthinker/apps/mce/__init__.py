"""Maximal clique enumeration: :func:`run` (CPU task, two GPU engines), :func:`iter_cliques`.

The public names are those of :mod:`.app`, imported on first use."""

from .. import facade

__getattr__ = facade(__name__)
