"""Likelihood families: one small module per p(x | y = k).

A family is a plain class whose instance holds its prior hyper-parameters (as given by
the user; data-aware defaults are resolved in :meth:`prior`). Every family implements
the same duck-typed interface, which is all the estimators, the conjugate posterior and
the PyMC models rely on:

``name`` : str
    Registry name (``"gaussian"``, ``"bernoulli"``, ...).
``param_dims`` : dict[str, tuple[str, ...]]
    Dims of every parameter after the leading draw dims, e.g.
    ``{"mu": ("class", "feature")}``; names the ``idata_`` variables.
``positive_only`` : bool
    Whether X must be non-negative (scikit-learn's ``positive_only`` tag).
``accepts_missing`` : bool, optional (default False)
    Whether the family integrates missing entries (NaN in X) out, at fit and predict
    (:mod:`bayesgen.data.missing`); without it a NaN is a ``ValueError`` naming the
    estimator (the one guard, :func:`bayesgen.data.missing.check_supported`).
``labels`` : ndarray or None
    Class labels, set by the estimator before fitting, for error messages.
``check_X(X, *, method, who) -> ndarray``
    Support checks (counts, binary, categories) and any transformation
    (``binarize``); raises ``ValueError`` naming the problem.
``stats(X, y, w, n_classes) -> dict``
    Weighted sufficient statistics per class; ``y`` (n,) class indices, ``w`` (n,)
    weights. Must include ``"count"`` (K,).
``merge(a, b) -> dict``
    Statistics of the union of two disjoint data sets.
``prior(stats) -> dict``
    Resolved conjugate prior hyper-parameters (scale-aware data defaults).
``mle(stats) -> params`` and ``map(stats, prior) -> params``
    Closed-form point estimates, a dict of arrays with dims ``param_dims``.
``posterior(stats, prior) -> dict`` and ``draw(post, size, rng) -> params``
    Conjugate posterior hyper-parameters and ``size`` i.i.d. draws (leading dim).
``log_lik(X, params, *, full=True) -> ndarray (..., n, K)``
    sum over features of log p(x_n | y = k, theta), broadcasting over leading draw
    dims of ``params``. ``full=False`` is only asked for point estimates (no draw
    dims) and may drop terms that are equal for every class: the discriminant form
    used by the plug-in Bayes rule.
``log_predictive(X, post) -> ndarray (n, K)``
    Closed-form posterior predictive log p(x | y = k, data) (Student-t,
    Beta-Bernoulli, Dirichlet-multinomial, negative binomial, ...); conjugate
    families only.
``sample(params, y, rng) -> ndarray (n, d)``
    One x per row given class index ``y`` (n,), with params batched as (n, K, ...).
``attributes(params) -> dict``
    scikit-learn-named fitted attributes (``theta_``, ``feature_log_prob_``, ...).

Optional hooks: ``fixed_params(stats) -> dict`` for parameters that are not random
(KernelNB's training points, which sit in ``params`` next to the random ones; only the
keys of ``param_dims`` carry leading draw dims), ``train_log_lik(X, y, params) ->
(S, n)`` for the pointwise log-likelihood of the training rows when it differs from
``log_lik`` (KernelNB's leave-one-out terms, whose statistics also carry each point's
``row``), ``coords()`` for dims beyond class and feature, and the PyMC hooks
``pymc_params``, ``pymc_observed``, ``pymc_stats_loglik`` (see :mod:`bayesgen.inference.model`),
and ``pymc_rows_loglik(params, X) -> (n, K)`` when the rows' PyMC log-density cannot be
read row by row from ``pymc_observed`` (CategoricalNB's one multivariate value; used
for the unlabelled rows of :mod:`bayesgen.semi.nuts`).
``log_evidence(stats, prior) -> float`` (exact log p(X | y), for
:mod:`bayesgen.inference.evidence`) and ``loo_log_predictive(X, y, w, post) -> (n,)``
(exact leave-one-out predictive log-densities of the training rows, for
:mod:`bayesgen.inference.exact_loo`) are written by families that compute them
themselves (ExponentialNB).
Families whose attributes or sampling need the statistics (count families) keep a
reference to them as ``fitted_stats_`` when ``prior``/``mle``/``map``/``posterior``
is called. ``MixedFamily`` namespaces its parts' parameters and dims
(``gaussian0_mu``, ``gaussian0_feature``) and offers ``coords()`` for the renamed dims.
"""

from __future__ import annotations

from importlib import import_module

_REGISTRY = {
    "gaussian": ("bayesgen.families.gaussian", "GaussianFamily"),
    "mvn": ("bayesgen.families.mvn.family", "MVNFamily"),
    "bernoulli": ("bayesgen.families.bernoulli", "BernoulliFamily"),
    "multinomial": ("bayesgen.families.multinomial.family", "MultinomialFamily"),
    "categorical": ("bayesgen.families.categorical.family", "CategoricalFamily"),
    "poisson": ("bayesgen.families.poisson", "PoissonFamily"),
    "exponential": ("bayesgen.families.exponential", "ExponentialFamily"),
    "kernel": ("bayesgen.families.kernel.family", "KernelFamily"),
}


def get_family(name: str):
    """The family class registered under ``name``."""
    if name not in _REGISTRY:
        raise ValueError(f"Unknown family {name!r}; choose one of {sorted(_REGISTRY)}.")
    module, cls = _REGISTRY[name]
    return getattr(import_module(module), cls)


def family_names() -> list[str]:
    """Names of all registered families."""
    return list(_REGISTRY)
