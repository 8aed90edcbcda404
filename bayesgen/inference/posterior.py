"""Posterior draws -> predictions and ``arviz.InferenceData``.

One path for every posterior: draws of the family parameters with a leading dim
S = chains x draws, and of log pi (S, K). From them the predictive joint
log p(x, y=k | data) ~= log mean_s p(x, y=k | theta_s), the per-draw p(y=k | x, theta_s)
(``predict_proba_draws``) and the pointwise log p(x_n, y_n | theta_s) (the
``log_likelihood`` group), over rows in chunks so memory stays bounded.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import numpy as np
from scipy.special import logsumexp

from bayesgen.data.sparse import observed_x
from bayesgen.exceptions import warn
from bayesgen.inference import class_layout, classprior
from bayesgen.inference.fitted import as_fit
from bayesgen.utils.heavy import import_arviz
from bayesgen.utils.logspace import fast_logsumexp, log_mean_exp

if TYPE_CHECKING:  # arviz and xarray are imported when first needed (import time)
    import arviz as az
    import xarray as xr

#: float64 values in one chunk's (draws, rows, classes) block (~80 MB); families keep
#: their own larger temporaries bounded (they block over rows internally)
CHUNK_BUDGET = 10_000_000


#: largest pointwise log-likelihood table (draws x rows) stored in idata_ (~2 GB)
LOG_LIK_MAX_VALUES = 250_000_000
#: the one variable of ``idata_.log_likelihood``: the joint log p(x_n, y_n | theta) of
#: each training row (named for both observed parts, not after ``y`` alone)
LOG_LIK_VAR = "xy"


def draw_conjugate(family, stats: dict, prior: dict, counts: np.ndarray,
                   class_alpha: np.ndarray, size: int, rng: np.random.Generator,
                   fixed: np.ndarray | None = None):
    """Exact i.i.d. posterior draws of (log pi, family parameters).

    ``fixed``: a fixed class prior (the ``class_prior`` parameter), which then is every
    draw of pi (pi is known: nothing to sample).

    Returns
    -------
    log_pi : ndarray (size, K)
        Draws of log pi from Dirichlet(N + class_alpha), or log ``fixed`` repeated.
    params : dict
        Family parameter draws with leading dim ``size``.
    post : dict
        The family's posterior hyper-parameters.
    """
    post = family.posterior(stats, prior)
    params = family.draw(post, size, rng)
    return classprior.log_draws(counts, class_alpha, size, rng, fixed), params, post


def closed_form_log_pi(fit) -> np.ndarray:
    """log E[pi_k | data], (K,): the Dirichlet posterior mean (N_k + a_k) / sum (N + a),
    or log of the fixed ``class_prior``."""
    fit = as_fit(fit)  # a Fit, or a fitted estimator
    conc = fit.fixed_pi
    if conc is None:
        conc = classprior.posterior(fit.class_count, fit.class_alpha)
    with np.errstate(divide="ignore"):
        return np.log(conc / conc.sum())


#: the key of a mixture posterior (:func:`mixture`) in ``_posterior``
MIXTURE = "mixture"


def mixture(posts: list[dict], log_pi: np.ndarray) -> dict:
    """A conjugate posterior that is an equal-weight mixture of T conjugate posteriors.

    ``posts`` are T posteriors of the family (what its ``log_predictive`` accepts) and
    ``log_pi`` (T, K) the log posterior means of pi that go with them: a posterior
    Rao-Blackwellised over the T retained sweeps of a data augmentation whose
    conditional posteriors are conjugate (the classes of unlabeled rows,
    :mod:`bayesgen.semi.augmentation`). Its predictive density is the mean of theirs
    (:func:`closed_form`); stored as ``_posterior`` like any conjugate posterior.
    """
    return {MIXTURE: {"posts": list(posts), "log_pi": np.asarray(log_pi)}}


def closed_form(fit, log_predictive) -> np.ndarray:
    """log p(x, y=k | data) of a ``method="conjugate"`` fit, (n, K), from the family's
    closed-form predictive ``log_predictive(post) -> (n, K)`` (of rows in the internal
    frame: :meth:`log_predictive` or ``far_log_predictive`` bound to the rows).

    One conjugate posterior: ``log E[pi_k | data] + log_predictive(_posterior)``
    (:func:`closed_form_log_pi`; pi and theta are independent a posteriori). A mixture
    (:func:`mixture`): ``log mean_t exp(log E[pi_k | z_t] + log_predictive(post_t))``,
    the mean of the components' joint predictive densities.
    """
    post = fit.posterior
    if MIXTURE in post:
        parts = post[MIXTURE]
        values = np.stack([log_predictive(p) + lpi
                           for p, lpi in zip(parts["posts"], parts["log_pi"], strict=True)])
        with np.errstate(divide="ignore"):
            return logsumexp(values, axis=0) - np.log(values.shape[0])
    log_pi = closed_form_log_pi(fit)
    with np.errstate(divide="ignore"):
        return log_predictive(post) + log_pi


def exact_predictive_log_joint(estimator, X) -> np.ndarray:
    """Closed-form log p(x, y=k | data) of a ``method="conjugate"`` fit, shape (n, K).

    ``log E[pi_k] + log p(x | y=k, data)`` with the family's closed-form predictive
    density (Student-t, Dirichlet-multinomial, Beta-Bernoulli, negative binomial, ...):
    pi and the family parameters are independent a posteriori, so the expectation of
    the joint factorises. It is what ``predict_joint_log_proba`` returns for
    ``method="conjugate"``; the draw-based :func:`predictive_log_joint` converges to it
    as the number of draws grows.
    """
    if getattr(estimator, "method_", None) != "conjugate":
        raise ValueError("exact_predictive_log_joint needs a model fitted with method='conjugate'.")
    return estimator.predict_joint_log_proba(X)


def iter_log_joint(family, X: np.ndarray, params: dict, log_pi: np.ndarray
                   ) -> Iterator[tuple[slice, np.ndarray]]:
    """Yield ``(rows, log p(x, y=k | theta_s))`` of shape (S, rows, K) chunk by chunk."""
    n_draws, n_classes = log_pi.shape
    step = max(1, CHUNK_BUDGET // max(1, n_draws * n_classes))
    with np.errstate(divide="ignore"):
        for start in range(0, X.shape[0], step):
            rows = slice(start, min(start + step, X.shape[0]))
            yield rows, family.log_lik(X[rows], params, full=True) + log_pi[:, None, :]


def predictive_log_joint(family, X: np.ndarray, params: dict, log_pi: np.ndarray) -> np.ndarray:
    """log p(x, y=k | data) ~= log mean_s p(x, y=k | theta_s), shape (n, K)."""
    out = np.empty((X.shape[0], log_pi.shape[1]))
    for rows, lj in iter_log_joint(family, X, params, log_pi):
        out[rows] = log_mean_exp(lj, axis=0)
    return out


def proba_draws(family, X: np.ndarray, params: dict, log_pi: np.ndarray) -> np.ndarray:
    """p(y=k | x, theta_s) per draw, shape (S, n, K); a row impossible under every class
    for some draw gets that draw's pi (as the plug-in rule does)."""
    out = np.empty((log_pi.shape[0], X.shape[0], log_pi.shape[1]))
    for rows, lj in iter_log_joint(family, X, params, log_pi):
        norm = fast_logsumexp(lj, axis=2, keepdims=True)
        bad = ~np.isfinite(norm[..., 0])
        if bad.any():
            norm[bad] = 0.0
            lj[bad] = np.broadcast_to(log_pi[:, None, :], lj.shape)[bad]
        out[:, rows] = np.exp(lj - norm)
    return out


