"""Calibration of predicted class probabilities (one-vs-rest, pooled over classes)."""

from __future__ import annotations

from typing import Any

import numpy as np


def calibration_table(y_true: Any, proba: Any, *, classes: Any = None, n_bins: int = 10) -> dict:
    """One-vs-rest pooled calibration of predicted probabilities, in uniform bins.

    Every (row i, class k) pair is one forecast p_ik of the event y_i = classes[k]. Bins
    are [0, 1/B], (1/B, 2/B], ... (as ``sklearn.calibration.calibration_curve``).

    Returns
    -------
    dict with ``prob_pred`` (mean forecast per non-empty bin), ``prob_true`` (observed
    frequency), ``count`` (forecasts per bin) and ``ece`` =
    ``sum_b (n_b / N) |prob_true_b - prob_pred_b|`` (expected calibration error).
    """
    y_true = np.asarray(y_true)
    proba = np.asarray(proba, dtype=float)
    classes = np.unique(y_true) if classes is None else np.asarray(classes)
    if proba.ndim != 2 or proba.shape != (y_true.shape[0], classes.size):
        raise ValueError(f"proba must have shape (n_samples, n_classes) = ({y_true.shape[0]}, "
                         f"{classes.size}); got {proba.shape}. Pass classes= (e.g. "
                         "estimator.classes_) when some classes are absent from y_true.")
    if not np.isin(y_true, classes).all():
        raise ValueError("y_true holds labels that are not in classes; pass classes= in the "
                         "column order of proba (e.g. estimator.classes_).")
    if not np.isfinite(proba).all() or proba.min() < 0 or proba.max() > 1:
        raise ValueError("proba must hold finite probabilities in [0, 1].")
    if int(n_bins) != n_bins or n_bins < 1:
        raise ValueError(f"n_bins must be a positive integer; got {n_bins!r}.")
    p = proba.ravel()
    hit = (y_true[:, None] == classes[None, :]).ravel().astype(float)
    edges = np.linspace(0.0, 1.0, int(n_bins) + 1)
    ids = np.searchsorted(edges[1:-1], p)
    count = np.bincount(ids, minlength=n_bins)
    keep = count > 0
    prob_pred = np.bincount(ids, weights=p, minlength=n_bins)[keep] / count[keep]
    prob_true = np.bincount(ids, weights=hit, minlength=n_bins)[keep] / count[keep]
    ece = float(np.sum(count[keep] * np.abs(prob_true - prob_pred)) / p.size)
    return {"prob_pred": prob_pred, "prob_true": prob_true, "count": count[keep], "ece": ece}
