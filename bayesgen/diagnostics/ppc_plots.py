"""Posterior predictive and LOO comparison plots (:func:`bayesgen.diagnostics.plot_ppc`,
:func:`bayesgen.diagnostics.plot_compare`), re-exported by :mod:`bayesgen.diagnostics`."""

from __future__ import annotations

from typing import Any

import numpy as np

from bayesgen.inference import posterior
from bayesgen.utils.heavy import import_arviz

#: features drawn per class by default: more panels than this in a row are unreadable
MAX_FEATURES = 6


def _select_features(names: list[str], var_names: Any, max_features: int | None):
    """(shown feature names, left-out names) for :func:`plot_ppc`."""
    if var_names is None:
        wanted = list(names)
    else:
        wanted = [var_names] if isinstance(var_names, str) else list(var_names)
        unknown = [v for v in wanted if str(v) not in names]
        if unknown or not wanted:
            raise ValueError(
                f"var_names must name features of the fitted model; unknown {unknown!r} "
                f"(features: {names})." if unknown else "var_names must not be empty."
            )
        wanted = list(dict.fromkeys(str(v) for v in wanted))
    if max_features is not None:
        if int(max_features) < 1:
            raise ValueError(f"max_features must be a positive integer or None; got "
                             f"{max_features!r}.")
        return wanted[: int(max_features)], wanted[int(max_features):]
    return wanted, []


def _left_out_note(left_out: list[str]) -> str:
    shown = ", ".join(left_out[:4]) + (", ..." if len(left_out) > 4 else "")
    return (f"{len(left_out)} more feature{'s' * (len(left_out) > 1)} not shown ({shown}): "
            "select them with var_names=[...] or raise max_features")


def plot_ppc(
    estimator,
    klass: Any = None,
    kind: str | None = None,
    ax: Any = None,
    num_pp_samples: int = 50,
    random_state: Any = None,
    var_names: Any = None,
    max_features: int | None = MAX_FEATURES,
    *,
    X: Any = None,
    y: Any = None,
    sample_weight: Any = None,
    **kwargs: Any,
):
    """``az.plot_ppc`` of the features, one row of panels per class, one column per feature.

    Parameters
    ----------
    estimator : fitted posterior bayesgen classifier
    klass : label or None
        One class (a label from ``classes_``), or None for all classes.
    kind : {"kde", "cumulative", "scatter"} or None
        None: ``"kde"`` for continuous families, ``"cumulative"`` (empirical CDFs) for
        discrete ones (Bernoulli, categorical, multinomial, Poisson) and ``MixedNB``.
    ax : array of matplotlib axes or None
        Shape (number of classes plotted, number of features plotted), or anything with
        that many axes. None: a new figure with constrained layout.
    num_pp_samples : int
        Replicated data sets drawn per panel.
    random_state : int or None
        Seed for ``sample_posterior_predictive`` (if needed) and the subsampling.
    var_names : str or list of str, optional
        Features to plot, by name (``feature_names_in_`` for DataFrames, else
        ``"x0"``, ``"x1"``, ...), in the order given. Default: all features.
    max_features : int or None, default 6
        At most this many of the selected features are drawn (the first ones), so that
        the panels stay legible; when some are left out, the figure says which (page
        through them with ``var_names``). None draws every selected feature.
    X : array-like or DataFrame of shape (n, d), optional
    y : array-like of shape (n,), optional
    sample_weight : array-like of shape (n,), optional
        The training rows, when the fit did not keep them and ``idata_`` has no
        ``posterior_predictive`` group yet (``sample_posterior_predictive(X=X, y=y)``).
    **kwargs
        Forwarded to ``az.plot_ppc``.

    Returns
    -------
    ndarray of matplotlib axes
        Shape (classes plotted, features plotted); each panel is titled with its class
        and labeled with its feature, the legend is on the first panel.
    """
    az = import_arviz()
    import matplotlib.pyplot as plt

    from bayesgen.diagnostics.ppc import _class_index, feature_ppc_data

    posterior.check_posterior(estimator, "plot_ppc")
    labels = list(estimator.classes_) if klass is None else [klass]
    for label in labels:
        _class_index(estimator, label)
    if kind is None:
        kind = "kde" if estimator.fitted_.family.capabilities.continuous else "cumulative"
    shown, left_out = _select_features(
        [str(n) for n in estimator.fitted_.feature_names], var_names, max_features
    )
    d = len(shown)
    if ax is None:
        fig, ax = plt.subplots(len(labels), d, figsize=(2.8 * d + 0.6, 2.3 * len(labels) + 0.6),
                               squeeze=False, layout="constrained")
        if left_out:
            fig.supxlabel(_left_out_note(left_out), fontsize="small", color="dimgrey")
    axes = np.asarray(ax, dtype=object).reshape(len(labels), d)
    seed = int(np.random.default_rng(random_state).integers(2**31))
    ylabel = {"kde": "density", "cumulative": "cumulative probability"}.get(kind, "")
    for row, label in enumerate(labels):
        data = feature_ppc_data(estimator, label, random_state, X=X, y=y,
                                sample_weight=sample_weight)
        data = data.sel(feature=shown)
        az.plot_ppc(
            data, kind=kind, var_names=["x"], flatten=["obs"], flatten_pp=["obs"],
            num_pp_samples=num_pp_samples, random_seed=seed, ax=axes[row],
            legend=row == 0, **kwargs,
        )
        for col, (panel, feature) in enumerate(zip(axes[row], shown, strict=True)):
            panel.set_title(f"class {label}", fontsize="medium")
            panel.set_xlabel(feature, fontsize="medium")  # ArviZ: "x" and the coordinate
            panel.set_ylabel(ylabel if col == 0 else "")
            panel.tick_params(labelsize="small")  # ArviZ's are larger than the labels
            legend = panel.get_legend()
            if legend is not None and (row, col) != (0, 0):
                legend.remove()
    first = axes[0, 0].get_legend()
    if first is not None:
        first.set(alpha=0.8)
        for text in first.get_texts():
            text.set_fontsize("small")
    return axes


def plot_compare(models: dict[str, Any], ax: Any = None, **kwargs: Any):
    """Compare fitted posterior estimators by PSIS-LOO and plot the ranking.

    ``bayesgen.diagnostics.compare(models)`` (``az.compare``), then ``az.plot_compare``.

    Parameters
    ----------
    models : dict
        ``{"name": fitted_estimator}`` (posterior methods, same training data).
    ax : matplotlib axes or None
        None: a new figure with constrained layout, so that ``savefig`` keeps the model
        names (tick labels) inside the picture.
    **kwargs
        Forwarded to ``az.plot_compare`` (``figsize`` sizes the new figure).

    Returns
    -------
    matplotlib axes
    """
    az = import_arviz()
    import matplotlib.pyplot as plt

    from bayesgen.diagnostics.compare import compare

    table = compare(models)
    if ax is None:
        figsize = kwargs.pop("figsize", (6.0, 1.6 + 0.55 * len(table)))
        _, ax = plt.subplots(figsize=figsize, layout="constrained")
    return az.plot_compare(table, ax=ax, **kwargs)
