"""Checks and draws of the multivariate normal family (LDA, QDA): the covariance
prior, the MLE's singularity diagnosis and the vectorised Normal-Inverse-Wishart draws."""

from __future__ import annotations

from typing import Any

import numpy as np

from bayesgen.families import gaussian_stats as gstats
from bayesgen.families.mvn.linalg import _cholesky, _swap

# A covariance whose correlation matrix has an eigenvalue below this is treated as singular.
_SINGULAR_TOL = 1e-12


def resolve_cov_target(value: Any, stats: dict, d: int) -> np.ndarray:
    """The prior mean S0 of the covariance (d, d): ``cov_target`` validated (a vector of
    positive variances or a symmetric matrix, in the units given; the caller checks
    positive definiteness in the internal frame) or the diagonal default."""
    if value is None:
        return np.diag(gstats.default_scale(stats))
    S0 = np.asarray(value, dtype=np.float64)
    if S0.ndim < 2:
        s0 = gstats.resolve_vector(S0, d, "cov_target", S0)
        if np.any(s0 <= 0):
            raise ValueError("cov_target (prior variances) must be > 0 for every feature.")
        return np.diag(s0)
    scale = np.abs(S0).max() if S0.size and np.all(np.isfinite(S0)) else 0.0
    if (
        S0.shape != (d, d)
        or scale == 0
        or not np.allclose(S0, S0.T, rtol=0, atol=1e-12 * scale)
    ):
        raise ValueError(
            f"cov_target must be a vector of {d} variances or a finite symmetric "
            f"({d}, {d}) matrix; got shape {S0.shape}."
        )
    return (S0 + S0.T) / 2.0


def isotropic_target(stats: dict, frame) -> np.ndarray:
    """``cov_target="isotropic"``: the target v I in the units of X, v the mean over the
    features of the pooled within-class variances, as internal variances (d,):
    s0_j = v / s_j^2 with s the frame's scales (1 without a frame), computed as
    exp(logsumexp_k(2 log s_k + log p_k) - log d - 2 log s_j) from the internal pooled
    variances p, so that no unit overflows."""
    from scipy.special import logsumexp

    p = gstats.default_scale(stats)
    log_s = np.zeros(p.size) if frame is None else np.log(frame.scale)
    log_v = logsumexp(2.0 * log_s + np.log(p)) - np.log(p.size)
    return np.exp(log_v - 2.0 * log_s)


def check_nonsingular(cov: np.ndarray, tol: np.ndarray, labels, *, tied: bool) -> None:
    """ValueError for a constant feature (variance <= ``tol`` (d,), rounding residue)
    or collinear features (per class)."""
    who = "LDA" if tied else "QDA"
    stack = cov.reshape(-1, *cov.shape[-2:])
    names = [f"within class {gstats.label(labels, k)}" for k in range(len(stack))]
    where = ["within every class"] if tied else names
    diag = np.diagonal(stack, axis1=-2, axis2=-1)
    if np.any(diag <= tol):
        k, j = np.argwhere(diag <= tol)[0]
        raise ValueError(
            f"{who} method='mle': feature {j} is constant {where[k]}, so the "
            "covariance is singular and the likelihood unbounded. Drop the feature or "
            "use method='map', whose prior keeps the covariance positive definite."
        )
    inv_sd = 1.0 / np.sqrt(diag)
    corr = stack * inv_sd[:, :, None] * inv_sd[:, None, :]
    evals, evecs = np.linalg.eigh(corr)
    bad = np.flatnonzero(evals[:, 0] <= _SINGULAR_TOL)
    if bad.size:
        k = bad[0]
        v = np.abs(evecs[k, :, 0])
        feats = np.flatnonzero(v > 0.1 * v.max()).tolist()
        raise ValueError(
            f"{who} method='mle': the covariance {where[k]} is singular: features "
            f"{feats} are collinear. Drop redundant features or use method='map'."
        )


