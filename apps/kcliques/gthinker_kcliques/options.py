"""The options of ``gthinker kcliques`` and :func:`gthinker_kcliques.app.count_kcliques`,
each declared once: a field each (its flag, its keyword, its default, help and rule)."""

from __future__ import annotations

from dataclasses import dataclass

from gthinker.extending import AppOptions, choice, option_field, positive_int


@dataclass(frozen=True)
class KCliquesOptions(AppOptions):
    mode: str = option_field("cpu", "where to run", choice("cpu"))
    k: int = option_field(3, "clique size", positive_int, flag="-k", metavar="K")
