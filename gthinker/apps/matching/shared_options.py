"""The options that sm, count and gsword share, each declared once here (a light module:
the command line builds its parsers from it)."""

from __future__ import annotations

from gthinker.extending import boolean, choice, option_field

__all__ = ["ISOMORPHISM", "SEMANTICS", "ignore_labels_field", "semantics_field"]

#: The matching semantics, the first the default (SGSI's names).
SEMANTICS = ("isomorphism", "homomorphism", "edge-isomorphism")
ISOMORPHISM = SEMANTICS[0]

#: The help of ``ignore_labels`` (``--ignore-labels``).
IGNORE_LABELS_HELP = ("match the structure only: drop the vertex labels of the data graph and "
                      "the query (the rule for labels: docs/formats.md, 'Labels')")


def ignore_labels_field():
    """The ``ignore_labels`` option (a new field for each app's options class): the label
    rule of :func:`gthinker.apps.matching.planner.match_labels`."""
    return option_field(False, IGNORE_LABELS_HELP, boolean)


def semantics_field():
    """The ``semantics`` option of sm and count (one declaration for both)."""
    return option_field(
        ISOMORPHISM, "what a match is: isomorphism (an injective map of the query's vertices), "
        "homomorphism (query vertices may share a data vertex) or edge-isomorphism (a "
        "homomorphism that maps distinct query edges to distinct data edges); each keeps "
        "vertex labels, edge labels and directions", choice(*SEMANTICS))
