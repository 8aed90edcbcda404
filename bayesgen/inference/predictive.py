"""Prior and posterior predictive samples of the generative model, as ArviZ groups.

Both replicate the training data set: ``y`` (class indices, dims ``obs``) and ``x``
(dims ``obs, feature``), shaped like ``observed_data``.

- Prior predictive: PyMC's forward sampling of ``model_`` (``pm.sample_prior_predictive``)
  gives the prior draws of pi and the parameters, ``y`` and, where the family writes
  ``x`` as one observed variable, ``x``; otherwise (KernelNB's potential, MixedNB's
  per-part variables) ``x`` is drawn given those prior draws with the family's own
  sampler.
- Posterior predictive: for every posterior draw s, ``y_rep ~ Categorical(pi_s)`` and
  ``x_rep ~ p(x | y_rep, theta_s)`` with the family's sampler (the same one behind
  ``sample``), so it works identically for conjugate and MCMC draws.
"""

from __future__ import annotations

import contextlib
import logging
import warnings
from typing import Any

import numpy as np

from bayesgen.inference import scoring
from bayesgen.utils.heavy import import_arviz, import_pymc

#: refuse to build replicated data sets larger than this many values (~4 GB)
MAX_VALUES = 500_000_000


def _rng(random_state: Any) -> np.random.Generator:
    from bayesgen.utils.random import legacy_rng

    return legacy_rng(random_state)


def _replicate_x(estimator, params: dict, y_rep: np.ndarray, rng: np.random.Generator,
                 *, internal: bool):
    """x_rep (S, n, d) in the units of X: for each draw s, one x per row given class
    y_rep[s]; ``internal``: ``params`` are in the fit's internal frame (the posterior
    ``_params``), else in the units of X (prior draws of ``model_``)."""
    family = estimator._family
    random = family.param_dims
    n_draws, n_obs = y_rep.shape
    if n_draws * n_obs * estimator.n_features_in_ > MAX_VALUES:
        raise ValueError(
            f"the replicated data would hold {n_draws} x {n_obs} x "
            f"{estimator.n_features_in_} values; refit with fewer draws or chains."
        )
    out = np.empty((n_draws, n_obs, estimator.n_features_in_))
    for s in range(n_draws):
        batched = {}
        for k, v in params.items():
            value = v[s] if k in random else v
            batched[k] = np.broadcast_to(value, (n_obs, *np.shape(value)))
        out[s] = family.sample(batched, y_rep[s], rng)
    return scoring.to_user_rows(estimator, out) if internal else out


def _draw_classes(pi: np.ndarray, n_obs: int, rng: np.random.Generator) -> np.ndarray:
    """y (S, n) with y[s, i] ~ Categorical(pi[s]) (inverse-CDF, vectorised)."""
    cdf = np.cumsum(pi, axis=1)
    u = rng.uniform(size=(pi.shape[0], n_obs, 1))
    return np.minimum((cdf[:, None, :] < u).sum(axis=2), pi.shape[1] - 1)


def _dataset(values: dict, dims: dict, coords: dict):
    import xarray as xr

    return xr.Dataset(
        {name: (dims[name], value) for name, value in values.items()},
        coords={k: v for k, v in coords.items() if any(k in d for d in dims.values())},
    )


