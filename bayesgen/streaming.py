"""Fitting from statistics that arrive in pieces: ``partial_fit`` and ``bg.merge``.

A generative classifier is a function of its per-class sufficient statistics, and
statistics of disjoint data sets combine exactly with the family's ``merge`` (sums for
the count families, Chan et al.'s centred update for the Gaussian ones, the union of
the category sets for CategoricalNB, the concatenation of the points for KernelNB).
So every way of seeing the data in pieces ends in the same fitted model:

- ``partial_fit``: the statistics of each batch are merged into those of the batches
  before it, and the model is refitted from the sum (:meth:`_fit_statistics
  <bayesgen._base.GenerativeClassifier._fit_statistics>`);
- :func:`merge`: the statistics of estimators fitted on different shards are summed;
- Dask input (:mod:`bayesgen._dask`): the statistics of the chunks are summed by a
  tree reduction.

Each piece of data is a :class:`Piece`: its classes, statistics, class counts and the
affine frame its real-valued statistics are expressed in (:mod:`bayesgen.frame`; each
batch chooses its own, and ``merge`` re-expresses exactly). After any sequence of
pieces the fitted model equals one ``fit`` on their concatenation up to rounding: the
same statistics, hence the same MLE/MAP, the same conjugate posterior (and the same
draws for the same ``random_state``) and the same target for NUTS.

Without the rows, what needs them is not available: ``model_`` (observed data),
``idata_``'s ``observed_data`` and ``log_likelihood`` groups (so ``az.loo`` and
``bg.compare``), ``sample_posterior_predictive``, ``sample_prior_predictive`` and the
posterior predictive checks raise a ``ValueError`` saying so (:func:`require_rows`).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from bayesgen import training
from bayesgen._params import check_params
from bayesgen._validation import WEIGHT_TOTAL_MAX, _all_finite, _check_label_types
from bayesgen.exceptions import DataWarning, warn


@dataclass
class Piece:
    """The statistics of one piece of data (a batch, a chunk, a fitted estimator).

    Attributes
    ----------
    classes : ndarray (K,)
        Sorted labels the statistics are indexed by (some may have zero count).
    stats : dict
        The family's statistics, in the frame ``frame``.
    counts : ndarray (K,)
        Weighted class counts.
    family : family object
        A family of the estimator's configuration (for ``merge``); not yet fitted when
        the piece comes from rows.
    frame : Frame or None
        The frame of the real-valued statistics.
    n_features : int
    feature_names : ndarray of str or None
    """

    classes: np.ndarray
    stats: dict
    counts: np.ndarray
    family: Any
    frame: Any
    n_features: int
    feature_names: np.ndarray | None


# ------------------------------------------------------------------ classes
def unique_labels(labels: Any, name: str = "classes") -> np.ndarray:
    """Sorted distinct labels of a 1-D array-like (all strings or all numbers)."""
    values = np.asarray(labels)
    if values.ndim != 1:
        values = values.reshape(-1)
    if values.dtype == object:
        values = _check_label_types(values)
    try:
        check_classification_targets(values)
        return np.unique(values)
    except TypeError as err:
        raise ValueError(f"{name} holds labels that cannot be sorted ({err}).") from None


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
    if not first and not _same_labels(classes, estimator.classes_):
        raise ValueError(
            f"{who}.partial_fit: classes={classes.tolist()} is not the same as on the first "
            f"call (classes_={estimator.classes_.tolist()}); pass the same classes, or None."
        )
    return classes


def _same_labels(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and _comparable(a, b) and bool(np.all(a == b))


def _comparable(a: np.ndarray, b: np.ndarray) -> bool:
    """Both numeric or both not (strings): labels that can be compared and sorted."""
    return (a.dtype.kind in "biuf") == (b.dtype.kind in "biuf")


# ------------------------------------------------------------------- pieces
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


def check_weight_total(sample_weight: Any, method: str, who: str) -> None:
    """For ``"mle"``, ``fit`` divides weights whose total exceeds 2**128 by a power of
    two; pieces would each be divided by their own, so a piece of such weights is an
    error here (the MLE does not change under a common factor: rescale them all)."""
    if method != "mle" or sample_weight is None or np.isscalar(sample_weight):
        return
    with np.errstate(over="ignore", invalid="ignore"):
        total = np.sum(np.asarray(sample_weight, dtype=np.float64))
    if total > WEIGHT_TOTAL_MAX:
        raise ValueError(
            f"{who}: sample_weight of this batch sums to {total:.3g} (> 2**128), which "
            "method='mle' cannot rescale consistently across batches; divide every "
            "batch's weights by one common factor (the MLE does not change)."
        )


#: rows a batch's frame is chosen from (its statistics are re-expressed exactly anyway)
FRAME_ROWS = 2**14


def batch_piece(tmpl, X: Any, y: Any, sample_weight: Any, method: str,
                classes: np.ndarray | None, *, reset: bool) -> Piece:
    """Validate rows against the template (or, with ``reset``, set its columns from
    them) and compute their statistics in their own frame."""
    est = copy.copy(tmpl)
    check_weight_total(sample_weight, method, f"{type(est).__name__}.partial_fit")
    family, batch = training.read_batch(est, X, y, sample_weight, method, classes=classes,
                                        reset=reset, frame_rows=FRAME_ROWS)
    return Piece(batch.classes, batch.stats, batch.counts, family,
                 getattr(est, "frame_", None), est.n_features_in_,
                 getattr(est, "feature_names_in_", None))


def stored_piece(estimator) -> Piece:
    """The statistics an estimator was fitted on (or has accumulated)."""
    return Piece(estimator.classes_, estimator.stats_, estimator.class_count_,
                 estimator.family_, getattr(estimator, "frame_", None),
                 estimator.n_features_in_, getattr(estimator, "feature_names_in_", None))


#: statistics keys with a leading class axis (``scatter`` too when it is (K, d, d))
_CLASS_AXIS = {"count", "mean", "m2", "rows", "feature_count", "category_count",
               "observed", "observed_rows"}  # observed: per (class, feature), missing values
#: statistics keys without one
_NO_CLASS_AXIS = {"loc", "scale", "X", "w", "row", "n_rows", "categories", "n_seen"}


def reindex_classes(stats: dict, position: np.ndarray, n_classes: int) -> dict:
    """Statistics over classes ``0..K_old-1`` as statistics over ``n_classes`` classes,
    class k moved to ``position[k]``; the new classes get zero weight.

    KernelNB's per-point class index ``y`` is mapped; MixedNB's ``parts`` recursively.
    """
    out = {}
    for key, value in stats.items():
        if key == "parts":
            out[key] = [reindex_classes(part, position, n_classes) for part in value]
        elif key == "y":
            out[key] = position[value]
        elif key in _CLASS_AXIS or (key == "scatter" and np.ndim(value) == 3):
            value = np.asarray(value)
            new = np.zeros((n_classes, *value.shape[1:]), dtype=value.dtype)
            new[position] = value
            out[key] = new
        elif key in _NO_CLASS_AXIS or key == "scatter":
            out[key] = value
        else:
            raise ValueError(
                f"statistics {key!r} cannot be re-indexed to a different set of classes; "
                "merge pieces fitted with the same classes (pass classes= to partial_fit)."
            )
    return out


def merge_pieces(a: Piece, b: Piece) -> Piece:
    """The piece of the union of two disjoint data sets (``a``'s rows first).

    Classes are united (a class missing from one side has zero count there); the
    statistics are merged by the family, in ``a``'s frame.
    """
    if a.n_features != b.n_features:
        raise ValueError(
            f"The statistics merged have different numbers of features ({a.n_features} "
            f"and {b.n_features}); every batch and shard must have the same columns."
        )
    if not _same_names(a.feature_names, b.feature_names):
        raise ValueError(
            "The feature names differ between the pieces merged "
            f"({_names(a.feature_names)} vs {_names(b.feature_names)}); every batch and "
            "shard must have the same columns in the same order."
        )
    sa, sb, ca, cb, classes = a.stats, b.stats, a.counts, b.counts, a.classes
    if not _same_labels(a.classes, b.classes):
        if not _comparable(a.classes, b.classes):
            raise ValueError(
                f"The class labels cannot be united: {a.classes.tolist()} and "
                f"{b.classes.tolist()} (strings and numbers)."
            )
        classes = np.union1d(a.classes, b.classes)
        pa, pb = np.searchsorted(classes, a.classes), np.searchsorted(classes, b.classes)
        sa, sb = reindex_classes(sa, pa, classes.size), reindex_classes(sb, pb, classes.size)
        ca, cb = _spread(ca, pa, classes.size), _spread(cb, pb, classes.size)
    stats = a.family.merge(sa, sb)
    return replace(a, classes=classes, stats=stats, counts=ca + cb, family=b.family)


def _spread(counts: np.ndarray, position: np.ndarray, size: int) -> np.ndarray:
    out = np.zeros(size)
    out[position] = counts
    return out


def _same_names(a: np.ndarray | None, b: np.ndarray | None) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return len(a) == len(b) and bool(np.all(np.asarray(a) == np.asarray(b)))


def _names(names: np.ndarray | None) -> str:
    return "no names" if names is None else str(list(names)[:6])


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
    family = copy.deepcopy(piece.family)
    family.labels = piece.classes
    if piece.frame is not None:
        family.frame = piece.frame
    try:
        new._fit_statistics(method, family, piece.classes, piece.stats, piece.counts, None)
    except ValueError as err:
        few = piece.classes[piece.counts < piece.n_features + 2]
        if not (defer and few.size):
            raise
        new = template(estimator, fitted=False)
        _set_columns(new, piece)
        new.classes_, new.class_count_, new.stats_, new.family_ = (
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
    estimator.frame_ = piece.frame


# ------------------------------------------------------------- public entry
def partial_fit(self, X: Any, y: Any, classes: Any = None, sample_weight: Any = None):
    """Update the model with one batch of rows (scikit-learn's ``partial_fit``).

    The batch's sufficient statistics are added to those of the batches before it (or
    of the earlier ``fit``) and the model is refitted from the sum: after any sequence
    of batches the estimator equals one ``fit`` on their concatenation (up to rounding;
    the conjugate posterior with the same draws for the same ``random_state``;
    ``method="mcmc"`` samples the same posterior, re-running NUTS after every batch, so
    each call costs a full MCMC run: stream with a point method or "conjugate" and
    switch to "mcmc" on the last batch if needed). Memory is that of the statistics,
    independent of the number of rows, except KernelNB, which keeps every point.

    Parameters
    ----------
    X : array-like, DataFrame, or Dask array / DataFrame of shape (n, d)
        The batch (a Dask collection is reduced chunk by chunk, see ``fit``).
    y : array-like of shape (n,)
        Labels, each one of ``classes``; a batch may hold any subset of them.
    classes : array-like of shape (K,), optional
        Every label of the stream. Required on the first call (when the estimator has
        no statistics yet); on later calls None or the same labels.
    sample_weight : array-like of shape (n,), optional
        As in ``fit``.

    Returns
    -------
    self

    Raises
    ------
    ValueError
        ``classes`` missing on the first call or different from the first call's, a
        label not among ``classes``, a batch with another number (or other names) of
        features, or any invalid row; the estimator is then left unchanged.

    Notes
    -----
    Without its rows the model has no ``model_``, ``observed_data`` or
    ``log_likelihood`` group and no posterior predictive replicates (they raise
    ``ValueError``; see :mod:`bayesgen.streaming`). Until the model has been fitted
    once, statistics it cannot be fitted from while a class has fewer than d + 2
    samples (``method="mle"`` or KernelNB with a class not seen yet, QDA's MLE with
    fewer than d + 1 rows in a class) are kept with a ``DataWarning`` quoting the
    reason, and the estimator stays unfitted (``NotFittedError``) until a batch
    completes them; the default ``method="map"`` needs no sample in any class.
    """
    from bayesgen import _dask

    method = check_params(self)
    first = getattr(self, "stats_", None) is None
    classes = _resolve_classes(self, classes, first)
    tmpl = template(self, fitted=not first)
    if _dask.is_dask(X, y, sample_weight):
        piece = _dask.collection_piece(tmpl, X, y, sample_weight, method, classes,
                                       reset=first)
    else:
        piece = batch_piece(tmpl, X, y, sample_weight, method, classes, reset=first)
    if not first:
        piece = merge_pieces(stored_piece(self), piece)
    commit(self, method, piece, defer="params_" not in vars(self))
    return self


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
        (number and names). Their classes may differ: the result has the union, a class
        a shard did not see counting zero rows there.

    Returns
    -------
    estimator
        A new fitted estimator (the conjugate posterior is drawn, and NUTS run, anew
        with the first estimator's ``random_state``). It was fitted without rows: see
        :mod:`bayesgen.streaming` for what that excludes.

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
        check_is_fitted(est, "stats_")
        differ = [k for k, v in first.get_params(deep=False).items()
                  if k not in _FREE_PARAMS and not _same_value(v, getattr(est, k))]
        if differ:
            raise ValueError(
                f"merge: estimator {i} has other parameters than estimator 0 ({differ}); "
                "only estimators of the same configuration can be merged."
            )
    method = check_params(first)
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


def require_rows(estimator, what: str) -> None:
    """``ValueError`` if ``estimator`` was fitted from statistics alone (no rows)."""
    if getattr(estimator, "_train", True) is None:
        raise ValueError(
            f"{type(estimator).__name__} was fitted from statistics (partial_fit, "
            f"bayesgen.merge or Dask input), without its training rows, so {what} is not "
            "available. Refit with fit(X, y) on in-memory data to get it."
        )
