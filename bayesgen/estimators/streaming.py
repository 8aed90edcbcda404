"""Fitting from statistics that arrive in pieces: ``partial_fit`` and ``bg.merge``.

Statistics of disjoint data combine exactly with the family's ``merge``, so
``partial_fit`` (each batch merged into the earlier ones, then refitted from the sum),
:func:`merge` (estimators fitted on shards) and Dask input (a tree reduction,
:mod:`bayesgen.scale.dask_input`) all end in the fit on the concatenated rows, to
rounding (tested to 1e-10; NUTS samples the same posterior, not the same chains). Each
piece is a :class:`bayesgen.scale.pieces.Piece` in its own frame, re-expressed exactly
on merging. A model fitted from statistics keeps no rows; what needs them takes them as
arguments (:mod:`bayesgen.inference.rows`).
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
from sklearn.utils.validation import check_is_fitted

from bayesgen.data.validation import _all_finite
from bayesgen.exceptions import DataWarning, warn
from bayesgen.scale import dask_input
from bayesgen.scale.pieces import (
    Piece,
    batch_piece,
    merge_pieces,
    same_labels,
    unique_labels,
)


def _resolve_classes(estimator, classes: Any, first: bool) -> np.ndarray:
    """scikit-learn's rule: ``classes`` required on the first call, equal afterwards."""
    who = type(estimator).__name__
    if classes is None:
        if first:
            raise ValueError(
                f"{who}.partial_fit: classes must be passed on the first call (every label "
                "the stream can hold, e.g. classes=np.unique(y_all)); a batch need not "
                "contain all of them."
            )
        return estimator.classes_
    classes = unique_labels(classes)
    if classes.size < 2:
        raise ValueError(
            f"{who}.partial_fit: classes must hold at least 2 distinct labels; got "
            f"{classes.tolist()}."
        )
    if not first and not same_labels(classes, estimator.classes_):
        raise ValueError(
            f"{who}.partial_fit: classes={classes.tolist()} is not the same as on the first "
            f"call (classes_={estimator.classes_.tolist()}); pass the same classes, or None."
        )
    return classes


# ------------------------------------------------------------- public entry
def partial_fit(estimator, X: Any, y: Any, classes: Any = None, sample_weight: Any = None):
    """``estimator.partial_fit`` (documented there): the batch's piece merged into the
    stored statistics, and the estimator refitted from the sum (:func:`commit`)."""
    method = estimator._check_params()
    first = getattr(estimator, "_stats", None) is None
    classes = _resolve_classes(estimator, classes, first)
    tmpl = template(estimator, fitted=not first)
    columns = None if first else getattr(estimator, "_columns", None)  # levels may grow
    if dask_input.is_dask(X, y, sample_weight):
        piece = dask_input.collection_piece(tmpl, X, y, sample_weight, method, classes,
                                            reset=first, make_family=make_family,
                                            columns=columns)
    else:
        piece = batch_piece(tmpl, X, y, sample_weight, method, classes, reset=first,
                            make_family=make_family, columns=columns)
    if not first:
        piece = merge_pieces(stored_piece(estimator), piece)
    commit(estimator, method, piece, defer="_params" not in vars(estimator))
    return estimator


#: parameters that need not agree between estimators merged (the first one's are kept)
_FREE_PARAMS = ("random_state", "progressbar")


def merge(*estimators: Any):
    """One estimator whose statistics are the sum of fitted estimators' statistics.

    For sharded or federated fitting: estimators of the same class and configuration
    fitted (``fit`` or ``partial_fit``) on disjoint data merge into the estimator that
    one ``fit`` on all their rows gives (up to rounding). The inputs are not changed.

    Parameters
    ----------
    *estimators : fitted bayesgen estimators (or one list of them)
        Same class and the same parameters (``get_params``), except ``random_state``
        and ``progressbar``, which are taken from the first. Their columns must agree
        (number, names, and how each is read: text in one and numbers in another is an
        error). Their classes may differ: the result has the union, a class a shard did
        not see counting zero rows there; so may the levels of text, boolean and
        category columns (re-coded to their sorted union, as one fit has).

    Returns
    -------
    estimator
        A new fitted estimator (the conjugate posterior is drawn, and NUTS run, anew
        with the first estimator's ``random_state``). It was fitted without rows: what
        needs them takes them as arguments (:mod:`bayesgen.inference.rows`).

    Raises
    ------
    ValueError
        Fewer than one estimator, different classes of estimator or parameters,
        different columns, labels that cannot be united, or a merged model that cannot
        be fitted (e.g. ``method="mle"`` with a class no shard saw).
    """
    if len(estimators) == 1 and isinstance(estimators[0], list | tuple):
        estimators = tuple(estimators[0])
    if not estimators:
        raise ValueError("merge needs at least one fitted estimator.")
    first = estimators[0]
    who = type(first).__name__
    for i, est in enumerate(estimators):
        if type(est) is not type(first):
            raise ValueError(
                f"merge: estimator {i} is a {type(est).__name__}, estimator 0 a {who}; "
                "only estimators of the same class and configuration can be merged."
            )
        check_is_fitted(est, "_stats")
        differ = [k for k, v in first.get_params(deep=False).items()
                  if k not in _FREE_PARAMS and not _same_value(v, getattr(est, k))]
        if differ:
            raise ValueError(
                f"merge: estimator {i} has other parameters than estimator 0 ({differ}); "
                "only estimators of the same configuration can be merged."
            )
    method = first._check_params()
    piece = stored_piece(first)
    for est in estimators[1:]:
        piece = merge_pieces(piece, stored_piece(est))
    out = template(first, fitted=False)
    commit(out, method, piece, defer=False)
    return out


