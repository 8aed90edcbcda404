"""Posterior predictives stacked by their exact leave-one-out class probabilities.

:class:`StackedClassifier` fits several conjugate classifiers to the same rows (by
default LDA, LDA with class means shrunk by the evidence, LDA with a diagonal covariance
and shrunk means, QDA, QDA shrunk towards an isotropic target, QDA with spherical class
covariances, and the class frequencies; :func:`default_estimators`)
and predicts with the mixture of their class probabilities::

    p(y = k | x, D) = sum_m a_m p_m(y = k | x, D),   a in the simplex,

where the weights maximise the leave-one-out log score of the labels (stacking of
predictive distributions; Yao, Vehtari, Simpson and Gelman, "Using stacking to average
Bayesian predictive distributions", Bayesian Analysis 13, 2018), here with p_nm =
p_m(y_n | x_n, D without row n)::

    a = argmax_a sum_n w_n log sum_m a_m p_m(y_n | x_n, D without row n).

A sample weight w_n is a replication count (the members' convention), so "without row
n" removes one of its copies: one unit of its weight, all of it when w_n < 1
(:func:`loo_one_unit`); integer weights then give exactly the stack of the repeated
rows.

A ``bg.MixtureDA`` member has no exact leave-one-out (its component labels are
latent) and brings its own estimate (its ``loo_log_joint``): PSIS-LOO from the
posterior draws of ``method="gibbs"`` / ``"mcmc"`` (Pareto k in ``pareto_k_``; a
``DataWarning`` when some k > 0.7), or, for ``method="map"``, 10-fold cross-validated
refits of the whole fit (``n_components="auto"`` included), whose terms are held-out
predictions of refits on 90% of the rows, not leave-one-out: they are slightly
pessimistic for that member. ``loo_kind_`` names the estimate of every member.

The leave-one-out class probabilities are exact for conjugate posteriors
(:func:`bayesgen.inference.exact_loo.loo_log_joint`: the posterior of the refit
without row n, its data-dependent default prior recomputed without the row, every
class, in closed form), so the weights cost no refit and no cross-validation. With few
rows the maximum often puts all weight on one member on the strength of a handful of
leave-one-out terms, so :class:`StackedClassifier` adds a Dirichlet(1 + c/M) prior on
``a`` (``weight_prior`` = c, default 1: one pseudo-row whose leave-one-out probability
is equal under every member) and uses the posterior mode::

    a = argmax_a sum_n w_n log sum_m a_m p_nm + (c / M) sum_m log a_m.

The objective is concave in ``a``. It is maximised over the softmax coordinates with
L-BFGS-B (SciPy), then polished by EM updates
a_m <- (sum_n w_n r_nm + c/M) / (sum_n w_n + c), r_nm = a_m p_nm / sum_j a_j p_nj,
which never decrease it. With c > 0 the optimum is interior (every weight positive).
With c = 0 EM approaches a weight of 0 only slowly, so the optimality conditions finish
the job: at the optimum g_m = sum_n w_n p_nm / sum_j a_j p_nj equals sum_n w_n for
members of positive weight and is at most that for members of weight 0. A member whose
weight is below 1e-4 and whose g_m is below sum_n w_n is removed and the others
re-optimised; a removed member whose g_m then exceeds sum_n w_n returns (an active-set
loop). Weights below :data:`ZERO_WEIGHT` are finally set to 0 and the rest
renormalised, which lowers the objective by at most about ZERO_WEIGHT sum_n w_n nats.
A member of weight 0 is not evaluated at prediction.

Each member's leave-one-out table also gives its temperature (:func:`loo_temperature`,
``loo_["temperature"]``): the T >= 1 by which dividing its log-likelihood ratios
maximises its leave-one-out log score. T > 1 says that the member predicts with more
confidence than its leave-one-out supports, typically with fewer rows per class than
features; the stack reports it and predicts with the members' own posterior
predictives (its fallback is the class-frequency member).

Why the class probabilities and not the evidence: the evidence p(X | y) scores how well
each model describes the features, and on few rows of collinear or partly constant
features it prefers models that predict the labels poorly (see the priors guide). The
stacking objective scores exactly what ``predict_proba`` is used for, p(y | x), on rows
each model has not seen. Unlike Bayesian model averaging it does not assume one of the
models is true: it can weight LDA and QDA together when the truth lies between them
(the predictive counterpart of regularised discriminant analysis' pooling lambda).
"""

from __future__ import annotations

import warnings
from numbers import Real
from typing import Any

import numpy as np
import pandas as pd
from scipy.optimize import minimize, minimize_scalar
from scipy.special import log_softmax, logsumexp, softmax
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.utils import Bunch
from sklearn.utils.validation import check_is_fitted

