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

from bayesgen.data.validation import label
from bayesgen.families.class_moments import class_moments


def one_hot(y: np.ndarray, w: np.ndarray, n_classes: int) -> np.ndarray:
    """Weighted indicator matrix R (n, K) with ``R[n, y_n] = w_n``."""
    R = np.zeros((y.shape[0], n_classes))
    R[np.arange(y.shape[0]), y] = w
    return R


def _safe_div(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    return num / np.where(den > 0, den, 1.0)


def _constant(X: np.ndarray, y: np.ndarray, w: np.ndarray, count: np.ndarray,
              mean: np.ndarray, m2: np.ndarray):
    """Rows of positive weight per class (K,) and whether each feature is constant over
    them, (K, d). Only pairs whose ``m2`` is within 4 times the rounding bound of a constant
    feature (N_k (2 n eps mean)^2) are checked against the data."""
    positive = w > 0
    n_classes = count.shape[0]
    rows = np.bincount(y[positive], minlength=n_classes).astype(np.float64)
    eps = 4.0 * max(X.shape[0], 1) * np.finfo(np.float64).eps
    with np.errstate(over="ignore"):
        residue = count[:, None] * (eps * mean) ** 2
    if m2.ndim == 1:  # pooled: constant within every class only if the sum is residue
        maybe = np.broadcast_to(m2 <= residue.sum(axis=0), residue.shape).copy()
    else:
        maybe = m2 <= residue
    for k in np.flatnonzero(maybe.any(axis=1) & (rows > 0)):
        cols = np.flatnonzero(maybe[k])
        Xk = X[np.flatnonzero((y == k) & positive)[:, None], cols]
        maybe[k, cols] = Xk.max(axis=0) == Xk.min(axis=0)
    return rows, maybe


def diagonal_stats(X: np.ndarray, y: np.ndarray, w: np.ndarray, n_classes: int) -> dict:
    """count (K,), mean (K, d), m2 (K, d) and ``rows`` (K,), one pass over X
    (:func:`.class_moments.class_moments`); a feature constant within a class gets m2 = 0."""
    count, mean, m2 = class_moments(X, y, w, n_classes, full=False)
    rows, const = _constant(X, y, w, count, mean, m2)
    m2[const] = 0.0
    return {"count": count, "mean": mean, "m2": m2, "rows": rows}


def scatter_stats(
    X: np.ndarray, y: np.ndarray, w: np.ndarray, n_classes: int, *, tied: bool
) -> dict:
    """count (K,), mean (K, d), centred scatter (K, d, d) or pooled (d, d) if tied
    (:func:`class_sum`, order-independent), and ``rows`` (K,); a constant feature's row
    and column are exactly 0."""
    count, mean, scatter = class_moments(X, y, w, n_classes, full=True)
    if tied:
        scatter = class_sum(scatter)
        rows, const = _constant(X, y, w, count, mean, np.diagonal(scatter).copy())
        flat = const.all(axis=0)
        scatter[flat, :] = 0.0
        scatter[:, flat] = 0.0
    else:
        rows, const = _constant(X, y, w, count, mean,
                                np.diagonal(scatter, axis1=1, axis2=2).copy())
        for k in range(n_classes):
            scatter[k][const[k], :] = 0.0
            scatter[k][:, const[k]] = 0.0
    return {"count": count, "mean": mean, "scatter": _symmetric(scatter), "rows": rows}


def _symmetric(a: np.ndarray) -> np.ndarray:
    return (a + np.swapaxes(a, -1, -2)) / 2


def frame_of(stats: dict) -> tuple[np.ndarray, np.ndarray]:
    """The frame (loc, scale) the statistics were computed in (identity if absent)."""
    d = stats["mean"].shape[-1]
    return stats.get("loc", np.zeros(d)), stats.get("scale", np.ones(d))


def reframe(stats: dict, loc: np.ndarray, scale: np.ndarray) -> dict:
    """The same statistics expressed in the frame (loc, scale).

    With z_old = (x - c_old) / s_old and z = (x - c) / s: z = r z_old + o, with
    r = s_old / s and o = (c_old - c) / s; means map affinely, m2 by r^2 and scatter
    by r r^T. Exact when r is a power of two and o is exact (bayesgen's frames).
    """
    c_old, s_old = frame_of(stats)
    if np.array_equal(c_old, loc) and np.array_equal(s_old, scale):
        return stats
    r = s_old / scale
    o = (c_old - loc) / scale
    out = dict(stats, mean=stats["mean"] * r + o, loc=np.array(loc, dtype=np.float64),
               scale=np.array(scale, dtype=np.float64))
    if "m2" in stats:
        out["m2"] = stats["m2"] * r**2
    if "scatter" in stats:
        out["scatter"] = stats["scatter"] * r[:, None] * r[None, :]
    return out


def merge(a: dict, b: dict) -> dict:
    """Combine centred statistics of two disjoint data sets (diagonal or full).

    Statistics computed in different frames are first expressed in a common one
    (``a``'s, or ``b``'s when ``a`` holds no weight); the result carries that frame.
    """
    if a["count"].sum() <= 0 < b["count"].sum():
        a = reframe(a, *frame_of(b))
    else:
        b = reframe(b, *frame_of(a))
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
    if "rows" in a and "rows" in b:
        out["rows"] = a["rows"] + b["rows"]
    if "loc" in a:
        out["loc"], out["scale"] = a["loc"], a["scale"]
    return out


def class_sum(a: np.ndarray) -> np.ndarray:
    """Sum over the class axis (axis 0) in an order that does not depend on the order of
    the classes: each entry's terms are sorted before summing, so relabeling the classes
    gives bit-identical totals (priors and ``cov_dof="auto"`` then do not move with the
    labels' order)."""
    a = np.asarray(a)
    return np.sort(a, axis=0).sum(axis=0)


def _weights(stats: dict) -> np.ndarray:
    """Weight behind each class mean: ``count[:, None]`` (K, 1), or the observed counts
    N_kj (K, d) of data with missing entries (:mod:`bayesgen.data.missing`)."""
    return stats["observed"] if "observed" in stats else stats["count"][:, None]


def overall_mean(stats: dict) -> np.ndarray:
    """Weighted mean of all (observed) data, (d,), from the class statistics."""
    c = _weights(stats)
    return class_sum(c * stats["mean"]) / class_sum(c)


def within_variance(stats: dict) -> np.ndarray:
    """Pooled within-class variance per feature, (d,): sum_k S_k,jj / N."""
    if "m2" in stats:
        return class_sum(stats["m2"]) / class_sum(_weights(stats))
    sc = stats["scatter"]
    ss = np.diagonal(sc, axis1=-2, axis2=-1)
    ss = ss if ss.ndim == 1 else class_sum(ss)
    return ss / class_sum(stats["count"])


def total_variance(stats: dict) -> np.ndarray:
    """Variance of all data per feature, (d,): within plus between classes."""
    c = _weights(stats)
    between = class_sum(c * (stats["mean"] - overall_mean(stats)) ** 2) / class_sum(c)
    return within_variance(stats) + between


#: a variance below this fraction of (mean^2 + total variance) is rounding residue
ZERO_VARIANCE = 1e-24


def zero_tolerance(stats: dict) -> np.ndarray:
    """Per feature (d,), the variance below which a class or pooled variance is
    rounding residue of the centring (merged statistics of a constant feature):
    ``ZERO_VARIANCE * (max_k mean_kj^2 + total variance_j)``."""
    scale = np.max(stats["mean"] ** 2, axis=0) + total_variance(stats)
    return ZERO_VARIANCE * scale


def default_scale(stats: dict) -> np.ndarray:
    """Scale-aware default prior variance per feature, all > 0.

    The pooled within-class variance; where it is 0 (feature constant within every
    class, up to rounding: :func:`zero_tolerance`) the total variance; where that is 0
    too (constant feature, no class information) 1e-9 times the largest positive
    value, or 1 if there is none.
    """
    tol = zero_tolerance(stats)
    s = within_variance(stats)
    s = np.where(s > tol, s, total_variance(stats))
    s = np.where(s > tol, s, 0.0)
    positive = s[s > 0]
    floor = 1e-9 * positive.max() if positive.size else 1.0
    return np.where(s > 0, s, floor)


def resolve_scale(value: Any, name: str, words: tuple[str, ...] = ("auto",)) -> float | None:
    """A prior-scale parameter (``var_scale``, ``cov_scale``) as a float > 0 (None: 1),
    or None for one of ``words`` (chosen at fit); ``ValueError`` naming ``name`` else."""
    choices = ", ".join(repr(w) for w in words)
    if isinstance(value, str):
        if value not in words:
            raise ValueError(f"{name} must be a number > 0, None or one of {choices}; got "
                             f"{value!r}.")
        return None
    scale = 1.0 if value is None else float(np.asarray(value, dtype=np.float64).reshape(()))
    if not (np.isfinite(scale) and scale > 0):
        raise ValueError(f"{name} must be a finite number > 0, None or one of {choices}; "
                         f"got {value!r}.")
    return scale


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


def sample_rows(stats: dict) -> np.ndarray:
    """Rows of positive weight per class (K,): what an MLE's sample-size checks count,
    so that a common factor on the weights changes nothing (the weighted count when
    the statistics do not carry ``rows``)."""
    return stats.get("rows", stats["count"])


def require_samples(
    counts: np.ndarray, minimum: float, labels: np.ndarray | None, what: str
) -> None:
    """Raise ``ValueError`` if some class has fewer than ``minimum`` samples (rows of
    positive weight, :func:`sample_rows`)."""
    low = np.flatnonzero(counts < minimum)
    if low.size:
        k = low[0]
        raise ValueError(
            f"{what} needs at least {minimum:g} samples in every class; class "
            f"{label(labels, k)} has {counts[k]:g}. Use method='map' or 'conjugate', "
            "whose prior needs none."
        )
