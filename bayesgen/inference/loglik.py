"""The pointwise log-likelihood group of ``idata_``: at fit within a bound, else on request.

log p(x_n, y_n | theta_s) for every draw and training row is the only part of a
posterior fit whose cost grows with draws x rows, so, as PyMC's
``pm.compute_log_likelihood``, it is computed at fit only up to :data:`AT_FIT_MAX_VALUES`
(chains x draws x rows, 4,000,000); above, fit warns (``DataWarning``) and
``add_log_likelihood()`` adds it from the kept rows in blocks (``bg.compare`` does it
itself); above :data:`bayesgen.inference.posterior.LOG_LIK_MAX_VALUES` it cannot be
stored. The group holds every posterior draw, so ``az.loo_pit`` can pair it with
``posterior_predictive``.
"""

from __future__ import annotations

import numpy as np

from bayesgen.exceptions import DataWarning, warn
from bayesgen.inference import posterior, scoring

#: largest draws x rows for which the log_likelihood group is computed at fit
AT_FIT_MAX_VALUES = 4_000_000


def _too_large(fit, n: int) -> str | None:
    """What the table of n rows would hold, when above ``LOG_LIK_MAX_VALUES``; else None."""
    chains, draws = fit.posterior_size
    if chains * draws * n <= posterior.LOG_LIK_MAX_VALUES:
        return None
    return (f"{fit.who}: the pointwise log-likelihood would hold {chains} x "
            f"{draws} x {n} values ({chains * draws * n * 8 / 1e9:.1f} GB)")


def at_fit(fit, X, y: np.ndarray) -> np.ndarray | None:
    """The (S, n) table of the training rows ``X``, ``y`` (class index) to store at fit,
    or None (above :data:`AT_FIT_MAX_VALUES`, with a warning naming
    ``add_log_likelihood()``; above ``LOG_LIK_MAX_VALUES``, with one saying it cannot be
    stored). The rows themselves are kept either way (:mod:`bayesgen.inference.rows`)."""
    n = X.shape[0]
    chains, draws = fit.posterior_size
    too_large = _too_large(fit, n)
    if too_large:
        warn(
            f"{too_large}, so idata_ has no log_likelihood group "
            "(az.loo and bg.compare need it). Refit with fewer draws or chains, or on a "
            "subsample, to get it.",
            DataWarning,
        )
        return None
    if chains * draws * n > AT_FIT_MAX_VALUES:
        warn(
            f"{fit.who}: idata_ has no log_likelihood group yet: it would "
            f"hold {chains} x {draws} x {n} values ({chains * draws * n * 8 / 1e6:.0f} MB), "
            f"above the {AT_FIT_MAX_VALUES:,} computed at fit "
            "(bayesgen.inference.loglik.AT_FIT_MAX_VALUES). Call add_log_likelihood() "
            "to add it from the kept training rows (az.loo, az.loo_pit and az.compare "
            "need it; bg.compare adds it itself).",
            DataWarning,
        )
        return None
    return scoring.pointwise_log_lik(fit, X, y)


def add(estimator, fit, X=None, y=None, sample_weight=None):
    """Add the ``log_likelihood`` group to ``estimator.idata_`` if missing; returns it.

    The training rows come from ``X``, ``y`` (``sample_weight``) or those kept in ``idata_``
    (:func:`bayesgen.inference.rows.training_rows`).
    """
    import xarray as xr

    from bayesgen.inference import rows as training

    idata = estimator.idata_
    present = "log_likelihood" in idata.groups()
    if present and X is None and y is None:
        return idata
    data = training.training_rows(estimator, X, y, sample_weight,
                                  what="the pointwise log-likelihood",
                                  how="add_log_likelihood(X, y)")
    if present:  # rows given are still the training rows
        return idata
    n = data.y.shape[0]
    too_large = _too_large(fit, n)
    if too_large:
        raise ValueError(f"{too_large}: too large for the log-likelihood group. "
                         "Refit with fewer draws or chains, or on a subsample.")
    chains, draws = fit.posterior_size
    values = scoring.pointwise_log_lik(fit, data.X, data.y).reshape(chains, draws, n)
    posterior_ds = idata.posterior
    group = xr.Dataset(
        {posterior.LOG_LIK_VAR: (("chain", "draw", "obs"), values)},
        coords={"chain": posterior_ds["chain"].values, "draw": posterior_ds["draw"].values,
                "obs": np.arange(n)},
        attrs=dict(posterior_ds.attrs),
    )
    idata.add_groups(log_likelihood=group)
    return idata
