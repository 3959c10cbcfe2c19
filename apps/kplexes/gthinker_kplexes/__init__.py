"""Maximal k-plexes: a gthinker app, as a plugin.

``gthinker_kplexes.app`` holds the work (:func:`find_kplexes`, :func:`iter_kplexes`, its
Task), and ``gthinker_kplexes.command`` its declaration (``gthinker kplexes GRAPH -k K
--min-size Q [--output FILE]``), which loads the work only when a command runs.
"""
