"""The leave-one-out predictive at other rows, for families whose classes have separate
posteriors (the ``loo_log_predictive_at`` hook of :class:`bayesgen.families.protocol.Family`).

``loo_log_predictive_at(Z, y, w, post, Z_test)`` is, for training rows Z (n, d) and rows
Z_test (m, d), the (n, m, K) array::

    out[i, j, k] = log p(z_test_j | y = k, D without training row i)

(what jackknife+ conformal sets score the test rows with,
:mod:`bayesgen.decide.conformal`). When the classes' parameters have independent
priors and no parameter is shared across classes (every family but LDA, whose
covariance is shared: :func:`bayesgen.families.mvn.linalg.loo_student_t_at`), removing
row i changes only the posterior of its class y_i, so::

    out[i, :, k] = log p(z_test | y = k, D)                  k != y_i (full data)
    out[i, :, y_i] = the predictive of class y_i's posterior without row i

:func:`own_class` fills the first from one ``log_predictive`` call and asks the family
for the second, one block of training rows and one block of test rows at a time: the
family's ``own(Z_rows, y_rows, w_rows, Z_test_block)`` returns (n_b, m_b), usually by
evaluating its ``log_predictive`` with the n_b downdated posteriors in place of the K
classes (each row's posterior without it, the conjugate update run backwards, as in
``loo_log_predictive``). Cost O(n m d) for the downdated column plus O(m K d) for the
full-data predictive and the O(n m K) copy; memory the output plus temporaries of
about n_b m_b d <= :data:`BLOCK` values.

``Z_test=None`` is each training row at itself, (n, K): the full-data predictive with
``loo_log_predictive`` in the column of the row's own class.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from bayesgen.data import sparse

#: values per temporary block (n_b training rows x m_b test rows x width), 16 MB of float64
BLOCK = 2**21


def blocks(n: int, m: int, width: int) -> tuple[int, int]:
    """Training rows n_b and test rows m_b per block, n_b m_b width <= :data:`BLOCK`
    (at least one of each): all test rows at once when they fit, else one training row
    against as many test rows as fit."""
    width = max(1, int(width))
    m_b = min(max(m, 1), max(1, BLOCK // width))
    n_b = min(max(n, 1), max(1, BLOCK // (m_b * width)))
    return n_b, m_b


def own_class(family, Z: Any, y: np.ndarray, w: np.ndarray, post: dict, Z_test: Any,
              own: Callable[[Any, np.ndarray, np.ndarray, Any], np.ndarray], *,
              width: int | None = None) -> np.ndarray:
    """``loo_log_predictive_at`` of a family whose classes have separate posteriors.

    Parameters
    ----------
    family : Family
        Its ``log_predictive`` gives the full-data columns and, with ``Z_test=None``,
        its ``loo_log_predictive`` the own-class column.
    Z : ndarray or sparse matrix of shape (n, d)
        Training rows (internal frame). Blocks of rows are passed to ``own`` dense.
    y, w : ndarray of shape (n,)
        Class indices and weights of the training rows.
    post : dict
        The full-data conjugate posterior.
    Z_test : ndarray or sparse matrix of shape (m, d), or None
    own : callable
        ``own(Z_rows (n_b, d) dense, y_rows, w_rows, Z_test_block (m_b, d))`` -> (n_b, m_b):
        log p(z_test_j | y = y_i, D without row i).
    width : int, optional
        Temporary values per (training row, test row) pair of ``own`` (default d).

    Returns
    -------
    ndarray of shape (n, m, K), or (n, K) for ``Z_test=None``
    """
    if Z_test is None:
        out = np.array(family.log_predictive(Z, post), dtype=np.float64)
        out[np.arange(y.size), y] = family.loo_log_predictive(Z, y, w, post)
        return out
    full = family.log_predictive(Z_test, post)  # (m, K)
    n, (m, n_classes) = y.size, full.shape
    out = np.empty((n, m, n_classes))
    out[:] = full
    n_b, m_b = blocks(n, m, Z_test.shape[1] if width is None else width)
    for start in range(0, n, n_b):
        rows = np.arange(start, min(start + n_b, n))
        Z_rows = Z[rows]
        Z_rows = Z_rows.toarray() if sparse.is_sparse(Z_rows) else Z_rows
        for first in range(0, m, m_b):
            cols = np.arange(first, min(first + m_b, m))
            out[rows[:, None], cols[None, :], y[rows][:, None]] = own(
                Z_rows, y[rows], w[rows], Z_test[first:cols[-1] + 1])
    return out


def csr(X: Any):
    """A block of rows (dense or sparse, NaN already filled by the caller) as a CSR
    array without duplicate entries, for sums over its non-zero entries of terms that
    are 0 at x = 0 (an explicit zero adds 0)."""
    from scipy import sparse as sp

    return sp.csr_array(sparse.canonical(X))


def nonzero_sum(values: np.ndarray, X) -> np.ndarray:
    """Per test row, sums of per-entry values over the non-zeros of the CSR block X
    (m_b, d): ``values`` (n_b, nnz) in X's storage order -> (n_b, m_b), as one product
    with the (nnz, m_b) row indicator (exact sums, empty rows 0)."""
    from scipy import sparse as sp

    m_b, nnz = X.shape[0], X.indices.size
    rows = np.repeat(np.arange(m_b), np.diff(X.indptr))
    indicator = sp.csr_array((np.ones(nnz), (np.arange(nnz), rows)), shape=(nnz, m_b))
    return np.asarray((indicator.T @ values.T).T)
