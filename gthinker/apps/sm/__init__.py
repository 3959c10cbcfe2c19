"""Subgraph matching: :func:`count` (embeddings or distinct subgraphs), :func:`match`.

The public names are those of :mod:`.app`, imported on first use."""

from .. import facade

__getattr__ = facade(__name__)
