"""Data augmentation for LDA/QDA with missing entries (``method="conjugate"``).

Tanner & Wong (1987): a Gibbs sampler on (theta, x_mis) that alternates

1. the missing coordinates given theta = (mu, Sigma): x_{n,m} | x_{n,o}, y_n = k ~
   N(mu_m + B (x_{n,o} - mu_o), C) independently per row (B, C of
   :func:`.patterns.condition`);
2. theta from the exact conjugate NIW posterior given the completed statistics
   (:meth:`MVNFamily.posterior`, :meth:`MVNFamily.draw`).

Only the completed *statistics* are needed, and per (pattern, class) group they are
drawn exactly without visiting rows. With e_n ~ N(0, C) the missing part's residuals,
S_g = R^T R (R: r x |o|, r = rank S_g, from its eigen-decomposition) and n = n_g:

    sum_n (x_{n,o} - xbar) e_n^T = R^T Z,       Z (r x |m|) rows i.i.d. N(0, C)
    ebar = z_0 / sqrt(n),                       z_0 ~ N(0, C)
    sum_n (e_n - ebar)(e_n - ebar)^T = Z^T Z + W,   W ~ Wishart(n - 1 - r, C)

(rotate the rows by an orthonormal basis whose first columns span the constant and the
observed deviations: the rotated residuals are again i.i.d. N(0, C)). The completed
group mean is x^_g + ebar and its scatter
T S_g T^T + T Y + (T Y)^T + Z^T Z + W with T = D + B, Y = R^T Z padded. W is drawn by
Bartlett's decomposition (n - 1 - r > |m| - 1) or as n - 1 - r outer products. This is
exact for integer weights (a weight is a replication count: each copy has its own
missing values); with fractional weights n - 1 - r is fractional and a small group
(n - 1 - r <= |m| - 1) uses floor(.) outer products plus one scaled by the square root
of the fraction (same mean), an approximation.

Chains start from independent draws of the NIW posterior of the available-case
statistics (observed entries' means and variances), run ``tune`` iterations of burn-in
and keep ``draws``; every chain is advanced in one batched step. ``sample_stats``
holds ``lp``, the observed-data log posterior density of each draw (up to a constant).

Posterior predictive: the conjugate posterior given the completed statistics is kept
at up to :data:`RB_MAX` evenly spaced retained iterations; the predictive density is
their average (Rao-Blackwellised), p(x | y, data) = E[t(x | completed data)]
(:func:`.missing.log_predictive`).
"""

from __future__ import annotations

import numpy as np

from bayesgen.families.mvn import em
from bayesgen.families.mvn import patterns as pat
from bayesgen.families.mvn.linalg import _swap

#: conjugate posteriors kept for the Rao-Blackwellised posterior predictive
RB_MAX = 100

def prepare(groups: dict) -> dict:
    """Per group the factor R (d, d) of the observed scatter (:func:`.patterns.scatter_root`)
    and which of its rows are within its rank, the Wishart degrees of freedom n - 1 - r
    and the positions of the missing coordinates (for Bartlett's chi-square degrees of
    freedom)."""
    R, keep = pat.scatter_root(groups["scatter"])
    dof = np.maximum(groups["count"] - 1.0 - keep.sum(-1), 0.0)
    M = ~groups["obs"]
    return {"R": R, "keep": keep.astype(np.float64), "dof": dof,
            "pos": np.cumsum(M, axis=1) - 1.0, "n_mis": M.sum(1)}


def complete(groups: dict, prep: dict, cond: dict, rng: np.random.Generator):
    """Completed group statistics: mean (..., G, d) and scatter (..., G, d, d), drawn
    given the conditional algebra ``cond`` (module docstring)."""
    D = groups["obs"].astype(np.float64)
    M = 1.0 - D
    d = D.shape[1]
    lead = cond["mu"].shape[:-1]  # (..., G)
    xhat, T, spread = pat.filled(groups, cond)
    Lc = np.linalg.cholesky(cond["C"] + np.eye(d) * D[:, None, :])
    z0 = np.einsum("...ij,...j->...i", Lc, rng.standard_normal((*lead, d)))
    ebar = M * z0 / np.sqrt(groups["count"])[:, None]
    Z = (rng.standard_normal((*lead, d, d)) @ _swap(Lc)) * M[:, None, :]
    Z = Z * prep["keep"][..., None]
    cross = T @ (_swap(prep["R"]) @ Z)
    W = _wishart(prep, Lc, M, lead, rng)
    scatter = spread + cross + _swap(cross) + _swap(Z) @ Z + W
    return xhat + ebar, (scatter + _swap(scatter)) / 2.0


