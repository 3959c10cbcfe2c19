"""The options of ``gthinker kplexes`` and :func:`gthinker_kplexes.app.find_kplexes`, each
declared once: a field each (its flag, its keyword, its default, help and rule)."""

from __future__ import annotations

from dataclasses import dataclass

from gthinker.extending import AppOptions, choice, option_field, output_path, positive_int


@dataclass(frozen=True)
class KPlexesOptions(AppOptions):
    mode: str = option_field("cpu", "where to run", choice("cpu"))
    k: int = option_field(2, "each vertex may miss k vertices of the set, itself included "
                             "(1: cliques)", positive_int, flag="-k", metavar="K")
    min_size: int | None = option_field(None, "least vertices of a k-plex, at least 2k - 1",
                                        positive_int, metavar="Q", default_text="2k - 1")
    output: str | None = option_field(None, "write each maximal k-plex to FILE, a line of "
                                            "original ids ('-': standard output)", output_path,
                                      flag=("--output", "-o"), metavar="FILE")

    def check(self) -> None:
        if self.min_size is not None and self.min_size < self.least:
            raise ValueError(f"min_size must be an integer of at least 2k - 1 = {self.least} "
                             f"(smaller k-plexes may be disconnected), got {self.min_size!r}")

    @property
    def least(self) -> int:
        """The least size the search takes: ``2k - 1`` (a k-plex that large has diameter
        at most 2; the search looks for each one within two hops of its first vertex)."""
        return 2 * self.k - 1

    @property
    def q(self) -> int:
        """The least size asked for: ``min_size``, or :attr:`least`."""
        return self.least if self.min_size is None else self.min_size
