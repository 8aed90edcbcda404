"""MCMC hooks of :class:`bayesgen.families.kernel.family.KernelFamily` (KernelNB).

``method="mcmc"`` samples the MAP's model, the log-normal prior around Silverman's
bandwidths times exp(LOO(h)), written here in PyTensor on per-class pairwise constants
(refused above :data:`MAX_PAIR_BYTES`). A KDE on the data is no distribution PyMC can
observe, so ``model_`` holds ``pm.Potential("x_loglik")`` and no ``x``; predictive x
come from ``KernelFamily.sample``. The pointwise log-likelihood of ``idata_`` is every
training row's own LOO term (:func:`train_log_lik`), whose sum NUTS sampled. New rows
(semi-supervised NUTS) are scored by the labeled KDEs without leave-one-out
(:func:`rows_loglik`), each log-sum-exp shifted by its maximum without gradient."""

from __future__ import annotations

import numpy as np

from bayesgen.families.kernel.kde import LOG_2PI, _fixed, _kde_sums
from bayesgen.utils.heavy import import_pymc

#: refuse MCMC when the pairwise constants of the LOO likelihood exceed this many bytes
MAX_PAIR_BYTES = 200_000_000
_LOG_ZERO = -1e30  # log 0 as a finite constant: exp underflows to 0, no NaN gradient


def pymc_params(family, prior: dict, *, prefix: str = "", dims: dict | None = None) -> dict:
    """``log h ~ Normal(log centre, sd)`` (variable ``prefix + "bandwidth_log"``, dims
    ``dims["bandwidth"]``) and the Deterministic ``prefix + "bandwidth"`` = exp(log h);
    returns ``{"bandwidth": h}`` (``KernelFamily.pymc_params``)."""
    pm = import_pymc()
    import pytensor.tensor as pt

    dim = (dims or family.param_dims)["bandwidth"]
    log_h = pm.Normal(
        f"{prefix}bandwidth_log", mu=np.log(prior["centre"]), sigma=prior["sd"], dims=dim
    )
    return {"bandwidth": pm.Deterministic(f"{prefix}bandwidth", pt.exp(log_h), dims=dim)}


def observed(family, params: dict, X, y, *, prefix: str = "", dims: dict | None = None) -> None:
    """``pm.Potential(prefix + "x_loglik")``: the unit-weight LOO likelihood of the rows of
    X (``pymc_stats_loglik`` of their unit-weight statistics, per feature with missing
    entries; ``KernelFamily.pymc_observed``).
    ``y`` is the observed class variable (its data are used) or an integer array."""
    pm = import_pymc()

    dims = dims or family.param_dims

    model = pm.modelcontext(None)
    value = model.rvs_to_values.get(y, y)
    y_index = np.asarray(getattr(value, "data", value), dtype=np.intp)
    n_classes = len(model.coords[dims["bandwidth"][0]])
    stats = family.stats(np.asarray(X, dtype=np.float64), y_index, np.ones(y_index.size),
                         n_classes)
    pm.Potential(f"{prefix}x_loglik", family.pymc_stats_loglik(params, stats))


def stats_loglik(family, params: dict, stats: dict):
    """``sum_kj LOO_kj(h_kj)``, the objective of ``mle``/``map``, as a PyTensor scalar on
    the padded pairwise constants (:func:`pair_constants`); O(K n_max^2 d) per gradient;
    ``ValueError`` above :data:`MAX_PAIR_BYTES`."""
    import pytensor.tensor as pt
    from pytensor.gradient import disconnected_grad

    sq, log_v, w, const = (pt.as_tensor(c) for c in pair_constants(stats, family))
    h = params["bandwidth"]
    a = log_v[:, None] - sq * (0.5 / h**2)[:, :, None, None]  # (K, d, n, n)
    top = disconnected_grad(pt.max(a, axis=-1, keepdims=True))
    lse = pt.log(pt.sum(pt.exp(a - top), axis=-1)) + top[..., 0]  # (K, d, n)
    return pt.sum(lse * w[:, None, :]) - pt.sum(w.sum(1)[:, None] * pt.log(h)) + const


