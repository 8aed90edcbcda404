"""PyMC hooks of :class:`bayesgen.families.mvn.family.MVNFamily` (LDA, QDA).

NIW prior (``cov_prior_form="niw"``), by the Bartlett decomposition: Sigma ~ IW(Psi0, nu0)
is Lambda = Sigma^-1 ~ Wishart(V, nu0), V = Psi0^-1; with L_V = chol(V) and A lower
triangular, A_ii = sqrt(c_i), c_i ~ ChiSquared(nu0 - i), A_ij ~ N(0, 1) (i > j),
Lambda = U U^T with U = L_V A, a bijection that pushes the chi-square and normal
densities forward to IW(Psi0, nu0) exactly. U is linear in v = (sqrt(c), A_offdiag)
(one product ``v @ Q``, :func:`bartlett_map`) and log|det U| = sum_i log (L_V)_ii
+ sum_i log(c_i) / 2. Free variables ``cov_bartlett_diag_sq`` (the c_i) and
``cov_bartlett_lower`` (dims ``feature_pair``); ``cov`` = U^-T U^-1 is a Deterministic.

The class means are centred, ``mu_k ~ N(m0, Sigma / kappa0)``, with log-density
d/2 log(kappa0 / 2 pi) + log|det U| - kappa0/2 ||U^T (mu_k - m0)||^2 from U alone. The
non-centred form pins z_k to a narrow ridge at the default kappa0 = 0.01 (mean
leapfrog steps, numpyro, non-centred -> centred: iris QDA 122 -> 15, simulated d = 10
QDA 63 -> 31, LDA 31 -> 15; ``benchmarks/bench_mcmc.py``).

LKJ prior (``cov_prior_form="lkj"``, not conjugate): Sigma_k = L_k L_k^T,
``L_k ~ LKJCholeskyCov(eta=2, sd_dist=HalfNormal(2.5 sqrt(diag S0)))`` (free
``cov_chol`` or ``cov_chol_<k>``, dim ``feature_tril``) and
``mu_k ~ Normal(m0, 10 sqrt(diag S0))``, S0 = Psi0 / (nu0 - d - 1).

Likelihood on the statistics, with Sigma_k^-1 = U_k U_k^T (LKJ: U_k = L_k^-T), without
the constant -N_k d/2 log(2 pi)::

    N_k log|det U_k| - 1/2 sum(U_k * (S_k U_k)) - N_k/2 ||U_k^T (xbar_k - mu_k)||^2

(LDA: one U, the pooled S and the K mean terms)."""

from __future__ import annotations

import numpy as np

from bayesgen.families.mvn.linalg import _swap
from bayesgen.families.mvn.niw_evidence import C_BOUNDS, S_BOUNDS
from bayesgen.utils.heavy import import_pymc

LOG_2PI = np.log(2.0 * np.pi)



def precision_scale_factor(Psi0: np.ndarray) -> np.ndarray:
    """L_V = chol(Psi0^-1), (..., d, d), inverting only a triangular factor.

    With J the reversal permutation and G = chol(J Psi0 J): Psi0^-1 = R R^T with
    R = J G^-T J lower triangular with a positive diagonal, so R is the Cholesky factor
    (no Cholesky factorisation of the explicit, possibly ill-conditioned, inverse).
    """
    G = np.linalg.cholesky(Psi0[..., ::-1, ::-1])
    return _swap(np.linalg.inv(G))[..., ::-1, ::-1]


def bartlett_map(L_V: np.ndarray) -> np.ndarray:
    """Q (..., m, d*d), m = d(d+1)/2, such that vec(U) = v @ Q for U = L_V A.

    v = (A_00, ..., A_{d-1,d-1}, then the strictly lower entries of A row by row), A
    lower triangular; vec is the row-major flattening.
    """
    d = L_V.shape[-1]
    rows, cols = np.tril_indices(d, -1)
    diag = np.arange(d)
    place = np.zeros((d + rows.size, d, d))  # place[t] = the unit matrix of entry t of A
    place[diag, diag, diag] = 1.0
    place[d + np.arange(rows.size), rows, cols] = 1.0
    Q = np.einsum("...il,tlj->...tij", L_V, place)
    return Q.reshape(*Q.shape[:-2], d * d)


