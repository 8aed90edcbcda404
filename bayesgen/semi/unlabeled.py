"""Unlabelled rows (semi-supervised learning): reading them and dispatching the fit.

An entry of y that is None, NaN or ``pd.NA`` marks an unlabelled row, and so does the
estimator's ``unlabeled`` value when it is set (``unlabeled=-1``: scikit-learn's
``semi_supervised`` convention; not the default, since -1 is a common real label).
``classes_`` are the labels of the labelled rows only.

A generative classifier learns from unlabelled rows through their marginal likelihood
``p(x) = sum_k pi_k p(x | y=k, theta)``. With lambda = ``unlabeled_weight`` in [0, 1]
(Nigam, McCallum, Thrun & Mitchell 2000) the objective is

    l(theta, pi) = sum_{n labelled} w_n log(pi_{y_n} p(x_n | y_n, theta))
                   + lambda sum_{n unlabelled} w_n log sum_k pi_k p(x_n | y=k, theta)
                   [+ log p(theta) + log p(pi)   for "map"].

Everything is a sum of per-class statistics: the labelled rows' statistics are fixed,
and an unlabelled row enters class k with weight ``lambda w_n r_nk`` (``r_nk`` its
responsibility), i.e. the family's own ``stats`` with those weights. The methods:

``"mle"``, ``"map"``
    EM (:mod:`bayesgen.semi.em`), started at the labelled-only fit; ``n_iter_`` and
    ``em_objective_`` (the objective above, never decreasing) are set.
``"conjugate"``
    Data augmentation (:mod:`bayesgen.semi.augmentation`): the unlabelled rows' classes given
    the parameters, the parameters from the conjugate posterior of the completed
    statistics; chains, R-hat and ESS as for NUTS. lambda must be 0 or 1: a power
    likelihood of a *mixture* has no augmentation with conjugate steps (tempering each
    component instead would be a different posterior), so 0 < lambda < 1 is a
    ``ValueError`` that points to "mcmc".
``"mcmc"``
    NUTS on the labelled statistics plus ``lambda * sum_n w_n logsumexp_k(...)`` of the
    unlabelled block (:mod:`bayesgen.semi.nuts`): the power (tempered) posterior for
    lambda < 1. The chains start at the local mode reached from the labelled-only
    posterior mode (like EM from the labelled-only fit), not at the prior's centre,
    where they could settle in a label-swapped mode.

The prior's data-aware defaults (prior means and scales, ``cov_dof="auto"``) are
resolved once from all rows (:func:`bayesgen.semi.em.resolve_prior`: the unlabelled
rows weighted by their responsibilities under the labelled-only MAP fit) and held fixed;
lambda = 0 is exactly the labelled-only fit, prior included. Without unlabelled rows
nothing here runs and every fit is as before. ``model_``, ``idata_``'s ``observed_data`` and
``log_likelihood`` hold the labelled rows (``log p(x_n, y_n | theta)``, so ``bg.compare``
compares fits of the same labelled rows). ``partial_fit``, ``bg.merge`` and Dask fits
accept labelled rows only (EM and augmentation revisit every unlabelled row at every
iteration: no fixed-size statistics summarise them). KernelNB and MixedNB's kernel
parts keep the labelled rows as kernel centres (bandwidths by their leave-one-out
criterion) and take the unlabelled rows through the same mixture likelihood, with EM
in :mod:`bayesgen.semi.kernel`; they have no "conjugate" method.
"""

from __future__ import annotations

from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from typing import Any

import numpy as np

from bayesgen.data import sparse
from bayesgen.utils.threads import no_spin


@dataclass
class Unlabeled:
    """The unlabelled rows of a training batch.

    Attributes
    ----------
    X : ndarray or sparse (m, d)
        Rows in the user's units (after the family's checks).
    Z : ndarray or sparse (m, d)
        The same rows in the internal frame of the fit.
    w : ndarray (m,)
        Their sample weights.
    """

    X: Any
    Z: Any
    w: np.ndarray


