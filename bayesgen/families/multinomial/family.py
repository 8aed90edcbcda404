"""Feature counts (multinomial naive Bayes) with a Dirichlet(alpha) prior per class.

Model, per class k over the d features::

    theta_k ~ Dirichlet(alpha_1, ..., alpha_d)
    x_n | y_n = k ~ Multinomial(sum_j x_nj, theta_k)

Statistics: N_k and c_kj = sum_n w_n x_nj (``R^T X``), T_k = sum_j c_kj. MLE c / T;
MAP (c + alpha - 1) / (T + sum_j (alpha_j - 1)); posterior Dirichlet(c_k + alpha); the
predictive is the Dirichlet-multinomial (:class:`DirichletMultinomial`).

Missing counts (NaN): with the row total unknown, read the counts as independent
Poisson(lambda theta_kj) with a row exposure lambda integrated out under d lambda /
lambda; what is left is, up to a factor free of theta and k::

    p(x_O | y = k) = Multinomial(x_O; n_O, theta_kO / s_kO),   s_kO = sum_{j in O} theta_kj

(theta renormalised over the observed words; the conjugate predictive is the
Dirichlet-multinomial over them). Predictions are exact for every method. Fitting
is exact too, but the factor s_kO^(-n_O) couples the words, so the statistics keep
the (class, pattern) totals and :mod:`bayesgen.families.multinomial.missing` fits them
by EM (``mle``/``map``), data augmentation (``conjugate``) or NUTS.

Non-negative real values (tf-idf) are accepted, as in scikit-learn (x! as Gamma(x + 1),
a kernel); only the generative ``model_`` needs integers. Sparse X (CSR): only the
non-zeros are touched."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from scipy.special import gammaln, xlogy

from bayesgen.data import missing, sparse
from bayesgen.families import conjugate, masked
from bayesgen.families import dirichlet as dr
from bayesgen.families.multinomial import missing as mm
from bayesgen.families.poisson import log_factorials
from bayesgen.families.protocol import Capabilities
from bayesgen.families.semi_hooks import UnlabeledHooks
from bayesgen.utils.heavy import import_pymc
from bayesgen.utils.logspace import log_mean_exp

WHO = "MultinomialNB"


class MultinomialFamily(masked.CountStats, dr.FixedAlpha, conjugate.Hooks, UnlabeledHooks):
    """Multinomial likelihood over the feature counts with a Dirichlet prior per class.

    Parameters
    ----------
    alpha : float or array-like of shape (d,)
        Dirichlet concentration (> 0; >= 1 for MAP). 1 is the MLE, 2 Laplace smoothing."""

    name = "multinomial"
    param_dims: ClassVar[dict[str, tuple[str, ...]]] = {"theta": ("class", "feature")}
    positive_only = True
    #: scipy.sparse X (CSR) in every method, never densified; check_nonnegative's
    #: ``X.min()`` pass also rejects NaN (see the estimator base); NaN in X is a missing
    #: count, integrated out exactly at fit (EM, data augmentation, NUTS on pattern
    #: statistics) and at predict (renormalised theta)
    capabilities = Capabilities(missing=True, sparse=True, support_check_finds_nan=True,
                                poor_score=True, augmentation=True)

    def __init__(self, *, alpha: Any = 2.0) -> None:
        self.alpha = alpha
        self.labels: np.ndarray | None = None

    # ------------------------------------------------------------------ data
    def stats(self, X: np.ndarray, y: np.ndarray, w: np.ndarray, n_classes: int) -> dict:
        """Weighted class counts N_k (K,) and feature counts ``R^T X`` (K, d); missing
        counts: also ``observed`` and the (class, pattern) ``groups`` (:func:`.missing.stats`)."""
        if missing.has_missing(X):
            return mm.stats(X, y, w, n_classes, WHO)
        return dr.class_sums(X, y, w, n_classes, WHO)

    def merge(self, a: dict, b: dict) -> dict:
        """Statistics of the union of two disjoint data sets (sums; groups by key)."""
        if "groups" in a or "groups" in b:
            return mm.merge(a, b)
        return masked.add_count_stats(a, b)

    # -------------------------------------------------------------- estimates
    def mle(self, stats: dict) -> dict:
        """theta_kj = c_kj / T_k (0 for a feature never seen in class k). Missing
        counts: EM (:func:`._multinomial_missing.em`), ``ValueError`` naming a class and
        feature the likelihood does not identify."""
        if "groups" in stats:
            mm.check_mle(stats, self.labels, WHO)
            return mm.em(self.labels, stats, None, WHO)
        c = stats["feature_count"]
        return {"theta": dr.mode(c, c.sum(axis=1, keepdims=True), self.labels, WHO)}

    def map(self, stats: dict, prior: dict) -> dict:
        """theta_kj = (c_kj + alpha_j - 1) / (T_k + sum_j (alpha_j - 1)), alpha >= 1."""
        alpha = prior["alpha"]
        dr.require_mode_alpha(alpha, WHO)
        if "groups" in stats:  # missing counts: EM
            return mm.em(self.labels, stats, prior, WHO)
        numer = stats["feature_count"] + (alpha - 1.0)
        return {"theta": dr.mode(numer, numer.sum(axis=1, keepdims=True), self.labels, WHO)}

    def log_prior(self, params: dict, prior: dict) -> float:
        """sum_kj (alpha_j - 1) log theta_kj: log p(theta) up to a constant."""
        return float(np.sum(xlogy(prior["alpha"] - 1.0, params["theta"])))

    def posterior(self, stats: dict, prior: dict) -> dict:
        """Dirichlet posterior concentration ``c_k + alpha``, (K, d); not with missing
        counts (no conjugate posterior: see :meth:`augment`)."""
        if "groups" in stats:
            raise ValueError(
                f"{WHO}: with missing counts in the training data the posterior of theta "
                "is not a Dirichlet, so it has no closed form (nor has the marginal "
                "likelihood or the exact LOO). MultinomialNB(method='conjugate') samples "
                "it by data augmentation; a MixedNB multinomial part with missing counts "
                "needs method='mcmc', 'map' or 'mle'."
            )
        return {"concentration": stats["feature_count"] + prior["alpha"]}

    def needs_augmentation(self, stats: dict) -> bool:
        """Missing counts: ``method="conjugate"`` runs data augmentation."""
        return "groups" in stats

    def can_augment_labels(self, stats: dict, Z_u) -> bool:
        """False with missing counts among the labeled rows (``stats``) or the
        unlabeled rows ``Z_u``: completing them inside the label augmentation would
        need the negative-binomial augmentation (:func:`.missing.augment`) in that loop."""
        return not (self.needs_augmentation(stats) or missing.has_missing(Z_u))

    augment = mm.augment

    def draw(self, post: dict, size: int, rng: np.random.Generator) -> dict:
        """``size`` i.i.d. posterior draws ``theta`` (size, K, d) (no exact zeros)."""
        return {"theta": np.exp(dr.log_dirichlet(post["concentration"], size, rng))}

    def log_predictive(self, X: np.ndarray, post: dict) -> np.ndarray:
        """:func:`.conjugate.log_predictive`; a data-augmentation stack (T, K, d): the
        mean of its T predictives (the T K posteriors scored as the classes of one call)."""
        c = post["concentration"]
        if c.ndim == 2:
            return conjugate.log_predictive(ALGEBRA, X, post)
        flat = conjugate.log_predictive(ALGEBRA, X, {"concentration": c.reshape(-1, c.shape[-1])})
        return log_mean_exp(flat.reshape(flat.shape[0], *c.shape[:2]), axis=1)

    def algebra(self, post: dict) -> conjugate.Entrywise:
        """:class:`DirichletMultinomial` (the evidence reads the rows' coefficients)."""
        return ALGEBRA

    def natural_prior(self, prior: dict) -> dict:
        """The Dirichlet(alpha) prior as a posterior ``{"concentration"}`` without data."""
        return {"concentration": prior["alpha"]}

    # ------------------------------------------------------------ likelihood
    def log_lik(self, X: np.ndarray, params: dict, *, full: bool = True) -> np.ndarray:
        """Multinomial log-pmf, (..., n, K) for ``theta`` (..., K, d): ``X @ log(theta).T``
        (one product, sparse or dense), plus the coefficient ``log n! - sum_j log x_j!`` when
        ``full``; ``-inf`` where x_j > 0 at theta_kj = 0; missing counts add ``-n_O log s_kO``
        (module docstring); ``ValueError`` on overflow."""
        M = missing.mask(X)
        if M is not None:
            X = missing.filled(X)
        out, impossible = dr.log_prob_parts(X, params["theta"])
        if M is not None:
            out, impossible = masked.renormalise(out, impossible, X, M, params["theta"])
        if full:
            with np.errstate(over="ignore", invalid="ignore"):  # see check_overflow
                out += _coefficient(X, sparse.row_sum(X))[:, None]
        dr.check_overflow(out, X, WHO)
        if impossible is not None:
            out[impossible] = -np.inf
        return out

    def sample(self, params: dict, y: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """One count vector per row: independent Poisson(m_k theta_kj), m_k = ``total``
        the class's mean row total (:meth:`sample_inputs`), which is Multinomial(total,
        theta_k) with a Poisson(m_k) total (Poisson splitting)."""
        rows = np.arange(y.shape[0])
        theta = params["theta"][rows, y]
        theta = theta / theta.sum(axis=1, keepdims=True)
        return dr.poisson(params["total"][rows, y][:, None] * theta, rng)

    def sample_inputs(self, stats: dict) -> dict:
        """``{"total": (K,)}``, the per-class mean row total T_k / N_k."""
        if "groups" in stats:
            return {"total": mm.mean_totals(stats)}
        n = stats["count"]
        return {"total": stats["feature_count"].sum(axis=1) / np.where(n > 0, n, 1.0)}

    def attributes(self, params: dict) -> dict:
        """``feature_log_prob_`` = log theta (K, d); after EM also ``n_iter_`` and
        ``em_objective_``."""
        out = {"feature_log_prob_": sparse.log_t(params["theta"])}
        if "n_iter" in params:
            out.update(n_iter_=int(params["n_iter"]), em_objective_=params["em_objective"])
        return out

    # ------------------------------------------------------------------ PyMC
    def pymc_params(self, prior: dict, *, prefix: str = "", dims: dict | None = None) -> dict:
        """``theta_k ~ Dirichlet(alpha)`` (class, feature) in the current PyMC model."""
        pm = import_pymc()

        dims = dims or self.param_dims
        theta = pm.Dirichlet(f"{prefix}theta", a=prior["alpha"], dims=dims["theta"])
        return {"theta": theta}

    def pymc_observed(self, params: dict, X, y, *, prefix: str = "", dims: dict | None = None):
        """``x_n ~ Multinomial(sum_j x_nj, theta[y_n])``, dims (obs, feature), the totals
        given; missing counts: theta renormalised over the observed features; ``ValueError``
        for non-integer X."""
        pm = import_pymc()

        feature = (dims or self.param_dims)["theta"][1]
        if not missing.has_missing(X):
            counts = dr.observed_counts(X, WHO)
            p = params["theta"][y]
        else:
            counts, seen = mm.observed_rows(X, WHO)
            p = params["theta"][y] * seen
            p = p / p.sum(axis=1, keepdims=True)
        pm.Multinomial(
            f"{prefix}x", n=counts.sum(axis=1), p=p, observed=counts,
            dims=("obs", feature),
        )

    def pymc_stats_loglik(self, params: dict, stats: dict):
        """sum_kj c_kj log theta_kj (without the coefficients), less the missing counts'
        renormalisation (:func:`.missing.stats_loglik`)."""
        return mm.stats_loglik(params, stats)


class DirichletMultinomial(conjugate.Entrywise):
    """The Dirichlet-multinomial algebra: t(x) = x, log Z = sum_j lgamma(a_j) - lgamma(A)
    (A over the observed features: :attr:`total`), h the multinomial coefficient::

        log p(x | a) = log n! - sum_j log x_j! + sum_j R(a_j, x_j) - R(A, n)

    R the log rising factorial (R(a, 0) = 0: sparse X visits only its non-zeros)."""

    who = WHO
    needs_rows = True
    total = "concentration"

    def t(self, x: np.ndarray) -> dict:
        return {"concentration": x}

    def log_z(self, post: dict) -> np.ndarray:
        return gammaln(post["concentration"])

    def step(self, post: dict, x: np.ndarray) -> np.ndarray:
        return conjugate.log_rising(post["concentration"], x)

    def total_log_z(self, total: np.ndarray) -> np.ndarray:
        return -gammaln(total)

    def total_step(self, total: np.ndarray, x_total: np.ndarray) -> np.ndarray:
        return -conjugate.log_rising(total, x_total)

    def log_h(self, X) -> np.ndarray:
        return _coefficient(X, sparse.row_sum(X))


ALGEBRA = DirichletMultinomial()


def _coefficient(X, total: np.ndarray) -> np.ndarray:
    """log(n!) - sum_j log(x_j!) per row, (n,)."""
    return gammaln(total + 1.0) - log_factorials(X)