def _precision_factor(name: str, prior: dict, batch: tuple[int, ...], c_dims: tuple):
    """Bartlett's U = L_V A (batch..., d, d) and log|det U| (batch...) (module doc)."""
    pm = import_pymc()
    import pytensor.tensor as pt

    hyper = prior.get("hyper")
    Psi0 = np.asarray(prior["Psi0"] if hyper is None else hyper["S0"], dtype=np.float64)
    d = Psi0.shape[-1]
    Psi0 = np.broadcast_to(Psi0, (*batch, d, d)) if Psi0.ndim > 2 else Psi0
    L_V = precision_scale_factor((Psi0 + _swap(Psi0)) / 2.0)
    if hyper is None:  # constants: the graph NUTS compiles is the plain NIW one
        log_factor = 0.0
        nu = np.asarray(prior["nu0"], dtype=np.float64)[..., None] - np.arange(d)
        nu = np.broadcast_to(nu, (*batch, d))
    else:  # Psi0 = c s S0: L_V = (c s)^-1/2 chol(S0^-1), see _hyper_parameters
        nu0, log_factor = _hyper_parameters(name, prior, d)
        nu = pt.broadcast_to(pt.as_tensor(nu0)[..., None] - np.arange(d), (*batch, d))
    c = pm.ChiSquared(f"{name}_bartlett_diag_sq", nu=nu, dims=c_dims)
    v = pt.sqrt(c)
    n_off = d * (d - 1) // 2
    if n_off:
        off = pm.Normal(f"{name}_bartlett_lower", mu=0.0, sigma=1.0,
                        dims=(*c_dims[:-1], _pair_dim(c_dims[-1], d)))
        v = pt.concatenate([v, off], axis=-1)
    U = pt.matmul(v[..., None, :], pt.as_tensor(bartlett_map(L_V)))[..., 0, :]
    U = U.reshape((*batch, d, d))
    if hyper is not None:
        U = U * pt.exp(log_factor)
    log_diag_L = np.log(np.diagonal(L_V, axis1=-2, axis2=-1)).sum(-1)
    return U, (pt.as_tensor(log_diag_L) + d * log_factor
               + 0.5 * pt.sum(pt.log(c), axis=-1))


def _hyper_parameters(name: str, prior: dict, d: int):
    """nu0 and log((c s)^-1/2) (c = nu0 - d - 1) with the values given as "sample" drawn
    from log-uniform hyper-priors over :data:`.niw_evidence.C_BOUNDS` /
    :data:`.niw_evidence.S_BOUNDS` (free ``{name}_log_strength``, ``{name}_log_scale``;
    Deterministics ``{name}_dof``, ``{name}_scale``); the others fixed at the fit's."""
    pm = import_pymc()
    import pytensor.tensor as pt

    hyper = prior["hyper"]
    if hyper["dof"]:
        log_c = pm.Uniform(f"{name}_log_strength", *np.log(C_BOUNDS))
        nu0 = pm.Deterministic(f"{name}_dof", d + 1.0 + pt.exp(log_c))
    else:
        nu0 = float(prior["nu0"])
        log_c = np.log(nu0 - d - 1.0)
    if hyper["scale"]:
        log_s = pm.Uniform(f"{name}_log_scale", *np.log(S_BOUNDS))
        pm.Deterministic(f"{name}_scale", pt.exp(log_s))
    else:  # the fitted s: Psi0 = (nu0 - d - 1) s S0
        log_s = np.log(hyper["fixed_scale"])
    return nu0, -0.5 * (log_c + log_s)


def _pair_dim(feature_dim: str, d: int, suffix: str = "pair", offset: int = -1) -> str:
    """The dim ``{feature_dim}_{suffix}`` of the lower entries (``np.tril_indices(d,
    offset)``: "pair" the strictly lower ones of A, row-major; "tril" with the diagonal,
    PyMC's packed order), coordinates "x_i,x_j", registered on the current model."""
    pm = import_pymc()

    model = pm.modelcontext(None)
    dim = f"{feature_dim}_{suffix}"
    if dim not in model.coords:
        names = model.coords.get(feature_dim) or [f"x{j}" for j in range(d)]
        rows, cols = np.tril_indices(d, offset)
        model.add_coord(dim, [f"{names[i]},{names[j]}" for i, j in zip(rows, cols,
                                                                         strict=True)])
    return dim


