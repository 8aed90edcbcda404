"""Unlabeled rows in y: which entries have no label, and the rows split off.

None, NaN, ``pd.NA`` or the estimator's ``unlabeled`` value mark an unlabeled row.
:func:`split_labels` finds them before scikit-learn's label checks, :func:`split_rows`
separates the :class:`Unlabeled` rows after validation, and :func:`reject_streaming`
refuses them in ``partial_fit``, ``bg.merge`` and Dask fits (:mod:`bayesgen.semi`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from bayesgen.data import sparse


@dataclass
class Unlabeled:
    """The unlabeled rows of a training batch.

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
    """Find the unlabeled entries of y.

    Parameters
    ----------
    y : array-like (n,)
        Labels; None, NaN, ``pd.NA`` (and ``marker`` when given) mark unlabeled rows.
    marker : label or None
        The estimator's ``unlabeled`` parameter.

    Returns
    -------
    y : array-like (n,)
        ``y`` itself when no entry is unlabeled (so that a fully labeled fit is
        unchanged), else an array whose unlabeled entries hold a labeled value
        (placeholders for scikit-learn's checks; they are dropped afterwards).
    mask : ndarray (n,) of bool, or None
        True at the unlabeled rows; None when there are none.
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
            "y: every row is unlabeled (None, NaN, pd.NA"
            + ("" if marker is None else f" or unlabeled={marker!r}")
            + "); a semi-supervised fit needs labeled rows of at least two classes."
        )
    filled = values.copy()
    filled[mask] = values[~mask][0]
    if filled.dtype == object:  # the placeholders may have kept object dtype
        labeled = values[~mask]
        if all(isinstance(v, int | np.integer) and not isinstance(v, bool) for v in labeled):
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
    """``ValueError`` for unlabeled rows in ``partial_fit`` or a Dask fit."""
    if mask is None:
        return
    raise ValueError(
        f"{who}: y has {int(mask.sum())} unlabeled row(s) (None, NaN, pd.NA or the "
        "'unlabeled' value). partial_fit, bg.merge and Dask fits accept labeled rows "
        "only: semi-supervised EM and data augmentation revisit every unlabeled row at "
        "every iteration. Fit them with fit(X, y) on all rows at once."
    )


def split_rows(X: Any, Z: Any, y_index: np.ndarray, weights: np.ndarray,
               mask: np.ndarray) -> tuple[Any, Any, np.ndarray, np.ndarray, Unlabeled]:
    """Labeled ``(X, Z, y_index, weights)`` and the :class:`Unlabeled` rows."""
    keep = ~mask
    rows_l, rows_u = np.flatnonzero(keep), np.flatnonzero(mask)

    def take(A, rows):
        return A[rows] if not sparse.is_sparse(A) else A.tocsr()[rows]

    unl = Unlabeled(take(X, rows_u), take(Z, rows_u), weights[rows_u])
    return take(X, rows_l), take(Z, rows_l), y_index[rows_l], weights[rows_l], unl
