"""The unlabeled rows in the NUTS model (``method="mcmc"``).

The statistics model (:func:`bayesgen.inference.model.build_stats_model`) gets one more
potential, an :class:`bayesgen.inference.model.ExtraLikelihood` (:func:`extra_likelihood`)::

    unlabeled_loglik = lambda sum_{n in U} w_n logsumexp_k [log pi_k + log p(x_n | y=k, theta)]

(lambda = ``unlabeled_weight``; lambda < 1 tempers those rows). log p(x_n | y=k, theta)
is the family's ``pymc_rows_loglik`` (:func:`class_log_lik`), by default its
``pymc_observed`` evaluated row by row with ``pm.logp`` in a detached scratch model
(:func:`_observed_log_lik`), O(m K d) per gradient. The chains start near the mode the
labeled rows anchor (:func:`start_point`): from the prior's centre they could settle in
a label-swapped mode (3 labeled rows per class, ~300 unlabeled: R-hat 1.8 for LDA).
"""

from __future__ import annotations

import importlib.util

import numpy as np

from bayesgen.data import sparse
from bayesgen.inference.fitted import as_fit
from bayesgen.inference.model import ExtraLikelihood, build_stats_model, model_coords
from bayesgen.utils.heavy import import_pymc

#: the name of the unlabeled rows' potential in the statistics model
POTENTIAL = "unlabeled_loglik"


def extra_likelihood(Z, w: np.ndarray, lam: float) -> ExtraLikelihood | None:
    """The unlabeled rows ``Z`` (m, d; internal frame) with weights ``w`` (m,) as extra
    terms of a fit's statistics model: the ``unlabeled_loglik`` potential
    (module docstring) and the chains' start at the anchored mode (:func:`start_point`).
    None when lambda = ``lam`` is 0 (the labeled-only posterior)."""
    if lam == 0.0:
        return None
    Z = Z.toarray() if sparse.is_sparse(Z) else np.asarray(Z)

    def terms(fit, pi, params: dict) -> dict:
        log_lik = class_log_lik(fit, params, Z)
        return {POTENTIAL: _mixture(log_lik, pi, w, lam)}

    return ExtraLikelihood(terms=terms, start=start_point)


def class_log_lik(fit, params: dict, Z: np.ndarray):
    """log p(z_n | y=k, theta) of every row and class, a PyTensor (m, K) expression of
    the PyMC parameters ``params``: the family's ``pymc_rows_loglik`` on the fit's
    statistics, :func:`_observed_log_lik` where the family reads its observed
    distribution row by row. ``fit``: a :class:`bayesgen.inference.fitted.Fit` or a
    fitted estimator."""
    fit = as_fit(fit)
    family = fit.family

    def observed(fam, sub: dict, Zp: np.ndarray, prefix: str, dims: dict | None):
        return _observed_log_lik(fit, fam, sub, Zp, prefix, dims)

    return family.pymc_rows_loglik(params, Z, stats=fit.stats, observed=observed)


def _observed_log_lik(fit, family, params: dict, Z: np.ndarray, prefix: str = "",
                      dims: dict | None = None):
    """log p(x_n | y=k, theta) as a PyTensor (m, K) expression: the family's observed
    distributions, built per class in a detached scratch model, through ``pm.logp``."""
    pm = import_pymc()
    import pytensor.tensor as pt

    m, n_classes = Z.shape[0], fit.classes.size
    columns = []
    with pm.Model(coords=model_coords(fit, m), model=None) as scratch:
        for k in range(n_classes):
            before = set(scratch.observed_RVs)
            family.pymc_observed(params, Z, np.full(m, k, dtype=np.int64),
                                 prefix=f"{prefix}u{k}_", dims=dims)
            total = 0.0
            for rv in [v for v in scratch.observed_RVs if v not in before]:
                value = scratch.rvs_to_values[rv]
                logp = pm.logp(rv, value, warn_rvs=False)
                total = total + (logp.sum(axis=tuple(range(1, logp.ndim))) if logp.ndim > 1
                                 else logp)
            columns.append(total)
    return pt.stack(columns, axis=1)


def _mixture(log_lik, pi, w: np.ndarray, lam: float):
    """``lam * sum_n w_n logsumexp_k(log pi_k + log_lik[n, k])``, a scalar PyTensor
    expression; ``log_lik`` (m, K)."""
    import pytensor.tensor as pt

    mix = pt.logsumexp(log_lik + pt.log(pi)[None, :], axis=1)
    return lam * pt.sum(pt.as_tensor(w) * mix)


def start_point(fit, model) -> dict | None:
    """Where the NUTS chains of a semi-supervised fit start.

    From the prior's support point the chains can settle in a label-swapped mode of the
    unlabeled rows' mixture likelihood. Two L-BFGS ascents of the log density
    (unconstrained, Jacobian included) find the mode the labeled rows anchor: the
    labeled-only model from the support point, then ``model`` itself from there (like EM
    from the labeled-only fit).

    Returns
    -------
    dict or None
        ``value variable name -> unconstrained value`` of every value variable of
        ``model``; None without ``unlabeled_loglik`` (or lambda = 0), without JAX, or when
        no finite point was found (the chains then start as before).
    """
    fit = as_fit(fit)
    if (not any(p.name == POTENTIAL for p in model.potentials)
            or importlib.util.find_spec("jax") is None):
        return None
    labeled = build_stats_model(fit)
    point = _ascend(labeled, labeled.initial_point())
    if point is None:
        return None
    point = {v.name: point[v.name] for v in model.value_vars}
    return _ascend(model, point) or point


def _ascend(model, start: dict, maxiter: int = 500) -> dict | None:
    """A local maximum of ``model``'s log density (unconstrained, Jacobian included)
    from ``start`` (value variable name -> value), or None when it is not finite.
    L-BFGS on the log density and its gradient compiled to JAX
    (:func:`bayesgen.inference.jax_nuts.logp_and_grad`, cached per model structure)."""
    from scipy.optimize import minimize

    from bayesgen.inference.jax_nuts import logp_and_grad

    f = logp_and_grad(model)
    names = [v.name for v in model.value_vars]
    shapes = [np.shape(start[n]) for n in names]
    sizes = [int(np.prod(s)) for s in shapes]
    cuts = np.cumsum(sizes)[:-1]

    def unravel(x):
        return [p.reshape(s) for p, s in zip(np.split(x, cuts), shapes, strict=True)]

    def cost(x):
        value, grad = f(unravel(x))
        value = float(value)
        if not np.isfinite(value):
            return np.inf, np.zeros_like(x)
        flat = np.concatenate([np.asarray(g, dtype=float).ravel() for g in grad])
        return -value, -flat

    x0 = np.concatenate([np.asarray(start[n], dtype=float).ravel() for n in names])
    with np.errstate(all="ignore"):
        result = minimize(cost, x0, jac=True, method="L-BFGS-B", options={"maxiter": maxiter})
    if not (np.all(np.isfinite(result.x)) and np.isfinite(result.fun)):
        return None
    return {n: np.asarray(v, dtype=np.asarray(start[n]).dtype)
            for n, v in zip(names, unravel(result.x), strict=True)}
