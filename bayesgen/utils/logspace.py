"""The Bayes rule in log space: normalising joint log-probabilities, averaging over
posterior draws and minimum-expected-loss decisions.
"""

from __future__ import annotations

import numpy as np
from scipy.special import gammaln, logsumexp

from bayesgen.exceptions import DataWarning, warn
from bayesgen.utils.threads import over_row_blocks

#: |log-sum-exp| above which normalise() takes a second pass (rounding of huge scores)
_RENORMALISE_ABOVE = 1e4
#: :func:`log_rising` uses Stirling's series at and above this a
_STIRLING_FROM = 1e4


def normalise(
    log_joint: np.ndarray, log_prior: np.ndarray, who: str, *, advice: str | None = None
) -> np.ndarray:
    """log p(y=k | x) from log p(x, y=k) by log-sum-exp over classes.

    Parameters
    ----------
    log_joint : ndarray of shape (n, K)
        Joint (or discriminant) log scores; ``-inf`` allowed.
    log_prior : ndarray of shape (K,)
        Log class probabilities used for rows whose score is ``-inf`` under every
        class (e.g. an MLE with a word unseen in every class): such rows carry no
        usable evidence, so they get the class prior, with a
        :class:`~bayesgen.exceptions.DataWarning`.
    who : str
        Estimator name for the warning.
    advice : str, optional
        What removes the zero probabilities for this fit (the estimator knows its method
        and smoothing); by default, to use a prior that keeps every probability positive.

    Returns
    -------
    log_proba : ndarray of shape (n, K)
        Rows are normalised log probabilities. Never NaN.
    """
    norm = _logsumexp_rows(log_joint)
    impossible = ~np.isfinite(norm[:, 0])
    if impossible.any():
        if np.any(np.isnan(norm)) or np.any(norm == np.inf):
            raise FloatingPointError(f"{who}: non-finite joint log-likelihood (NaN or +inf).")
        n_bad = int(impossible.sum())
        if advice is None:
            advice = ("Use a prior that keeps every probability positive (method='map' "
                      "with alpha > 1, or method='conjugate').")
        warn(
            f"{who}: {n_bad} row(s) have zero likelihood under every class (a feature "
            "value whose fitted probability is exactly 0 in every class, e.g. a word "
            "never seen in training); their probabilities fall back to the class "
            f"prior. {advice}",
            DataWarning,
        )
        norm[impossible] = 0.0
        log_joint = log_joint.copy()
        log_joint[impossible] = log_prior - logsumexp(log_prior)
    log_proba = log_joint - norm
    if np.max(np.abs(norm), initial=0.0) > _RENORMALISE_ABOVE:
        # |scores| ~ 1e8 (a near-constant feature) leave an absolute rounding error of
        # ~1e-8 in log_joint - norm; a second pass on the now O(1) values removes it
        log_proba -= _logsumexp_rows(log_proba)
    return log_proba


def normalised_proba(log_joint: np.ndarray, log_prior: np.ndarray, who: str, *,
                     overwrite: bool = False, advice: str | None = None) -> np.ndarray:
    """p(y=k | x) = exp(log_joint - log-sum-exp), as ``exp(normalise(...))``.

    With few classes and a finite row maximum everywhere (the common case), the
    probabilities are ``e / sum(e)`` with ``e = exp(log_joint - row max)``: one
    ``exp`` pass instead of two, and no cancellation against a huge log-sum-exp (so no
    second pass is needed). Otherwise (rows impossible under every class, NaN, +inf,
    many classes) :func:`normalise` decides, with its warning or error.
    ``overwrite``: the probabilities may be written into ``log_joint`` (fresh scores
    the caller does not keep), saving an (n, K) temporary. ``advice``: as in
    :func:`normalise`.
    """
    n, K = log_joint.shape
    if K > _COLUMN_LOOP_MAX or n < 4 * K:
        return np.exp(normalise(log_joint, log_prior, who, advice=advice))
    m = _row_max(log_joint)
    if not np.isfinite(np.add.reduce(m)):  # -inf, +inf or NaN somewhere: the full path
        return np.exp(normalise(log_joint, log_prior, who, advice=advice))
    proba = log_joint if overwrite and log_joint.flags.writeable else log_joint.copy()

    def rows(start: int, stop: int) -> None:  # in cache, rows split over the cores
        block = proba[start:stop]
        block -= m[start:stop, None]
        np.exp(block, out=block)
        block /= _row_sum(block)[:, None]

    over_row_blocks(rows, n, size=proba.size * 4)  # four passes over the scores
    return proba


def _row_max(a: np.ndarray) -> np.ndarray:
    """max over axis 1 of (n, K) as a loop over columns (NaN propagates), (n,)."""
    m = a[:, 0].copy()
    for k in range(1, a.shape[1]):
        np.maximum(m, a[:, k], out=m)
    return m


