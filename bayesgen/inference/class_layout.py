"""The per-class layout of ``idata_``'s observed and predictive groups, for ArviZ's plots.

For every class k with training rows: ``x_class_<label>`` (dims ``obs_class_<label>``,
``feature``) in ``observed_data`` holds the rows of class k, and the same variable in
``posterior_predictive`` / ``prior_predictive`` (dims ``chain, draw, obs_class_<label>,
feature``) one x ~ p(x | y = k, theta_s) per draw and row, conditional on the observed
label. ``az.plot_ppc(idata, var_names=["x_class_<label>"], flatten=["obs_class_<label>"])``
then draws one panel per feature of that class. ``<label>`` is ``str(label)`` with every
character other than a letter, digit or underscore replaced by ``_`` (``_<class index>``
appended on collisions). Whole-number variables are int64 (histograms); NaN entries stay
NaN in the replicates. Written for dense X with at most :data:`MAX_FEATURES` features.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

import numpy as np

#: prefix of the per-class feature variables
VAR_PREFIX = "x_class_"
#: prefix of their row dims
DIM_PREFIX = "obs_class_"
#: widest X (features) that gets the per-class layout
MAX_FEATURES = 1_000


def safe_labels(classes: Any) -> list[str]:
    """``str(label)`` per class, every character outside ``[A-Za-z0-9_]`` replaced by
    ``_``; colliding results get ``_<class index>`` appended (unique for any labels)."""
    names = [re.sub(r"[^A-Za-z0-9_]", "_", str(c)) for c in classes]
    counts = Counter(names)
    return [f"{name}_{k}" if counts[name] > 1 else name for k, name in enumerate(names)]


def names(classes: Any) -> list[tuple[str, str]]:
    """``(variable, row dim)`` of every class, in the order of ``classes``."""
    return [(VAR_PREFIX + s, DIM_PREFIX + s) for s in safe_labels(classes)]


def applies(X: Any) -> bool:
    """Whether rows ``X`` (n, d) get the per-class layout: dense, at most
    :data:`MAX_FEATURES` features."""
    from bayesgen.data.sparse import is_sparse

    return not is_sparse(X) and X.shape[1] <= MAX_FEATURES


def as_stored(values: np.ndarray) -> np.ndarray:
    """``values`` as int64 when every one is a whole number (no NaN), else float64."""
    values = np.asarray(values)
    if values.dtype.kind in "iub":
        return values.astype(np.int64)
    values = values.astype(np.float64, copy=False)
    if values.size and np.all(np.isfinite(values)) and np.array_equal(values, np.round(values)):
        if np.abs(values).max() < 2.0**53:
            return values.astype(np.int64)
    return values


def observed(X: Any, y: np.ndarray, classes: Any) -> tuple[dict, dict, dict]:
    """Variables, dims and coords of the observed per-class layout (empty when it does
    not apply, :func:`applies`).

    Parameters
    ----------
    X : ndarray (n, d)
        Training rows (NaN: missing).
    y : ndarray (n,) of int
        Class index of every row.
    classes : array-like (K,)

    Returns
    -------
    values : dict
        ``x_class_<label>`` -> (n_k, d) array, for the classes with rows.
    dims : dict
        ``x_class_<label>`` -> ``["obs_class_<label>", "feature"]``.
    coords : dict
        ``obs_class_<label>`` -> positions of the class's rows in ``obs`` (n_k,).
    """
    if not applies(X):
        return {}, {}, {}
    X = np.asarray(X)
    values, dims, coords = {}, {}, {}
    for k, (var, dim) in enumerate(names(classes)):
        rows = np.flatnonzero(y == k)
        if rows.size == 0:
            continue
        values[var] = as_stored(X[rows])
        dims[var] = [dim, "feature"]
        coords[dim] = rows
    return values, dims, coords


def present(observed_data: Any, classes: Any) -> list[tuple[int, str, str]]:
    """``(class index, variable, row dim)`` of the per-class variables in the
    ``observed_data`` dataset (none for rows kept without the layout)."""
    if observed_data is None:
        return []
    return [(k, var, dim) for k, (var, dim) in enumerate(names(classes))
            if var in observed_data and dim in observed_data[var].dims]


def replicated(x_rep: np.ndarray, y: np.ndarray, X: np.ndarray, layout: list,
               chains: int, draws: int) -> tuple[dict, dict]:
    """The predictive per-class variables from replicates conditional on the observed
    labels.

    Parameters
    ----------
    x_rep : ndarray (S, n, d)
        ``x_rep[s, i] ~ p(x | y = y[i], theta_s)``, S = chains x draws.
    y : ndarray (n,) of int
        Observed class index of every row.
    X : ndarray (n, d)
        The observed rows: their missing entries (NaN) are NaN in the replicates.
    layout : list of (class index, variable, row dim)
        :func:`present` of ``observed_data``.
    chains, draws : int

    Returns
    -------
    values : dict
        variable -> (chains, draws, n_k, d).
    dims : dict
        variable -> ``("chain", "draw", row dim, "feature")``.
    """
    gaps = np.isnan(np.asarray(X, dtype=np.float64))
    values, dims = {}, {}
    for k, var, dim in layout:
        rows = np.flatnonzero(y == k)
        block = x_rep[:, rows]
        if gaps[rows].any():
            block = np.where(gaps[rows][None], np.nan, block)
        values[var] = as_stored(block).reshape(chains, draws, rows.size, -1)
        dims[var] = ("chain", "draw", dim, "feature")
    return values, dims
