"""Decision regions of a 2-feature classifier (:func:`bayesgen.plots.decision_regions`)."""

from __future__ import annotations

from typing import Any

import numpy as np
from matplotlib.colors import BoundaryNorm, ListedColormap
from matplotlib.lines import Line2D
from sklearn.utils.validation import check_is_fitted

from bayesgen.plots.common import (
    _LINE_COLORS,
    _axes,
    _class_colors,
    _feature_labels,
    _is_posterior,
    _name,
)

_GRID_CHUNK = 2000  # grid points per predict_proba_draws call (bounds memory)


def _hdi_width(samples: np.ndarray, hdi_prob: float) -> np.ndarray:
    """Width of the narrowest interval holding ``hdi_prob`` of the samples along axis 0.

    Sorted samples s_(1..S); with m = floor(hdi_prob * S), the width is
    min_i (s_(i+m) - s_(i)) (the same rule as ``arviz.hdi`` for unimodal samples).
    """
    s = np.sort(samples, axis=0)
    m = int(np.floor(hdi_prob * s.shape[0]))
    return np.min(s[m:] - s[: s.shape[0] - m], axis=0)


def _grid(X: np.ndarray, resolution: int):
    lo, hi = X.min(axis=0), X.max(axis=0)
    pad = 0.05 * np.where(hi > lo, hi - lo, 1.0)
    xs = np.linspace(lo[0] - pad[0], hi[0] + pad[0], resolution)
    ys = np.linspace(lo[1] - pad[1], hi[1] + pad[1], resolution)
    xx, yy = np.meshgrid(xs, ys)
    return xx, yy, np.column_stack([xx.ravel(), yy.ravel()])


def _probability_levels(values: np.ndarray) -> np.ndarray:
    """Contour levels for a quantity in [0, 1] (a probability or an HDI width of one).

    From the data's range rounded outwards to tenths and clipped to [0, 1], in steps of
    0.1 (0.05 when the range is at most 0.4), so that the colour bar never leaves [0, 1]
    (``contourf(levels=8)`` picks "nice" levels such as 1.05) and reads in round numbers.
    """
    lo = max(0.0, np.floor(np.nanmin(values) * 10) / 10)
    hi = min(1.0, np.ceil(np.nanmax(values) * 10) / 10)
    if hi - lo < 0.1:
        lo, hi = (hi - 0.1, hi) if hi >= 0.1 else (0.0, 0.1)
    step = 0.1 if hi - lo > 0.4 else 0.05
    return np.round(np.linspace(lo, hi, round(float(hi - lo) / step) + 1), 10)


def _uncertainty(estimator, grid: np.ndarray, hdi_prob: float = 0.94):
    """Predicted class index and its uncertainty at every grid point.

    Posterior methods: width of the ``hdi_prob`` HDI of p(y=k_hat | x, theta) over the
    posterior draws, k_hat = argmax of the posterior predictive. Point methods: max_k p.
    """
    proba = estimator.predict_proba(grid)
    idx = np.argmax(proba, axis=1)
    if not _is_posterior(estimator):
        return idx, proba.max(axis=1)
    width = np.empty(len(grid))
    for start in range(0, len(grid), _GRID_CHUNK):
        sl = slice(start, start + _GRID_CHUNK)
        draws = estimator.predict_proba_draws(grid[sl]).values  # (chain, draw, obs, class)
        draws = draws.reshape(-1, *draws.shape[2:])
        picked = np.take_along_axis(draws, idx[sl][None, :, None], axis=2)[..., 0]
        width[sl] = _hdi_width(picked, hdi_prob)
    return idx, width


