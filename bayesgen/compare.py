"""Model comparison of fitted posterior estimators by PSIS-LOO (``az.compare``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

from bayesgen import streaming


def compare(models: dict[str, Any], ic: str = "loo", **kwargs: Any) -> pd.DataFrame:
    """Rank fitted estimators by expected log predictive density (``az.compare``).

    Parameters
    ----------
    models : dict
        ``{"name": fitted_estimator}``; each must have been fitted with a posterior
        method (``"conjugate"`` or ``"mcmc"``) on the same data, so that the pointwise
        joint log-likelihoods log p(x_n, y_n | theta) in their ``idata_`` line up. An
        ``idata_`` without the ``log_likelihood`` group (large data: see
        :mod:`bayesgen.loglik`) gets it from ``add_log_likelihood()`` first.
    ic : str
        Information criterion passed to ``az.compare`` (default ``"loo"``).
    **kwargs
        Forwarded to ``az.compare`` (e.g. ``method="stacking"``).

    Returns
    -------
    pandas.DataFrame
        The ``az.compare`` table (rank, elpd_loo, p_loo, elpd_diff, weight, se, ...).
    """
    import arviz as az

    if not isinstance(models, dict) or len(models) < 2:
        raise ValueError("compare needs a dict of at least two fitted estimators.")
    idatas = {}
    n_obs = set()
    for name, est in models.items():
        idata = getattr(est, "idata_", None)
        if idata is not None and "log_likelihood" not in idata.groups():
            streaming.require_rows(est, f"model {name!r} has no pointwise log-likelihood")
        if idata is None:
            raise ValueError(
                f"model {name!r} has no posterior log-likelihood: fit it with "
                "method='conjugate' or 'mcmc'."
            )
        try:
            idata = est.add_log_likelihood()  # no-op when fit stored the group
        except ValueError as err:
            raise ValueError(f"model {name!r} has no posterior log-likelihood: {err}") from err
        idatas[name] = idata
        n_obs.add(idata.log_likelihood["y"].sizes["obs"])
    if len(n_obs) > 1:
        raise ValueError(f"models were fitted on different numbers of rows: {sorted(n_obs)}.")
    return az.compare(idatas, ic=ic, **kwargs)
