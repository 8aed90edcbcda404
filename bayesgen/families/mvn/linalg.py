"""Linear algebra of the multivariate normal family: Cholesky factors, whitening and
the Mahalanobis distances of QDA, for one parameter set or many posterior draws."""

from __future__ import annotations

from typing import Any

import numpy as np

from bayesgen.utils.logspace import log_rising
from bayesgen.utils.threads import one_blas_thread, over_row_blocks

# Elements per temporary block in the QDA log-likelihood (8 MB of float64).
_BLOCK = 2**20


def _scalar(value: Any) -> float:
    """A finite float from a number, or NaN (which fails every check) otherwise."""
    try:
        value = float(value) if np.ndim(value) == 0 else np.nan
    except (TypeError, ValueError):
        value = np.nan
    return value if np.isfinite(value) else np.nan


def _swap(a: np.ndarray) -> np.ndarray:
    return np.swapaxes(a, -1, -2)


def _cholesky(cov: np.ndarray, what: str, fix: str = "use method='map'") -> np.ndarray:
    """Lower Cholesky factors of a stack of covariances; ValueError if not SPD."""
    try:
        return np.linalg.cholesky(cov)
    except np.linalg.LinAlgError:
        raise ValueError(f"{what} is not positive definite (singular); {fix}.") from None


