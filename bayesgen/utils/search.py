"""One-dimensional searches shared by the empirical-Bayes priors (internal)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np


def log_bounded_argmax(slope: Callable[[float], float], bounds: tuple[float, float]) -> float:
    """argmax over s in ``bounds`` of a function whose derivative in log s, ``slope``,
    is decreasing: the root of ``slope`` by Brent's method on log s, or the bound the
    function rises towards when the root lies outside.

    Parameters
    ----------
    slope : callable
        ``slope(log_s)``, d f / d log s, decreasing in log s.
    bounds : (float, float)
        0 < low < high.

    Returns
    -------
    float
        The maximiser s (not its log).
    """
    from scipy.optimize import brentq

    lo, hi = np.log(bounds[0]), np.log(bounds[1])
    if slope(hi) >= 0:
        return float(bounds[1])
    if slope(lo) <= 0:
        return float(bounds[0])
    return float(np.exp(brentq(slope, lo, hi, xtol=1e-14, rtol=4 * np.finfo(float).eps)))


def polish_root(slope: Callable[[float], float], x0: float,
                bounds: tuple[float, float], step: float = 1e-3) -> float:
    """The root of a derivative ``slope`` near a search's answer ``x0``: a sign change (+ to -)
    bracketed around x0 by steps growing 4-fold from ``step``, then Brent's method to xtol
    1e-14; the bound the function rises towards when no sign change lies inside ``bounds``.
    Unlike a search on function values (which stops on a flat maximum at a point that moves
    with summation order by ~sqrt(eps)), equal statistics give equal answers to ~1e-12.

    Parameters
    ----------
    slope : callable
        Derivative of the maximised function in x.
    x0 : float
        The search's answer, inside ``bounds``.
    bounds : (float, float)
        low < high, in x.

    Returns
    -------
    float
        The polished x.
    """
    from scipy.optimize import brentq

    lo, hi = bounds
    x0 = float(np.clip(x0, lo, hi))
    while True:
        a, b = max(lo, x0 - step), min(hi, x0 + step)
        fa, fb = slope(a), slope(b)
        if fa >= 0 > fb or fa > 0 >= fb:
            return float(brentq(slope, a, b, xtol=1e-14, rtol=4 * np.finfo(float).eps))
        if a == lo and b == hi:
            return hi if fb >= 0 else lo if fa <= 0 else x0
        step *= 4.0
