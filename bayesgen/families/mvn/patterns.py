"""Missingness patterns of LDA/QDA training data: grouped statistics and the Gaussian
algebra of the observed coordinates, batched over groups.

Rows with missing entries (NaN) are grouped by (missingness pattern, class). A group g
with observed coordinates o (a pattern; m the missing ones) and class k keeps

    n_g = sum w_n,   xbar_g = sum w_n x_{n,o} / n_g,
    S_g = sum w_n (x_{n,o} - xbar_g)(x_{n,o} - xbar_g)^T,

stored *padded* to the full dimension d (zeros at the missing coordinates), with the
observed indicator D_g = diag(o). Rows with nothing observed carry no information about
(mu, Sigma) (their likelihood factor is 1) and are left out of the groups (they still
count for the class prior). The groups are sufficient for everything the missing-data
fits need: the observed-data log-likelihood, EM's expected statistics
(:mod:`.em`), data augmentation (:mod:`.augment`) and the NUTS likelihood
(:mod:`.pymc_missing`), at a cost that grows with the number of groups, not rows.

Padding. For a covariance Sigma the padded observed block is

    Sigma~_g = D Sigma D + (I - D)

(Sigma_oo on o, the identity on m, no cross terms), so its Cholesky factor, inverse and
log-determinant are those of Sigma_oo on o (a Cholesky factor keeps the two index sets
apart: no fill-in) and one batched factorisation serves every group, whatever its
pattern. With P_g = D Sigma~_g^-1 D (Sigma_oo^-1 padded):

    regression   B_g = (I - D) Sigma P_g          (Sigma_mo Sigma_oo^-1, rows m, cols o)
    residual     C_g = (I - D)(Sigma - Sigma P_g Sigma)(I - D)
                                                  (Sigma_mm - Sigma_mo Sigma_oo^-1 Sigma_om)

and the observed-data log-likelihood of the group is

    -1/2 [n_g (|o| log 2 pi + log|Sigma_oo|) + tr(P_g S_g) + n_g r^T P_g r],
    r = D (xbar_g - mu_k).
"""

from __future__ import annotations

import numpy as np

from bayesgen.families.class_moments import class_moments
from bayesgen.families.gaussian_stats import one_hot
from bayesgen.families.mvn.linalg import _swap

LOG_2PI = np.log(2.0 * np.pi)


def group_stats(Z: np.ndarray, y: np.ndarray, w: np.ndarray, n_classes: int) -> dict:
    """Statistics per (pattern, class) group of the rows ``Z`` (n, d, NaN missing) with
    an observed entry: ``obs`` (G, d) bool, ``cls`` (G,), ``count`` (G,) n_g, ``rows`` (G,),
    ``mean`` (G, d) and ``scatter`` (G, d, d) padded with zeros; empty groups dropped.
    Each group is a class of the complete-data statistics
    (:func:`bayesgen.families.class_moments.class_moments`) of the rows with their
    missing entries set to 0 (so the padding is exactly 0)."""
    observed = ~np.isnan(Z)
    keep = np.flatnonzero(observed.any(axis=1) & (w > 0))
    key = np.concatenate([np.packbits(observed[keep], axis=1),
                          y[keep, None].astype(np.int64).view(np.uint8)], axis=1)
    _, first, inverse = np.unique(key, axis=0, return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1)
    G = first.size
    count, mean, scatter = class_moments(np.where(observed[keep], Z[keep], 0.0), inverse,
                                         w[keep], G, full=True)
    return {"obs": observed[keep[first]], "cls": y[keep[first]].astype(np.intp),
            "count": count, "rows": np.bincount(inverse, minlength=G).astype(np.float64),
            "mean": mean, "scatter": (scatter + _swap(scatter)) / 2.0}