# ------------------------------------------------------------------ labels
def _as_array(y: Any) -> np.ndarray:
    if hasattr(y, "to_numpy") and not isinstance(y, np.ndarray):  # pandas, polars
        try:
            import pandas as pd

            if isinstance(y, pd.Series | pd.DataFrame) and bool(np.any(pd.isna(y))):
                return np.asarray(y.to_numpy(dtype=object)).reshape(-1)
        except ImportError:  # pragma: no cover (pandas is a dependency)
            pass
        return np.asarray(y.to_numpy()).reshape(-1)
    if isinstance(y, list | tuple):
        values = np.empty(len(y), dtype=object)
        values[:] = list(y)
        kinds = {type(v) for v in y}
        if all(issubclass(k, int | float | np.number) for k in kinds):
            return np.asarray(y)
        return values
    return np.asarray(y)


def split_labels(y: Any, marker: Any = None) -> tuple[Any, np.ndarray | None]:
    """Find the unlabelled entries of y.

    Parameters
    ----------
    y : array-like (n,)
        Labels; None, NaN, ``pd.NA`` (and ``marker`` when given) mark unlabelled rows.
    marker : label or None
        The estimator's ``unlabeled`` parameter.

    Returns
    -------
    y : array-like (n,)
        ``y`` itself when no entry is unlabelled (so that a fully labelled fit is
        unchanged), else an array whose unlabelled entries hold a labelled value
        (placeholders for scikit-learn's checks; they are dropped afterwards).
    mask : ndarray (n,) of bool, or None
        True at the unlabelled rows; None when there are none.
    """
    if y is None:
        return y, None
    values = _as_array(y)
    if values.ndim != 1 or values.size == 0:
        return y, None
    mask = np.zeros(values.shape[0], dtype=bool)
    if values.dtype.kind in "fcO":
        import pandas as pd

        mask |= np.asarray(pd.isna(values), dtype=bool)
    if marker is not None and not (isinstance(marker, float) and marker != marker):
        mask |= _equal(values, marker)
    if not mask.any():
        return y, None
    if mask.all():
        raise ValueError(
            "y: every row is unlabelled (None, NaN, pd.NA"
            + ("" if marker is None else f" or unlabeled={marker!r}")
            + "); a semi-supervised fit needs labelled rows of at least two classes."
        )
    filled = values.copy()
    filled[mask] = values[~mask][0]
    if filled.dtype == object:  # the placeholders may have kept object dtype
        labelled = values[~mask]
        if all(isinstance(v, int | np.integer) and not isinstance(v, bool) for v in labelled):
            filled = filled.astype(np.int64)
    return filled, mask


def _equal(values: np.ndarray, marker: Any) -> np.ndarray:
    """Elementwise ``values == marker`` (False where types do not compare)."""
    try:
        eq = np.asarray(values == marker)
    except (TypeError, ValueError):
        eq = None
    if eq is None or eq.shape != values.shape:
        eq = np.array([_same(v, marker) for v in values], dtype=bool)
    return eq.astype(bool)


def _same(v: Any, marker: Any) -> bool:
    try:
        return bool(v == marker)
    except (TypeError, ValueError):
        return False


def reject_streaming(mask: np.ndarray | None, who: str) -> None:
    """``ValueError`` for unlabelled rows in ``partial_fit`` or a Dask fit."""
    if mask is None:
        return
    raise ValueError(
        f"{who}: y has {int(mask.sum())} unlabelled row(s) (None, NaN, pd.NA or the "
        "'unlabeled' value). partial_fit, bg.merge and Dask fits accept labelled rows "
        "only: semi-supervised EM and data augmentation revisit every unlabelled row at "
        "every iteration. Fit them with fit(X, y) on all rows at once."
    )