def pair_constants(stats: dict, family):
    """Padded per-class constants of the weighted LOO likelihood.

    Returns ``sq`` (K, d, m, m) squared differences within each class, ``log_v``
    (K, m, m) with log w_l off the diagonal, log(w_i - u_i) on it and log 0 (finite
    ``_LOG_ZERO``) for padding, ``w`` (K, m) weights (0 for padding) and the scalar
    ``-d sum_k sum_i w_i log(W_k - u_i) - W d/2 log(2 pi)``; m = largest class size.
    """
    family.require_points(stats, "KernelNB")
    X, y, w = stats["X"], stats["y"], stats["w"]
    K, d = stats["count"].shape[0], X.shape[1]
    sizes = np.bincount(y, minlength=K)
    m = int(sizes.max())
    need = 8 * K * m * m * (d + 1)
    if need > MAX_PAIR_BYTES:
        cap = int(np.sqrt(MAX_PAIR_BYTES / (8 * K * (d + 1))))
        raise ValueError(
            f"KernelNB's PyMC likelihood (method='mcmc', model_) needs the pairwise "
            f"differences within each class "
            f"({K} classes x {m}^2 pairs x {d} features, {need / 1e6:.0f} MB; the limit is "
            f"{MAX_PAIR_BYTES / 1e6:.0f} MB). Use method='map', or subsample the training "
            f"data to at most about {cap} rows per class."
        )
    sq = np.zeros((K, d, m, m))
    log_v = np.full((K, m, m), _LOG_ZERO)
    wk_pad = np.zeros((K, m))
    const = -0.5 * LOG_2PI * d * w.sum()
    for k in range(K):
        P, wk = X[y == k], w[y == k]
        n = wk.size
        diff = P.T[:, :, None] - P.T[:, None, :]
        sq[k, :, :n, :n] = diff * diff
        u = np.minimum(wk, 1.0)
        with np.errstate(divide="ignore"):
            block = np.broadcast_to(np.log(wk), (n, n)).copy()
            self_term = np.log(wk - u)
        block[np.arange(n), np.arange(n)] = np.maximum(self_term, _LOG_ZERO)
        log_v[k, :n, :n] = block
        wk_pad[k, :n] = wk
        const -= d * (wk @ np.log(wk.sum() - u))
    return sq, log_v, wk_pad, const


def train_log_lik(X: np.ndarray, y: np.ndarray, params: dict) -> np.ndarray:
    """The LOO term of every training row, (..., n) (``KernelFamily.train_log_lik``, which
    pairs the points with the rows: ``point_row``): row n, training point i of class y_n,
    leaves u_n = min(w_i, 1) of its own weight out; a row of weight 0 gets the KDE at its
    class. Missing entries: per feature j the KDE of the points observing j (weight
    W_kj), summed over the features the row observes (0 for a row with none). In blocks
    of bounded memory."""
    P, cls, w = _fixed(params)
    row = np.asarray(params["point_row"]).reshape(-1, P.shape[0])[0].astype(np.intp)
    y = np.asarray(y, dtype=np.intp)
    n = X.shape[0]
    h = np.asarray(params["bandwidth"], dtype=np.float64)
    lead, (K, d) = h.shape[:-2], h.shape[-2:]
    H = h.reshape(-1, K, d)
    point = np.full(n, -1)  # each row's training point (index into P), -1 for none
    point[row] = np.arange(row.size)
    w_own = np.zeros(n)
    w_own[row] = w
    u = np.minimum(w_own, 1.0)
    with np.errstate(divide="ignore"):
        log_own = np.log(w_own - u)
    M = np.isnan(X)
    gaps = bool(M.any() or np.isnan(P).any())
    Xt = np.ascontiguousarray((np.where(M, 0.0, X) if gaps else X).T)
    out = np.full((H.shape[0], n), -np.inf)
    for k in range(K):
        mine, pts = np.flatnonzero(y == k), np.flatnonzero(cls == k)
        if pts.size == 0:  # no training point of class k: p(x | k) = 0
            continue
        local = np.full(P.shape[0] + 1, -1)  # point -> its position in class k; -1 -> -1
        local[pts] = np.arange(pts.size)
        gap = np.isnan(P[pts])  # a point missing j is no kernel of feature j's KDE
        sums = _kde_sums(  # a row missing j is its own point: its own kernel is never read
            np.ascontiguousarray(Xt[:, mine]),
            np.ascontiguousarray(np.where(gap, np.inf, P[pts]).T),
            np.log(w[pts]), H[:, k], local[point[mine]], log_own[mine], by_feature=gaps,
        )
        W = (~gap * w[pts][:, None]).sum(axis=0)  # (d,)
        with np.errstate(divide="ignore", invalid="ignore"):
            log_norm = np.log(H[:, k])[:, :, None] + np.log(W[:, None] - u[mine])  # (S, d, r)
        if gaps:
            terms = sums - log_norm - 0.5 * LOG_2PI
            out[:, mine] = np.where(M[mine].T[None], 0.0, terms).sum(axis=1)
        else:
            out[:, mine] = sums - log_norm.sum(axis=1) - 0.5 * d * LOG_2PI
    return out.reshape(*lead, n)