def _wishart(prep: dict, Lc: np.ndarray, M: np.ndarray, lead: tuple, rng) -> np.ndarray:
    """W ~ Wishart(dof_g, C_g) on the missing block of every group, padded."""
    d = M.shape[1]
    dof, pos, n_mis = prep["dof"], prep["pos"], prep["n_mis"]
    bartlett = dof > n_mis - 1.0
    chi_df = np.where(bartlett[:, None] & (M > 0), dof[:, None] - pos, 1.0)
    A = np.tril(rng.standard_normal((*lead, d, d)), -1) * M[:, :, None] * M[:, None, :]
    idx = np.arange(d)
    A[..., idx, idx] = np.sqrt(2.0 * rng.standard_gamma(chi_df / 2.0, size=(*lead, d))) * M
    LA = Lc @ A
    W_b = LA @ _swap(LA)
    rows = np.arange(d)
    whole = np.floor(dof)
    coef = np.where(rows < whole[:, None], 1.0,
                    np.where(rows == whole[:, None], np.sqrt(dof - whole)[:, None], 0.0))
    Zo = (rng.standard_normal((*lead, d, d)) @ _swap(Lc)) * M[:, None, :] * coef[..., None]
    W_o = _swap(Zo) @ Zo
    W = np.where(bartlett[:, None, None], W_b, W_o)
    return W * M[:, :, None] * M[:, None, :]


def _completed(family, groups: dict, prep: dict, cond: dict, n_classes: int,
               rng: np.random.Generator) -> dict:
    """Class statistics (``count``, ``mean``, ``scatter``) of one exact completion of
    the missing coordinates given ``cond`` (:func:`complete`), batched like ``cond``."""
    done = pat.class_stats(groups, *complete(groups, prep, cond, rng), n_classes,
                           family.tied)
    return {k: done[k] for k in ("count", "mean", "scatter")}


def sample(family, stats: dict, prior: dict, *, chains: int, draws: int, tune: int,
           rng: np.random.Generator):
    """Run the chains: ``params`` (``mu``, ``cov``, chain-major leading dim), ``post``
    (the stack of T conjugate posteriors for the predictive) and ``sample_stats``
    (``lp`` (chains, draws), the observed-data log posterior)."""
    groups = stats["groups"]
    n_classes = stats["count"].size
    prep = prepare(groups)
    theta = family.draw(family.posterior({k: stats[k] for k in ("count", "mean", "scatter")},
                                         prior), chains, rng)
    total = tune + draws
    kept = np.unique(np.linspace(tune, total - 1, min(RB_MAX, draws)).round().astype(int))
    rb_chain = {int(it): i % chains for i, it in enumerate(kept)}  # spread over chains
    mu_out = np.empty((chains, draws, *theta["mu"].shape[1:]))
    cov_out = np.empty((chains, draws, *theta["cov"].shape[1:]))
    lp = np.empty((chains, draws))
    rb_m, rb_Psi, rb_post = [], [], None
    for it in range(total):
        cond = pat.condition(groups, theta, family.tied)
        if it >= tune:
            j = it - tune
            mu_out[:, j], cov_out[:, j] = theta["mu"], theta["cov"]
            lp[:, j] = pat.loglik(groups, cond).sum(-1) + [
                em.log_niw(theta["mu"][c], theta["cov"][c], prior, family.tied)
                for c in range(chains)]
        done = _completed(family, groups, prep, cond, n_classes, rng)
        new_mu, new_cov = [], []
        for c in range(chains):
            post = family.posterior(dict(done, mean=done["mean"][c],
                                         scatter=done["scatter"][c]), prior)
            one = family.draw(post, 1, rng)
            new_mu.append(one["mu"][0])
            new_cov.append(one["cov"][0])
            if rb_chain.get(it) == c:
                rb_m.append(post["m"])
                rb_Psi.append(post["Psi"])
                rb_post = post
        theta = {"mu": np.stack(new_mu), "cov": np.stack(new_cov)}
    size = chains * draws
    params = {"mu": mu_out.reshape(size, *mu_out.shape[2:]),
              "cov": cov_out.reshape(size, *cov_out.shape[2:])}
    stack = {"m": np.stack(rb_m), "Psi": np.stack(rb_Psi), "kappa": rb_post["kappa"],
             "nu": rb_post["nu"]}
    return params, stack, {"lp": lp}


def conditional_posterior(family, stats: dict, theta: dict, prior: dict,
                          rng: np.random.Generator) -> dict:
    """The NIW posterior of ``stats`` completed by one exact draw of the missing
    coordinates given ``theta`` (``mu``, ``cov``), per (pattern, class) group
    (:func:`complete`): the conjugate step of the label augmentation
    (:mod:`bayesgen.semi.augmentation`). Without ``groups``: ``family.posterior(stats,
    prior)``, no random numbers used."""
    if "groups" not in stats:
        return family.posterior(stats, prior)
    groups = stats["groups"]
    cond = pat.condition(groups, theta, family.tied)
    return family.posterior(_completed(family, groups, prepare(groups), cond,
                                       stats["count"].size, rng), prior)