def pointwise_log_lik(family, X: np.ndarray, y: np.ndarray, params: dict,
                      log_pi: np.ndarray) -> np.ndarray:
    """log p(x_n, y_n | theta_s), shape (S, n): the joint per observation and draw.

    ``X``, ``y`` are the training rows. A family with ``capabilities.train_log_lik``
    gives log p(x_n | y_n, theta_s) (S, n) of its training rows itself
    (``train_log_lik``) (KernelNB: each row's leave-one-out term, the likelihood NUTS
    samples, rather than ``log_lik`` with the row under its own kernel; MixedNB: the sum
    over its parts) and log pi_{y_n} is added; otherwise ``log_lik`` at class y_n.
    """
    if family.capabilities.train_log_lik:
        with np.errstate(divide="ignore"):
            return family.train_log_lik(X, y, params) + log_pi[:, y]
    out = np.empty((log_pi.shape[0], X.shape[0]))
    for rows, lj in iter_log_joint(family, X, params, log_pi):
        yi = y[rows]
        out[:, rows] = np.take_along_axis(lj, yi[None, :, None].repeat(lj.shape[0], 0), 2)[..., 0]
    return out


def coords_for(classes: np.ndarray, feature_names: list[str], family, params: dict) -> dict:
    """ArviZ coords: class labels, feature names (also as ``feature_bis``), the family's
    own named coordinates if it declares ``capabilities.coords`` (MixedNB's per-part
    feature dims, CategoricalNB's blocks), and integer coordinates for any other dim in
    ``param_dims`` (``category``)."""
    param_dims = family.param_dims
    coords = {
        "class": [c.item() if isinstance(c, np.generic) else c for c in classes],
        "feature": list(feature_names),
        "feature_bis": list(feature_names),
    }
    if family.capabilities.coords:
        coords.update(family.coords())
    for name, dims in param_dims.items():
        if params is None or name not in params:
            continue  # before fitting: families with extra dims give them in coords()
        shape = np.shape(params[name])[-len(dims):]
        for dim, size in zip(dims, shape, strict=True):
            if dim not in coords:
                coords[dim] = list(range(size))
    return coords