def _same_value(u: Any, v: Any) -> bool:
    """Equality of parameter values: nested lists/tuples/dicts, arrays, scalars."""
    if isinstance(u, list | tuple) and isinstance(v, list | tuple):
        return len(u) == len(v) and all(_same_value(a, b) for a, b in zip(u, v, strict=True))
    if isinstance(u, dict) and isinstance(v, dict):
        return u.keys() == v.keys() and all(_same_value(u[k], v[k]) for k in u)
    if u is None or v is None or isinstance(u, str) or isinstance(v, str):
        return type(u) is type(v) and u == v
    try:
        a, b = np.asarray(u), np.asarray(v)
        return a.shape == b.shape and bool(np.all(a == b))
    except (TypeError, ValueError):
        return u is v


def fit_dask(estimator, X: Any, y: Any, sample_weight: Any = None):
    """``fit`` for Dask input (see the module docstring); returns the estimator."""

    method = estimator._check_params()
    tmpl = template(estimator, fitted=False)
    piece = dask_input.collection_piece(tmpl, X, y, sample_weight, method, None, reset=True,
                                        make_family=make_family)
    commit(estimator, method, piece, defer=False)
    return estimator


# ------------------------------------------------------------------- pieces
def make_family(estimator, columns=None):
    """``estimator``'s family for the record ``columns`` of its training columns (None:
    a bare family): how the lower layers that read rows create it
    (:data:`bayesgen.inference.statistics.MakeFamily`), given to them as a value."""
    return estimator._make_family(columns)


def template(estimator, fitted: bool):
    """A bare estimator with ``estimator``'s parameters (and, if ``fitted``, its
    ``n_features_in_`` / ``feature_names_in_``) for validating new rows: nothing of
    ``estimator`` itself is changed by the validation."""
    new = type(estimator).__new__(type(estimator))
    keep = set(estimator._get_param_names())
    if fitted:
        keep |= {"n_features_in_", "feature_names_in_"}
    new.__dict__.update({k: v for k, v in vars(estimator).items()
                         if k in keep or k.startswith("_sklearn_output")})
    return new


def stored_piece(estimator) -> Piece:
    """The statistics an estimator was fitted on (or has accumulated)."""
    return Piece(estimator.classes_, estimator._stats, estimator.class_count_,
                 estimator._family, getattr(estimator, "_frame", None),
                 estimator.n_features_in_, getattr(estimator, "feature_names_in_", None),
                 getattr(estimator, "_columns", None))


# ------------------------------------------------------------------- commit
def commit(estimator, method: str, piece: Piece, *, defer: bool) -> None:
    """Fit ``estimator`` from the statistics of ``piece`` (no rows at hand).

    Everything is computed on a copy that replaces the estimator's state only once it
    is complete: a ``ValueError`` leaves the estimator as it was. With ``defer``
    (``partial_fit`` before the model could be fitted once), statistics from which the
    model cannot be fitted yet while some class has fewer than d + 2 samples (the most
    any method needs: QDA's MLE needs d + 1, KernelNB 2 per class) are kept instead,
    with a ``DataWarning`` that quotes the error: the estimator is then not fitted
    (``NotFittedError``) until a later batch fills the classes.
    """
    who = type(estimator).__name__
    if not _all_finite(piece.stats):
        raise ValueError(
            f"{who}: the merged sufficient statistics overflow float64; rescale the "
            "features (e.g. StandardScaler) or sample_weight."
        )
    new = type(estimator).__new__(type(estimator))
    new.__dict__.update(vars(estimator))
    _set_columns(new, piece)
    settings = {"labels": piece.classes}
    if piece.frame is not None:
        settings["frame"] = piece.frame
    if piece.columns is not None and piece.family.capabilities.levels:
        settings["levels"] = piece.columns.level_list()
    family = copy.deepcopy(piece.family).configured(**settings)
    try:
        new._fit_statistics(method, family, piece.classes, piece.stats, piece.counts, None)
    except ValueError as err:
        few = piece.classes[piece.counts < piece.n_features + 2]
        if not (defer and few.size):
            raise
        new = template(estimator, fitted=False)
        _set_columns(new, piece)
        new.classes_, new.class_count_, new._stats, new._family = (
            piece.classes, piece.counts, piece.stats, family)
        warn(
            f"{who}.partial_fit: class(es) {few.tolist()} have few samples so far "
            f"(fewer than d + 2 = {piece.n_features + 2}), and method={method!r} cannot "
            f"be fitted from them yet. [{err}] The statistics "
            "are kept and the model is fitted by the first partial_fit call after which "
            "it can be; until then the estimator is not fitted.",
            DataWarning,
        )
    estimator.__dict__.clear()
    estimator.__dict__.update(vars(new))


def _set_columns(estimator, piece: Piece) -> None:
    estimator.n_features_in_ = piece.n_features
    if piece.feature_names is None:
        estimator.__dict__.pop("feature_names_in_", None)
    else:
        estimator.feature_names_in_ = piece.feature_names
    if piece.columns is None:
        estimator.__dict__.pop("_columns", None)
    else:
        estimator._columns = piece.columns
    estimator._frame = piece.frame
