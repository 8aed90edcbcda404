"""Missing values: NaN in the float64 matrix, integrated out exactly.

A missing entry is NaN in the validated X (None, ``pd.NA`` and polars null are written
as NaN by :mod:`bayesgen.data.tables`; a stored NaN of a sparse matrix is missing, its
implicit zeros are observed); infinity stays a ``ValueError``. Missingness is taken as
ignorable, so a row's likelihood is its marginal over the missing entries: a factorised
family drops the missing factors and fits on the statistics of the observed entries
(``observed`` (K, d), where a complete fit uses ``count[:, None]``). A family without
``capabilities.missing`` gets a ``ValueError`` from :func:`check_supported`. Here:
detection (:func:`mask`), zero filling (:func:`filled`), observed counts
(:func:`class_observed`, :func:`observed_count`), the checks and masked reductions.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator
from typing import Any

import numpy as np

from bayesgen.data import sparse

#: the maxima and minima found inside the current :func:`scan_scope`:
#: id(array) -> (array, (max, min)); an entry keeps its array alive, so no id is reused
_SCANNED: contextvars.ContextVar[dict | None] = contextvars.ContextVar(
    "bayesgen_scanned", default=None
)


@contextlib.contextmanager
def scan_scope() -> Iterator[None]:
    """Remember, until the block ends, the maximum and minimum of every array that
    :func:`extremes` scans, so later checks of the same array (infinity, missing values,
    far rows) cost no pass over it. Opened around each fit and public prediction; nested
    scopes share the outer one; local to the thread or task (``contextvars``). Only code
    that does not write into the scanned arrays may run inside.
    """
    if _SCANNED.get() is not None:
        yield
        return
    token = _SCANNED.set({})
    try:
        yield
    finally:
        _SCANNED.reset(token)


def extremes(values: np.ndarray) -> tuple[float, float]:
    """``(max, min)`` of all entries of a non-empty float array; NaN for both when it
    holds NaN (NaN propagates through ``np.maximum`` and ``np.minimum``).

    Two reductions, no temporary array; inside a :func:`scan_scope` the answer is
    recorded for the array (the same object) and reused.
    """
    scanned = _SCANNED.get()
    entry = None if scanned is None else scanned.get(id(values))
    if entry is not None and entry[0] is values:
        return entry[1]
    result = _max_min(values)
    if scanned is not None:
        scanned[id(values)] = (values, result)
    return result


def _max_min(values: np.ndarray) -> tuple[float, float]:
    """``(values.max(), values.min())``: the scan of :func:`extremes`."""
    return float(values.max()), float(values.min())


def has_missing(X: Any) -> bool:
    """Whether X (dense, or the stored values of sparse X) holds NaN (:func:`extremes`,
    no pass for an array already scanned inside the current :func:`scan_scope`)."""
    values = sparse.values(X)
    if values.size == 0 or values.dtype.kind != "f":
        return False
    return bool(np.isnan(extremes(values)[0]))


def mask(X: Any):
    """Missing indicator of X, or None when nothing is missing.

    Dense X: a boolean ndarray (n, d). Sparse X: a CSR matrix of float64 ones at the
    stored NaN entries (its implicit zeros are observed).
    """
    if not has_missing(X):
        return None
    if sparse.is_sparse(X):
        X = X.tocsr()
        M = X.copy()
        M.data = np.isnan(X.data).astype(np.float64)
        M.eliminate_zeros()
        return M
    return np.isnan(X)


def filled(X: Any, value: float = 0.0) -> Any:
    """X with its NaN entries replaced by ``value`` (a copy; sparse stays sparse)."""
    if sparse.is_sparse(X):
        X = X.tocsr().copy()
        X.data = np.where(np.isnan(X.data), value, X.data)
        return X
    return np.where(np.isnan(X), value, X)


def observed_indicator(M, shape: tuple[int, int]) -> np.ndarray:
    """Dense float64 (n, d) indicator of the observed entries, 1 - M."""
    if M is None:
        return np.ones(shape)
    dense = M.toarray() if sparse.is_sparse(M) else M
    return 1.0 - dense


def missing_matmul(M, B: np.ndarray) -> np.ndarray:
    """``M @ B^T`` over the last axis for the missing indicator M (n, d), dense or
    sparse, and B (..., K, d): (..., n, K)."""
    if sparse.is_sparse(M):
        return sparse.matmul_t(M, B)
    return sparse.matmul_t(M.astype(np.float64), B)


# ------------------------------------------------------------ statistics
def class_observed(M, y: np.ndarray, w: np.ndarray, count: np.ndarray) -> np.ndarray:
    """Weighted number of observed entries per class and feature, (K, d):
    ``N_kj = N_k - sum_{n: y_n = k} w_n [x_nj missing]``.

    ``M`` is the missing indicator (:func:`mask`, not None), ``count`` (K,) the
    weighted class counts N_k. Clipped at 0 (rounding of weighted sums).
    """
    n_classes = count.shape[0]
    if sparse.is_sparse(M):
        lost = sparse.class_sums(M, y, w, n_classes)
    else:
        R = np.zeros((y.shape[0], n_classes))
        R[np.arange(y.shape[0]), y] = w
        lost = R.T @ M.astype(np.float64)
    return np.maximum(count[:, None] - lost, 0.0)


def class_observed_rows(M, y: np.ndarray, w: np.ndarray, n_classes: int) -> np.ndarray:
    """Number of observed rows of positive weight per class and feature, (K, d)."""
    positive = (w > 0).astype(np.float64)
    rows = np.bincount(y, weights=positive, minlength=n_classes)
    return class_observed(M, y, positive, rows)


def observed_count(stats: dict) -> np.ndarray:
    """Per class and feature weighted number of observed entries (K, d): the
    ``observed`` statistic when the data had missing entries, else ``count[:, None]``
    (broadcast to the shape of the per-feature statistics)."""
    if "observed" in stats:
        return stats["observed"]
    return stats["count"][:, None]


def with_observed(stats: dict, M, y: np.ndarray, w: np.ndarray, *, rows: bool = False) -> dict:
    """``stats`` plus ``observed`` (and ``observed_rows`` if ``rows``) when M is not
    None (data with missing entries); unchanged otherwise."""
    if M is None:
        return stats
    out = dict(stats, observed=class_observed(M, y, w, stats["count"]))
    if rows:
        out["observed_rows"] = class_observed_rows(M, y, w, stats["count"].shape[0])
    return out


def merge_observed(out: dict, a: dict, b: dict) -> dict:
    """Add the summed ``observed`` (and ``observed_rows``) of ``a`` and ``b`` to the
    merged statistics ``out`` when either side carries them."""
    for key, fallback in (("observed", "count"), ("observed_rows", "rows")):
        if key in a or key in b:
            d = _n_features(a)
            out[key] = _per_feature(a, key, fallback, d) + _per_feature(b, key, fallback, d)
    return out


def _n_features(stats: dict) -> int:
    for key in ("observed", "mean", "feature_count", "category_count"):
        if key in stats:
            return stats[key].shape[1]
    raise KeyError("statistics without a per-feature array")


def _per_feature(stats: dict, key: str, fallback: str, d: int) -> np.ndarray:
    if key in stats:
        return stats[key]
    base = stats.get(fallback, stats["count"])
    return np.repeat(np.asarray(base, dtype=np.float64)[:, None], d, axis=1)


# ---------------------------------------------------------------- checks
def check_supported(family, X: Any, who: str) -> None:
    """The one guard: ``ValueError`` naming the estimator if X has missing entries and
    its family does not handle them (``capabilities.missing``)."""
    if family.capabilities.missing or not has_missing(X):
        return
    raise ValueError(
        f"{who} does not support missing values yet: X holds NaN (or None, NA, null). "
        "Impute or drop them first, or use a naive Bayes estimator, which integrates "
        "missing features out."
    )


def check_infinite(X: Any, who: str) -> None:
    """``ValueError`` if X (stored values of sparse X) holds +-infinity; NaN is a
    missing value and allowed.

    The common path is :func:`extremes` (recorded for the later checks of the same
    array in the current :func:`scan_scope`): finite values show that X holds
    neither infinity nor NaN. Otherwise :func:`bayesgen.data.validation.check_finite`
    looks for infinity among the NaN.
    """
    from bayesgen.data.validation import check_finite

    values = sparse.values(X)
    if values.size == 0 or values.dtype.kind != "f":
        return
    high, low = extremes(values)
    if not (np.isfinite(high) and np.isfinite(low)):
        check_finite(values, who)  # raises on infinity; else X holds NaN (missing values)


def observed_counts(X: Any) -> np.ndarray:
    """Rows with an observed (non-NaN) entry per column of validated X (dense or
    sparse), (d,)."""
    n, d = X.shape
    if not has_missing(X):
        return np.full(d, n, dtype=np.int64)
    if sparse.is_sparse(X):
        X = X.tocsr()
        return n - np.bincount(X.indices[np.isnan(X.data)], minlength=d)
    return n - np.isnan(X).sum(axis=0)


def check_columns(n_observed: np.ndarray, names: Any, who: str) -> None:
    """``ValueError`` naming the first column without an observed entry, from the
    observed rows per column (:func:`observed_counts`)."""
    if np.all(n_observed > 0):
        return
    j = int(np.argmin(n_observed > 0))
    raise ValueError(
        f"{who}: column {column_name(names, j)} has no observed value (every entry is "
        "missing), so nothing can be learned about it. Drop the column."
    )


def column_name(names: Any, j: int) -> str:
    """A column's name for messages: its string name, or ``x{j}``."""
    if names is not None:
        return repr(str(names[j]))
    return f"x{j} (position {j})"