def _inverse_lower(L):
    """L^-1 for a (batch of) lower triangular L, by a triangular solve."""
    import pytensor.tensor as pt
    from pytensor.tensor.linalg import solve_triangular

    return solve_triangular(L, pt.eye(L.shape[-1]), lower=True, b_ndim=2)


def _mean_logp(value, m0, U, kappa0, log_det_U):
    """log N(value; m0, (kappa0 U U^T)^-1) per class, from the precision factor U."""
    import pytensor.tensor as pt

    proj = pt.matmul((value - m0)[..., None, :], U)[..., 0, :]
    d = value.shape[-1]
    return (
        0.5 * d * (pt.log(kappa0) - LOG_2PI) + log_det_U
        - 0.5 * kappa0 * pt.sum(proj**2, axis=-1)
    )


def _mean_random(m0, U, kappa0, log_det_U, rng=None, size=None):
    """mu = m0 + U^-T z / sqrt(kappa0), z ~ N(0, I): one draw per class (NumPy)."""
    batch = tuple(size) if size is not None else np.broadcast_shapes(
        m0.shape[:-1], U.shape[:-2], np.shape(kappa0)
    )
    d = m0.shape[-1]
    z = rng.standard_normal((*batch, d, 1))
    shift = np.linalg.solve(np.broadcast_to(_swap(U), (*batch, d, d)), z)[..., 0]
    return m0 + shift / np.sqrt(kappa0)[..., None]


def niw_params(family, prior: dict, prefix: str, dims: dict) -> dict:
    """NIW prior via Bartlett and centred means; see the module docstring."""
    pm = import_pymc()
    import pytensor.tensor as pt

    n_classes = len(pm.modelcontext(None).coords[dims["mu"][0]])
    batch = () if family.tied else (n_classes,)
    U, log_det_U = _precision_factor(f"{prefix}cov", prior, batch, dims["cov"][:-1])
    U_inv = _inverse_lower(U)
    cov = pm.Deterministic(f"{prefix}cov", pt.matmul(U_inv.mT, U_inv), dims=dims["cov"])
    d = np.shape(prior["Psi0"])[-1]
    m0 = np.broadcast_to(np.asarray(prior["m0"], dtype=np.float64), (n_classes, d))
    kappa0 = np.broadcast_to(np.asarray(prior["kappa0"], dtype=np.float64), (n_classes,))
    mu = pm.CustomDist(
        f"{prefix}mu", m0, U, kappa0, log_det_U, class_name="MvNormal",
        logp=_mean_logp, random=_mean_random, signature="(d),(d,d),(),()->(d)",
        support_point=lambda rv, size, m0, *_: pt.broadcast_to(m0, rv.shape),
        dims=dims["mu"],
    )
    return {"mu": mu, "cov": cov, "prec_factor": U, "log_det_factor": log_det_U}


def _log_diag_sum(L):
    """sum_i log L_ii (...): log|det L| of a triangular L with a positive diagonal."""
    import pytensor.tensor as pt

    return pt.sum(pt.log(pt.diagonal(L, axis1=-2, axis2=-1)), axis=-1)