def reshape_draws(value: np.ndarray, chains: int, draws: int) -> np.ndarray:
    """(S, ...) -> (chains, draws, ...)."""
    return np.asarray(value).reshape(chains, draws, *np.shape(value)[1:])


def build_idata(*, log_pi: np.ndarray, params: dict, param_dims: dict, chains: int,
                draws: int, coords: dict, log_lik: np.ndarray, X: np.ndarray,
                y: np.ndarray, sample_stats: dict | None = None,
                attrs: dict | None = None) -> az.InferenceData:
    """Assemble ``posterior``, ``log_likelihood``, ``observed_data`` (and ``sample_stats``).

    ``posterior`` holds ``pi`` (chain, draw, class) and every family parameter with its
    named dims; ``log_likelihood`` holds one variable ``xy`` (:data:`LOG_LIK_VAR`) = the
    joint log p(x_n, y_n |
    theta) (chain, draw, obs), left out when ``log_lik`` is None (too large to store);
    ``observed_data`` holds ``y`` (class index, obs), ``x`` (obs, feature) and the
    per-class rows ``x_class_<label>`` (:mod:`bayesgen.inference.class_layout`), left
    out (with ``log_likelihood``) when ``X`` is None (a fit from statistics alone).
    """
    az = import_arviz()

    posterior = {"pi": reshape_draws(np.exp(log_pi), chains, draws)}
    dims = {"pi": ["class"]}
    for name, var_dims in param_dims.items():
        posterior[name] = reshape_draws(params[name], chains, draws)
        dims[name] = list(var_dims)
    # arrays, not lists: ArviZ deep-copies the coords per variable (a minute for lists
    # of 300,000 feature names, milliseconds for arrays)
    coords = {k: np.asarray(v) for k, v in coords.items()}
    observed, x_dims = None, {}
    if X is not None:  # None: fitted from statistics, no rows (bayesgen.estimators.streaming)
        coords["obs"] = np.arange(X.shape[0])
        x_vars, x_dims = observed_x(X)  # sparse X: densified only when small
        per_class, class_dims, class_coords = class_layout.observed(X, y, coords["class"])
        observed = {"y": y.astype(np.int64), **x_vars, **per_class}
        dims = {**dims, "y": ["obs"], LOG_LIK_VAR: ["obs"], **class_dims}
        coords.update(class_coords)
    dims = {**dims, **x_dims}
    attrs = {k: v for k, v in (attrs or {}).items() if k not in ("created_at", "arviz_version")}
    groups = {"posterior": _dataset(posterior, coords, dims)}
    if sample_stats is not None:
        groups["sample_stats"] = _dataset(sample_stats, coords, dims)
    if log_lik is not None:
        groups["log_likelihood"] = _dataset({LOG_LIK_VAR: reshape_draws(log_lik, chains, draws)},
                                            coords, dims, skip_event_dims=True)
    if observed is not None:
        groups["observed_data"] = _dataset(observed, coords, dims, default_dims=(),
                                           attrs=attrs)
    return az.InferenceData(attrs=attrs, **groups)