def rows_loglik(family, params: dict, Z: np.ndarray, *, stats: dict, **_):
    """``KernelFamily.pymc_rows_loglik``: log p(z_n | y=k, h) of every row and class under
    the labeled KDEs, no leave-one-out, a PyTensor (m, K) expression (module docstring);
    ``stats`` the labeled points' kernel statistics, ``params["bandwidth"]`` the (K, d)
    bandwidth tensor, ``Z`` (m, d) the rows (NaN: missing, its factor dropped)."""
    import pytensor.tensor as pt
    from pytensor.gradient import disconnected_grad

    h, Z = params["bandwidth"], np.asarray(Z, dtype=np.float64)

    X, y, w = stats["X"], stats["y"], stats["w"]
    K = stats["count"].shape[0]
    m, d = Z.shape
    need = 8 * m * X.shape[0] * d
    if need > MAX_PAIR_BYTES:
        raise ValueError(
            f"KernelNB method='mcmc' with unlabeled rows needs the differences between "
            f"the {m} unlabeled rows and the {X.shape[0]} labeled points ({need / 1e6:.0f}"
            f" MB; the limit is {MAX_PAIR_BYTES / 1e6:.0f} MB). Use method='map', or fewer "
            "unlabeled rows."
        )
    Zo = ~np.isnan(Z)
    Z0 = np.where(Zo, Z, 0.0)
    columns = []
    for k in range(K):
        P, wk = X[y == k], w[y == k]
        Po = ~np.isnan(P)
        sq = (Z0[:, None, :] - np.where(Po, P, 0.0)[None, :, :]) ** 2  # (m, n_k, d)
        log_v = np.where(Po, np.log(wk)[:, None], _LOG_ZERO)  # (n_k, d)
        W = (Po * wk[:, None]).sum(0)  # (d,)
        a = pt.as_tensor(log_v)[None] - pt.as_tensor(sq) * (0.5 / h[k] ** 2)[None, None, :]
        top = disconnected_grad(pt.max(a, axis=1, keepdims=True))
        lse = pt.log(pt.sum(pt.exp(a - top), axis=1)) + top[:, 0, :]  # (m, d)
        with np.errstate(divide="ignore"):
            log_W = np.log(W)
        terms = lse - pt.as_tensor(log_W)[None, :] - pt.log(h[k])[None, :] - 0.5 * LOG_2PI
        columns.append(pt.sum(terms * pt.as_tensor(Zo.astype(np.float64)), axis=1))
    return pt.stack(columns, axis=1)
