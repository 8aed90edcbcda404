"""Far rows of KernelNB (:class:`bayesgen.data.frame.FarRows`: z = t u + z_N with t = 2^E
possibly beyond the float range, see :mod:`bayesgen.families.far`).

A kernel density is dominated, in the direction of u, by its extreme point p*:
``log p(z | k) = t^2 a2 + t a1 + a0`` with a2 = -u^2 / (2 h^2), a1 = u p* / h^2 and a0
the log-sum-exp of the remaining terms (exact up to terms below exp(-745)), per feature.
"""

from __future__ import annotations

import numpy as np

from bayesgen.families.kernel.kde import _BUDGET, LOG_2PI, _fixed


def kernel_terms(far, params: dict):
    """(a2, a1, a0) of KernelNB for far rows, each (..., m, K); rows in blocks of at
    most ``_BUDGET`` (draws x rows x points) values."""
    n_points = _fixed(params)[0].shape[0]
    n_draws = int(np.prod(np.shape(params["bandwidth"])[:-2]))
    step = max(1, _BUDGET // max(1, n_draws * n_points))
    if far.rows.size <= step:
        return _kernel_block(far, params)
    blocks = [_kernel_block(far.take(np.arange(i, min(i + step, far.rows.size))), params)
              for i in range(0, far.rows.size, step)]
    return tuple(np.concatenate([b[i] for b in blocks], axis=-2) for i in range(3))


def _kernel_block(far, params: dict):
    P, cls, w = _fixed(params)
    h = np.asarray(params["bandwidth"], dtype=np.float64)
    lead, (K, d) = h.shape[:-2], h.shape[-2:]
    H = h.reshape(-1, K, d)  # (S, K, d)
    m = far.rows.size
    a2 = np.zeros((H.shape[0], m, K))
    a1 = np.zeros_like(a2)
    a0 = np.zeros_like(a2)
    for k in range(K):
        Pk, wk = P[cls == k], w[cls == k]
        if Pk.shape[0] == 0:
            a0[:, :, k] = -np.inf
            continue
        log_wk = np.log(wk)
        for j in range(d):
            hk = H[:, k, j][:, None]  # (S, 1)
            const = -np.log(wk.sum()) - np.log(hk) - 0.5 * LOG_2PI  # (S, 1)
            p = Pk[:, j]
            u, zn, is_far = far.U[:, j], far.ZN[:, j], far.far[:, j]
            # moderate entries: the ordinary log KDE at z_N
            sq = (zn[:, None] - p[None, :]) ** 2  # (m, n_k)
            a = log_wk - sq[None] * (0.5 / hk**2)[:, :, None]  # (S, m, n_k)
            near = _lse(a) + const
            # far entries: extreme point p* in the direction of u
            star = np.where(u >= 0, p.max(), p.min())  # (m,)
            with np.errstate(divide="ignore"):
                log_gap = (far.log_t + np.log(np.abs(u)))[:, None] + np.log(
                    np.abs(p[None, :] - star[:, None]))  # (m, n_k)
            with np.errstate(over="ignore"):
                pull = np.exp(log_gap[None] - 2.0 * np.log(hk)[:, :, None])
            b = log_wk - (p**2)[None, None, :] * (0.5 / hk**2)[:, :, None] - pull
            rest = _lse(b) + const
            inv_h2 = 1.0 / hk**2  # (S, 1)
            a2[:, :, k] += np.where(is_far, -0.5 * u**2 * inv_h2, 0.0)
            a1[:, :, k] += np.where(is_far, u * star * inv_h2, 0.0)
            a0[:, :, k] += np.where(is_far, rest, near)
    return (a2.reshape(*lead, m, K), a1.reshape(*lead, m, K), a0.reshape(*lead, m, K))


def _lse(a: np.ndarray) -> np.ndarray:
    """log-sum-exp over the last axis; all -inf gives -inf."""
    top = a.max(axis=-1, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore"):
        return np.log(np.exp(a - top).sum(axis=-1)) + top[..., 0]
