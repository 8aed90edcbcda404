"""``method="conjugate"``: exact i.i.d. posterior draws, or data augmentation when the
family's posterior given the data is not conjugate any more (LDA/QDA with missing
entries, :mod:`bayesgen.families.mvn.augment`; MultinomialNB with missing counts,
:mod:`bayesgen.families.multinomial.missing`).

A family opts in by declaring ``capabilities.augmentation`` with two hooks
(:class:`bayesgen.families.protocol.Augmentation`): ``needs_augmentation(stats) -> bool``
and ``augment(stats, prior, *, chains, draws, tune, rng) -> (params, post, sample_stats)``,
where ``post`` is what the family's ``log_predictive`` accepts and ``sample_stats``
(chain, draw) arrays for ``idata_`` (the chains are then checked like NUTS's).
"""

from __future__ import annotations

import numpy as np

from bayesgen.inference import classprior, posterior
from bayesgen.utils.random import rng_from


def fit(fitted, counts: np.ndarray, class_alpha: np.ndarray):
    """``(log_pi, params, post, sample_stats)`` of a conjugate fit from the statistics
    and prior of ``fitted`` (:class:`bayesgen.inference.fitted.Fit`, mid-fit);
    ``sample_stats`` is None for exact i.i.d. draws."""
    family, stats = fitted.family, fitted.stats
    chains, draws = fitted.posterior_size
    rng = rng_from(fitted.random_state)
    fixed = fitted.fixed_pi
    if not _needs_augmentation(family, stats):
        log_pi, params, post = posterior.draw_conjugate(
            family, stats, fitted.prior, counts, class_alpha, chains * draws, rng,
            fixed=fixed)
        return log_pi, params, post, None
    params, post, sample_stats = family.augment(
        stats, fitted.prior, chains=chains, draws=draws, tune=check_tune(fitted.tune), rng=rng)
    # labels are observed: pi's posterior is Dirichlet, independent of x
    log_pi = classprior.log_draws(counts, class_alpha, chains * draws, rng, fixed)
    return log_pi, params, post, sample_stats


def check_tune(tune) -> int:
    """The warm-up iterations of a data augmentation, else ``ValueError``."""
    if not isinstance(tune, (int, np.integer)) or tune < 0:
        raise ValueError(f"tune must be a non-negative integer; got {tune!r}.")
    return int(tune)


def _needs_augmentation(family, stats: dict) -> bool:
    """Whether the posterior of ``stats`` has no closed form (data augmentation)."""
    return bool(family.capabilities.augmentation and family.needs_augmentation(stats))


def exact_given_row(fit, capability: str = "conjugate") -> bool:
    """Whether :func:`draws_given_row` samples the exact posterior of this fit with one
    more row: a conjugate fit of i.i.d. draws (no data augmentation, no unlabeled rows)
    of a family with a closed-form posterior. ``capability``: the family capability
    required besides (``"exact_loo"``: :func:`bayesgen.inference.exact_loo.supports`)."""
    return (fit.method == "conjugate" and not fit.n_unlabeled  # unlabeled: a mixture
            and bool(getattr(fit.family.capabilities, capability))
            and not _needs_augmentation(fit.family, fit.stats))


def draws_given_row(fit, z, k: int, size: int, seed: int):
    """``size`` i.i.d. draws of (log pi, parameters) from the exact posterior of the fit with
    one more row ``z`` (internal frame, (1, d)) of class ``k``, weight 1, at the fit's prior::

        p(theta, pi | D, (x, y=k)) ∝ p(x | theta_k) p(theta, pi | D) pi_k,

    (the fitted statistics merged with the row's; pi ~ Dirichlet(N + a + e_k)). ``seed``
    seeds the draws (one seed for every row and class: common random numbers). Returns
    ``(log_pi (size, K), params)``, or None when the row needs data augmentation.
    """
    import copy

    # posterior() of the count families records the statistics it was given: a copy,
    # so that the fitted family keeps the fit's
    family = copy.copy(fit.family)
    K = fit.classes.size
    one = family.stats(z, np.array([k], dtype=np.intp), np.ones(1), K)
    stats = family.merge(fit.stats, one)
    if _needs_augmentation(family, stats):
        return None
    counts = np.asarray(fit.class_count, dtype=np.float64).copy()
    counts[k] += 1.0
    log_pi, params, _ = posterior.draw_conjugate(
        family, stats, fit.prior, counts, fit.class_alpha, size,
        np.random.default_rng(seed), fixed=fit.fixed_pi)
    return log_pi, params
