"""Model comparison of fitted estimators: LOO (exact for conjugate posteriors, PSIS
otherwise, through ``az.compare``) or the exact evidence (log Bayes factors)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from bayesgen.utils.heavy import import_arviz

if TYPE_CHECKING:
    import pandas as pd

from bayesgen.inference import exact_loo


def compare(models: dict[str, Any], ic: str = "loo", *, X: Any = None, y: Any = None,
            sample_weight: Any = None, candidates: bool = False,
            **kwargs: Any) -> pd.DataFrame:
    """Rank fitted estimators by expected log predictive density, or by evidence.

    Parameters
    ----------
    models : dict
        ``{"name": fitted_estimator}``, at least two, fitted on the same data, so that
        the pointwise joint log-likelihoods log p(x_n, y_n | theta) line up.
    ic : {"loo", "waic", "evidence"}
        ``"loo"`` (default): the ``az.compare`` table of the leave-one-out expected log
        predictive density. For ``method="conjugate"`` estimators it is *exact*
        (:mod:`bayesgen.inference.exact_loo`: closed-form log p(x_n, y_n | D without row n), no
        importance sampling, no Pareto-k warning, ``p_loo`` = exact lppd - elpd_loo);
        for the others (``"mcmc"``; LDA/QDA fitted with missing entries, whose
        conjugate fit is data augmentation) it is PSIS-LOO (``az.loo``) of the
        ``log_likelihood`` group, added by ``add_log_likelihood()`` when missing. Both
        kinds mix in one table. ``"waic"``: ``az.compare(..., ic="waic")`` of the
        posterior draws. ``"evidence"``: :func:`compare_evidence`.
    X : array-like or DataFrame of shape (n, d), optional
    y : array-like of shape (n,), optional
    sample_weight : array-like of shape (n,), optional
        The training rows (the same for every model), for the models that did not keep
        them: the exact LOO of conjugate fits and the ``log_likelihood`` group of the
        others need them (a posterior fit by ``fit(X, y)`` keeps its rows, fits from
        statistics do not; a ``ValueError`` says when they are needed), and the
        evidence of count features.
    candidates : bool, default=False
        With ``ic="evidence"``: also a row for every prior each model's empirical-Bayes
        search scored (its ``prior_search_``: the candidate priors and covariance
        structures, see :func:`compare_evidence`); one model is then enough.
    **kwargs
        Forwarded to ``az.compare`` (e.g. ``method="stacking"``, ``scale``); not with
        ``ic="evidence"``.

    Returns
    -------
    pandas.DataFrame
        The ``az.compare`` table (rank, elpd_loo, p_loo, elpd_diff, weight, se, dse,
        warning, scale), or :func:`compare_evidence`'s.
    """
    az = import_arviz()

    ic = "loo" if ic is None else str(ic).lower()
    if ic not in ("loo", "waic", "evidence"):
        raise ValueError(f"ic must be 'loo', 'waic' or 'evidence'; got {ic!r}.")
    if candidates and ic != "evidence":
        raise ValueError("candidates=True needs ic='evidence' (the candidates' exact "
                         "evidences; they have no posterior draws for LOO).")
    least = 1 if candidates else 2
    if not isinstance(models, dict) or len(models) < least:
        raise ValueError("compare needs a dict of at least two fitted estimators"
                         + (" (or one, with candidates=True)." if not candidates else
                            ", or one with candidates=True."))
    if ic == "evidence":
        if kwargs:
            raise ValueError(f"ic='evidence' takes no further arguments; got {sorted(kwargs)}.")
        return compare_evidence(models, X=X, y=y, sample_weight=sample_weight,
                                candidates=candidates)
    scale = kwargs.get("scale") or "log"
    entries = {}
    n_obs = set()
    for name, est in models.items():
        if ic == "loo" and exact_loo.supports(est):
            try:
                entries[name] = exact_loo.elpd(est, scale=scale, X=X, y=y,
                                               sample_weight=sample_weight)
            except ValueError as err:
                raise ValueError(f"model {name!r}: {err}") from err
            n_obs.add(int(entries[name]["n_data_points"]))
            continue
        idata = getattr(est, "idata_", None)
        if idata is None or "posterior" not in idata.groups():
            raise ValueError(f"model {name!r} has no posterior log-likelihood: fit it with "
                             "method='conjugate' or 'mcmc'.")
        try:  # the log_likelihood group from the training rows (a no-op when present)
            idata = est.add_log_likelihood(X, y, sample_weight)
        except ValueError as err:
            raise ValueError(f"model {name!r} has no posterior log-likelihood: {err}") from err
        # its one variable, whatever its name (files saved before it was "xy" have "y")
        n_obs.add(next(iter(idata.log_likelihood.data_vars.values())).sizes["obs"])
        entries[name] = az.loo(idata, pointwise=True, scale=scale) if ic == "loo" else idata
    if len(n_obs) > 1:
        raise ValueError(f"models were fitted on different numbers of rows: {sorted(n_obs)}.")
    return az.compare(entries, ic=ic, **kwargs)


def compare_evidence(models: dict[str, Any], *, X: Any = None, y: Any = None,
                     sample_weight: Any = None, candidates: bool = False) -> pd.DataFrame:
    """Rank fitted estimators by their exact log marginal likelihood log p(X, y | M).

    ``X``, ``y``, ``sample_weight``: the training rows, needed only by models with
    count features that did not keep them (``log_marginal_likelihood(X, y)``).

    With ``candidates=True``, every prior that a model's empirical-Bayes search scored
    (``prior_search_``: LDA, QDA, GaussianNB) gets a row too, named
    ``"name [setting]"``, e.g. ``"LDA [cov_dof=auto]"`` or ``"QDA [structure=VVI]"``:
    log p(X, y | M_c) = log p(y | M) + log p(X | y, M_c), the class-label term being
    common to the candidates of one model (log p(y | M) = the model's
    ``log_marginal_likelihood()`` minus ``prior_search_["log_evidence"]``). The row of
    the fitted prior itself is the model's own row.

    Returns
    -------
    pandas.DataFrame
        One row per model, best first, columns ``rank``, ``log_evidence``
        (``log_marginal_likelihood()``), ``log_bayes_factor`` (log p(D | M) -
        log p(D | M_best), <= 0) and ``probability`` (posterior model probability under
        equal prior odds: softmax of the log evidences).

    Raises
    ------
    ValueError
        Naming the model without a closed-form evidence, or when the models were fitted
        on different data (numbers of features, classes or weighted class counts).
    """
    import pandas as pd
    from scipy.special import softmax

    values, shapes = {}, {}
    for name, est in models.items():
        try:
            values[name] = est.log_marginal_likelihood(X, y, sample_weight)
        except (ValueError, AttributeError) as err:
            raise ValueError(f"model {name!r} has no closed-form evidence: {err}") from err
        shapes[name] = (est.n_features_in_, tuple(np.asarray(est.class_count_).round(9)))
    if len(set(shapes.values())) > 1:
        raise ValueError(
            "evidences are comparable only on the same data; the models differ in their "
            f"number of features or (weighted) class counts: {shapes}."
        )
    if candidates:
        for name, est in models.items():
            values.update(_candidate_rows(name, est, values[name]))
    table = pd.DataFrame({"log_evidence": pd.Series(values, dtype=float)})
    table = table.sort_values("log_evidence", ascending=False)
    table["log_bayes_factor"] = table["log_evidence"] - table["log_evidence"].iloc[0]
    table["probability"] = softmax(table["log_evidence"].to_numpy())
    table.insert(0, "rank", np.arange(len(table)))
    return table


#: settings that name a candidate prior of ``prior_search_`` (in this order)
_SETTINGS = ("cov_dof", "cov_scale", "mean_strength", "var_dof", "var_scale")


def _candidate_rows(name: str, est: Any, log_evidence: float) -> dict[str, float]:
    """``{"name [setting]": log p(X, y | candidate)}`` for every candidate prior and
    covariance structure in ``est.prior_search_`` other than the fitted one (the
    candidates are named by their settings as given, e.g. ``cov_dof=15, cov_scale=1``
    or ``cov_dof=auto, cov_scale=auto``)."""
    search = getattr(est, "prior_search_", None)
    fitted = None if search is None else search.get("log_evidence")
    if fitted is None:  # no search, or one whose evidence is not exact (missing entries)
        return {}
    label_term = log_evidence - fitted  # log p(y | M): common to the candidates
    named = [(", ".join(f"{key}={_format(c[key])}" for key in _SETTINGS if key in c), c)
             for c in search.get("candidates", [])]
    named += [(f"structure={s['structure']}", s) for s in search.get("structures", [])]
    rows: dict[str, float] = {}
    for setting, entry in named:
        value = float(entry["log_evidence"])
        if not np.isclose(value, fitted, rtol=1e-12, atol=1e-9):  # else the fitted prior
            rows[f"{name} [{setting}]"] = label_term + value
    return rows


def _format(value: Any) -> str:
    """A setting as a user writes it: ``auto``, ``15``, ``0.01``."""
    return value if isinstance(value, str) else f"{float(value):.4g}"
