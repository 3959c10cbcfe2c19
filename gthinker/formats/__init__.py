"""The graph file formats, one module each; :mod:`gthinker.graph_files` holds the
registry that picks one for a file (by its first bytes, then its name).

- :mod:`~gthinker.formats.snap`: SNAP edge lists (``u v`` per line)
- :mod:`~gthinker.formats.labeled`: the labeled ``.graph`` format (``t``/``v``/``e`` lines)
- :mod:`~gthinker.formats.mtx`: Matrix Market coordinate files (``.mtx``)
- :mod:`~gthinker.formats.npz`: scipy.sparse ``.npz`` files
- :mod:`~gthinker.formats.binary`: gthinker's memory-mapped binary graphs
- :mod:`~gthinker.formats.text`: the streaming text input they share (blocks of
  whole lines into the C++ scanner, gzip, line-length and memory checks)
"""
