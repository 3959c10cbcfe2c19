"""The graph file formats, one module each; :mod:`gthinker.graphs.files` holds the
registry that picks one for a file (by its first bytes, then its name).

- :mod:`~gthinker.graphs.formats.snap`: SNAP edge lists (``u v`` per line)
- :mod:`~gthinker.graphs.formats.labeled`: the labeled ``.graph`` format (``t``/``v``/``e`` lines)
- :mod:`~gthinker.graphs.formats.mtx`: Matrix Market coordinate files (``.mtx``)
- :mod:`~gthinker.graphs.formats.npz`: scipy.sparse ``.npz`` files
- :mod:`~gthinker.graphs.formats.binary`: gthinker's memory-mapped binary graphs
- :mod:`~gthinker.graphs.formats.text`: the streaming text input they share (blocks of
  whole lines into the C++ scanner, gzip, line-length and memory checks)
"""
