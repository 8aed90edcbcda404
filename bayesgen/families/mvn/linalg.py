"""Linear algebra of the multivariate normal family: Cholesky factors, whitening and
the Mahalanobis distances of QDA, for one parameter set or many posterior draws."""

from __future__ import annotations

from typing import Any

import numpy as np

from bayesgen.utils.logspace import log_rising
from bayesgen.utils.threads import one_blas_thread, over_row_blocks

# Elements per temporary block in the QDA log-likelihood (8 MB of float64).
_BLOCK = 2**20


def _scalar(value: Any) -> float:
    """A finite float from a number, or NaN (which fails every check) otherwise."""
    try:
        value = float(value) if np.ndim(value) == 0 else np.nan
    except (TypeError, ValueError):
        value = np.nan
    return value if np.isfinite(value) else np.nan


def _swap(a: np.ndarray) -> np.ndarray:
    return np.swapaxes(a, -1, -2)


def _cholesky(cov: np.ndarray, what: str, fix: str = "use method='map'") -> np.ndarray:
    """Lower Cholesky factors of a stack of covariances; ValueError if not SPD."""
    try:
        return np.linalg.cholesky(cov)
    except np.linalg.LinAlgError:
        raise ValueError(f"{what} is not positive definite (singular); {fix}.") from None


