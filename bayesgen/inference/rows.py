"""The training rows that a capability needs after ``fit``: kept, given, or an error.

A fit holds statistics and the posterior, not its training X. ``model_``
(``build_model(X, y)``), ``sample_prior_predictive``, ``sample_posterior_predictive``
and the predictive checks, ``add_log_likelihood``, exact LOO (``bg.compare(models,
X=X, y=y)``) and the evidence of count features need the rows again. In this order:

1. **Given** (``X``, ``y``, ``sample_weight``): read as at fit (unlabeled rows left
   out). Where the result is about the training data, the weighted class counts and
   the family's statistics recomputed from the rows in the fit's frame must equal the
   fitted ones to rounding, in any row order (:func:`check_statistics`), else a
   ``ValueError`` naming the statistic and class; not checked after a semi-supervised
   fit, nor by ``build_model`` and ``sample_prior_predictive``.
2. **Kept**: a posterior fit by ``fit(X, y)`` keeps its rows in ``idata_``'s
   ``observed_data`` (weights in ``constant_data``); point fits and fits from statistics
   (``partial_fit``, ``bayesgen.merge``, Dask) keep none.
3. Neither: a ``ValueError`` that says what to pass (:func:`missing_message`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from bayesgen.data.validation import POSTERIOR_METHODS, label


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
        ``class_count_``, statistics equal to the fit's: :func:`check_statistics`).

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


#: Relative tolerance of :func:`check_statistics` (at most 1,100 rows; beyond,
#: ``4 n eps``, the bound of a sum of n terms in another order).
STATS_RTOL = 1e-12


def _check_training(estimator, rows: Rows, what: str) -> None:
    """``ValueError`` unless ``rows`` are the training rows: their weighted class counts
    are ``class_count_`` (relative counts for ``method_="mle"``, whose fit may rescale
    huge weights) and their sufficient statistics those of the fit
    (:func:`check_statistics`)."""
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
    check_statistics(estimator, rows, what)


def check_statistics(estimator, rows: Rows, what: str) -> None:
    """``ValueError`` unless the family's statistics of ``rows`` (in the fit's frame, by the
    code the fit uses) equal ``fitted_.stats`` to rounding, in any row order.

    An entry ``a`` passes against the fitted ``b`` when ``|a - b| <= rtol * scale`` with
    ``rtol = max(STATS_RTOL, 4 n eps)`` and ``scale`` the largest magnitude of that statistic
    within the class (or, where smaller, of the same statistic of the rows' absolute
    values); KernelNB's rows are compared as a sorted set. Missing entries must be missing
    in the same places. Not checked after a semi-supervised fit.

    Raises
    ------
    ValueError
        Naming the statistic that differs, and the class.
    """
    fit = estimator.fitted_
    fitted = fit.stats
    if fitted is None:
        return
    from bayesgen.inference import scoring

    family, classes = fit.family, fit.classes
    Z = scoring.internal(fit, rows.X)
    given = family.stats(Z, rows.y, rows.weights, classes.size)
    n = max(int(rows.y.shape[0]), 1)
    rtol = max(STATS_RTOL, 4.0 * n * np.finfo(np.float64).eps)
    found = _difference(given, fitted, rtol, classes.size)
    if found is not None and found[3]:  # signed sums: against the absolute values' scale
        magnitude = family.stats(abs(Z), rows.y, rows.weights, classes.size)
        found = _difference(given, fitted, rtol, classes.size, magnitude)
    if found is None:
        return
    path, cls, detail, _ = found
    where = "" if cls is None else f" of class {label(classes, cls)}"
    raise ValueError(
        f"{type(estimator).__name__}: {what} needs the training rows, but the rows given "
        f"are not those the model was fitted on: their sufficient statistic {path!r}"
        f"{where} differs from the fitted one ({detail}; rows are compared to rounding, "
        f"relative tolerance {rtol:.1e}, in any order). Pass the X, y (and "
        "sample_weight) of the fit."
    )


#: Keys of a record set (:func:`_records`) that are not per record.
_NOT_RECORDS = frozenset({"count", "loc", "scale", "n_rows"})


def _records(stats: dict) -> tuple[list, np.ndarray] | None:
    """Statistics that are a set of records, one per row or group, with the class of
    each under ``y`` or ``cls`` (KernelNB's points ``X``, ``y``, ``w``; the
    (class, missingness pattern) groups of MultinomialNB with missing counts:
    ``missing``, ``cls``, ``total``): ``(keys, order)``, the record keys and the order
    that sorts the records by class, then by their values (sparse patterns as dense,
    NaN after numbers), so that the order of the rows does not matter; None otherwise.
    The positions ``row`` are left out of the comparison."""
    label = "y" if "y" in stats else "cls" if "cls" in stats else None
    if label is None:
        return None
    cls = np.asarray(stats[label])
    if cls.ndim != 1 or cls.dtype.kind not in "iu":
        return None
    n = cls.shape[0]
    keys = [k for k, v in stats.items()
            if k not in _NOT_RECORDS and k != "row" and np.ndim(v) >= 1
            and getattr(v, "shape", (None,))[0] == n]
    columns = []
    for key in keys:
        if key == label:
            continue
        v = dense(stats[key]).reshape(n, -1)
        nan = np.isnan(v) if v.dtype.kind == "f" else np.zeros(v.shape, dtype=bool)
        columns += [np.where(nan, 0.0, v)[:, j] for j in range(v.shape[1])]
        columns += [nan[:, j] for j in range(v.shape[1])]
    return keys, np.lexsort([*columns[::-1], cls])


def dense(value: Any) -> np.ndarray:
    """A sparse matrix as a dense array (the small group patterns); arrays unchanged."""
    if hasattr(value, "toarray"):
        return value.toarray()
    return np.asarray(value)


def _difference(a: Any, b: Any, rtol: float, n_classes: int, magnitude: Any = None,
                path: str = "") -> tuple | None:
    """The first entry where statistics ``a`` (recomputed) and ``b`` (fitted) differ
    beyond ``rtol`` (see :func:`check_statistics`), as ``(path, class index or None,
    detail, signed)``, ``signed`` True when a larger scale (``magnitude``, the statistics
    of the absolute values) may still accept it; None when they agree."""
    if isinstance(b, dict):
        if not isinstance(a, dict) or set(a) != set(b):
            return (path or "statistics", None, "other statistics", False)
        rec_a, rec_b = _records(a), _records(b)
        if rec_b is not None:  # records: as a set (sorted), each array on one scale
            if rec_a is None or rec_a[0] != rec_b[0] or rec_a[1].size != rec_b[1].size:
                return (path or "statistics", None, "other records", False)
            label = "y" if "y" in b else "cls"
            for key in rec_b[0]:
                va, vb = dense(a[key])[rec_a[1]], dense(b[key])[rec_b[1]]
                found = _difference(va[None], vb[None], rtol, 1, None,
                                    f"{path}.{key}" if path else str(key))
                if found is not None:  # the class of the first differing record
                    cls = _first_record(va, vb, rtol, np.asarray(b[label])[rec_b[1]])
                    return (found[0], cls, found[2].replace("entry (0, ", "record ("),
                            False)
            rest = [k for k in b if k not in rec_b[0] and k != "row"]
            a = {k: a[k] for k in rest if k in a}
            b = {k: b[k] for k in rest}
            if set(a) != set(b):
                return (path or "statistics", None, "other statistics", False)
        for key in b:
            sub = None if magnitude is None else magnitude.get(key)
            found = _difference(a[key], b[key], rtol, n_classes, sub,
                                f"{path}.{key}" if path else str(key))
            if found is not None:
                return found
        return None
    if isinstance(b, (list, tuple)):
        if not isinstance(a, (list, tuple)) or len(a) != len(b):
            return (path, None, "other statistics", False)
        for i, (ai, bi) in enumerate(zip(a, b, strict=True)):
            sub = None if magnitude is None else magnitude[i]
            found = _difference(ai, bi, rtol, n_classes, sub, f"{path}[{i}]")
            if found is not None:
                return found
        return None
    a_arr, b_arr = dense(a), dense(b)
    if a_arr.shape != b_arr.shape:
        return (path, None, f"shape {a_arr.shape} instead of {b_arr.shape}", False)
    if b_arr.dtype.kind not in "fc":  # integers, booleans, labels: exactly equal
        if np.array_equal(a_arr, b_arr):
            return None
        return (path, _first_class(~(a_arr == b_arr), n_classes), "other values", False)
    a_arr, b_arr = a_arr.astype(np.float64), b_arr.astype(np.float64)
    finite = np.isfinite(a_arr) & np.isfinite(b_arr)
    same_special = ~finite & ((a_arr == b_arr) | (np.isnan(a_arr) & np.isnan(b_arr)))
    if not np.all(finite | same_special):
        bad = ~(finite | same_special)
        return (path, _first_class(bad, n_classes),
                "missing or infinite entries in other places", False)
    if not finite.any():
        return None
    scale = _scale(np.where(finite, np.abs(b_arr), 0.0), n_classes)
    if magnitude is not None:
        m = np.asarray(magnitude, dtype=np.float64)
        if m.shape == b_arr.shape:
            scale = np.maximum(scale, _scale(np.where(np.isfinite(m), np.abs(m), 0.0),
                                             n_classes))
    gap = np.where(finite, np.abs(a_arr - b_arr), 0.0)
    bad = gap > rtol * scale
    if not bad.any():
        return None
    cls = _first_class(bad, n_classes)
    if cls is not None:  # the largest difference within the first class that differs
        bad = bad & (np.arange(bad.shape[0]) == cls).reshape((-1,) + (1,) * (bad.ndim - 1))
    where = np.unravel_index(np.argmax(np.where(bad, gap / np.where(scale > 0, scale, 1.0),
                                                -1.0)), bad.shape)
    rel = gap[where] / scale[where] if scale[where] > 0 else np.inf
    return (path, cls, f"relative difference {rel:.2e} at entry {tuple(map(int, where))}",
            magnitude is None)


def _first_record(a: np.ndarray, b: np.ndarray, rtol: float, cls: np.ndarray):
    """The class of the first sorted record where arrays ``a`` and ``b`` differ."""
    if a.shape != b.shape:
        return None
    a2, b2 = a.reshape(a.shape[0], -1).astype(np.float64), b.reshape(b.shape[0], -1)
    scale = rtol * float(np.nanmax(np.abs(b2), initial=0.0))
    same = (np.abs(a2 - b2) <= scale) | (np.isnan(a2) & np.isnan(b2))
    bad = np.flatnonzero(~same.all(axis=1))
    return int(cls[bad[0]]) if bad.size else None


def _per_class(arr: np.ndarray, n_classes: int) -> bool:
    return arr.ndim >= 1 and arr.shape[0] == n_classes


def _scale(abs_values: np.ndarray, n_classes: int) -> np.ndarray:
    """The largest magnitude within each class (leading axis of length K), or of the
    whole array, broadcast to its shape."""
    if abs_values.ndim == 0:
        return abs_values
    if _per_class(abs_values, n_classes):
        top = abs_values.reshape(n_classes, -1).max(axis=1)
        return np.broadcast_to(top.reshape((n_classes,) + (1,) * (abs_values.ndim - 1)),
                               abs_values.shape)
    return np.broadcast_to(abs_values.max(), abs_values.shape)


def _first_class(bad: np.ndarray, n_classes: int) -> int | None:
    """The class (leading index) of the first differing entry, if the array is per class."""
    if not _per_class(bad, n_classes):
        return None
    return int(np.flatnonzero(bad.reshape(n_classes, -1).any(axis=1))[0])


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
        coords={"obs": np.arange(n), "feature": np.asarray(estimator.fitted_.feature_names),
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
