"""Input checks shared by all estimators and families.

Every check raises a ``ValueError`` whose message names the problem and, where there
is one, the fix. Support-specific checks (real, count, binary, categorical data) live
here so that families only call them.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np
from sklearn.utils.multiclass import check_classification_targets

METHODS = ("mle", "map", "conjugate", "mcmc")
#: methods whose fit is a posterior (draws): "gibbs" is MixtureDA's data augmentation
POSTERIOR_METHODS = ("conjugate", "mcmc", "gibbs")


def encode_labels(y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Encode class labels as integers ``0..K-1``.

    Parameters
    ----------
    y : ndarray of shape (n,)
        Hashable labels: integers of any width (uint64 >= 2**63 included), bools,
        floats with whole-number values, strings, or an object array of either
        strings or numbers (not both).

    Returns
    -------
    classes : ndarray of shape (K,)
        Sorted unique labels, in the dtype of ``y``.
    y_index : ndarray of shape (n,), int
        ``classes[y_index] == y``.

    Raises
    ------
    ValueError
        Labels mixing strings and numbers (they have no order), continuous float
        labels (scikit-learn's "Unknown label type"), or a single class.
    """
    if y.dtype.kind in "iu" and y.size and int(y.max()) - int(y.min()) < 4 * y.size + 1000:
        classes, y_index = _encode_int_range(y)
    else:
        if y.dtype == object:
            y = _check_label_types(y)
        try:
            check_classification_targets(y)
        except TypeError as err:  # e.g. bytes labels
            raise ValueError(str(err)) from None
        try:
            classes, y_index = np.unique(y, return_inverse=True)
        except TypeError as err:
            raise ValueError(
                f"y holds labels that cannot be sorted ({err}); give labels of one type "
                "(all strings or all numbers)."
            ) from None
    if classes.size < 2:
        raise ValueError(
            f"Classifier can't train when only one class is present: y has 1 class "
            f"({classes[0]!r}); a generative classifier needs samples of at least 2 classes."
        )
    return classes, y_index.reshape(-1)


def label(labels: np.ndarray | None, k: int) -> str:
    """Human-readable name of class k (an index into ``labels``, the classes) for error
    messages: the label's repr, or ``k`` itself without labels."""
    if labels is None:
        return str(k)
    value = labels[k]
    return repr(value.item() if isinstance(value, np.generic) else value)


