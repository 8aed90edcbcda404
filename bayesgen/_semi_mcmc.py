"""The unlabelled rows in the NUTS model (``method="mcmc"``).

The statistics model (:func:`bayesgen.model.build_stats_model`) keeps the labelled rows
on their sufficient statistics and gets one more potential::

    unlabeled_loglik = lambda sum_{n in U} w_n logsumexp_k [log pi_k + log p(x_n | y=k, theta)]

the unlabelled rows' mixture log-likelihood (lambda = ``unlabeled_weight``; lambda < 1
is a power, i.e. tempered, likelihood of those rows). log p(x_n | y=k, theta) is the
family's own observed-data distribution (``pymc_observed``) evaluated row by row with
``pm.logp``: the distribution is built once per class k in a detached scratch model
(which contributes nothing itself), so every family with PyMC hooks works unchanged and
the cost per gradient is O(m K d) for m unlabelled rows. The rows enter as float
constants, so the compile-once JAX path lifts them into inputs like the statistics.

Missing entries in the unlabelled rows are not supported here (PyMC would impute them
as latent variables): a ``ValueError`` points to "map"/"mle" (EM) or "conjugate"
(factorised families).
"""

from __future__ import annotations

import numpy as np

from bayesgen import _sparse


def check_rows(estimator, Z) -> None:
    """``ValueError`` for missing entries among the unlabelled rows (module docstring)."""
    values = _sparse.values(Z)
    if values.dtype.kind == "f" and np.isnan(values).any():
        raise ValueError(
            f"{type(estimator).__name__} method='mcmc' does not support missing values (NaN) "
            "in unlabelled rows; use method='map' or 'mle' (EM), 'conjugate' (naive Bayes "
            "families), or impute those entries."
        )


def add_potential(estimator, pi, params: dict) -> None:
    """Add ``unlabeled_loglik`` to the current (statistics) model when ``estimator``
    is being fitted with unlabelled rows; nothing otherwise."""
    semi = getattr(estimator, "_semi", None)
    if semi is None or semi["lam"] == 0.0:
        return
    import pymc as pm
    import pytensor.tensor as pt

    from bayesgen.model import model_coords

    family, Z, w = estimator.family_, semi["Z"], semi["w"]
    m, n_classes = w.shape[0], estimator.classes_.size
    Z = Z.toarray() if _sparse.is_sparse(Z) else np.asarray(Z)
    columns = []
    with pm.Model(coords=model_coords(estimator, m), model=None) as scratch:
        for k in range(n_classes):
            before = set(scratch.observed_RVs)
            family.pymc_observed(params, Z, np.full(m, k, dtype=np.int64), prefix=f"u{k}_")
            total = 0.0
            for rv in [v for v in scratch.observed_RVs if v not in before]:
                value = scratch.rvs_to_values[rv]
                logp = pm.logp(rv, value, warn_rvs=False)
                total = total + (logp.sum(axis=tuple(range(1, logp.ndim))) if logp.ndim > 1
                                 else logp)
            columns.append(total)
    joint = pt.stack(columns, axis=1) + pt.log(pi)[None, :]  # (m, K)
    mix = pt.logsumexp(joint, axis=1)
    pm.Potential("unlabeled_loglik", semi["lam"] * pt.sum(pt.as_tensor(w) * mix))
