"""A fitted classifier as one immutable value.

:class:`Fit` holds what a fit computed: the family (configured with its labels, frame
and levels), the class layout, the sufficient statistics, the resolved prior, the point
estimate or the posterior draws, the conjugate posterior and the frame of the internal
coordinates. The estimator assembles it from its fitted state (``fitted_``) and hands
it to the lower layers (inference, decide, diagnostics, semi, scale, plots) as an
argument; they read it and return new values, and never read or write the estimator's
private attributes. A refit, a merge or a leave-one-out is a new value, never a change
of this one.

Shapes: K classes, d features, S = chains x draws posterior draws; "(S, ...)" is a
leading draw dim of posterior methods.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bayesgen.data.validation import POSTERIOR_METHODS


@dataclass(frozen=True, eq=False)
class Fit:
    """One fitted generative classifier y ~ Categorical(pi), x | y ~ family.

    Attributes
    ----------
    who : str
        The estimator's class name, for messages.
    method : str
        The method the fit used (``method_``): "mle", "map", "conjugate" or "mcmc".
    family : family object
        The likelihood family, configured with the fit's labels, frame and levels.
    classes : ndarray (K,)
        Sorted class labels (``classes_``).
    class_count : ndarray (K,)
        Weighted class counts N_k.
    class_alpha : ndarray (K,) or None
        The Dirichlet concentration of pi.
    fixed_pi : ndarray (K,) or None
        Known class probabilities (``class_prior``), or None when pi is estimated.
    stats : dict or None
        The family's weighted per-class statistics (internal frame).
    prior : dict or None
        The resolved prior hyper-parameters (internal frame).
    params : dict or None
        Point parameters, or posterior draws with a leading draw dim (S, ...); None
        while a posterior fit is still being computed.
    log_pi_draws : ndarray (S, K) or None
        log pi per posterior draw (posterior methods).
    posterior : dict or None
        The conjugate posterior (``method="conjugate"``), or a mixture of them
        (:func:`bayesgen.inference.posterior.mixture`).
    class_log_prior : ndarray (K,) or None
        log of the point estimate of pi (``class_log_prior_``).
    class_prior : ndarray (K,) or None
        The point estimate of pi (``class_prior_``; the posterior mean for posterior
        methods).
    frame : :class:`bayesgen.data.frame.Frame` or None
        The frame of the internal coordinates z = (x - c) / s (None: none).
    feature_names : list of str
        Names of the features (``feature_names_in_`` or ``x0, x1, ...``).
    n_features : int
        ``n_features_in_``.
    posterior_size : tuple (chains, draws)
        The posterior's chains and draws (of ``idata_`` once there is one).
    loss : ndarray (K, K) or None
        The validated ``loss`` matrix of the Bayes decision.
    columns : :class:`bayesgen.data.tables.Columns` or None
        The record of the training columns (kinds, levels) of a DataFrame fit.
    hyper_draws : dict
        Sampled hyper-parameters per draw (LDA/QDA ``cov_dof="sample"``), or empty.
    n_unlabeled : int
        Unlabeled rows of a semi-supervised fit (``n_unlabeled_``), else 0.
    n_jobs, random_state, tune
        The estimator's settings the computations on the fit use (threads, seed of
        the draws, warm-up steps).
    """

    who: str
    method: str
    family: Any
    classes: np.ndarray
    class_count: np.ndarray
    class_alpha: np.ndarray | None = None
    fixed_pi: np.ndarray | None = None
    stats: dict | None = None
    prior: dict | None = None
    params: dict | None = None
    log_pi_draws: np.ndarray | None = None
    posterior: dict | None = None
    class_log_prior: np.ndarray | None = None
    class_prior: np.ndarray | None = None
    frame: Any = None
    feature_names: list[str] = field(default_factory=list)
    n_features: int = 0
    posterior_size: tuple[int, int] = (1, 1)
    loss: np.ndarray | None = None
    columns: Any = None
    hyper_draws: dict = field(default_factory=dict)
    n_unlabeled: int = 0
    n_jobs: int | None = None
    random_state: Any = None
    tune: Any = None

    @property
    def is_posterior(self) -> bool:
        """Whether the fit is a posterior (``"conjugate"`` or ``"mcmc"``)."""
        return self.method in POSTERIOR_METHODS

    @property
    def n_classes(self) -> int:
        """K."""
        return int(self.classes.size)


def as_fit(fit_or_estimator: Any) -> Fit:
    """``fit_or_estimator`` itself when it is a :class:`Fit`, else the fitted
    estimator's ``fitted_`` (``NotFittedError`` before ``fit``): for the functions of
    the lower layers that users call on an estimator (``build_stats_model(clf)``)."""
    if isinstance(fit_or_estimator, Fit):
        return fit_or_estimator
    return fit_or_estimator.fitted_
