"""The marginal density of the features, log p(x), and a novelty check built on it.

A generative classifier models p(x, y), so it knows the density of the inputs::

    log p(x) = log sum_k p(x, y = k)

the log-sum-exp over classes of ``predict_joint_log_proba``: plug-in
``log sum_k pi_k p(x | theta_k)`` for ``"mle"``/``"map"``, the posterior predictive
``log sum_k E[pi_k | D] p(x | y = k, D)`` (closed form) for ``"conjugate"`` and
``log mean_s sum_k pi_k^(s) p(x | theta^(s))`` for ``"mcmc"`` (the log-mean-exp over
draws of each class, summed over classes, is the same mixture). Missing entries are
integrated out, and the density is that of X in its own units (the affine frame's
Jacobian is part of the joint densities). scikit-learn's density estimators call this
``score_samples``.

Novelty detection: a row whose density is far below those of the training rows is
unlike the data the classifier learned from, and its predicted probabilities are an
extrapolation. :func:`novelty` compares ``score_samples`` of new rows to a low
quantile of the training rows' scores and, if asked, warns.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bayesgen.exceptions import DataWarning, warn
from bayesgen.utils.logspace import fast_logsumexp


def log_marginal(joint: np.ndarray) -> np.ndarray:
    """log p(x) = log sum_k p(x, y=k) of every row of the joint log-densities ``joint``
    (n, K), shape (n,); -inf for a row impossible under every class (e.g. an unseen
    category under the MLE). Never NaN."""
    with np.errstate(divide="ignore", invalid="ignore"):
        out = fast_logsumexp(joint, axis=1)
    return np.where(np.isnan(out), -np.inf, out)


def novelty(estimator, X: Any, quantile: float = 0.01, *, X_train: Any = None,
            warn_user: bool = True) -> np.ndarray:
    """Flag rows of X whose density is below the ``quantile`` of the training rows'.

    Parameters
    ----------
    estimator : fitted bayesgen classifier
    X : array-like (n, d)
    quantile : float in (0, 1)
        The threshold is this quantile of ``score_samples`` over the training rows
        (0.01: about 1% of the training rows would be flagged themselves).
    X_train : array-like (m, d), optional
        The training rows (any reference rows: the threshold is a quantile of their
        densities). Needed unless the fit kept its rows (a posterior fit of small data,
        see :mod:`bayesgen.inference.rows`).
    warn_user : bool
        Emit a :class:`bayesgen.DataWarning` "this input is unlike the training data"
        naming how many rows are flagged (none if no row is).

    Returns
    -------
    ndarray of bool (n,)
        True where log p(x) is below the threshold.
    """
    if not 0 < quantile < 1:
        raise ValueError(f"quantile must be in (0, 1); got {quantile!r}.")
    if X_train is None:  # the rows the fit kept, else a ValueError saying to pass them
        from bayesgen.inference.rows import training_rows

        X_train = training_rows(estimator, what="the training rows' densities",
                                how="novelty(estimator, X, X_train=X_train)").X
    # the training rows' densities (in-sample, so slightly optimistic)
    threshold = float(np.quantile(estimator.score_samples(X_train), quantile))
    scores = estimator.score_samples(X)
    flagged = scores < threshold
    if warn_user and flagged.any():
        rows = np.flatnonzero(flagged)
        shown = ", ".join(str(r) for r in rows[:10]) + (", ..." if rows.size > 10 else "")
        warn(
            f"{type(estimator).__name__}: {rows.size} input row(s) ({shown}) are unlike the "
            f"training data: log p(x) below {threshold:.4g}, the {quantile:g} quantile of the "
            "training rows' densities. Their predictions are extrapolations.",
            DataWarning,
        )
    return flagged
