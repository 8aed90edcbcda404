"""PyMC pieces of CategoricalNB (:mod:`bayesgen.families.categorical.family`): coordinates of
the per-C_j blocks and the ``pm.CustomDist`` log-density and sampler of the observed
values (codes, or category values through a (d, Cmax) table)."""

from __future__ import annotations

import numpy as np

from bayesgen.data import categories as cats
from bayesgen.data.categories import inverse_cdf
from bayesgen.utils.heavy import import_pymc


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
    of entries of its (sorted, last-value padded) table row below it; a missing entry
    (NaN) looks up code 0 (a real category, theta > 0) and is then dropped, so neither
    the value nor the gradient is NaN."""
    import pytensor.tensor as pt

    codes = pt.sum(pt.lt(table[None, :, :], value[:, :, None]), axis=-1)  # NaN: code 0
    features = pt.arange(theta.shape[-2])
    terms = pt.log(theta[y[:, None], features[None, :], codes])
    return pt.sum(pt.switch(pt.isnan(value), 0.0, terms))


def values_random(theta, y, table, rng=None, size=None):
    """:func:`rows_random` returning category values ``table[j, code]`` (float64)."""
    codes = rows_random(theta, y, rng=rng, size=size)
    return table[np.arange(table.shape[0]), codes].astype(np.float64)


def pymc_params(family, prior: dict, *, prefix: str = "", dims: dict | None = None) -> dict:
    """``CategoricalFamily.pymc_params``: Dirichlet priors of ``theta`` in blocks of equal
    C_j, one variable ``prefix + f"theta_c{C}"`` ~ Dirichlet(alpha_j * ones(C)) per
    distinct C, dims (class, ``feature_cC``, ``category_cC``), padded to Cmax and put back
    in feature order as the deterministic ``prefix + "theta"`` (K, d, Cmax); ``prior``
    holds ``n_categories`` and ``alpha`` (d,); missing coordinates
    (:func:`category_coords`) are added."""
    pm = import_pymc()
    import pytensor.tensor as pt

    dims = dims or family.param_dims
    class_dim, feature, category = dims["theta"]
    n_cat, alpha = prior["n_categories"], prior["alpha"]
    model = pm.modelcontext(None)
    for name, values in category_coords(n_cat, feature, category).items():
        if name not in model.coords:
            model.add_coord(name, values)
    width = int(n_cat.max())
    blocks, order = [], []
    for c in np.unique(n_cat):
        features = np.flatnonzero(n_cat == c)
        block = pm.Dirichlet(
            f"{prefix}theta_c{c}",
            a=np.repeat(alpha[features, None], c, axis=1),
            dims=(class_dim, f"{feature}_c{c}", f"{category}_c{c}"),
        )
        if c < width:
            block = pt.concatenate(
                [block, pt.zeros((block.shape[0], features.size, width - c))], axis=2
            )
        blocks.append(block)
        order.append(features)
    stacked = pt.concatenate(blocks, axis=1) if len(blocks) > 1 else blocks[0]
    inverse = np.argsort(np.concatenate(order))
    if np.any(inverse != np.arange(inverse.size)):
        stacked = stacked[:, inverse, :]
    return {"theta": pm.Deterministic(f"{prefix}theta", stacked, dims=dims["theta"])}


def observed(family, params: dict, X, y, *, prefix: str = "",
             dims: dict | None = None) -> None:
    """``CategoricalFamily.pymc_observed``: ``x_nj ~ Categorical(theta[y_n, j, :C_j])``
    over the family's ``categories_`` as one ``pm.CustomDist``
    ``prefix + "x"``, dims (obs, ``feature``): codes observed directly (int64) when every
    feature's categories are 0..C_j - 1, else the category table maps values to codes
    (:func:`values_logp`, which drops missing entries) and back (:func:`values_random`)."""
    pm = import_pymc()

    from bayesgen.families import pymc_gaps

    categories, theta = family.categories_, params["theta"]
    feature = (dims or family.param_dims)["theta"][1]
    gaps = pymc_gaps.has_gaps(X)
    if not gaps and all(cats.is_identity(c) for c in categories):
        pm.CustomDist(
            f"{prefix}x", theta, y, logp=rows_logp, random=rows_random,
            signature="(k,d,c),(n)->(n,d)", dtype="int64", class_name="Categorical",
            observed=np.asarray(X).astype(np.int64), dims=("obs", feature),
        )
        return
    pm.CustomDist(
        f"{prefix}x", theta, y, cats.table(categories),
        logp=values_logp, random=values_random,
        signature="(k,d,c),(n),(d,c)->(n,d)", dtype="float64", class_name="Categorical",
        observed=pymc_gaps.observed_constant(X) if gaps else np.asarray(X, dtype=np.float64),
        dims=("obs", feature),
    )


def rows_loglik(family, params: dict, X: np.ndarray, **_):
    """``CategoricalFamily.pymc_rows_loglik``: log p(x_n | y=k, theta), a PyTensor (n, K)
    expression for category values ``X`` (n, d) (NaN drops its term) and ``theta``
    (K, d, Cmax): the rows apart, which :func:`observed`'s total ``pm.logp`` does not
    give (:mod:`bayesgen.semi.nuts`)."""
    import pytensor.tensor as pt

    theta = params["theta"]
    X = np.asarray(X, dtype=np.float64)
    missing = np.isnan(X)
    table = cats.table(family.categories_)  # (d, Cmax), padded with the last value
    codes = np.sum(table[None, :, :] < np.where(missing, -np.inf, X)[:, :, None], axis=-1)
    features = np.arange(X.shape[1])[None, :]
    terms = pt.log(theta[:, features, codes])  # (K, n, d); a missing entry reads code 0
    return pt.sum(terms * (~missing)[None, :, :], axis=-1).T
