"""The leave-one-out predictive at other rows for families not yet written on
:mod:`bayesgen.families.conjugate` (the Gaussian families' own downdates).

``loo_log_predictive_at(Z, y, w, post, Z_test)`` is, for training rows Z (n, d) and rows
Z_test (m, d), the (n, m, K) array ``out[i, j, k] = log p(z_test_j | y = k, D without
training row i)``. When no parameter is shared across classes, removing row i changes
only the posterior of its class y_i: the other columns are the full-data predictive and
:func:`own_class` asks the family for the own-class column, one block of training rows
and one block of test rows at a time (:func:`bayesgen.families.conjugate.blocks`).
:func:`bayesgen.families.conjugate.loo_log_predictive_at` is the same computation for
the families that give their statistics, log h and log Z.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from bayesgen.data import sparse
from bayesgen.families import conjugate
from bayesgen.families.conjugate import BLOCK as BLOCK  # re-exported
from bayesgen.families.conjugate import blocks as blocks  # re-exported


def own_class(family, Z: Any, y: np.ndarray, w: np.ndarray, post: dict, Z_test: Any,
              own: Callable[[Any, np.ndarray, np.ndarray, Any], np.ndarray], *,
              width: int | None = None) -> np.ndarray:
    """``loo_log_predictive_at`` of a family whose classes have separate posteriors.

    ``own(Z_rows (n_b, d) dense, y_rows, w_rows, Z_test_block (m_b, d))`` -> (n_b, m_b)
    gives log p(z_test_j | y = y_i, D without row i); ``width`` is its temporary values
    per (training row, test row) pair (default d). ``Z_test=None``: (n, K), the family's
    ``loo_log_predictive`` in the own-class column; else (n, m, K).
    """
    if Z_test is None:
        out = np.array(family.log_predictive(Z, post), dtype=np.float64)
        out[np.arange(y.size), y] = family.loo_log_predictive(Z, y, w, post)
        return out
    full = family.log_predictive(Z_test, post)  # (m, K)
    n, (m, n_classes) = y.size, full.shape
    out = np.empty((n, m, n_classes))
    out[:] = full
    n_b, m_b = conjugate.blocks(n, m, Z_test.shape[1] if width is None else width)
    for start in range(0, n, n_b):
        rows = np.arange(start, min(start + n_b, n))
        Z_rows = Z[rows]
        Z_rows = Z_rows.toarray() if sparse.is_sparse(Z_rows) else Z_rows
        for first in range(0, m, m_b):
            cols = np.arange(first, min(first + m_b, m))
            out[rows[:, None], cols[None, :], y[rows][:, None]] = own(
                Z_rows, y[rows], w[rows], Z_test[first:cols[-1] + 1])
    return out