def _dataset(data: dict, coords: dict, dims: dict, *, default_dims: tuple = ("chain", "draw"),
             attrs: dict | None = None, skip_event_dims: bool = False) -> xr.Dataset:
    """One group of ``idata_``: the :class:`xarray.Dataset` that ArviZ's
    ``dict_to_dataset`` builds from ``data`` (name -> array with the leading
    ``default_dims``), with the same dims (a dimension without a name in ``dims``:
    ``<name>_dim_<i>``), coordinates (``coords``, else 0, 1, ...) and attributes
    (``created_at``, ``arviz_version``, then ``attrs``), built as one Dataset instead of one
    DataArray per variable merged (ArviZ's way, ~10x slower; tests/test_idata_groups.py
    checks that both give identical groups)."""
    import datetime

    import xarray as xr

    az = import_arviz()
    origin = az.rcParams["data.index_origin"]
    variables, index = {}, {}
    for name, value in data.items():
        value = np.asarray(value)
        if default_dims:
            value = value.reshape((1,) * max(0, 2 - value.ndim) + value.shape)
            if value.shape[0] > value.shape[1]:
                warn(f"More chains ({value.shape[0]}) than draws ({value.shape[1]}). "
                     "Passed array should have shape (chains, draws, *shape)", UserWarning)
        elif value.ndim == 0:
            value = value.reshape(1)
        shape = value.shape[len(default_dims):]
        var_dims = list(dims.get(name) or [])
        if len([d for d in var_dims if d not in default_dims]) > len(shape):
            if skip_event_dims:
                var_dims = var_dims[:len(shape)]
            else:
                warn(f"In variable {name}, there are more dims ({len(var_dims)}) given "
                     f"than exist ({len(shape)}). Passed array should have shape "
                     f"({', '.join(default_dims) + ', ' if default_dims else ''}*shape)",
                     UserWarning)
        if skip_event_dims:
            for i, (dim, size) in enumerate(zip(var_dims, shape, strict=False)):
                if dim in coords and size != len(coords[dim]):
                    var_dims = var_dims[:i]
                    break
        own = {}
        for i, size in enumerate(shape):
            at = i + len([d for d in default_dims if d in var_dims])
            if len(var_dims) < at + 1:
                var_dims.append(f"{name}_dim_{i}")
            elif var_dims[at] is None:
                var_dims[at] = f"{name}_dim_{i}"
            if var_dims[at] not in coords:
                own[var_dims[at]] = np.arange(origin, size + origin)
        for dim, size in zip(reversed(default_dims), reversed(value.shape[:len(default_dims)]),
                             strict=True):
            if dim not in var_dims:
                var_dims.insert(0, dim)
            if dim not in coords:
                own[dim] = np.arange(origin, size + origin)
        for dim in var_dims:
            if dim not in index:
                index[dim] = np.asarray(own[dim] if dim in own else coords[dim])
        variables[name] = (var_dims, value)
    made = {"created_at": datetime.datetime.now(datetime.UTC).isoformat(),
            "arviz_version": az.__version__, **(attrs or {})}
    return xr.Dataset(variables, coords={dim: (dim, values) for dim, values in index.items()},
                      attrs=made)


def posterior_mean(params: dict, random: dict) -> dict:
    """Posterior means of the random parameters (keys of ``random``, i.e. the family's
    ``param_dims``, which carry the leading draw dim); fixed entries pass through."""
    return {k: (np.mean(v, axis=0) if k in random else v) for k, v in params.items()}


def as_dataarray(values: np.ndarray, chains: int, draws: int, classes: np.ndarray,
                 name: str = "p") -> xr.DataArray:
    """(S, n, K) -> DataArray with dims (chain, draw, obs, class)."""
    import xarray as xr

    return xr.DataArray(
        reshape_draws(values, chains, draws),
        dims=("chain", "draw", "obs", "class"),
        coords={
            "chain": np.arange(chains),
            "draw": np.arange(draws),
            "obs": np.arange(values.shape[1]),
            "class": [c.item() if isinstance(c, np.generic) else c for c in classes],
        },
        name=name,
    )


def check_posterior(estimator, what: str) -> None:
    """``NotFittedError`` before ``fit``; ``ValueError`` naming ``what`` when the fit
    (``method_``) has no posterior (a point method)."""
    if not estimator.fitted_.is_posterior:
        raise ValueError(
            f"{what} needs a posterior: fit with method='conjugate' or 'mcmc' "
            f"(this model was fitted with method={estimator.method_!r})."
        )
