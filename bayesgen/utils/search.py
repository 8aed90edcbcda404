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
