"""The PyMC model of a mixture per class, with the component labels marginalised.

The prior (:func:`params`), for K classes, class k with M_k components, T = sum_k M_k
components in all::

    w_k ~ Dirichlet(alpha 1_{M_k})      (free variable ``weights_<k>``, k the class index;
                                         none for a class of one component: w_k = 1)
    theta_t ~ the component family's conjugate prior of the class of component t

The components' prior is the component family's own PyMC prior (its ``pymc_params``
hook), batched over the T components: dim ``class_component`` (coordinates
"<class>,<m>"), free variables ``component_cov_bartlett_diag_sq``,
``component_cov_bartlett_lower`` and ``component_mu`` for full covariances (QDA's NIW
prior through the Bartlett decomposition, :mod:`bayesgen.families.mvn.pymc`), or
``component_cov_diag`` and ``component_mu_raw`` for diagonal ones (Inverse-Gamma
variances, non-centred means). Each component gets the resolved prior of its class
(``MixtureDA.component_prior_``). The Deterministics ``weights`` (class, component),
``mu`` (class, component, feature) and ``cov`` (class, component, feature,
feature_bis) hold them in the padded layout of :mod:`.family` (weight 0 and a copy of
component 0 beyond M_k).

The likelihood of a row x_n of class y_n is the mixture density, its component label
summed out::

    log p(x_n | y_n = k, theta) = logsumexp_m [log w_km + log N(x_n | mu_km, Sigma_km)]

- in ``model_`` (:func:`observed`): ``x ~ pm.Mixture(w[y], MvNormal(mu[y], cov[y]))``,
  dims (obs, feature), so that PyMC can forward-sample it (prior predictive);
- in the model NUTS samples (:func:`rows_loglik`): the same sum, written on each
  component's precision factor U (Sigma^-1 = U U^T) with the rows of each class as
  constants: log N(x | mu, Sigma) = log|det U| - ||U^T (x - mu)||^2 / 2 - d/2 log 2 pi.
  Unlike the one-Gaussian families it cannot be written on sufficient statistics: a
  gradient costs O(n M d^2).

:func:`start` gives the unconstrained values of a point (the EM mode) for NUTS's start.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bayesgen.utils.heavy import import_pymc

LOG_2PI = np.log(2.0 * np.pi)
#: the dim of the T components of all classes
FLAT_DIM = "class_component"
#: the prefix of the component variables
PREFIX = "component_"


def mixture_prior(class_priors: list[dict], sizes: np.ndarray, alpha: float) -> dict:
    """The prior of a mixture fit: the component prior of every class, the number of
    components per class and the weights' Dirichlet concentration."""
    return {"classes": list(class_priors), "n_components": np.asarray(sizes, dtype=np.int64),
            "weight_alpha": float(alpha)}


def is_mixture_prior(prior: Any) -> bool:
    """Whether ``prior`` is a mixture prior (:func:`mixture_prior`)."""
    return isinstance(prior, dict) and "classes" in prior and "n_components" in prior


