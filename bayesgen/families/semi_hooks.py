"""The family hooks that fits with unlabeled rows use (:mod:`bayesgen.semi`), and their
defaults for a family whose statistics are weighted sums over rows.

A semi-supervised fit reaches a family only through these hooks (plus the ordinary
ones: ``stats``, ``mle``, ``map``, ``posterior``, ``draw``, ``log_lik``, the PyMC
hooks). :class:`UnlabeledHooks` gives every default; a family overrides what differs
and ``MixedFamily`` delegates each hook to its parts.

The capabilities ``learns_categories`` and ``kernel_density``
(:class:`bayesgen.families.protocol.Capabilities`) say how a family's unlabeled rows
are fitted.
``log_prior(params, prior) -> float``
    log p(theta) up to a constant, in the parameterisation whose mode ``map``
    computes (the MAP objective of EM). No default: every family has its own.
``likelihood_maximiser() -> family``
    A family whose ``mle`` maximises the weighted likelihood (divisor N_k): ``self``,
    or a copy where the family's own MLE uses N_k - 1 (``divisor="unbiased"``).
``em_m_step(labeled, completed, Z_u, A, prior, params) -> (params, stats)``
    EM's M-step given the unlabeled rows' weights ``A`` (m, K), ``A_nk = lambda w_n
    r_nk``: the parameters maximising the expected complete-data objective and the
    statistics they were estimated from. ``labeled``: the labeled rows' statistics;
    ``completed``: those of the labeled rows plus every unlabeled row in every class
    k with weight ``A_nk``; ``Z_u`` (m, d) the unlabeled rows (internal frame);
    ``prior`` the resolved prior, None for the MLE; ``params`` the current estimate.
``em_final(labeled, used, prior, params) -> (stats, params)``
    The fitted statistics and estimate once EM has converged from ``em_m_step``'s
    ``(params, used)``: the family's own estimator where it differs from the
    likelihood's maximiser (``divisor="unbiased"``), a kernel family's labeled points
    with ``labeled``'s weights (the weights as given).
``conditional_posterior(stats, params, prior, rng) -> post``
    The conjugate posterior of theta given statistics whose missing entries, if the
    posterior needs them, are completed by one draw given ``params`` (data
    augmentation's conjugate step, :mod:`bayesgen.semi.augmentation`).
``can_augment_labels(stats, Z_u) -> bool``
    Whether that augmentation can take the labeled rows' ``stats`` and the unlabeled
    rows ``Z_u`` (MultinomialNB with missing counts cannot).
``pymc_rows_loglik(params, Z, *, stats, observed, prefix="", dims=None) -> (m, K)``
    log p(z_n | y=k, theta) of new rows ``Z`` (m, d) for every class, a PyTensor
    expression of the PyMC parameters ``params`` (the unlabeled rows' mixture
    likelihood in the NUTS model, :mod:`bayesgen.semi.nuts`). ``stats``: the fit's
    labeled statistics. ``observed(family, params, Z, prefix, dims)`` gives it from
    the family's ``pymc_observed``, row by row (the default); a family whose observed
    value is not a density of separate rows, or that has a faster closed form,
    computes it itself.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from bayesgen.families.protocol import Configurable


class UnlabeledHooks(Configurable):
    """Defaults of the unlabeled-row hooks (module docstring) for a family whose
    statistics are weighted sums over rows and whose ``posterior`` is conjugate."""

    def prior_uses_data(self) -> bool:
        """True unless the family says otherwise: leave-one-out re-resolves the prior
        without each row (exact for any prior, :mod:`bayesgen.inference.loo_refit`)."""
        return True

    def likelihood_maximiser(self):
        """``self``: its ``mle`` maximises the weighted likelihood."""
        return self

    def em_m_step(self, labeled: dict, completed: dict, Z_u: np.ndarray, A: np.ndarray,
                  prior: dict | None, params: dict) -> tuple[dict, dict]:
        """The likelihood maximiser's ``mle`` (``prior`` None) or ``map`` of the
        ``completed`` statistics, and those statistics."""
        own = self.likelihood_maximiser()
        estimate = own.mle(completed) if prior is None else own.map(completed, prior)
        return estimate, completed

    def em_final(self, labeled: dict, used: dict, prior: dict | None,
                 params: dict) -> tuple[dict, dict]:
        """``used`` and ``params``, or the family's own ``mle``/``map`` of ``used``
        when its estimator is not the likelihood's maximiser."""
        if self.likelihood_maximiser() is self:
            return used, params
        return used, (self.mle(used) if prior is None else self.map(used, prior))

    def conditional_posterior(self, stats: dict, params: dict, prior: dict,
                              rng: np.random.Generator) -> dict:
        """``posterior(stats, prior)``: missing entries drop out of the statistics, so
        the posterior is conjugate whatever ``params`` are (no random numbers used)."""
        return self.posterior(stats, prior)

    def can_augment_labels(self, stats: dict, Z_u: Any) -> bool:
        """True: the conjugate steps take missing entries as they come."""
        return True

    def pymc_rows_loglik(self, params: dict, Z: np.ndarray, *, stats: dict,
                         observed: Callable, prefix: str = "", dims: dict | None = None):
        """``observed(self, params, Z, prefix, dims)``: the family's observed
        distribution read row by row (a missing entry drops its term)."""
        return observed(self, params, Z, prefix, dims)