def _whiten(cov: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A = L^-T (..., d, d) and log|Sigma| (...) for a stack Sigma = L L^T (..., d, d).

    Sigma^-1 = A A^T, so ``(x - mu)^T Sigma^-1 (x - mu) = ||x^T A - mu^T A||^2``.
    """
    L = _cholesky(cov, "The covariance")
    logdet = 2.0 * np.log(np.diagonal(L, axis1=-2, axis2=-1)).sum(-1)
    return _swap(np.linalg.inv(L)), logdet


def _qda_mahalanobis_draws(Xc: np.ndarray, mc: np.ndarray, A: np.ndarray) -> np.ndarray:
    """The QDA distances for many posterior draws, (S, n, K), as two large products.

    Expands ``(x - mu)^T P (x - mu) = x^T P x - 2 x^T (P mu) + mu^T P mu`` with
    P = A A^T, and writes ``x^T P x = sum_{i<=j} c_ij x_i x_j P_ij`` (c = 1 on the
    diagonal, 2 off it) so that all draws and classes go through one GEMM of the
    (n, d(d+1)/2) quadratic features with a (d(d+1)/2, S K) matrix, instead of S K
    small products. Only used with leading draw dims; the point-estimate path keeps the
    exact difference form. X and mu are centred at the mean of the class means by the
    caller, which keeps the expansion accurate.
    """
    n, d = Xc.shape
    n_draws, n_classes = A.shape[0], A.shape[1]
    P = A @ _swap(A)  # (S, K, d, d) precisions
    iu, ju = np.triu_indices(d)
    weight = np.where(iu == ju, 1.0, 2.0)
    quad_w = (P[..., iu, ju] * weight).reshape(-1, iu.size).T  # (d(d+1)/2, S K)
    Pm = np.einsum("skij,skj->ski", P, mc)  # (S, K, d)
    lin_w = Pm.reshape(-1, d).T  # (d, S K)
    const = np.einsum("ski,ski->sk", Pm, mc).reshape(-1)  # (S K,)
    out = np.empty((n_draws, n, n_classes))
    step = max(1, _BLOCK * 8 // max(1, n_draws * n_classes))
    for start in range(0, n, step):
        rows = slice(start, min(start + step, n))
        Xr = Xc[rows]
        dist = (Xr[:, iu] * Xr[:, ju]) @ quad_w
        dist -= 2.0 * (Xr @ lin_w)
        dist += const
        out[:, rows] = np.moveaxis(dist.reshape(-1, n_draws, n_classes), 1, 0)
    return out


def _qda_mahalanobis(Xc: np.ndarray, mc: np.ndarray, A: np.ndarray) -> np.ndarray:
    """||x_n^T A_k - mu_k^T A_k||^2 for all rows and classes, shape (..., n, K).

    One product ``X @ [A_1 .. A_K]`` per block of rows, written into one reused
    buffer of about ``_BLOCK`` elements: the (..., rows, K d) temporary stays in
    cache and is never re-allocated (measured faster than one n x K d temporary).
    """
    n, d = Xc.shape
    lead, n_classes = A.shape[:-3], A.shape[-3]
    B = np.ascontiguousarray(np.moveaxis(A, -3, -2).reshape(*lead, d, n_classes * d))
    MA = np.einsum("...kd,...kde->...ke", mc, A).reshape(*lead, 1, n_classes * d)
    out = np.empty((*lead, n, n_classes))
    per_row = n_classes * d * max(1, int(np.prod(lead)))
    step = max(1, min(n, max(64, _BLOCK // per_row)))

    def rows(start: int, stop: int, buffer: np.ndarray) -> None:
        Z = buffer[..., : stop - start, :]
        np.matmul(Xc[start:stop], B, out=Z)
        Z -= MA
        np.square(Z, out=Z)
        np.sum(Z.reshape(*Z.shape[:-1], n_classes, d), axis=-1, out=out[..., start:stop, :])

    # blocks of rows over the cores, one buffer per thread (see bayesgen.utils.threads)
    over_row_blocks(rows, n, size=n * per_row, block=step,
                    scratch=lambda: np.empty((*lead, step, n_classes * d)))
    return out


def linear_scores(X: np.ndarray, mu: np.ndarray, cov: np.ndarray) -> np.ndarray:
    """LDA's linear discriminants ``x^T Sigma^-1 mu_k - mu_k^T Sigma^-1 mu_k / 2``,
    (..., n, K), as ``x^T W - ||mu_k^T A||^2 / 2`` with ``W = A (mu A)^T`` (d, K) and
    A = L^-T: one (n, d) x (d, K) product. Point estimates (2-d mu): blocks of rows
    split over the cores with one BLAS thread each (see :mod:`bayesgen.utils.threads`)."""
    A, _ = _whiten(cov)
    MA = mu @ A  # (..., K, d)
    W, bias = A @ _swap(MA), -0.5 * np.einsum("...kd,...kd->...k", MA, MA)
    if W.ndim > 2:  # posterior draws
        return X @ W + bias[..., None, :]
    scores = np.empty((X.shape[0], W.shape[1]))

    def rows(start: int, stop: int) -> None:
        np.matmul(X[start:stop], W, out=scores[start:stop])
        scores[start:stop] += bias

    with one_blas_thread():
        over_row_blocks(rows, X.shape[0], size=X.size)
    return scores


def mahalanobis(X: np.ndarray, mu: np.ndarray, cov: np.ndarray, *, tied: bool):
    """(x_n - mu_k)^T Sigma_k^-1 (x_n - mu_k), (..., n, K), and log|Sigma_k|, (..., K).

    With A_k = L_k^-T (Cholesky), the distance is ``||x^T A_k - mu_k^T A_k||^2``.
    QDA: one product ``X @ [A_1 .. A_K]`` per block of rows. LDA: ``Z = X A``
    (..., n, d) and the expansion ``||z||^2 - 2 z . (mu_k A) + ||mu_k A||^2``. X and
    mu are first centred at the mean of the class means, which keeps both accurate.
    """
    d = mu.shape[-1]
    A, logdet = _whiten(cov)
    centre = mu.reshape(-1, d).mean(axis=0)
    Xc = X - centre
    mc = mu - centre
    if not tied:
        if A.ndim == 5 or (A.ndim == 4 and A.shape[0] > 1):
            flat = A.reshape(-1, *A.shape[-3:])
            dist = _qda_mahalanobis_draws(Xc, mc.reshape(-1, *mc.shape[-2:]), flat)
            return dist.reshape(*A.shape[:-3], *dist.shape[1:]), logdet
        return _qda_mahalanobis(Xc, mc, A), logdet
    Z = Xc @ A  # (..., n, d)
    MA = mc @ A  # (..., K, d)
    out = np.einsum("...nd,...nd->...n", Z, Z)[..., None]
    out = out - 2.0 * (Z @ _swap(MA))
    out += np.einsum("...kd,...kd->...k", MA, MA)[..., None, :]
    return out, np.broadcast_to(logdet[..., None], mu.shape[:-1])


def student_t_const(df: np.ndarray, d: int, logdet: np.ndarray,
                    kappa: np.ndarray) -> np.ndarray:
    """The normalising constant of the Normal-Inverse-Wishart predictive Student-t::

        lgamma((df + d) / 2) - lgamma(df / 2) - d log(df pi) / 2 - log|S| / 2,
        S = Psi (kappa + 1) / (kappa df),

    evaluated as ``log_rising(df / 2, d / 2) - d log(pi) / 2 - log|Psi| / 2
    - d log1p(1 / kappa) / 2`` (the log df terms cancel): finite for any finite df and
    kappa (sample weights near the float64 limit make them ~1e300, where the textbook
    form gives inf - inf or overflows kappa df).
    """
    return (log_rising(df / 2.0, d / 2.0) - 0.5 * d * np.log(np.pi) - 0.5 * logdet
            - 0.5 * d * np.log1p(1.0 / kappa))
