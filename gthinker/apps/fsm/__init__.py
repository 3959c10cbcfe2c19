"""Frequent subgraph mining: :func:`mine` lists every connected labeled pattern of up to
``max_edges`` edges whose domain (MNI) support reaches ``support``.

The public names are those of :mod:`.app`, imported on first use."""

from .. import facade

__getattr__ = facade(__name__)
