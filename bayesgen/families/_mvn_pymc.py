"""PyMC hooks of :class:`bayesgen.families.mvn.MVNFamily` (LDA, QDA).

NIW prior (``covariance_prior="niw"``), through the Bartlett decomposition
---------------------------------------------------------------------------
Sigma ~ IW(Psi0, nu0) is the same as Lambda = Sigma^-1 ~ Wishart(V, nu0), V = Psi0^-1.
With L_V = chol(V) and A lower triangular with::

    A_ii = sqrt(c_i),  c_i ~ ChiSquared(nu0 - i)  (i = 0..d-1),   A_ij ~ N(0, 1)  (i > j)

the precision is Lambda = U U^T with U = L_V A (lower triangular, Bartlett 1933), so
Sigma = (U U^T)^-1 = U^-T U^-1. The class means are non-centred::

    mu_k = m0 + U^-T z_k / sqrt(kappa0),   z_k ~ N(0, I)

since cov(U^-T z) = U^-T U^-1 = Sigma: mu_k | Sigma ~ N(m0, Sigma / kappa0). The map
(c, A_offdiag, z) -> (Sigma, mu) is a bijection, so the model's density over
(c, A_offdiag, z) (chi-square and standard normal log-densities) is exactly the NIW
density of (mu, Sigma) times the Jacobian of that map: the pushed-forward distribution is
the conjugate prior. The free variables are named ``cov_chi2`` (c, dims (class,) feature),
``cov_offdiag`` (the strictly lower entries of A, row-major, shape (K,) d(d-1)/2) and
``mu_z`` (z, dims class, feature); ``mu`` and ``cov`` are Deterministics with the
standard dims. QDA has one factor per class (batched over the class dim), LDA one shared
factor and K z's. All inversions are triangular solves.

The non-centred form suits NUTS here: a posteriori c scales like N_k, the A entries are
O(sqrt(N_k)) and z is pinned near sqrt(kappa0) U^T (xbar_k - m0), all on smooth scales
that the diagonal mass matrix adapts to (see ``tests/test_mcmc_mvn.py`` and
``benchmarks/bench_mcmc.py`` for the convergence checks on iris and d = 10).

LKJ prior (``covariance_prior="lkj"``)
--------------------------------------
PyMC's usual choice, *not* the conjugate prior, so ``method="mcmc"`` does not reproduce
``"conjugate"`` exactly: Sigma_k = L_k L_k^T with
``L_k ~ LKJCholeskyCov(eta=2, sd_dist=HalfNormal(2.5 sqrt(diag S0)))`` (one per class for
QDA, as ``LKJCholeskyCov`` cannot be batched, then stacked; one for LDA) and
``mu_k ~ Normal(m0, 10 sqrt(diag S0))`` per feature, where S0 = Psi0 / (nu0 - d - 1) is the
NIW prior mean of Sigma: both scales follow the features.

Likelihood on the statistics
----------------------------
With Sigma_k^-1 = U_k U_k^T (any square factor) and M_k = S_k + N_k (xbar_k - mu_k)
(xbar_k - mu_k)^T, the weighted Gaussian log-likelihood of the rows of class k is,
without the constant -N_k d/2 log(2 pi)::

    N_k log|det U_k| - 1/2 tr(U_k^T M_k U_k)

(LDA: one U, the pooled S = sum_k S_k and the K mean terms). For LKJ, U_k = L_k^-T.
"""

from __future__ import annotations

import numpy as np


def _swap(a: np.ndarray) -> np.ndarray:
    return np.swapaxes(a, -1, -2)


def precision_scale_factor(Psi0: np.ndarray) -> np.ndarray:
    """L_V = chol(Psi0^-1), (..., d, d), without forming the inverse.

    With J the reversal permutation and G = chol(J Psi0 J): Psi0^-1 = R R^T with
    R = J G^-T J lower triangular with a positive diagonal, so R is the Cholesky factor.
    """
    G = np.linalg.cholesky(Psi0[..., ::-1, ::-1])
    return _swap(np.linalg.inv(G))[..., ::-1, ::-1]


def _bartlett(name: str, nu, L_V: np.ndarray, batch: tuple[int, ...], c_dims: tuple):
    """Precision factor U = L_V A (batch..., d, d) with Bartlett's A (see module doc)."""
    import pymc as pm
    import pytensor.tensor as pt

    d = L_V.shape[-1]
    nu = np.broadcast_to(np.asarray(nu, dtype=np.float64)[..., None] - np.arange(d), (*batch, d))
    c = pm.ChiSquared(f"{name}_chi2", nu=nu, dims=c_dims)
    rows, cols = np.tril_indices(d, -1)
    A = pt.zeros((*batch, d, d))
    if rows.size:
        off = pm.Normal(f"{name}_offdiag", mu=0.0, sigma=1.0, shape=(*batch, rows.size))
        A = pt.set_subtensor(A[..., rows, cols], off)
    diag = np.arange(d)
    A = pt.set_subtensor(A[..., diag, diag], pt.sqrt(c))
    return pt.matmul(pt.as_tensor(L_V), A)


def _inverse_lower(L):
    """L^-1 for a (batch of) lower triangular L, by a triangular solve."""
    import pytensor.tensor as pt
    from pytensor.tensor.linalg import solve_triangular

    return solve_triangular(L, pt.eye(L.shape[-1]), lower=True, b_ndim=2)


