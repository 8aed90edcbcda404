"""Independent count features (Poisson naive Bayes) with a Gamma prior on the rates.

Model, per class k and feature j::

    lambda_kj ~ Gamma(alpha, beta_j)       (shape alpha, rate beta_j)
    x_nj | y_n = k ~ Poisson(lambda_kj)

with beta_j = (alpha - 1) / r_j, which puts the prior mode at r_j (``rate_prior``;
default the overall weighted mean of feature j, floored at 0.5 / max(N, 1) with N
the total weight, so that an all-zero feature keeps a positive, finite prior mode).
Sufficient statistics per class: weighted count N_k and sums S_kj = sum_n w_n x_nj.

- MLE: lambda = S_kj / N_k
- MAP: lambda = (S_kj + alpha - 1) / (N_k + beta_j)   (alpha = 1 gives the MLE)
- posterior: lambda_kj | data ~ Gamma(S_kj + alpha, N_k + beta_j)

alpha >= 1 is required (beta_j >= 0). Non-negative real values are accepted by every
method: the Gamma posterior is defined for real x (kernel rate^x exp(-rate)), and the
negative-binomial predictive writes x! as Gamma(x + 1) (for real x a kernel, as the
averaged draws are); only the generative ``model_`` needs whole numbers. X may be
scipy.sparse (CSR):
every computation then touches only the non-zeros (``log x!`` via ``X.data``).
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from scipy.special import gammaln

from bayesgen.data import missing, sparse
from bayesgen.data.validation import check_counts
from bayesgen.families import conjugate, masked
from bayesgen.families import dirichlet as dr
from bayesgen.families.gaussian_stats import resolve_vector
from bayesgen.families.protocol import Capabilities
from bayesgen.families.semi_hooks import UnlabeledHooks
from bayesgen.utils.heavy import import_pymc

WHO = "PoissonNB"


class PoissonFamily(dr.GammaRates, conjugate.Hooks, UnlabeledHooks):
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

    # ------------------------------------------------------------------ data
    def check_X(self, X: np.ndarray, *, method: str, who: str) -> np.ndarray:
        """Non-negative values; whole numbers for posterior methods (sparse X: its
        stored values, duplicates summed first)."""
        return check_counts(sparse.canonical(X), method, who)

    def stats(self, X: np.ndarray, y: np.ndarray, w: np.ndarray, n_classes: int) -> dict:
        """Weighted class counts N_k (K,) and feature sums ``R^T X`` (K, d).

        With missing entries (NaN) also ``observed`` N_kj (K, d), the weighted number of
        observed entries, which replaces N_k below. Raises ``ValueError`` naming
        ``sample_weight`` if a weighted sum overflows.
        """
        return masked.count_stats(X, y, w, n_classes, WHO)

    def merge(self, a: dict, b: dict) -> dict:
        """Statistics of the union of two disjoint data sets (sums)."""
        return masked.add_count_stats(a, b)

    # ----------------------------------------------------------------- prior
    def prior(self, stats: dict, *, record: bool = True) -> dict:
        """Gamma shape ``alpha`` (d,) and rate ``beta`` = (alpha - 1) / r (d,).

        r_j is ``rate_prior`` or the overall mean sum_k S_kj / N, floored at
        0.5 / max(N, 1) (half an event in the data set; bounded for tiny weights).
        """
        s = stats["feature_count"]
        d = s.shape[1]
        alpha = dr.check_gamma_shape(self.alpha, d, WHO)
        seen = np.broadcast_to(missing.observed_count(stats), s.shape).sum(axis=0)
        mean = np.maximum(s.sum(axis=0) / seen, 0.5 / np.maximum(seen, 1.0))
        rate = resolve_vector(self.rate_prior, d, "rate_prior", mean)
        if np.any(rate <= 0):
            raise ValueError(f"rate_prior must be > 0 for every feature; got {self.rate_prior!r}.")
        return {"alpha": alpha, "beta": (alpha - 1.0) / rate}

    def prior_uses_data(self) -> bool:
        """Whether the prior rate is the data's mean rate (``rate_prior`` None)."""
        return self.rate_prior is None

    # -------------------------------------------------------------- estimates
    def mle(self, stats: dict) -> dict:
        """lambda = S_kj / N_k (0 for a feature that is always 0 in class k); N_kj, the
        observed count, with missing entries."""
        n = missing.observed_count(stats)
        missing.require_observed(np.broadcast_to(n, stats["feature_count"].shape),
                                 self.labels, WHO)
        return {"rate": dr.mode(stats["feature_count"], n, self.labels, WHO)}

    def map(self, stats: dict, prior: dict) -> dict:
        """lambda = (S_kj + alpha - 1) / (N_k + beta_j)."""
        numer = stats["feature_count"] + (prior["alpha"] - 1.0)
        denom = missing.observed_count(stats) + prior["beta"]
        return {"rate": dr.mode(numer, denom, self.labels, WHO)}

    def posterior(self, stats: dict, prior: dict) -> dict:
        """Gamma posterior shape ``a = S + alpha`` and rate ``b = N_k + beta``, (K, d)."""
        s = stats["feature_count"]
        b = missing.observed_count(stats) + prior["beta"]
        return {"a": s + prior["alpha"], "b": np.broadcast_to(b, s.shape).copy()}

    def draw(self, post: dict, size: int, rng: np.random.Generator) -> dict:
        """``size`` i.i.d. posterior draws ``rate`` = Gamma(a) / b, (size, K, d)."""
        shape = (size, *post["a"].shape)
        return {"rate": rng.standard_gamma(post["a"], size=shape) / post["b"]}

    # ------------------------------------------ predictive, evidence, LOO
    def algebra(self, post: dict) -> conjugate.Entrywise:
        """:class:`GammaPoisson` (negative binomial predictive): the closed-form hooks
        of :class:`.conjugate.Hooks` (the evidence reads the training rows for its
        ``-sum_n w_n log x_n!``)."""
        return ALGEBRA

    def natural_prior(self, prior: dict) -> dict:
        """The Gamma(alpha, beta) prior as a posterior ``{"a", "b"}`` without data."""
        return {"a": prior["alpha"], "b": prior["beta"]}

    @staticmethod
    def _log_factorials(X) -> np.ndarray:
        """sum_j log(x_nj!) per row, (n,); sparse X via its non-zeros."""
        return log_factorials(X)

    # ------------------------------------------------------------ likelihood
    def log_lik(self, X: np.ndarray, params: dict, *, full: bool = True) -> np.ndarray:
        """sum_j [x log lambda - lambda - log(x!)] for every row and class.

        Parameters
        ----------
        X : ndarray of shape (n, d), non-negative counts
        params : dict
            ``rate`` of shape (..., K, d); leading dims are posterior draws.
        full : bool
            True includes ``-sum_j gammaln(x_nj + 1)`` (then equal to the sum of
            ``scipy.stats.poisson.logpmf``); False drops it (equal across classes).

        Returns
        -------
        ndarray of shape (..., n, K)
            ``X @ log(lambda).T - sum_j lambda_kj``: one matrix product (sparse x dense
            for sparse X). ``-inf`` where x_nj > 0 for a rate 0 (MLE); 0 log 0 counts
            as 0. Raises ``ValueError`` if X is so large that a value overflows. A
            missing x_nj (NaN) drops its term (x = 0 and the rate summed over the
            observed features only).
        """
        rate = params["rate"]
        M = missing.mask(X)
        if M is not None:
            X = missing.filled(X)
        out, impossible = dr.log_prob_parts(X, rate)
        with np.errstate(over="ignore", invalid="ignore"):  # see check_overflow
            out -= (rate.sum(axis=-1)[..., None, :] if M is None
                    else masked.observed_matmul(M, rate))
            if full:
                out -= self._log_factorials(X)[:, None]
        dr.check_overflow(out, X, WHO)
        if impossible is not None:
            out[impossible] = -np.inf
        return out

    def sample(self, params: dict, y: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """One count vector per row given class ``y`` (n,) and per-row params (n, K, d).

        Rates above numpy's Poisson limit (about 9.2e18) are sampled from the normal
        approximation N(rate, rate), rounded (see :func:`_dirichlet.poisson`).
        """
        rate = params["rate"][np.arange(y.shape[0]), y]
        return dr.poisson(rate, rng)

    def attributes(self, params: dict) -> dict:
        """``rate_`` lambda (K, d)."""
        return {"rate_": params["rate"]}

    def stats_attributes(self, stats: dict) -> dict:
        """``feature_count_`` (K, d): the weighted feature counts of the fit."""
        return {"feature_count_": stats["feature_count"]}

    # ------------------------------------------------------------------ PyMC
    def pymc_observed(self, params: dict, X, y, *, prefix: str = "", dims: dict | None = None):
        """Observed rows: ``x_nj ~ Poisson(rate[y_n, j])``, dims (obs, feature).

        Raises ``ValueError`` if X holds non-integer values (allowed for point methods).
        Missing entries (NaN) are integrated out: the sum over the observed entries, x
        float64 (see :mod:`bayesgen.families.pymc_gaps`).
        """
        pm = import_pymc()

        from bayesgen.families import pymc_gaps

        feature = (dims or self.param_dims)["rate"][1]
        dense = sparse.dense_for_pymc(X, WHO)
        if pymc_gaps.has_gaps(dense):
            pymc_gaps.check_whole(np.asarray(dense, dtype=np.float64), WHO)
            pymc_gaps.observed("poisson", f"{prefix}x", [params["rate"][y]], dense,
                                ("obs", feature))
            return
        pm.Poisson(
            f"{prefix}x", mu=params["rate"][y], observed=dr.observed_counts(X, WHO),
            dims=("obs", feature),
        )

    def pymc_stats_loglik(self, params: dict, stats: dict):
        """sum_kj [S_kj log rate_kj - N_k rate_kj]: the Poisson log-likelihood of all
        (weighted) rows from the sums, without -sum log(x!) (free of the rates)."""
        import pytensor.tensor as pt

        rate = params["rate"]
        n = missing.observed_count(stats)
        return pt.sum(stats["feature_count"] * pt.log(rate) - n * rate)


def log_factorials(X) -> np.ndarray:
    """sum_j log(x_nj!) per row, (n,); sparse X via its non-zeros."""
    if sparse.is_sparse(X):
        return sparse.row_sum_of(X, gammaln(X.data + 1.0))
    return gammaln(X + 1.0).sum(axis=1)


class GammaPoisson(conjugate.Entrywise):
    """The Gamma-Poisson algebra: t(x) = (x, 1) added to the Gamma posterior (shape a,
    rate b), log z = lgamma(a) - a log b, h(x) = 1 / x!, so that the predictive of an
    entry is the negative binomial::

        step(x) = R(a, x) - a log1p(1 / b) - x log1p(b)

    with R(a, x) = lgamma(a + x) - lgamma(a) (:func:`bayesgen.utils.logspace.log_rising`,
    accurate for huge a)."""

    who = WHO
    needs_rows = True

    def t(self, x: np.ndarray) -> dict:
        return {"a": x, "b": np.ones_like(x)}

    def log_z(self, post: dict) -> np.ndarray:
        return conjugate.gamma_log_z(post["a"], post["b"])

    def step(self, post: dict, x: np.ndarray) -> np.ndarray:
        a, b = post["a"], post["b"]
        return conjugate.log_rising(a, x) - a * np.log1p(1.0 / b) - x * np.log1p(b)

    def loo_step(self, post: dict, x: np.ndarray, w: np.ndarray) -> np.ndarray:
        return self.step({"a": post["a"] - w * x, "b": post["b"] - w}, x)

    def log_h(self, X) -> np.ndarray:
        return -log_factorials(X)


ALGEBRA = GammaPoisson()
