"""The conditional posterior predictive of one class's mixture at the EM mode.

The plug-in density sum_m w_m f(x | theta_m) at the MAP ignores the uncertainty of the
parameters, and a mixture spreads a class's rows over several components, so each
component rests on fewer rows than one Gaussian per class would: the plug-in is the
more overconfident the more components there are. This module integrates the
parameters out given the component labels' responsibilities at the mode.

With the responsibilities r_nm = p(m | z_n, theta_hat) of the MAP fixed, the model of
one class is conjugate: component m is a "class" of the component family whose rows are
z_n with weights v_n r_nm, so its posterior is the family's closed-form conjugate
posterior of those soft statistics (the Normal-Inverse-Wishart, or Normal-Inverse-Gamma
entries of a diagonal covariance), and the weights' posterior is
Dirichlet(alpha + N_1, ..., alpha + N_M), N_m = sum_n v_n r_nm. The predictive is then

    p(x | y = k, data) ~= sum_m E[w_m] p(x | data_m),
    E[w_m] = (N_m + alpha) / (sum_j N_j + M alpha),

p(x | data_m) the family's closed-form posterior predictive (the multivariate
Student-t for full covariances, a product of Student-t's for diagonal ones). This is one
step of mean-field variational Bayes started at the EM mode (Bishop 2006, sec. 10.2,
with q(z) held at the EM responsibilities), and it is exact when the labels are known
(a single component: it is QDA's closed-form posterior predictive). It omits only the
uncertainty of the labels themselves, which the Gibbs sampler (:mod:`.gibbs`) keeps.

Missing entries in the rows: the soft statistics are completed at the mode (the EM's
expected complete-data statistics, :func:`.em.completed`) before the conjugate update.
"""

from __future__ import annotations

import numpy as np
from scipy.special import logsumexp

from bayesgen.families.mixture import em


def class_predictive(component, Z: np.ndarray, v: np.ndarray, fit: em.ClassFit,
                     prior: dict, alpha: float) -> dict:
    """The conditional posterior of one class's mixture at its mode.

    Parameters
    ----------
    component : family
        The configured component family.
    Z : ndarray (n, d)
        The class's rows, internal frame (NaN: missing).
    v : ndarray (n,)
        Their weights.
    fit : ClassFit
        The MAP mixture of the class (:func:`.em.run`).
    prior : dict
        The component prior the fit used.
    alpha : float
        The Dirichlet concentration of the weights.

    Returns
    -------
    dict
        ``log_weights`` (M,): log E[w_m] = log (N_m + alpha) - log(N + M alpha);
        ``post``: the component family's posterior of the M components (its
        ``posterior`` of the responsibility-weighted statistics).
    """
    L = em.component_log_joint(component, Z, fit)
    R = np.exp(L - logsumexp(L, axis=1, keepdims=True))
    stats = em.component_stats(component, Z, R, v)
    if "groups" in stats:  # missing entries: completed at the mode
        stats = em.completed(component, stats, fit.params)
    counts = np.asarray(stats["count"], dtype=np.float64).reshape(-1)
    post = component.posterior(stats, prior)
    log_w = np.log(counts + alpha) - np.log(counts.sum() + counts.size * alpha)
    return {"log_weights": log_w, "post": post}


def log_density(component, Z: np.ndarray, pred: dict) -> np.ndarray:
    """log p(z_n | y = k, data) ~= logsumexp_m(log E[w_m] + log p(z_n | data_m)) of rows
    Z (n, d) (internal frame; NaN: missing, integrated out), (n,)."""
    values = component.log_predictive(Z, pred["post"])
    return logsumexp(values + pred["log_weights"], axis=1)
