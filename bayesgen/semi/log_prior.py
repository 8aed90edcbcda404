"""Log prior densities of the families' parameters, for the MAP objective of EM.

Each is the density, up to a constant, whose joint mode with the likelihood the
family's ``map`` computes, *in the same parameterisation* (the mode depends on it):

gaussian
    sum_kj log InvGamma(var_kj; a0_j, b0_j) + log N(mu_kj; m0_j, var_kj / kappa0)
    (MAP var = b_n / (a_n + 3/2));
mvn
    the Normal-Inverse-Wishart density (:func:`._mvn_em.log_niw`);
bernoulli
    sum_kj (alpha_j - 1) (log theta_kj + log(1 - theta_kj))   (Beta(alpha, alpha));
multinomial
    sum_kj (alpha_j - 1) log theta_kj                          (Dirichlet(alpha));
categorical
    sum_kjc (alpha_j - 1) log theta_kjc over the C_j categories of feature j;
poisson, exponential
    sum_kj (alpha_j - 1) log rate_kj - beta_j rate_kj          (Gamma(alpha, beta));
kernel
    -sum_kj (log h_kj - log c_kj)^2 / (2 sd^2)   (log-normal, as a density of log h:
    KernelNB's MAP is the mode in log h);
mixed
    the sum over its parts.

Terms with alpha = 1 are 0 (also at a probability of 0: ``xlogy``).
"""

from __future__ import annotations

import numpy as np
from scipy.special import xlogy


def log_prior(family, params: dict, prior: dict) -> float:
    """log p(theta) up to a constant (module docstring)."""
    name = family.name
    if name == "mixed":
        parts = family._parts()
        return float(sum(
            log_prior(q["family"], p, pr)
            for q, p, pr in zip(parts, family._split(params), prior["parts"], strict=True)))
    if name == "gaussian":
        mu, var = params["mu"], params["var"]
        a0, b0, m0, k0 = prior["a0"], prior["b0"], prior["m0"], prior["kappa0"]
        inv_gamma = -(a0 + 1.0) * np.log(var) - b0 / var
        normal = -0.5 * np.log(var / k0) - 0.5 * k0 * (mu - m0) ** 2 / var
        return float(np.sum(inv_gamma + normal))
    if name == "mvn":
        from bayesgen.families.mvn.em import log_niw

        return log_niw(params["mu"], params["cov"], prior, family.tied)
    if name == "bernoulli":
        theta, a = params["theta"], prior["alpha"] - 1.0
        return float(np.sum(xlogy(a, theta) + xlogy(a, 1.0 - theta)))
    if name == "multinomial":
        return float(np.sum(xlogy(prior["alpha"] - 1.0, params["theta"])))
    if name == "categorical":
        theta = params["theta"]  # (K, d, Cmax), zero padding beyond C_j
        valid = np.arange(theta.shape[-1])[None, :] < np.asarray(prior["n_categories"])[:, None]
        a = np.where(valid, (prior["alpha"] - 1.0)[:, None], 0.0)
        return float(np.sum(xlogy(a, theta)))
    if name in ("poisson", "exponential"):
        rate = params["rate"]
        return float(np.sum(xlogy(prior["alpha"] - 1.0, rate) - prior["beta"] * rate))
    if name == "kernel":
        z = (np.log(params["bandwidth"]) - np.log(prior["centre"])) / prior["sd"]
        return float(-0.5 * np.sum(z**2))
    raise ValueError(f"no prior density for family {name!r}")


def log_class_prior(log_pi: np.ndarray, alpha: np.ndarray) -> float:
    """log Dirichlet(pi; alpha) up to a constant: sum_k (alpha_k - 1) log pi_k."""
    with np.errstate(invalid="ignore"):
        terms = np.where(alpha == 1.0, 0.0, (alpha - 1.0) * log_pi)
    return float(np.sum(terms))