def require_observed(observed: np.ndarray, labels, who: str, minimum: float = 0.0,
                     names: Any = None) -> None:
    """MLE check: ``ValueError`` naming the class and feature of the first
    (class, feature) pair with at most ``minimum`` observed weight/rows."""
    bad = ~(observed > minimum)
    if not bad.any():
        return
    from bayesgen.data.validation import label

    empty = np.flatnonzero(bad.all(axis=1))
    if empty.size:  # nothing observed at all: the class has no data
        raise ValueError(
            f"{who} method='mle': class {label(labels, int(empty[0]))} has no data (no row "
            "of positive weight), so its maximum-likelihood estimate is undefined. Use "
            "method='map', 'conjugate' or 'mcmc', which fall back on the prior."
        )
    k, j = np.argwhere(bad)[0]
    raise ValueError(
        f"{who} method='mle': feature {column_name(names, int(j))} is never observed in "
        f"class {label(labels, int(k))} (every entry missing there), so its "
        "maximum-likelihood estimate is undefined. Use method='map', 'conjugate' or "
        "'mcmc', which fall back on the prior."
    )


# ------------------------------------------------------------ entry points
def check_X(estimator, family, X: Any, method: str, *, reset: bool = False) -> Any:
    """The family's support checks (:meth:`check_X`) after the missing-value ones: the
    guard (:func:`check_supported`) and, at fit (``reset``), all-missing columns."""
    who = type(estimator).__name__
    check_supported(family, X, who)
    if reset and X.shape[0]:
        check_columns(observed_counts(X), getattr(estimator, "feature_names_in_", None), who)
    return family.check_X(X, method=method, who=who)