def _encode_int_range(y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Integer labels spanning a short range: count them in O(n) (``np.unique`` sorts,
    O(n log n)). Offsets from the minimum are computed without overflow for every
    integer dtype (int8 spanning 255, uint64 at and above 2**63)."""
    low = y.min()
    if y.dtype.kind == "u":
        offset = (y - low).astype(np.intp)  # y >= low: no wrap-around
    else:
        offset = y.astype(np.int64) - np.int64(low)
    present = np.bincount(offset) > 0
    codes = np.flatnonzero(present)
    if y.dtype.kind == "u":
        classes = codes.astype(y.dtype) + low
    else:
        classes = (codes + np.int64(low)).astype(y.dtype)
    return classes, (np.cumsum(present) - 1)[offset]


def check_label_sequence(y: Any) -> Any:
    """Labels given as a list or tuple are checked like an object array before NumPy
    converts them: a list mixing strings and numbers (``["a", 1]``) would otherwise
    become the strings ``["a", "1"]`` silently. Returns ``y`` unchanged."""
    if isinstance(y, list | tuple) and y and not isinstance(y[0], list | tuple):
        values = np.empty(len(y), dtype=object)
        values[:] = list(y)
        _check_label_types(values)
    return y


def _check_label_types(y: np.ndarray) -> np.ndarray:
    """Object labels must be all strings or all numbers (NaN, a missing label, aside).

    Returns ``y``, or for labels that are all numbers the numeric array numpy infers
    for them (int64, float64, ...), which scikit-learn's target checks accept.
    """
    types = set(map(type, y))
    has_str = any(issubclass(t, str | bytes) for t in types)
    has_number = any(issubclass(t, numbers.Number) for t in types)
    if has_number and not has_str and all(issubclass(t, numbers.Number) for t in types):
        numeric = np.array(y.tolist())
        return numeric if numeric.dtype.kind in "biuf" else y
    if not (has_str and has_number):
        return y

    def is_number(v: Any) -> bool:
        return isinstance(v, numbers.Number) and not (isinstance(v, float) and v != v)

    number = next((v for v in y if is_number(v)), None)
    if number is None:  # the only numbers are NaN
        return y
    string = next(v for v in y if isinstance(v, str | bytes))
    raise ValueError(
        f"y mixes strings and numbers (e.g. {string!r} and {number!r}), which have no "
        "common order; convert the labels to one type, e.g. y.astype(str)."
    )


def check_sample_weight(sample_weight: Any, n_samples: int, method: str = "map") -> np.ndarray:
    """Validate ``sample_weight`` and return it as float64 of shape (n,).

    ``None`` gives unit weights. Weights must be finite and non-negative, and not all
    zero. Weights whose total exceeds :data:`WEIGHT_TOTAL_MAX` (or overflows float64)
    are divided by a power of two (exact in floating point) for ``method="mle"``, whose
    estimates do not change under a common factor, so that their total lies in
    (n/2, n] (``class_count_`` is then the rescaled count); for the other methods the
    scale matters (weight w is w copies of a row against the prior), so a total beyond
    the float64 range is an error.
    """
    if sample_weight is None:
        return np.ones(n_samples)
    try:
        if np.isscalar(sample_weight):
            sample_weight = np.full(n_samples, float(sample_weight))
        w = np.asarray(sample_weight, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise ValueError(f"sample_weight must be numbers; got {err}.") from None
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
    with np.errstate(over="ignore"):
        total = w.sum()
    if not total <= WEIGHT_TOTAL_MAX:
        if method != "mle":
            if np.isfinite(total):
                return w
            raise ValueError(
                f"sample_weight sums to more than the float64 range (largest weight "
                f"{w.max():.3g}, {n_samples} rows). Rescale it: method={method!r} reads a "
                "weight w as w copies of the row, so only the MLE ignores a common factor."
            )
        w = np.ldexp(w, -int(np.frexp(w.max())[1]))  # max weight in [0.5, 1): no overflow
        w = np.ldexp(w, int(np.frexp(n_samples / w.sum())[1]) - 1)  # total in (n/2, n]
    return w


#: total weight above which the MLE rescales ``sample_weight`` (far from overflow
#: even after multiplying by squared feature values)
WEIGHT_TOTAL_MAX = 2.0**128


def check_stats(stats: Any, X: np.ndarray, weights: np.ndarray, estimator_name: str) -> None:
    """Raise ``ValueError`` if the sufficient statistics hold NaN or infinity.

    That happens when X holds infinity or NaN (families whose support check lets them
    through, see ``capabilities.support_check_finds_nan``), or when finite data overflow float64
    once weighted, summed or squared (features near 1e154, weights near 1e308).
    """
    if _all_finite(stats):
        return
    from bayesgen.data.sparse import values

    X = values(X)  # the stored values of sparse X
    check_finite(X, estimator_name)
    raise ValueError(
        f"{estimator_name}: the sufficient statistics of X overflow float64 (largest "
        f"|x| = {float(np.max(np.abs(X), initial=0.0)):.3g}, total sample_weight = "
        f"{float(weights.sum()):.3g}). Rescale the features (e.g. StandardScaler) or "
        "sample_weight."
    )


def _all_finite(value: Any) -> bool:
    """True unless a float array or number nested in dicts/lists is NaN or infinite."""
    if isinstance(value, dict):  # "X": data kept as statistics (KernelNB), NaN = missing
        return all(_all_finite(v) if k != "X" else not np.isinf(v).any()
                   for k, v in value.items())
    if isinstance(value, list | tuple):
        return all(_all_finite(v) for v in value)
    if isinstance(value, np.ndarray | float | np.floating):
        arr = np.asarray(value)
        return arr.dtype.kind != "f" or bool(np.isfinite(arr).all())
    return True


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
    try:
        a = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(
            f"{name} must be a positive number or one positive number per {what}; got "
            f"{value!r}."
        ) from None
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
    try:
        L = np.asarray(loss, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"loss must be a K x K matrix of numbers; got {loss!r}.") from None
    if L.shape != (n_classes, n_classes):
        raise ValueError(
            f"loss must be a {n_classes} x {n_classes} matrix (truth x prediction, in the "
            f"order of classes_); got shape {L.shape}."
        )
    if not np.all(np.isfinite(L)):
        raise ValueError("loss contains NaN or infinity; give finite costs.")
    if np.any(L < 0):
        i, j = np.argwhere(L < 0)[0]
        raise ValueError(
            f"loss must be non-negative (a cost); loss[{i}, {j}] = {L[i, j]:g}. Shift the "
            "matrix (adding a constant to a row does not change the decisions)."
        )
    return L


def check_finite(X: np.ndarray, estimator_name: str) -> bool:
    """Raise ``ValueError`` if X holds infinity (one pass, no temporaries on the common
    path). NaN is a missing value (:mod:`bayesgen.data.missing`) and passes. Returns
    whether the sum of X is finite (then X holds no NaN either)."""
    with np.errstate(over="ignore", invalid="ignore"):  # finite values may sum to inf
        total = np.add.reduce(X, axis=None)
    if np.isfinite(total):
        return True
    if np.isinf(X).any():
        raise ValueError(
            f"Input X contains infinity; {estimator_name} does not support infinite "
            "values (NaN, None or NA mark a missing value). Replace or drop them first."
        )
    return False


def _nanmin_ok(X: np.ndarray) -> bool:
    """After a minimum that is not >= 0: True when that came only from NaN (missing
    values) and the observed values are >= 0 (a second pass, only with missing
    values)."""
    if not np.isnan(X).any():
        return False
    observed = X[~np.isnan(X)]
    return not observed.size or bool(observed.min() >= 0)


def check_nonnegative(X: Any, estimator_name: str) -> None:
    """Raise ``ValueError`` if X holds negative values (NaN, a missing value, passes).

    X may be scipy.sparse: then only its stored values ``X.data`` are checked.
    """
    from bayesgen.data.sparse import values

    X = values(X)  # X.data of sparse X: the implicit zeros pass every support check
    if X.size and not X.min() >= 0 and not _nanmin_ok(X):  # NaN propagates
        check_finite(X, estimator_name)
        raise ValueError(
            f"Negative values in data passed to {estimator_name}: its features are "
            "counts or frequencies and must be >= 0."
        )


def check_counts(X: Any, method: str, estimator_name: str) -> Any:
    """Count features: non-negative, real term weights allowed (TF-IDF, as in
    scikit-learn) for every method; returns X (dense or sparse).

    The Dirichlet and Gamma posteriors are defined for real-valued counts: the
    likelihood kernel ``prod_j theta_j^x_j`` (``rate^x exp(-rate)``) is what the
    posterior and the closed-form predictive use, with ``x!`` as ``Gamma(x + 1)``. Only
    the generative ``model_`` (drawing whole-number counts) needs integers, and says
    so (:func:`bayesgen.families.dirichlet.observed_counts`). ``method`` is kept for the
    callers' symmetry."""
    check_nonnegative(X, estimator_name)
    return X


def check_binary(X: Any, estimator_name: str) -> None:
    """Raise ``ValueError`` unless X (or the stored values of sparse X) holds only 0 and 1."""
    from bayesgen.data.sparse import values

    X = values(X)
    if X.size and not np.all((X == 0) | (X == 1) | np.isnan(X)):
        raise ValueError(
            f"{estimator_name} with binarize=None needs X to hold only 0 and 1; found "
            "other values. Pass binarize=<threshold> (x > threshold becomes 1)."
        )
