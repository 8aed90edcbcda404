"""Helpers shared by the discrete families (Beta, Dirichlet and Gamma priors).

The MAP of a Dirichlet(alpha) over m outcomes with counts c and total T is
theta = (c + alpha - 1) / (T + sum(alpha - 1)) (alpha = 1: the MLE; the Beta is m = 2),
inside the simplex only for alpha >= 1; the posterior Dirichlet(c + alpha) needs
alpha > 0. :func:`log_prob_parts` computes ``X @ log(p).T`` with 0 log 0 = 0 and
x log 0 = -inf without NaN or warnings. Overflowing statistics and log-likelihoods
raise ``ValueError`` naming ``sample_weight`` or X (:func:`check_stats`,
:func:`check_overflow`); :func:`poisson` samples beyond numpy's limit. Dense or
scipy.sparse (CSR) X throughout."""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.special import logsumexp, xlogy

from bayesgen.data import missing, sparse
from bayesgen.data.validation import check_concentration, check_finite
from bayesgen.families.conjugate import check_overflow as check_overflow  # re-exported
from bayesgen.families.gaussian_stats import label, one_hot
from bayesgen.utils.logspace import log_rising as log_rising  # re-exported
from bayesgen.utils.threads import one_blas_thread

#: :func:`poisson` uses numpy's exact sampler up to this mean, the normal approximation
#: above (numpy refuses means above about 9.2e18, and its draws are already too
#: dispersed from about 1e15: measured variance / mean 1.05 at 1e15, 1.4 at 1e16)
POISSON_EXACT_MAX = 1e12


def check_alpha(alpha: Any, d: int) -> np.ndarray:
    """``alpha`` as a finite, positive vector of shape (d,) (scalar or one per feature)."""
    return check_concentration(alpha, d, "alpha", "feature")


def check_gamma_shape(alpha: Any, d: int, who: str) -> np.ndarray:
    """``alpha`` as the Gamma prior's shape, a vector (d,) with every entry >= 1
    (alpha = 1 is the MLE); ``ValueError`` naming ``who`` otherwise."""
    alpha = check_alpha(alpha, d)
    if np.any(alpha < 1):
        raise ValueError(
            f"{who} needs alpha >= 1 (Gamma shape; alpha = 1 is the MLE); got "
            f"min(alpha) = {float(alpha.min()):g}."
        )
    return alpha


def require_mode_alpha(alpha: np.ndarray, who: str) -> None:
    """Raise ``ValueError`` unless alpha >= 1 (the MAP is then inside the simplex)."""
    if np.any(alpha < 1):
        raise ValueError(
            f"{who} method='map' needs alpha >= 1 (alpha = 1 is the MLE, 2 Laplace "
            f"smoothing); got min(alpha) = {float(alpha.min()):g}, for which the posterior "
            "mode lies on the boundary. Use alpha >= 1 or method='conjugate'."
        )


def mode(numer: np.ndarray, denom: np.ndarray, labels: np.ndarray | None, who: str) -> np.ndarray:
    """``numer / denom`` for a posterior mode or MLE; ``denom`` (K, ...) must be > 0.

    A zero denominator means a class with no data (zero weighted count, or no counts
    at all for a multinomial) and alpha = 1: the MLE is then undefined.
    """
    bad = ~(denom > 0)
    if bad.any():
        k = np.argwhere(bad)[0][0]
        raise ValueError(
            f"{who}: class {label(labels, k)} has no data (zero total count), so its "
            "maximum-likelihood probabilities are undefined. Use method='map' with "
            "alpha > 1 (smoothing)."
        )
    out = numer / denom
    if not np.all(np.isfinite(out)):
        raise ValueError(
            f"{who}: the estimated probabilities or rates overflow float64 (a tiny "
            "weighted class count next to huge feature sums). Rescale sample_weight "
            "(a common factor leaves the MLE unchanged) or X."
        )
    return out


