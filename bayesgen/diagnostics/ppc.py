"""Posterior predictive checks: the statistics and data of :mod:`bayesgen.diagnostics`
(:func:`ppc_pvalues`, :func:`class_frequency_ppc`, :func:`feature_ppc_data`), re-exported
there; the plots are in :mod:`bayesgen.diagnostics.ppc_plots`."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from bayesgen.data.missing import masked_stats
from bayesgen.exceptions import DataWarning, warn
from bayesgen.inference import posterior
from bayesgen.utils.heavy import import_arviz

#: statistics ``ppc_pvalues`` knows, besides the class frequency and correlations
STATISTICS = ("mean", "sd", "min", "max")
COLUMNS = [
    "class", "feature", "statistic", "observed", "replicated_mean", "p_value", "flagged",
    "n_draws",
]


# ------------------------------------------------------------------ data access
def _replicated(estimator, random_state: Any = None, X: Any = None, y: Any = None,
                sample_weight: Any = None):
    """Observed (x (n, d), y (n,)) and replicated (x (S, n, d), y (S, n)) data.

    Calls ``estimator.sample_posterior_predictive`` (with the training rows ``X``,
    ``y``, ``sample_weight`` when given) when ``idata_`` has no ``posterior_predictive``
    group yet (fit adds none), or one of fewer draws than the posterior (files saved
    by earlier versions): the checks use every posterior draw. Raises ``ValueError``
    for point methods.
    """
    if not isinstance(getattr(type(estimator), "fitted_", None), property):
        raise ValueError("posterior predictive checks need a fitted bayesgen estimator.")
    posterior.check_posterior(estimator, "posterior predictive checks")
    idata = estimator.idata_
    if "posterior_predictive" not in idata.groups() or _thinned(estimator):
        estimator.sample_posterior_predictive(random_state=random_state, X=X, y=y,
                                              sample_weight=sample_weight)
        idata = estimator.idata_
    obs, pp = idata.observed_data, idata.posterior_predictive
    x_obs = np.asarray(obs["x"].transpose("obs", "feature").values, dtype=float)
    y_obs = np.asarray(obs["y"].values, dtype=np.int64)
    x_rep = pp["x"].transpose("chain", "draw", "obs", "feature").values
    y_rep = pp["y"].transpose("chain", "draw", "obs").values
    n, d = x_obs.shape
    return x_obs, y_obs, x_rep.reshape(-1, n, d).astype(float), y_rep.reshape(-1, n)


def _thinned(estimator) -> bool:
    """Whether ``idata_.posterior_predictive`` replicates fewer draws than the posterior
    holds (the group of about 100 draws that fits of bayesgen 0.x before the groups were
    made consistent added at fit, in files they saved)."""
    sizes = estimator.idata_.posterior_predictive.sizes
    chains, draws = estimator.fitted_.posterior_size
    return sizes.get("chain", 0) * sizes.get("draw", 0) < chains * draws


def _class_index(estimator, klass: Any) -> int:
    matches = np.flatnonzero(np.asarray(estimator.classes_) == klass)
    if matches.size != 1:
        raise ValueError(
            f"klass={klass!r} is not one of the fitted classes {list(estimator.classes_)}."
        )
    return int(matches[0])


# ------------------------------------------------------------------ statistics
def _mid_p(t_rep: np.ndarray, t_obs: np.ndarray):
    """Mid-p values P(T_rep > T_obs) + P(T_rep = T_obs)/2 over the defined draws.

    ``t_rep`` (S, m), ``t_obs`` (m,). Returns (p (m,), replicated mean (m,), draws
    used (m,)); p is NaN where ``t_obs`` or every ``t_rep`` is undefined.
    """
    valid = ~np.isnan(t_rep)
    used = valid.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        greater = ((t_rep > t_obs) & valid).sum(axis=0)
        equal = ((t_rep == t_obs) & valid).sum(axis=0)
        p = (greater + 0.5 * equal) / used
        rep_mean = np.where(valid, t_rep, 0.0).sum(axis=0) / used
    p = np.where(np.isnan(t_obs) | (used == 0), np.nan, p)
    return p, rep_mean, used


def ppc_pvalues(
    estimator,
    stats: tuple[str, ...] = STATISTICS,
    correlation: bool | None = None,
    alpha: float = 0.05,
    random_state: Any = None,
    *,
    X: Any = None,
    y: Any = None,
    sample_weight: Any = None,
) -> pd.DataFrame:
    """Bayesian posterior predictive p-values per class and feature.

    For every posterior draw s and class k, the statistic T is computed on the
    replicated rows with ``y_rep[s] == k`` and on the observed rows with ``y == k``;
    ``p = P(T_rep > T_obs) + 0.5 P(T_rep = T_obs)`` over the draws (mid-p for ties).
    All draws are handled at once with boolean masks (a loop over classes only).
    Missing values: the statistics use the entries observed in the data only, in the
    data and in the (complete) replicates alike, i.e. the replicates are compared
    under the data's missingness pattern (ignorable missingness).

    Parameters
    ----------
    estimator : fitted bayesgen classifier with ``method="conjugate"`` or ``"mcmc"``
        Its ``idata_.posterior_predictive`` is used, and created with
        ``sample_posterior_predictive(random_state)`` when missing.
    stats : tuple of {"mean", "sd", "min", "max"}
        Per-feature statistics (sd uses the divisor n_k - 1).
    correlation : bool or None
        Add the Pearson correlation of every feature pair per class (statistic
        ``"corr(a,b)"``, feature ``"a,b"``). None: for the families that model correlations
        between features (``capabilities.correlated``: LDA, QDA).
    alpha : float, default=0.05
        Two-sided level: a row is ``flagged`` when ``p < alpha/2`` or ``p > 1 - alpha/2``.
    random_state : int or None
        Seed for ``sample_posterior_predictive`` when it has to be called.
    X : array-like or DataFrame of shape (n, d), optional
    y : array-like of shape (n,), optional
    sample_weight : array-like of shape (n,), optional
        The training rows, when the fit did not keep them and ``idata_`` has no
        ``posterior_predictive`` group yet (``sample_posterior_predictive(X=X, y=y)``).

    Returns
    -------
    pandas.DataFrame
        Columns ``class``, ``feature`` (``"-"`` for the class frequency), ``statistic``
        (``"frequency"``: number of rows of the class; then ``stats``; then
        correlations), ``observed``, ``replicated_mean``, ``p_value``, ``flagged``,
        ``n_draws`` (draws where T_rep is defined: e.g. sd needs two rows of the class).
        A statistic undefined on the observed data (sd of a one-row class, correlation
        with a constant feature) has p_value NaN, is never flagged and triggers a
        :class:`~bayesgen.exceptions.DataWarning`.

    Raises
    ------
    ValueError
        For point methods (``"mle"``, ``"map"``), unknown statistics or a bad ``alpha``.
    """
    unknown = sorted(set(stats) - set(STATISTICS))
    if unknown or isinstance(stats, str):
        raise ValueError(
            f"unknown statistics {unknown or stats!r}; choose a tuple from {STATISTICS}."
        )
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1); got {alpha!r}.")
    x_obs, y_obs, x_rep, y_rep = _replicated(estimator, random_state, X, y, sample_weight)
    seen = ~np.isnan(x_obs)  # missing values: statistics of the observed entries only
    seen = None if seen.all() else seen
    if correlation is None:
        correlation = estimator.fitted_.family.capabilities.correlated
    correlation = bool(correlation) and x_obs.shape[1] > 1
    names = estimator.fitted_.feature_names
    i, j = np.triu_indices(len(names), 1)
    pairs = [f"{names[a]},{names[b]}" for a, b in zip(i, j, strict=True)]
    rows = []
    for k, label in enumerate(estimator.classes_):
        rep = masked_stats(x_rep, y_rep == k, seen, tuple(stats), correlation)
        obs = masked_stats(x_obs[None], (y_obs == k)[None], seen, tuple(stats), correlation)
        order = ["frequency", *[s for s in STATISTICS if s in stats]]
        order += ["corr"] if correlation else []
        for stat in order:
            p, rep_mean, used = _mid_p(rep[stat], obs[stat][0])
            if stat == "frequency":
                features, labels = ["-"], ["frequency"]
            elif stat == "corr":
                features, labels = pairs, [f"corr({pair})" for pair in pairs]
            else:
                features, labels = names, [stat] * len(names)
            rows += [
                (label, f, s, o, m, pv, pv < alpha / 2 or pv > 1 - alpha / 2, int(u))
                for f, s, o, m, pv, u in zip(
                    features, labels, obs[stat][0], rep_mean, p, used, strict=True
                )
            ]
    table = pd.DataFrame(rows, columns=COLUMNS)
    if table["p_value"].isna().any():
        bad = table.loc[table["p_value"].isna(), ["class", "feature", "statistic"]]
        warn(
            "ppc_pvalues: some statistics are undefined on the data (p_value NaN), e.g. "
            f"{bad.iloc[0].to_dict()}: a class with fewer than two rows, or a constant "
            "feature in a correlation.",
            DataWarning,
        )
    return table


# ------------------------------------------------------------------ plot data
def class_frequency_ppc(estimator, random_state: Any = None, *, X: Any = None, y: Any = None,
                        sample_weight: Any = None):
    """Observed and replicated class frequencies (proportions of the rows).

    ``X``, ``y``, ``sample_weight``: the training rows, when the fit did not keep them
    (see :func:`ppc_pvalues`).

    Returns
    -------
    xarray.Dataset
        ``observed`` (class) and ``replicated`` (chain, draw, class), the fraction of
        rows of each class in the data and in every replicated data set; ``class``
        coordinate = ``classes_``.
    """
    import xarray as xr

    _, y_obs, _, y_rep = _replicated(estimator, random_state, X, y, sample_weight)
    n_classes = len(estimator.classes_)
    chains, draws = estimator.fitted_.posterior_size
    onehot = y_rep[..., None] == np.arange(n_classes)
    replicated = onehot.mean(axis=1).reshape(chains, draws, n_classes)
    observed = np.bincount(y_obs, minlength=n_classes) / y_obs.size
    return xr.Dataset(
        {
            "observed": (("class",), observed),
            "replicated": (("chain", "draw", "class"), replicated),
        },
        coords={"class": np.asarray(estimator.classes_), "chain": np.arange(chains),
                "draw": np.arange(draws)},
    )


def feature_ppc_data(estimator, klass: Any, random_state: Any = None, *, X: Any = None,
                     y: Any = None, sample_weight: Any = None):
    """Observed and replicated feature values of one class, for ``az.plot_ppc``.

    ``X``, ``y``, ``sample_weight``: the training rows, when the fit did not keep them
    (see :func:`ppc_pvalues`).

    Every replicated data set has its own number of rows of class k, while
    ``az.plot_ppc`` needs a rectangular array: each draw contributes its first m
    replicated rows of class k (rows are exchangeable within a draw, so these are
    i.i.d. from p(x | y = k, theta_s)), with m = the 5% quantile of the per-draw
    counts (at least 1); the draws with fewer rows (at most about 5%) are left out.

    Returns
    -------
    arviz.InferenceData
        ``observed_data`` with ``x`` (obs, feature): the rows with y = k;
        ``posterior_predictive`` with ``x`` (chain=1, draw, obs=m, feature).
    """
    az = import_arviz()

    x_obs, y_obs, x_rep, y_rep = _replicated(estimator, random_state, X, y, sample_weight)
    k = _class_index(estimator, klass)
    mask = y_rep == k
    counts = mask.sum(axis=1)
    m = max(1, int(np.floor(np.quantile(counts, 0.05))))
    keep = counts >= m
    if not keep.any():
        raise ValueError(f"no replicated data set has a row of class {klass!r}.")
    mask = mask[keep] & (np.cumsum(mask[keep], axis=1) <= m)
    rep = x_rep[keep][mask].reshape(1, int(keep.sum()), m, x_rep.shape[2])
    names = estimator.fitted_.feature_names
    return az.from_dict(
        observed_data={"x": x_obs[y_obs == k]},
        posterior_predictive={"x": rep},
        coords={"feature": names},
        dims={"x": ["obs", "feature"]},
    )
