"""Helpers shared by the discrete families (Beta, Dirichlet and Gamma priors).

The MAP rule of a Dirichlet(alpha) prior over m outcomes with counts c and total T is
the posterior mode::

    theta = (c + alpha - 1) / (T + sum(alpha - 1))      (= (c + alpha - 1) / (T + m (alpha - 1)))

``alpha = 1`` gives the MLE c / T and ``alpha = 2`` Laplace smoothing; the Beta(alpha,
alpha) prior of a Bernoulli probability is the case m = 2. The mode lies inside the
simplex only for alpha >= 1, so MAP requires it; the conjugate posterior
Dirichlet(c + alpha) only needs alpha > 0.

Log-likelihoods of these families are linear in log-probabilities that may be
exactly 0 for an MLE (a word never seen in a class). :func:`log_prob_matmul` computes
``X @ log(p).T`` with the convention ``0 * log(0) = 0`` and ``x * log(0) = -inf`` for
x > 0, without NaN or numpy warnings.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.special import logsumexp

from bayesgen._validation import check_concentration
from bayesgen.families._gaussian_stats import label, one_hot


def check_alpha(alpha: Any, d: int) -> np.ndarray:
    """``alpha`` as a finite, positive vector of shape (d,) (scalar or one per feature)."""
    return check_concentration(alpha, d, "alpha", "feature")


def require_mode_alpha(alpha: np.ndarray, who: str) -> None:
    """Raise ``ValueError`` unless alpha >= 1 (the MAP is then inside the simplex)."""
    if np.any(alpha < 1):
        raise ValueError(
            f"{who} method='map' needs alpha >= 1 (alpha = 1 is the MLE, 2 Laplace "
            f"smoothing); got min(alpha) = {float(alpha.min()):g}, for which the posterior "
            "mode lies on the boundary. Use alpha >= 1 or method='conjugate'."
        )


def mode(numer: np.ndarray, denom: np.ndarray, labels: np.ndarray | None, who: str) -> np.ndarray:
    """``numer / denom`` for a posterior mode or MLE; ``denom`` (K, ...) must be > 0.

    A zero denominator means a class with no data (zero weighted count, or no counts
    at all for a multinomial) and alpha = 1: the MLE is then undefined.
    """
    bad = ~(denom > 0)
    if bad.any():
        k = np.argwhere(bad)[0][0]
        raise ValueError(
            f"{who}: class {label(labels, k)} has no data (zero total count), so its "
            "maximum-likelihood probabilities are undefined. Use method='map' with "
            "alpha > 1 (smoothing)."
        )
    return numer / denom


def log_prob_matmul(X: np.ndarray, p: np.ndarray) -> np.ndarray:
    """``X @ log(p).T`` over the last axis with 0 log 0 = 0, for X >= 0.

    Parameters
    ----------
    X : ndarray of shape (n, d), non-negative
    p : ndarray of shape (..., K, d), non-negative

    Returns
    -------
    ndarray of shape (..., n, K)
        ``sum_j x_nj log p_kj``; ``-inf`` where some x_nj > 0 has p_kj = 0. One matrix
        product, plus a second one (on the zero pattern) only if p has zeros.
    """
    zero = p <= 0
    if not zero.any():
        return matmul_t(X, np.log(p))
    with np.errstate(divide="ignore"):
        logp = np.where(zero, 0.0, np.log(np.where(zero, 1.0, p)))
    out = matmul_t(X, logp)
    out[matmul_t(X, zero.astype(np.float64)) > 0] = -np.inf
    return out


def matmul_t(X: np.ndarray, B: np.ndarray) -> np.ndarray:
    """``X @ B^T`` over the last axis, (n, d) x (..., K, d) -> (..., n, K).

    Computed as ``(B @ X^T)^T``: with K much smaller than n, OpenBLAS runs the wide
    product B X^T about twice as fast as the tall-skinny X B^T. Returns a transposed
    view (fine for the element-wise and reduction steps that follow).
    """
    return np.swapaxes(B @ X.T, -1, -2)


def log_dirichlet(conc: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
    """Log of ``size`` i.i.d. Dirichlet draws along the last axis, (size, *conc.shape).

    Entries with concentration 0 are structural zeros (padding): their log is ``-inf``
    and they take no mass. The others use ``log G = log G' + log(U) / a`` with
    G' ~ Gamma(a + 1) and U ~ Uniform(0, 1] (Marsaglia & Tsang's boost), finite even
    for tiny a, then a log-sum-exp normalisation: no exact zeros, no NaN.
    """
    a = np.asarray(conc, dtype=np.float64)
    shape = (size, *a.shape)
    active = a > 0
    safe = np.where(active, a, 1.0)
    log_u = np.log1p(-rng.uniform(size=shape))
    log_g = np.log(rng.standard_gamma(safe + 1.0, size=shape)) + log_u / safe
    log_g = np.where(active, log_g, -np.inf)
    return log_g - logsumexp(log_g, axis=-1, keepdims=True)


def draw_beta(a: np.ndarray, b: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
    """``size`` i.i.d. Beta(a, b) draws, (size, *a.shape), as a two-outcome Dirichlet."""
    log_theta = log_dirichlet(np.stack([a, b], axis=-1), size, rng)
    return np.exp(log_theta[..., 0])


def class_sums(X: np.ndarray, y: np.ndarray, w: np.ndarray, n_classes: int) -> dict:
    """Weighted class counts N_k (K,) and per-class feature sums ``R^T X`` (K, d), with
    R (n, K) the weighted class indicators: the statistics of the Bernoulli,
    multinomial and Poisson families (one matrix product)."""
    R = one_hot(y, w, n_classes)
    return {"count": R.sum(axis=0), "feature_count": R.T @ X}


def add_stats(a: dict, b: dict) -> dict:
    """Element-wise sum of two dicts of additive statistics with equal shapes."""
    return {key: a[key] + b[key] for key in a}


def observed_counts(X: np.ndarray, who: str) -> np.ndarray:
    """``X`` as int64 counts for a PyMC observed variable (``model_``).

    Raises ``ValueError`` if X holds non-integer values (term weights, which the point
    methods accept): a multinomial or Poisson likelihood is only defined on counts.
    """
    X = np.asarray(X, dtype=np.float64)
    if X.size and not np.array_equal(X, np.floor(X)):
        raise ValueError(
            f"{who}.model_ is the generative model of whole-number counts, but this fit's "
            "X has non-integer values (term weights, accepted by method='mle'/'map'). "
            "Round X to counts and refit to build model_."
        )
    return X.astype(np.int64)
