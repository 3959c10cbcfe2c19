"""The floor that the matching apps (sm, count, gsword) share, and the only thing they
share: no app imports another. The planner (candidate filters, matching orders, symmetry
breaking, the record layout), the named query patterns and pattern plans, the matching
search (on the CPU: ``search``; on the GPU: ``dfs_gpu``, ``levels_gpu``; which one runs:
``dispatch``) and counting without listing (``counting``: cliques, shapes by formula
from ``formulas`` and ``neighbourhoods``, the rest by the search; on the GPU:
``cliques_gpu``)."""
