"""gthinker as a NetworkX backend named ``gthinker``.

Installed with the package (entry points ``networkx.backends`` and
``networkx.backend_info``), so NetworkX finds it by itself::

    nx.find_cliques(G, backend="gthinker")         # one call
    NETWORKX_BACKEND_PRIORITY=gthinker python ...  # unchanged code, every call it can run

The modules mirror NetworkX's own layout: :mod:`.clique` (``find_cliques``,
``find_cliques_recursive``, ``enumerate_all_cliques``, ``node_clique_number``)
and :mod:`.cluster` (``triangles``, ``clustering``, ``transitivity``,
``average_clustering``), each function registered by
:func:`.decorators.networkx_algorithm`; :mod:`.graph` holds the converted
graph, :mod:`.interface` the object NetworkX loads, :mod:`.info` what NetworkX
reads while it imports. See docs/networkx.md.

Importing this package imports neither NetworkX nor Numba: NetworkX calls
:func:`.info.get_info` while it is itself being imported.
"""
