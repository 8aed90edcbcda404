"""Frame helpers of the real-valued families and their far-row log-densities.

A far row (:class:`bayesgen.data.frame.FarRows`) is z = t u + z_N with t = 2^E possibly
beyond the float range, ``u`` the far entries scaled by 1/t and ``z_N`` the moderate
ones. For a Gaussian class density, with z - mu = t u + (z_N - mu)::

    log N(z; mu, Sigma) = t^2 a2 + t a1 + a0
    a2 = -u^T P u / 2,  a1 = -u^T P (z_N - mu),  a0 = log N(z_N; mu, Sigma)

(P = Sigma^-1), exactly; :func:`bayesgen.data.frame.far_scores` turns the coefficients
into scores without overflow. A kernel density is dominated, in the direction of u,
by its extreme point p*: a2 = -u^2 / (2 h^2), a1 = u p* / h^2 and a0 the log-sum-exp of
the remaining terms (exact up to terms below exp(-745)). The Student-t predictive
densities have polynomial tails, so their far values are finite: log(1 + q) with
log q = 2 log t + log(q / t^2) evaluated on the scaled row.
"""

from __future__ import annotations

import numpy as np

LOG_2PI = np.log(2.0 * np.pi)


# ------------------------------------------------------------------ frames
def attach_frame(stats: dict, frame) -> dict:
    """Label statistics with the frame of the data they were computed from."""
    if frame is not None:
        stats["loc"] = frame.loc.copy()
        stats["scale"] = frame.scale.copy()
    return stats


def user_to_internal(family, kind: str, value: np.ndarray) -> np.ndarray:
    """A user-given prior quantity in the family's internal frame.

    ``kind``: "loc" (a mean, (d,)), "var" (variances, (d,)) or "cov" ((d, d)).
    """
    frame = family.frame
    if frame is None:
        return value
    if kind == "loc":
        return frame.internal_loc(value)
    if kind == "var":
        return frame.internal_var(value)
    return frame.internal_cov(value)


# ----------------------------------------------------------------- Gaussian
def gaussian_terms(family, far, params: dict):
    """(a2, a1, a0) of GaussianNB for far rows, each (..., m, K)."""
    mu, var = params["mu"], params["var"]
    prec = 1.0 / var
    a2 = -0.5 * ((far.U * far.U) @ np.swapaxes(prec, -1, -2))
    a1 = far.U @ np.swapaxes(mu * prec, -1, -2)
    a0 = family.log_lik(far.ZN, params, full=True)
    return a2, a1, a0


def _log1p_far(log_q: np.ndarray) -> np.ndarray:
    """log(1 + q) from log q, for any q >= 0 (no overflow)."""
    return np.logaddexp(0.0, log_q)


def gaussian_predictive(far, post: dict) -> np.ndarray:
    """Product of the per-feature Student-t predictive densities for far rows, (m, K).

    Moderate entries as in ``GaussianFamily.log_predictive``; a far entry z = t u has
    log z2 = 2 (log t + log|u - m/t|) - log(nu scale2).
    """
    from scipy.special import gammaln

    nu = 2.0 * post["a"]
    scale2 = post["b"] * (post["kappa"] + 1.0) / (post["a"] * post["kappa"])
    near = (far.ZN[:, None, :] - post["m"]) ** 2 / (nu * scale2)
    m_t = far.inv_t(np.broadcast_to(post["m"], (far.rows.size, *post["m"].shape)))
    with np.errstate(divide="ignore"):
        log_dist = far.log_t[:, None, None] + np.log(np.abs(far.U[:, None, :] - m_t))
    log_q = 2.0 * log_dist - np.log(nu * scale2)
    tail = np.where(far.far[:, None, :], _log1p_far(log_q), np.log1p(near))
    terms = (gammaln((nu + 1) / 2) - gammaln(nu / 2) - 0.5 * np.log(nu * np.pi * scale2)
             - (nu + 1) / 2 * tail)
    return terms.sum(axis=-1)


# -------------------------------------------------------------- multivariate
def _whitened(far, mu: np.ndarray, cov: np.ndarray, tied: bool):
    """u^T A_k (..., m, K, d), (z_N - mu_k)^T A_k (..., m, K, d) and log|Sigma_k| (..., K)
    with Sigma_k^-1 = A_k A_k^T."""
    from bayesgen.families.mvn.linalg import _whiten

    A, logdet = _whiten(cov)
    if tied:
        A = np.broadcast_to(A[..., None, :, :], (*mu.shape, mu.shape[-1]))
        logdet = np.broadcast_to(logdet[..., None], mu.shape[:-1])
    UA = np.einsum("md,...kde->...mke", far.U, A)
    diff = far.ZN[:, None, :] - mu[..., None, :, :]  # (..., m, K, d)
    B = np.einsum("...mkd,...kde->...mke", diff, A)
    return UA, B, logdet


