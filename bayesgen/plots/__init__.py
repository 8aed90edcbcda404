"""Plots of fitted bayesgen classifiers (matplotlib only).

Every function takes ``ax=None`` (a new figure is made when ``None``) and returns the
axes it drew on, with a title, axis labels and a legend so that a picture reads on its
own. Posterior uncertainty is shown for ``method="conjugate"`` and ``"mcmc"`` fits.

- :func:`decision_regions`: class regions of a 2-feature model, shaded by uncertainty.
- :func:`probability_ellipses`: probability ellipses of Gaussian class densities.
- :func:`reliability_diagram` (and :func:`calibration_table`): calibration curves and ECE.
- :func:`risk_coverage` (and :func:`risk_coverage_curve`): selective classification,
  the error of the answered rows against the fraction answered.
- :func:`probability_forest`: posterior mean and HDI of p(y=k | x) for chosen points.
- :func:`shrinkage`: MLE vs MAP / posterior-mean parameters of discrete families.
- :func:`trace`, :func:`rank`: ``az.plot_trace`` / ``az.plot_rank`` of the parameters.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from matplotlib.collections import LineCollection
from matplotlib.lines import Line2D
from sklearn.utils.validation import check_is_fitted

from bayesgen.inference import classprior, posterior
from bayesgen.plots.calibration import calibration_table
from bayesgen.plots.common import (
    _axes,
    _class_colors,
    _feature_labels,
    _is_posterior,
    _name,
)
from bayesgen.plots.regions import _hdi_width, _uncertainty, decision_regions  # noqa: F401
from bayesgen.plots.risk_coverage import risk_coverage, risk_coverage_curve
from bayesgen.utils.heavy import import_arviz

__all__ = [
    "calibration_table",
    "decision_regions",
    "probability_ellipses",
    "probability_forest",
    "rank",
    "reliability_diagram",
    "risk_coverage",
    "risk_coverage_curve",
    "shrinkage",
    "trace",
]


def _gaussian_params(estimator, features: list[int]):
    """(means (K, 2), covs (K, 2, 2), draws or None); draws = (mu (S, K, 2), cov (S, K, 2, 2))."""
    f = np.asarray(features)
    K = len(estimator.classes_)
    if hasattr(estimator, "covariance_"):
        cov = np.asarray(estimator.covariance_, dtype=float)
        cov = np.broadcast_to(cov, (K, *cov.shape[-2:]))[:, f[:, None], f]
        mean = np.asarray(estimator.means_)[:, f]
    elif hasattr(estimator, "var_"):
        mean = np.asarray(estimator.theta_)[:, f]
        cov = np.einsum("kj,jl->kjl", np.asarray(estimator.var_)[:, f], np.eye(2))
    else:
        raise ValueError(
            f"probability_ellipses needs a Gaussian classifier (QDA, LDA or GaussianNB); "
            f"got {type(estimator).__name__}."
        )
    if not _is_posterior(estimator):
        return mean, cov, None
    post = estimator.idata_.posterior

    def draws(name: str) -> np.ndarray:  # (S, ...): chains and draws stacked
        return post[name].stack(sample=("chain", "draw")).transpose("sample", ...).values

    mu_d = draws("mu")[:, :, f]
    if "cov" in post:
        c = draws("cov")[..., f[:, None], f]
        cov_d = np.broadcast_to(c if c.ndim == 4 else c[:, None], (*mu_d.shape, 2))
    else:
        cov_d = np.einsum("skj,jl->skjl", draws("var")[:, :, f], np.eye(2))
    return mean, cov, (mu_d, cov_d)


def _ellipse_xy(mean: np.ndarray, cov: np.ndarray, level: float, n: int = 72) -> np.ndarray:
    """Points of {x : (x - m)^T Sigma^-1 (x - m) = chi2_2.ppf(level)} = m + r L u(t),
    Sigma = L L^T (Cholesky), r^2 = -2 log(1 - level); shapes (..., 2), (..., 2, 2) ->
    (..., n, 2)."""
    r = np.sqrt(-2.0 * np.log1p(-level))
    t = np.linspace(0, 2 * np.pi, n)
    circle = np.stack([np.cos(t), np.sin(t)], axis=-1)  # (n, 2)
    L = np.linalg.cholesky(cov)
    return mean[..., None, :] + r * np.einsum("...ij,nj->...ni", L, circle)


def probability_ellipses(estimator, *, features: tuple[int, int] = (0, 1), level: float = 0.95,
                         n_draws: int = 30, ax=None):
    """``level`` probability ellipses of each class's Gaussian p(x | y=k) in two features.

    Parameters
    ----------
    estimator : fitted ``QDA``, ``LDA`` or ``GaussianNB`` (diagonal covariance: axis-aligned
        ellipses)
    features : pair of int, default (0, 1)
        Column positions of the two features.
    level : float in (0, 1), default 0.95
        Probability mass inside each ellipse (chi-square with 2 dof radius).
    n_draws : int, default 30
        Posterior methods: number of posterior draws (evenly spaced over chains and draws)
        whose ellipses are drawn thin and transparent around the posterior-mean ellipse.
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib Axes
    """
    check_is_fitted(estimator, "classes_")
    feats = [int(j) for j in features]
    d = estimator.n_features_in_
    if len(feats) != 2 or feats[0] == feats[1] or not all(0 <= j < d for j in feats):
        raise ValueError(f"features must be two distinct column positions in [0, {d}); "
                         f"got {features!r}.")
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1); got {level!r}.")
    ax = _axes(ax)
    mean, cov, draws = _gaussian_params(estimator, feats)
    colors = _class_colors(len(estimator.classes_))
    handles = []
    if draws is not None and n_draws > 0:
        mu_d, cov_d = draws
        pick = np.linspace(0, mu_d.shape[0] - 1, min(n_draws, mu_d.shape[0])).astype(int)
        cloud = _ellipse_xy(mu_d[pick], cov_d[pick], level)  # (s, K, n, 2)
        for k in range(len(colors)):
            ax.add_collection(LineCollection(cloud[:, k], colors=[colors[k]], linewidths=0.6,
                                             alpha=0.25))
        handles.append(Line2D([], [], color="grey", lw=0.6, alpha=0.5,
                              label=f"{len(pick)} posterior draws"))
    curves = _ellipse_xy(mean, cov, level)
    for k, cls in enumerate(estimator.classes_):
        ax.plot(curves[k, :, 0], curves[k, :, 1], color=colors[k], lw=2, label=f"class {cls}")
        ax.plot(*mean[k], marker="x", color=colors[k], ms=8, mew=2)
    ax.autoscale_view()
    names = _feature_labels(estimator, d)
    what = "posterior-mean" if draws is not None else "fitted"
    ax.set(xlabel=names[feats[0]], ylabel=names[feats[1]],
           title=f"{level:.0%} ellipses ({what}): {_name(estimator)}")
    ax.legend(handles=ax.get_legend_handles_labels()[0] + handles, fontsize="small")
    return ax


def reliability_diagram(y_true: Any, proba: Any, *, classes: Any = None, n_bins: int = 10,
                        show_counts: bool | None = None, ax=None):
    """Reliability (calibration) diagram, one-vs-rest pooled over classes.

    Parameters
    ----------
    y_true : array-like (n,)
    proba : array (n, K) or dict name -> array (n, K)
        Predicted probabilities (column order ``classes``); a dict compares methods.
    classes : array-like (K,), optional
        Labels of the columns; default ``np.unique(y_true)``.
    n_bins : int, default 10
    show_counts : bool or None, default None
        Label every point with its number of forecasts (``n=``). None: only when at
        most two methods are drawn (more labels overlap).
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib Axes
        Observed frequency vs mean predicted probability per bin, each point labeled
        with its number of forecasts if ``show_counts`` (``n=``: a point from a handful
        of forecasts says little), the diagonal, the expected calibration error (ECE, see
        :func:`calibration_table`) of each method in the legend, and the bin counts (log
        scale) as steps on a twin right axis.
    """
    sets = proba if isinstance(proba, dict) else {"model": proba}
    tables = {name: calibration_table(y_true, p, classes=classes, n_bins=n_bins)
              for name, p in sets.items()}
    show_counts = len(sets) <= 2 if show_counts is None else bool(show_counts)
    ax = _axes(ax)
    counts_ax = ax.twinx()
    edges = np.linspace(0.0, 1.0, int(n_bins) + 1)
    ax.plot([0, 1], [0, 1], ls="--", color="grey", label="perfect calibration")
    for i, (name, tab) in enumerate(tables.items()):
        ax.plot(tab["prob_pred"], tab["prob_true"], marker="o", color=f"C{i}",
                label=f"{name} (ECE = {tab['ece']:.3f})")
        labeled = zip(tab["prob_pred"], tab["prob_true"], tab["count"], strict=True)
        for x, y, n in labeled if show_counts else ():
            right = x > 0.85  # keep the label inside the panel
            ax.annotate(f"n={n}", (x, y), xytext=(-5 if right else 5, 4 - 10 * i),
                        textcoords="offset points", ha="right" if right else "left",
                        fontsize="x-small", color=f"C{i}")
        full = np.bincount(np.searchsorted(edges[1:-1], np.asarray(sets[name]).ravel()),
                           minlength=n_bins)
        counts_ax.stairs(full, edges, color=f"C{i}", alpha=0.35, lw=1.2)
    counts_ax.set_yscale("log")
    top = max(float(np.asarray(p).size) for p in sets.values())
    counts_ax.set_ylim(0.8, top**2.2)  # steps stay in the lower part of the panel
    counts_ax.set_ylabel("forecasts per bin (steps, log scale)")
    ax.set_zorder(counts_ax.get_zorder() + 1)
    ax.patch.set_visible(False)
    ax.set(xlim=(0, 1), ylim=(-0.02, 1.02), xlabel="predicted probability (one-vs-rest)",
           ylabel="observed frequency", title="Reliability diagram (classes pooled)")
    ax.legend(loc="upper left", fontsize="small")
    return ax


def probability_forest(estimator, X_points: Any, *, hdi_prob: float = 0.94, ax=None):
    """Posterior mean and ``hdi_prob`` HDI of p(y=k | x, theta) for a few points.

    One horizontal interval per (point, class), grouped by point and coloured by class.
    The dot is the posterior mean of p(y=k | x, theta) over the draws.

    Parameters
    ----------
    estimator : classifier fitted with ``method="conjugate"`` or ``"mcmc"``
    X_points : array-like (m, d) or (d,)
    hdi_prob : float in (0, 1), default 0.94
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib Axes
    """
    check_is_fitted(estimator, "classes_")
    posterior.check_posterior(estimator, "probability_forest")
    if not 0 < hdi_prob < 1:
        raise ValueError(f"hdi_prob must be in (0, 1); got {hdi_prob!r}.")
    X_points = np.asarray(X_points, dtype=float)
    X_points = X_points[None, :] if X_points.ndim == 1 else X_points
    # the HDI of az.hdi (predict_proba_interval)
    lower, upper = np.moveaxis(estimator.predict_proba_interval(X_points, hdi_prob).values,
                               -1, 0)
    mean = estimator.predict_proba_draws(X_points).mean(("chain", "draw")).values
    m, K = mean.shape
    colors = _class_colors(K)
    ax = _axes(ax)
    rows = np.arange(m)[:, None] * (K + 1) + np.arange(K)[None, :]
    for k, cls in enumerate(estimator.classes_):
        ax.hlines(rows[:, k], lower[:, k], upper[:, k], color=colors[k], lw=2.5,
                  label=f"class {cls}")
        ax.plot(mean[:, k], rows[:, k], "o", color=colors[k], mec="black", ms=5)
    labels = [f"point {i}" + (f"\n({', '.join(f'{v:.3g}' for v in x)})" if x.size <= 4 else "")
              for i, x in enumerate(X_points)]
    ax.set_yticks(rows.mean(axis=1), labels, fontsize="small")
    ax.invert_yaxis()
    ax.set(xlim=(-0.02, 1.02), xlabel="p(y = k | x, θ)",
           title=f"Class probabilities: posterior mean and {hdi_prob:.0%} HDI")
    ax.legend(loc="best", fontsize="small")
    return ax


def shrinkage(estimators: dict, *, feature_indices: Any = None, ax=None):
    """MLE vs MAP / posterior-mean feature probabilities of Bernoulli / Multinomial models.

    Parameters
    ----------
    estimators : dict name -> fitted ``BernoulliNB`` or ``MultinomialNB``
        Exactly one must have ``method="mle"`` (the x axis); every other one is scattered
        against it (y axis): theta_kd = exp(``feature_log_prob_``), all classes.
    feature_indices : array-like of int, optional
        Features to plot (default all).
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib Axes
        With the identity line: points pulled off it show the prior's shrinkage, strongest
        where the counts (``feature_count_``) are small.
    """
    if not isinstance(estimators, dict) or len(estimators) < 2:
        raise ValueError("estimators must be a dict name -> fitted estimator with one "
                         "method='mle' fit and at least one other.")
    ref = [n for n, e in estimators.items() if getattr(e, "method_", None) == "mle"]
    if len(ref) != 1:
        raise ValueError(f"exactly one estimator must have method='mle' (the x axis); got "
                         f"{len(ref)}.")
    thetas = {}
    for name, est in estimators.items():
        check_is_fitted(est, "classes_")
        flp = getattr(est, "feature_log_prob_", None)
        if not isinstance(flp, np.ndarray) or flp.ndim != 2:
            raise ValueError(f"{name!r} has no 2-D feature_log_prob_: shrinkage needs "
                             "BernoulliNB or MultinomialNB fits.")
        thetas[name] = np.exp(flp)
    shapes = {t.shape for t in thetas.values()}
    if len(shapes) != 1:
        raise ValueError(f"all estimators must share classes and features; got shapes {shapes}.")
    cols = np.arange(next(iter(shapes))[1]) if feature_indices is None else np.asarray(
        feature_indices, dtype=int)
    x = thetas[ref[0]][:, cols].ravel()
    ax = _axes(ax)
    for i, (name, t) in enumerate((n, t) for n, t in thetas.items() if n != ref[0]):
        ax.scatter(x, t[:, cols].ravel(), s=14, alpha=0.6, color=f"C{i}", label=name,
                   marker="os^vD"[i % 5])
    hi = max(x.max(), *(t[:, cols].max() for t in thetas.values())) * 1.03
    ax.plot([0, hi], [0, hi], ls="--", color="grey", label="identity (no shrinkage)")
    ax.set(xlim=(0, hi), ylim=(0, hi), xlabel=rf"$\theta_{{kd}}$ of {ref[0]!r} (method='mle')",
           ylabel=r"$\theta_{kd}$ of the other estimators",
           title=f"Shrinkage of feature probabilities: {type(estimators[ref[0]]).__name__}")
    ax.set_aspect("equal")
    ax.legend(loc="upper left", fontsize="small")
    return ax


def _arviz_plot(fn_name: str, estimator, var_names, **kwargs):
    az = import_arviz()

    check_is_fitted(estimator, "classes_")
    posterior.check_posterior(estimator, fn_name)
    names = (classprior.var_names(estimator.fitted_) if var_names is None
             else var_names)  # pi if random
    with warnings.catch_warnings():  # ArviZ 0.23 internals vs matplotlib >= 3.11
        warnings.filterwarnings("ignore", message=".*alias_mapping to normalize_kwargs")
        axes = getattr(az, fn_name)(estimator.idata_, var_names=names, **kwargs)
    if kwargs.get("ax") is None:  # a new figure: lay it out so titles and ticks do not clash
        np.ravel(axes)[0].figure.set_layout_engine("constrained")
    return axes


def trace(estimator, var_names: list[str] | None = None, **kwargs: Any):
    """``az.plot_trace`` of the posterior (default variables ``["pi", *param_dims]``).

    Keyword arguments go to ArviZ. With the default ``legend=True`` every density panel
    has a legend of its coordinates (colours: class, feature) and the first trace panel
    one of the chains (line styles). Returns the ndarray of axes.
    """
    kwargs.setdefault("legend", True)
    axes = _arviz_plot("plot_trace", estimator, var_names, **kwargs)
    for ax in np.ravel(axes):
        legend = ax.get_legend()
        if legend is not None:  # ArviZ's legends are large enough to hide the curves
            handles = [Line2D([], [], color=h.get_color(), ls=h.get_linestyle())
                       for h in legend.legend_handles]
            ax.legend(handles, [t.get_text() for t in legend.get_texts()],
                      title=legend.get_title().get_text(), fontsize="x-small",
                      title_fontsize="x-small", framealpha=0.7, loc="best",
                      ncols=2 if len(handles) > 4 else 1)
    return axes


def rank(estimator, var_names: list[str] | None = None, **kwargs: Any):
    """``az.plot_rank`` of the posterior (default variables ``["pi", *param_dims]``);
    keyword arguments go to ArviZ. Returns the ndarray of axes."""
    return _arviz_plot("plot_rank", estimator, var_names, **kwargs)
