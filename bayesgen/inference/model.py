"""PyMC models of a fitted classifier.

Two equivalent models are built from the same family hooks:

``build_model`` (the estimator's ``model_``)
    The natural generative model with its data: ``pi ~ Dirichlet(class_alpha)`` (or,
    with a fixed ``class_prior``, the data ``class_prior`` as the deterministic ``pi``),
    observed ``y ~ Categorical(pi)`` (dims ``obs``), the family's prior and observed
    features given the class (``x``, dims ``obs, feature``). For users to inspect, to
    draw prior predictive samples from and to sample themselves. Missing entries (NaN)
    in the training X of the factorised families (GaussianNB, BernoulliNB, PoissonNB,
    CategoricalNB, MixedNB's parts) are integrated out: ``x`` holds X with its NaN and
    its log-density is the sum over the observed entries only (the observed-data
    likelihood every method fits), with no imputation variables, so ``compile_logp``,
    NUTS and the forward sampler (complete rows) work as without gaps; ``x`` is then
    float64 (:mod:`bayesgen.families.pymc_gaps`).

``build_stats_model``
    The same prior with the likelihood written on the weighted sufficient statistics
    (``pm.Potential``): ``sum_k N_k log pi_k`` plus the family's statistics
    log-likelihood. Its log-density differs from ``model_``'s by a constant (for unit
    weights), and its cost per gradient does not grow with the number of rows: this is
    the model ``method="mcmc"`` samples.

Family hooks (see :mod:`bayesgen.families`):

``pymc_params(prior, *, prefix="", dims=None) -> dict``
    Create the prior random variables in the current model; the parameters named in
    ``param_dims`` must exist as model variables ``prefix + name`` with those dims.
``pymc_observed(params, X, y, *, prefix="", dims=None) -> None``
    Observed features given the class index ``y`` (a tensor, shape (n,)); NaN in ``X``
    marks a missing entry, whose factor the family drops (never imputes).
``pymc_stats_loglik(params, stats) -> scalar tensor or None``
    sum_n w_n log p(x_n | y_n, theta) up to a constant, on the statistics; None when
    the likelihood is not a function of them (a mixture per class): the caller then
    gives it per row as an :class:`ExtraLikelihood`.

A caller may add log-likelihood terms of data that are no labeled statistics (the
unlabeled rows' mixture likelihood of :mod:`bayesgen.semi.nuts`) and a start for the
chains: an :class:`ExtraLikelihood`, given to :func:`build_stats_model` and
:func:`bayesgen.inference.mcmc.sample_posterior`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from bayesgen.inference import classprior
from bayesgen.inference.fitted import as_fit
from bayesgen.utils.heavy import import_pymc


@dataclass(frozen=True)
class ExtraLikelihood:
    """Log-likelihood terms beyond the labeled statistics, supplied by the caller.

    Attributes
    ----------
    terms : callable ``(fit, pi, params) -> dict[str, TensorVariable]``
        Called inside the statistics model with the class probabilities ``pi`` (K,)
        and the family's parameters (``pymc_params``); every scalar term it returns is
        added as ``pm.Potential(name, term)``.
    start : callable ``(fit, model) -> dict or None``, optional
        Where the NUTS chains start in ``model`` (the statistics model with the
        terms): unconstrained values by value variable name. With numpyro it is where
        the search for the mode starts (the chains start at that mode, jittered:
        :func:`bayesgen.inference.jax_nuts.laplace`); PyMC's sampler and blackjax
        start there. None (or no ``start``) keeps the sampler's own initial point.
    """

    terms: Callable[[Any, Any, dict], dict[str, Any]]
    start: Callable[[Any, Any], dict | None] | None = None


def model_coords(fit, n_obs: int) -> dict:
    """Coordinates shared by ``model_``, the statistics model and ``idata_``."""
    fit = as_fit(fit)
    from bayesgen.inference import posterior

    coords = posterior.coords_for(fit.classes, fit.feature_names, fit.family, fit.params)
    coords["obs"] = np.arange(n_obs)
    return coords


def build_model(fit, X: np.ndarray, y_index: np.ndarray):
    """The generative ``pymc.Model`` with observed rows (the estimator's ``model_``)."""
    fit = as_fit(fit)
    pm = import_pymc()

    from bayesgen.inference import scoring

    family = fit.family
    with pm.Model(coords=model_coords(fit, X.shape[0])) as model:
        pi = classprior.pymc_pi(fit, data=True)  # Dirichlet, or a fixed class_prior
        y = pm.Categorical("y", p=pi, observed=y_index, dims="obs")
        params = family.pymc_params(scoring.user_prior(fit))  # in the units of X
        family.pymc_observed(params, X, y)
    return model


def build_stats_model(fit, extra: ExtraLikelihood | None = None):
    """The same prior, likelihood on the sufficient statistics (what NUTS samples),
    plus the caller's ``extra`` terms (:class:`ExtraLikelihood`), if any."""
    fit = as_fit(fit)
    pm = import_pymc()

    family = fit.family
    with pm.Model(coords=model_coords(fit, 0)) as model:
        pi = classprior.pymc_pi(fit)  # Dirichlet, or a fixed class_prior (constant)
        pm.Potential("y_loglik", classprior.pymc_loglik(fit, pi))
        params = family.pymc_params(fit.prior)
        x_loglik = family.pymc_stats_loglik(params, fit.stats)
        if x_loglik is not None:  # None: per row, in ``extra`` (MixtureDA's mixture)
            pm.Potential("x_loglik", x_loglik)
        if extra is not None:  # e.g. the unlabeled rows' mixture likelihood
            for name, term in extra.terms(fit, pi, params).items():
                pm.Potential(name, term)
    return model
