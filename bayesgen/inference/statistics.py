"""From training rows to sufficient statistics: the first half of every fit.

:func:`read_batch` validates a batch (X, y, sample_weight), encodes the labels, chooses
the frame (first batch only) and returns the family's weighted per-class statistics;
the estimator layer then fits from statistics, the same step for ``fit``,
``partial_fit``, ``bg.merge``, Dask and EM.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from sklearn.utils.validation import validate_data

from bayesgen.data import labels, missing, sparse, tables
from bayesgen.data.validation import (
    _check_label_types,
    check_label_sequence,
    check_sample_weight,
    check_stats,
    encode_labels,
)
from bayesgen.inference import scoring
from bayesgen.utils.threads import jobs, no_spin


@dataclass
class Batch:
    """One validated batch of training rows and its statistics.

    Attributes
    ----------
    X : ndarray (n, d)
        Validated rows in the user's units (after the family's support checks).
    y_index : ndarray (n,) of int
        Class index of every row, into ``classes``.
    weights : ndarray (n,)
        Validated sample weights.
    classes : ndarray (K,)
        Sorted class labels.
    stats : dict
        The family's weighted per-class sufficient statistics (internal frame).
    counts : ndarray (K,)
        Weighted class counts N_k.
    unlabeled : :class:`bayesgen.data.labels.Unlabeled` or None
        The unlabeled rows (then ``X``, ``y_index``, ``weights``, ``stats`` and
        ``counts`` are those of the labeled rows), or None.
    frame : :class:`bayesgen.data.frame.Frame` or None
        The frame of the statistics' internal coordinates (None: no real-valued
        columns); the family is configured with it.
    columns : :class:`bayesgen.data.tables.Columns` or None
        The record of the columns the rows were read with (kinds, levels), which the
        estimator keeps with its fit.
    """

    X: np.ndarray
    y_index: np.ndarray
    weights: np.ndarray
    classes: np.ndarray
    stats: dict
    counts: np.ndarray
    unlabeled: labels.Unlabeled | None = None
    frame: Any = None
    columns: Any = None


#: ``make_family(estimator, columns)``: the estimator's family for the record of its
#: training columns (None: a bare family, before the rows are read), given by the
#: estimator layer
MakeFamily = Callable[[Any, Any], Any]


def _validate_fitted(estimator, fit, X: Any, *y: Any):
    """X (and y, if given: :func:`check_label_sequence`) of a fitted model: read as its
    training columns were (``fit.columns``), scikit-learn's ``validate_data`` (float64,
    NaN allowed), infinity refused (:func:`_check_infinite`); returns what
    ``validate_data`` does."""
    X, _ = tables.to_numeric(X, family=fit.family, table=fit.columns, who=fit.who,
                             reset=False)
    y = tuple(map(check_label_sequence, y))
    out = validate_data(estimator, X, *y, reset=False, dtype=np.float64,
                        ensure_all_finite=False, **sparse.validate_kwargs(fit.family, X, fit.who))
    _check_infinite(fit.family, out[0] if y else out, fit.who)
    return out


def _check_infinite(family, X: Any, who: str) -> None:
    """Infinity is an error, NaN a missing value: one pass over X
    (:func:`bayesgen.data.missing.check_infinite`), unless the family's support check
    scans X itself (count families, ``capabilities.support_check_finds_nan``)."""
    if not family.capabilities.support_check_finds_nan:
        missing.check_infinite(X, who)


def validate_predict(estimator, X: Any) -> Any:
    """Rows to predict for a fitted estimator (``NotFittedError`` before ``fit``):
    DataFrames read column by column, scikit-learn's checks (NaN allowed: a missing
    value, see :mod:`bayesgen.data.missing`), the missing-value guard and the family's
    support checks."""
    fit = estimator.fitted_
    return missing.check_X(estimator, fit.family, _validate_fitted(estimator, fit, X),
                           fit.method)


def read_rows(estimator, X: Any, y: Any, sample_weight: Any = None):
    """Rows of a fitted estimator's data set read as its fit read them: the labeled
    rows' validated X (after the family's support checks), class index into
    ``classes_`` and weights, ``(X, y_index, weights)``; rows whose label is missing
    (unlabeled, see :mod:`bayesgen.semi.unlabeled`) are left out. For the capabilities
    that need the training rows again (:mod:`bayesgen.inference.rows`)."""
    with missing.scan_scope(), no_spin():
        y, unlabeled = labels.split_labels(y, getattr(estimator, "unlabeled", None))
        fit = estimator.fitted_
        X, y = _validate_fitted(estimator, fit, X, y)
        weights = check_sample_weight(sample_weight, X.shape[0], fit.method)
        if unlabeled is not None:
            keep = np.flatnonzero(~unlabeled)
            X = X[keep] if not sparse.is_sparse(X) else X.tocsr()[keep]
            y, weights = y[keep], weights[keep]
        y_index = encode_known(y, fit.classes)
        X = missing.check_X(estimator, fit.family, X, fit.method)
    return X, y_index, weights


def read_batch(estimator, X: Any, y: Any, sample_weight: Any, method: str, *,
               make_family: MakeFamily, columns: Any = None,
               classes: np.ndarray | None = None, reset: bool = True,
               frame_rows: int | None = None, whole: bool = True):
    """Validate a batch and compute its statistics: returns ``(family, batch)``.

    Creates the family (``make_family(estimator, columns)``) configured with the batch's
    labels and frame (chosen from about ``frame_rows`` rows,
    :func:`bayesgen.inference.scoring.fit_frame`). ``columns``: the record of the training
    columns (None at a fit, which records them in ``batch.columns``); ``reset`` as
    scikit-learn's ``validate_data``. ``classes`` None: the batch's labels are the classes
    (at least two); else the sorted labels the batch is encoded against (``partial_fit``,
    Dask; an unknown label or an unlabeled row is a ``ValueError``). ``whole=False``: one
    Dask chunk, whose all-missing columns are checked on the total. Unlabeled rows
    (:mod:`bayesgen.data.labels`) are returned in ``batch.unlabeled``; the statistics are
    the labeled rows'.
    """
    # the estimator's n_jobs threads, one BLAS thread (bayesgen.utils.threads); X and Z
    # are scanned once (bayesgen.data.missing.scan_scope)
    who = type(estimator).__name__
    with jobs(getattr(estimator, "n_jobs", None)), no_spin(), missing.scan_scope():
        y, unlabeled = labels.split_labels(y, getattr(estimator, "unlabeled", None))
        if classes is not None:
            labels.reject_streaming(unlabeled, f"{who}.partial_fit")
        # DataFrames read column by column (bayesgen.data.tables) with the bare family, then
        # scikit-learn's validate_data (float64; sets or checks n_features_in_)
        bare = make_family(estimator, None)
        X, columns = tables.to_numeric(X, family=bare, table=None if reset else columns,
                                       who=who, reset=reset, grow=True, whole=whole)
        X, y = validate_data(estimator, X, check_label_sequence(y), dtype=np.float64,
                             ensure_all_finite=False, reset=reset,
                             **sparse.validate_kwargs(bare, X, who))
        if classes is None:
            classes, y_index = encode_labels(y)
        else:
            y_index = encode_known(y, classes)
        weights = check_sample_weight(sample_weight, X.shape[0], method)  # NaN in X: missing
        family = make_family(estimator, columns).configured(labels=classes)
        _check_infinite(family, X, who)  # inf: an error; NaN: missing
        X = missing.check_X(estimator, family, X, method, reset=reset and whole)
        Z, frame = scoring.fit_frame(family, X, weights, frame_rows, who)  # internal frame
        if frame is not None:
            family = family.configured(frame=frame)
        rows = None
        if unlabeled is not None:  # the labeled rows' statistics; the others kept as rows
            X, Z, y_index, weights, rows = labels.split_rows(X, Z, y_index, weights, unlabeled)
        stats = family.stats(Z, y_index, weights, classes.size)
        check_stats(stats, X, weights, who)
        counts = np.bincount(y_index, weights=weights, minlength=classes.size)
        return family, Batch(X, y_index, weights, classes, stats, counts, rows, frame, columns)


def encode_known(y: np.ndarray, classes: np.ndarray) -> np.ndarray:
    """Class index (n,) of every label of ``y`` into the sorted ``classes``.

    Raises ``ValueError`` listing the labels of ``y`` that are not among ``classes``.
    """
    if y.dtype == object:
        y = _check_label_types(y)
    try:
        index = np.searchsorted(classes, y)
    except TypeError:  # labels of another type than the classes (str vs int)
        index = np.zeros(y.shape[0], dtype=np.intp)
        known = np.zeros(y.shape[0], dtype=bool)
    else:
        index = np.minimum(index, classes.size - 1)
        known = classes[index] == y
    if not np.all(known):
        unknown = np.unique(np.asarray(y[~known], dtype=object).astype(str))
        raise ValueError(
            f"y holds label(s) {unknown[:10].tolist()} that are not among classes="
            f"{np.asarray(classes).tolist()} (given at the first call to partial_fit, or "
            "seen in fit). Every label must be one of them; pass all the classes on the "
            "first call."
        )
    return index.astype(np.intp)
