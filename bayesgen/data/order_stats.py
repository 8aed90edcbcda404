"""Quartiles, median, minimum and maximum of columns, as the frame chooses them
(:func:`bayesgen.data.frame.choose`): inverted-CDF quantiles, weighted by the sample weights,
with unit weights computed by partitions instead of sorts."""

from __future__ import annotations

import numpy as np

#: the quantiles of a column: lower quartile, median, upper quartile
_QUARTILES = np.array([0.25, 0.5, 0.75])


def _unit_index(q: float, n: int) -> int:
    """The position in sorted order that ``np.quantile(v, q, method="inverted_cdf",
    weights=ones)`` takes: the first i with fl((i + 1) / n) >= q, fl the float64
    rounding numpy's normalised cumulative sum of unit weights carries."""
    i = min(max(int(np.ceil(q * n)) - 1, 0), n - 1)
    while i > 0 and i / n >= q:
        i -= 1
    while i < n - 1 and (i + 1) / n < q:
        i += 1
    return i


def order_stats(v: np.ndarray, w: np.ndarray | None) -> tuple[float, ...]:
    """(q1, median, q3, min, max) of the finite values v (m,) >= 1, inverted-CDF
    quantiles weighted by w (integer weights act as repeated rows).

    Unit weights (``sample_weight=None``) select the same order statistics as the
    weighted rule, by one ``np.partition`` (O(m)) instead of a sort per quantile.
    """
    if w is not None and np.all(w == 1.0):
        kth = sorted({0, v.size - 1, *(_unit_index(q, v.size) for q in _QUARTILES)})
        part = np.partition(v, kth)
        q1, med, q3 = (part[_unit_index(q, v.size)] for q in _QUARTILES)
        return float(q1), float(med), float(q3), float(part[0]), float(part[-1])
    q1, med, q3 = np.quantile(v, _QUARTILES, method="inverted_cdf", weights=w)
    return float(q1), float(med), float(q3), float(v.min()), float(v.max())


def unit_order_stats(V: np.ndarray, w: np.ndarray | None) -> np.ndarray | None:
    """(q1, median, q3, min, max) of every column of V (m, p), (5, p), as
    :func:`order_stats` gives them, by partitions of the transposed copy (contiguous
    rows, each call for all columns); None unless there are weights, all 1,
    and every entry is finite (then the columns are done one by one)."""
    m = V.shape[0]
    if m == 0 or V.shape[1] == 0 or w is None or not np.all(w == 1.0):
        return None
    rows = np.array(V.T, dtype=np.float64, order="C")  # a copy: partitioned in place
    if not np.isfinite(np.add.reduce(rows, axis=None)) and not np.isfinite(rows).all():
        return None
    i1, i2, i3 = (_unit_index(q, m) for q in _QUARTILES)  # i1 <= i2 <= i3
    # nested single-kth partitions in place (NumPy's multi-kth partition is 6x slower):
    # the median, then q1 among the values below it and q3 among those above
    rows.partition(i2, axis=1)
    if i1 < i2:
        rows[:, :i2].partition(i1, axis=1)
    if i3 > i2:
        rows[:, i2 + 1 :].partition(i3 - i2 - 1, axis=1)
    return np.stack([rows[:, i1], rows[:, i2], rows[:, i3], rows[:, : i1 + 1].min(axis=1),
                     rows[:, i3:].max(axis=1)])