from bayesgen.data import labels
from bayesgen.estimators import persistence
from bayesgen.estimators.base import GenerativeClassifier
from bayesgen.estimators.discriminant import LDA, QDA
from bayesgen.exceptions import DataWarning
from bayesgen.inference import exact_loo

#: EM polishing of the weights after L-BFGS-B: at most this many updates, stopping
#: when no weight moves by more than :data:`_EM_TOL`
_EM_STEPS = 500
_EM_TOL = 1e-12
#: with a positive ``prior_rows`` the optimum is interior, where L-BFGS-B's answer is
#: already stationary to about 1e-7; EM then only polishes, for at most this many steps
#: (each costs one pass over the n x M leave-one-out table)
_EM_STEPS_INTERIOR = 50
#: weights below this are set to 0 (see the module docstring)
ZERO_WEIGHT = 1e-9
#: a member whose weight is below this and whose gradient says 0 is optimal is removed
#: and the others re-optimised (see the module docstring)
_DROP_BELOW = 1e-4


#: posterior draws kept by each default member (``draws`` x ``chains``): they feed the
#: members' ``idata_`` only, as the class probabilities are the closed-form predictive
DEFAULT_DRAWS = {"draws": 250, "chains": 2}


#: ``mean_strength`` (kappa0) of the class-frequency member: every class mean is the
#: overall mean m0 to within ~1e-11 of a standard deviation, so the classes share one
#: density and the member's class probabilities are the posterior predictive class
#: frequencies (N_k + alpha_k) / (N + sum_j alpha_j) at any x
CLASS_FREQUENCY_STRENGTH = 1e12


def default_estimators() -> list[tuple[str, GenerativeClassifier]]:
    """The members of ``StackedClassifier()``, all ``method="conjugate"`` posterior
    predictives, each keeping :data:`DEFAULT_DRAWS` posterior draws:

    - ``lda``: a shared covariance (LDA at its default prior);
    - ``lda_shrunk_means``: LDA with the class-mean prior strength kappa0 chosen by
      the evidence with the prior mean integrated out (``mean_strength="auto"``): with
      fewer rows per class than features the default kappa0 = 0.01 keeps the noise of
      the sample means as signal and predicts with more confidence than the class
      frequencies deserve (priors guide, "Few rows, many features"), while with more
      rows it can predict better than the shrunk means;
    - ``lda_diagonal``: a shared *diagonal* covariance with the class means shrunk by
      the evidence (``cov_structure="diag"``, ``mean_strength="auto"``; "naive-Bayes
      LDA", which Bickel and Levina 2004 showed to beat LDA when d is large relative to
      n): d variances instead of d (d + 1) / 2 covariances, so it stays near the class
      frequencies where nothing can be learned and keeps what the variances support
      (held-out log loss 0.99 to 1.00 times the class frequencies' on the d = 60 cells
      of ``validation/small_n.py`` where ``lda`` is 1.5 to 2.8 times it);
    - ``qda``: a covariance per class shrunk towards the diagonal of the pooled
      variances (QDA at its default prior);
    - ``qda_isotropic``: a covariance per class shrunk towards v I
      (``cov_target="isotropic"``);
    - ``qda_spherical``: a covariance per class that is a scale times the diagonal of
      the pooled variances (``cov_structure="spherical"``, mclust's VII: classes that
      differ in spread only);
    - ``class_frequencies``: the class frequencies, whatever x (LDA with a spherical
      covariance and every class mean pinned to the overall mean,
      ``mean_strength`` = :data:`CLASS_FREQUENCY_STRENGTH`): the fallback the stack
      weighs up when no member predicts the labels better than chance.

    The set was chosen by held-out log loss on the 30 cells of ``validation/small_n.py``
    and ``validation/stacking_holdout2.py`` (``validation/small_n_stack.py``,
    ``validation/results_small_n_stack.md``): adding ``lda_diagonal`` put the stack at
    or below the best tuned scikit-learn model in 20 cells instead of 19, its worst ratio
    to it 1.162 instead of 1.176; QDA centred on the pooled covariance
    (``cov_target="pooled"``) in place of ``qda``, or a weight prior of 2, did worse.
    """
    return [("lda", LDA(method="conjugate", **DEFAULT_DRAWS)),
            ("lda_shrunk_means", LDA(method="conjugate", mean_strength="auto",
                                     **DEFAULT_DRAWS)),
            ("lda_diagonal", LDA(method="conjugate", cov_structure="diag",
                                 mean_strength="auto", **DEFAULT_DRAWS)),
            ("qda", QDA(method="conjugate", **DEFAULT_DRAWS)),
            ("qda_isotropic", QDA(method="conjugate", cov_target="isotropic",
                                  **DEFAULT_DRAWS)),
            ("qda_spherical", QDA(method="conjugate", cov_structure="spherical",
                                  **DEFAULT_DRAWS)),
            ("class_frequencies", LDA(method="conjugate", cov_structure="spherical",
                                      mean_strength=CLASS_FREQUENCY_STRENGTH,
                                      **DEFAULT_DRAWS))]