def lkj_params(family, prior: dict, prefix: str, dims: dict) -> dict:
    """LKJ(eta=2) correlations with half-normal scales, normal means; see module doc."""
    pm = import_pymc()
    import pytensor.tensor as pt

    n_classes = len(pm.modelcontext(None).coords[dims["mu"][0]])
    Psi0 = np.asarray(prior["Psi0"], dtype=np.float64)
    d = Psi0.shape[-1]
    nu0 = np.asarray(prior["nu0"], dtype=np.float64)
    S0 = Psi0 / (nu0[..., None, None] - d - 1.0)
    sd0 = np.sqrt(np.diagonal(S0, axis1=-2, axis2=-1))  # (d,) or (K, d)
    packed = _pair_dim(dims["mu"][1], d, "tril", 0)
    if family.tied:
        chol = _lkj(f"{prefix}cov_chol", d, sd0, packed)
    else:
        sd0 = np.broadcast_to(sd0, (n_classes, d))
        chol = pt.stack([_lkj(f"{prefix}cov_chol_{k}", d, sd0[k], packed)
                         for k in range(n_classes)])
    cov = pm.Deterministic(f"{prefix}cov", pt.matmul(chol, chol.mT), dims=dims["cov"])
    mu = pm.Normal(f"{prefix}mu", mu=prior["m0"], sigma=10.0 * sd0, dims=dims["mu"])
    return {"mu": mu, "cov": cov, "chol": chol, "prec_factor": _inverse_lower(chol).mT,
            "log_det_factor": -_log_diag_sum(chol)}


def _lkj(name: str, d: int, sd: np.ndarray, dim: str):
    """``LKJCholeskyCov`` named ``name``: its free variable is the packed lower triangle
    of the Cholesky factor (dim ``dim``, :func:`_pair_dim`); returns the factor."""
    pm = import_pymc()

    sd_dist = pm.HalfNormal.dist(sigma=2.5 * sd, shape=d)
    chol, _, _ = pm.LKJCholeskyCov(
        name, n=d, eta=2.0, sd_dist=sd_dist, compute_corr=True, store_in_trace=False,
        dims=dim,
    )
    return chol


def observed(family, params: dict, X, y, prefix: str, dims: dict) -> None:
    """``x ~ MvNormal(mu[y], chol=L[y])`` (QDA) or ``chol=L`` (LDA), dims (obs, feature);
    missing entries become PyMC's imputation variables (:func:`_name_imputation_dims`)."""
    import warnings

    pm = import_pymc()
    import pytensor.tensor as pt

    chol = params.get("chol")
    if chol is None:
        chol = pt.linalg.cholesky(params["cov"], lower=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pm.ImputationWarning)
        pm.MvNormal(
            f"{prefix}x", mu=params["mu"][y], chol=chol if family.tied else chol[y],
            observed=X, dims=("obs", dims["mu"][1]),
        )
    _name_imputation_dims(f"{prefix}x", X, dims["mu"][1])


def _name_imputation_dims(name: str, X, feature_dim: str) -> None:
    """Name the dims of PyMC's imputation split of ``name``: ``<name>_observed_entry``
    and ``<name>_missing_entry``, coordinates "row,feature"."""
    pm = import_pymc()

    model = pm.modelcontext(None)
    missing = np.isnan(np.asarray(X, dtype=np.float64))
    if not missing.any() or f"{name}_unobserved" not in model.named_vars:
        return
    features = model.coords.get(feature_dim) or [f"x{j}" for j in range(X.shape[1])]
    for var, dim, mask in ((f"{name}_observed", f"{name}_observed_entry", ~missing),
                           (f"{name}_unobserved", f"{name}_missing_entry", missing)):
        rows, cols = np.nonzero(mask)
        if dim not in model.coords:
            model.add_coord(dim, [f"{i},{features[j]}" for i, j in zip(rows, cols,
                                                                        strict=True)])
        model.named_vars_to_dims[var] = (dim,)


def stats_loglik(family, params: dict, stats: dict):
    """sum_k [N_k log|det U_k| - 1/2 tr(U_k^T M_k U_k)] (module docstring)."""
    import pytensor.tensor as pt

    n = np.asarray(stats["count"], dtype=np.float64)
    U, log_det = params["prec_factor"], params["log_det_factor"]
    diff = pt.as_tensor(stats["mean"]) - params["mu"]  # (K, d)
    scatter_term = pt.sum(U * pt.matmul(pt.as_tensor(stats["scatter"]), U))
    proj = pt.matmul(diff[:, None, :], U)[:, 0, :]  # rows (xbar_k - mu_k)^T U_k
    return (
        pt.sum(n * log_det) - 0.5 * scatter_term - 0.5 * pt.sum(n * pt.sum(proj**2, axis=-1))
    )
