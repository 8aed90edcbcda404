"""KernelNB with missing entries (NaN in the training points or the rows scored).

The KDE of class k and feature j is built from the points of class k observed in
feature j (weights W_kj), and a missing x_j of a scored row drops its factor
(:func:`.kde.log_lik`). The leave-one-out objective of (k, j) involves feature j alone,
so :func:`per_feature` fits one feature at a time on its observed points (exactly the
complete-case fit of that feature; Silverman's floor for a zero spread uses that
feature's sd alone).
``method="mcmc"`` and ``idata_``'s pointwise terms sum the complete-case PyTensor
likelihood over features (:func:`stats_loglik`, :func:`train_log_lik`)."""

from __future__ import annotations

import numpy as np

from bayesgen.data import missing


def has_gaps(stats: dict) -> bool:
    """Whether the training points hold missing entries."""
    return bool(np.isnan(stats["X"]).any())


def feature_stats(stats: dict, j: int) -> dict:
    """The statistics of feature j alone on the rows where it is observed."""
    keep = ~np.isnan(stats["X"][:, j])
    y, w = stats["y"][keep], stats["w"][keep]
    K = stats["count"].shape[0]
    return dict(stats, X=stats["X"][keep, j : j + 1], y=y, w=w, row=stats["row"][keep],
                count=np.bincount(y, weights=w, minlength=K).astype(np.float64))


def check_observed(stats: dict, labels, who: str = "KernelNB") -> None:
    """``ValueError`` naming the class and feature of a (class, feature) pair with no
    observed point: a KDE without points has no density (for every method)."""
    K, d = stats["count"].shape[0], stats["X"].shape[1]
    seen = np.zeros((K, d))
    np.add.at(seen, stats["y"], (~np.isnan(stats["X"])).astype(np.float64))
    if np.all(seen > 0):
        return
    from bayesgen.data.validation import label

    k, j = np.argwhere(~(seen > 0))[0]
    raise ValueError(
        f"{who}: feature {missing.column_name(None, int(j))} is never observed in class "
        f"{label(labels, int(k))} (every entry missing there); a kernel density needs "
        "points. Drop the feature or the rows of that class, or use GaussianNB, whose "
        "prior covers a feature never observed."
    )


def per_feature(fit_one, stats: dict) -> np.ndarray:
    """Stack ``fit_one(stats_j)`` -> (K, 1) over the features, (K, d)."""
    return np.concatenate([fit_one(feature_stats(stats, j))
                           for j in range(stats["X"].shape[1])], axis=1)


def stats_loglik(family, params: dict, stats: dict):
    """The weighted LOO log-likelihood of training points with missing entries (PyTensor
    scalar): the sum over features j of the complete-case objective of feature j alone on
    the points observed in it (:func:`feature_stats`), since LOO_kj involves feature j
    only. ``method="mcmc"`` samples it; it equals the ``mle``/``map`` objective."""
    from bayesgen.families.kernel import pymc

    h = params["bandwidth"]
    return sum(pymc.stats_loglik(family, {"bandwidth": h[:, j:j + 1]},
                                         feature_stats(stats, j))
               for j in range(stats["X"].shape[1]))


def train_log_lik(X: np.ndarray, y: np.ndarray, params: dict) -> np.ndarray:
    """Each training row's LOO term (..., n) when points have missing entries: per
    feature j, the complete-case term of the rows and points observed in j
    (:func:`bayesgen.families.kernel.pymc.train_log_lik` on that one feature), summed
    over the features a row observes; a row with nothing observed gets 0."""
    from bayesgen.families.kernel import pymc
    from bayesgen.families.kernel.kde import _fixed

    P, cls, w = _fixed(params)
    row = np.asarray(params["point_row"]).reshape(-1, P.shape[0])[0].astype(np.intp)
    h = np.asarray(params["bandwidth"], dtype=np.float64)
    y = np.asarray(y, dtype=np.intp)
    out = np.zeros((*h.shape[:-2], X.shape[0]))
    for j in range(X.shape[1]):
        rows = np.flatnonzero(~np.isnan(X[:, j]))
        pts = np.flatnonzero(~np.isnan(P[:, j]))
        position = np.full(X.shape[0], -1)
        position[rows] = np.arange(rows.size)
        sub = {"points": P[pts][:, j:j + 1], "point_class": cls[pts],
               "point_weight": w[pts], "point_row": position[row[pts]],
               "bandwidth": h[..., j:j + 1]}
        out[..., rows] += pymc.train_log_lik(X[rows][:, j:j + 1], y[rows], sub)
    return out
