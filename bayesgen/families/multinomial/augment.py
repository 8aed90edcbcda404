"""Data augmentation for MultinomialNB with missing counts (``method="conjugate"``).

Tanner & Wong (1987) with the exact augmentation of
:mod:`bayesgen.families.multinomial.missing`: every chain alternates

1. the completed class counts given theta: per (class, pattern) group g a gamma
   variable u_g ~ Gamma(M_g, 1) (the negative binomial of the missing draws written as a
   gamma-Poisson mixture), then X_kj ~ Poisson(theta_kj A_kj),
   A_kj = sum_{g: k_g = k, j missing in g} u_g / p_g, independently;
2. theta_k ~ Dirichlet(alpha + C_k + X_k), the exact conjugate posterior of the
   completed counts.

Its stationary distribution is the exact posterior of theta given the observed counts.
Each iteration costs O(nnz(missing patterns) x chains x K + chains x K x d), whatever
the number of rows. Chains start from independent draws of Dirichlet(alpha + C) (the
observed counts alone), run ``tune`` iterations of burn-in and keep ``draws``; every
chain is advanced in one batched step. ``sample_stats`` holds ``lp``, the observed-data
log posterior density of each draw (up to a constant), and the chains are checked like
NUTS's (R-hat, ESS).

Posterior predictive (Rao-Blackwellised): the completed Dirichlet posteriors of up to
:data:`RB_MAX` evenly spaced retained iterations (spread over the chains) are kept in
``_posterior["concentration"]`` (T, K, d); the predictive density is the mean of their
Dirichlet-multinomial predictives.
"""

from __future__ import annotations

import numpy as np

from bayesgen.families import dirichlet as dr
from bayesgen.families.multinomial.missing import (
    log_dirichlet_density,
    log_likelihood,
    missing_rate,
    observed_mass,
)

#: completed conjugate posteriors kept for the Rao-Blackwellised posterior predictive
RB_MAX = 100


def complete(stats: dict, theta: np.ndarray, p: np.ndarray,
             rng: np.random.Generator) -> np.ndarray:
    """Completed class counts C + X, X_kj ~ Poisson(theta_kj A_kj) with u_g ~
    Gamma(M_g, 1) (module docstring), (..., K, d) for theta (..., K, d) and its
    :func:`observed_mass` p (..., G)."""
    groups = stats["groups"]
    u = rng.standard_gamma(np.broadcast_to(groups["total"], p.shape))
    rate = theta * missing_rate(groups, u / p, theta.shape[-2])
    return stats["feature_count"] + dr.poisson(rate, rng)


def augment(family, stats: dict, prior: dict, *, chains: int, draws: int, tune: int,
            rng: np.random.Generator):
    """Data-augmentation chains (module docstring); ``family`` is unused (the hook's
    signature, as LDA/QDA's).

    Returns
    -------
    params : dict
        ``theta`` (chains * draws, K, d), chain-major.
    post : dict
        ``concentration`` (T, K, d): the completed Dirichlet posteriors kept for the
        Rao-Blackwellised predictive (T <= :data:`RB_MAX`, spread over chains).
    sample_stats : dict
        ``lp`` (chains, draws): observed-data log posterior density (up to a constant).
    """
    alpha = prior["alpha"]
    theta = np.exp(dr.log_dirichlet(stats["feature_count"] + alpha, chains, rng))
    total = tune + draws
    kept = np.unique(np.linspace(tune, total - 1, min(RB_MAX, draws)).round().astype(int))
    rb_chain = {int(it): i % chains for i, it in enumerate(kept)}
    out = np.empty((chains, draws, *theta.shape[1:]))
    lp = np.empty((chains, draws))
    stack = []
    for it in range(total):
        p = observed_mass(stats["groups"], theta)  # (chains, G)
        if it >= tune:
            out[:, it - tune] = theta
            lp[:, it - tune] = (log_likelihood(stats, theta, p)
                                + log_dirichlet_density(theta, alpha))
        conc = complete(stats, theta, p, rng) + alpha  # (chains, K, d)
        if it in rb_chain:
            stack.append(conc[rb_chain[it]])
        theta = np.exp(dr.log_dirichlet(conc, 1, rng)[0])
    params = {"theta": out.reshape(chains * draws, *theta.shape[1:])}
    return params, {"concentration": np.stack(stack)}, {"lp": lp}


def log_predictive_stack(family, X, post: dict) -> np.ndarray:
    """log mean_t DirMult(x | concentration_t), (n, K): the Rao-Blackwellised posterior
    predictive of a data-augmentation stack."""
    from bayesgen.utils.logspace import log_mean_exp

    values = [family.log_predictive(X, {"concentration": c}) for c in post["concentration"]]
    return log_mean_exp(np.stack(values), axis=0)
