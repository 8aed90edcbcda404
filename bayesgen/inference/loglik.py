"""The pointwise log-likelihood group of ``idata_``: at fit for small data, else on demand.

``az.loo`` and :func:`bayesgen.diagnostics.compare` need log p(x_n, y_n | theta_s) for every draw s
and training row n: chains x draws x n values, and as many evaluations of the family's
log-density. That is the only part of a posterior fit whose cost grows with draws x
rows (NUTS works on the sufficient statistics), so, as PyMC makes it opt-in:

- at fit it is computed when draws x rows <= :data:`AT_FIT_MAX_VALUES` (4,000,000
  values, 32 MB: e.g. 4,000 draws of 1,000 rows),
- otherwise ``estimator.add_log_likelihood()`` adds it (``bg.compare`` calls it for
  estimators without the group); rows are processed in blocks (``posterior``'s chunking),
  so memory beyond the group itself stays bounded,
- above :data:`bayesgen.inference.posterior.LOG_LIK_MAX_VALUES` (about 2 GB) it is refused: fit
  warns once that the group will not be available, ``add_log_likelihood`` raises.
"""

from __future__ import annotations

import numpy as np

from bayesgen.exceptions import DataWarning, warn

#: largest draws x rows for which the log_likelihood group is computed at fit
AT_FIT_MAX_VALUES = 4_000_000


def _size(estimator) -> tuple[int, int, int]:
    chains, draws = estimator._posterior_size()
    return chains, draws, estimator._train[0].shape[0]


def _too_large_message(estimator) -> str:
    chains, draws, n = _size(estimator)
    return (
        f"{type(estimator).__name__}: the pointwise log-likelihood would hold {chains} x "
        f"{draws} x {n} values ({chains * draws * n * 8 / 1e9:.1f} GB)"
    )


def _too_large(estimator) -> bool:
    from bayesgen.inference import posterior

    chains, draws, n = _size(estimator)
    return chains * draws * n > posterior.LOG_LIK_MAX_VALUES


def at_fit(estimator) -> np.ndarray | None:
    """The (S, n) table to store at fit, or None (too large for fit time: on demand)."""
    chains, draws, n = _size(estimator)
    if _too_large(estimator):
        warn(
            f"{_too_large_message(estimator)}, so idata_ has no log_likelihood group "
            "(az.loo and bg.compare need it). Refit with fewer draws or chains, or on a "
            "subsample, to get it.",
            DataWarning,
        )
        return None
    if chains * draws * n > AT_FIT_MAX_VALUES:
        return None
    return compute(estimator)


def compute(estimator) -> np.ndarray:
    """log p(x_n, y_n | theta_s) of the training rows, shape (S, n)."""
    from bayesgen.inference import scoring

    X, y = estimator._train
    return scoring.pointwise_log_lik(estimator, X, y)


def add(estimator):
    """Add the ``log_likelihood`` group to ``estimator.idata_`` if missing; returns it."""
    import xarray as xr

    estimator._check_posterior("add_log_likelihood")
    idata = estimator.idata_
    if "log_likelihood" in idata.groups():
        return idata
    if _too_large(estimator):
        raise ValueError(
            f"{_too_large_message(estimator)}: too large for the log-likelihood group. "
            "Refit with fewer draws or chains, or on a subsample."
        )
    chains, draws, n = _size(estimator)
    values = compute(estimator).reshape(chains, draws, n)
    posterior_ds = idata.posterior
    group = xr.Dataset(
        {"y": (("chain", "draw", "obs"), values)},
        coords={"chain": posterior_ds["chain"].values, "draw": posterior_ds["draw"].values,
                "obs": np.arange(n)},
        attrs=dict(posterior_ds.attrs),
    )
    idata.add_groups(log_likelihood=group)
    return idata
