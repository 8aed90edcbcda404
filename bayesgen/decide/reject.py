r"""Abstention: Chow's reject rule and risk-coverage curves.

With predictive probabilities p(y | x) and a loss matrix L (``L[i, j]`` = cost of
predicting j when the truth is i; 0-1 loss when none is set), the Bayes decision is
j*(x) = argmin_j r_j(x) with expected loss r_j(x) = sum_i p(i | x) L[i, j]. Chow's
rule (Chow 1970) abstains when even the best decision costs more in expectation than
abstaining: reject x when r_{j*}(x) > c, the cost of a rejection (in the units of L;
under 0-1 loss, reject when max_k p(k | x) < 1 - c). It minimises the expected loss
with rejections priced at c, when the probabilities are calibrated.

A coverage target instead answers the fraction ``coverage`` of the rows with the
smallest expected loss r_{j*} and abstains on the rest (selective classification,
Geifman and El-Yaniv 2017). The risk-coverage curve shows, for every such threshold,
the realised mean loss of the answered rows against their fraction; its area (AURC) is
lower for a better ranking of rows by confidence (:func:`bayesgen.plots.risk_coverage_curve`,
plotted by :func:`bayesgen.plots.risk_coverage`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bayesgen.utils.logspace import expected_loss


def reject_decisions(proba: np.ndarray, loss: np.ndarray | None = None, *,
                     reject_cost: float | None = None,
                     coverage: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Bayes decisions with a reject option.

    Parameters
    ----------
    proba : ndarray of shape (n, K)
    loss : ndarray of shape (K, K), optional
        Loss matrix (0-1 loss when None).
    reject_cost : float, optional
        Chow's rule: abstain where the smallest expected loss exceeds it (>= 0).
    coverage : float in (0, 1], optional
        Answer the ``ceil(coverage * n)`` rows of smallest expected loss (ties: the
        earlier rows first). Exactly one of ``reject_cost`` and ``coverage``.

    Returns
    -------
    decision : ndarray of int, shape (n,)
        Index of the Bayes decision of every row (also for rejected rows).
    accepted : ndarray of bool, shape (n,)
        False where the rule abstains.
    """
    if (reject_cost is None) == (coverage is None):
        raise ValueError("Give exactly one of reject_cost (Chow's rule) and coverage "
                         "(the fraction of rows to answer).")
    risk = expected_loss(proba, loss)
    decision = np.argmin(risk, axis=1)
    best = risk[np.arange(risk.shape[0]), decision]
    if reject_cost is not None:
        if not np.isfinite(reject_cost) or reject_cost < 0:
            raise ValueError(f"reject_cost must be a finite number >= 0; got {reject_cost!r}.")
        return decision, best <= reject_cost
    if not 0 < coverage <= 1:
        raise ValueError(f"coverage must be in (0, 1]; got {coverage!r}.")
    n_keep = int(np.ceil(coverage * best.size - 1e-12))
    accepted = np.zeros(best.size, dtype=bool)
    accepted[np.argsort(best, kind="stable")[:n_keep]] = True
    return decision, accepted


def labels_with_reject(classes: np.ndarray, decision: np.ndarray, accepted: np.ndarray,
                       reject_label: Any = None):
    """Labels of the decisions; rejected rows masked (``numpy.ma.MaskedArray``) or, when
    ``reject_label`` is given, set to it (in an array of a dtype that holds both)."""
    labels = classes[decision]
    if reject_label is None:
        return np.ma.MaskedArray(labels, mask=~accepted)
    try:
        dtype = np.result_type(labels.dtype, np.asarray(reject_label).dtype)
    except TypeError:  # e.g. integer labels and a string marker
        dtype = np.dtype(object)
    out = labels.astype(dtype)
    out[~accepted] = reject_label
    return out
