"""scipy.sparse input for the count families (MultinomialNB, BernoulliNB, PoissonNB).

A family with ``capabilities.sparse`` takes X validated with ``accept_sparse="csr"``
(other formats converted once) and computes on the non-zeros: statistics ``R^T X`` by
one weighted bincount (:func:`class_sums`, O(nnz)), the joint log-likelihood
``X @ log(theta)^T`` (:func:`matmul_t`, O(nnz K)), row sums over ``X.data``
(:func:`row_sum_of`) and support checks on ``X.data``. Other families raise a
``ValueError`` that suggests ``X.toarray()`` (:func:`validate_kwargs`). Dense copies
(``model_``'s rows, ``observed_data``) are made only below :data:`DENSE_LIMIT` values
(:func:`observed_x`).
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np
from scipy import sparse

from bayesgen.utils.threads import one_blas_thread

#: largest n x d that is densified for PyMC's observed rows or ``observed_data`` (160 MB)
DENSE_LIMIT = 20_000_000


def is_sparse(X: Any) -> bool:
    """Whether X is a scipy.sparse matrix or array."""
    return sparse.issparse(X)


def validate_kwargs(family: Any, X: Any, who: str) -> dict:
    """Extra keyword arguments of ``validate_data`` for X (empty for dense X).

    Sparse X is accepted (as CSR) when the estimator's ``family`` declares
    ``capabilities.sparse``; otherwise a ``ValueError`` names the estimator ``who`` and
    suggests ``X.toarray()``.
    """
    if not sparse.issparse(X):
        return {}
    if not family.capabilities.sparse and family.capabilities.composite:
        raise ValueError(
            f"{who} takes sparse input X (a scipy.sparse {X.format} "
            f"{type(X).__name__}) when one of its parts is multinomial, poisson or "
            "bernoulli, given in families= (those parts keep their columns sparse; the "
            "others' columns are densified); these families have none. Pass X.toarray() "
            "or name the count columns' family."
        )
    if not family.capabilities.sparse:
        raise ValueError(
            f"{who} does not accept sparse input X (a scipy.sparse "
            f"{X.format} {type(X).__name__}): its likelihood needs every entry. Pass a "
            "dense array, X.toarray() (memory n x d), or use MultinomialNB, BernoulliNB "
            "or PoissonNB, which take sparse X."
        )
    return {"accept_sparse": "csr", "accept_large_sparse": True}


def values(X: Any) -> np.ndarray:
    """The stored values of sparse X (``X.data``), or X itself when dense: what support
    and finiteness checks look at (the implicit zeros pass every check)."""
    return X.data if sparse.issparse(X) else X


def canonical(X: Any) -> Any:
    """X without duplicate entries (summed), so that per-entry checks and functions
    (``x in {0, 1}``, ``log x!``) see the values of the matrix. Copies only a
    non-canonical CSR matrix; dense X is returned as is."""
    if sparse.issparse(X) and not X.has_canonical_format:
        X = X.copy()
        X.sum_duplicates()
    return X


def with_data(X: Any, data: np.ndarray) -> Any:
    """A CSR matrix with the sparsity structure of X and the values ``data``
    (sharing X's index arrays, so no index copy)."""
    return sparse.csr_array((data, X.indices, X.indptr), shape=X.shape)


def row_sum_of(X: Any, data: np.ndarray) -> np.ndarray:
    """``sum_j f(x_nj)`` per row, (n,), given ``data = f(X.data)`` with f(0) = 0."""
    return with_data(X, data) @ np.ones(X.shape[1])


def row_sum(X: Any) -> np.ndarray:
    """Row totals sum_j x_nj, (n,), for dense or sparse X."""
    if sparse.issparse(X):
        return row_sum_of(X, X.data)
    return X.sum(axis=1)


def class_sums(X: Any, y: np.ndarray, w: np.ndarray, n_classes: int) -> np.ndarray:
    """Per-class weighted feature sums ``R^T X`` (K, d) for sparse CSR X, dense result.

    One weighted ``np.bincount`` over the stored values with the flat index
    ``y_n d + j`` of each entry (row n, column j): O(nnz) time, O(nnz) index memory
    plus the (K, d) result, and no (n, K) indicator matrix.
    """
    d = X.shape[1]
    per_row = np.diff(X.indptr)
    flat = np.repeat(y.astype(np.intp, copy=False), per_row)  # class of every entry
    flat *= d
    flat += X.indices
    weights = X.data
    if not np.all(w == 1.0):
        weights = weights * np.repeat(w, per_row)
    return np.bincount(flat, weights=weights, minlength=n_classes * d).reshape(n_classes, d)


def matmul_t(X: Any, B: np.ndarray) -> np.ndarray:
    """``X @ B^T`` over the last axis, (n, d) x (..., K, d) -> (..., n, K), X dense or sparse.

    Dense X: ``(B @ X^T)^T`` (OpenBLAS runs the wide product about twice as fast as the
    tall-skinny one), a transposed view. Sparse X: one product ``X @ B'`` with B' the
    (d, S K) matrix of all draws and classes (used as is when C-contiguous, see
    :func:`log_t`), then a reshape: O(nnz S K).
    """
    if not sparse.issparse(X):
        with one_blas_thread():
            return np.swapaxes(B @ X.T, -1, -2)
    lead, (n_classes, d) = B.shape[:-2], B.shape[-2:]
    flat = np.ascontiguousarray(B.reshape(-1, d).T)  # (d, S K); no copy if already C
    out = np.asarray(X @ flat)  # (n, S K)
    if not lead:
        return out
    out = out.reshape(X.shape[0], *lead, n_classes)
    return np.moveaxis(out, 0, -2)


def log_t(p: np.ndarray) -> np.ndarray:
    """``log(p)`` for (K, d) p >= 0, returned as the transpose of a C-contiguous (d, K)
    array: the layout :func:`matmul_t` multiplies without a copy (arrays with leading
    draw dims keep p's layout).

    The result for a (K, d) array is remembered while p is alive (keyed by identity
    through a weak reference; fitted parameters are never modified in place), so that
    the ``feature_log_prob_`` computed at fit serves every later prediction.
    """
    if p.ndim != 2:
        return np.log(p)
    key = id(p)
    hit = _LOG_CACHE.get(key)
    if hit is not None and hit[0]() is p:
        return hit[1]
    out = np.array(p.T, order="C")  # a copy; the log of a strided view is slower
    with np.errstate(divide="ignore"):
        np.log(out, out=out)
    out = out.T
    _LOG_CACHE[key] = (weakref.ref(p), out)
    weakref.finalize(p, _LOG_CACHE.pop, key, None)  # forget it with p
    return out


#: id(p) -> (weak reference to p, log(p)) for :func:`log_t`
_LOG_CACHE: dict[int, tuple[weakref.ref, np.ndarray]] = {}


def dense_for_pymc(X: Any, who: str) -> np.ndarray:
    """X as a dense array for PyMC's observed rows (``model_``).

    Sparse X is densified only up to :data:`DENSE_LIMIT` values; above, a
    ``ValueError`` explains that ``model_`` (one observed value per row and feature)
    is not available, while ``method="mcmc"`` (which samples a model written on the
    sufficient statistics) is.
    """
    if not sparse.issparse(X):
        return X
    n, d = X.shape
    if n * d > DENSE_LIMIT:
        raise ValueError(
            f"{who}.model_ observes every entry of X, but this fit's X is sparse with "
            f"{n} x {d} = {n * d:.3g} entries (> {DENSE_LIMIT:.0e}); the model is not "
            "built, to avoid densifying X. method='mcmc' works (it samples a model written "
            "on the sufficient statistics); build model_ from a subsample of the rows."
        )
    return X.toarray()


def observed_x(X: Any) -> tuple[dict, dict]:
    """Variables and dims of the features in ``idata_.observed_data``.

    Dense X, or sparse X with at most :data:`DENSE_LIMIT` entries: ``x`` (obs,
    feature). Larger sparse X is not densified: its non-zeros are stored as ``x_row``,
    ``x_col`` and ``x_data`` (dim ``x_nonzero``), the COO triplets of X.
    """
    if not sparse.issparse(X):
        return {"x": X}, {"x": ["obs", "feature"]}
    if X.shape[0] * X.shape[1] <= DENSE_LIMIT:
        return {"x": X.toarray()}, {"x": ["obs", "feature"]}
    coo = X.tocoo()
    dims = ["x_nonzero"]
    return (
        {"x_row": coo.row.astype(np.int64), "x_col": coo.col.astype(np.int64), "x_data": coo.data},
        {"x_row": dims, "x_col": dims, "x_data": dims},
    )


def columns(X: Any, cols: np.ndarray, *, dense: bool) -> Any:
    """Columns ``cols`` of X: CSR when X is sparse and ``dense`` is False, else a dense
    array (MixedNB: a part whose family takes sparse X keeps it; the other parts get
    their columns densified, n x len(cols) values)."""
    if not sparse.issparse(X):
        return X[:, cols]
    sub = X[:, cols]
    return sub.toarray() if dense else sub.tocsr()


def assemble(blocks: list, cols: list[np.ndarray], n_features: int) -> Any:
    """The (n, d) matrix whose columns ``cols[i]`` are ``blocks[i]`` (dense or sparse):
    dense when every block is, else CSR (the dense blocks' non-zeros stored)."""
    order = np.concatenate(cols)
    inverse = np.empty(n_features, dtype=np.intp)
    inverse[order] = np.arange(order.size)
    if not any(sparse.issparse(b) for b in blocks):
        return np.hstack(blocks)[:, inverse]
    return sparse.hstack([sparse.csr_matrix(b) for b in blocks], format="csr")[:, inverse]


def with_columns(X: Any, cols: np.ndarray, block: np.ndarray) -> Any:
    """Sparse X with its columns ``cols`` replaced by the dense ``block`` (n, len(cols))."""
    keep = np.setdiff1d(np.arange(X.shape[1]), cols)
    return assemble([X[:, keep], block], [keep, np.asarray(cols)], X.shape[1])
