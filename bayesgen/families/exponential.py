"""Independent positive durations (exponential naive Bayes) with a Gamma prior on the rates.

Model, per class k and feature j::

    lambda_kj ~ Gamma(a0_j, b0_j)          (shape a0, rate b0)
    x_nj | y_n = k ~ Exponential(lambda_kj)     p(x) = lambda exp(-lambda x), x >= 0

with a0_j = ``alpha`` and b0_j = (alpha - 1) m_j: m_j (``mean_prior``) is the prior mean
of the mean duration 1 / lambda and 1 / the prior mode of the rate. The default m_j is
the weighted mean of the observed entries of feature j (1 where that is 0), so
rescaling a feature shifts every class's log-density equally.

Statistics: n_kj (observed weight) and s_kj = sum_n w_n x_nj (``feature_count``). MLE
n / s; MAP (a0 + n - 1) / (b0 + s); posterior Gamma(a0 + n, b0 + s); the predictive is
Lomax (:class:`GammaExponential`). alpha = 1 is the improper flat prior: MAP and the
posterior allow it, the evidence and PyMC do not. Missing entries (NaN) drop out."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from bayesgen.data import missing, sparse
from bayesgen.families import conjugate, masked
from bayesgen.families import dirichlet as dr
from bayesgen.families.gaussian_stats import label, resolve_vector
from bayesgen.families.protocol import Capabilities
from bayesgen.families.semi_hooks import UnlabeledHooks

WHO = "ExponentialNB"


class ExponentialFamily(masked.CountStats, dr.GammaRates, conjugate.Hooks, UnlabeledHooks):
    """Factorised exponential likelihood with a Gamma prior per class and feature.

    Parameters
    ----------
    alpha : float or array-like of shape (d,)
        Gamma shape a0 >= 1: alpha - 1 pseudo-observations at the prior mean duration
        (1 is the MLE; default 2, one pseudo-observation).
    mean_prior : float, array-like of shape (d,) or None
        Prior mean duration m_j > 0 per feature, b0 = (alpha - 1) m; None = the
        weighted mean of the observed entries of feature j over all classes.

    Attributes
    ----------
    feature_names : list of str or None
        Column names for error messages (set by the estimator; positions otherwise).
    """

    name = "exponential"
    who = WHO
    scale_hint = "mean_prior then sets its scale"
    param_dims: ClassVar[dict[str, tuple[str, ...]]] = {"rate": ("class", "feature")}
    positive_only = True
    #: NaN in X is a missing value, integrated out (:mod:`bayesgen.families.masked`);
    #: durations are continuous (predictive checks draw densities); the Gamma prior is
    #: conjugate, with closed-form evidence and exact LOO
    capabilities = Capabilities(missing=True, continuous=True)

    def __init__(self, *, alpha: Any = 2.0, mean_prior: Any = None) -> None:
        self.alpha = alpha
        self.mean_prior = mean_prior
        self.labels: np.ndarray | None = None
        self.feature_names: list[str] | None = None

    # ------------------------------------------------------------------ data
    def check_X(self, X: np.ndarray, *, method: str, who: str) -> np.ndarray:
        """Durations must be >= 0 (NaN, a missing value, passes); ``ValueError`` naming
        the first column with a negative value otherwise."""
        if X.size == 0:
            return X
        with np.errstate(invalid="ignore"):
            ok = X.min() >= 0 or not (X < 0).any()  # NaN propagates through min
        if not ok:
            j = int(np.flatnonzero((X < 0).any(axis=0))[0])
            raise ValueError(
                f"Negative values in data passed to {who}: feature "
                f"{missing.column_name(self.feature_names, j)} has values below 0 (min "
                f"{float(np.nanmin(X[:, j])):.6g}); an exponential likelihood models "
                "durations and waiting times, which must be >= 0."
            )
        return X

    def stats_attributes(self, stats: dict) -> dict:
        """None: the duration sums are no scikit-learn attribute."""
        return {}

    # ----------------------------------------------------------------- prior
    def _beta(self, alpha: np.ndarray, total: np.ndarray, seen: np.ndarray) -> np.ndarray:
        """b0 = (a0 - 1) m (d,), m_j ``mean_prior`` or the mean duration s_j / n_j."""
        with np.errstate(divide="ignore", invalid="ignore"):
            mean = np.where((seen > 0) & (total > 0), total / seen, 1.0)
        mean = resolve_vector(self.mean_prior, alpha.size, "mean_prior", mean)
        if not np.all((mean > 0) & np.isfinite(mean)):
            raise ValueError(
                f"mean_prior must be finite and > 0 for every feature; got {self.mean_prior!r}."
            )
        beta = (alpha - 1.0) * mean
        if not np.all(np.isfinite(beta)):
            raise ValueError(
                f"{WHO}: the prior rate (alpha - 1) * mean_prior overflows float64; give a "
                "smaller alpha or mean_prior."
            )
        return beta

    def prior_uses_data(self) -> bool:
        """Whether the prior mean duration is the data's (``mean_prior`` None)."""
        return self.mean_prior is None

    # -------------------------------------------------------------- estimates
    def _rate(self, numer: np.ndarray, denom: np.ndarray, method: str) -> np.ndarray:
        """numer / denom with a ``ValueError`` naming the (class, feature) where the
        rate is undefined (0 / 0) or infinite (every observed duration 0)."""
        numer, denom = np.broadcast_arrays(numer, denom)
        bad = ~(denom > 0)
        if bad.any():
            k, j = (int(i) for i in np.argwhere(bad)[0])
            feature = missing.column_name(self.feature_names, j)
            if numer[k, j] > 0:
                raise ValueError(
                    f"{WHO} method={method!r}: feature {feature} is 0 wherever observed in "
                    f"class {label(self.labels, k)}, so its rate is infinite. Use "
                    "method='map' with alpha > 1 (the prior mean duration keeps it finite)."
                )
            raise ValueError(
                f"{WHO} method={method!r}: class {label(self.labels, k)} has no observed "
                f"value of feature {feature}, so its rate is undefined. Use "
                "method='map' with alpha > 1, 'conjugate' or 'mcmc'."
            )
        with np.errstate(over="ignore"):
            rate = numer / denom
        if not np.all(np.isfinite(rate)):
            raise ValueError(
                f"{WHO}: the estimated rates overflow float64 (observed durations near 0 "
                "next to a large weighted count). Rescale X or sample_weight."
            )
        return rate

    def gamma_stats(self, stats: dict) -> tuple[np.ndarray, np.ndarray]:
        """(n, s): the observed weights n_kj and duration sums s_kj (K, d) (exponential
        likelihood rate^n exp(-s rate))."""
        s = stats["feature_count"]
        return np.broadcast_to(missing.observed_count(stats), s.shape), s

    def _proper(self, post: dict) -> dict:
        """``ValueError`` when a posterior rate b is not > 0 (alpha = 1, no positive duration)."""
        bad = ~(post["b"] > 0)
        if bad.any():
            k, j = (int(i) for i in np.argwhere(bad)[0])
            raise ValueError(
                f"{WHO}: with alpha = 1 (the flat prior Gamma(1, 0)) the posterior of the "
                f"rate of feature {missing.column_name(self.feature_names, j)} in class "
                f"{label(self.labels, k)} is improper (no positive observed duration). "
                "Use alpha > 1."
            )
        return post

    # ------------------------------------------------------------ likelihood
    def log_lik(self, X: np.ndarray, params: dict, *, full: bool = True) -> np.ndarray:
        """sum_j [log lambda_kj - lambda_kj x_nj], (..., n, K) for ``rate`` (..., K, d):
        ``O @ log(lambda).T - X @ lambda.T`` (a missing entry drops its term; ``full`` unused);
        ``ValueError`` on overflow."""
        rate = params["rate"]
        M = missing.mask(X)
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            log_rate = np.log(rate)
            if M is None:
                out = log_rate.sum(axis=-1)[..., None, :] - sparse.matmul_t(X, rate)
            else:
                out = (masked.observed_matmul(M, log_rate)
                       - sparse.matmul_t(np.where(M, 0.0, X), rate))
        return dr.check_overflow(np.asarray(out), X, WHO)

    def sample(self, params: dict, y: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """One duration vector per row given class ``y`` (n,) and per-row params (n, K, d)."""
        rate = params["rate"][np.arange(y.shape[0]), y]
        return rng.standard_exponential(rate.shape) / rate

    # ------------------------------------------ predictive, evidence, LOO
    def algebra(self, post: dict) -> conjugate.Entrywise:
        """:class:`GammaExponential` (Lomax predictive)."""
        return ALGEBRA

    # ------------------------------------------------------------------ PyMC
    def pymc_observed(self, params: dict, X, y, *, prefix: str = "", dims: dict | None = None):
        """``x_nj ~ Exponential(rate[y_n, j])`` (:func:`.dirichlet.observe_entries`)."""
        dr.observe_entries(self, "Exponential", "rate", params, X, y, prefix, dims)


class GammaExponential(conjugate.Entrywise):
    """The Gamma-exponential algebra: t(x) = (1, x), log z = lgamma(a) - a log b; the
    entry's predictive is the Lomax ``log a - log b - (a + 1) log1p(x / b)``."""

    who = WHO

    def t(self, x: np.ndarray) -> dict:
        return {"a": np.ones_like(x), "b": x}

    def log_z(self, post: dict) -> np.ndarray:
        return conjugate.gamma_log_z(post["a"], post["b"])

    def step(self, post: dict, x: np.ndarray) -> np.ndarray:
        a, b = post["a"], post["b"]
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.log(a) - np.log(b) - (a + 1.0) * np.log1p(x / b)


ALGEBRA = GammaExponential()
