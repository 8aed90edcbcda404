"""The fit's side of the affine frame (:mod:`bayesgen.data.frame`).

:func:`fit_frame` chooses the frame at fit and returns z = (x - c) / s, in which the
family computes everything, so a :class:`bayesgen.inference.fitted.Fit` is internal.
What the user sees is converted here: fitted attributes and ``idata_``'s posterior
(:func:`user_params`), joint log-densities (minus sum_j log s_j), samples
(:func:`to_user_rows`) and ``model_``'s prior (:func:`user_prior`). Far rows go
through the family's ``far_terms`` / ``far_log_predictive``. Families without
``capabilities.real_valued`` have ``frame = None``.
"""

from __future__ import annotations

from contextlib import nullcontext
from typing import Any

import numpy as np

from bayesgen.data import missing, sparse
from bayesgen.data.frame import Frame, check_finite_user, choose, far_scores, split, within
from bayesgen.data.validation import check_finite
from bayesgen.inference import posterior
from bayesgen.inference.fitted import as_fit
from bayesgen.utils.logspace import fast_logsumexp, log_mean_exp
from bayesgen.utils.threads import jobs, no_spin

#: |z| of a training value beyond which the statistics would overflow (squares ~1e240)
_FIT_LIMIT = 2.0**400
#: rows the frame of a fit is chosen from, at most (evenly spaced; see fit_frame)
FRAME_ROWS = 2**15


