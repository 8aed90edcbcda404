"""Defaults of the hooks that fits with unlabeled rows use (:mod:`bayesgen.semi`; the
hooks are documented on :class:`bayesgen.families.protocol.Family`), for a family whose
statistics are weighted sums over rows. A family overrides what differs; the
capabilities ``learns_categories`` and ``kernel_density`` say how a family's unlabeled
rows are fitted.

``likelihood_maximiser() -> family`` (used by the defaults here): a family whose ``mle``
maximises the weighted likelihood (divisor N_k): ``self``, or a copy whose own MLE
uses N_k - 1 (``divisor="unbiased"``).
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
