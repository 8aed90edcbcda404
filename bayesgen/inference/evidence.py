"""Exact marginal likelihood (evidence) log p(X, y) of the conjugate families.

The evidence of the training data under the prior, every parameter integrated out::

    log p(X, y) = log p(y) + sum_k log p(X_k | y)          X_k: the rows of class k

**Labels.** pi ~ Dirichlet(a) gives the Dirichlet-multinomial probability of the label
*sequence* (no multinomial coefficient)::

    log p(y) = lgamma(A) - lgamma(A + N) + sum_k [lgamma(a_k + N_k) - lgamma(a_k)]

with A = sum_k a_k, N = sum_k N_k. A fixed ``class_prior`` pi (not a random variable)
gives the categorical log-likelihood sum_k N_k log pi_k.

**Features**: the family's ``log_evidence`` hook (:mod:`bayesgen.families.protocol`),
per class k (and feature j for the factorised families), from the sufficient
statistics and the posterior hyper-parameters (subscript n):

- GaussianNB, Normal-Inverse-Gamma(m0, kappa0, a0, b0)::

      lgamma(a_n) - lgamma(a0) + a0 log b0 - a_n log b_n + log(kappa0 / kappa_n) / 2
      - N_kj log(2 pi) / 2

- LDA / QDA, Normal-Inverse-Wishart:
  :func:`bayesgen.families.mvn.niw_evidence.log_marginal_likelihood` (one Gamma_d /
  determinant ratio per class for QDA, one shared for LDA);
- BernoulliNB, Beta(alpha_j, alpha_j)::

      log B(alpha + c_kj, alpha + N_kj - c_kj) - log B(alpha, alpha)

- MultinomialNB, Dirichlet(alpha): ``log B(alpha + c_k) - log B(alpha)`` plus, per row,
  the multinomial coefficient ``log T_n! - sum_j log x_nj!`` (T_n the row total), the
  same convention as ``predict_joint_log_proba`` (which includes it), so that the
  evidence is the product of one-step-ahead predictive densities of the rows;
- CategoricalNB, Dirichlet(alpha_j) over the C_j categories of feature j::

      lgamma(C_j alpha_j) - lgamma(C_j alpha_j + N_kj)
      + sum_c [lgamma(alpha_j + c_kjc) - lgamma(alpha_j)]

- PoissonNB, Gamma(alpha_j, beta_j)::

      alpha log beta - lgamma(alpha) + lgamma(alpha + S_kj) - (alpha + S_kj) log(beta + N_kj)
      - sum_n log x_nj!

- MixedNB: the sum of its parts (the parts have independent priors).

**Sample weights** are replication counts: a row of weight w counts as w copies (the
formulas above with weighted N_k, c_kj, S_kj; non-integer weights extend them
continuously). **Missing entries** (factorised families): a missing x_nj is integrated
out, so the evidence is that of the observed entries, exact (N_kj is then the weighted
number of observed entries). LDA/QDA with missing entries have no closed form
(``ValueError``).

**Units.** The families work in the internal frame z = (x - c) / s
(:mod:`bayesgen.data.frame`); the evidence is returned as a density of X in the user's units,
``log p(Z) - sum_j W_j log s_j`` with W_j the weighted number of observed entries of
feature j, so that models are comparable whatever their frames: rescaling feature j by
a > 0 shifts the evidence by exactly ``-W_j log a``.

**Priors.** The evidence is that of the resolved prior ``_prior``. Data-dependent
defaults (GaussianNB / LDA / QDA prior means and variances, PoissonNB's rate) and
``cov_dof="auto"`` (the nu0 maximising this very evidence: type-II maximum likelihood)
make it an empirical-Bayes evidence, slightly optimistic; fix the priors for a strict
comparison.

**Methods.** Defined for ``"conjugate"``, ``"map"`` and ``"mcmc"`` (the same conjugate
prior, whatever the fit); ``"mle"`` has no prior (``ValueError``), nor has an ``"mcmc"``
fit of LDA/QDA with ``cov_prior_form="lkj"`` a conjugate one; KernelNB (and MixedNB
with a kernel part) has no closed form.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.special import gammaln

from bayesgen.inference import classprior
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
    fixed = classprior.fixed_of(fit)
    if fixed is not None:
        with np.errstate(divide="ignore"):
            log_pi = np.log(fixed)
        return float(np.sum(np.where(counts > 0, counts * log_pi, 0.0)))
    a = fit.class_alpha
    return float(gammaln(a.sum()) - gammaln(a.sum() + counts.sum())
                 + np.sum(gammaln(a + counts) - gammaln(a)))
