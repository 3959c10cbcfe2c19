"""Pattern counting: :func:`count` (triangles, k-cliques, cliques of every size, patterns).

The public names are those of :mod:`.app`, imported on first use."""

from .. import facade

__getattr__ = facade(__name__)