def fit_frame(family, X: np.ndarray, w: np.ndarray, sample: int | None = None,
              who: str = "the estimator") -> tuple[np.ndarray, Frame | None]:
    """Choose the frame of X and return ``(Z, frame)`` (frame None for a family without
    real-valued columns, then Z is X); ``ValueError`` naming the columns whose values are
    too far apart for float64 statistics. ``sample``: choose the frame from about that many
    evenly spaced rows (default :data:`FRAME_ROWS`): any frame near the data keeps full
    precision, so results differ from another such frame by rounding only.
    """
    real = family.real_columns(X.shape[1]) if family.capabilities.real_valued else None
    if real is None or not np.any(real):
        return X, None
    step = max(1, -(-X.shape[0] // (FRAME_ROWS if sample is None else sample)))
    frame = choose(X[::step], real, w[::step])
    Z = frame.internal(X)
    bad = np.zeros(0, dtype=int)
    if within(Z) > _FIT_LIMIT:
        with np.errstate(invalid="ignore"):
            bad = np.flatnonzero((np.abs(Z) > _FIT_LIMIT).any(axis=0) & real)
    if bad.size:
        raise ValueError(
            f"{who}: feature(s) {bad.tolist()} have training values "
            "more than 1e120 robust spreads (interquartile ranges) apart, so their squared "
            "deviations overflow float64. Remove the outlying rows or transform the "
            "feature (e.g. log or rank)."
        )
    return Z, frame


def frame_of(family) -> Frame | None:
    """The frame a fit's ``family`` was configured with (None: no real-valued columns)."""
    return getattr(family, "frame", None) if family.capabilities.real_valued else None


def to_internal(frame: Frame | None, X: np.ndarray) -> np.ndarray:
    """X (validated, user units) in the internal coordinates of ``frame`` (None: X)."""
    return X if frame is None else frame.internal(X)


def internal(fit, X: np.ndarray) -> np.ndarray:
    """X (validated, user units) in the internal coordinates of the fit (a
    :class:`bayesgen.inference.fitted.Fit` or a fitted estimator)."""
    return to_internal(as_fit(fit).frame, X)


def jacobian(fit, Z: np.ndarray | None = None):
    """sum_j log s_j (a float), or with missing entries in Z its sum over the observed
    j of each row, (n, 1) (a missing feature is integrated out: no Jacobian)."""
    frame = fit.frame
    if frame is None or not np.any(frame.scale != 1.0):  # every log s_j is 0: no NaN pass
        return 0.0
    M = None if Z is None else missing.mask(Z)
    if M is None:
        return frame.log_jacobian
    return (missing.observed_indicator(M, Z.shape) @ np.log(frame.scale))[:, None]


def _rows(jac, rows):
    """The Jacobian of some rows (a float applies to all)."""
    return jac if np.ndim(jac) == 0 else jac[rows]


def per_row(jac):
    """:func:`jacobian` as a value per row, (n,), or the float that applies to all."""
    return jac if np.ndim(jac) == 0 else jac[:, 0]


def user_params(fit, params: dict) -> dict:
    """Family parameters (any leading draw dims) in the units of X."""
    return fit.family.to_user(params) if _framed(fit) else params


def _framed(fit) -> bool:
    """Whether the fit's internal coordinates differ from the units of X."""
    return fit.frame is not None and fit.family.capabilities.real_valued


def check_user_attributes(fit, attributes: dict) -> None:
    """Warn when a fitted attribute overflows float64 in the units of X (the internal
    parameters, which predictions use, are fine)."""
    if fit.frame is not None:
        check_finite_user(attributes, fit.who)


def user_prior(fit) -> dict:
    """The resolved prior in the units of X (the prior of ``model_``); ``fit``: a
    :class:`bayesgen.inference.fitted.Fit` or a fitted estimator."""
    fit = as_fit(fit)
    return fit.family.prior_to_user(fit.prior) if _framed(fit) else fit.prior


def to_user_rows(fit, Z: np.ndarray) -> np.ndarray:
    """Rows drawn in the internal frame, in the units of X."""
    return Z if fit.frame is None else fit.frame.user(Z)


def point_params(fit) -> dict:
    """Internal point parameters: ``_params`` or, for posterior methods, its mean."""
    if fit.is_posterior:
        return posterior.posterior_mean(fit.params, fit.family.param_dims)
    return fit.params


# ---------------------------------------------------------------- scoring
def split_rows(fit, X: np.ndarray):
    """Internal Z, the far rows (or None) and the boolean mask of the other rows."""
    Z = internal(fit, X)
    far, frame = None, fit.frame
    if fit.family.capabilities.far_rows and frame is not None and frame.real.any():
        far = split(frame, X, Z)
    near = np.ones(X.shape[0], dtype=bool)
    if far is not None:
        near[far.rows] = False
    return Z, far, near


def scores(fit, X: np.ndarray, full: bool) -> np.ndarray:
    """:func:`raw_scores`, and for a family whose support check already rejects NaN
    (``capabilities.support_check_finds_nan``: count families, which skip
    scikit-learn's separate finiteness pass) a ``ValueError`` naming +inf in X when a
    score is not finite."""
    values = raw_scores(fit, X, full)
    if fit.family.capabilities.support_check_finds_nan and not np.all(np.isfinite(values)):
        check_finite(sparse.values(X), fit.who)  # +inf in X, or a -inf score
    return values


def zero_likelihood_advice(method: str, alpha: Any) -> str | None:
    """What removes zero fitted probabilities of a fit with ``method`` and the
    estimator's ``alpha`` parameter (None when it has none), for the warning on rows
    with zero likelihood under every class (None: the generic advice).

    With ``method="map"`` and ``alpha <= 1`` the cause is the concentration itself:
    ``alpha`` is the Dirichlet/Beta/Gamma concentration, and alpha=1 adds no pseudo-
    counts (its mode is the MLE), so a value unseen in a class has probability 0."""
    try:
        no_smoothing = alpha is not None and bool(np.any(np.asarray(alpha, float) <= 1))
    except (TypeError, ValueError):
        no_smoothing = False
    if method == "map" and no_smoothing:
        return (f"With method='map', alpha={alpha!r} is the prior concentration and "
                "alpha=1 adds no smoothing (its MAP is the MLE), so a value unseen in "
                "a class has probability 0: raise alpha (alpha=2 is Laplace "
                "smoothing, scikit-learn's alpha=1), or use method='conjugate'.")
    if method == "mle":
        return ("method='mle' gives probability 0 to a value unseen in a class; use "
                "method='map' (the default alpha=2 is Laplace smoothing) or "
                "method='conjugate'.")
    return None


def raw_scores(fit, X: np.ndarray, full: bool) -> np.ndarray:
    """log p(x, y=k) (full) or discriminant scores, (n, K), for validated X.

    Point methods: plug-in ``log pi_k + log p(x | theta_k)``. Posterior methods: the
    posterior predictive joint log p(x, y=k | data) (full either way, except for far
    rows): ``method="conjugate"`` in closed form (Student-t, Beta-Bernoulli,
    Dirichlet-multinomial, negative binomial), exact and, unlike the log-mean-exp over
    draws, not biased low where one draw dominates (many features); ``"mcmc"`` as
    log mean_s p(x, y=k | theta_s). Joint densities subtract the Jacobian so that they
    are densities of x.
    """
    point = not fit.is_posterior  # one BLAS thread (bayesgen.utils.threads.no_spin)
    # the fit's n_jobs threads; X and Z are scanned once (missing.scan_scope)
    with jobs(fit.n_jobs), missing.scan_scope(), \
            (no_spin() if point else nullcontext()):
        Z, far, near = split_rows(fit, X)
        family, jac = fit.family, jacobian(fit, Z)
        if near.all():
            return _near_scores(fit, Z, full, jac)
        out = np.empty((X.shape[0], fit.classes.size))
        if near.any():
            out[near] = _near_scores(fit, Z[near], full, _rows(jac, near))
        if far is None:
            return out
        jac = _rows(jac, far.rows)
        if fit.method == "conjugate":
            far_joint = posterior.closed_form(fit, lambda p: family.far_log_predictive(far, p))
            out[far.rows] = far_joint - jac
            return out
        a2, a1, a0 = family.far_terms(far, fit.params)
        if fit.is_posterior:
            a0 = a0 + fit.log_pi_draws[:, None, :]
            values = far_scores(far.log_t, a2, a1, a0, relative=not full, axes=(0, -1))
            out[far.rows] = log_mean_exp(values, axis=0) - jac
        else:
            with np.errstate(divide="ignore"):
                a0 = a0 + fit.class_log_prior
            values = far_scores(far.log_t, a2, a1, a0, relative=not full)
            out[far.rows] = values - jac if full else values
        return out


def _near_scores(fit, Z: np.ndarray, full: bool, jac: float) -> np.ndarray:
    if fit.method == "conjugate":
        return posterior.closed_form(fit, lambda p: fit.family.log_predictive(Z, p)) - jac
    if fit.is_posterior:
        return posterior.predictive_log_joint(
            fit.family, Z, fit.params, fit.log_pi_draws) - jac
    with np.errstate(divide="ignore"):
        scores = fit.family.log_lik(Z, fit.params, full=full)
        scores += fit.class_log_prior
    return scores - jac if full else scores


def user_discriminant(fit, X: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """Discriminant scores of :func:`raw_scores` (``full=False``) as the documented
    formulas in the units of X: QDA, naive Bayes and kernel scores drop the Jacobian
    sum_j log s_j; a family with ``capabilities.linear_discriminant`` (LDA) converts its
    linear discriminant itself (``user_discriminant``). Posterior scores are joint
    log-densities already."""
    if fit.frame is None or fit.is_posterior:
        return scores
    family, Z = fit.family, internal(fit, X)
    if family.capabilities.linear_discriminant:
        return family.user_discriminant(scores, Z, fit.params)
    return scores - jacobian(fit, Z)


def proba_draws(fit, X: np.ndarray) -> np.ndarray:
    """p(y=k | x, theta_s) for every posterior draw, (S, n, K), for validated X."""
    Z, far, near = split_rows(fit, X)
    family, params, log_pi = fit.family, fit.params, fit.log_pi_draws
    out = np.empty((log_pi.shape[0], X.shape[0], log_pi.shape[1]))
    if near.any():
        out[:, near] = posterior.proba_draws(family, Z[near], params, log_pi)
    if far is not None:
        a2, a1, a0 = family.far_terms(far, params)
        values = far_scores(far.log_t, a2, a1, a0 + log_pi[:, None, :], relative=True)
        out[:, far.rows] = np.exp(values - fast_logsumexp(values, axis=-1, keepdims=True))
    return out


def pointwise_log_lik(fit, X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """log p(x_n, y_n | theta_s) of the training rows in user units, (S, n)."""
    Z = internal(fit, X)
    values = posterior.pointwise_log_lik(fit.family, Z, y, fit.params, fit.log_pi_draws)
    return values - per_row(jacobian(fit, Z))


def iter_log_joint_draws(fit, X: np.ndarray, draws: np.ndarray | None = None):
    """Yield ``(rows, log p(x, y=k | theta_s))`` chunk by chunk for validated X, each
    value of shape (S, m, K) (``rows`` a slice or an index array of the m rows).

    Per-draw joint log-densities up to a per-row constant (the frame's Jacobian, equal
    for every draw and class), so that ratios across draws and classes of one row are
    exact: what :mod:`bayesgen.decide.uncertainty` weighs the draws with. Memory is one
    chunk of about :data:`bayesgen.inference.posterior.CHUNK_BUDGET` values at a time.
    Rows far from the training data (:func:`bayesgen.data.frame.split`) come last, in
    one chunk of their own. ``draws``: indices of the draws to use (default all).
    """
    Z, far, near = split_rows(fit, X)
    family, params, log_pi = fit.family, fit.params, fit.log_pi_draws
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