def stacking_weights(loo_log_proba: np.ndarray, sample_weight: np.ndarray | None = None,
                     prior_rows: float = 0.0) -> np.ndarray:
    """Weights a in the simplex maximising
    sum_n w_n log sum_m a_m exp(L_nm) + (prior_rows / M) sum_m log a_m.

    Parameters
    ----------
    loo_log_proba : ndarray of shape (n, M)
        L_nm = log p_m(y_n | x_n, D without row n), finite or -inf (not NaN or +inf).
    sample_weight : ndarray of shape (n,), optional
        w_n >= 0, finite (None: all 1).
    prior_rows : float, default=0
        c >= 0: the weights' Dirichlet(1 + c / M) prior (the posterior mode is
        returned), worth c pseudo-rows spread evenly over the members. 0 is plain
        stacking (the maximum may put weight 0 on members); c > 0 keeps every weight
        at least about c / (M (sum_n w_n + c)).

    Returns
    -------
    ndarray of shape (M,)
        The weights, non-negative, summing to 1 (with ``prior_rows=0``, those below
        :data:`ZERO_WEIGHT` are exactly 0).

    Raises
    ------
    ValueError
        When ``loo_log_proba`` is not (n, M) with n, M >= 1 or holds NaN or +inf, or
        ``sample_weight`` is not (n,), finite and non-negative, or ``prior_rows`` is
        negative or not finite.
    """
    L = np.asarray(loo_log_proba, dtype=np.float64)
    if L.ndim != 2 or L.shape[1] == 0 or L.shape[0] == 0:
        raise ValueError(f"loo_log_proba must have shape (n, M) with n, M >= 1; got {L.shape}.")
    if np.isnan(L).any():
        raise ValueError("loo_log_proba contains NaN.")
    if np.isposinf(L).any():
        raise ValueError("loo_log_proba contains +inf: it holds log probabilities "
                         "(finite or -inf).")
    w = np.ones(L.shape[0]) if sample_weight is None else np.asarray(sample_weight, float)
    if w.shape != (L.shape[0],):
        raise ValueError(f"sample_weight must have shape ({L.shape[0]},), one weight per "
                         f"row of loo_log_proba; got {w.shape}.")
    if not np.isfinite(w).all():
        raise ValueError("sample_weight must be finite (no NaN or inf).")
    if (w < 0).any():
        raise ValueError("sample_weight must be non-negative.")
    prior = float(prior_rows)
    if not (np.isfinite(prior) and prior >= 0):
        raise ValueError(f"prior_rows must be a finite number >= 0; got {prior_rows!r}.")
    M = L.shape[1]
    if M == 1:
        return np.ones(1)
    # rows every member gives probability 0 carry no information about a
    keep = np.isfinite(L).any(axis=1) & (w > 0)
    L, w = L[keep], w[keep]
    if L.shape[0] == 0:
        return np.full(M, 1.0 / M)
    shift = L.max(axis=1, keepdims=True)
    P = np.exp(L - shift)  # (n, M), each row's largest entry 1
    if prior > 0:  # an interior optimum: no weight is 0, no active set
        return _maximise(L, P, w, prior)
    total = w.sum()
    active = np.ones(M, dtype=bool)
    for _ in range(2 * M):  # active set: at most M removals and M returns
        a = np.zeros(M)
        a[active] = _maximise(L[:, active], P[:, active], w) if active.sum() > 1 else 1.0
        with np.errstate(divide="ignore", invalid="ignore"):
            grad = w @ (P / (P @ a)[:, None])  # d/da_m; the optimum has <= total, = if a_m > 0
        returning = ~active & (grad > total * (1.0 + 1e-9))
        if returning.any():
            active[np.flatnonzero(returning)[np.argmax(grad[returning])]] = True
            continue
        dropped = active & (a < _DROP_BELOW) & (grad < total)
        if not dropped.any():
            break
        active &= ~dropped
    a = np.where(a < ZERO_WEIGHT, 0.0, a)
    return a / a.sum()