def merge_groups(a: dict, b: dict) -> dict:
    """The groups of the union of two disjoint data sets (same frame): equal
    (pattern, class) keys combined by Chan et al.'s update."""
    cat = {k: np.concatenate([a[k], b[k]]) for k in a}
    key = np.concatenate([np.packbits(cat["obs"], axis=1),
                          cat["cls"][:, None].astype(np.int64).view(np.uint8)], axis=1)
    _, first, inverse = np.unique(key, axis=0, return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1)
    G = first.size
    count = np.bincount(inverse, weights=cat["count"], minlength=G)
    mean = np.zeros((G, cat["mean"].shape[1]))
    np.add.at(mean, inverse, cat["mean"] * cat["count"][:, None])
    mean /= count[:, None]
    delta = cat["mean"] - mean[inverse]
    scatter = np.zeros_like(cat["scatter"][:G])
    np.add.at(scatter, inverse, cat["scatter"] + cat["count"][:, None, None]
              * delta[:, :, None] * delta[:, None, :])
    return {"obs": cat["obs"][first], "cls": cat["cls"][first], "count": count,
            "rows": np.bincount(inverse, weights=cat["rows"], minlength=G), "mean": mean,
            "scatter": (scatter + _swap(scatter)) / 2.0}


def reframe_groups(groups: dict, r: np.ndarray, o: np.ndarray) -> dict:
    """Groups in another frame z' = r z + o (observed coordinates only)."""
    D = groups["obs"]
    return dict(groups, mean=np.where(D, groups["mean"] * r + o, 0.0),
                scatter=groups["scatter"] * r[:, None] * r[None, :])


def available_case(groups: dict, count: np.ndarray, tied: bool) -> dict:
    """Per class the means and variances of the observed entries, as statistics.

    ``mean`` (K, d): weighted mean of the observed entries of each class and feature (the
    feature's overall observed mean where a class never observes it); ``scatter``:
    diagonal, N_k times the class's observed variance (pooled within-class observed
    variance where the class has fewer than two observed entries); if ``tied``, N times
    the pooled within-class variance of the observed entries. ``observed`` (K, d):
    weighted observed entries. These set the prior's data defaults
    (:meth:`MVNFamily.prior`) and EM's starting point.
    """
    n_classes = count.shape[0]
    D = groups["obs"].astype(np.float64)
    onehot = one_hot(groups["cls"], 1.0, n_classes)
    n_kj = onehot.T @ (D * groups["count"][:, None])
    sums = onehot.T @ (groups["mean"] * groups["count"][:, None])
    safe = np.where(n_kj > 0, n_kj, 1.0)
    mean_kj = sums / safe
    overall = sums.sum(0) / np.maximum(n_kj.sum(0), 1e-300)
    mean_kj = np.where(n_kj > 0, mean_kj, overall)
    diag = np.diagonal(groups["scatter"], axis1=1, axis2=2)
    dev = np.where(D > 0, groups["mean"] - mean_kj[groups["cls"]], 0.0)
    ss = onehot.T @ (diag + groups["count"][:, None] * dev**2)
    var_kj = ss / safe
    pooled = ss.sum(0) / np.maximum(n_kj.sum(0), 1e-300)
    var_kj = np.where(n_kj > 1, var_kj, pooled)
    if tied:  # N times the pooled observed variance (whatever class holds a scatter)
        scatter = np.diag(count.sum() * pooled)
    else:
        scatter = np.einsum("kj,jl->kjl", count[:, None] * var_kj, np.eye(D.shape[1]))
    return {"mean": mean_kj, "scatter": scatter, "observed": n_kj}


