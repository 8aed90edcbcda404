"""PyMC pieces of CategoricalNB (:mod:`bayesgen.families.categorical`): coordinates of
the per-C_j blocks and the ``pm.CustomDist`` log-density and sampler of the observed
values (codes, or category values through a (d, Cmax) table)."""

from __future__ import annotations

import numpy as np

from bayesgen.families._categories import inverse_cdf


def category_coords(n_categories: np.ndarray, feature: str, category: str) -> dict:
    """``{category: 0..Cmax-1}`` and, per distinct C, ``{feature_cC: positions j with
    C_j = C, category_cC: 0..C-1}`` (see :meth:`CategoricalFamily.coords`)."""
    out = {category: list(range(int(n_categories.max())))}
    for c in np.unique(n_categories):
        out[f"{feature}_c{c}"] = np.flatnonzero(n_categories == c).tolist()
        out[f"{category}_c{c}"] = list(range(int(c)))
    return out


def rows_logp(value, theta, y):
    """PyMC log-density of the observed codes ``value`` (n, d) given the padded
    ``theta`` (K, d, Cmax) and class indices ``y`` (n,): sum_nj log theta[y_n, j, x_nj]."""
    import pytensor.tensor as pt

    features = pt.arange(theta.shape[-2])
    return pt.sum(pt.log(theta[y[:, None], features[None, :], value]))


def rows_random(theta, y, rng=None, size=None):
    """Forward sampler of the observed codes for ``pm.CustomDist``: (*size, n, d) int64
    given ``theta`` (..., K, d, Cmax) and ``y`` (..., n) (inverse CDF, vectorised)."""
    batch = tuple(size) if size is not None else np.broadcast_shapes(theta.shape[:-3], y.shape[:-1])
    theta = np.broadcast_to(theta, (*batch, *theta.shape[-3:]))
    y = np.broadcast_to(y, (*batch, y.shape[-1]))
    rows = np.take_along_axis(theta, y[..., :, None, None], axis=-3)  # (*batch, n, d, Cmax)
    return inverse_cdf(rows, rng).astype(np.int64)


def values_logp(value, theta, y, table):
    """:func:`rows_logp` for observed category values: the code of x_nj is the number
    of entries of its (sorted, last-value padded) table row below it."""
    import pytensor.tensor as pt

    codes = pt.sum(pt.lt(table[None, :, :], value[:, :, None]), axis=-1)
    return rows_logp(codes, theta, y)


def values_random(theta, y, table, rng=None, size=None):
    """:func:`rows_random` returning category values ``table[j, code]`` (float64)."""
    codes = rows_random(theta, y, rng=rng, size=size)
    return table[np.arange(table.shape[0]), codes].astype(np.float64)