#: the largest temperature :func:`loo_temperature` searches: the class prior to within
#: 1e-4 of the log-likelihood ratios
TEMPERATURE_MAX = 1e4
#: the leave-one-out log score a temperature above 1 must gain (nats)
_TEMPERATURE_GAIN = 1e-8


def tempered(log_proba: np.ndarray, log_prior: np.ndarray, temperature: float
             ) -> np.ndarray:
    """Class log probabilities with the log-likelihood ratios divided by a temperature.

    log p_T(y = k | x) = log softmax_k((log p(y = k | x) - log pi_k) / T + log pi_k),
    i.e. p(x | y = k)^(1/T) pi_k normalised: T = 1 gives ``log_proba`` back, T > 1
    flattens towards the class prior pi, T -> inf reaches it.

    Parameters
    ----------
    log_proba : ndarray of shape (n, K)
        log p(y = k | x_n), normalised over the classes (entries may be -inf).
    log_prior : ndarray of shape (K,) or (n, K)
        log pi_k, or one class prior per row (entries may be -inf: such a class keeps
        probability 0).
    temperature : float
        T > 0.

    Returns
    -------
    ndarray of shape (n, K)
    """
    with np.errstate(invalid="ignore"):
        ratio = np.asarray(log_proba, dtype=np.float64) - log_prior
    ratio[np.isnan(ratio)] = -np.inf  # a class of prior 0: probability 0 stays 0
    return log_softmax(ratio / temperature + log_prior, axis=1)


def loo_temperature(loo_log_proba: np.ndarray, y_index: np.ndarray,
                    log_prior: np.ndarray, sample_weight: np.ndarray | None = None,
                    upper: float = TEMPERATURE_MAX) -> float:
    """The temperature T in [1, ``upper``] of the best leave-one-out log score.

    T maximises sum_n w_n log p_T(y_n | x_n, D without row n) (:func:`tempered`), by a
    bounded Brent search over log T; T = 1 is kept unless a larger T scores higher by
    more than 1e-8 nats (so a member whose log-likelihood ratios are all ~0, such as
    the class frequencies, keeps T = 1).
    T > 1 says that the predictive is more confident than its leave-one-out supports
    (with few rows per class for the number of features, the posterior predictives of
    a model whose classes may differ are: see the priors guide, "Few rows, many
    features"). Only T >= 1 is searched: a predictive is never made more confident
    than its posterior.

    Parameters
    ----------
    loo_log_proba : ndarray of shape (n, K)
        log p(y = k | x_n, D without row n), normalised over the classes.
    y_index : ndarray of shape (n,)
        The class index of every row.
    log_prior : ndarray of shape (K,) or (n, K)
        log pi_k, the class prior the tempering keeps; for leave-one-out terms, row n's
        own, that of the data without row n (:func:`loo_one_unit`), so that
        each term is the tempered predictive of the refit without row n.
    sample_weight : ndarray of shape (n,), optional
        w_n >= 0 (None: all 1).
    upper : float
        The largest T searched (> 1).

    Returns
    -------
    float
        T >= 1.
    """
    L = np.asarray(loo_log_proba, dtype=np.float64)
    y_index = np.asarray(y_index)
    w = np.ones(y_index.size) if sample_weight is None else np.asarray(sample_weight, float)
    rows = np.arange(y_index.size)

    def loss(log_t: float) -> float:
        own = tempered(L, log_prior, np.exp(log_t))[rows, y_index]
        with np.errstate(invalid="ignore"):  # weight 0 times -inf: no term
            return -float(np.sum(np.where(w > 0, w * own, 0.0)))

    at_one = loss(0.0)
    found = minimize_scalar(loss, bounds=(0.0, np.log(upper)), method="bounded",
                            options={"xatol": 1e-5})
    gain = at_one - found.fun  # a flat score (no log-likelihood ratios) keeps T = 1
    return float(np.exp(found.x)) if gain > _TEMPERATURE_GAIN else 1.0


