"""method="mcmc": NUTS on the statistics model, convergence checks, and the result as
the same posterior draws the conjugate path produces.

numpyro (what ``"auto"`` picks when installed) runs the compile-once program of
:mod:`bayesgen.inference.jax_nuts`; nutpie, blackjax and PyMC's sampler run through
``pm.sample``. ``chain_method``: blackjax takes "parallel" or "vectorized"
("sequential" runs as "vectorized"); PyMC runs the chains one after the other for
"sequential" (``cores=1``) and in processes otherwise; nutpie uses its own threads.
blackjax through ``pm.sample`` compiles anew at every fit and JAX keeps each program
(about 110 fits exhausted the memory maps in the calibration runs); numpyro keeps at
most :data:`bayesgen.inference.jax_nuts.MAX_PROGRAMS`. JAX's caches are never cleared.
"""

from __future__ import annotations

import importlib.util
import os
import warnings
from typing import TYPE_CHECKING

import numpy as np

from bayesgen.utils.heavy import import_arviz, import_pymc
from bayesgen.utils.progress import quiet_pymc_log, show_progress
from bayesgen.utils.random import seed_from

if TYPE_CHECKING:
    from bayesgen.inference.model import ExtraLikelihood

SAMPLERS = ("auto", "numpyro", "nutpie", "blackjax", "pymc")

#: convergence thresholds (Vehtari et al. 2021)
RHAT_MAX = 1.01
ESS_MIN = 400

def resolve_sampler(sampler: str) -> str:
    """The NUTS implementation to use: "auto" picks numpyro, nutpie, blackjax, then
    PyMC's own, whichever is installed first."""
    if sampler not in SAMPLERS:
        raise ValueError(f"sampler must be one of {SAMPLERS}; got {sampler!r}.")
    installed = {
        "numpyro": importlib.util.find_spec("numpyro") is not None
        and importlib.util.find_spec("jax") is not None,
        "nutpie": importlib.util.find_spec("nutpie") is not None,
        "blackjax": importlib.util.find_spec("blackjax") is not None
        and importlib.util.find_spec("jax") is not None,
        "pymc": True,
    }
    if sampler == "auto":
        return next(name for name in ("numpyro", "nutpie", "blackjax", "pymc") if installed[name])
    if not installed[sampler]:
        raise ValueError(
            f"sampler={sampler!r} is not installed; pip install the package (or use "
            "sampler='auto', which picks the fastest installed one)."
        )
    return sampler


def sample_posterior(estimator, fit, extra: ExtraLikelihood | None = None):
    """Sample the statistics model of ``fit`` (:class:`bayesgen.inference.fitted.Fit`,
    mid-fit: statistics and prior) with NUTS, with the sampler settings of
    ``estimator`` (its public parameters).

    ``extra``: log-likelihood terms beyond the labeled statistics and where the chains
    start (:class:`bayesgen.inference.model.ExtraLikelihood`), or None. nutpie takes no
    start, so its chains start as usual.

    Returns
    -------
    log_pi : ndarray (S, K)
    params : dict of family parameter draws with a leading dim S = chains x draws
    sample_stats : dict of NUTS statistics (chain, draw) (``diverging`` among them)
    hyper : dict
        Draws (chain, draw) of the sampled hyper-parameters, by name: the variables
        ``prior["hyper"]["names"]`` of a family whose prior samples some (LDA/QDA
        ``cov_dof="sample"``); empty otherwise.
    """
    from bayesgen.inference.model import build_stats_model

    for name in ("tune",):
        value = getattr(estimator, name)
        if not isinstance(value, (int, np.integer)) or value < 0:
            raise ValueError(f"{name} must be a non-negative integer; got {value!r}.")
    if not 0 < estimator.target_accept < 1:
        raise ValueError(f"target_accept must be in (0, 1); got {estimator.target_accept!r}.")
    sampler = resolve_sampler(estimator.sampler)
    chains, draws = fit.posterior_size
    chain_method = estimator.chain_method
    model = build_stats_model(fit, extra)
    hyper_names = list((fit.prior.get("hyper") or {}).get("names", ()))
    names = ["pi", *fit.family.param_dims, *hyper_names]
    init = None
    if sampler != "nutpie" and extra is not None and extra.start is not None:
        init = extra.start(fit, model)
    if sampler == "numpyro":
        from bayesgen.inference import jax_nuts

        post, sample_stats = jax_nuts.sample(
            model, names, chains=chains, tune=int(estimator.tune), draws=draws,
            target_accept=float(estimator.target_accept), seed=seed_from(estimator.random_state),
            chain_method=chain_method, init=init,
        )
    else:
        post, sample_stats = _sample_pymc(estimator, model, sampler, chains, draws, init,
                                          chain_method)
    size = chains * draws
    params = {
        name: post[name].reshape(size, *post[name].shape[2:])
        for name in fit.family.param_dims
    }
    family = fit.family
    if family.capabilities.fixed_params:  # non-random entries (KernelNB's training points)
        params.update(family.fixed_params(fit.stats))
    with np.errstate(divide="ignore"):
        log_pi = np.log(post["pi"].reshape(size, -1))
    return log_pi, params, sample_stats, {name: np.asarray(post[name]) for name in hyper_names}


