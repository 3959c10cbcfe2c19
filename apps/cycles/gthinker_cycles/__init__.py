"""k-cycles: a gthinker app with a CPU side and a GPU side, as a plugin.

``gthinker_cycles.app`` holds the work (:func:`count_cycles`, its Task and its
GPUContext), ``gthinker_cycles.options`` its options (each declared once), and
``gthinker_cycles.command`` its declaration (``gthinker cycles GRAPH
-k K [--mode cpu|gpu|hybrid] [--gpus N]``), which loads the work only when a command runs.
"""
