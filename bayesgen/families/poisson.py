"""Independent count features (Poisson naive Bayes) with a Gamma prior on the rates.

Model, per class k and feature j::

    lambda_kj ~ Gamma(alpha, beta_j)       (shape alpha, rate beta_j)
    x_nj | y_n = k ~ Poisson(lambda_kj)

with beta_j = (alpha - 1) / r_j, which puts the prior mode at r_j (``rate_prior``;
default the overall weighted mean of feature j, floored at 0.5 / max(N, 1)).
Statistics: N_k and S_kj = sum_n w_n x_nj. MLE S / N; MAP (S + alpha - 1) / (N + beta);
posterior Gamma(S + alpha, N + beta); the predictive is negative binomial
(:class:`GammaPoisson`). alpha >= 1. Non-negative real values are accepted (x! as
Gamma(x + 1)); only the generative ``model_`` needs whole numbers. Sparse X (CSR):
only the non-zeros are touched."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from scipy.special import gammaln

from bayesgen.data import missing, sparse
from bayesgen.families import conjugate, masked
from bayesgen.families import dirichlet as dr
from bayesgen.families.gaussian_stats import resolve_vector
from bayesgen.families.protocol import Capabilities
from bayesgen.families.semi_hooks import UnlabeledHooks

WHO = "PoissonNB"


class PoissonFamily(masked.CountStats, dr.GammaRates, conjugate.Hooks, UnlabeledHooks):
    """Factorised Poisson likelihood with a Gamma prior per class/feature.

    Parameters
    ----------
    alpha : float or array-like of shape (d,)
        Gamma shape, >= 1: alpha - 1 pseudo-counts at the prior rate (1 is the MLE).
    rate_prior : float, array-like of shape (d,) or None
        Prior mode r_j > 0 of the rates; None = overall weighted feature means.
    """

    name = "poisson"
    who = WHO
    scale_hint = "rate_prior then sets its mode"
    param_dims: ClassVar[dict[str, tuple[str, ...]]] = {"rate": ("class", "feature")}
    positive_only = True
    #: scipy.sparse X (CSR) in every method, never densified; check_nonnegative's
    #: ``X.min()`` pass also catches -inf and scans for NaN (see the estimator base; +inf
    #: is caught from the statistics or scores); NaN in X is a missing value, integrated
    #: out (:mod:`bayesgen.families.masked`)
    capabilities = Capabilities(missing=True, sparse=True, support_check_finds_nan=True)

    def __init__(self, *, alpha: Any = 2.0, rate_prior: Any = None) -> None:
        self.alpha = alpha
        self.rate_prior = rate_prior
        self.labels: np.ndarray | None = None

    # ----------------------------------------------------------------- prior
    def _beta(self, alpha: np.ndarray, total: np.ndarray, seen: np.ndarray) -> np.ndarray:
        """beta = (alpha - 1) / r (d,): the prior mode of the rates at r_j, ``rate_prior``
        or the overall mean S_j / N_j, floored at 0.5 / max(N_j, 1) (half an event in the
        data set; bounded for tiny weights)."""
        mean = np.maximum(total / seen, 0.5 / np.maximum(seen, 1.0))
        rate = resolve_vector(self.rate_prior, alpha.size, "rate_prior", mean)
        if np.any(rate <= 0):
            raise ValueError(f"rate_prior must be > 0 for every feature; got {self.rate_prior!r}.")
        return (alpha - 1.0) / rate

    def prior_uses_data(self) -> bool:
        """Whether the prior rate is the data's mean rate (``rate_prior`` None)."""
        return self.rate_prior is None

    # -------------------------------------------------------------- estimates
    def gamma_stats(self, stats: dict) -> tuple[np.ndarray, np.ndarray]:
        """(S, N): the feature sums S_kj and observed weights N_kj (K, d) (Poisson
        likelihood rate^S exp(-N rate))."""
        s = stats["feature_count"]
        return s, np.broadcast_to(missing.observed_count(stats), s.shape)

    def _rate(self, numer: np.ndarray, denom: np.ndarray, method: str) -> np.ndarray:
        """:func:`.dirichlet.mode`."""
        return dr.mode(numer, denom, self.labels, WHO)

    # ------------------------------------------ predictive, evidence, LOO
    def algebra(self, post: dict) -> conjugate.Entrywise:
        """:class:`GammaPoisson` (negative binomial predictive)."""
        return ALGEBRA

    # ------------------------------------------------------------ likelihood
    def log_lik(self, X: np.ndarray, params: dict, *, full: bool = True) -> np.ndarray:
        """sum_j [x log lambda - lambda - log(x!)], (..., n, K) for ``rate`` (..., K, d):
        ``X @ log(lambda).T - sum_j lambda_kj`` (one product, sparse or dense); ``full=False``
        drops ``-sum_j log(x_nj!)``; a missing entry drops its term; ``-inf`` where x > 0 at a
        rate 0; ``ValueError`` on overflow."""
        rate = params["rate"]
        M = missing.mask(X)
        if M is not None:
            X = missing.filled(X)
        out, impossible = dr.log_prob_parts(X, rate)
        with np.errstate(over="ignore", invalid="ignore"):  # see check_overflow
            out -= (rate.sum(axis=-1)[..., None, :] if M is None
                    else masked.observed_matmul(M, rate))
            if full:
                out -= log_factorials(X)[:, None]
        dr.check_overflow(out, X, WHO)
        if impossible is not None:
            out[impossible] = -np.inf
        return out

    def sample(self, params: dict, y: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """One count vector per row (:func:`dirichlet.poisson`: normal approximation
        above numpy's limit)."""
        rate = params["rate"][np.arange(y.shape[0]), y]
        return dr.poisson(rate, rng)

    # ------------------------------------------------------------------ PyMC
    def pymc_observed(self, params: dict, X, y, *, prefix: str = "", dims: dict | None = None):
        """``x_nj ~ Poisson(rate[y_n, j])`` (:func:`.dirichlet.observe_entries`)."""
        dr.observe_entries(self, "Poisson", "rate", params, X, y, prefix, dims)


def log_factorials(X) -> np.ndarray:
    """sum_j log(x_nj!) per row, (n,); sparse X via its non-zeros."""
    if sparse.is_sparse(X):
        return sparse.row_sum_of(X, gammaln(X.data + 1.0))
    return gammaln(X + 1.0).sum(axis=1)


class GammaPoisson(conjugate.Entrywise):
    """The Gamma-Poisson algebra: t(x) = (x, 1), log z = lgamma(a) - a log b,
    h(x) = 1 / x!; the entry's predictive is the negative binomial
    ``R(a, x) - a log1p(1 / b) - x log1p(b)``, R the log rising factorial."""

    who = WHO
    needs_rows = True

    def t(self, x: np.ndarray) -> dict:
        return {"a": x, "b": np.ones_like(x)}

    def log_z(self, post: dict) -> np.ndarray:
        return conjugate.gamma_log_z(post["a"], post["b"])

    def step(self, post: dict, x: np.ndarray) -> np.ndarray:
        a, b = post["a"], post["b"]
        return conjugate.log_rising(a, x) - a * np.log1p(1.0 / b) - x * np.log1p(b)

    def log_h(self, X) -> np.ndarray:
        return -log_factorials(X)


ALGEBRA = GammaPoisson()
