"""Graph input: the :class:`~gthinker.graphs.graph.Graph` (``graph``), its arrays and
the kernels that build them (``csr``), the file formats (``formats``) and how a path
picks one (``files``), converting between them (``convert``), and generators
(``generate``)."""
