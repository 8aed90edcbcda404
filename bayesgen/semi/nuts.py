"""The unlabelled rows in the NUTS model (``method="mcmc"``).

The statistics model (:func:`bayesgen.inference.model.build_stats_model`) keeps the labelled rows
on their sufficient statistics and gets one more potential::

    unlabeled_loglik = lambda sum_{n in U} w_n logsumexp_k [log pi_k + log p(x_n | y=k, theta)]

the unlabelled rows' mixture log-likelihood (lambda = ``unlabeled_weight``; lambda < 1
is a power, i.e. tempered, likelihood of those rows). log p(x_n | y=k, theta) is the
family's own observed-data distribution (``pymc_observed``) evaluated row by row with
``pm.logp``: the distribution is built once per class k in a detached scratch model
(which contributes nothing itself), so every family with PyMC hooks works unchanged and
the cost per gradient is O(m K d) for m unlabelled rows. The rows enter as float
constants, so the compile-once JAX path lifts them into inputs like the statistics.

The chains start near the mode the labelled rows anchor (:func:`start_point`): from
the prior's centre they could settle in a label-swapped mode of the mixture likelihood
(3 labelled rows per class and ~300 unlabelled ones: R-hat 1.8 for LDA).

KernelNB and MixedNB's kernel parts: the KDEs of the labelled points at the unlabelled
rows (:mod:`bayesgen.semi.kernel_pymc`; the family's ``pymc_observed`` is a LOO
potential of training rows, not a distribution of new rows).

Missing entries in the unlabelled rows: LDA/QDA integrate them out in closed form (the
Gaussian marginal of the observed coordinates per missingness pattern,
:func:`bayesgen.semi.mvn_gaps.mvn_columns`), KernelNB drops the factor of a missing
feature, and the other families drop the term of a missing entry: their observed
distributions with gaps (``pymc_observed``) sum over the observed entries only
(:mod:`bayesgen.families.pymc_gaps`; MultinomialNB renormalises theta over each row's
observed words), and CategoricalNB's rows come from its ``pymc_rows_loglik`` hook
(:func:`bayesgen.families.categorical.pymc.row_columns`).
"""

from __future__ import annotations

import numpy as np

from bayesgen.data import sparse
from bayesgen.utils.heavy import import_pymc


def add_potential(estimator, pi, params: dict) -> None:
    """Add ``unlabeled_loglik`` to the current (statistics) model when ``estimator``
    is being fitted with unlabelled rows; nothing otherwise."""
    semi = getattr(estimator, "_semi", None)
    if semi is None or semi["lam"] == 0.0:
        return
    from bayesgen.semi.kernel import has_kernel

    family, Z, w = estimator.family_, semi["Z"], semi["w"]
    n_classes = estimator.classes_.size
    Z = Z.toarray() if sparse.is_sparse(Z) else np.asarray(Z)
    if family.name == "mvn" and np.isnan(Z).any():  # marginals per missingness pattern
        from bayesgen.semi.mvn_gaps import mvn_columns

        log_lik = mvn_columns(family, params, Z, n_classes)
    elif has_kernel(family):  # KDEs of the labelled points
        from bayesgen.semi.kernel_pymc import columns

        log_lik = columns(estimator, family, params, Z,
                          lambda f, p, Zp, pre, dims: _generic(estimator, f, p, Zp, pre, dims))
    else:
        log_lik = _generic(estimator, family, params, Z)
    _mixture_potential(log_lik, pi, w, semi["lam"])


def _generic(estimator, family, params: dict, Z: np.ndarray, prefix: str = "",
             dims: dict | None = None):
    """log p(x_n | y=k, theta) as a PyTensor (m, K) expression: the family's observed
    distributions, built per class in a detached scratch model, through ``pm.logp``."""
    pm = import_pymc()
    import pytensor.tensor as pt

    from bayesgen.inference.model import model_coords

    if family.name == "mixed":  # each part on its columns (their terms add up)
        from bayesgen.families.mixed.pymc import part_hooks

        return sum(_generic(estimator, part["family"], sub, Z[:, part["columns"]], pre, pdims)
                   for part, sub, pre, pdims in part_hooks(family, params, dims, prefix))
    if hasattr(family, "pymc_rows_loglik"):  # its observed value has no rows (categorical)
        return family.pymc_rows_loglik(params, Z)
    m, n_classes = Z.shape[0], estimator.classes_.size
    columns = []
    with pm.Model(coords=model_coords(estimator, m), model=None) as scratch:
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


def _mixture_potential(log_lik, pi, w: np.ndarray, lam: float) -> None:
    """``pm.Potential("unlabeled_loglik", lam * sum_n w_n logsumexp_k(log pi_k +
    log_lik[n, k]))`` in the current model; ``log_lik`` (m, K)."""
    pm = import_pymc()
    import pytensor.tensor as pt

    mix = pt.logsumexp(log_lik + pt.log(pi)[None, :], axis=1)
    pm.Potential("unlabeled_loglik", lam * pt.sum(pt.as_tensor(w) * mix))


#: the chains' uniform jitter half-width around the semi-supervised start (unconstrained)
START_JITTER = 0.1


def start_point(estimator, model) -> dict | None:
    """Where the NUTS chains of a semi-supervised fit start (issue 17).

    Started at the prior's support point, the chains can settle in a label-swapped mode
    of the unlabelled rows' mixture likelihood (the few labelled rows pull weakly
    against hundreds of unlabelled ones). Instead they start at a local mode of the
    posterior that the labelled rows anchor, found by two ascents of the log density
    (unconstrained space, Jacobian included, L-BFGS):

    1. the labelled-only model (``model`` without ``unlabeled_loglik``) from the prior's
       support point: its posterior is the conjugate-like one of a few labelled rows,
       with one mode whose class k is the labelled class k;
    2. ``model`` itself from that point: like EM started at the labelled-only fit, it
       climbs into the mode whose components keep their labelled rows.

    Working on the model's own value variables needs no map from the family's
    parameters to its parametrisation (transforms, LDA/QDA's Bartlett factors).

    Returns
    -------
    dict or None
        ``value variable name -> unconstrained value`` of every value variable of
        ``model``; None when the fit has no unlabelled rows (lambda = 0 included),
        when JAX (which compiles the ascent) is not installed, or when no finite point
        was found (the chains then start as before).
    """
    import importlib.util

    semi = getattr(estimator, "_semi", None)
    if semi is None or semi["lam"] == 0.0 or importlib.util.find_spec("jax") is None:
        return None
    from bayesgen.inference.model import build_stats_model

    estimator.__dict__.pop("_semi")
    try:
        labelled = build_stats_model(estimator)
    finally:
        estimator._semi = semi
    point = _ascend(labelled, labelled.initial_point())
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


def constrained(model, init: dict) -> dict:
    """``init`` (unconstrained, by value variable name) as constrained values by free
    random variable name: PyMC's ``initvals``."""
    rvs = model.free_RVs
    values = model.compile_fn(inputs=model.value_vars,
                              outs=model.replace_rvs_by_values(rvs))(init)
    return {rv.name: np.asarray(v) for rv, v in zip(rvs, values, strict=True)}