def mvn_terms(family, far, params: dict):
    """(a2, a1, a0) of LDA/QDA for far rows, each (..., m, K)."""
    mu = params["mu"]
    d = mu.shape[-1]
    UA, B, logdet = _whitened(far, mu, params["cov"], family.tied)
    a2 = -0.5 * np.einsum("...mkd,...mkd->...mk", UA, UA)
    a1 = -np.einsum("...mkd,...mkd->...mk", UA, B)
    a0 = -0.5 * (np.einsum("...mkd,...mkd->...mk", B, B) + logdet[..., None, :] + d * LOG_2PI)
    return a2, a1, a0


def mvn_predictive(family, far, post: dict) -> np.ndarray:
    """Multivariate Student-t predictive log-density of far rows, (m, K): the
    Mahalanobis distance q = t^2 |u^T A + (z_N - m)^T A / t|^2 enters as log q."""
    from scipy.special import gammaln

    d = post["m"].shape[-1]
    UA, B, logdet = _whitened(far, post["m"], post["Psi"], family.tied)
    Bt = far.inv_t(B)
    with np.errstate(divide="ignore"):
        log_q = 2.0 * far.log_t[:, None] + np.log(np.sum((UA + Bt) ** 2, axis=-1))
    kappa = post["kappa"]
    df = np.asarray(post["nu"], dtype=np.float64) - d + 1.0
    log_scale = logdet + d * np.log((kappa + 1.0) / (kappa * df))
    const = (gammaln((df + d) / 2.0) - gammaln(df / 2.0) - 0.5 * d * np.log(df * np.pi)
             - 0.5 * log_scale)
    return const - 0.5 * (df + d) * _log1p_far(log_q + np.log(kappa / (kappa + 1.0)))


# ------------------------------------------------------------------- kernel
def kernel_terms(far, params: dict):
    """(a2, a1, a0) of KernelNB for far rows, each (..., m, K); rows in blocks of at
    most ``_BUDGET`` (draws x rows x points) values."""
    from bayesgen.families.kernel.family import _fixed
    from bayesgen.families.kernel.kde import _BUDGET

    n_points = _fixed(params)[0].shape[0]
    n_draws = int(np.prod(np.shape(params["bandwidth"])[:-2]))
    step = max(1, _BUDGET // max(1, n_draws * n_points))
    if far.rows.size <= step:
        return _kernel_block(far, params)
    blocks = [_kernel_block(far.take(np.arange(i, min(i + step, far.rows.size))), params)
              for i in range(0, far.rows.size, step)]
    return tuple(np.concatenate([b[i] for b in blocks], axis=-2) for i in range(3))


def _kernel_block(far, params: dict):
    from bayesgen.families.kernel.family import _fixed

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


# -------------------------------------------------------------------- mixed
def mixed_terms(family, far, params: dict):
    """(a2, a1, a0) of MixedNB for far rows: the real parts' own coefficients plus, for
    the other parts, a0 = their log-likelihood (their columns are never far)."""
    total = None
    for part, sub in zip(family._parts(), family._split(params), strict=True):
        fam, cols = part["family"], part["columns"]
        if hasattr(fam, "far_terms"):
            terms = fam.far_terms(far.columns(cols), sub)
        else:
            a0 = fam.log_lik(far.ZN[:, cols], sub, full=True)
            terms = (np.zeros_like(a0), np.zeros_like(a0), a0)
        total = terms if total is None else tuple(t + v for t, v in zip(total, terms,
                                                                           strict=True))
    return total


def mixed_predictive(family, far, post: dict) -> np.ndarray:
    """Sum over the parts of their closed-form predictive log-densities of far rows."""
    total = 0.0
    for part, p in zip(family._parts(), post["parts"], strict=True):
        fam, cols = part["family"], part["columns"]
        if hasattr(fam, "far_log_predictive"):
            total = total + fam.far_log_predictive(far.columns(cols), p)
        else:
            total = total + fam.log_predictive(far.ZN[:, cols], p)
    return total