def draw_niw(post: dict, size: int, rng: np.random.Generator, *, tied: bool) -> dict:
    """``size`` i.i.d. posterior draws by the Bartlett decomposition (Psi = C C^T,
    A_ii^2 ~ chi2(nu - i), A_ij ~ N(0, 1) below the diagonal, Sigma = T^T T with
    T = A^-1 C^T), then mu_k = m_k + T^T z_k / sqrt(kappa_k): ``mu`` (size, K, d), ``cov``
    (size, K, d, d) or (size, d, d)."""
    m, Psi = post["m"], post["Psi"]
    n_classes, d = m.shape
    batch = (size, *Psi.shape[:-2])
    C = _cholesky(Psi, "The posterior scale Psi")
    nu = np.broadcast_to(np.asarray(post["nu"], dtype=np.float64), batch[1:])
    df = nu[..., None] - np.arange(d)
    A = np.tril(rng.standard_normal((*batch, d, d)), -1)
    idx = np.arange(d)
    A[..., idx, idx] = np.sqrt(2.0 * rng.standard_gamma(df / 2.0, size=(*batch, d)))
    T = np.linalg.solve(A, np.broadcast_to(_swap(C), A.shape))
    cov = _swap(T) @ T
    z = rng.standard_normal((size, n_classes, d)) / np.sqrt(post["kappa"])[:, None]
    if tied:
        mu = m + z @ T
    else:
        mu = m + (z[..., None, :] @ T)[..., 0, :]
    return {"mu": mu, "cov": (cov + _swap(cov)) / 2.0}


def complete_mle(stats: dict, *, tied: bool, divisor: str, labels: Any, who: str) -> dict:
    """Means xbar_k and covariances S_k / N_k (QDA) or S / N (LDA) (``"unbiased"``:
    S_k / (N_k - 1), S / (N - K)); ``ValueError`` naming a class with too few rows
    (QDA: N_k <= d; LDA: N_k = 0 or N <= K) or a singular covariance."""
    counts = stats["count"]
    rows = gstats.sample_rows(stats)
    n_classes, d = stats["mean"].shape
    ddof = gstats.check_divisor(divisor)
    if ddof and np.any(counts <= (n_classes if tied else 1)):
        raise ValueError(
            f"{who} divisor='unbiased' treats sample weights as replication "
            "counts and needs weighted counts above the classes' number of means; "
            "use divisor='n'."
        )
    if tied:
        empty = np.flatnonzero(rows <= 0)
        if empty.size:
            raise ValueError(
                f"LDA method='mle' needs samples in every class; class "
                f"{gstats.label(labels, empty[0])} has none. Use method='map'."
            )
        if rows.sum() <= n_classes:
            raise ValueError(
                f"LDA method='mle' needs more samples ({rows.sum():g}) than classes "
                f"({n_classes}) to estimate the covariance. Use method='map'."
            )
        cov = stats["scatter"] / (counts.sum() - ddof * n_classes)
    else:
        low = np.flatnonzero(rows <= d)
        if low.size:
            k = low[0]
            raise ValueError(
                f"QDA method='mle' needs more than d = {d} samples in every class (a "
                f"class covariance has rank at most N_k - 1); class "
                f"{gstats.label(labels, k)} has {rows[k]:g}. Use method='map', "
                "whose prior keeps every covariance positive definite."
            )
        cov = stats["scatter"] / (counts - ddof)[:, None, None]
    tol = gstats.zero_tolerance(stats)
    check_nonsingular(cov, tol, labels, tied=tied)
    return {"mu": stats["mean"].copy(), "cov": cov}


def sample_rows(params: dict, y: np.ndarray, rng: np.random.Generator, *, tied: bool) -> np.ndarray:
    """One x per row, (n, d): mu_{n,y_n} + L z, L = chol(Sigma_{n,y_n}) (shared
    covariances factorised once)."""
    rows = np.arange(y.shape[0])
    mu = params["mu"][rows, y]
    cov = params["cov"]
    shared = cov.shape[0] > 0 and cov.strides[0] == 0
    if shared:
        L = _cholesky(cov[0], "The covariance")
        L = np.broadcast_to(L, cov.shape) if tied else L[y]
    else:
        L = _cholesky(cov if tied else cov[rows, y], "The covariance")
    z = rng.standard_normal(mu.shape)
    return mu + (L @ z[..., None])[..., 0]