def split_rows(X: Any, Z: Any, y_index: np.ndarray, weights: np.ndarray,
               mask: np.ndarray) -> tuple[Any, Any, np.ndarray, np.ndarray, Unlabeled]:
    """Labelled ``(X, Z, y_index, weights)`` and the :class:`Unlabeled` rows."""
    keep = ~mask
    rows_l, rows_u = np.flatnonzero(keep), np.flatnonzero(mask)

    def take(A, rows):
        return A[rows] if not sparse.is_sparse(A) else A.tocsr()[rows]

    unl = Unlabeled(take(X, rows_u), take(Z, rows_u), weights[rows_u])
    return take(X, rows_l), take(Z, rows_l), y_index[rows_l], weights[rows_l], unl


def check_labelled(counts: np.ndarray, classes: np.ndarray) -> None:
    """``ValueError`` naming a class whose labelled rows have no weight."""
    empty = np.flatnonzero(~(counts > 0))
    if empty.size:
        raise ValueError(
            f"y: class {np.asarray(classes)[empty[0]].item()!r} has no labelled row of "
            "positive weight; every class needs labelled rows for a semi-supervised fit "
            "(unlabelled rows "
            "cannot name a class nobody labelled)."
        )


# ------------------------------------------------------------------ fit
def fit_batch(estimator, method: str, family, batch) -> None:
    """The second half of ``fit``: ``_fit_statistics`` for a fully labelled batch, a
    semi-supervised fit when the batch has unlabelled rows."""
    unl = getattr(batch, "unlabeled", None)
    for stale in ("n_iter_", "em_objective_", "unlabeled_X_", "n_unlabeled_"):
        estimator.__dict__.pop(stale, None)  # from an earlier fit
    if unl is None:
        with no_spin() if method in ("mle", "map") else nullcontext():  # d x d algebra
            estimator._fit_statistics(method, family, batch.classes, batch.stats,
                                      batch.counts, train=(batch.X, batch.y_index))
        return
    check_labelled(batch.counts, batch.classes)
    estimator.n_unlabeled_ = int(unl.Z.shape[0])  # set only when there are some
    lam = float(estimator.unlabeled_weight)
    if not 0.0 <= lam <= 1.0:  # also checked by the parameter constraints
        raise ValueError(f"unlabeled_weight must be in [0, 1]; got {lam!r}.")
    if method == "conjugate" and 0.0 < lam < 1.0:
        raise ValueError(
            f"unlabeled_weight={lam!r} is not available with method='conjugate': a power "
            "of the unlabelled rows' mixture likelihood has no data augmentation with "
            "conjugate steps. Use 0 or 1, or method='mcmc' (which samples that tempered "
            "posterior) or 'map'."
        )
    train = (batch.X, batch.y_index)
    from bayesgen.semi import augmentation, em, kernel

    start = em.start_stats(estimator, family, batch, lam)
    with _fixed_prior(family, em.resolve_prior(estimator, family, batch, start, lam)):
        if method in ("mle", "map"):  # EM; kernel bandwidths: bayesgen.semi.kernel
            (kernel.fit if kernel.has_kernel(family) else em.fit)(
                estimator, method, family, batch, lam)
        elif method == "conjugate":
            augmentation.fit(estimator, family, batch, lam)
        else:
            estimator._semi = {"Z": unl.Z, "w": unl.w, "lam": lam}
            try:
                estimator._fit_statistics(method, family, batch.classes, start,
                                          batch.counts, train=train)
            finally:
                estimator.__dict__.pop("_semi", None)


@contextmanager
def _fixed_prior(family, prior: dict | None):
    """``family.prior`` returns ``prior`` inside the block (the prior resolved from all
    rows, :func:`bayesgen.semi.em.resolve_prior`); unchanged when None."""
    if prior is None:
        yield
        return
    family.prior = lambda stats: prior
    try:
        yield
    finally:
        del family.prior