def posterior_predictive(estimator, random_state: Any = None, X: Any = None, y: Any = None,
                         sample_weight: Any = None):
    """Add ``posterior_predictive`` (``y``, ``x``) to ``estimator.idata_``; return it.

    The replicates are shaped like the training rows: ``X``, ``y`` (``sample_weight``)
    when given (then added to ``idata_`` as ``observed_data`` if it has none, for
    ArviZ's checks), else
    those kept in ``idata_`` (:mod:`bayesgen.inference.rows`).
    """
    az = import_arviz()

    from bayesgen.inference import rows as training

    data = training.training_rows(
        estimator, X, y, sample_weight, what="sample_posterior_predictive (replicates of the rows)",
        how="sample_posterior_predictive(X=X, y=y)")
    rng = _rng(random_state)
    chains, draws = estimator._posterior_size()
    n_obs = data.y.shape[0]
    pi = np.exp(estimator._log_pi_draws)
    y_rep = _draw_classes(pi, n_obs, rng)
    x_rep = _replicate_x(estimator, estimator._params, y_rep, rng, internal=True)
    coords = {
        "chain": np.arange(chains),
        "draw": np.arange(draws),
        "obs": np.arange(n_obs),
        "feature": estimator._feature_names(),
    }
    ds = _dataset(
        {
            "y": y_rep.reshape(chains, draws, -1),
            "x": x_rep.reshape(chains, draws, *x_rep.shape[1:]),
        },
        {"y": ("chain", "draw", "obs"), "x": ("chain", "draw", "obs", "feature")},
        coords,
    )
    if not data.kept:
        training.keep(estimator, data)
    estimator.idata_.extend(az.InferenceData(posterior_predictive=ds), join="right")
    return estimator.idata_


def prior_predictive(estimator, draws: int = 500, random_state: Any = None, X: Any = None,
                     y: Any = None):
    """Add ``prior`` and ``prior_predictive`` to ``estimator.idata_``; return it.

    Forward samples of the PyMC model with the training rows: ``X``, ``y`` when given
    (any rows: only their number and labels shape the samples), else those kept in
    ``idata_`` (``model_``). A point fit gets an ``idata_`` holding these groups and
    the rows as ``observed_data`` (for ArviZ's prior predictive plots; a point fit
    still keeps no rows for its other capabilities).
    """
    az = import_arviz()
    pm = import_pymc()

    from bayesgen.inference import rows as training

    if not isinstance(draws, (int, np.integer)) or draws < 1:
        raise ValueError(f"draws must be a positive integer; got {draws!r}.")
    data = training.training_rows(
        estimator, X, y, what="sample_prior_predictive (shaped like the rows)",
        how="sample_prior_predictive(X=X, y=y)", check=False)
    if data.kept:
        model = estimator.model_
    else:
        from bayesgen.inference.model import build_model

        model = build_model(estimator, data.X, data.y)
    rng = _rng(random_state)
    seed = int(rng.integers(2**31))
    hyper = list((getattr(estimator, "_prior", None) or {}).get("hyper", {}).get("names", ()))
    names = ["pi", *estimator._family.param_dims, *hyper]
    observed = {"y"} | ({"x"} if "x" in model.named_vars else set())
    with warnings.catch_warnings(), _quiet_logger("pymc.sampling.forward"):
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
    if "x" not in pp:
        params = {k: prior[k].values[0] for k in estimator._family.param_dims}
        if estimator._family.capabilities.fixed_params:  # training points, in user units
            fixed = estimator._family.fixed_params(estimator._stats)
            params.update(scoring.user_params(estimator, fixed))
        y_rep = pp["y"].values[0]
        x_rep = _replicate_x(estimator, params, y_rep, rng, internal=False)
        pp = pp.assign(x=(("chain", "draw", "obs", "feature"), x_rep[None]))
        pp = pp.assign_coords(feature=estimator._feature_names())
    groups = az.InferenceData(prior=prior, prior_predictive=pp[["y", "x"]])
    if getattr(estimator, "idata_", None) is None:
        groups.extend(training.observed_groups(estimator, data))
        estimator.idata_ = groups
    else:
        estimator.idata_.extend(groups, join="right")
    return estimator.idata_


@contextlib.contextmanager
def _quiet_logger(name: str):
    """Raise logger ``name`` to WARNING for the block: PyMC logs "Sampling: [...]" at
    INFO on every forward sampling call, which says nothing to a bayesgen user."""
    logger = logging.getLogger(name)
    level = logger.level
    logger.setLevel(logging.WARNING)
    try:
        yield
    finally:
        logger.setLevel(level)