# ------------------------------------------------------- predictive checks
def masked_stats(x: np.ndarray, rows: np.ndarray, observed: np.ndarray | None,
                 stats: tuple[str, ...], correlation: bool) -> dict[str, np.ndarray]:
    """Per-draw statistics of the rows selected by ``rows`` (the posterior predictive
    checks of :mod:`bayesgen.diagnostics.ppc`).

    Parameters
    ----------
    x : ndarray (S, n, d)
    rows : bool ndarray (S, n)
        Rows of the class, per draw.
    observed : bool ndarray (n, d) or None
        The observed entries of the data (missing values): every statistic is then
        computed over the entries observed in the data only, in the observed data and
        in every replicate alike (the replicates keep the data's missingness pattern);
        correlations over the rows where both features are observed (pairwise
        complete). None: every entry is observed.
    stats : tuple of {"mean", "sd", "min", "max"}
    correlation : bool
        Also return ``"corr"``, the Pearson correlations of the feature pairs
        ``np.triu_indices(d, 1)``, shape (S, d (d - 1) / 2).

    Returns
    -------
    dict
        ``"frequency"`` (S, 1): number of selected rows; every requested statistic
        (S, d); NaN where undefined (mean, min, max: no row; sd (divisor n_k - 1): fewer
        than two rows; corr: a constant feature).
    """
    w = rows[..., None] if observed is None else rows[..., None] & observed[None]
    count = w.sum(axis=1).astype(float)  # (S, 1), or (S, d) with missing entries
    out = {"frequency": rows.sum(axis=1).astype(float)[:, None]}
    xs = np.where(w, x, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = xs.sum(axis=1) / count
        dev = np.where(w, x - mean[:, None, :], 0.0)
        if "mean" in stats:
            out["mean"] = mean
        if "sd" in stats:
            var = (dev**2).sum(axis=1) / (count - 1.0)
            out["sd"] = np.sqrt(np.where(count > 1, var, np.nan))
        if "min" in stats:
            out["min"] = np.where(count == 0, np.nan, np.where(w, x, np.inf).min(axis=1))
        if "max" in stats:
            out["max"] = np.where(count == 0, np.nan, np.where(w, x, -np.inf).max(axis=1))
        if correlation:
            i, j = np.triu_indices(x.shape[2], 1)
            if observed is None:
                cross = np.einsum("snd,sne->sde", dev, dev)
                scale = np.sqrt(np.diagonal(cross, axis1=1, axis2=2))
                corr = cross[:, i, j] / (scale[:, i] * scale[:, j])
            else:
                both = w[..., i] & w[..., j]  # (S, n, pairs)
                n = both.sum(axis=1).astype(float)
                a = np.where(both, xs[..., i], 0.0)
                b = np.where(both, xs[..., j], 0.0)
                ma, mb = a.sum(axis=1) / n, b.sum(axis=1) / n
                da = np.where(both, a - ma[:, None], 0.0)
                db = np.where(both, b - mb[:, None], 0.0)
                corr = ((da * db).sum(axis=1)
                        / np.sqrt((da**2).sum(axis=1) * (db**2).sum(axis=1)))
            out["corr"] = np.where(np.isfinite(corr), corr, np.nan)
    return out
