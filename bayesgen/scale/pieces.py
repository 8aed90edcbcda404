"""Pieces of statistics: the common currency of ``partial_fit``, ``bg.merge`` and Dask.

A :class:`Piece` is what one piece of data (a batch, a Dask chunk, a fitted estimator)
contributes: its classes, the family's statistics in the affine frame the piece chose,
and its class counts. :func:`merge_pieces` combines two (classes united, statistics
merged by the family, which re-expresses frames exactly), and
:func:`bayesgen.estimators.streaming.commit` fits an estimator from a piece atomically.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from sklearn.utils.multiclass import check_classification_targets

from bayesgen.data import missing
from bayesgen.data.validation import WEIGHT_TOTAL_MAX, _check_label_types
from bayesgen.inference import scoring, statistics
from bayesgen.scale import piece_levels


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
    columns : bayesgen.data.tables.Columns or None
        The record of the columns the rows were read with (kinds, families, and the
        levels behind the codes of categorical columns).
    n_observed : ndarray (d,) or None
        Rows with an observed (not missing) entry, per column (None: not counted, e.g.
        an estimator's statistics); a Dask fit checks on the total that every column
        has one.
    """

    classes: np.ndarray
    stats: dict
    counts: np.ndarray
    family: Any
    frame: Any
    n_features: int
    feature_names: np.ndarray | None
    columns: Any = None
    n_observed: np.ndarray | None = None


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


def same_labels(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and _comparable(a, b) and bool(np.all(a == b))


def _comparable(a: np.ndarray, b: np.ndarray) -> bool:
    """Both numeric or both not (strings): labels that can be compared and sorted."""
    return (a.dtype.kind in "biuf") == (b.dtype.kind in "biuf")


# ------------------------------------------------------------------- pieces
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
                classes: np.ndarray | None, *, reset: bool, make_family,
                columns: Any = None, whole: bool = True) -> Piece:
    """Validate rows against the template estimator and the record ``columns`` of its
    training columns (or, with ``reset``, record them from the rows) and compute their
    statistics in their own frame; ``make_family``: the estimator layer's
    :data:`bayesgen.inference.statistics.MakeFamily`. ``whole=False`` (a Dask chunk): a
    column with no observed value is not an error here (see ``n_observed``)."""
    est = copy.copy(tmpl)  # validate_data sets its n_features_in_ (chunks share tmpl)
    check_weight_total(sample_weight, method, f"{type(est).__name__}.partial_fit")
    family, batch = statistics.read_batch(est, X, y, sample_weight, method,
                                          make_family=make_family, columns=columns,
                                          classes=classes, reset=reset,
                                          frame_rows=FRAME_ROWS, whole=whole)
    return Piece(batch.classes, batch.stats, batch.counts, family,
                 scoring.frame_of(family), est.n_features_in_,
                 getattr(est, "feature_names_in_", None), batch.columns,
                 missing.observed_counts(batch.X))


#: statistics keys with a leading class axis (``scatter`` too when it is (K, d, d))
_CLASS_AXIS = {"count", "mean", "m2", "rows", "feature_count", "category_count", "sum",
               "observed", "observed_rows"}  # observed: per (class, feature), missing values
#: statistics keys without one
_NO_CLASS_AXIS = {"loc", "scale", "X", "w", "row", "n_rows", "categories", "n_seen"}


def reindex_classes(stats: dict, position: np.ndarray, n_classes: int) -> dict:
    """Statistics over classes ``0..K_old-1`` as statistics over ``n_classes`` classes,
    class k moved to ``position[k]``; the new classes get zero weight.

    KernelNB's per-point class index ``y`` and the ``cls`` of missing-value groups
    (LDA/QDA, MultinomialNB) are mapped; MixedNB's ``parts`` recursively.
    """
    out = {}
    for key, value in stats.items():
        if key == "parts":
            out[key] = [reindex_classes(part, position, n_classes) for part in value]
        elif key == "y":
            out[key] = position[value]
        elif key == "groups":  # (class, missingness pattern) groups: their class index
            out[key] = dict(value, cls=position[value["cls"]].astype(np.intp))
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

    Classes are united (a class missing from one side has zero count there), so are
    the levels of categorical columns (:mod:`bayesgen.scale.piece_levels`); the statistics
    are merged by the family, in ``a``'s frame.
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
    columns, sa, sb = piece_levels.unite(a.columns, b.columns, a.family, a.stats, b.stats)
    ca, cb, classes = a.counts, b.counts, a.classes
    if not same_labels(a.classes, b.classes):
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
    seen = None if a.n_observed is None or b.n_observed is None else a.n_observed + b.n_observed
    return replace(a, classes=classes, stats=stats, counts=ca + cb, family=b.family,
                   columns=columns, n_observed=seen)


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
