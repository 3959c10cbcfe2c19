"""gSWORD: :func:`estimate` counts embeddings by random walks (WanderJoin, Alley).

The public names are those of :mod:`.app`, imported on first use."""

from .. import facade

__getattr__ = facade(__name__)
