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


def fit(estimator, counts: np.ndarray, class_alpha: np.ndarray):
    """``(log_pi, params, post, sample_stats)`` of a conjugate fit; ``sample_stats`` is
    None for exact i.i.d. draws."""
    family, stats = estimator._family, estimator._stats
    chains, draws = estimator._posterior_size()
    rng = rng_from(estimator.random_state)
    fixed = estimator._fixed_pi
    if not (family.capabilities.augmentation and family.needs_augmentation(stats)):
        log_pi, params, post = posterior.draw_conjugate(
            family, stats, estimator._prior, counts, class_alpha, chains * draws, rng,
            fixed=fixed)
        return log_pi, params, post, None
    tune = estimator.tune
    if not isinstance(tune, (int, np.integer)) or tune < 0:
        raise ValueError(f"tune must be a non-negative integer; got {tune!r}.")
    params, post, sample_stats = family.augment(
        stats, estimator._prior, chains=chains, draws=draws, tune=int(tune), rng=rng)
    size = chains * draws
    if fixed is not None:
        log_pi = classprior.log_constant(fixed, size)
    else:  # labels are observed: pi's posterior is Dirichlet, independent of x
        log_pi = classprior.log_dirichlet(classprior.posterior(counts, class_alpha), size, rng)
    return log_pi, params, post, sample_stats