def _layout(sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(offsets (K,), index (K, M)): the flat index of component m of class k (padding:
    the class's component 0)."""
    sizes = np.asarray(sizes, dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    M = int(sizes.max())
    m = np.arange(M)
    index = offsets[:, None] + np.where(m[None, :] < sizes[:, None], m[None, :], 0)
    return offsets, index


def flat_prior(prior: dict) -> dict:
    """The component priors of the T components, stacked (component t gets the prior of
    its class): full covariances ``m0`` (T, d), ``kappa0`` (T,), ``nu0`` (T,), ``Psi0``
    (T, d, d); diagonal ``m0`` (T, d), ``kappa0`` and ``nu0`` (T, 1), ``scale`` (T, d)
    (the class's s times its s0) and ``s0`` ones (d,)."""
    sizes = prior["n_components"]
    owner = np.repeat(np.arange(sizes.size), sizes)
    per = prior["classes"]

    def stack(key: str) -> np.ndarray:
        return np.stack([np.asarray(per[k][key], dtype=np.float64) for k in owner])

    d = np.shape(per[0]["m0"])[-1]
    m0 = np.stack([np.broadcast_to(np.asarray(per[k]["m0"], dtype=np.float64), (d,))
                   for k in owner])
    if "Psi0" in per[0]:
        return {"m0": m0, "kappa0": stack("kappa0").reshape(-1),
                "nu0": stack("nu0").reshape(-1), "Psi0": stack("Psi0")}
    scale = stack("scale").reshape(-1, 1) * stack("s0")
    return {"m0": m0, "kappa0": stack("kappa0").reshape(-1, 1),
            "nu0": stack("nu0").reshape(-1, 1), "scale": scale, "s0": np.ones(d)}


def params(component, prior: dict, *, prefix: str = "") -> dict:
    """The prior random variables of the mixture in the current PyMC model (module
    docstring); ``prior``: a mixture prior (:func:`mixture_prior`).

    Returns ``weights``, ``mu``, ``cov`` (the padded Deterministics), and for the
    likelihood ``flat_mu`` (T, d), ``flat_cov`` (T, d, d), ``prec_factor`` (T, d, d)
    or ``inv_sd`` (T, d), ``log_det_factor`` (T,) and ``log_weights``: one (M_k,)
    tensor per class."""
    pm = import_pymc()
    import pytensor.tensor as pt

    model = pm.modelcontext(None)
    sizes = np.asarray(prior["n_components"], dtype=np.int64)
    K, M = sizes.size, int(sizes.max())
    classes = model.coords["class"]
    flat_dim = f"{prefix}{FLAT_DIM}"
    if flat_dim not in model.coords:
        model.add_coord(flat_dim, [f"{classes[k]},{m}" for k in range(K)
                                   for m in range(sizes[k])])
    dims = {"mu": (flat_dim, "feature"), "cov": (flat_dim, "feature", "feature_bis")}
    comp = component.pymc_params(flat_prior(prior), prefix=f"{prefix}{PREFIX}", dims=dims)
    out = {"flat_mu": comp["mu"], "flat_cov": comp["cov"]}
    if "prec_factor" in comp:  # full: Sigma^-1 = U U^T
        out["prec_factor"] = comp["prec_factor"]
        out["log_det_factor"] = comp["log_det_factor"]
    else:  # diagonal: U = diag(1 / sd)
        var = pt.diagonal(comp["cov"], axis1=-2, axis2=-1)
        out["inv_sd"] = 1.0 / pt.sqrt(var)
        out["log_det_factor"] = -0.5 * pt.sum(pt.log(var), axis=-1)
    alpha = float(prior["weight_alpha"])
    log_weights, rows = [], []
    for k in range(K):
        if sizes[k] > 1:
            w = pm.Dirichlet(f"{prefix}weights_{k}", a=np.full(sizes[k], alpha))
        else:
            w = pt.ones((1,))
        log_weights.append(pt.log(w))
        rows.append(pt.concatenate([w, pt.zeros((M - sizes[k],))]) if sizes[k] < M else w)
    _, index = _layout(sizes)
    out["weights"] = pm.Deterministic(f"{prefix}weights", pt.stack(rows),
                                      dims=("class", "component"))
    out["mu"] = pm.Deterministic(f"{prefix}mu", comp["mu"][index],
                                 dims=("class", "component", "feature"))
    out["cov"] = pm.Deterministic(f"{prefix}cov", comp["cov"][index],
                                  dims=("class", "component", "feature", "feature_bis"))
    out["log_weights"] = log_weights
    return out


def observed(params: dict, X, y, *, prefix: str = "") -> None:
    """``x ~ Mixture(weights[y], MvNormal(mu[y], cov[y]))``, dims (obs, feature): the rows
    given their class, the component label summed out (``pm.Mixture``)."""
    pm = import_pymc()
    import pytensor.tensor as pt

    chol = pt.linalg.cholesky(params["cov"], lower=True)
    comps = pm.MvNormal.dist(mu=params["mu"][y], chol=chol[y])
    pm.Mixture(f"{prefix}x", w=params["weights"][y], comp_dists=comps, observed=X,
               dims=("obs", "feature"))


def rows_loglik(params: dict, Z: np.ndarray, y: np.ndarray, v: np.ndarray,
                sizes: np.ndarray):
    """sum_n v_n log p(z_n | y_n, theta) (module docstring) of rows Z (n, d) with class
    indices y (n,) and weights v (n,), as a scalar tensor."""
    import pytensor.tensor as pt

    offsets, _ = _layout(sizes)
    d = Z.shape[1]
    total = pt.constant(0.0)
    for k, (start, size) in enumerate(zip(offsets, sizes, strict=True)):
        take = (y == k) & (v > 0)
        if not take.any():
            continue
        Zk, vk = np.asarray(Z[take], dtype=np.float64), np.asarray(v[take], dtype=np.float64)
        comps = slice(int(start), int(start + size))
        mu = params["flat_mu"][comps]  # (M_k, d)
        if "prec_factor" in params:
            U = params["prec_factor"][comps]  # (M_k, d, d)
            proj = (pt.tensordot(pt.as_tensor(Zk), U, axes=[[1], [1]])  # (n, M_k, d)
                    - pt.matmul(mu[:, None, :], U)[:, 0, :][None])
        else:
            proj = (pt.as_tensor(Zk)[:, None, :] - mu[None]) * params["inv_sd"][comps][None]
        L = (params["log_weights"][k][None] + params["log_det_factor"][comps][None]
             - 0.5 * pt.sum(proj**2, axis=-1) - 0.5 * d * LOG_2PI)  # (n, M_k)
        total = total + pt.sum(vk * pt.logsumexp(L, axis=1))
    return total


def start(model, point: dict, prior: dict, pi: np.ndarray | None) -> dict:
    """Unconstrained values (by value variable name) of ``model``'s free variables at
    the point ``point`` (internal frame: ``weights`` (K, M), ``mu`` (K, M, d), ``cov``
    (K, M, d, d), padded) with class probabilities ``pi`` (K,) (None: pi is not free);
    variables not covered keep PyMC's initial point."""
    from bayesgen.families.mvn.pymc import precision_scale_factor

    sizes = np.asarray(prior["n_components"], dtype=np.int64)
    keep = [(k, m) for k in range(sizes.size) for m in range(sizes[k])]
    mu = np.stack([point["mu"][k, m] for k, m in keep])
    cov = np.stack([point["cov"][k, m] for k, m in keep])
    d = mu.shape[-1]
    values: dict[str, np.ndarray] = {f"{PREFIX}mu": mu}
    flat = flat_prior(prior)
    if "Psi0" in flat:
        Psi0 = flat["Psi0"]
        L_V = precision_scale_factor((Psi0 + np.swapaxes(Psi0, -1, -2)) / 2.0)
        chol = np.linalg.cholesky(np.linalg.inv(cov))  # of Sigma^-1
        A = np.linalg.solve(L_V, chol)  # U = L_V A
        values[f"{PREFIX}cov_bartlett_diag_sq"] = np.diagonal(A, axis1=-2, axis2=-1) ** 2
        rows, cols = np.tril_indices(d, -1)
        if rows.size:
            values[f"{PREFIX}cov_bartlett_lower"] = A[:, rows, cols]
    else:
        var = np.diagonal(cov, axis1=-2, axis2=-1)
        values[f"{PREFIX}cov_diag"] = var
        values[f"{PREFIX}mu_raw"] = (mu - flat["m0"]) / np.sqrt(var / flat["kappa0"])
    for k in range(sizes.size):
        if sizes[k] > 1:
            w = np.clip(point["weights"][k, : sizes[k]], 1e-6, None)
            values[f"weights_{k}"] = w / w.sum()
    if pi is not None:
        values["pi"] = np.clip(pi, 1e-12, None) / np.clip(pi, 1e-12, None).sum()
    init = dict(model.initial_point())
    for rv in model.free_RVs:
        if rv.name not in values:
            continue
        value_var = model.rvs_to_values[rv]
        transform = model.rvs_to_transforms.get(rv)
        value = np.asarray(values[rv.name], dtype=value_var.dtype)
        if transform is not None:
            value = np.asarray(transform.forward(value, *rv.owner.inputs).eval())
        init[value_var.name] = value.astype(value_var.dtype)
    return init
