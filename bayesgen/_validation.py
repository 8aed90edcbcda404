"""Input checks shared by all estimators and families.

Every check raises a ``ValueError`` whose message names the problem and, where there
is one, the fix. Support-specific checks (real, count, binary, categorical data) live
here so that families only call them.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
from sklearn.utils.multiclass import check_classification_targets

METHODS = ("mle", "map", "conjugate", "mcmc")
POSTERIOR_METHODS = ("conjugate", "mcmc")


def check_method(method: Any, allowed: tuple[str, ...] = METHODS) -> str:
    """Return ``method`` if it is one of ``allowed``, else raise ``ValueError``."""
    if not isinstance(method, str) or method not in allowed:
        raise ValueError(
            f"method must be one of {', '.join(repr(m) for m in allowed)}; got {method!r}."
        )
    return method


def encode_labels(y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Encode class labels as integers ``0..K-1``.

    Parameters
    ----------
    y : ndarray of shape (n,)
        Hashable labels (numbers or strings).

    Returns
    -------
    classes : ndarray of shape (K,)
        Sorted unique labels.
    y_index : ndarray of shape (n,), int
        ``classes[y_index] == y``.
    """
    if y.dtype.kind in "iu" and y.size and int(y.max()) - int(y.min()) < 4 * y.size + 1000:
        # integer labels: counting is O(n), sorting (np.unique) is O(n log n)
        low = int(y.min())
        present = np.bincount(y - low) > 0
        classes = (np.flatnonzero(present) + low).astype(y.dtype)
        y_index = (np.cumsum(present) - 1)[y - low]
    else:
        check_classification_targets(y)
        classes, y_index = np.unique(y, return_inverse=True)
    if classes.size < 2:
        raise ValueError(
            f"Classifier can't train when only one class is present: y has 1 class "
            f"({classes[0]!r}); a generative classifier needs samples of at least 2 classes."
        )
    return classes, y_index.reshape(-1)


def check_sample_weight(sample_weight: Any, n_samples: int) -> np.ndarray:
    """Validate ``sample_weight`` and return it as float64 of shape (n,).

    ``None`` gives unit weights. Weights must be finite and non-negative, and not all
    zero.
    """
    if sample_weight is None:
        return np.ones(n_samples)
    if np.isscalar(sample_weight):
        sample_weight = np.full(n_samples, float(sample_weight))
    w = np.asarray(sample_weight, dtype=np.float64)
    if w.ndim != 1 or w.shape[0] != n_samples:
        raise ValueError(
            f"sample_weight must have shape ({n_samples},), one weight per sample; "
            f"got shape {w.shape}."
        )
    if not np.all(np.isfinite(w)):
        raise ValueError("sample_weight contains NaN or infinity.")
    if np.any(w < 0):
        raise ValueError("sample_weight must be non-negative; found negative weights.")
    if not np.any(w > 0):
        raise ValueError("sample_weight is zero for every sample; nothing to fit.")
    return w


def check_concentration(value: Any, size: int, name: str, what: str) -> np.ndarray:
    """Return a positive concentration vector of shape (size,) from a scalar or array.

    Parameters
    ----------
    value : float or array-like
        Scalar (broadcast) or one value per ``what``.
    size : int
        Required length.
    name, what : str
        Parameter name and what each entry is for, used in error messages.
    """
    a = np.asarray(value, dtype=np.float64)
    if a.ndim == 0:
        a = np.full(size, float(a))
    if a.shape != (size,):
        raise ValueError(
            f"{name} must be a scalar or have one value per {what} (shape ({size},)); "
            f"got shape {a.shape}."
        )
    if not np.all(np.isfinite(a)) or np.any(a <= 0):
        raise ValueError(f"{name} must be finite and > 0; got {a.tolist()}.")
    return a


def check_loss(loss: Any, n_classes: int) -> np.ndarray | None:
    """Validate a K x K loss matrix (``loss[i, j]`` = cost of predicting j when truth is i)."""
    if loss is None:
        return None
    L = np.asarray(loss, dtype=np.float64)
    if L.shape != (n_classes, n_classes):
        raise ValueError(
            f"loss must be a {n_classes} x {n_classes} matrix (truth x prediction, in the "
            f"order of classes_); got shape {L.shape}."
        )
    if not np.all(np.isfinite(L)):
        raise ValueError("loss contains NaN or infinity.")
    return L


def check_finite(X: np.ndarray, estimator_name: str) -> None:
    """Raise ``ValueError`` if X holds NaN or infinity (one pass, no temporaries)."""
    total = np.add.reduce(X, axis=None)
    if not np.isfinite(total):
        bad = "NaN" if np.isnan(X).any() else "infinity"
        raise ValueError(
            f"Input X contains {bad}; {estimator_name} does not support missing or "
            "infinite values. Impute or drop them first."
        )


_POOL: ThreadPoolExecutor | None = None


def _min(X: np.ndarray) -> float:
    """``X.min()``; large arrays are split by rows over the available cores (numpy
    releases the GIL in reductions), which roughly halves this pass over memory on
    two cores. NaN propagates through the minimum either way."""
    global _POOL
    workers = min(os.cpu_count() or 1, 8)
    if X.size < 2**21 or workers < 2 or X.ndim != 2:
        return X.min()
    if _POOL is None:
        _POOL = ThreadPoolExecutor(max_workers=workers)
    blocks = np.array_split(np.arange(X.shape[0]), workers)
    mins = list(_POOL.map(lambda rows: X[rows[0] : rows[-1] + 1].min(), blocks))
    return np.min(mins)


def _stored_values(X: Any) -> np.ndarray:
    """X itself, or ``X.data`` for scipy.sparse X (the implicit zeros pass every
    support check)."""
    from bayesgen._sparse import values

    return values(X)


def check_nonnegative(X: Any, estimator_name: str) -> None:
    """Raise ``ValueError`` if X holds negative (or NaN) values.

    X may be scipy.sparse: then only its stored values ``X.data`` are checked.
    """
    X = _stored_values(X)
    if X.size and not _min(X) >= 0:
        check_finite(X, estimator_name)
        raise ValueError(
            f"Negative values in data passed to {estimator_name}: its features are "
            "counts or frequencies and must be >= 0."
        )


def check_integer_counts(X: Any, estimator_name: str) -> None:
    """Raise ``ValueError`` unless X (dense, or the stored values of sparse X) holds
    non-negative whole numbers."""
    check_nonnegative(X, estimator_name)
    X = _stored_values(X)
    if X.size and not np.array_equal(X, np.floor(X)):
        raise ValueError(
            f"{estimator_name} with a posterior method needs whole-number counts; X has "
            "non-integer values. Round them, or use method='mle'/'map', which accept "
            "non-negative real term weights."
        )


def check_counts(X: Any, method: str, estimator_name: str) -> Any:
    """Count features: non-negative for point methods (real term weights allowed, as in
    scikit-learn), whole numbers for posterior methods; returns X (dense or sparse)."""
    if method in POSTERIOR_METHODS:
        check_integer_counts(X, estimator_name)
    else:
        check_nonnegative(X, estimator_name)
    return X


def check_binary(X: Any, estimator_name: str) -> None:
    """Raise ``ValueError`` unless X (or the stored values of sparse X) holds only 0 and 1."""
    X = _stored_values(X)
    if X.size and not np.all((X == 0) | (X == 1)):
        raise ValueError(
            f"{estimator_name} with binarize=None needs X to hold only 0 and 1; found "
            "other values. Pass binarize=<threshold> (x > threshold becomes 1)."
        )
