"""Independent binary features (Bernoulli naive Bayes) with a Beta(alpha, alpha) prior.

Model, per class k and feature j::

    theta_kj ~ Beta(alpha_j, alpha_j)
    x_nj | y_n = k ~ Bernoulli(theta_kj)

Sufficient statistics per class: weighted count N_k and weighted number of ones
c_kj = sum_n w_n x_nj (``feature_count``).

- MLE: theta = c / N_k
- MAP: theta = (c + alpha - 1) / (N_k + 2 (alpha - 1))  (scikit-learn's additive
  alpha = a is alpha = a + 1 here)
- posterior: theta | data ~ Beta(c + alpha, N_k - c + alpha)

X may be scipy.sparse (CSR): the log-likelihood is then
``X @ (log theta - log(1 - theta))^T + sum_j log(1 - theta)`` on the non-zeros, and
``binarize`` thresholds the stored values (so it must be >= 0 for sparse X).
"""

from __future__ import annotations

import numbers
from typing import Any, ClassVar

import numpy as np
from scipy.special import betaln, xlogy

from bayesgen.data import missing, sparse
from bayesgen.data.validation import check_binary, check_nonnegative
from bayesgen.families import conjugate, masked
from bayesgen.families import dirichlet as dr
from bayesgen.families.protocol import Capabilities
from bayesgen.families.semi_hooks import UnlabeledHooks
from bayesgen.utils.heavy import import_pymc

WHO = "BernoulliNB"