def _maximise(L: np.ndarray, P: np.ndarray, w: np.ndarray, prior: float = 0.0
              ) -> np.ndarray:
    """The stacking weights (M,) of the members of ``L`` (n, M) (``P`` = exp(L - row
    max)) under the Dirichlet(1 + prior / M) prior: L-BFGS-B over the softmax
    coordinates, then EM updates a_m <- (sum_n w_n r_nm + prior / M) / (sum_n w_n +
    prior)."""
    M = L.shape[1]
    extra = prior / M

    def objective(theta: np.ndarray) -> tuple[float, np.ndarray]:
        log_a = log_softmax(np.r_[theta, 0.0])
        log_mix = logsumexp(L + log_a[None, :], axis=1)
        resp = np.exp(L + log_a[None, :] - log_mix[:, None])  # (n, M)
        grad_a = w @ resp + extra  # d/d log a_m of the objective
        grad = grad_a - np.exp(log_a) * grad_a.sum()  # chain rule through the softmax
        return -float(w @ log_mix + extra * log_a.sum()), -grad[:-1]

    result = minimize(objective, np.zeros(M - 1), jac=True, method="L-BFGS-B",
                      options={"maxiter": 1000, "gtol": 1e-10})
    a = softmax(np.r_[result.x, 0.0])
    steps = _EM_STEPS_INTERIOR if prior > 0 else _EM_STEPS
    for _ in range(steps):  # EM: monotone, moves weights towards 0 the optimum sets
        resp = a[None, :] * P
        resp /= resp.sum(axis=1, keepdims=True)
        new = (w @ resp + extra) / (w.sum() + prior)
        moved = float(np.max(np.abs(new - a)))
        a = new
        if moved < _EM_TOL:
            break
    return a