def _sample_pymc(estimator, model, sampler: str, chains: int, draws: int,
                 init: dict | None = None, chain_method: str = "sequential"):
    """``pm.sample`` with ``nuts_sampler=sampler`` (nutpie, blackjax, PyMC's own):
    draws ``name -> (chains, draws, ...)`` and the sample statistics. ``init``
    (unconstrained values by value variable name) becomes ``initvals`` (constrained)
    for PyMC's sampler and blackjax; nutpie ignores initvals, so it starts as usual.
    ``chain_method``: see the module docstring."""
    import contextlib

    pm = import_pymc()

    from bayesgen.inference import jax_nuts, jax_scope

    kwargs = {}
    scope = contextlib.nullcontext()
    cores = 1 if chain_method == "sequential" else min(chains, os.cpu_count() or 1)
    if init is not None and sampler != "nutpie":
        kwargs["initvals"] = constrained(model, init)
        if sampler == "pymc":  # no jitter of +-1 around the start
            kwargs["init"] = "adapt_diag"
    if sampler == "blackjax":
        jax_nuts.check_chain_method(chain_method, chains)
        kwargs["nuts_sampler_kwargs"] = {
            "chain_method": "parallel" if chain_method == "parallel" else "vectorized"}
        scope = jax_scope.scope()  # JAX's global settings left as they are
    show = show_progress(estimator.progressbar)
    with warnings.catch_warnings(), quiet_pymc_log(show), scope:
        warnings.filterwarnings("ignore", message=".*at least 4 chains.*")
        # the C backend's missing BLAS does not matter: NUTS runs in JAX/numba/Rust
        warnings.filterwarnings("ignore", message="PyTensor could not link to a BLAS")
        idata = pm.sample(
            draws=draws,
            tune=int(estimator.tune),
            chains=chains,
            cores=cores,
            model=model,
            nuts_sampler=sampler,
            random_seed=seed_from(estimator.random_state),
            target_accept=float(estimator.target_accept),
            progressbar=show,
            compute_convergence_checks=False,
            **kwargs,
        )
    post = {name: idata.posterior[name].values for name in idata.posterior.data_vars}
    sample_stats = {
        name: idata.sample_stats[name].values for name in idata.sample_stats.data_vars
    }
    return post, sample_stats


def constrained(model, init: dict) -> dict:
    """``init`` (unconstrained, by value variable name) as constrained values by free
    random variable name: PyMC's ``initvals``."""
    rvs = model.free_RVs
    values = model.compile_fn(inputs=model.value_vars,
                              outs=model.replace_rvs_by_values(rvs))(init)
    return {rv.name: np.asarray(v) for rv, v in zip(rvs, values, strict=True)}


def convergence_report(idata, var_names: list[str]) -> list[str]:
    """Problems found in the posterior: R-hat > 1.01, bulk/tail ESS < 400, divergences.

    R-hat compares chains, so with one chain it cannot be computed: the report then
    says that it needs two or more chains (instead of an R-hat of NaN).

    Returns a list of human-readable problems (empty when all is well).
    """
    az = import_arviz()

    def extreme(pick, values: list[float]) -> float:
        # max/min of the non-NaN values (NaN if all are): Python's max/min with a NaN
        # among the values depend on its position
        finite = [v for v in values if not np.isnan(v)]
        return pick(finite) if finite else float("nan")

    problems = []
    post = idata.posterior[var_names]
    n_chains = int(post.sizes.get("chain", 1))
    # constant entries (CategoricalNB's zero padding) have undefined R-hat/ESS: NaN,
    # skipped by the max/min below
    with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        rhat = az.rhat(post) if n_chains >= 2 else None
        ess_bulk = az.ess(post, method="bulk")
        ess_tail = az.ess(post, method="tail")
    if rhat is None:
        problems.append(
            "R-hat was not computed: it needs two or more chains (chains=1); use "
            "chains >= 2 (4 recommended) to check convergence"
        )
    else:
        worst_rhat = extreme(max, [float(rhat[v].max()) for v in var_names])
        if np.isnan(worst_rhat):
            problems.append("R-hat is undefined (every parameter constant across draws)")
        elif worst_rhat > RHAT_MAX:
            problems.append(f"R-hat up to {worst_rhat:.3f} (> {RHAT_MAX})")
    for label, ess in (("bulk", ess_bulk), ("tail", ess_tail)):
        low = extreme(min, [float(ess[v].min()) for v in var_names])
        if not low >= ESS_MIN:
            problems.append(f"{label} ESS as low as {low:.0f} (< {ESS_MIN})")
    if "sample_stats" in idata.groups() and "diverging" in idata.sample_stats:
        n_div = int(idata.sample_stats["diverging"].sum())
        if n_div:
            problems.append(f"{n_div} divergent transitions")
    return problems


def warn_if_not_converged(idata, var_names: list[str], who: str) -> None:
    """Emit one :class:`bayesgen.ConvergenceWarning` listing convergence problems and
    what to try, attributed to the user's line."""
    from bayesgen.exceptions import ConvergenceWarning, warn

    problems = convergence_report(idata, var_names)
    if problems:
        warn(
            f"{who} MCMC may not have converged: {'; '.join(problems)}. Try more tuning "
            "steps (tune=2000) and draws, a higher target_accept (0.95) against "
            "divergences, or for LDA/QDA the other cov_prior_form ('lkj' / 'niw').",
            ConvergenceWarning,
        )
