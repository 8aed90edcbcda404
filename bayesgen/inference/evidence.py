"""Exact marginal likelihood (evidence) log p(X, y) of the conjugate families.

    log p(X, y) = log p(y) + sum_k log p(X_k | y)          X_k: the rows of class k

pi ~ Dirichlet(a) gives the Dirichlet-multinomial probability of the label sequence,
``log p(y) = lgamma(A) - lgamma(A + N) + sum_k [lgamma(a_k + N_k) - lgamma(a_k)]``
(A = sum_k a_k); a fixed ``class_prior`` gives sum_k N_k log pi_k. The feature term is
the family's ``log_evidence`` hook (each family's docstring gives its formula; MixedNB
sums its parts), from the weighted statistics (weights are replication counts; missing
entries of the factorised families are integrated out). It is returned as a density of
X in the user's units, ``log p(Z) - sum_j W_j log s_j`` (frame z = (x - c) / s, W_j the
weighted number of observed entries of feature j). Which methods and families have it,
and what data-dependent priors mean for it: the user guide, *Comparing models*.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.special import gammaln

from bayesgen.inference.fitted import as_fit


def log_marginal_likelihood(estimator, X: Any = None, y: Any = None,
                            sample_weight: Any = None) -> float:
    """log p(X, y) of the training data under the prior (see the module docstring).

    ``X``, ``y`` (and ``sample_weight``): the training rows, needed only by count
    features (MultinomialNB's multinomial coefficient, PoissonNB's log x!, MixedNB with
    such parts) when the fit did not keep them (:mod:`bayesgen.inference.rows`). When
    given, they must be the training rows (their statistics are checked against the
    fit's, :func:`bayesgen.inference.rows.check_statistics`), else ``ValueError``.
    """
    fit = estimator.fitted_  # NotFittedError before fit
    check_supported(estimator)
    family, stats, prior = fit.family, fit.stats, fit.prior
    cache: list = []

    def rows() -> tuple:  # read (and checked) once, only if a family needs them
        if not cache:
            from bayesgen.inference.rows import training_rows

            data = training_rows(
                estimator, X, y, sample_weight,
                what="the marginal likelihood of the training rows",
                how="log_marginal_likelihood(X, y)")
            cache.append((data.X, data.weights))
        return cache[0]

    if X is not None or y is not None or sample_weight is not None:
        rows()  # rows given are the training rows, whether or not a family needs them
    features = family.log_evidence(stats, prior, rows, method=estimator.method_,
                                   who=type(estimator).__name__)
    return float(label_term(fit) + features)


def check_supported(estimator) -> None:
    """``ValueError`` saying why this fitted estimator has no closed-form evidence, as
    far as the fit (not the family: its ``log_evidence`` says) decides."""
    who = type(estimator).__name__
    if getattr(estimator, "n_unlabeled_", 0):
        raise ValueError(
            f"{who} was fitted with {estimator.n_unlabeled_} unlabeled rows: its marginal "
            "likelihood (a sum over their classes) has no closed form."
        )
    if estimator.method_ == "mle":
        raise ValueError(
            f"{who} fitted with method='mle' has no prior, hence no marginal likelihood; "
            "fit with method='conjugate' (or 'map') and the same hyper-parameters."
        )


def label_term(fit) -> float:
    """log p(y) of a :class:`bayesgen.inference.fitted.Fit`: Dirichlet-multinomial of the
    label sequence, or sum_k N_k log pi_k for a fixed ``class_prior``."""
    fit = as_fit(fit)
    counts = fit.class_count
    fixed = fit.fixed_pi
    if fixed is not None:
        with np.errstate(divide="ignore"):
            log_pi = np.log(fixed)
        return float(np.sum(np.where(counts > 0, counts * log_pi, 0.0)))
    a = fit.class_alpha
    return float(gammaln(a.sum()) - gammaln(a.sum() + counts.sum())
                 + np.sum(gammaln(a + counts) - gammaln(a)))
