"""Bandwidth estimation of KernelNB: Silverman's rule, the weighted leave-one-out
likelihood, its derivatives in log h and the bounded maximisation; and the weighted
log-density of other rows under a class's KDE with its derivatives (the unlabeled rows
of semi-supervised EM, :meth:`KernelFamily.em_m_step`).

See :mod:`bayesgen.families.kernel.family` for the model. The maximiser runs a grid in
log h, golden-section search around the best grid point and then Newton steps on the
analytic derivative of the objective: comparisons of function values can locate a
maximum only to about sqrt(machine epsilon) (1e-8 relative), the derivative's root to
machine precision, which makes the bandwidths, and so the predictions, the same in
any units of the features to ~1e-12.
"""

from __future__ import annotations

import numpy as np

from bayesgen.families.kernel.kde import LOG_2PI

_GRID = 13
_GOLDEN_STEPS = 34
_INVPHI = (np.sqrt(5.0) - 1.0) / 2.0
_LOW, _HIGH = np.log(1e-3), np.log(10.0)
_NEWTON_STEPS = 4


def _weighted_sd(P: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Weighted population sd per column, (d,): sqrt(sum w (x - mean)^2 / W)."""
    W = w.sum()
    mean = w @ P / W
    return np.sqrt(np.maximum(w @ (P - mean) ** 2 / W, 0.0))


def silverman(stats: dict) -> np.ndarray:
    """Silverman's rule-of-thumb bandwidth per class and feature, (K, d), all > 0.

    ``0.9 min(sd, IQR / 1.34) W_k^(-1/5)`` with the weighted population sd and the
    weighted inverted-CDF interquartile range made symmetric under x -> -x
    (:func:`_symmetric_iqr`; both consistent with duplicated rows); the sd
    alone where the IQR is 0. Zero spread (or an empty class) is floored at 1e-3
    times the feature's overall weighted sd; a constant feature at 1e-9 times the
    largest overall sd (1 if every feature is constant).
    """
    X, y, w = stats["X"], stats["y"], stats["w"]
    K, d = stats["count"].shape[0], X.shape[1]
    overall = _weighted_sd(X, w) if X.shape[0] else np.zeros(d)
    positive = overall[overall > 0]
    overall = np.where(overall > 0, overall, 1e-9 * positive.max() if positive.size else 1.0)
    h = np.zeros((K, d))
    for k in range(K):
        rows = y == k
        if not rows.any():
            continue
        P, wk = X[rows], w[rows]
        sd = _weighted_sd(P, wk)
        iqr = _symmetric_iqr(P, wk) / 1.34
        spread = np.where(iqr > 0, np.minimum(sd, iqr), sd)
        h[k] = 0.9 * spread * wk.sum() ** -0.2
    return np.where(h > 0, h, 1e-3 * overall)


def _symmetric_iqr(P: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Weighted interquartile range per column, (d,), equivariant under x -> a x + b for
    any a != 0: the mean of the inverted-CDF IQRs of x and of -x.

    The inverted-CDF quartiles (a step function of the weights, so consistent with
    duplicated rows) are not symmetric: q_0.25(-x) is not -q_0.75(x) in general, so the
    IQR of -x can differ from that of x by a gap between order statistics, and with it
    Silverman's bandwidth, the prior centre of ``method="map"`` (moving probabilities by
    up to ~1e-2 under a change of sign of the units). The mean of the two is symmetric.
    """
    qs = np.quantile(np.concatenate([P, -P], axis=1), [0.25, 0.75], axis=0, weights=w,
                     method="inverted_cdf")
    d = P.shape[1]
    return ((qs[1, :d] - qs[0, :d]) + (qs[1, d:] - qs[0, d:])) / 2.0


def _left_out(w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """u_i = min(w_i, 1), the weight left out of each point's own kernel, and
    log(w_i - u_i) (-inf when the whole point is left out)."""
    u = np.minimum(w, 1.0)
    with np.errstate(divide="ignore"):
        return u, np.log(w - u)


def _loo(Pt: np.ndarray, w: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Weighted LOO log-likelihood of one class for log-bandwidths ``t`` (d,); returns (d,).

    ``Pt`` (d, n) points of the class (features first), weights ``w`` (n,) > 0; each
    point leaves min(w_i, 1) of its weight out of its own kernel. The terms are
    log-sum-exps (:func:`_kde_sums`), so tiny bandwidths give no NaN.
    """
    u, log_self = _left_out(w)
    from bayesgen.families.kernel.kde import _kde_sums

    terms = _kde_sums(Pt, Pt, np.log(w), np.exp(t)[None], np.arange(w.size), log_self, True)
    return (terms[0] - np.log(w.sum() - u)) @ w - w.sum() * (t + 0.5 * LOG_2PI)


def _loo_slope(Pt: np.ndarray, w: np.ndarray, t: np.ndarray):
    """First and second derivatives of :func:`_loo` in t = log h, each (d,): with
    q_il = (x_i - x_l)^2 / h^2 under the softmax weights of row i's terms,
    sum_i w_i E[q] - W and sum_i w_i (Var[q] - 2 E[q])."""
    f1, f2 = _softmax_moments(Pt, Pt, w, w, t, 0.0, _left_out(w)[1])
    return f1 - w.sum(), f2


def _softmax_moments(Q: np.ndarray, P: np.ndarray, w: np.ndarray, a: np.ndarray,
                     t: np.ndarray, shift: float, log_self: np.ndarray | None = None):
    """sum_n a_n (E[q] - shift) and sum_n a_n (Var[q] - 2 E[q]), each (d,), with
    q_l = (q_n - p_l)^2 / h^2 under the softmax weights w_l N(q_n; p_l, h^2) of the
    points ``P`` (d, n) at the rows ``Q`` (d, m) (``log_self``: row n's own term is
    its leave-one-out weight), in blocks of bounded memory."""
    from bayesgen.families.kernel.kde import _BUDGET

    d, m = Q.shape
    n = P.shape[1]
    log_w = np.log(w)
    inv_h2 = np.exp(-2.0 * t)[:, None, None]
    f1, f2 = np.zeros(d), np.zeros(d)
    step = max(1, min(m, _BUDGET // max(1, n * d)))
    for start in range(0, m, step):
        stop = min(m, start + step)
        q = Q[:, start:stop, None] - P[:, None, :]
        q *= q
        q *= inv_h2  # (d, c, n)
        g = log_w - 0.5 * q
        if log_self is not None:
            idx = np.arange(start, stop)
            g[:, idx - start, idx] = log_self[start:stop]
        g -= g.max(axis=-1, keepdims=True)
        r = np.exp(g)
        r /= r.sum(axis=-1, keepdims=True)
        mean = (r * q).sum(-1)
        var = (r * q * q).sum(-1) - mean**2
        f1 += (mean - shift) @ a[start:stop]
        f2 += (var - 2.0 * mean) @ a[start:stop]
    return f1, f2


def _rows_term(U: np.ndarray, P: np.ndarray, w: np.ndarray, a: np.ndarray,
               t: np.ndarray) -> np.ndarray:
    """sum_n a_n log p(u_nj | h_j = e^t_j) per feature, (d,): ``U`` (d, m) rows, ``P``
    (d, n) points of the class with weights ``w``, ``a`` (m,) row weights."""
    from bayesgen.families.kernel.kde import _kde_sums

    sums = _kde_sums(U, P, np.log(w), np.exp(t)[None], by_feature=True)[0]  # (d, m)
    return (sums @ a) - a.sum() * (np.log(w.sum()) + t + 0.5 * LOG_2PI)


def _rows_slope(U: np.ndarray, P: np.ndarray, w: np.ndarray, a: np.ndarray,
                t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """First and second derivatives in t of :func:`_rows_term`, each (d,)."""
    return _softmax_moments(U, P, w, a, t, 1.0)


def _maximise(objective, centre: np.ndarray, slope=None) -> np.ndarray:
    """Maximise ``objective(t) -> (d,)`` over t in [log c + log 1e-3, log c + log 10] per entry.

    A grid of ``_GRID`` points, then golden-section search between the best grid
    point's neighbours, vectorised over the d entries; then, if ``slope(t) -> (f', f'')``
    is given, Newton steps on f' = 0 where f'' < 0 that stay within those neighbours.
    Returns the maximiser (d,).
    """
    grid = np.log(centre) + np.linspace(_LOW, _HIGH, _GRID)[:, None]
    values = np.stack([objective(t) for t in grid])
    cols = np.arange(centre.size)
    best = values.argmax(axis=0)
    t_best, f_best = grid[best, cols], values[best, cols]
    a = grid[np.maximum(best - 1, 0), cols]
    b = grid[np.minimum(best + 1, _GRID - 1), cols]
    lo, hi = a.copy(), b.copy()
    c, e = b - _INVPHI * (b - a), a + _INVPHI * (b - a)
    fc, fe = objective(c), objective(e)
    for _ in range(_GOLDEN_STEPS):
        left = fc >= fe  # the maximum lies in [a, e]
        b = np.where(left, e, b)
        a = np.where(left, a, c)
        new = np.where(left, b - _INVPHI * (b - a), a + _INVPHI * (b - a))
        f_new = objective(new)
        c, e = np.where(left, new, e), np.where(left, c, new)
        fc, fe = np.where(left, f_new, fe), np.where(left, fc, f_new)
    t = np.where(fc >= fe, c, e)
    f = np.maximum(fc, fe)
    t = np.where(f >= f_best, t, t_best)
    if slope is None:
        return t
    for _ in range(_NEWTON_STEPS):
        f1, f2 = slope(t)
        with np.errstate(divide="ignore", invalid="ignore"):
            new = t - f1 / f2
        ok = (f2 < 0) & (new > lo) & (new < hi) & np.isfinite(new)
        t = np.where(ok, new, t)
    return t
