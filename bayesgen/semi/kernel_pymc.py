"""The unlabelled rows' class densities of KernelNB (and MixedNB's kernel parts) in the
NUTS model (``method="mcmc"``, :mod:`bayesgen.semi.nuts`).

KernelNB's NUTS model samples the bandwidths under the MAP's prior times exp(LOO(h)),
the leave-one-out likelihood of the labelled points (:mod:`bayesgen.families.
_kernel_pymc`). With unlabelled rows it gets the same potential as every other family,
``lambda sum_n w_n logsumexp_k [log pi_k + log p(x_n | y=k, h)]``, where p(x_n | y=k, h)
is the KDE of the labelled points of class k at the unlabelled row (no leave-one-out:
the unlabelled rows are no kernel centres, see :mod:`bayesgen.semi.kernel`):

    log p(x_n | k, h) = sum_{j observed in n} [logsumexp_l (log w_l - (x_nj - x_lj)^2
                        / (2 h_kj^2)) - log W_kj - log h_kj - log(2 pi) / 2]

over the points l of class k observed in feature j (W_kj their weight). The squared
differences are constants (m x n_k x d per class; refused above
:data:`bayesgen.families.kernel.pymc.MAX_PAIR_BYTES`); each log-sum-exp is shifted by
its maximum without gradient, so no bandwidth underflows to -inf. MixedNB: the kernel
parts as here, the other parts through the generic per-class ``pm.logp`` columns.
"""

from __future__ import annotations

import numpy as np

LOG_2PI = np.log(2.0 * np.pi)


def kernel_columns(stats: dict, h, Z: np.ndarray):
    """log p(x_n | y=k, h) of every unlabelled row and class, a PyTensor (m, K)
    expression (module docstring); ``stats`` the labelled points' kernel statistics,
    ``h`` the (K, d) bandwidth tensor, ``Z`` (m, d) the rows (NaN: missing, dropped)."""
    import pytensor.tensor as pt
    from pytensor.gradient import disconnected_grad

    from bayesgen.families.kernel.pymc import _LOG_ZERO, MAX_PAIR_BYTES

    X, y, w = stats["X"], stats["y"], stats["w"]
    K = stats["count"].shape[0]
    m, d = Z.shape
    need = 8 * m * X.shape[0] * d
    if need > MAX_PAIR_BYTES:
        raise ValueError(
            f"KernelNB method='mcmc' with unlabelled rows needs the differences between "
            f"the {m} unlabelled rows and the {X.shape[0]} labelled points ({need / 1e6:.0f}"
            f" MB; the limit is {MAX_PAIR_BYTES / 1e6:.0f} MB). Use method='map', or fewer "
            "unlabelled rows."
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


def columns(estimator, family, params: dict, Z: np.ndarray, generic):
    """(m, K) log p(x_n | y=k) for KernelNB or a MixedNB with kernel parts: the kernel
    parts by :func:`kernel_columns` on the fit's labelled statistics, the other parts by
    ``generic(family, params, Z, prefix, dims)``."""
    stats = estimator.stats_
    if family.name == "kernel":
        return kernel_columns(stats, params["bandwidth"], Z)
    from bayesgen.families.mixed.pymc import part_hooks

    total = 0.0
    for (part, sub, pre, dims), s in zip(part_hooks(family, params), stats["parts"],
                                         strict=True):
        Zp = Z[:, part["columns"]]
        if part["name"] == "kernel":
            total = total + kernel_columns(s, sub["bandwidth"], Zp)
        else:
            total = total + generic(part["family"], sub, Zp, pre, dims)
    return total
