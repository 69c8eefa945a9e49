"""Small array helpers shared by the hot loops, where numpy's general routine is the slow one.

``np.unique`` of a plain integer array takes a hash-table path in numpy 2.3 and later that is
15–20 times slower than sorting for the arrays the feature extractors make (hundreds to tens of
thousands of int64 codes, once per sentence): the rerankers' feature extraction on the dev list
of CoNLL-2003 took 13.7 s of CPU with it and takes 10.1 s with the sorting form.
:func:`sorted_unique` is the sorting form, with exactly ``np.unique``'s result (sorted, each
value once) for every numpy release.

A dense matrix-vector or vector-vector product (``A @ w``) goes to BLAS, and OpenBLAS splits a
large one between its threads, each summing a part: the last bits of the result then depend on
how many threads it has (``OPENBLAS_NUM_THREADS``, the number of cores), and a reranker whose
scores come out of such a product can pick another candidate on a near tie.
:func:`rows_dot` and :func:`dot` sum in one fixed order instead (numpy's own reduction, which
uses no threads), so a model and its predictions do not depend on the machine's thread count.
"""

from __future__ import annotations

import numpy as np


def sorted_unique(a) -> np.ndarray:
    """The sorted distinct values of a 1-D array (``np.unique(a)``, by sorting)."""
    b = np.sort(np.asarray(a).ravel())
    if len(b) < 2:
        return b
    keep = np.empty(len(b), dtype=bool)
    keep[0] = True
    np.not_equal(b[1:], b[:-1], out=keep[1:])
    return b[keep]


def rows_dot(a, w) -> np.ndarray:
    """``a @ w`` for a 2-D ``a`` and a 1-D ``w``, each row summed in a fixed order (not BLAS's,
    which depends on its thread count)."""
    return np.multiply(a, w).sum(axis=1)


def dot(a, b) -> float:
    """``a @ b`` for two 1-D arrays, summed in a fixed order (see :func:`rows_dot`)."""
    return float(np.multiply(a, b).sum())
