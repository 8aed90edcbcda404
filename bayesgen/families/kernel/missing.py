"""KernelNB with missing entries (NaN in the training points or the rows scored).

The KDE of class k and feature j is built from the points of class k observed in
feature j (weights W_kj), and a missing x_j of a scored row drops its factor
(:func:`.kde.log_lik`). The leave-one-out objective of (k, j) involves feature j alone,
so :func:`per_feature` fits one feature at a time on its observed points (exactly the
complete-case fit of that feature; Silverman's floor for a zero spread uses that
feature's sd alone).
``method="mcmc"`` sums the complete-case PyTensor likelihood over features
(:func:`stats_loglik`); ``idata_``'s pointwise terms drop the missing factors
(:func:`bayesgen.families.kernel.pymc.train_log_lik`)."""

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
