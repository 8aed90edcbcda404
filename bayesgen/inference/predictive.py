"""Prior and posterior predictive samples of the generative model, as ArviZ groups.

Both replicate the training set: ``y`` (dims ``obs``) and ``x`` (``obs, feature``),
plus the per-class ``x_class_<label>`` of :mod:`bayesgen.inference.class_layout`
(x drawn given the row's observed class). Prior predictive: PyMC's forward sampling of
``model_``, with ``x`` drawn by the family's sampler where the model has no single
observed ``x`` (KernelNB, MixedNB). Posterior predictive: for every posterior draw s,
``y_rep ~ Categorical(pi_s)`` and ``x_rep ~ p(x | y_rep, theta_s)`` (the sampler behind
``sample``), on request only and over every draw, so ``az.loo_pit`` can pair it with
``log_likelihood``; above :data:`MAX_VALUES` values a ``ValueError`` suggests fewer
draws or chains.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from bayesgen.inference import scoring
from bayesgen.utils.heavy import import_arviz, import_pymc
from bayesgen.utils.progress import quiet_logger
from bayesgen.utils.random import legacy_rng

#: refuse to build replicated data sets larger than this many values (~4 GB)
MAX_VALUES = 500_000_000


def _replicate_x(fit, params: dict, y_rep: np.ndarray, rng: np.random.Generator,
                 *, internal: bool):
    """x_rep (S, n, d) in the units of X: for each draw s, one x per row given class
    y_rep[s]; ``internal``: ``params`` are in the fit's internal frame (the posterior
    ``_params``), else in the units of X (prior draws of ``model_``)."""
    family = fit.family
    random = family.param_dims
    n_draws, n_obs = y_rep.shape
    if n_draws * n_obs * fit.n_features > MAX_VALUES:
        raise ValueError(
            f"the replicated data would hold {n_draws} x {n_obs} x "
            f"{fit.n_features} values; refit with fewer draws or chains."
        )
    out = np.empty((n_draws, n_obs, fit.n_features))
    params = {**params, **family.sample_inputs(fit.stats)}  # non-random extras
    for s in range(n_draws):
        batched = {}
        for k, v in params.items():
            value = v[s] if k in random else v
            batched[k] = np.broadcast_to(value, (n_obs, *np.shape(value)))
        out[s] = family.sample(batched, y_rep[s], rng)
    return scoring.to_user_rows(fit, out) if internal else out


def _draw_classes(pi: np.ndarray, n_obs: int, rng: np.random.Generator) -> np.ndarray:
    """y (S, n) with y[s, i] ~ Categorical(pi[s]) (inverse-CDF, vectorised)."""
    cdf = np.cumsum(pi, axis=1)
    u = rng.uniform(size=(pi.shape[0], n_obs, 1))
    return np.minimum((cdf[:, None, :] < u).sum(axis=2), pi.shape[1] - 1)


def posterior_predictive(estimator, random_state: Any = None, X: Any = None, y: Any = None,
                         sample_weight: Any = None):
    """Add ``posterior_predictive`` to ``estimator.idata_`` (module docstring); return it.

    The replicates are shaped like ``X``, ``y`` (``sample_weight``) when given (then added
    as ``observed_data`` if ``idata_`` has none), else like the rows kept in ``idata_``
    (:mod:`bayesgen.inference.rows`); every posterior draw is replicated.
    """
    import xarray as xr

    az = import_arviz()

    from bayesgen.inference import rows as training

    data = training.training_rows(
        estimator, X, y, sample_weight, what="sample_posterior_predictive (replicates of the rows)",
        how="sample_posterior_predictive(X=X, y=y)")
    if not data.kept:
        training.keep(estimator, data)
    rng = legacy_rng(random_state)
    fit = estimator.fitted_
    chains, draws = fit.posterior_size
    y_rep = _draw_classes(np.exp(fit.log_pi_draws), data.y.shape[0], rng)
    x_rep = _replicate_x(fit, fit.params, y_rep, rng, internal=True)
    post = estimator.idata_.posterior
    ds = xr.Dataset(
        {"y": (("chain", "draw", "obs"), y_rep.reshape(chains, draws, -1)),
         "x": (("chain", "draw", "obs", "feature"),
               x_rep.reshape(chains, draws, *x_rep.shape[1:]))},
        coords={"chain": post["chain"].values, "draw": post["draw"].values,
                "obs": np.arange(data.y.shape[0]), "feature": fit.feature_names})
    ds = _with_per_class(ds, fit, fit.params, data, estimator.idata_, rng, chains, draws,
                         internal=True)
    estimator.idata_.extend(az.InferenceData(posterior_predictive=ds), join="right")
    return estimator.idata_


def _with_per_class(ds, fit, params: dict, data, idata, rng: np.random.Generator,
                    chains: int, draws: int, *, internal: bool):
    """``ds`` with the per-class replicates ``x_class_<label>`` of ``idata``'s
    ``observed_data`` (:func:`_layout`), conditional on the observed labels: x ~ p(x |
    y = y_i, theta_s) for every row i and each of the chains x draws ``params``."""
    from bayesgen.inference import class_layout, rows

    layout = _layout(idata, fit.classes, data.y)
    if not layout:
        return ds
    given = np.broadcast_to(data.y, (chains * draws, data.y.size))
    x_cond = _replicate_x(fit, params, given, rng, internal=internal)
    values, dims = class_layout.replicated(x_cond, data.y, rows.dense(data.X), layout,
                                           chains, draws)
    ds = ds.assign({var: (dims[var], value) for var, value in values.items()})
    return ds.assign_coords({dim: idata.observed_data[dim].values for _, _, dim in layout})


def _layout(idata, classes, y: np.ndarray) -> list:
    """The per-class variables of ``idata.observed_data`` whose rows are those of ``y``
    (class index per row): as many rows of each class (rows given again in another
    order are the same rows of the class, exchangeable given the class)."""
    from bayesgen.inference import class_layout

    if idata is None or "observed_data" not in idata.groups():
        return []
    observed = idata.observed_data
    counts = np.bincount(y, minlength=len(classes))
    return [(k, var, dim) for k, var, dim in class_layout.present(observed, classes)
            if observed.sizes[dim] == counts[k]]


def prior_predictive(estimator, draws: int = 500, random_state: Any = None, X: Any = None,
                     y: Any = None):
    """The groups ``prior`` and ``prior_predictive`` for ``estimator.idata_``.

    Forward samples of the PyMC model with the training rows: ``X``, ``y`` when given
    (any rows: only their number and labels shape the samples), else those kept in
    ``idata_`` (``model_``). A point fit gets an ``idata_`` holding these groups and
    the rows as ``observed_data`` (for ArviZ's prior predictive plots; a point fit
    still keeps no rows for its other capabilities).

    Returns
    -------
    (groups, new) : (arviz.InferenceData, bool)
        The groups; ``new``: the estimator has no ``idata_`` yet, and ``groups`` (which
        then also holds the rows' ``observed_data``) is to become it, else they are to
        be added to it (``extend(groups, join="right")``).
    """
    az = import_arviz()
    pm = import_pymc()

    from bayesgen.inference import rows as training

    if not isinstance(draws, (int, np.integer)) or draws < 1:
        raise ValueError(f"draws must be a positive integer; got {draws!r}.")
    fit = estimator.fitted_
    data = training.training_rows(
        estimator, X, y, what="sample_prior_predictive (shaped like the rows)",
        how="sample_prior_predictive(X=X, y=y)", check=False)
    if data.kept:
        model = estimator.model_
    else:
        from bayesgen.inference.model import build_model

        model = build_model(fit, data.X, data.y)
    rng = legacy_rng(random_state)
    seed = int(rng.integers(2**31))
    hyper = list((fit.prior or {}).get("hyper", {}).get("names", ()))
    names = ["pi", *fit.family.param_dims, *hyper]
    observed = {"y"} | ({"x"} if "x" in model.named_vars else set())
    with warnings.catch_warnings(), quiet_logger("pymc.sampling.forward"):
        # KernelNB's likelihood is a Potential with no forward sampler: x is drawn below
        warnings.filterwarnings("ignore", message=".*Potentials.*")
        # forward sampling compiles with PyTensor's C backend, whose BLAS notice is about
        # the speed of large matrix products, not of these draws
        warnings.filterwarnings("ignore", message="PyTensor could not link to a BLAS")
        sampled = pm.sample_prior_predictive(
            draws=int(draws), model=model, random_seed=seed,
            var_names=[*names, *sorted(observed)],
        )
    prior = sampled.prior[names]
    pp = sampled.prior_predictive
    params = {k: prior[k].values[0] for k in fit.family.param_dims}
    if fit.family.capabilities.fixed_params:  # training points, in user units
        fixed = fit.family.fixed_params(fit.stats)
        params.update(scoring.user_params(fit, fixed))
    if "x" not in pp:
        y_rep = pp["y"].values[0]
        x_rep = _replicate_x(fit, params, y_rep, rng, internal=False)
        pp = pp.assign(x=(("chain", "draw", "obs", "feature"), x_rep[None]))
        pp = pp.assign_coords(feature=fit.feature_names)
    pp = pp[["y", "x"]]
    observed = getattr(estimator, "idata_", None)
    if observed is None:
        observed = training.observed_groups(estimator, data)
    pp = _with_per_class(pp, fit, params, data, observed, rng, 1, int(draws), internal=False)
    groups = az.InferenceData(prior=prior, prior_predictive=pp)
    new = getattr(estimator, "idata_", None) is None
    if new:
        groups.extend(observed)
    return groups, new

