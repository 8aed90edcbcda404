"""Exact marginal likelihood (evidence) log p(X, y) of the conjugate families.

The evidence of the training data under the prior, every parameter integrated out::

    log p(X, y) = log p(y) + sum_k log p(X_k | y)          X_k: the rows of class k

**Labels.** pi ~ Dirichlet(a) gives the Dirichlet-multinomial probability of the label
*sequence* (no multinomial coefficient)::

    log p(y) = lgamma(A) - lgamma(A + N) + sum_k [lgamma(a_k + N_k) - lgamma(a_k)]

with A = sum_k a_k, N = sum_k N_k. A fixed ``class_prior`` pi (not a random variable)
gives the categorical log-likelihood sum_k N_k log pi_k.

**Features**, per class k (and feature j for the factorised families), from the
sufficient statistics and the posterior hyper-parameters (subscript n):

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

- ExponentialNB, Gamma(alpha_j, beta_j), posterior Gamma(a, b) (no rows needed)::

      alpha log beta - lgamma(alpha) + lgamma(a) - a log b

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

**Priors.** The evidence is that of the resolved prior ``prior_``. Data-dependent
defaults (GaussianNB / LDA / QDA prior means and variances, PoissonNB's rate) and
``cov_dof="auto"`` (the nu0 maximising this very evidence: type-II maximum likelihood)
make it an empirical-Bayes evidence, slightly optimistic; fix the priors for a strict
comparison.

**Methods.** Defined for ``"conjugate"``, ``"map"`` and ``"mcmc"`` (the same conjugate
prior, whatever the fit); ``"mle"`` has no prior (``ValueError``), nor has an ``"mcmc"``
fit of LDA/QDA with ``covariance_prior="lkj"`` a conjugate one; KernelNB (and MixedNB
with a kernel part) has no closed form.
"""

from __future__ import annotations

import numpy as np
from scipy.special import betaln, gammaln
from sklearn.utils.validation import check_is_fitted

from bayesgen.data import missing, sparse
from bayesgen.inference import classprior

LOG_2PI = float(np.log(2.0 * np.pi))


def log_marginal_likelihood(estimator) -> float:
    """log p(X, y) of the training data under the prior (see the module docstring)."""
    check_is_fitted(estimator, "params_")
    check_supported(estimator)
    family, stats, prior = estimator.family_, estimator.stats_, estimator.prior_
    rows = _training_rows(estimator)
    value = label_term(estimator) + _features(family, stats, prior, rows, estimator)
    return float(value - _jacobian(family, stats))


def check_supported(estimator) -> None:
    """``ValueError`` saying why this fitted estimator has no closed-form evidence."""
    who = type(estimator).__name__
    if getattr(estimator, "n_unlabeled_", 0):
        raise ValueError(
            f"{who} was fitted with {estimator.n_unlabeled_} unlabelled rows: its marginal "
            "likelihood (a sum over their classes) has no closed form."
        )
    if estimator.method == "mle":
        raise ValueError(
            f"{who} fitted with method='mle' has no prior, hence no marginal likelihood; "
            "fit with method='conjugate' (or 'map') and the same hyper-parameters."
        )
    _check_family(estimator.family_, estimator.method, who)


def _check_family(family, method: str, who: str) -> None:
    if family.name == "kernel":
        raise ValueError(
            f"{who}: KernelNB has no closed-form marginal likelihood (its bandwidth prior "
            "is not conjugate); compare it by LOO (bg.compare(..., ic='loo'))."
        )
    if family.name == "mixed":
        for part in family.parts_:
            _check_family(part["family"], method, f"{who} part {part['prefix']}")
    if family.name == "mvn":
        if method == "mcmc" and family.covariance_prior != "niw":
            raise ValueError(
                f"{who} was sampled with covariance_prior={family.covariance_prior!r}, "
                "which is not conjugate: no closed-form marginal likelihood. Use "
                "covariance_prior='niw'."
            )


def label_term(estimator) -> float:
    """log p(y): Dirichlet-multinomial of the label sequence, or sum_k N_k log pi_k for a
    fixed ``class_prior``."""
    counts = estimator.class_count_
    fixed = classprior.fixed_of(estimator)
    if fixed is not None:
        with np.errstate(divide="ignore"):
            log_pi = np.log(fixed)
        return float(np.sum(np.where(counts > 0, counts * log_pi, 0.0)))
    a = estimator.class_alpha_
    return float(gammaln(a.sum()) - gammaln(a.sum() + counts.sum())
                 + np.sum(gammaln(a + counts) - gammaln(a)))


