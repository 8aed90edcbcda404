"""Unlabeled rows (semi-supervised learning): dispatching the fit.

None, NaN, ``pd.NA`` or the estimator's ``unlabeled`` value in y mark an unlabeled row
(:mod:`bayesgen.data.labels` splits them off); ``classes_`` are the labeled rows'
labels. With lambda = ``unlabeled_weight`` in [0, 1] (Nigam et al. 2000)::

    l(theta, pi) = sum_{n labeled} w_n log(pi_{y_n} p(x_n | y_n, theta))
                   + lambda sum_{n unlabeled} w_n log sum_k pi_k p(x_n | y=k, theta)
                   [+ log p(theta) + log p(pi)   for "map"]

An unlabeled row enters class k's statistics with weight ``lambda w_n r_nk`` (r_nk its
responsibility). ``"mle"``/``"map"``: EM (:mod:`bayesgen.semi.em`; KernelNB:
:mod:`bayesgen.semi.kernel`); ``"conjugate"``: data augmentation
(:mod:`bayesgen.semi.augmentation`; lambda 0 or 1 only); ``"mcmc"``: NUTS with the
unlabeled block as extra terms (:mod:`bayesgen.semi.nuts`), started at the local mode
reached from the labeled-only mode. Data-aware prior defaults are resolved once
(:func:`bayesgen.semi.em.resolve_prior`) and held fixed, so lambda = 0 is the
labeled-only fit. ``partial_fit``, ``bg.merge`` and Dask fits take labeled rows only.
Family-specific parts are the family's hooks (:mod:`bayesgen.families.semi_hooks`).
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
