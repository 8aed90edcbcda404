"""Sufficient statistics and prior defaults shared by the Gaussian families.

Statistics are kept centred (count, mean, centred sums of squares or scatter
matrices) rather than as raw moments, which lose precision when means are large
compared with spreads; two sets are combined with the parallel update of Chan,
Golub & LeVeque (1979)::

    n = n_a + n_b,  delta = mean_b - mean_a
    mean = mean_a + delta n_b / n
    M2 = M2_a + M2_b + delta delta^T n_a n_b / n
"""

from __future__ import annotations

from typing import Any

import numpy as np


def one_hot(y: np.ndarray, w: np.ndarray, n_classes: int) -> np.ndarray:
    """Weighted indicator matrix R (n, K) with ``R[n, y_n] = w_n``."""
    R = np.zeros((y.shape[0], n_classes))
    R[np.arange(y.shape[0]), y] = w
    return R


def _safe_div(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    return num / np.where(den > 0, den, 1.0)


def class_means(X: np.ndarray, y: np.ndarray, w: np.ndarray, n_classes: int):
    """Weighted class counts (K,) and means (K, d); an empty class gets mean 0."""
    R = one_hot(y, w, n_classes)
    count = R.sum(axis=0)
    mean = _safe_div(R.T @ X, count[:, None])
    return R, count, mean


def diagonal_stats(X: np.ndarray, y: np.ndarray, w: np.ndarray, n_classes: int) -> dict:
    """count (K,), mean (K, d), m2 (K, d) = sum_n w_n (x_n - mean_k)^2 (two passes)."""
    R, count, mean = class_means(X, y, w, n_classes)
    Xc = X - mean[y]
    Xc *= Xc
    return {"count": count, "mean": mean, "m2": R.T @ Xc}


def scatter_stats(
    X: np.ndarray, y: np.ndarray, w: np.ndarray, n_classes: int, *, tied: bool
) -> dict:
    """count (K,), mean (K, d) and centred scatter: (K, d, d), or (d, d) pooled if tied.

    The per-class scatter is ``S_k = sum_{y_n=k} w_n (x_n - mean_k)(x_n - mean_k)^T``;
    the pooled one is ``sum_k S_k``. The pooled scatter is computed in one pass over the
    data centred at the overall mean c: ``sum_n w_n (x_n - c)(x_n - c)^T -
    sum_k s_k s_k^T / N_k`` with ``s_k = sum_{y_n=k} w_n (x_n - c)``; when the between-class
    part dwarfs the within-class part (the subtraction would lose digits) it falls back
    to the two-pass form.
    """
    if not tied:
        _, count, mean = class_means(X, y, w, n_classes)
        Xc = X - mean[y]
        d = X.shape[1]
        scatter = np.zeros((n_classes, d, d))
        for k in range(n_classes):
            rows = y == k
            Xk = Xc[rows]
            scatter[k] = (Xk * w[rows, None]).T @ Xk
        return {"count": count, "mean": mean, "scatter": _symmetric(scatter)}
    R = one_hot(y, w, n_classes)
    count = R.sum(axis=0)
    centre = (w @ X) / w.sum()
    Xc = X - centre
    sums = R.T @ Xc
    mean = _safe_div(sums, count[:, None]) + centre
    unit_weights = bool(np.all(w == 1.0))
    total = Xc.T @ Xc if unit_weights else (Xc * w[:, None]).T @ Xc
    between = _safe_div(sums, count[:, None]).T @ sums
    scatter = total - between
    if np.trace(between) > 1e4 * max(np.trace(scatter), 0.0):
        Xc = X - mean[y]
        scatter = (Xc * w[:, None]).T @ Xc
    return {"count": count, "mean": mean, "scatter": _symmetric(scatter)}


def _symmetric(a: np.ndarray) -> np.ndarray:
    return (a + np.swapaxes(a, -1, -2)) / 2


def merge(a: dict, b: dict) -> dict:
    """Combine centred statistics of two disjoint data sets (diagonal or full)."""
    na, nb = a["count"], b["count"]
    n = na + nb
    delta = b["mean"] - a["mean"]
    mean = a["mean"] + delta * _safe_div(nb, n)[:, None]
    f = _safe_div(na * nb, n)
    out = {"count": n, "mean": mean}
    if "m2" in a:
        out["m2"] = a["m2"] + b["m2"] + delta**2 * f[:, None]
    else:
        outer = np.einsum("k,ki,kj->kij", f, delta, delta)
        tied = a["scatter"].ndim == 2
        out["scatter"] = a["scatter"] + b["scatter"] + (outer.sum(0) if tied else outer)
    return out


def overall_mean(stats: dict) -> np.ndarray:
    """Weighted mean of all data, (d,), from the class statistics."""
    c = stats["count"]
    return (c[:, None] * stats["mean"]).sum(0) / c.sum()


def within_variance(stats: dict) -> np.ndarray:
    """Pooled within-class variance per feature, (d,): sum_k S_k,jj / N."""
    if "m2" in stats:
        ss = stats["m2"].sum(0)
    else:
        sc = stats["scatter"]
        ss = np.diagonal(sc, axis1=-2, axis2=-1)
        ss = ss if ss.ndim == 1 else ss.sum(0)
    return ss / stats["count"].sum()


def total_variance(stats: dict) -> np.ndarray:
    """Variance of all data per feature, (d,): within plus between classes."""
    c = stats["count"]
    between = (c[:, None] * (stats["mean"] - overall_mean(stats)) ** 2).sum(0) / c.sum()
    return within_variance(stats) + between


def default_scale(stats: dict) -> np.ndarray:
    """Scale-aware default prior variance per feature, all > 0.

    The pooled within-class variance; where it is 0 (feature constant within every
    class) the total variance; where that is 0 too (constant feature, no class
    information) 1e-9 times the largest positive value, or 1 if there is none.
    """
    s = within_variance(stats)
    s = np.where(s > 0, s, total_variance(stats))
    positive = s[s > 0]
    floor = 1e-9 * positive.max() if positive.size else 1.0
    return np.where(s > 0, s, floor)


def resolve_vector(value: Any, d: int, name: str, default: np.ndarray) -> np.ndarray:
    """``default`` if value is None, else value broadcast to a finite (d,) vector."""
    if value is None:
        return default
    v = np.asarray(value, dtype=np.float64)
    if v.ndim == 0:
        v = np.full(d, float(v))
    if v.shape != (d,) or not np.all(np.isfinite(v)):
        raise ValueError(f"{name} must be a finite scalar or have shape ({d},); got {value!r}.")
    return v


def check_divisor(divisor: str) -> int:
    """ddof for the MLE divisor: "n" -> 0 (N_k), "unbiased" -> 1 (N_k - 1)."""
    if divisor == "n":
        return 0
    if divisor == "unbiased":
        return 1
    raise ValueError(f"divisor must be 'n' or 'unbiased'; got {divisor!r}.")


def label(labels: np.ndarray | None, k: int) -> str:
    """Human-readable name of class k for error messages."""
    if labels is None:
        return str(k)
    value = labels[k]
    return repr(value.item() if isinstance(value, np.generic) else value)


def require_samples(
    counts: np.ndarray, minimum: float, labels: np.ndarray | None, what: str
) -> None:
    """Raise ``ValueError`` if some class has a weighted count below ``minimum``."""
    low = np.flatnonzero(counts < minimum)
    if low.size:
        k = low[0]
        raise ValueError(
            f"{what} needs at least {minimum:g} samples in every class; class "
            f"{label(labels, k)} has {counts[k]:g}. Use method='map' or 'conjugate', "
            "whose prior needs none."
        )
