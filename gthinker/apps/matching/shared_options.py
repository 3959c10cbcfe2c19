"""The options that sm, count and gsword share, each declared once here (a light module:
the command line builds its parsers from it)."""

from __future__ import annotations

from gthinker.extending import boolean, option_field

__all__ = ["ignore_labels_field"]

#: The help of ``ignore_labels`` (``--ignore-labels``).
IGNORE_LABELS_HELP = ("match the structure only: drop the vertex labels of the data graph and "
                      "the query (the rule for labels: docs/formats.md, 'Labels')")


def ignore_labels_field():
    """The ``ignore_labels`` option (a new field for each app's options class): the label
    rule of :func:`gthinker.apps.matching.planner.match_labels`."""
    return option_field(False, IGNORE_LABELS_HELP, boolean)