def _row_sum(a: np.ndarray) -> np.ndarray:
    """sum over axis 1 of (n, K), columns added left to right, (n,)."""
    total = a[:, 0].copy()
    for k in range(1, a.shape[1]):
        total += a[:, k]
    return total


def fast_logsumexp(a: np.ndarray, axis: int, keepdims: bool = False) -> np.ndarray:
    """log(sum(exp(a), axis)) by the max-shift formula; all -inf slices give -inf.

    ``m + log(sum(exp(a - m)))`` written out for real arrays: about 3x faster than
    ``scipy.special.logsumexp`` (no weights, signs or complex support to handle), which
    matters for prediction on many rows and posterior draws.
    """
    m = a.max(axis=axis, keepdims=True)
    finite_m = np.where(np.isfinite(m), m, 0.0)
    shifted = a - finite_m
    np.exp(shifted, out=shifted)
    with np.errstate(divide="ignore"):
        out = np.log(shifted.sum(axis=axis, keepdims=True))
    out += finite_m
    return out if keepdims else np.squeeze(out, axis=axis)


#: up to this many classes, row-wise reductions run as a loop over the columns
_COLUMN_LOOP_MAX = 32


def _logsumexp_rows(a: np.ndarray) -> np.ndarray:
    """Row-wise log-sum-exp of an (n, K) array, shape (n, 1).

    For few classes the row maximum and the row sum are a loop over the K columns
    (``np.maximum`` / ``+=`` on (n,) vectors, NaN propagating as in ``max``): NumPy's
    reductions along a short axis 1 run an inner loop of length K per row, about 10x
    slower. The sum adds the columns left to right, as NumPy does for K < 8.
    """
    n, K = a.shape
    if K > _COLUMN_LOOP_MAX or n < 4 * K:
        return fast_logsumexp(a, axis=1, keepdims=True)
    m = _row_max(a)
    m[~np.isfinite(m)] = 0.0  # all -inf rows (and +inf/NaN ones) shift by 0
    shifted = a - m[:, None]
    np.exp(shifted, out=shifted)
    total = _row_sum(shifted)
    with np.errstate(divide="ignore"):
        np.log(total, out=total)
    total += m
    return total[:, None]


def log_mean_exp(a: np.ndarray, axis: int = 0) -> np.ndarray:
    """``log(mean(exp(a), axis))`` computed stably (log-sum-exp minus log count)."""
    return fast_logsumexp(a, axis=axis) - np.log(a.shape[axis])


def expected_loss(proba: np.ndarray, loss: np.ndarray | None = None) -> np.ndarray:
    """Expected loss r_j(x) of every decision j, (n, K): ``proba @ loss`` (0-1 loss:
    ``1 - proba``)."""
    proba = np.asarray(proba, dtype=float)
    return 1.0 - proba if loss is None else proba @ np.asarray(loss, dtype=float)


def decide(proba: np.ndarray, loss: np.ndarray | None) -> np.ndarray:
    """Index of the Bayes decision per row.

    With ``loss=None`` the most probable class. With a loss matrix
    (``loss[i, j]`` = cost of predicting j when the truth is i) the class that
    minimises the expected loss ``sum_i p(i | x) loss[i, j]``.
    """
    if loss is None:
        return np.argmax(proba, axis=1)
    return np.argmin(proba @ loss, axis=1)


def log_rising(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``lgamma(a + x) - lgamma(a)`` (log of the rising factorial), a > 0, x >= 0.

    The plain difference loses about ``a log(a) 1e-16`` to cancellation (all digits
    for a ~ 1e15, NaN once lgamma overflows near 2.5e305). For a >= 1e4 this uses
    Stirling's series: with c(z) = lgamma(z) - (z - 1/2) log z + z - log(2 pi)/2,

        (a - 1/2) log1p(x / a) + x log(a + x) - x + c(a + x) - c(a),

    c(z) = 1/(12 z) - 1/(360 z^3) + 1/(1260 z^5) (error < 1e-22 there). Broadcasts;
    returns exactly 0 where x = 0.
    """
    a, x = np.broadcast_arrays(np.asarray(a, dtype=np.float64), np.asarray(x, dtype=np.float64))
    big = a >= _STIRLING_FROM
    if not big.any():
        return gammaln(a + x) - gammaln(a)
    out = np.zeros(a.shape)
    small = ~big
    out[small] = gammaln(a[small] + x[small]) - gammaln(a[small])
    ab, xb = a[big], x[big]
    z = ab + xb
    out[big] = (ab - 0.5) * np.log1p(xb / ab) + xb * np.log(z) - xb
    out[big] += _stirling_c(z) - _stirling_c(ab)
    return out


def _stirling_c(z: np.ndarray) -> np.ndarray:
    """lgamma(z) - (z - 1/2) log z + z - log(2 pi) / 2 for z >= 1e4 (Stirling series)."""
    r = 1.0 / z
    r2 = r * r
    return r * (1.0 / 12.0 - r2 * (1.0 / 360.0 - r2 / 1260.0))
