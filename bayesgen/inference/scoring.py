"""The estimator's side of the affine frame (:mod:`bayesgen.data.frame`).

At fit, :func:`fit_frame` chooses the frame of the real-valued columns and returns the
internal coordinates z = (x - c) / s: the family then computes its statistics, prior,
estimates and posterior (conjugate or NUTS) in z, and ``_stats``, ``_prior``,
``_params`` and ``_posterior`` are internal. Everything the user sees is converted
here: fitted attributes and ``idata_``'s posterior (:func:`user_params`), joint
log-densities (minus the Jacobian sum_j log s_j), samples (:func:`to_user_rows`) and
``model_``'s prior (:func:`user_prior`).

Rows far from the training data (some |z_j| > 2^52) are scored in the split form of
:func:`bayesgen.data.frame.split` by the family's ``far_terms`` / ``far_log_predictive``,
so a row at 1e300 gets the class the model implies instead of an overflow.

Estimators whose family does not declare ``capabilities.real_valued`` (the discrete
ones; :mod:`bayesgen.families.protocol`) have ``_frame = None`` and go through
unchanged.
"""

from __future__ import annotations

from contextlib import nullcontext

import numpy as np

from bayesgen.data import missing
from bayesgen.data.frame import Frame, check_finite_user, choose, far_scores, split, within
from bayesgen.inference import posterior
from bayesgen.utils.logspace import fast_logsumexp, log_mean_exp
from bayesgen.utils.threads import jobs, no_spin

#: |z| of a training value beyond which the statistics would overflow (squares ~1e240)
_FIT_LIMIT = 2.0**400
#: rows the frame of a fit is chosen from, at most (evenly spaced; see fit_frame)
FRAME_ROWS = 2**15


def _frame_of(estimator) -> Frame | None:
    return getattr(estimator, "_frame", None)


