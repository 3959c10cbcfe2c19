"""The options of ``gthinker fsm`` and :func:`gthinker.apps.fsm.mine`, each declared once."""

from __future__ import annotations

from dataclasses import dataclass

from gthinker.extending import (
    AppOptions,
    boolean,
    mode_field,
    option_field,
    output_path,
    positive_int,
)

from .search import MAXV

__all__ = ["FSMOptions", "MAX_EDGES", "MODES"]

#: The most edges a pattern may have (the search's fixed pattern size).
MAX_EDGES = MAXV - 1
MODES = ("cpu", "gpu", "hybrid")


def _max_edges(name, value):
    k = positive_int(name, value)
    if k > MAX_EDGES:
        raise ValueError(f"{name} must be at most {MAX_EDGES}, got {k}")
    return k


@dataclass(frozen=True)
class FSMOptions(AppOptions):
    """Every option of frequent subgraph mining (besides the shared ones)."""

    mode: str = mode_field(MODES, "hybrid if a CUDA GPU is usable, else cpu")
    max_edges: int = option_field(
        3, f"mine the patterns of 1 to K edges (at most {MAX_EDGES})", _max_edges, metavar="K")
    support: int = option_field(
        None, "the least domain (MNI) support of a frequent pattern: the smallest number of "
        "distinct data vertices any one pattern vertex is mapped to", positive_int,
        metavar="S", default_text="required")
    exact_support: bool = option_field(
        True, "count each frequent pattern's support exactly; --no-exact-support stops "
        "counting a pattern once each of its vertices has S domain vertices (as G2Miner "
        "does): the same patterns, sooner, each support then at least S, not exact", boolean)
    edge_labels: bool = option_field(
        True, "honour the graph's edge labels where it has them (G2Miner's FSM ignores them: "
        "--no-edge-labels mines as it does)", boolean)
    output: str | None = option_field(
        None, "write the frequent patterns to FILE, one per line: support, then each edge as "
        "'i:label-j:label' ('-': standard output)", output_path,
        flag=("--output", "-o"), metavar="FILE")

    scheduler = ("threads", "time_budget")
    forwards = False

    def check(self) -> None:
        if self.support is None:
            raise ValueError("support (--support S) is required")
