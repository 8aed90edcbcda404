"""The pointwise log-likelihood group of ``idata_``: at fit for small data, else on demand.

``az.loo`` and :func:`bayesgen.diagnostics.compare` need log p(x_n, y_n | theta_s) for every draw s
and training row n: chains x draws x n values, and as many evaluations of the family's
log-density. That is the only part of a posterior fit whose cost grows with draws x
rows (NUTS works on the sufficient statistics), so, as PyMC makes it opt-in:

- at fit it is computed when draws x rows <= :data:`AT_FIT_MAX_VALUES` (4,000,000
  values, 32 MB: e.g. 4,000 draws of 1,000 rows),
- otherwise ``estimator.add_log_likelihood(X, y)`` adds it from the training rows
  (``bg.compare(models, X=X, y=y)`` calls it for estimators without the group); rows
  are processed in blocks (``posterior``'s chunking), so memory beyond the group
  itself stays bounded,
- above :data:`bayesgen.inference.posterior.LOG_LIK_MAX_VALUES` (about 2 GB) it is refused: fit
  warns once that the group will not be available, ``add_log_likelihood`` raises.

The fit keeps its rows (``idata_.observed_data``) under the same bound, so a fit that
stores the group also has the rows its other checks need, and a larger one holds
neither (:mod:`bayesgen.inference.rows`). With its rows, it also stores the posterior
predictive of about 100 draws, again within this bound
(:func:`bayesgen.inference.predictive.at_fit`).
"""

from __future__ import annotations

import numpy as np

from bayesgen.exceptions import DataWarning, warn

#: largest draws x rows for which the log_likelihood group is computed at fit
AT_FIT_MAX_VALUES = 4_000_000


def _size(estimator, n: int) -> tuple[int, int, int]:
    chains, draws = estimator._posterior_size()
    return chains, draws, n


def _too_large_message(estimator, n: int) -> str:
    chains, draws, n = _size(estimator, n)
    return (
        f"{type(estimator).__name__}: the pointwise log-likelihood would hold {chains} x "
        f"{draws} x {n} values ({chains * draws * n * 8 / 1e9:.1f} GB)"
    )


def _too_large(estimator, n: int) -> bool:
    from bayesgen.inference import posterior

    chains, draws, n = _size(estimator, n)
    return chains * draws * n > posterior.LOG_LIK_MAX_VALUES


def at_fit(estimator, X, y: np.ndarray) -> np.ndarray | None:
    """The (S, n) table of the training rows ``X``, ``y`` (class index) to store at fit,
    or None (too large for fit time: on demand). The fit keeps its rows in
    ``idata_.observed_data`` exactly when this table is stored (see
    :mod:`bayesgen.inference.rows`)."""
    n = X.shape[0]
    chains, draws, n = _size(estimator, n)
    if _too_large(estimator, n):
        warn(
            f"{_too_large_message(estimator, n)}, so idata_ has no log_likelihood group "
            "(az.loo and bg.compare need it). Refit with fewer draws or chains, or on a "
            "subsample, to get it.",
            DataWarning,
        )
        return None
    if chains * draws * n > AT_FIT_MAX_VALUES:
        return None
    return compute(estimator, X, y)


def compute(estimator, X, y: np.ndarray) -> np.ndarray:
    """log p(x_n, y_n | theta_s) of the rows ``X`` with class index ``y``, shape (S, n)."""
    from bayesgen.inference import scoring

    return scoring.pointwise_log_lik(estimator, X, y)


def add(estimator, X=None, y=None, sample_weight=None):
    """Add the ``log_likelihood`` group to ``estimator.idata_`` if missing; returns it.

    The training rows come from ``X``, ``y`` (``sample_weight``) or those kept in ``idata_``
    (:func:`bayesgen.inference.rows.training_rows`).
    """
    import xarray as xr

    from bayesgen.inference import posterior
    from bayesgen.inference import rows as training

    estimator._check_posterior("add_log_likelihood")
    idata = estimator.idata_
    if "log_likelihood" in idata.groups():
        if X is not None or y is not None:  # rows given are still the training rows
            training.training_rows(estimator, X, y, sample_weight,
                                   what="the pointwise log-likelihood",
                                   how="add_log_likelihood(X, y)")
        return idata
    data = training.training_rows(estimator, X, y, sample_weight,
                                  what="the pointwise log-likelihood",
                                  how="add_log_likelihood(X, y)")
    n = data.y.shape[0]
    if _too_large(estimator, n):
        raise ValueError(
            f"{_too_large_message(estimator, n)}: too large for the log-likelihood group. "
            "Refit with fewer draws or chains, or on a subsample."
        )
    chains, draws, n = _size(estimator, n)
    values = compute(estimator, data.X, data.y).reshape(chains, draws, n)
    posterior_ds = idata.posterior
    group = xr.Dataset(
        {posterior.LOG_LIK_VAR: (("chain", "draw", "obs"), values)},
        coords={"chain": posterior_ds["chain"].values, "draw": posterior_ds["draw"].values,
                "obs": np.arange(n)},
        attrs=dict(posterior_ds.attrs),
    )
    idata.add_groups(log_likelihood=group)
    return idata
