"""The class prior: y ~ Categorical(pi), pi ~ Dirichlet(a).

Sufficient statistic: the weighted class counts N_k. With N = sum_k N_k,

- MLE:  pi_k = N_k / N
- MAP:  pi_k = (N_k + a_k - 1) / (N + sum_k a_k - K)   (the Dirichlet posterior mode)
- posterior: pi | y ~ Dirichlet(N + a)
"""

from __future__ import annotations

import numpy as np


def mle(counts: np.ndarray) -> np.ndarray:
    """Maximum-likelihood class probabilities ``N_k / N``, shape (K,)."""
    return counts / counts.sum()


def map_estimate(counts: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    """Posterior mode of pi under Dirichlet(alpha): ``(N_k + a_k - 1) / (N + sum a - K)``.

    Raises ``ValueError`` where the mode is not in the simplex (a_k < 1 with N_k = 0
    makes the density unbounded at pi_k = 0).
    """
    numer = counts + alpha - 1.0
    if np.any(numer < 0):
        raise ValueError(
            "The MAP class prior needs N_k + class_alpha_k >= 1 for every class; with "
            "class_alpha < 1 a class with (nearly) no samples has its mode at the boundary. "
            "Use class_alpha >= 1 or method='conjugate'."
        )
    total = numer.sum()
    if total <= 0:
        raise ValueError("The MAP class prior is undefined: no samples and class_alpha=1.")
    return numer / total


def posterior(counts: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    """Dirichlet concentration of the posterior of pi: ``N + a``, shape (K,)."""
    return counts + alpha


def draw(concentration: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
    """``size`` i.i.d. draws of pi ~ Dirichlet(concentration), shape (size, K).

    Drawn as normalised Gamma variates in log space, so tiny concentrations give no
    exact zeros that would turn into ``log(0)`` downstream.
    """
    return np.exp(log_dirichlet(concentration, size, rng))


def log_dirichlet(
    concentration: np.ndarray, size: int, rng: np.random.Generator
) -> np.ndarray:
    """Log of Dirichlet draws along the last axis, shape (size, *concentration.shape).

    Uses ``log G = log G' + log(U) / a`` with G' ~ Gamma(a + 1) (Marsaglia & Tsang's
    boost), which stays finite for small concentrations, then normalises with
    log-sum-exp.
    """
    from scipy.special import logsumexp

    a = np.asarray(concentration, dtype=np.float64)
    shape = (size, *a.shape)
    log_g = np.log(rng.standard_gamma(a + 1.0, size=shape)) + np.log(rng.uniform(size=shape)) / a
    return log_g - logsumexp(log_g, axis=-1, keepdims=True)