def decision_regions(estimator, X: Any, y: Any, *, resolution: int = 200, ax=None,
                     compare: Any = None):
    """Predicted class regions of a 2-feature classifier, shaded by uncertainty.

    Parameters
    ----------
    estimator : fitted bayesgen classifier with ``n_features_in_ == 2``
    X : array-like (n, 2)
        Training points, drawn on top (their range sets the plotted window).
    y : array-like (n,)
        Their labels (values of ``estimator.classes_``).
    resolution : int, default 200
        Grid points per axis.
    ax : matplotlib Axes, optional
    compare : list or dict of fitted estimators, optional
        Their decision boundaries (edges of their predicted-class regions) are overlaid
        as labeled lines, e.g. ``[fitted_mle, fitted_map]`` or ``{"MLE": m, "MAP": m2}``.

    Returns
    -------
    matplotlib Axes

    Notes
    -----
    The grey overlay (with colour bar) is, for posterior methods, the width of the 94% HDI
    of p(y = k_hat | x, theta) over the posterior draws, k_hat the predicted class (dark =
    uncertain); for point methods it is max_k p(y=k | x) (dark = low confidence).
    """
    check_is_fitted(estimator, "classes_")
    X = np.asarray(X, dtype=float)
    y = np.asarray(y)
    if X.ndim != 2 or X.shape[1] != 2 or estimator.n_features_in_ != 2:
        raise ValueError(
            f"decision_regions needs 2-feature data and a model fitted on 2 features; got X of "
            f"shape {X.shape} and a model with {estimator.n_features_in_} features. Select two "
            "columns (e.g. X[:, [0, 1]]) and refit on them."
        )
    if y.shape != (X.shape[0],):
        raise ValueError(f"y must have shape ({X.shape[0]},) to match X; got {y.shape}.")
    if resolution < 2:
        raise ValueError(f"resolution must be an integer >= 2; got {resolution!r}.")
    ax = _axes(ax)
    classes = estimator.classes_
    colors = _class_colors(len(classes))
    xx, yy, grid = _grid(X, int(resolution))
    idx, unc = _uncertainty(estimator, grid)
    cmap = ListedColormap(colors)
    norm = BoundaryNorm(np.arange(len(classes) + 1) - 0.5, cmap.N)
    ax.pcolormesh(xx, yy, idx.reshape(xx.shape), cmap=cmap, norm=norm, alpha=0.35,
                  shading="auto", rasterized=True)
    levels = _probability_levels(unc)
    if _is_posterior(estimator):
        cmap_unc, label = "Greys", "94% HDI width of p(predicted class | x)"
    else:
        cmap_unc, label = "Greys_r", "max$_k$ p(y=k | x)"
    mesh = ax.contourf(xx, yy, unc.reshape(xx.shape), levels=levels, cmap=cmap_unc, alpha=0.35)
    ax.figure.colorbar(mesh, ax=ax, label=label)
    handles = []
    for k, cls in enumerate(classes):
        sel = y == cls
        ax.scatter(X[sel, 0], X[sel, 1], color=colors[k], edgecolor="black", s=22, linewidth=0.6)
        handles.append(Line2D([], [], marker="o", ls="", color=colors[k], mec="black",
                              label=f"class {cls}"))
    if compare is not None:
        items = compare.items() if isinstance(compare, dict) else [(_name(m), m) for m in compare]
        styles = ["--", ":", "-.", (0, (5, 1, 1, 1))]
        for i, (label_i, other) in enumerate(items):
            pred = np.searchsorted(classes, other.predict(grid)).reshape(xx.shape)
            color, ls = _LINE_COLORS[i % 4], styles[i % 4]
            for k in range(len(classes)):
                ax.contour(xx, yy, (pred == k).astype(float), levels=[0.5], colors=[color],
                           linestyles=[ls], linewidths=1.6)
            handles.append(Line2D([], [], color=color, ls=ls, label=f"boundary: {label_i}"))
    names = _feature_labels(estimator, 2)
    ax.set(xlabel=names[0], ylabel=names[1], title=f"Decision regions: {_name(estimator)}")
    ax.legend(handles=handles, loc="best", fontsize="small", framealpha=0.8)
    return ax
