"""Helpers shared by :mod:`bayesgen.plots` and its sub-modules (axes, names, colours)."""

from __future__ import annotations

import matplotlib.pyplot as plt

from bayesgen.data.validation import POSTERIOR_METHODS

_LINE_COLORS = ["black", "darkred", "navy", "darkgreen"]


def _axes(ax, figsize: tuple[float, float] = (6.4, 4.8)):
    """``ax``, or the axes of a new figure with constrained layout (so that ``savefig``
    keeps every label and colour bar inside the picture)."""
    if ax is None:
        _, ax = plt.subplots(figsize=figsize, layout="constrained")
    return ax


def _is_posterior(estimator) -> bool:
    return getattr(estimator, "method_", None) in POSTERIOR_METHODS


def _name(estimator) -> str:
    return f"{type(estimator).__name__}(method={estimator.method_!r})"


def _feature_labels(estimator, n_features: int) -> list[str]:
    names = getattr(estimator, "feature_names_in_", None)
    return [str(n) for n in names] if names is not None else [f"x{j}" for j in range(n_features)]


def _class_colors(n_classes: int) -> list:
    cmap = plt.get_cmap("tab10" if n_classes <= 10 else "tab20")
    return [cmap(k % cmap.N) for k in range(n_classes)]