def scatter_root(scatter: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """R (..., d, d) with R^T R = ``scatter`` (from its eigen-decomposition) and which of
    its rows lie beyond the numerical rank (eigenvalue at most 1e-12 of the largest),
    (..., d) bool; a negative rounding eigenvalue counts as 0."""
    lam, V = np.linalg.eigh(scatter)
    tol = 1e-12 * np.maximum(lam.max(axis=-1, keepdims=True), 1e-300)
    return np.sqrt(np.clip(lam, 0.0, None))[..., None] * _swap(V), lam > tol


def condition(groups: dict, params: dict, tied: bool) -> dict:
    """The padded Gaussian algebra of every group (module docstring) at ``params``:
    ``mu`` (..., K, d), ``cov`` (..., K, d, d) or shared (..., d, d) (``tied``), leading
    draw/chain dims kept. Returns ``P`` (..., G, d, d), ``B``, ``C``, ``logdet``
    (..., G) = log|Sigma_oo| and ``mu`` (..., G, d), each group's class mean."""
    cls, cov = groups["cls"], params["cov"]
    cov_g = (np.broadcast_to(cov[..., None, :, :], (*cov.shape[:-2], cls.size,
                                                    *cov.shape[-2:]))
             if tied else cov[..., cls, :, :])
    D = groups["obs"].astype(np.float64)
    d = D.shape[-1]
    eye = np.eye(d)
    Soo = cov_g * D[:, :, None] * D[:, None, :] + eye * (1.0 - D)[:, None, :]
    L = np.linalg.cholesky(Soo)
    logdet = 2.0 * np.log(np.diagonal(L, axis1=-2, axis2=-1)).sum(-1)
    Linv = np.linalg.solve(L, np.broadcast_to(eye, L.shape))
    P = (_swap(Linv) @ Linv) * D[:, :, None] * D[:, None, :]
    SP = cov_g @ P
    B = SP * (1.0 - D)[:, :, None]
    M = 1.0 - D
    C = (cov_g - SP @ cov_g) * M[:, :, None] * M[:, None, :]
    return {"P": P, "B": B, "C": (C + _swap(C)) / 2.0, "logdet": logdet,
            "mu": params["mu"][..., cls, :]}


def loglik(groups: dict, cond: dict) -> np.ndarray:
    """Observed-data log-likelihood of every group, (..., G) (module docstring)."""
    D = groups["obs"].astype(np.float64)
    n = groups["count"]
    r = D * (groups["mean"] - cond["mu"])
    quad = np.einsum("...gi,...gij,...gj->...g", r, cond["P"], r)
    trace = np.einsum("...gij,gji->...g", cond["P"], groups["scatter"])
    return -0.5 * (n * (D.sum(1) * LOG_2PI + cond["logdet"] + quad) + trace)


def filled(groups: dict, cond: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The regression completion of every group: x^_g = D xbar_g + (I - D) mu_k
    + B_g D (xbar_g - mu_k) (..., G, d), T_g = D + B_g and T_g S_g T_g^T (..., G, d, d)."""
    D = groups["obs"].astype(np.float64)
    mu = cond["mu"]
    r = D * (groups["mean"] - mu)
    mean = D * groups["mean"] + (1.0 - D) * mu + np.einsum("...gij,...gj->...gi", cond["B"], r)
    T = np.eye(D.shape[1]) * D[:, None, :] + cond["B"]
    return mean, T, T @ groups["scatter"] @ _swap(T)


def expected(groups: dict, cond: dict) -> tuple[np.ndarray, np.ndarray]:
    """EM's expected complete-data group statistics: mean x^_g (..., G, d) (:func:`filled`)
    and centred scatter E[scatter] = T_g S_g T_g^T + n_g C_g (..., G, d, d)."""
    mean, _, spread = filled(groups, cond)
    scatter = spread + groups["count"][:, None, None] * cond["C"]
    return mean, (scatter + _swap(scatter)) / 2.0


def class_stats(groups: dict, mean: np.ndarray, scatter: np.ndarray, n_classes: int,
                tied: bool) -> dict:
    """Completed group statistics combined per class (Chan et al.'s update).

    ``mean`` (..., G, d), ``scatter`` (..., G, d, d) -> ``count`` (K,), ``rows`` (K,),
    ``mean`` (..., K, d), ``scatter`` (..., K, d, d) or pooled (..., d, d).
    """
    cls, n = groups["cls"], groups["count"]
    onehot = one_hot(cls, 1.0, n_classes)
    count = n @ onehot
    rows = groups["rows"] @ onehot
    safe = np.where(count > 0, count, 1.0)
    cmean = np.einsum("gk,...gd->...kd", onehot * n[:, None], mean) / safe[:, None]
    delta = mean - cmean[..., cls, :]
    within = scatter + n[:, None, None] * delta[..., :, None] * delta[..., None, :]
    cscatter = np.einsum("gk,...gij->...kij", onehot, within)
    if tied:
        cscatter = cscatter.sum(-3)
    return {"count": count, "rows": rows, "mean": cmean,
            "scatter": (cscatter + _swap(cscatter)) / 2.0}