def _whiten(cov: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A = L^-T (..., d, d) and log|Sigma| (...) for a stack Sigma = L L^T (..., d, d).

    Sigma^-1 = A A^T, so ``(x - mu)^T Sigma^-1 (x - mu) = ||x^T A - mu^T A||^2``.
    """
    L = _cholesky(cov, "The covariance")
    logdet = 2.0 * np.log(np.diagonal(L, axis1=-2, axis2=-1)).sum(-1)
    return _swap(np.linalg.inv(L)), logdet


def _qda_mahalanobis_draws(Xc: np.ndarray, mc: np.ndarray, A: np.ndarray) -> np.ndarray:
    """The QDA distances for many posterior draws, (S, n, K), as two large products.

    Expands ``(x - mu)^T P (x - mu) = x^T P x - 2 x^T (P mu) + mu^T P mu`` with
    P = A A^T, and writes ``x^T P x = sum_{i<=j} c_ij x_i x_j P_ij`` (c = 1 on the
    diagonal, 2 off it) so that all draws and classes go through one GEMM of the
    (n, d(d+1)/2) quadratic features with a (d(d+1)/2, S K) matrix, instead of S K
    small products. Only used with leading draw dims; the point-estimate path keeps the
    exact difference form. X and mu are centred at the mean of the class means by the
    caller, which keeps the expansion accurate.
    """
    n, d = Xc.shape
    n_draws, n_classes = A.shape[0], A.shape[1]
    P = A @ _swap(A)  # (S, K, d, d) precisions
    iu, ju = np.triu_indices(d)
    weight = np.where(iu == ju, 1.0, 2.0)
    quad_w = (P[..., iu, ju] * weight).reshape(-1, iu.size).T  # (d(d+1)/2, S K)
    Pm = np.einsum("skij,skj->ski", P, mc)  # (S, K, d)
    lin_w = Pm.reshape(-1, d).T  # (d, S K)
    const = np.einsum("ski,ski->sk", Pm, mc).reshape(-1)  # (S K,)
    out = np.empty((n_draws, n, n_classes))
    step = max(1, _BLOCK * 8 // max(1, n_draws * n_classes))
    for start in range(0, n, step):
        rows = slice(start, min(start + step, n))
        Xr = Xc[rows]
        dist = (Xr[:, iu] * Xr[:, ju]) @ quad_w
        dist -= 2.0 * (Xr @ lin_w)
        dist += const
        out[:, rows] = np.moveaxis(dist.reshape(-1, n_draws, n_classes), 1, 0)
    return out


def _qda_mahalanobis(Xc: np.ndarray, mc: np.ndarray, A: np.ndarray) -> np.ndarray:
    """||x_n^T A_k - mu_k^T A_k||^2 for all rows and classes, shape (..., n, K).

    One product ``X @ [A_1 .. A_K]`` per block of rows, written into one reused
    buffer of about ``_BLOCK`` elements: the (..., rows, K d) temporary stays in
    cache and is never re-allocated (measured faster than one n x K d temporary).
    """
    n, d = Xc.shape
    lead, n_classes = A.shape[:-3], A.shape[-3]
    B = np.ascontiguousarray(np.moveaxis(A, -3, -2).reshape(*lead, d, n_classes * d))
    MA = np.einsum("...kd,...kde->...ke", mc, A).reshape(*lead, 1, n_classes * d)
    out = np.empty((*lead, n, n_classes))
    per_row = n_classes * d * max(1, int(np.prod(lead)))
    step = max(1, min(n, max(64, _BLOCK // per_row)))

    def rows(start: int, stop: int, buffer: np.ndarray) -> None:
        Z = buffer[..., : stop - start, :]
        np.matmul(Xc[start:stop], B, out=Z)
        Z -= MA
        np.square(Z, out=Z)
        np.sum(Z.reshape(*Z.shape[:-1], n_classes, d), axis=-1, out=out[..., start:stop, :])

    # blocks of rows over the cores, one buffer per thread (see bayesgen.utils.threads)
    over_row_blocks(rows, n, size=n * per_row, block=step,
                    scratch=lambda: np.empty((*lead, step, n_classes * d)))
    return out


def linear_scores(X: np.ndarray, mu: np.ndarray, cov: np.ndarray) -> np.ndarray:
    """LDA's linear discriminants ``x^T Sigma^-1 mu_k - mu_k^T Sigma^-1 mu_k / 2``,
    (..., n, K), as ``x^T W - ||mu_k^T A||^2 / 2`` with ``W = A (mu A)^T`` (d, K) and
    A = L^-T: one (n, d) x (d, K) product. Point estimates (2-d mu): blocks of rows
    split over the cores with one BLAS thread each (see :mod:`bayesgen.utils.threads`)."""
    A, _ = _whiten(cov)
    MA = mu @ A  # (..., K, d)
    W, bias = A @ _swap(MA), -0.5 * np.einsum("...kd,...kd->...k", MA, MA)
    if W.ndim > 2:  # posterior draws
        return X @ W + bias[..., None, :]
    scores = np.empty((X.shape[0], W.shape[1]))

    def rows(start: int, stop: int) -> None:
        np.matmul(X[start:stop], W, out=scores[start:stop])
        scores[start:stop] += bias

    with one_blas_thread():
        over_row_blocks(rows, X.shape[0], size=X.size)
    return scores


def mahalanobis(X: np.ndarray, mu: np.ndarray, cov: np.ndarray, *, tied: bool):
    """(x_n - mu_k)^T Sigma_k^-1 (x_n - mu_k), (..., n, K), and log|Sigma_k|, (..., K).

    With A_k = L_k^-T (Cholesky), the distance is ``||x^T A_k - mu_k^T A_k||^2``.
    QDA: one product ``X @ [A_1 .. A_K]`` per block of rows. LDA: ``Z = X A``
    (..., n, d) and the expansion ``||z||^2 - 2 z . (mu_k A) + ||mu_k A||^2``. X and
    mu are first centred at the mean of the class means, which keeps both accurate.
    """
    d = mu.shape[-1]
    A, logdet = _whiten(cov)
    centre = mu.reshape(-1, d).mean(axis=0)
    Xc = X - centre
    mc = mu - centre
    if not tied:
        if A.ndim == 5 or (A.ndim == 4 and A.shape[0] > 1):
            flat = A.reshape(-1, *A.shape[-3:])
            dist = _qda_mahalanobis_draws(Xc, mc.reshape(-1, *mc.shape[-2:]), flat)
            return dist.reshape(*A.shape[:-3], *dist.shape[1:]), logdet
        return _qda_mahalanobis(Xc, mc, A), logdet
    Z = Xc @ A  # (..., n, d)
    MA = mc @ A  # (..., K, d)
    out = np.einsum("...nd,...nd->...n", Z, Z)[..., None]
    out = out - 2.0 * (Z @ _swap(MA))
    out += np.einsum("...kd,...kd->...k", MA, MA)[..., None, :]
    return out, np.broadcast_to(logdet[..., None], mu.shape[:-1])


def student_t_predictive(X: np.ndarray, post: dict, *, tied: bool) -> np.ndarray:
    """The Normal-Inverse-Wishart posterior predictive log-density, shape (n, K).

    Multivariate Student-t (Murphy 2007, eq. 258) with df_k = nu_k - d + 1 degrees of
    freedom, location m_k and scale Psi_k (kappa_k + 1) / (kappa_k df_k); LDA uses the
    shared Psi and nu.

    Parameters
    ----------
    X : ndarray of shape (n, d)
        Complete rows.
    post : dict
        ``m`` (K, d), ``kappa`` (K,), ``Psi`` (K, d, d) or (d, d), ``nu`` (K,) or float.
    tied : bool
        LDA (one Psi) or QDA.
    """
    d = X.shape[1]
    maha, logdet = mahalanobis(X, post["m"], post["Psi"], tied=tied)
    kappa = post["kappa"]
    df = np.asarray(post["nu"], dtype=np.float64) - d + 1.0
    return (student_t_const(df, d, logdet, kappa)
            - 0.5 * (df + d) * np.log1p(maha * (kappa / (kappa + 1.0))))


def student_t_const(df: np.ndarray, d: int, logdet: np.ndarray,
                    kappa: np.ndarray) -> np.ndarray:
    """The normalising constant of the Normal-Inverse-Wishart predictive Student-t::

        lgamma((df + d) / 2) - lgamma(df / 2) - d log(df pi) / 2 - log|S| / 2,
        S = Psi (kappa + 1) / (kappa df),

    evaluated as ``log_rising(df / 2, d / 2) - d log(pi) / 2 - log|Psi| / 2
    - d log1p(1 / kappa) / 2`` (the log df terms cancel): finite for any finite df and
    kappa (sample weights near the float64 limit make them ~1e300, where the textbook
    form gives inf - inf or overflows kappa df).
    """
    return (log_rising(df / 2.0, d / 2.0) - 0.5 * d * np.log(np.pi) - 0.5 * logdet
            - 0.5 * d * np.log1p(1.0 / kappa))


def loo_student_t(Z: np.ndarray, y: np.ndarray, w: np.ndarray, post: dict, *,
                  tied: bool) -> np.ndarray:
    """The Student-t predictive of every row under the Normal-Inverse-Wishart posterior
    of its class without it, (n,).

    Row n of weight w and class k = y_n leaves (u = z - m_k, r = u^T Psi_k^-1 u,
    c = w kappa_k / kappa'_k)::

        kappa' = kappa_k - w,  nu' = nu - w,  Psi' = Psi_k - c u u^T
        log|Psi'| = log|Psi_k| + log(1 - c r)                    (matrix determinant lemma)
        (z - m')^T Psi'^-1 (z - m') = (kappa_k / kappa')^2 r / (1 - c r)  (Sherman-Morrison)

    so one Cholesky factor per class serves every row. LDA (``tied``) uses the shared Psi
    and nu.

    Parameters
    ----------
    Z : ndarray of shape (n, d)
        Complete rows.
    y, w : ndarray of shape (n,)
        Class indices and weights.
    post : dict
        ``m`` (K, d), ``kappa`` (K,), ``Psi`` (K, d, d) or (d, d), ``nu`` (K,) or float.
    """
    from scipy.linalg import solve_triangular

    n, d = Z.shape
    m, kappa = post["m"], post["kappa"]
    Psi = post["Psi"] if not tied else np.broadcast_to(post["Psi"], (m.shape[0], d, d))
    nu = np.broadcast_to(np.asarray(post["nu"], dtype=np.float64), kappa.shape)
    u = Z - m[y]
    r = np.empty(n)
    logdet = np.empty(kappa.shape)
    for k in range(m.shape[0]):
        L = np.linalg.cholesky(Psi[k])
        logdet[k] = 2.0 * np.log(np.diagonal(L)).sum()
        rows = np.flatnonzero(y == k)
        if rows.size:
            v = solve_triangular(L, u[rows].T, lower=True)
            r[rows] = np.einsum("ij,ij->j", v, v)
    kappa_k = kappa[y]
    kappa_r = kappa_k - w
    c = w * kappa_k / kappa_r
    one_minus = 1.0 - c * r  # > 0: Psi' = Psi0 + (its statistics) is positive definite
    df = nu[y] - w - d + 1.0
    logdet_r = logdet[y] + np.log(one_minus)
    quad = (kappa_k / kappa_r) ** 2 * r / one_minus
    return (student_t_const(df, d, logdet_r, kappa_r)
            - 0.5 * (df + d) * np.log1p(quad * kappa_r / (kappa_r + 1.0)))


def loo_student_t_at(Z: np.ndarray, y: np.ndarray, w: np.ndarray, post: dict,
                     Z_test: np.ndarray | None = None, *, tied: bool) -> np.ndarray:
    """The Student-t predictive of the rows ``Z_test`` under the Normal-Inverse-Wishart
    posterior without each training row, every class: log p(z_test_j | y = k, D
    without row i), (n, m, K); ``Z_test=None``: each training row at itself, (n, K).

    Row i of weight w and class c = y_i leaves (u = z_i - m_c, v = L^-1 u with
    Psi = L L^T the scale its class uses, r = |v|^2, c_i = w kappa_c / kappa'_c,
    g = 1 - c_i r)::

        kappa'_c = kappa_c - w,  m'_c = m_c - w u / kappa'_c,  nu' = nu - w,
        Psi' = Psi - c_i u u^T,  log|Psi'| = log|Psi| + log g

    For a test row z and class k, t = L^-1 (z - m_k) and a = w / kappa'_c if k = c
    (the location moves) else 0; then L^-1 (z - m'_k) = t + a v and, by
    Sherman-Morrison, the Mahalanobis distance under Psi' is::

        |t + a v|^2 + c_i (v . (t + a v))^2 / g
        = |t|^2 + 2 a (v . t) + a^2 r + c_i (v . t + a r)^2 / g

    so one Cholesky factor per scale and one product V T^T of the whitened training
    and test rows give every entry. QDA (separate Psi_k, nu_k): only class c changes,
    the other classes keep the full-data predictive. LDA (``tied``): Psi and nu are
    shared, so removing row i changes the predictive of EVERY class (k != c through
    Psi' and nu' only). Cost O(n m K d) for LDA (O(n m d) for QDA) plus O((n + m K) d^2);
    memory a few arrays of the output's size. Test rows with missing entries (NaN):
    the marginal of their observed coordinates (sub-vector of m, sub-matrix of Psi,
    nu less the missing dimensions), one call per missingness pattern.

    Parameters
    ----------
    Z : ndarray of shape (n, d)
        Complete training rows.
    y, w : ndarray of shape (n,)
        Class indices and weights.
    post : dict
        ``m`` (K, d), ``kappa`` (K,), ``Psi`` (K, d, d) or (d, d), ``nu`` (K,) or float.
    Z_test : ndarray of shape (m, d) or None
    tied : bool
        LDA (one Psi) or QDA.
    """
    from scipy.linalg import solve_triangular

    n, d = Z.shape
    mean, kappa = post["m"], post["kappa"]
    n_classes = mean.shape[0]
    if Z_test is not None and np.isnan(Z_test).any():
        return _loo_student_t_at_patterns(Z, y, w, post, Z_test, tied=tied)
    pairs = Z_test is None
    nu = np.broadcast_to(np.asarray(post["nu"], dtype=np.float64), kappa.shape)
    if tied:
        out = np.empty((n, n_classes) if pairs else (n, Z_test.shape[0], n_classes))
        groups = [(post["Psi"], np.arange(n), np.arange(n_classes))]
    else:  # QDA: only the row's class changes
        full = student_t_predictive(Z if pairs else Z_test, post, tied=False)
        out = full if pairs else np.broadcast_to(full, (n, *full.shape)).copy()
        groups = [(post["Psi"][k], np.flatnonzero(y == k), np.array([k]))
                  for k in range(n_classes)]
    for Psi, rows, classes in groups:
        if not rows.size:
            continue
        L = np.linalg.cholesky(Psi)
        logdet = 2.0 * np.log(np.diagonal(L)).sum()

        def whiten(D: np.ndarray, L: np.ndarray = L) -> np.ndarray:
            flat = D.reshape(-1, d)
            return solve_triangular(L, flat.T, lower=True).T.reshape(D.shape)

        yr, wr = y[rows], w[rows]
        V = whiten(Z[rows] - mean[yr])  # (n_g, d)
        r = np.einsum("ij,ij->i", V, V)
        kappa_c = kappa[yr]
        kappa_r = kappa_c - wr
        c = wr * kappa_c / kappa_r
        g = 1.0 - c * r  # > 0: Psi' = Psi0 + (its statistics) is positive definite
        df = nu[yr] - wr - d + 1.0
        same = yr[:, None] == classes[None, :]  # (n_g, K_g)
        a = np.where(same, (wr / kappa_r)[:, None], 0.0)[:, None, :]
        kap = np.where(same, kappa_r[:, None], kappa[classes][None, :])  # (n_g, K_g)
        if pairs:
            T = whiten(Z[rows][:, None, :] - mean[classes][None])  # (n_g, K_g, d)
            tt = np.einsum("nkd,nkd->nk", T, T)[:, None, :]
            vt = np.einsum("nd,nkd->nk", V, T)[:, None, :]
        else:
            T = whiten(Z_test[:, None, :] - mean[classes][None])  # (m, K_g, d)
            tt = np.einsum("mkd,mkd->mk", T, T)[None]
            vt = (V @ T.reshape(-1, d).T).reshape(rows.size, *T.shape[:2])
        r3 = r[:, None, None]
        quad = tt + 2.0 * a * vt + a * a * r3 + (c / g)[:, None, None] * (vt + a * r3) ** 2
        kap3 = kap[:, None, :]
        value = (student_t_const(df[:, None], d, (logdet + np.log(g))[:, None], kap)[:, None]
                 - 0.5 * (df + d)[:, None, None] * np.log1p(quad * (kap3 / (kap3 + 1.0))))
        if pairs:
            out[rows[:, None], classes[None, :]] = value[:, 0, :]
        else:
            m = Z_test.shape[0]
            out[rows[:, None, None], np.arange(m)[None, :, None], classes[None, None, :]] = value
    return out


def _loo_student_t_at_patterns(Z, y, w, post, Z_test, *, tied: bool) -> np.ndarray:
    """:func:`loo_student_t_at` for test rows with missing entries: per missingness
    pattern, the posterior's marginal over the observed coordinates O (m_O, Psi_OO,
    nu - (d - |O|); the downdate of a marginal is the marginal of the downdate), and 0
    for a row with no observed entry."""
    n, d = Z.shape
    M = np.isnan(Z_test)
    out = np.zeros((n, Z_test.shape[0], post["m"].shape[0]))
    patterns, inverse = np.unique(M, axis=0, return_inverse=True)
    for p, pattern in enumerate(patterns):
        obs = ~pattern
        if not obs.any():
            continue
        cols = np.flatnonzero(inverse.ravel() == p)
        sub = {"m": post["m"][:, obs], "kappa": post["kappa"],
               "nu": np.asarray(post["nu"], dtype=np.float64) - (d - obs.sum()),
               "Psi": post["Psi"][..., obs, :][..., obs]}
        out[:, cols] = loo_student_t_at(Z[:, obs], y, w, sub, Z_test[np.ix_(cols, obs)],
                                        tied=tied)
    return out