class BernoulliFamily(masked.CountStats, dr.FixedAlpha, conjugate.Hooks, UnlabeledHooks):
    """Factorised Bernoulli likelihood with a Beta(alpha, alpha) prior per class/feature.

    Parameters
    ----------
    alpha : float or array-like of shape (d,)
        Beta concentration (> 0; >= 1 for MAP). 1 is the MLE, 2 Laplace smoothing.
    binarize : float or None, default 0.0
        A number t: x > t becomes 1, else 0 (then negative values are allowed); 0.0 is
        scikit-learn's default. None: X must hold only 0 and 1.
    """

    name = "bernoulli"
    who = WHO
    param_dims: ClassVar[dict[str, tuple[str, ...]]] = {"theta": ("class", "feature")}
    positive_only = True
    #: scipy.sparse X (CSR) in every method, never densified; NaN in X is a missing
    #: value, integrated out (:mod:`bayesgen.families.masked`)
    capabilities = Capabilities(missing=True, sparse=True, poor_score=True)

    def __init__(self, *, alpha: Any = 2.0, binarize: Any = 0.0) -> None:
        self.alpha = alpha
        self.binarize = binarize
        self.positive_only = binarize is None
        self.labels: np.ndarray | None = None

    # ------------------------------------------------------------------ data
    def check_X(self, X: np.ndarray, *, method: str, who: str) -> np.ndarray:
        """Threshold X at ``binarize``, or require it to hold only 0 and 1 (sparse X:
        its stored values; a negative threshold would densify it: ``ValueError``)."""
        X = sparse.canonical(X)
        if self.binarize is None:
            check_nonnegative(X, who)
            check_binary(X, who)
            return X
        t = self.binarize
        if isinstance(t, bool) or not isinstance(t, numbers.Real) or not np.isfinite(t):
            raise ValueError(f"binarize must be None or a finite number; got {t!r}.")
        if sparse.is_sparse(X):
            if t < 0:
                raise ValueError(
                    f"{who}: binarize={t!r} < 0 would make every implicit zero of the "
                    "sparse X a 1 (a dense matrix). Use binarize >= 0, or X.toarray()."
                )
            return sparse.with_data(X, _threshold(X.data, t))
        return _threshold(X, t)

    # -------------------------------------------------------------- estimates
    def mle(self, stats: dict) -> dict:
        """theta = c / N_k (0 or 1 where a feature is constant within a class)."""
        n = missing.observed_count(stats)
        missing.require_observed(np.broadcast_to(n, stats["feature_count"].shape),
                                 self.labels, WHO)
        return {"theta": dr.mode(stats["feature_count"], n, self.labels, WHO)}

    def map(self, stats: dict, prior: dict) -> dict:
        """theta = (c + alpha - 1) / (N_k + 2 (alpha - 1)), needs alpha >= 1."""
        alpha = prior["alpha"]
        dr.require_mode_alpha(alpha, WHO)
        numer = stats["feature_count"] + (alpha - 1.0)
        denom = missing.observed_count(stats) + 2.0 * (alpha - 1.0)
        return {"theta": dr.mode(numer, denom, self.labels, WHO)}

    def log_prior(self, params: dict, prior: dict) -> float:
        """sum_kj (alpha_j - 1) (log theta_kj + log(1 - theta_kj)): log p(theta) up to a
        constant (0 where alpha_j = 1, also at theta 0 or 1)."""
        theta, a = params["theta"], prior["alpha"] - 1.0
        return float(np.sum(xlogy(a, theta) + xlogy(a, 1.0 - theta)))

    def posterior(self, stats: dict, prior: dict) -> dict:
        """Beta posterior ``a = c + alpha``, ``b = N_k - c + alpha``, each (K, d)."""
        c, alpha = stats["feature_count"], prior["alpha"]
        # max(., 0) guards against rounding of weighted sums (c <= N_k exactly).
        b = np.maximum(missing.observed_count(stats) - c, 0.0) + alpha
        return {"a": c + alpha, "b": b}

    def draw(self, post: dict, size: int, rng: np.random.Generator) -> dict:
        """``size`` i.i.d. posterior draws ``theta`` (size, K, d): Beta(a, b) as a
        two-outcome Dirichlet."""
        log_theta = dr.log_dirichlet(np.stack([post["a"], post["b"]], axis=-1), size, rng)
        return {"theta": np.exp(log_theta[..., 0])}

    # ------------------------------------------ predictive, evidence, LOO
    def algebra(self, post: dict) -> conjugate.Entrywise:
        """:class:`BetaBernoulli`: the closed-form hooks of :class:`.conjugate.Hooks`."""
        return ALGEBRA

    def natural_prior(self, prior: dict) -> dict:
        """The Beta(alpha, alpha) prior as a posterior ``{"a", "b"}`` without data."""
        return {"a": prior["alpha"], "b": prior["alpha"]}

    # ------------------------------------------------------------ likelihood
    def log_lik(self, X: np.ndarray, params: dict, *, full: bool = True) -> np.ndarray:
        """sum_j [x log theta + (1 - x) log(1 - theta)], (..., n, K) for ``theta``
        (..., K, d): ``X @ (log theta - log(1 - theta)).T + O @ log(1 - theta).T`` (O the
        observed indicator; a missing entry drops its term), one product for dense or sparse X,
        never forming 1 - X; ``-inf`` where theta = 0 and x = 1 or theta = 1 and x = 0.
        ``full`` is ignored (no term is equal across classes)."""
        M = missing.mask(X)
        if M is not None:
            X = missing.filled(X)
        theta = params["theta"]
        zero, one = theta <= 0, theta >= 1
        with np.errstate(divide="ignore"):
            log_p = np.where(zero, 0.0, np.log(np.where(zero, 1.0, theta)))
            log_q = np.where(one, 0.0, np.log1p(-np.where(one, 0.0, theta)))
        out = sparse.matmul_t(X, log_p - log_q)
        if M is None:
            out += log_q.sum(axis=-1)[..., None, :]
        else:
            out += masked.observed_matmul(M, log_q)
        impossible = None
        if zero.any():  # x = 1 where theta = 0
            impossible = sparse.matmul_t(X, zero.astype(np.float64)) > 0.5
        if one.any():  # x = 0 where theta = 1: (number of theta = 1) - (ones among them)
            n_one = (one.sum(axis=-1)[..., None, :] if M is None
                     else masked.observed_matmul(M, one.astype(np.float64)))
            lacking = n_one - sparse.matmul_t(X, one.astype(np.float64)) > 0.5
            impossible = lacking if impossible is None else impossible | lacking
        if impossible is not None:
            out[impossible] = -np.inf
        return out

    def sample(self, params: dict, y: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """One binary x per row given class ``y`` (n,) and per-row params (n, K, d)."""
        theta = params["theta"][np.arange(y.shape[0]), y]
        return (rng.uniform(size=theta.shape) < theta).astype(np.float64)

    def attributes(self, params: dict) -> dict:
        """``feature_log_prob_`` = log theta (K, d)."""
        return {"feature_log_prob_": sparse.log_t(params["theta"])}

    # ------------------------------------------------------------------ PyMC
    def pymc_params(self, prior: dict, *, prefix: str = "", dims: dict | None = None) -> dict:
        """``theta ~ Beta(alpha_j, alpha_j)`` (class, feature) in the current PyMC model."""
        pm = import_pymc()

        dims = dims or self.param_dims
        alpha = prior["alpha"]
        theta = pm.Beta(f"{prefix}theta", alpha=alpha, beta=alpha, dims=dims["theta"])
        return {"theta": theta}

    def pymc_observed(self, params: dict, X, y, *, prefix: str = "", dims: dict | None = None):
        """``x_nj ~ Bernoulli(theta[y_n, j])`` (:func:`.dirichlet.observe_entries`)."""
        dr.observe_entries(self, "Bernoulli", "theta", params, X, y, prefix, dims)

    def pymc_stats_loglik(self, params: dict, stats: dict):
        """sum_kj [c_kj log theta_kj + (N_k - c_kj) log(1 - theta_kj)] (exact)."""
        import pytensor.tensor as pt

        c = stats["feature_count"]
        # max(., 0) guards against rounding of weighted sums (c <= N_k exactly).
        zeros = np.maximum(missing.observed_count(stats) - c, 0.0)
        theta = params["theta"]
        return pt.sum(c * pt.log(theta) + zeros * pt.log1p(-theta))


def _threshold(values: np.ndarray, t: float) -> np.ndarray:
    """1.0 where values > t, else 0.0; NaN (a missing value) stays NaN."""
    return np.where(np.isnan(values), np.nan, (values > t).astype(np.float64))


class BetaBernoulli(conjugate.Entrywise):
    """The Beta-Bernoulli algebra: t(x) = (x, 1 - x), log z = log B(a, b); the entry's
    predictive ``x log a + (1 - x) log b - log(a + b)``, tabulated at x = 0 and 1."""

    who = WHO
    tabled = True
    binary = True

    def t(self, x: np.ndarray) -> dict:
        return {"a": x, "b": 1.0 - x}

    def log_z(self, post: dict) -> np.ndarray:
        return betaln(post["a"], post["b"])

    def step(self, post: dict, x: np.ndarray) -> np.ndarray:
        a, b = post["a"], post["b"]
        return np.where(x > 0, np.log(a), np.log(b)) - np.log(a + b)

    def loo_step(self, post: dict, x: np.ndarray, w: np.ndarray) -> np.ndarray:
        a, b = post["a"], post["b"]
        return np.log(np.where(x > 0, a, b) - w) - np.log(a + b - w)

    def table(self, post: dict) -> np.ndarray:
        a, b = post["a"], post["b"]
        log_ab = np.log(a + b)
        return np.stack([np.log(b) - log_ab, np.log(a) - log_ab], axis=-1)


ALGEBRA = BetaBernoulli()
