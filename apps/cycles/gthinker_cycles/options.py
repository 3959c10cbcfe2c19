"""The options of ``gthinker cycles`` and :func:`gthinker_cycles.app.count_cycles`, each
declared once: a field each (its flag, its keyword, its default, help and rule)."""

from __future__ import annotations

import numbers
from dataclasses import dataclass

from gthinker.extending import AppOptions, mode_field, option_field

#: The shortest cycle.
MIN_K = 3


def cycle_length(name, k) -> int:
    """``k`` if it is a cycle length (an integer >= MIN_K), else ValueError."""
    if isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < MIN_K:
        raise ValueError(f"{name} must be an integer of at least {MIN_K}, got {k!r}")
    return int(k)


@dataclass(frozen=True)
class CyclesOptions(AppOptions):
    mode: str = mode_field(("cpu", "gpu", "hybrid"), "hybrid if a CUDA GPU is usable, else cpu")
    k: int = option_field(4, f"vertices of a cycle, at least {MIN_K}", cycle_length, flag="-k",
                          metavar="K")

    gpu = True  # every GPU option, --gpus and the GPU worker's, is a flag