def log_prob_parts(X, p: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """``X @ log(p).T`` with log 0 replaced by 0, (..., n, K), and the mask of the
    impossible entries (some x_nj > 0 at p_kj = 0; None without zeros), which callers set
    to -inf after :func:`check_overflow`."""
    zero = p <= 0
    with np.errstate(over="ignore", invalid="ignore"):  # see check_overflow
        if not zero.any():
            log = sparse.log_t if sparse.is_sparse(X) else np.log
            return sparse.matmul_t(X, log(p)), None
        with np.errstate(divide="ignore"):
            logp = np.where(zero, 0.0, np.log(np.where(zero, 1.0, p)))
        return sparse.matmul_t(X, logp), sparse.matmul_t(X, zero.astype(np.float64)) > 0


def poisson(mean: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Poisson draws (float64) of any finite mean.

    numpy's sampler raises "lam value too large" above about 9.2e18 and is inaccurate
    from about 1e15. Means above :data:`POISSON_EXACT_MAX` (1e12) are drawn from the
    normal approximation N(mean, mean), rounded to integers (clipped at 0): its error,
    of order the skewness mean^(-1/2) <= 1e-6, is negligible there. Smaller means use
    numpy's exact sampler, with the same random stream as ``rng.poisson``.
    """
    mean = np.asarray(mean, dtype=np.float64)
    if not np.all(np.isfinite(mean)):
        raise ValueError(
            "Cannot sample: a Poisson mean (rate, or mean row total x probability) "
            "overflows float64; the fitted model's counts are too large to simulate."
        )
    big = mean > POISSON_EXACT_MAX
    if not big.any():
        return rng.poisson(mean).astype(np.float64)
    out = rng.poisson(np.where(big, 0.0, mean)).astype(np.float64)
    m = mean[big]
    out[big] = np.maximum(np.round(rng.normal(m, np.sqrt(m))), 0.0)
    return out


def log_dirichlet(conc: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
    """Log of ``size`` i.i.d. Dirichlet draws along the last axis, (size, *conc.shape).

    Entries with concentration 0 are structural zeros (padding): their log is ``-inf``
    and they take no mass. The others use ``log G = log G' + log(U) / a`` with
    G' ~ Gamma(a + 1) and U ~ Uniform(0, 1] (Marsaglia & Tsang's boost), finite even
    for tiny a, then a log-sum-exp normalisation: no exact zeros, no NaN.
    """
    a = np.asarray(conc, dtype=np.float64)
    shape = (size, *a.shape)
    active = a > 0
    safe = np.where(active, a, 1.0)
    log_u = np.log1p(-rng.uniform(size=shape))
    log_g = np.log(rng.standard_gamma(safe + 1.0, size=shape)) + log_u / safe
    log_g = np.where(active, log_g, -np.inf)
    return log_g - logsumexp(log_g, axis=-1, keepdims=True)


def class_sums(X, y: np.ndarray, w: np.ndarray, n_classes: int, who: str) -> dict:
    """Weighted class counts N_k (K,) and per-class feature sums ``R^T X`` (K, d), with
    R (n, K) the weighted class indicators: the statistics of the Bernoulli,
    multinomial and Poisson families (one matrix product; a sparse one for sparse X).

    Raises ``ValueError`` (via :func:`check_stats`) if a sum overflows float64.
    """
    with np.errstate(over="ignore", invalid="ignore"):  # reported by check_stats
        if sparse.is_sparse(X):
            out = {
                "count": np.bincount(y, weights=w, minlength=n_classes),
                "feature_count": sparse.class_sums(X, y, w, n_classes),
            }
        else:
            R = one_hot(y, w, n_classes)
            with one_blas_thread():  # memory-bound (K rows): see bayesgen.utils.threads
                out = {"count": R.sum(axis=0), "feature_count": R.T @ X}
    return check_stats(out, X, who)


def check_stats(stats: dict, X, who: str) -> dict:
    """Return ``stats`` if every array in it is finite, else raise ``ValueError``.

    inf in X is reported as such; otherwise the weighted sums overflowed float64
    (sample_weight or X too large), which names ``sample_weight``.
    """
    with np.errstate(over="ignore"):
        total = np.sum(stats["count"])  # N, the total weight (class prior)
    if np.isfinite(total) and all(np.all(np.isfinite(v)) for v in stats.values()):
        return stats
    data = sparse.values(X)
    if not np.all(np.isfinite(data)):  # NaN or inf in X, reported as such
        check_finite(data, who)
    raise ValueError(
        f"{who}: the weighted statistics (sums of sample_weight and of sample_weight "
        "x X per class) overflow float64 (> 1.8e308). Rescale sample_weight (e.g. divide "
        "it by its maximum: a common factor leaves the MLE unchanged) or X."
    )


def observed_counts(X: np.ndarray, who: str) -> np.ndarray:
    """``X`` as int64 counts for a PyMC observed variable (``model_``).

    Raises ``ValueError`` if X holds non-integer values (term weights, which the point
    methods accept): a multinomial or Poisson likelihood is only defined on counts.
    """
    from bayesgen.families.pymc_gaps import check_whole

    X = np.asarray(sparse.dense_for_pymc(X, who), dtype=np.float64)
    check_whole(X, who)
    return X.astype(np.int64)


def observe_entries(family, dist: str, key: str, params: dict, X, y, prefix: str,
                    dims: dict | None) -> None:
    """``x_nj ~ dist(params[key][y_n, j])`` (``dist`` "Bernoulli", "Poisson" or
    "Exponential"), dims (obs, feature); a missing entry is integrated out
    (:mod:`bayesgen.families.pymc_gaps`); counts must be whole numbers (``ValueError``)."""
    from bayesgen.families import pymc_gaps
    from bayesgen.utils.heavy import import_pymc

    pm = import_pymc()
    feature = (dims or family.param_dims)[key][1]
    X = np.asarray(sparse.dense_for_pymc(X, family.who), dtype=np.float64)
    value, counts = params[key][y], dist != "Exponential"
    if counts:
        pymc_gaps.check_whole(X, family.who)
    if pymc_gaps.has_gaps(X):
        pymc_gaps.observed(dist.lower(), f"{prefix}x", [value], X, ("obs", feature))
        return
    observed = X.astype(np.int64) if counts else X
    first = {"Bernoulli": "p", "Poisson": "mu", "Exponential": "lam"}[dist]
    getattr(pm, dist)(f"{prefix}x", **{first: value}, observed=observed, dims=("obs", feature))


class FixedAlpha:
    """The prior of BernoulliNB and MultinomialNB: ``alpha`` (d,), whatever the rows."""

    def prior(self, stats: dict, *, record: bool = True) -> dict:
        """``{"alpha": (d,)}``, validated (finite, > 0, scalar or one per feature)."""
        return {"alpha": check_alpha(self.alpha, stats["feature_count"].shape[1])}

    def prior_uses_data(self) -> bool:
        """False: the prior is ``alpha``, whatever the rows."""
        return False


class GammaRates:
    """The Gamma(alpha_j, beta_j) prior on positive rates ``rate`` (K, d) that PoissonNB
    and ExponentialNB share (``prior`` holds ``alpha`` and ``beta``, (d,)).

    The likelihood of the rate of (k, j) is rate^a exp(-rate b) with the statistics
    ``(a, b) = gamma_stats(stats)`` (Poisson: the sum of counts and the observed weight;
    exponential: the observed weight and the sum of durations), so MLE a / b, MAP
    (a + alpha - 1) / (b + beta), posterior Gamma(a + alpha, b + beta) and the PyMC
    statistics log-likelihood sum a log rate - b rate are written once here; a family
    gives ``gamma_stats`` and ``_rate(numer, denom, method)`` (numer / denom with its
    messages) and ``_beta`` (the prior rate from the pooled statistics)."""

    #: the estimator's name, for messages
    who: str
    #: what sets the prior's scale once alpha > 1, for the message of an improper prior
    scale_hint: str

    def prior(self, stats: dict, *, record: bool = True) -> dict:
        """Gamma shape ``alpha`` (d,) >= 1 and rate ``beta`` (d,) = ``_beta(alpha, S, N)``,
        from the feature sums S_j and observed weights N_j over all classes (d,)."""
        s = stats["feature_count"]
        alpha = check_gamma_shape(self.alpha, s.shape[1], self.who)
        seen = np.broadcast_to(missing.observed_count(stats), s.shape).sum(axis=0)
        return {"alpha": alpha, "beta": self._beta(alpha, s.sum(axis=0), seen)}

    def mle(self, stats: dict) -> dict:
        """rate = a / b (``ValueError`` for a feature never observed in a class)."""
        a, b = self.gamma_stats(stats)
        missing.require_observed(np.broadcast_to(missing.observed_count(stats), a.shape),
                                 self.labels, self.who,
                                 names=getattr(self, "feature_names", None))
        return {"rate": self._rate(a, b, "mle")}

    def map(self, stats: dict, prior: dict) -> dict:
        """rate = (a + alpha - 1) / (b + beta), the mode of the posterior Gamma."""
        a, b = self.gamma_stats(stats)
        return {"rate": self._rate(a + (prior["alpha"] - 1.0), b + prior["beta"], "map")}

    def posterior(self, stats: dict, prior: dict) -> dict:
        """Gamma posterior shape ``a + alpha`` and rate ``b + beta``, each (K, d)."""
        a, b = self.gamma_stats(stats)
        return self._proper({"a": a + prior["alpha"], "b": b + prior["beta"]})

    def _proper(self, post: dict) -> dict:
        """``post`` (a family may refuse an improper posterior)."""
        return post

    def pymc_stats_loglik(self, params: dict, stats: dict):
        """sum_kj [a_kj log rate_kj - b_kj rate_kj] (without terms free of the rates)."""
        import pytensor.tensor as pt

        a, b = self.gamma_stats(stats)
        return pt.sum(a * pt.log(params["rate"]) - b * params["rate"])

    def draw(self, post: dict, size: int, rng: np.random.Generator) -> dict:
        """``size`` posterior draws ``rate`` = Gamma(a) / b, (size, K, d)."""
        return {"rate": rng.standard_gamma(post["a"], size=(size, *post["a"].shape))
                / post["b"]}

    def natural_prior(self, prior: dict) -> dict:
        """The Gamma(alpha, beta) prior as a posterior ``{"a", "b"}`` without data."""
        return {"a": prior["alpha"], "b": prior["beta"]}

    def attributes(self, params: dict) -> dict:
        """``rate_`` lambda (K, d)."""
        return {"rate_": params["rate"]}

    def log_prior(self, params: dict, prior: dict) -> float:
        """log p(rate) up to a constant under Gamma(alpha, beta), whose mode with the
        likelihood ``map`` is: sum_kj (alpha_j - 1) log rate_kj - beta_j rate_kj."""
        rate = params["rate"]
        return float(np.sum(xlogy(prior["alpha"] - 1.0, rate) - prior["beta"] * rate))

    def pymc_params(self, prior: dict, *, prefix: str = "", dims: dict | None = None) -> dict:
        """``rate ~ Gamma(alpha_j, beta_j)`` (class, feature) in the current PyMC model;
        ``ValueError`` for the improper alpha = 1 (beta = 0)."""
        from bayesgen.utils.heavy import import_pymc

        pm = import_pymc()
        dims = dims or self.param_dims
        alpha, beta = prior["alpha"], prior["beta"]
        if np.any(beta <= 0):
            raise ValueError(
                f"{self.who} with alpha = 1 has the improper flat prior Gamma(1, 0) on the "
                "rates, which MAP and the conjugate posterior allow but a PyMC model "
                "(model_, method='mcmc') cannot. Use alpha > 1 (e.g. the default 2) for a "
                f"proper prior; {self.scale_hint}."
            )
        return {"rate": pm.Gamma(f"{prefix}rate", alpha=alpha, beta=beta, dims=dims["rate"])}