def loo_one_unit(estimator, X: Any, y: Any, sample_weight: Any
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A fitted member's leave-one-out terms, from one check of the training rows.

    A weight is a replication count (``fit``'s convention: weight 2 is a duplicated
    row), so row n is left out as one of its w_n copies: the conjugate downdate removes
    min(w_n, 1) of its weight (all of it when w_n < 1), and the objective counts the
    term w_n times. With integer weights this is exactly the stack of the repeated
    rows (scikit-learn's sample-weight equivalence); with unit weights it is plain
    leave-one-out.

    Returns
    -------
    joint : ndarray of shape (n, K)
        log p(x_n, y = k | D without one unit of row n's weight)
        (:func:`bayesgen.inference.exact_loo.loo_log_joint_of`).
    y_index : ndarray of shape (n,)
        The class index of every row.
    class_log_prior : ndarray of shape (n, K)
        log p(y = k | the labels without that unit): the class prior of each refit (the
        Dirichlet posterior mean, or the fixed ``class_prior``), the reference
        :func:`loo_temperature` tempers around.
    """
    rows = exact_loo.training_rows(estimator, X, y, sample_weight)
    w = np.minimum(rows.weights, 1.0)
    return (exact_loo.loo_log_joint_of(estimator.fitted_, rows, w), rows.y,
            exact_loo.label_log_prior(estimator.fitted_, rows.y, w))


def class_log_prior(estimator) -> np.ndarray:
    """log p(y = k | the training labels), (K,): a fitted member's exact posterior
    predictive class frequencies (N_k + a_k) / (N + A), or the fixed ``class_prior``
    (not ``class_log_prior_``, which for a posterior method is a mean over draws)."""
    return exact_loo.label_log_prior(estimator.fitted_, np.zeros(1, dtype=int),
                                     np.zeros(1))[0]


def loo_summary(loo_log_proba: np.ndarray, sample_weight: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray]:
    """Each member's leave-one-out log score and its standard error, as ArviZ's
    ``elpd_loo`` and ``se``.

    Parameters
    ----------
    loo_log_proba : ndarray of shape (n, M)
        L_nm = log p_m(y_n | x_n, D without row n).
    sample_weight : ndarray of shape (n,)

    Returns
    -------
    elpd : ndarray of shape (M,)
        sum_n w_n L_nm (-inf when a row has probability 0 under member m).
    se : ndarray of shape (M,)
        sqrt(n Var_n(w_n L_nm)); inf where ``elpd`` is -inf (not NaN).
    """
    values = sample_weight[:, None] * loo_log_proba
    elpd = values.sum(axis=0)
    with np.errstate(invalid="ignore"):  # var of a -inf column is NaN
        spread = np.sqrt(loo_log_proba.shape[0] * values.var(axis=0))
    return elpd, np.where(np.isfinite(elpd), spread, np.inf)


class StackedClassifier(ClassifierMixin, BaseEstimator):
    """Conjugate classifiers stacked by their exact leave-one-out class probabilities.

    ``predict_proba(X)`` is sum_m a_m p_m(y | x, D): the members' posterior predictive
    class probabilities averaged with the weights ``weights_`` that maximise the
    leave-one-out log score of the training labels,
    sum_n w_n log sum_m a_m p_m(y_n | x_n, D without row n) (exact for conjugate
    posteriors: no refit, no cross-validation), under a weak Dirichlet prior on the
    weights (``weight_prior``). See the module docstring and the priors guide.

    Parameters
    ----------
    estimators : list of (str, estimator), optional
        The members: unfitted bayesgen classifiers with ``method="conjugate"`` and an
        exact leave-one-out predictive (LDA, QDA, GaussianNB, BernoulliNB,
        MultinomialNB, CategoricalNB, PoissonNB, ExponentialNB; not with missing
        entries in LDA/QDA, nor unlabeled rows), or ``bg.MixtureDA`` of any method,
        weighed by estimated leave-one-out terms (module docstring; ``loo_kind_``).
        Names are unique. None: LDA, LDA
        with ``mean_strength="auto"``, LDA with a diagonal covariance and
        ``mean_strength="auto"``, QDA, QDA with
        ``cov_target="isotropic"``, QDA with ``cov_structure="spherical"`` and the class
        frequencies, all
        ``method="conjugate"``, keeping 2 chains of 250 draws
        (:func:`default_estimators`).
    weight_prior : float, default=1.0
        c >= 0: the stacking weights get a Dirichlet(1 + c / M) prior, worth c
        pseudo-rows whose leave-one-out probability is the same under every member,
        and ``weights_`` is its posterior mode: the weights maximise
        sum_n w_n log sum_m a_m p_nm + (c / M) sum_m log a_m. With few rows, plain
        stacking (c = 0) often gives one member all the weight on the strength of a
        handful of leave-one-out terms; c = 1 keeps every member in the mixture with
        a weight of at least about 1 / (M (n + 1)), so that no member's confident
        mistakes go unhedged.

    Attributes
    ----------
    estimators_ : list of estimator
        The fitted members, in the order of ``estimators``.
    named_estimators_ : sklearn.utils.Bunch
        The fitted members by name.
    weights_ : ndarray of shape (M,)
        The stacking weights a (non-negative, sum 1).
    loo_ : pandas.DataFrame
        One row per member (index: name): ``elpd_loo`` = sum_n w_n log
        p_m(y_n | x_n, D without row n), its standard error ``se``
        (sqrt(n Var_n) of the pointwise values), ``weight``, and ``temperature``
        (:func:`loo_temperature`: above 1 when the member is more confident than its
        leave-one-out supports; a diagnostic, the stack does not temper).
    loo_kind_ : dict of str
        By member name, the leave-one-out terms it is weighed by: "exact" (conjugate
        members), "psis" (a MixtureDA posterior), "10-fold" (a MixtureDA posterior
        mode: cross-validated refits).
    pareto_k_ : dict of ndarray (n,)
        By the name of each MixtureDA member: the Pareto k of its PSIS-LOO terms
        (NaN for cross-validated terms and rows of weight 0).
    classes_ : ndarray of shape (K,)
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        When the training X had column names.

    Examples
    --------
    >>> from sklearn.datasets import load_wine
    >>> import bayesgen as bg
    >>> X, y = load_wine(return_X_y=True)
    >>> clf = bg.StackedClassifier().fit(X, y)
    >>> clf.weights_.shape
    (7,)
    """

    def __init__(self, estimators: list[tuple[str, Any]] | None = None, *,
                 weight_prior: float = 1.0):
        self.estimators = estimators
        self.weight_prior = weight_prior

    # ------------------------------------------------------------------ fit
    def _members(self) -> list[tuple[str, Any]]:
        members = default_estimators() if self.estimators is None else list(self.estimators)
        if not members:
            raise ValueError("estimators is empty: give at least one (name, estimator) pair.")
        names = []
        for item in members:
            if not (isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str)):
                raise ValueError("estimators must be a list of (name, estimator) pairs; "
                                 f"got {item!r}.")
            name, est = item
            if not isinstance(est, GenerativeClassifier):
                raise ValueError(f"estimator {name!r} is a {type(est).__name__}, not a "
                                 "bayesgen classifier: the stack needs each member's exact "
                                 "leave-one-out predictive.")
            if est.method != "conjugate" and not _estimated_loo(est):
                raise ValueError(f"estimator {name!r} has method={est.method!r}; the stack "
                                 "needs method='conjugate' (the leave-one-out class "
                                 "probabilities are exact only for conjugate posteriors).")
            names.append(name)
        if len(set(names)) != len(names):
            raise ValueError(f"estimator names must be unique; got {names}.")
        return members

    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> StackedClassifier:
        """Fit every member to (X, y) and the stacking weights.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n, d)
        y : array-like of shape (n,)
            Class labels (no unlabeled rows: their leave-one-out predictive has no
            closed form).
        sample_weight : array-like of shape (n,), optional
            Row weights (replication counts, as for the members), passed to every
            member; row n's leave-one-out term leaves out one unit of its weight (all
            of it when below 1), i.e. one of its copies, and counts w_n times in the
            objective, so integer weights equal repeated rows.

        Returns
        -------
        self
        """
        members = self._members()
        prior = self.weight_prior
        if isinstance(prior, bool) or not isinstance(prior, Real) or not (
                np.isfinite(prior) and prior >= 0):
            raise ValueError(f"weight_prior must be a finite number >= 0; got {prior!r}.")
        for name, est in members:  # before any fit: a semi-supervised fit is costly
            _, unlabeled = labels.split_labels(y, getattr(est, "unlabeled", None))
            if unlabeled is not None:
                raise ValueError(
                    f"y has {int(unlabeled.sum())} unlabeled row(s) (None, NaN, pd.NA or "
                    f"estimator {name!r}'s unlabeled value): their leave-one-out predictive "
                    "has no closed form, so the stack cannot weigh them; drop the "
                    "unlabeled rows before stacking.")
        if _has_missing(X):  # before any fit: data augmentation is an MCMC run
            for name, est in members:
                if est._make_family().capabilities.augmentation:
                    raise ValueError(_no_exact_loo(name, est))
        fitted, loo, tables, kinds, pareto = [], [], [], [], {}
        for name, est in members:
            with warnings.catch_warnings():
                # a member's idata_ is not what the stack uses: fit's word that its
                # log_likelihood group is left out to add_log_likelihood() is not for it
                warnings.filterwarnings("ignore", message=".*add_log_likelihood",
                                        category=DataWarning)
                est = clone(est).fit(X, y, sample_weight=sample_weight)
            if exact_loo.supports(est):
                joint, y_index, loo_prior = loo_one_unit(est, X, y, sample_weight)
                kinds.append("exact")
            elif _estimated_loo(est):  # a mixture: PSIS-LOO or cross-validated refits
                terms = est.loo_log_joint(X, y, sample_weight)
                joint, y_index, loo_prior = (terms.log_joint, terms.y_index,
                                             terms.class_log_prior)
                kinds.append(terms.kind)
                pareto[name] = terms.pareto_k
            else:
                raise ValueError(_no_exact_loo(name, est))
            full = joint - logsumexp(joint, axis=1, keepdims=True)  # (n, K)
            loo.append(full[np.arange(y_index.size), y_index])
            tables.append((full, y_index, loo_prior))
            fitted.append(est)
        classes = fitted[0].classes_
        for (name, _), est in zip(members, fitted, strict=True):
            if not np.array_equal(est.classes_, classes):
                raise ValueError(f"estimator {name!r} fitted classes {est.classes_} instead "
                                 f"of {classes}.")
        L = np.stack(loo, axis=1)  # (n, M)
        w = exact_loo.training_rows(fitted[0], X, y, sample_weight).weights
        self.weights_ = stacking_weights(L, w, prior_rows=self.weight_prior)
        self.estimators_ = fitted
        self.classes_ = classes
        self.n_features_in_ = fitted[0].n_features_in_
        if hasattr(fitted[0], "feature_names_in_"):
            self.feature_names_in_ = fitted[0].feature_names_in_
        self._names = [name for name, _ in members]
        self.loo_kind_ = dict(zip(self._names, kinds, strict=True))
        self.pareto_k_ = pareto
        self._elpd, self._elpd_se = loo_summary(L, w)
        self._temperature = np.array([loo_temperature(full, y_index, log_prior, w)
                                      for full, y_index, log_prior in tables])
        return self

    def __sklearn_tags__(self):
        """scikit-learn's tags from the members': ``positive_only`` / ``categorical``
        when a member requires it, ``sparse`` when every member takes sparse X;
        ``allow_nan`` when every member fits with missing
        entries and keeps an exact leave-one-out with them (not LDA/QDA, whose missing
        entries need data augmentation: the stack's fit then refuses NaN, while its
        predictions still integrate missing entries out)."""
        from sklearn.utils import get_tags

        tags = super().__sklearn_tags__()
        try:
            members = self._members()
            member_tags = [get_tags(est).input_tags for _, est in members]
            allow_nan = all(t.allow_nan and not est._make_family().capabilities.augmentation
                            for t, (_, est) in zip(member_tags, members, strict=True))
        except (ValueError, TypeError):  # an invalid specification: fit says what is wrong
            return tags
        tags.input_tags.positive_only = any(t.positive_only for t in member_tags)
        tags.input_tags.categorical = any(t.categorical for t in member_tags)
        tags.input_tags.sparse = all(t.sparse for t in member_tags)
        tags.input_tags.allow_nan = allow_nan
        return tags

    def __sklearn_is_fitted__(self) -> bool:
        return hasattr(self, "weights_")

    @property
    def named_estimators_(self) -> Bunch:
        """The fitted members by name (a scikit-learn ``Bunch``)."""
        check_is_fitted(self)
        return Bunch(**dict(zip(self._names, self.estimators_, strict=True)))

    @property
    def loo_(self) -> pd.DataFrame:
        """Per member (index: name): ``elpd_loo`` = sum_n w_n log p_m(y_n | x_n, D
        without row n), its standard error ``se`` = sqrt(n Var_n(w_n L_nm)),
        ``weight``, and ``temperature``: the T >= 1 whose flattening of the member's
        log-likelihood ratios maximises its leave-one-out log score
        (:func:`loo_temperature`, each refit's exact class prior kept). T > 1 warns
        that the member predicts with more confidence than its leave-one-out
        supports; the stack reports it and does not temper (NaN for a stack saved
        before the column existed)."""
        check_is_fitted(self)
        temperature = getattr(self, "_temperature", np.full(len(self._names), np.nan))
        return pd.DataFrame({"elpd_loo": self._elpd, "se": self._elpd_se,
                             "weight": self.weights_, "temperature": temperature},
                            index=pd.Index(self._names, name="estimator"))

    def save(self, path: Any):
        """Write this fitted stack (weights, every member's fitted state) to one netCDF
        file; ``bayesgen.load(path)`` returns a stack that predicts identically. The
        members' posterior draws (``idata_``) are not written."""
        return persistence.save(self, path)

    # -------------------------------------------------------------- predict
    def predict_log_proba(self, X: Any) -> np.ndarray:
        """log sum_m a_m p_m(y = k | x, D) of every row and class, (m, K), by
        log-sum-exp over the members (members of weight 0 are not evaluated), then
        normalised over the classes by log-sum-exp (the rounding of the members'
        log-sum-exps otherwise leaves rows summing to 1 +- 1e-13) and capped at 0."""
        check_is_fitted(self, "weights_")
        terms = [np.log(a) + est.predict_log_proba(X)
                 for a, est in zip(self.weights_, self.estimators_, strict=True) if a > 0]
        log_proba = logsumexp(np.stack(terms, axis=0), axis=0)
        log_proba -= logsumexp(log_proba, axis=1, keepdims=True)
        return np.minimum(log_proba, 0.0, out=log_proba)

    def predict_proba(self, X: Any) -> np.ndarray:
        """The stacked class probabilities sum_m a_m p_m(y = k | x, D), (m, K): the
        exponential of :meth:`predict_log_proba` divided by its row sums, so that rows sum
        to 1 and no entry exceeds 1 (scikit-learn's ``log_loss`` rejects 1 + 4e-16)."""
        proba = np.exp(self.predict_log_proba(X))
        proba /= proba.sum(axis=1, keepdims=True)
        return proba

    def predict(self, X: Any) -> np.ndarray:
        """The class of largest stacked probability, (m,)."""
        log_proba = self.predict_log_proba(X)  # checks the fit before classes_ is read
        return self.classes_[np.argmax(log_proba, axis=1)]


def _estimated_loo(est: Any) -> bool:
    """Whether a member has no exact leave-one-out but estimates its own
    (``loo_log_joint``: ``bg.MixtureDA``, PSIS-LOO from its draws or cross-validated
    refits of its posterior mode)."""
    return callable(getattr(est, "loo_log_joint", None))


def _no_exact_loo(name: str, est: Any) -> str:
    """The message of a member without an exact leave-one-out predictive on the data."""
    return (f"estimator {name!r} ({type(est).__name__}) has no exact leave-one-out "
            "predictive on these data: LDA, QDA and MultinomialNB with missing "
            "entries (NaN, None or NA in X) and fits with unlabeled rows have "
            "none. Impute or drop the missing entries, or drop the unlabeled rows, "
            "before stacking.")


def _has_missing(X: Any) -> bool:
    """Whether X (array-like, DataFrame or scipy.sparse) holds a missing entry (NaN,
    None or NA). False when X is not numeric: the members' own checks then say what is
    wrong with it."""
    try:
        if hasattr(X, "isna"):  # pandas
            return bool(np.asarray(X.isna()).any())
        data = np.asarray(X.tocsr().data if hasattr(X, "tocsr") else X)  # any sparse format
        if data.dtype.kind == "O":  # None, NaN, pd.NA among other objects
            return bool(pd.isna(data).any())
        if data.dtype.kind not in "fiub":  # complex, text: the members refuse it
            return False
        return bool(np.isnan(data.astype(np.float64)).any())
    except (TypeError, ValueError, AttributeError):
        return False
