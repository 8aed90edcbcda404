"""LDA/QDA with both missing entries in X and unlabelled rows (issue 17).

The observed data are the labelled rows (x_{n,o}, y_n) and the unlabelled rows x_{n,o},
each with its own observed coordinates o. Missingness is ignorable, so every row's
likelihood is the Gaussian marginal of its observed coordinates,
N(x_{n,o}; mu_{k,o}, Sigma_{k,oo}), and an unlabelled row's is the mixture
sum_k pi_k N(x_{n,o}; mu_{k,o}, Sigma_{k,oo}).

``method="conjugate"`` (data augmentation, :mod:`bayesgen.semi.augmentation`)
    Every iteration draws, per chain, the latent quantities (z, x_mis) in one block
    given theta = (mu, Sigma, pi), as p(z, x_mis | x_obs, theta) =
    p(z | x_obs, theta) p(x_mis | z, x_obs, theta):

    1. z_n | x_{n,o}, theta ~ Categorical(r_n) for every unlabelled row, r_nk
       proportional to pi_k N(x_{n,o}; mu_{k,o}, Sigma_{k,oo}) (the family's
       ``log_lik``, which groups rows by missingness pattern);
    2. the missing coordinates of every row (labelled, and unlabelled in its drawn
       class) given its class: the completed (pattern, class) group statistics of the
       gap augmentation (:func:`bayesgen.families.mvn.augment.complete`, exact
       without visiting rows), combined per class;

    then theta from the exact NIW and Dirichlet posteriors of the completed statistics
    (:func:`conditional_posterior`). The stationary distribution is the exact posterior
    given all observed entries and labels. Chains, ``lp``, R-hat/ESS and the
    Rao-Blackwellised predictive are those of the label augmentation.
``method="mcmc"`` (NUTS, :mod:`bayesgen.semi.nuts`)
    The labelled rows enter through the per-(pattern, class) group likelihood
    (:mod:`bayesgen.families.mvn.pymc_missing`, via the family's statistics), the
    unlabelled rows through ``lambda sum_n w_n logsumexp_k [log pi_k + log
    N(x_{n,o}; mu_{k,o}, Sigma_{k,oo})]`` with the marginal computed per missingness
    pattern (:func:`mvn_columns`: one batched Cholesky factor per pattern and class,
    one batched triangular solve of all the pattern's rows).

``"mle"`` and ``"map"`` need nothing here: the semi-supervised EM's M-step is the
family's missing-data EM (:mod:`bayesgen.semi.em`).
"""

from __future__ import annotations

import numpy as np

from bayesgen.families.mvn import augment
from bayesgen.families.mvn import patterns as pat

LOG_2PI = np.log(2.0 * np.pi)


def conditional_posterior(family, stats: dict, theta: dict, prior: dict,
                          rng: np.random.Generator) -> dict:
    """The conjugate posterior of theta given the rows' completed statistics.

    Parameters
    ----------
    family
        The fit's family.
    stats : dict
        The family's statistics of the rows (labelled, and unlabelled in their drawn
        classes). Without ``groups`` (no missing entry) they are complete already.
    theta : dict
        One draw of the parameters (``mu`` (K, d), ``cov`` (K, d, d) or (d, d) for the
        mvn family) that the missing coordinates are drawn from.
    prior : dict
        The resolved prior.
    rng : numpy Generator

    Returns
    -------
    dict
        ``family.posterior`` of the completed statistics: with missing entries the
        (pattern, class) groups are completed by one draw of x_mis | x_obs, z, theta
        (:func:`bayesgen.families.mvn.augment.complete`) and combined per class;
        otherwise ``family.posterior(stats, prior)`` (no random numbers used).
    """
    if "groups" not in stats:
        return family.posterior(stats, prior)
    groups = stats["groups"]
    n_classes = stats["count"].size
    cond = pat.condition(groups["obs"], theta["mu"][groups["cls"]],
                         pat.class_covariances(theta["cov"], groups, family.tied))
    mean_g, scatter_g = augment.complete(groups, augment.prepare(groups), cond, rng)
    done = pat.class_stats(groups, mean_g, scatter_g, n_classes, family.tied)
    return family.posterior({"count": done["count"], "mean": done["mean"],
                             "scatter": done["scatter"]}, prior)


def mvn_columns(family, params: dict, Z: np.ndarray, n_classes: int):
    """log N(x_{n,o}; mu_{k,o}, Sigma_{k,oo}) of every row and class as a PyTensor
    (m, K) expression, rows in the order of ``Z``; 0 for a row with nothing observed.

    Rows are grouped by missingness pattern (:func:`bayesgen.families.mvn.missing.
    patterns`); per pattern, the observed block of every class covariance is factorised
    once (batched over classes for QDA) and all the pattern's rows are solved in one
    triangular solve: ``-1/2 [|o| log 2 pi + log|Sigma_oo| + ||L^-1 (x_o - mu_o)||^2]``.
    """
    import pytensor.tensor as pt
    from pytensor.tensor.linalg import cholesky, solve_triangular

    from bayesgen.families.mvn.missing import patterns

    Z = np.asarray(Z, dtype=np.float64)
    mu, cov = params["mu"], params["cov"]
    blocks, order = [], []
    for rows, o in patterns(np.isnan(Z)):
        order.append(rows)
        if o.size == 0:  # nothing observed: likelihood 1 under every class
            blocks.append(pt.zeros((rows.size, n_classes)))
            continue
        Xo = pt.as_tensor(Z[np.ix_(rows, o)])  # (n_p, |o|)
        mu_o = mu[:, o]  # (K, |o|)
        diff = Xo[None, :, :] - mu_o[:, None, :]  # (K, n_p, |o|)
        if family.tied:
            L = cholesky(cov[o][:, o], lower=True)  # (|o|, |o|)
            sol = solve_triangular(L, diff.reshape((n_classes * rows.size, o.size)).T,
                                   lower=True)  # (|o|, K n_p)
            quad = (sol**2).sum(0).reshape((n_classes, rows.size))
            logdet = 2.0 * pt.log(pt.diagonal(L)).sum()
            block = -0.5 * (quad + logdet + o.size * LOG_2PI)
        else:
            L = cholesky(cov[:, o][:, :, o], lower=True)  # (K, |o|, |o|)
            sol = solve_triangular(L, diff.transpose(0, 2, 1), lower=True, b_ndim=2)
            quad = (sol**2).sum(1)  # (K, n_p)
            logdet = 2.0 * pt.log(pt.diagonal(L, axis1=-2, axis2=-1)).sum(-1)  # (K,)
            block = -0.5 * (quad + logdet[:, None] + o.size * LOG_2PI)
        blocks.append(block.T)
    stacked = pt.concatenate(blocks, axis=0)
    return stacked[np.argsort(np.concatenate(order))]
