"""The GPU engines of the matching search, by name (``gpu_mode``, ``--gpu-mode``).

A module of its own so that the command (which must stay light) and the engine
(:mod:`gthinker.apps.matching.dispatch`) read the one list without importing each other.
"""

from __future__ import annotations

__all__ = ["DFS_MAX_QUERY", "GPU_MODES"]

#: The depth-first engine (:mod:`gthinker.apps.matching.dfs_gpu`), or the GPUContext apps
#: of :mod:`gthinker.apps.matching.levels_gpu` in their two record layouts; auto: dfs where
#: it takes the query.
GPU_MODES = ("auto", "dfs", "prefix", "expand")
#: Query vertices the depth-first engine takes (its per-warp state in shared memory).
DFS_MAX_QUERY = 32