def _training_rows(estimator):
    """(X, w) of the training rows (X after the family's checks), or None."""
    train = getattr(estimator, "_train", None)
    if train is None:
        return None
    from bayesgen.inference import exact_loo

    return train[0], exact_loo.training_weights(estimator)


def _need_rows(rows, who: str):
    if rows is None:
        raise ValueError(
            f"{who}'s marginal likelihood needs the training rows (the multinomial "
            "coefficient / log x! terms), which a model fitted by partial_fit, bg.merge or "
            "from Dask input does not keep; fit it once on all rows."
        )
    return rows


def _features(family, stats: dict, prior: dict, rows, estimator) -> float:
    """sum_k log p(Z_k | y) in the internal frame."""
    name = family.name
    if name == "mixed":
        total = 0.0
        for part, s, p in zip(family.parts_, stats["parts"], prior["parts"], strict=True):
            sub = None if rows is None else (rows[0][:, part["columns"]], rows[1])
            total += _features(part["family"], s, p, sub, estimator)
        return total
    if name == "mvn":
        if "groups" in stats:
            raise ValueError(
                f"{'LDA' if family.tied else 'QDA'} fitted with missing entries has no "
                "closed-form marginal likelihood (the Normal-Inverse-Wishart evidence of "
                "incomplete rows is not conjugate)."
            )
        from bayesgen.families.mvn.niw_evidence import log_marginal_likelihood as niw

        return niw(stats, prior, tied=family.tied)
    if name == "exponential":
        return family.log_evidence(stats, prior)
    post = family.posterior(stats, prior)
    if name == "gaussian":
        n = np.broadcast_to(missing.observed_count(stats), post["m"].shape)
        return float(np.sum(
            gammaln(post["a"]) - gammaln(prior["a0"]) + prior["a0"] * np.log(prior["b0"])
            - post["a"] * np.log(post["b"]) + 0.5 * np.log(prior["kappa0"] / post["kappa"])
            - 0.5 * n * LOG_2PI))
    if name == "bernoulli":
        alpha = prior["alpha"]
        return float(np.sum(betaln(post["a"], post["b"]) - betaln(alpha, alpha)))
    if name == "categorical":
        conc, alpha = post["concentration"], prior["alpha"]
        n_cat = prior["n_categories"]
        valid = np.arange(conc.shape[-1]) < n_cat[:, None]  # (d, Cmax)
        per_cat = np.where(valid, gammaln(np.where(valid, conc, 1.0))
                           - gammaln(alpha)[:, None], 0.0)
        return float(np.sum(gammaln(n_cat * alpha) - gammaln(conc.sum(axis=-1)))
                     + np.sum(per_cat))
    if name == "multinomial":
        conc, alpha = post["concentration"], prior["alpha"]
        X, w = _need_rows(rows, "MultinomialNB")
        coefficient = family._coefficient(X, sparse.row_sum(X))
        return float(np.sum(gammaln(alpha.sum()) - gammaln(conc.sum(axis=1)))
                     + np.sum(gammaln(conc) - gammaln(alpha)) + w @ coefficient)
    if name == "poisson":
        alpha, beta = prior["alpha"], prior["beta"]
        X, w = _need_rows(rows, "PoissonNB")
        log_fact = family._log_factorials(missing.filled(X))
        return float(np.sum(alpha * np.log(beta) - gammaln(alpha) + gammaln(post["a"])
                            - post["a"] * np.log(post["b"])) - w @ log_fact)
    raise ValueError(f"The {name!r} family has no closed-form marginal likelihood.")


def _jacobian(family, stats: dict) -> float:
    """sum_j W_j log s_j: the frame's Jacobian over the weighted observed entries."""
    if family.name == "mixed":
        return sum(_jacobian(q["family"], s)
                   for q, s in zip(family.parts_, stats["parts"], strict=True))
    frame = getattr(family, "frame", None)
    if frame is None:
        return 0.0
    log_s = np.log(frame.scale)
    if family.name == "mvn":
        return float(stats["count"].sum() * log_s.sum())
    n = np.broadcast_to(missing.observed_count(stats), stats["mean"].shape)
    return float(n.sum(axis=0) @ log_s)