def fit_frame(estimator, family, X: np.ndarray, w: np.ndarray,
              sample: int | None = None) -> np.ndarray:
    """Choose the frame of X (sets ``estimator._frame`` and ``family.frame``) and return
    the internal coordinates Z; ValueError naming the columns whose values are too far
    apart for float64 statistics.

    ``sample``: choose the frame from at most about that many evenly spaced rows
    (default :data:`FRAME_ROWS`; ``partial_fit`` batches and Dask chunks pass theirs).
    The quantiles of every row would cost more than the statistics, and any frame near
    the data keeps full precision: the frame is a power-of-two scale and a location
    rounded to a multiple of it, the statistics are exact in it, and results differ
    from those in another frame near the data by rounding only. Fits of up to
    ``sample`` rows use every row.
    """
    real = family.real_columns(X.shape[1]) if family.capabilities.real_valued else None
    if real is None or not np.any(real):
        estimator._frame = None
        return X
    step = max(1, -(-X.shape[0] // (FRAME_ROWS if sample is None else sample)))
    frame = choose(X[::step], real, w[::step])
    Z = frame.internal(X)
    bad = np.zeros(0, dtype=int)
    if within(Z) > _FIT_LIMIT:
        with np.errstate(invalid="ignore"):
            bad = np.flatnonzero((np.abs(Z) > _FIT_LIMIT).any(axis=0) & real)
    if bad.size:
        raise ValueError(
            f"{type(estimator).__name__}: feature(s) {bad.tolist()} have training values "
            "more than 1e120 robust spreads (interquartile ranges) apart, so their squared "
            "deviations overflow float64. Remove the outlying rows or transform the "
            "feature (e.g. log or rank)."
        )
    estimator._frame = frame
    family.frame = frame
    return Z


def internal(estimator, X: np.ndarray) -> np.ndarray:
    """X (validated, user units) in the internal coordinates of the fit."""
    frame = _frame_of(estimator)
    return X if frame is None else frame.internal(X)


def _jacobian(estimator, Z: np.ndarray | None = None):
    """sum_j log s_j (a float), or with missing entries in Z its sum over the observed
    j of each row, (n, 1) (a missing feature is integrated out: no Jacobian)."""
    frame = _frame_of(estimator)
    if frame is None:
        return 0.0
    if not np.any(frame.scale != 1.0):  # every log s_j is 0: no pass over Z for NaN
        return 0.0
    M = None if Z is None else missing.mask(Z)
    if M is None:
        return frame.log_jacobian
    return (missing.observed_indicator(M, Z.shape) @ np.log(frame.scale))[:, None]


def _rows(jac, rows):
    """The Jacobian of some rows (a float applies to all)."""
    return jac if np.ndim(jac) == 0 else jac[rows]


def user_params(estimator, params: dict) -> dict:
    """Family parameters (any leading draw dims) in the units of X."""
    family = estimator._family
    if _frame_of(estimator) is None or not family.capabilities.real_valued:
        return params
    return family.to_user(params)


def check_user_attributes(estimator, attributes: dict) -> None:
    """Warn when a fitted attribute overflows float64 in the units of X (the internal
    parameters, which predictions use, are fine)."""
    if _frame_of(estimator) is not None:
        check_finite_user(attributes, type(estimator).__name__)


def user_prior(estimator) -> dict:
    """The resolved prior ``_prior`` in the units of X (the prior of ``model_``)."""
    family = estimator._family
    if _frame_of(estimator) is None or not family.capabilities.real_valued:
        return estimator._prior
    return family.prior_to_user(estimator._prior)


def to_user_rows(estimator, Z: np.ndarray) -> np.ndarray:
    """Rows drawn in the internal frame, in the units of X."""
    frame = _frame_of(estimator)
    return Z if frame is None else frame.user(Z)


def point_params(estimator) -> dict:
    """Internal point parameters: ``_params`` or, for posterior methods, its mean."""
    if estimator._is_posterior:
        return posterior.posterior_mean(estimator._params, estimator._family.param_dims)
    return estimator._params


# ---------------------------------------------------------------- scoring
def _split_rows(estimator, X: np.ndarray):
    """Internal Z, the far rows (or None) and the boolean mask of the other rows."""
    Z = internal(estimator, X)
    far, frame = None, _frame_of(estimator)
    if estimator._family.capabilities.far_rows and frame is not None and frame.real.any():
        far = split(frame, X, Z)
    near = np.ones(X.shape[0], dtype=bool)
    if far is not None:
        near[far.rows] = False
    return Z, far, near


def raw_scores(estimator, X: np.ndarray, full: bool) -> np.ndarray:
    """log p(x, y=k) (full) or discriminant scores, (n, K), for validated X.

    Point methods: plug-in ``log pi_k + log p(x | theta_k)``. Posterior methods: the
    posterior predictive joint log p(x, y=k | data) (full either way, except for far
    rows): ``method="conjugate"`` in closed form (Student-t, Beta-Bernoulli,
    Dirichlet-multinomial, negative binomial), exact and, unlike the log-mean-exp over
    draws, not biased low where one draw dominates (many features); ``"mcmc"`` as
    log mean_s p(x, y=k | theta_s). Joint densities subtract the Jacobian so that they
    are densities of x.
    """
    point = not estimator._is_posterior  # one BLAS thread (bayesgen.utils.threads.no_spin)
    # the estimator's n_jobs threads; X and Z are scanned once (missing.scan_scope)
    with jobs(getattr(estimator, "n_jobs", None)), missing.scan_scope(), \
            (no_spin() if point else nullcontext()):
        return _raw_scores(estimator, X, full)


def _raw_scores(estimator, X: np.ndarray, full: bool) -> np.ndarray:
    Z, far, near = _split_rows(estimator, X)
    family, jac = estimator._family, _jacobian(estimator, Z)
    if near.all():
        return _near_scores(estimator, Z, full, jac)
    out = np.empty((X.shape[0], estimator.classes_.size))
    if near.any():
        out[near] = _near_scores(estimator, Z[near], full, _rows(jac, near))
    if far is None:
        return out
    jac = _rows(jac, far.rows)
    if estimator.method_ == "conjugate":
        far_joint = posterior.closed_form(estimator, lambda p: family.far_log_predictive(far, p))
        out[far.rows] = far_joint - jac
        return out
    a2, a1, a0 = family.far_terms(far, estimator._params)
    if estimator._is_posterior:
        a0 = a0 + estimator._log_pi_draws[:, None, :]
        values = far_scores(far.log_t, a2, a1, a0, relative=not full, axes=(0, -1))
        out[far.rows] = log_mean_exp(values, axis=0) - jac
    else:
        with np.errstate(divide="ignore"):
            a0 = a0 + estimator.class_log_prior_
        values = far_scores(far.log_t, a2, a1, a0, relative=not full)
        out[far.rows] = values - jac if full else values
    return out


def _near_scores(estimator, Z: np.ndarray, full: bool, jac: float) -> np.ndarray:
    if estimator.method_ == "conjugate":
        return posterior.closed_form_log_joint(estimator, Z) - jac
    if estimator._is_posterior:
        return posterior.predictive_log_joint(
            estimator._family, Z, estimator._params, estimator._log_pi_draws) - jac
    with np.errstate(divide="ignore"):
        scores = estimator._family.log_lik(Z, estimator._params, full=full)
        scores += estimator.class_log_prior_
    return scores - jac if full else scores


def user_discriminant(estimator, X: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """Discriminant scores of :func:`raw_scores` (``full=False``) as the documented
    formulas in the units of X: QDA, naive Bayes and kernel scores drop the Jacobian
    sum_j log s_j; a family with ``capabilities.linear_discriminant`` (LDA) converts its
    linear discriminant itself (``user_discriminant``). Posterior scores are joint
    log-densities already."""
    if _frame_of(estimator) is None or estimator._is_posterior:
        return scores
    family, Z = estimator._family, internal(estimator, X)
    if family.capabilities.linear_discriminant:
        return family.user_discriminant(scores, Z, estimator._params)
    return scores - _jacobian(estimator, Z)


def proba_draws(estimator, X: np.ndarray) -> np.ndarray:
    """p(y=k | x, theta_s) for every posterior draw, (S, n, K), for validated X."""
    Z, far, near = _split_rows(estimator, X)
    family, params, log_pi = estimator._family, estimator._params, estimator._log_pi_draws
    out = np.empty((log_pi.shape[0], X.shape[0], log_pi.shape[1]))
    if near.any():
        out[:, near] = posterior.proba_draws(family, Z[near], params, log_pi)
    if far is not None:
        a2, a1, a0 = family.far_terms(far, params)
        values = far_scores(far.log_t, a2, a1, a0 + log_pi[:, None, :], relative=True)
        out[:, far.rows] = np.exp(values - fast_logsumexp(values, axis=-1, keepdims=True))
    return out


def pointwise_log_lik(estimator, X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """log p(x_n, y_n | theta_s) of the training rows in user units, (S, n)."""
    Z = internal(estimator, X)
    values = posterior.pointwise_log_lik(
        estimator._family, Z, y, estimator._params, estimator._log_pi_draws)
    jac = _jacobian(estimator, Z)
    return values - (jac if np.ndim(jac) == 0 else jac[:, 0])


def iter_log_joint_draws(estimator, X: np.ndarray, draws: np.ndarray | None = None):
    """Yield ``(rows, log p(x, y=k | theta_s))`` chunk by chunk for validated X, each
    value of shape (S, m, K) (``rows`` a slice or an index array of the m rows).

    Per-draw joint log-densities up to a per-row constant (the frame's Jacobian, equal
    for every draw and class), so that ratios across draws and classes of one row are
    exact: what :mod:`bayesgen.decide.uncertainty` weighs the draws with. Memory is one
    chunk of about :data:`bayesgen.inference.posterior.CHUNK_BUDGET` values at a time.
    Rows far from the training data (:func:`bayesgen.data.frame.split`) come last, in
    one chunk of their own. ``draws``: indices of the draws to use (default all).
    """
    Z, far, near = _split_rows(estimator, X)
    family, params, log_pi = estimator._family, estimator._params, estimator._log_pi_draws
    if draws is not None:
        params = {k: (v[draws] if k in family.param_dims else v) for k, v in params.items()}
        log_pi = log_pi[draws]
    index = np.flatnonzero(near)
    if index.size == X.shape[0]:
        yield from posterior.iter_log_joint(family, Z, params, log_pi)
    elif index.size:
        for rows, lj in posterior.iter_log_joint(family, Z[index], params, log_pi):
            yield index[rows], lj
    if far is not None:
        a2, a1, a0 = family.far_terms(far, params)
        yield far.rows, far_scores(far.log_t, a2, a1, a0 + log_pi[:, None, :], relative=True,
                                   axes=(0, -1))