def niw_params(family, prior: dict, prefix: str, dims: dict) -> dict:
    """NIW prior via Bartlett + non-centred means; see the module docstring."""
    import pymc as pm
    import pytensor.tensor as pt
    from pytensor.tensor.linalg import solve_triangular

    model = pm.modelcontext(None)
    n_classes = len(model.coords[dims["mu"][0]])
    Psi0 = np.asarray(prior["Psi0"], dtype=np.float64)
    batch = () if family.tied else (n_classes,)
    Psi0 = np.broadcast_to(Psi0, (*batch, *Psi0.shape[-2:]))
    L_V = precision_scale_factor((Psi0 + _swap(Psi0)) / 2.0)
    U = _bartlett(f"{prefix}cov", prior["nu0"], L_V, batch, dims["cov"][:-1])
    U_inv = _inverse_lower(U)
    cov = pm.Deterministic(f"{prefix}cov", pt.matmul(U_inv.mT, U_inv), dims=dims["cov"])
    z = pm.Normal(f"{prefix}mu_z", mu=0.0, sigma=1.0, dims=dims["mu"])
    scale = np.sqrt(np.broadcast_to(np.asarray(prior["kappa0"], dtype=np.float64), n_classes))
    z = z / pt.as_tensor(scale)[:, None]
    if family.tied:  # mu_k - m0 = U^-T z_k for all k at once: solve U^T X = Z^T
        shift = solve_triangular(U.mT, z.T, lower=False, b_ndim=2).T
    else:
        shift = solve_triangular(U.mT, z, lower=False, b_ndim=1)
    mu = pm.Deterministic(f"{prefix}mu", pt.as_tensor(prior["m0"]) + shift, dims=dims["mu"])
    return {"mu": mu, "cov": cov, "prec_factor": U, "log_det_factor": _log_diag_sum(U)}


def _log_diag_sum(L):
    """sum_i log L_ii (..,): log|det L| of a triangular L with a positive diagonal."""
    import pytensor.tensor as pt

    return pt.sum(pt.log(pt.diagonal(L, axis1=-2, axis2=-1)), axis=-1)


def lkj_params(family, prior: dict, prefix: str, dims: dict) -> dict:
    """LKJ(eta=2) correlations with half-normal scales, normal means; see module doc."""
    import pymc as pm
    import pytensor.tensor as pt

    model = pm.modelcontext(None)
    n_classes = len(model.coords[dims["mu"][0]])
    Psi0 = np.asarray(prior["Psi0"], dtype=np.float64)
    d = Psi0.shape[-1]
    nu0 = np.asarray(prior["nu0"], dtype=np.float64)
    S0 = Psi0 / (nu0[..., None, None] - d - 1.0)
    sd0 = np.sqrt(np.diagonal(S0, axis1=-2, axis2=-1))  # (d,) or (K, d)
    if family.tied:
        chol = _lkj(f"{prefix}cov_chol", d, sd0)
    else:
        sd0 = np.broadcast_to(sd0, (n_classes, d))
        chol = pt.stack([_lkj(f"{prefix}cov_chol_{k}", d, sd0[k]) for k in range(n_classes)])
    cov = pm.Deterministic(f"{prefix}cov", pt.matmul(chol, chol.mT), dims=dims["cov"])
    mu = pm.Normal(f"{prefix}mu", mu=prior["m0"], sigma=10.0 * sd0, dims=dims["mu"])
    prec_factor = _inverse_lower(chol).mT  # Sigma^-1 = L^-T L^-1
    return {"mu": mu, "cov": cov, "chol": chol, "prec_factor": prec_factor,
            "log_det_factor": -_log_diag_sum(chol)}


def _lkj(name: str, d: int, sd: np.ndarray):
    import pymc as pm

    sd_dist = pm.HalfNormal.dist(sigma=2.5 * sd, shape=d)
    chol, _, _ = pm.LKJCholeskyCov(
        name, n=d, eta=2.0, sd_dist=sd_dist, compute_corr=True, store_in_trace=False
    )
    return chol


def observed(family, params: dict, X, y, prefix: str, dims: dict) -> None:
    """``x ~ MvNormal(mu[y], chol=L[y])`` (QDA) or ``chol=L`` (LDA), dims (obs, feature)."""
    import pymc as pm
    import pytensor.tensor as pt

    chol = params.get("chol")
    if chol is None:
        chol = pt.linalg.cholesky(params["cov"], lower=True)
    feature = dims["mu"][1]
    pm.MvNormal(
        f"{prefix}x", mu=params["mu"][y], chol=chol if family.tied else chol[y],
        observed=X, dims=("obs", feature),
    )


def stats_loglik(family, params: dict, stats: dict):
    """sum_k [N_k log|det U_k| - 1/2 tr(U_k^T M_k U_k)] (module docstring)."""
    import pytensor.tensor as pt

    n = np.asarray(stats["count"], dtype=np.float64)
    U, log_det = params["prec_factor"], params["log_det_factor"]
    diff = pt.as_tensor(stats["mean"]) - params["mu"]  # (K, d)
    scatter = pt.as_tensor(stats["scatter"])
    if family.tied:
        scatter_term = pt.sum(U * pt.matmul(scatter, U))
        proj = pt.matmul(diff, U)  # rows: (xbar_k - mu_k)^T U
    else:
        scatter_term = pt.sum(U * pt.matmul(scatter, U), axis=(-2, -1))
        proj = pt.matmul(diff[:, None, :], U)[:, 0, :]
    mean_term = pt.sum(proj**2, axis=-1)
    return pt.sum(n * log_det) - 0.5 * pt.sum(scatter_term) - 0.5 * pt.sum(n * mean_term)
