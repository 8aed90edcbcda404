"""Data augmentation with unlabeled rows (``method="conjugate"``).

Tanner & Wong (1987) on (theta, pi, z), z the unlabeled rows' classes; every chain
alternates

1. z_n | x_n, theta, pi ~ Categorical(r_n), r_nk proportional to pi_k p(x_n | y=k, theta);
2. theta | data, z from the family's conjugate posterior of the completed statistics
   (``conditional_posterior``; LDA/QDA also draw missing coordinates there), and
   pi | data, z ~ Dirichlet(N_k + n_k(z) + a_k) (or the fixed ``class_prior``).

Its stationary distribution is the exact posterior given all rows. Chains start from
labeled-only posterior draws, run ``tune`` burn-in iterations and keep ``draws``;
``sample_stats.lp`` is the observed-data log posterior, and the chains are checked as
NUTS's (:func:`bayesgen.inference.mcmc.warn_if_not_converged`). The predictive is
Rao-Blackwellised: ``p(x, y=k | data) ~= mean_t E[pi_k | data, z_t] p(x | y=k, data, z_t)``
over up to :data:`RB_MAX` retained iterations. Families that cannot complete their
missing entries here (``can_augment_labels`` False) are refused with a ``ValueError``
that points to "map" or "mle".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.special import logsumexp

from bayesgen.inference import classprior, conjugate, scoring
from bayesgen.semi.em import stack_rows
from bayesgen.utils.random import rng_from

#: conjugate posteriors kept for the Rao-Blackwellised posterior predictive
RB_MAX = 100


def check_supported(estimator, family, stats: dict, Z_u) -> None:
    """``ValueError`` when the family cannot complete the missing entries of the
    labeled rows' ``stats`` or the unlabeled rows ``Z_u`` inside the augmentation
    (``can_augment_labels``: MultinomialNB with missing counts)."""
    if not family.can_augment_labels(stats, Z_u):
        raise ValueError(
            f"{type(estimator).__name__} with both missing values in X and unlabeled rows "
            f"is not available with method={estimator.method!r}; use method='map' or "
            "'mle' (EM integrates over both), or impute X first."
        )


def _first(params: dict, random: dict, size: int) -> dict:
    return {k: (v[:size] if k in random else v) for k, v in params.items()}


@dataclass(frozen=True)
class Result:
    """The augmentation chains' posterior, for the estimator to store.

    Attributes
    ----------
    params : dict
        Parameter draws with a leading dim S = chains x draws.
    log_pi : ndarray (S, K)
        log pi per draw.
    posterior : dict
        The Rao-Blackwellised mixture of conjugate posteriors
        (:func:`bayesgen.inference.posterior.mixture`).
    counts : ndarray (K,)
        Mean completed class counts.
    lp : ndarray (chains, draws)
        Observed-data log posterior density per draw (``sample_stats``).
    """

    params: dict
    log_pi: np.ndarray
    posterior: dict
    counts: np.ndarray
    lp: np.ndarray


def run(fit, batch, lam: float, tune: Any, random_state: Any) -> Result:
    """Data augmentation for a batch with unlabeled rows (module docstring), started
    at the labeled-only conjugate fit ``fit`` (:class:`bayesgen.inference.fitted.Fit`,
    under the prior resolved from all rows), with the estimator's ``tune`` and
    ``random_state``. ``lam`` (lambda) must be 1 here (0 is the labeled-only fit)."""
    from bayesgen.inference import posterior

    Z_l = scoring.to_internal(batch.frame, batch.X)
    chains, draws = fit.posterior_size
    tune = conjugate.check_tune(tune)
    rng = rng_from(random_state)  # a stream apart from the labeled draws
    rng = np.random.default_rng(rng.integers(2**63))
    out = _run(fit, fit.family, batch, Z_l, chains, draws, tune, rng)
    params, log_pi, posts, rb_log_pi, counts, lp = out
    return Result(params, log_pi, posterior.mixture(posts, rb_log_pi), counts, lp)


def _run(fit, family, batch, Z_l, chains: int, draws: int, tune: int, rng):
    """The augmentation chains; returns params (S, ...), log pi (S, K), the kept
    posteriors and their log E[pi], the mean completed class counts and lp (C, D)."""
    unl = batch.unlabeled
    n_classes = batch.classes.size
    prior, alpha, fixed = fit.prior, fit.class_alpha, fit.fixed_pi
    random = family.param_dims
    theta = _first(fit.params, random, chains)
    log_pi = fit.log_pi_draws[:chains]
    Z_all = stack_rows(Z_l, unl.Z)
    w_all = np.concatenate([batch.weights, unl.w])
    m = unl.w.size
    total = tune + draws
    kept = np.unique(np.linspace(tune, total - 1, min(RB_MAX, draws)).round().astype(int))
    rb_chain = {int(it): i % chains for i, it in enumerate(kept)}
    out_params = {k: np.empty((chains, draws, *np.shape(v)[1:])) for k, v in theta.items()
                  if k in random}
    out_log_pi = np.empty((chains, draws, n_classes))
    lp = np.empty((chains, draws))
    posts, rb_log_pi, count_sum = [], [], np.zeros(n_classes)
    for it in range(total):
        with np.errstate(divide="ignore", invalid="ignore"):
            J_u = family.log_lik(unl.Z, theta, full=True) + log_pi[:, None, :]  # (C, m, K)
        norm = logsumexp(J_u, axis=-1, keepdims=True)
        prob = np.exp(J_u - np.where(np.isfinite(norm), norm, 0.0))
        prob = np.where(np.isfinite(norm), prob, np.exp(log_pi)[:, None, :])
        if it >= tune:
            j = it - tune
            for k in out_params:
                out_params[k][:, j] = theta[k]
            out_log_pi[:, j] = log_pi
            lp[:, j] = _log_post(family, Z_l, batch, theta, log_pi, norm[..., 0],
                                 unl.w, prior, alpha, fixed)
        u = rng.uniform(size=(chains, m, 1))
        z = np.minimum((np.cumsum(prob, axis=-1) < u).sum(-1), n_classes - 1)
        new = {k: [] for k in out_params}
        new_log_pi = np.empty_like(log_pi)
        for c in range(chains):
            y_all = np.concatenate([batch.y_index, z[c]])
            stats = family.stats(Z_all, y_all, w_all, n_classes)
            counts = batch.counts + np.bincount(z[c], weights=unl.w, minlength=n_classes)
            one_theta = {k: (v[c] if k in random else v) for k, v in theta.items()}
            post = family.conditional_posterior(stats, one_theta, prior, rng)  # + x_mis
            one = family.draw(post, 1, rng)
            for k in new:
                new[k].append(one[k][0])
            conc = classprior.posterior(counts, alpha)
            if fixed is None:
                new_log_pi[c] = classprior.log_dirichlet(conc, 1, rng)[0]
            else:
                new_log_pi[c] = np.log(fixed)
            if rb_chain.get(it) == c:
                posts.append(post)
                rb_log_pi.append(np.log(conc / conc.sum()) if fixed is None else np.log(fixed))
            if it >= tune:
                count_sum += counts
        theta = dict(theta, **{k: np.stack(v) for k, v in new.items()})
        log_pi = new_log_pi
    size = chains * draws
    params = {k: v.reshape(size, *v.shape[2:]) for k, v in out_params.items()}
    params.update({k: v for k, v in theta.items() if k not in random})  # fixed params
    return (params, out_log_pi.reshape(size, n_classes), posts, np.stack(rb_log_pi),
            count_sum / size, lp)


def _log_post(family, Z_l, batch, theta: dict, log_pi: np.ndarray,
              norm_u: np.ndarray, w_u: np.ndarray, prior: dict, alpha: np.ndarray,
              fixed) -> np.ndarray:
    """Observed-data log posterior density of every chain's current draw, (C,)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        J_l = family.log_lik(Z_l, theta, full=True)  # (C, n, K)
    rows = np.arange(batch.y_index.size)
    lab = (J_l[:, rows, batch.y_index] + log_pi[:, batch.y_index]) @ batch.weights
    out = lab + norm_u @ w_u
    random = family.param_dims
    for c in range(out.size):
        one = {k: (v[c] if k in random else v) for k, v in theta.items()}
        out[c] += family.log_prior(one, prior)
        if fixed is None:
            out[c] += classprior.log_density(log_pi[c], alpha)
    return out
