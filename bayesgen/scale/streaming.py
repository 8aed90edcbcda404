"""Fitting from statistics that arrive in pieces: ``partial_fit`` and ``bg.merge``.

A generative classifier is a function of its per-class sufficient statistics, and
statistics of disjoint data sets combine exactly with the family's ``merge`` (sums for
the count families, Chan et al.'s centred update for the Gaussian ones, the union of
the category sets for CategoricalNB, the concatenation of the points for KernelNB).
So every way of seeing the data in pieces ends in the same fitted model:

- ``partial_fit``: the statistics of each batch are merged into those of the batches
  before it, and the model is refitted from the sum (:meth:`_fit_statistics
  <bayesgen.estimators.base.GenerativeClassifier._fit_statistics>`);
- :func:`merge`: the statistics of estimators fitted on different shards are summed;
- Dask input (:mod:`bayesgen.scale.dask_input`): the statistics of the chunks are summed by a
  tree reduction.

Each piece of data is a :class:`bayesgen.scale.pieces.Piece`: its classes, statistics,
class counts and the affine frame its real-valued statistics are expressed in
(:mod:`bayesgen.data.frame`; each batch chooses its own, from about 2**14 of its rows, and
``merge`` re-expresses exactly). After any sequence of pieces the fitted model equals
one ``fit`` on their concatenation up to rounding (tested to 1e-10): the same
statistics, hence the same MLE/MAP, the same conjugate posterior (and the same draws
for the same ``random_state``) and the same posterior for NUTS to sample (not the same
chains: NUTS runs in the internal frame, which depends on how the data were cut).

A model fitted from statistics keeps no rows, like a point fit of any kind: what needs
the training rows (``model_``, ``idata_``'s ``observed_data`` and ``log_likelihood``
groups, so ``az.loo`` and ``bg.compare``, the predictive samples and checks, exact
LOO) takes them as arguments (``build_model(X, y)``, ``add_log_likelihood(X, y)``,
``sample_posterior_predictive(X=X, y=y)``, ``bg.compare(models, X=X, y=y)``, ...) and
raises a ``ValueError`` saying so without them (:mod:`bayesgen.inference.rows`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.utils.validation import check_is_fitted

from bayesgen.scale.pieces import (
    batch_piece,
    commit,
    merge_pieces,
    same_labels,
    stored_piece,
    template,
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
def partial_fit(self, X: Any, y: Any, classes: Any = None, sample_weight: Any = None):
    """Update the model with one batch of rows (scikit-learn's ``partial_fit``).

    The batch's sufficient statistics are added to those of the batches before it (or
    of the earlier ``fit``) and the model is refitted from the sum: after any sequence
    of batches the estimator equals one ``fit`` on their concatenation (up to rounding;
    the conjugate posterior with the same draws for the same ``random_state``;
    ``method="mcmc"`` samples the same posterior, re-running NUTS after every batch, so
    each call costs a full MCMC run: stream with a point method or "conjugate", then
    ``set_params(method="mcmc")`` before the last batch). Memory is that of the statistics,
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
        features or a column read as another dtype (e.g. numbers where earlier batches
        had text), or any invalid row; the estimator is then left unchanged. New values
        of a text column are fine: the levels are re-coded to the sorted union.

    Notes
    -----
    The model keeps no rows: ``model_``, the ``observed_data`` and ``log_likelihood``
    groups and the posterior predictive replicates take the training rows as arguments
    (``build_model(X, y)``, ``add_log_likelihood(X, y)``, ...; see
    :mod:`bayesgen.inference.rows`). Until the model has been fitted
    once, statistics it cannot be fitted from while a class has fewer than d + 2
    samples (``method="mle"`` or KernelNB with a class not seen yet, QDA's MLE with
    fewer than d + 1 rows in a class) are kept with a ``DataWarning`` quoting the
    reason, and the estimator stays unfitted (``NotFittedError``) until a batch
    completes them; the default ``method="map"`` needs no sample in any class.
    """
    from bayesgen.scale import dask_input

    method = self._check_params()
    first = getattr(self, "_stats", None) is None
    classes = _resolve_classes(self, classes, first)
    tmpl = template(self, fitted=not first)
    if dask_input.is_dask(X, y, sample_weight):
        piece = dask_input.collection_piece(tmpl, X, y, sample_weight, method, classes,
                                       reset=first)
    else:
        piece = batch_piece(tmpl, X, y, sample_weight, method, classes, reset=first)
    if not first:
        piece = merge_pieces(stored_piece(self), piece)
    commit(self, method, piece, defer="_params" not in vars(self))
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
