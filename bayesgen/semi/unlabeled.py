"""Unlabeled rows (semi-supervised learning): dispatching the fit.

An entry of y that is None, NaN or ``pd.NA`` marks an unlabeled row, and so does the
estimator's ``unlabeled`` value when it is set (``unlabeled=-1``: scikit-learn's
``semi_supervised`` convention; not the default, since -1 is a common real label); the
batch is read, and those rows are split off, by :mod:`bayesgen.data.labels`.
``classes_`` are the labels of the labeled rows only.

A generative classifier learns from unlabeled rows through their marginal likelihood
``p(x) = sum_k pi_k p(x | y=k, theta)``. With lambda = ``unlabeled_weight`` in [0, 1]
(Nigam, McCallum, Thrun & Mitchell 2000) the objective is

    l(theta, pi) = sum_{n labeled} w_n log(pi_{y_n} p(x_n | y_n, theta))
                   + lambda sum_{n unlabeled} w_n log sum_k pi_k p(x_n | y=k, theta)
                   [+ log p(theta) + log p(pi)   for "map"].

Everything is a sum of per-class statistics: the labeled rows' statistics are fixed,
and an unlabeled row enters class k with weight ``lambda w_n r_nk`` (``r_nk`` its
responsibility), i.e. the family's own ``stats`` with those weights. The methods:

``"mle"``, ``"map"``
    EM (:mod:`bayesgen.semi.em`), started at the labeled-only fit; ``n_iter_`` and
    ``em_objective_`` (the objective above, never decreasing) are set.
``"conjugate"``
    Data augmentation (:mod:`bayesgen.semi.augmentation`): the unlabeled rows' classes given
    the parameters, the parameters from the conjugate posterior of the completed
    statistics; chains, R-hat and ESS as for NUTS. lambda must be 0 or 1: a power
    likelihood of a *mixture* has no augmentation with conjugate steps (tempering each
    component instead would be a different posterior), so 0 < lambda < 1 is a
    ``ValueError`` that points to "mcmc".
``"mcmc"``
    NUTS on the labeled statistics plus ``lambda * sum_n w_n logsumexp_k(...)`` of the
    unlabeled block (:mod:`bayesgen.semi.nuts`, given to the statistics model as
    extra terms): the power (tempered) posterior for
    lambda < 1. The chains start at the local mode reached from the labeled-only
    posterior mode (like EM from the labeled-only fit), not at the prior's centre,
    where they could settle in a label-swapped mode.

The prior's data-aware defaults (prior means and scales, ``cov_dof="auto"``) are
resolved once from all rows (:func:`bayesgen.semi.em.resolve_prior`: the unlabeled
rows weighted by their responsibilities under the labeled-only MAP fit) and held fixed;
lambda = 0 is exactly the labeled-only fit, prior included. Without unlabeled rows
nothing here runs and every fit is as before. ``model_``, ``idata_``'s ``observed_data`` and
``log_likelihood`` hold the labeled rows (``log p(x_n, y_n | theta)``, so ``bg.compare``
compares fits of the same labeled rows). ``partial_fit``, ``bg.merge`` and Dask fits
accept labeled rows only (EM and augmentation revisit every unlabeled row at every
iteration: no fixed-size statistics summarise them). KernelNB and MixedNB's kernel
parts keep the labeled rows as kernel centres (bandwidths by their leave-one-out
criterion) and take the unlabeled rows through the same mixture likelihood, with EM
in :mod:`bayesgen.semi.kernel` (the family's ``kernel_density``); they have no
"conjugate" method. Everything family-specific is reached through the family's
unlabeled-row hooks (:mod:`bayesgen.families.semi_hooks`).
"""

from __future__ import annotations

import numpy as np


def check_labeled(counts: np.ndarray, classes: np.ndarray) -> None:
    """``ValueError`` naming a class whose labeled rows have no weight."""
    empty = np.flatnonzero(~(counts > 0))
    if empty.size:
        raise ValueError(
            f"y: class {np.asarray(classes)[empty[0]].item()!r} has no labeled row of "
            "positive weight; every class needs labeled rows for a semi-supervised fit "
            "(unlabeled rows "
            "cannot name a class nobody labeled)."
        )


# ------------------------------------------------------------------ fit
def check_weight(weight: float, method: str) -> float:
    """lambda = ``unlabeled_weight`` as a float, ``ValueError`` outside [0, 1] or, with
    ``method="conjugate"``, strictly between 0 and 1."""
    lam = float(weight)
    if not 0.0 <= lam <= 1.0:  # also checked by the parameter constraints
        raise ValueError(f"unlabeled_weight must be in [0, 1]; got {lam!r}.")
    if method == "conjugate" and 0.0 < lam < 1.0:
        raise ValueError(
            f"unlabeled_weight={lam!r} is not available with method='conjugate': a power "
            "of the unlabeled rows' mixture likelihood has no data augmentation with "
            "conjugate steps. Use 0 or 1, or method='mcmc' (which samples that tempered "
            "posterior) or 'map'."
        )
    return lam
