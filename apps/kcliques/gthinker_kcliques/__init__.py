"""k-cliques: the tutorial app of docs/writing-apps.md, as a gthinker plugin.

``gthinker_kcliques.app`` holds the work (the Task and :func:`count_kcliques`),
``gthinker_kcliques.options`` its options (each declared once), and
``gthinker_kcliques.command`` its declaration (``gthinker kcliques GRAPH -k K``, the
cluster request, the warm-up step), which loads the work only when a command runs.
"""
