"""scipy.sparse ``.npz`` files (``scipy.sparse.save_npz``): the graph is the
matrix's nonzero pattern, made symmetric, as :meth:`gthinker.Graph.from_scipy`
reads a matrix. :func:`write` saves the adjacency as a CSR matrix that
``scipy.sparse.load_npz`` reads, with two more arrays, ``gthinker_ids`` and
``gthinker_labels``, that :func:`read` restores."""

from __future__ import annotations

import zipfile

import numpy as np

from gthinker.errors import GraphFormatError
from gthinker.graphs import convert as graph_convert

__all__ = ["read", "write"]


def read(path, graph_cls):
    import scipy.sparse as sp

    try:
        with open(path, "rb") as fh:  # numpy leaves a file it opened open when it is no zip
            matrix = sp.load_npz(fh)
            fh.seek(0)
            with np.load(fh, allow_pickle=False) as z:
                ids = z["gthinker_ids"] if "gthinker_ids" in z.files else None
                labels = z["gthinker_labels"] if "gthinker_labels" in z.files else None
    except FileNotFoundError:
        raise GraphFormatError(f"{path}: no such file") from None
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as exc:
        raise GraphFormatError(f"{path}: not a scipy.sparse .npz file: {exc}") from None
    u, v, n = graph_convert.scipy_arrays(matrix)
    if ids is not None:
        if ids.shape != (n,) or ids.dtype.kind not in "iu" or (n and ids.min() < 0) \
                or np.unique(ids).size != n:
            raise GraphFormatError(f"{path}: gthinker_ids must be {n} distinct non-negative "
                                   "integers")
    labels = graph_convert.check_labels(labels, n)
    return graph_cls.from_pairs(u, v, n, ids=ids, labels=labels, source=path.name)


def write(graph, fh) -> None:
    """The adjacency as a CSR matrix of ones (int8), with ids and labels."""
    n = graph.num_vertices
    arrays = {"format": np.array("csr"), "shape": np.array([n, n]), "_is_array": np.array(True),
              "data": np.ones(graph.indices.size, np.int8), "indices": graph.indices,
              "indptr": graph.indptr, "gthinker_ids": graph.ids}
    if graph.labels is not None:
        arrays["gthinker_labels"] = graph.labels
    np.savez(fh, **arrays)
