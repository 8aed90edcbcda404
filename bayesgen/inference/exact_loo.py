"""Exact leave-one-out predictive densities of the conjugate posteriors.

For ``method="conjugate"``, with no refit and no importance sampling::

    log p(x_n, y_n | D without row n)
        = log p(y_n | y without n) + log p(x_n | y_n, D without row n)

The feature term removes row n (with its whole weight w_n) from its class's conjugate
posterior, the family's ``loo_log_predictive`` hook (each family's docstring gives its
downdate); the label term is ``(N_k - w + a_k) / (N - w + A)`` (fixed ``class_prior``:
pi_k). Every class of a row (:func:`loo_log_joint`) and other rows under the posterior
without each training row (:func:`loo_log_joint_at`, for jackknife+) use the
``loo_log_predictive_at`` hook. A prior that reads the data is re-resolved without the
row (:mod:`bayesgen.inference.loo_refit`), so this equals a refit without the row
(``tests/test_loo_refit.py``). :func:`elpd` returns an ArviZ ``ELPDData`` that
``az.compare`` accepts. Not available (``supports`` is False; callers fall back to
PSIS-LOO): other methods, families without ``capabilities.exact_loo`` and fits whose
statistics need data augmentation (LDA/QDA or MultinomialNB with missing entries). The
training rows are those kept in ``idata_`` or given (:mod:`bayesgen.inference.rows`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bayesgen.inference import classprior, conjugate, loo_refit, scoring
from bayesgen.utils.heavy import import_arviz


def supports(estimator) -> bool:
    """Whether :func:`pointwise` is exact for this fitted estimator (it also needs the
    training rows: kept in ``idata_`` or given, see :mod:`bayesgen.inference.rows`)."""
    if getattr(estimator, "method_", None) != "conjugate" or getattr(estimator, "n_unlabeled_", 0):
        return False  # semi-supervised: no closed form
    return conjugate.exact_given_row(estimator.fitted_, "exact_loo")


def training_rows(estimator, X: Any = None, y: Any = None, sample_weight: Any = None):
    """The training rows of the exact LOO (:func:`bayesgen.inference.rows.training_rows`):
    ``X``, ``y`` and ``sample_weight`` when given, else those kept in ``idata_``."""
    from bayesgen.inference import rows

    return rows.training_rows(estimator, X, y, sample_weight,
                              what="the exact leave-one-out predictive",
                              how="bg.compare(models, X=X, y=y, sample_weight=w)")


def pointwise(estimator, X: Any = None, y: Any = None, sample_weight: Any = None) -> np.ndarray:
    """log p(x_n, y_n | D without row n) of every training row, (n,), user units.

    The training rows are ``X``, ``y`` (and ``sample_weight``) when given, else those
    kept in ``idata_`` (:func:`training_rows`). Raises ``ValueError`` when the
    estimator has no exact LOO (see :func:`supports`) or the rows are not at hand.
    """
    _check_supported(estimator)
    return _pointwise(estimator.fitted_, training_rows(estimator, X, y, sample_weight))


def _check_supported(estimator) -> None:
    if not supports(estimator):
        raise ValueError(
            f"{type(estimator).__name__} (method_={getattr(estimator, 'method_', None)!r}) "
            "has no exact leave-one-out predictive: it needs method='conjugate' and a "
            "family with a closed-form posterior (LDA/QDA/MultinomialNB without missing "
            "entries)."
        )


def _pointwise(fit, rows) -> np.ndarray:
    """:func:`pointwise` of the training rows ``rows`` (:class:`bayesgen.inference.rows.Rows`)
    for the fit ``fit`` (:class:`bayesgen.inference.fitted.Fit`)."""
    X, y, w = rows.X, rows.y, rows.weights
    Z = scoring.internal(fit, X)
    label = label_log_prior(fit, y, w)[np.arange(y.size), y]  # log p(y_n | the other labels)
    return label + _own_class(fit, Z, y, w) - scoring.per_row(scoring.jacobian(fit, Z))


def full_data_pointwise(estimator, X: Any = None, y: Any = None,
                        sample_weight: Any = None) -> np.ndarray:
    """log p(x_n, y_n | D) of every training row (the row included), (n,), user units:
    the exact log pointwise predictive density whose sum is the lppd (training rows as
    in :func:`pointwise`)."""
    return _full_data_pointwise(estimator.fitted_,
                                training_rows(estimator, X, y, sample_weight))


def _full_data_pointwise(fit, rows) -> np.ndarray:
    return scoring.raw_scores(fit, rows.X, full=True)[np.arange(rows.y.size), rows.y]


def loo_log_joint(estimator, X: Any = None, y: Any = None,
                  sample_weight: Any = None) -> tuple[np.ndarray, np.ndarray]:
    """log p(x_n, y=k | D without row n) of every training row and every class.

    The family's ``loo_log_predictive_at`` at the training rows themselves gives
    log p(x_n | y=k, D without row n) for every class k: for most families only the
    posterior of the row's own class y_n changes, but a parameter shared by the classes
    (LDA's covariance) changes for every k. The label term is
    log((N_k - w_n [k = y_n] + a_k) / (N - w_n + A)) (fixed ``class_prior``: log pi_k).
    The normalised rows are the exact leave-one-out predictive p(y=k | x_n, D without n).

    Returns
    -------
    log_joint : ndarray of shape (n, K)
        User units (the frame's Jacobian subtracted, as :func:`pointwise`).
    y : ndarray of shape (n,)
        Class index of every training row (training rows as in :func:`pointwise`).
    """
    _check_supported(estimator)
    rows = training_rows(estimator, X, y, sample_weight)
    return loo_log_joint_of(estimator.fitted_, rows), rows.y


def loo_log_joint_of(fit, rows, leave: np.ndarray | None = None) -> np.ndarray:
    """:func:`loo_log_joint` of the fit ``fit`` (:class:`bayesgen.inference.fitted.Fit`)
    at the training rows ``rows``, (n, K); row n leaves with ``leave[n]`` of its weight
    (None: all of it; the stack leaves one copy, min(w_n, 1))."""
    Z = scoring.internal(fit, rows.X)
    out = rows.weights if leave is None else np.asarray(leave, dtype=float)
    joint = _every_class(fit, Z, rows.y, rows.weights, out)
    joint += label_log_prior(fit, rows.y, out)
    jac = scoring.jacobian(fit, Z)
    return joint - jac


def loo_posteriors(estimator, rows):
    """The posteriors without each training row that :func:`loo_log_joint_at` scores
    test rows with, when the prior is re-resolved per row
    (:class:`bayesgen.inference.loo_refit.RowPosteriors`), else None (the family's
    closed-form downdates need nothing precomputed). Callers that score test rows in
    chunks compute it once and pass it to every :func:`loo_log_joint_at` call."""
    _check_supported(estimator)
    fit = estimator.fitted_
    if not loo_refit.applies(fit.family, rows.y.size):
        return None
    return loo_refit.posteriors(fit.family, scoring.internal(fit, rows.X),
                                rows.y, rows.weights, fit.classes.size)


def loo_log_joint_at(estimator, rows, X_test, posteriors=None) -> np.ndarray:
    """log p(x_j, y=k | D without training row i), (n, m, K), user units, for the validated
    test rows ``X_test`` (m, d) and the training ``rows`` (:func:`training_rows`).

    The family's ``loo_log_predictive_at`` plus the label term of :func:`loo_log_joint`,
    minus each test row's Jacobian (for jackknife+, :mod:`bayesgen.decide.conformal`;
    callers chunk the test rows). Test rows beyond the frame's float range get the
    full-data log p(x_j, y=k | D) for every i. ``posteriors``: :func:`loo_posteriors` of
    the same ``rows``, reused over chunks (computed when None).
    """
    _check_supported(estimator)
    fit = estimator.fitted_
    Z_test, far, near = scoring.split_rows(fit, X_test)
    n, K = rows.y.size, fit.classes.size
    if far is not None:
        out = np.empty((n, X_test.shape[0], K))
        out[:, far.rows] = scoring.raw_scores(fit, X_test[far.rows], full=True)
        if near.any():
            out[:, near] = loo_log_joint_at(estimator, rows, X_test[near], posteriors)
        return out
    if posteriors is None:
        posteriors = loo_posteriors(estimator, rows)
    if posteriors is not None:
        joint = posteriors.log_predictive(Z_test)
    else:
        joint = fit.family.loo_log_predictive_at(
            scoring.internal(fit, rows.X), rows.y, rows.weights, fit.posterior, Z_test)
    joint += label_log_prior(fit, rows.y, rows.weights)[:, None, :]
    return joint - scoring.jacobian(fit, Z_test)  # (m, 1) per test row, or a float


def elpd(estimator, scale: str = "log", X: Any = None, y: Any = None,
         sample_weight: Any = None):
    """ArviZ ``ELPDData`` of the exact LOO (``elpd_loo``, ``se``, ``p_loo``, ``loo_i``),
    as ``az.loo(..., pointwise=True)`` returns, without Pareto k (nothing is estimated).

    ``p_loo = lppd - elpd_loo`` with the exact lppd (:func:`full_data_pointwise`);
    ``se = sqrt(n Var(loo_i))`` as ArviZ computes it. The training rows are ``X``, ``y``
    (and ``sample_weight``) when given, else those kept in ``idata_``
    (:func:`training_rows`).
    """
    import xarray as xr

    ELPDData = import_arviz().ELPDData

    factor = {"log": 1.0, "negative_log": -1.0, "deviance": -2.0}.get(scale)
    if factor is None:
        raise ValueError(f"scale must be 'log', 'negative_log' or 'deviance'; got {scale!r}.")
    _check_supported(estimator)
    rows = training_rows(estimator, X, y, sample_weight)
    fit = estimator.fitted_
    loo_i = _pointwise(fit, rows)
    lppd = float(np.sum(_full_data_pointwise(fit, rows)))
    n = loo_i.size
    scaled = factor * loo_i
    chains, draws = fit.posterior_size
    return ELPDData(
        data=[float(scaled.sum()), float(np.sqrt(n * np.var(scaled))), lppd - float(loo_i.sum()),
              chains * draws, n, False,
              xr.DataArray(scaled, dims=("obs",), coords={"obs": np.arange(n)}, name="loo_i"),
              scale],
        index=["elpd_loo", "se", "p_loo", "n_samples", "n_data_points", "warning", "loo_i",
               "scale"],
    )


# ------------------------------------------------------------------ terms
def _own_class(fit, Z, y: np.ndarray, w: np.ndarray) -> np.ndarray:
    """log p(z_n | y_n, D without row n), (n,), internal frame."""
    if loo_refit.applies(fit.family, y.size):
        return _every_class(fit, Z, y, w, w)[np.arange(y.size), y]
    return fit.family.loo_log_predictive(Z, y, w, fit.posterior)


def _every_class(fit, Z, y: np.ndarray, w: np.ndarray, leave: np.ndarray) -> np.ndarray:
    """log p(z_i | y = k, D without training row i), (n, K), internal frame; row i
    leaves with ``leave[i]`` of its weight w_i."""
    if loo_refit.applies(fit.family, y.size):
        return loo_refit.log_predictive(fit.family, Z, y, w, fit.classes.size, leave=leave)
    return fit.family.loo_log_predictive_at(Z, y, leave, fit.posterior)


def label_log_prior(fit, y: np.ndarray, w: np.ndarray) -> np.ndarray:
    """log p(y = k | the labels without row n), (n, K): the Dirichlet posterior mean
    (N_k - w_n [k = y_n] + a_k) / (N - w_n + A), or the fixed ``class_prior``."""
    fixed = fit.fixed_pi
    if fixed is not None:
        return classprior.log_constant(fixed, y.size)
    conc = classprior.posterior(fit.class_count, fit.class_alpha)
    counts = np.broadcast_to(conc, (y.size, conc.size)).copy()
    counts[np.arange(y.size), y] -= w
    with np.errstate(divide="ignore"):
        return np.log(counts) - np.log(conc.sum() - w)[:, None]
