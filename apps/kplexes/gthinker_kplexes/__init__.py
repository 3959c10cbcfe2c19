"""Maximal k-plexes: a gthinker app, as a plugin.

``gthinker_kplexes.app`` holds the work (:func:`find_kplexes`, :func:`iter_kplexes`, its
Task), ``gthinker_kplexes.options`` its options (each declared once, with the rule
``min_size >= 2k - 1``), and ``gthinker_kplexes.command`` its declaration (``gthinker
kplexes GRAPH -k K --min-size Q [--output FILE]``), which loads the work only when a command
runs.
"""
