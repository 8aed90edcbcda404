"""The training rows that a capability needs after ``fit``: kept, given, or an error.

A fitted estimator holds what the fit produced (parameters, sufficient statistics, the
posterior), not its training X. A few capabilities are about the training rows
themselves and need them again:

========================================  ===========================================
capability                                 how to pass the rows
========================================  ===========================================
``model_`` (PyMC model, observed rows)     ``build_model(X, y)``
``sample_prior_predictive``                ``sample_prior_predictive(X=X, y=y)``
``sample_posterior_predictive`` and the    ``sample_posterior_predictive(X=X, y=y)``,
posterior predictive checks                ``ppc_pvalues(est, X=X, y=y)``, ...
``add_log_likelihood``                     ``add_log_likelihood(X, y)``
exact LOO of conjugate fits                ``bg.compare(models, X=X, y=y)``
``log_marginal_likelihood`` with count     ``log_marginal_likelihood(X, y)``
features (the multinomial coefficient,
log x! of MultinomialNB, PoissonNB)
========================================  ===========================================

Where the rows come from, in this order:

1. **Given** (``X``, ``y`` and, for a weighted fit, ``sample_weight``): read as at fit
   (DataFrame columns, labels encoded against ``classes_``, the family's support
   checks; rows whose label is missing, i.e. unlabelled, are left out as fit leaves
   them out of the labelled likelihood). Where the result is about the training data
   (log-likelihood, LOO, evidence, posterior predictive replicates) the rows must be
   the training rows: their weighted class counts must equal ``class_count_``, else
   ``ValueError`` (not checked after a semi-supervised fit, whose counts include the
   unlabelled rows' responsibilities).
2. **Kept**: a posterior fit (``method_`` "conjugate" or "mcmc") by ``fit(X, y)`` keeps
   its rows where ArviZ needs them, the ``observed_data`` group of ``idata_`` (and the
   weights of a weighted fit in ``constant_data``, ``sample_weight``), always, at every
   n (the pointwise log-likelihood has its own bound, :mod:`bayesgen.inference.loglik`).
   Point fits and fits from statistics alone (``partial_fit``, ``bayesgen.merge``, Dask
   input) keep none.
3. Neither: a ``ValueError`` that says what to pass (:func:`missing_message`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from bayesgen.data.validation import POSTERIOR_METHODS


@dataclass
class Rows:
    """Training rows as the fit read them.

    Attributes
    ----------
    X : ndarray or sparse matrix (n, d)
        Validated rows in the units of X (after the family's support checks; NaN is a
        missing entry).
    y : ndarray (n,) of int
        Class index of every row, into ``classes_``.
    weights : ndarray (n,)
        Sample weights (ones for an unweighted fit).
    kept : bool
        True when the rows are those the estimator kept (``idata_.observed_data``).
    """

    X: Any
    y: np.ndarray
    weights: np.ndarray
    kept: bool = False


def missing_message(estimator, what: str, how: str) -> str:
    """The ``ValueError`` message of a capability ``what`` whose rows are not at hand,
    saying how to pass them (``how``, e.g. ``"add_log_likelihood(X, y)"``)."""
    who = type(estimator).__name__
    method = getattr(estimator, "method_", None)
    if method in POSTERIOR_METHODS:
        reason = (
            "a posterior fit keeps them in idata_.observed_data only when fitted by "
            "fit(X, y), not from statistics (partial_fit, bayesgen.merge, Dask input)"
        )
    else:
        reason = (f"a point fit (method_={method!r}) keeps its parameters and statistics, "
                  "not its rows")
    return (
        f"{who}: {what} needs the training rows, which this fitted model does not keep "
        f"({reason}). Pass them: {how}, with the X and y (and sample_weight, if any) it "
        "was fitted on."
    )


def kept(estimator) -> Rows | None:
    """The rows kept in ``idata_`` (``observed_data``, ``constant_data``) of a posterior
    fit, or None."""
    if getattr(estimator, "method_", None) not in POSTERIOR_METHODS:
        return None  # a point fit's idata_ (prior predictive) holds no training rows
    idata = getattr(estimator, "idata_", None)
    if idata is None or "observed_data" not in idata.groups():
        return None
    obs = idata.observed_data
    if "y" not in obs:
        return None
    y = np.asarray(obs["y"].values, dtype=np.intp)
    if "x" in obs:
        X = np.asarray(obs["x"].transpose("obs", "feature").values, dtype=np.float64)
    elif "x_data" in obs:  # large sparse X: its COO triplets (bayesgen.data.sparse)
        from scipy import sparse

        X = sparse.csr_array(
            (obs["x_data"].values, (obs["x_row"].values, obs["x_col"].values)),
            shape=(y.shape[0], estimator.n_features_in_),
        )
    else:
        return None
    weights = np.ones(y.shape[0])
    if "constant_data" in idata.groups() and "sample_weight" in idata.constant_data:
        weights = np.asarray(idata.constant_data["sample_weight"].values, dtype=np.float64)
    return Rows(X, y, weights, kept=True)


def training_rows(estimator, X: Any = None, y: Any = None, sample_weight: Any = None, *,
                  what: str, how: str, check: bool = True) -> Rows:
    """The training rows for capability ``what``: given (``X`` and ``y``), else kept,
    else ``ValueError`` naming ``how`` to pass them (see the module docstring).

    Parameters
    ----------
    estimator : fitted bayesgen estimator
    X : array-like, sparse matrix or DataFrame of shape (n, d), optional
    y : array-like of shape (n,), optional
        Both or neither.
    sample_weight : array-like of shape (n,), optional
        The weights of a weighted fit (only with ``X`` and ``y``).
    what, how : str
        The capability and the call that passes the rows, for the error messages.
    check : bool
        Require given rows to be the training rows (weighted class counts equal to
        ``class_count_``).

    Returns
    -------
    Rows
    """
    if X is None and y is None:
        if sample_weight is not None:
            raise ValueError(f"{what}: sample_weight is given without X and y; pass all three.")
        rows = kept(estimator)
        if rows is None:
            raise ValueError(missing_message(estimator, what, how))
        return rows
    if X is None or y is None:
        raise ValueError(f"{what}: pass both X and y (the training rows), or neither.")
    from bayesgen.inference import statistics

    X, y_index, weights = statistics.read_rows(estimator, X, y, sample_weight)
    rows = Rows(X, y_index, weights)
    if check and not getattr(estimator, "n_unlabeled_", 0):
        _check_training(estimator, rows, what)
    return rows


def _check_training(estimator, rows: Rows, what: str) -> None:
    """``ValueError`` unless the rows' weighted class counts are ``class_count_``
    (relative counts for ``method_="mle"``, whose fit may rescale huge weights)."""
    counts = np.bincount(rows.y, weights=rows.weights, minlength=estimator.classes_.size)
    expected = np.asarray(estimator.class_count_, dtype=np.float64)
    if estimator.method_ == "mle" and counts.sum() > 0 and expected.sum() > 0:
        counts, expected = counts / counts.sum(), expected / expected.sum()
    if counts.shape != expected.shape or not np.allclose(counts, expected, rtol=1e-9,
                                                          atol=1e-12 * expected.sum()):
        raise ValueError(
            f"{type(estimator).__name__}: {what} needs the training rows, but the rows "
            f"given are not those the model was fitted on: their weighted class counts "
            f"{np.round(counts, 6).tolist()} differ from class_count_ "
            f"{np.round(expected, 6).tolist()}. Pass the X, y (and sample_weight) of the fit."
        )


def observed_groups(estimator, rows: Rows):
    """``arviz.InferenceData`` with ``observed_data`` (``y`` (obs), ``x`` (obs, feature)
    or the COO triplets of a large sparse X, and the per-class rows ``x_class_<label>``
    of :mod:`bayesgen.inference.class_layout`) and, for non-unit weights,
    ``constant_data`` (``sample_weight`` (obs))."""
    from bayesgen.data.sparse import observed_x
    from bayesgen.inference import class_layout
    from bayesgen.utils.heavy import import_arviz

    az = import_arviz()
    n = rows.y.shape[0]
    x_vars, x_dims = observed_x(rows.X)  # sparse X: densified only when small
    per_class, class_dims, class_coords = class_layout.observed(rows.X, rows.y,
                                                                estimator.classes_)
    constant = None
    if not np.all(rows.weights == 1.0):
        constant = {"sample_weight": np.asarray(rows.weights, dtype=np.float64)}
    return az.from_dict(
        observed_data={"y": rows.y.astype(np.int64), **x_vars, **per_class},
        constant_data=constant,
        coords={"obs": np.arange(n), "feature": np.asarray(estimator._feature_names()),
                **class_coords},
        dims={"y": ["obs"], "sample_weight": ["obs"], **x_dims, **class_dims},
    )


def keep(estimator, rows: Rows) -> None:
    """Add the rows to ``estimator.idata_`` (``observed_data``, and ``constant_data``
    for non-unit weights) where it has no ``observed_data`` yet."""
    idata = estimator.idata_
    if "observed_data" in idata.groups():
        return
    idata.extend(observed_groups(estimator, rows))


def keep_weights(estimator, weights: np.ndarray) -> None:
    """After ``fit``: the weights of the kept rows (``constant_data``), if not all 1."""
    idata = getattr(estimator, "idata_", None)
    if (idata is None or "observed_data" not in idata.groups()
            or np.all(weights == 1.0) or "constant_data" in idata.groups()):
        return
    if idata.observed_data.sizes.get("obs") != weights.shape[0]:
        return
    import xarray as xr

    idata.add_groups(constant_data=xr.Dataset(
        {"sample_weight": (("obs",), np.asarray(weights, dtype=np.float64))},
        coords={"obs": idata.observed_data["obs"].values}))
