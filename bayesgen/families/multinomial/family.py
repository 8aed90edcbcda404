"""Feature counts (multinomial naive Bayes) with a Dirichlet(alpha) prior per class.

Model, per class k over the d features::

    theta_k ~ Dirichlet(alpha_1, ..., alpha_d)
    x_n | y_n = k ~ Multinomial(sum_j x_nj, theta_k)

Sufficient statistics per class: weighted count N_k and feature counts
c_kj = sum_n w_n x_nj, computed as one matrix product ``R^T X`` with R the weighted
one-hot class matrix. With T_k = sum_j c_kj:

- MLE: theta_kj = c_kj / T_k
- MAP: theta_kj = (c_kj + alpha_j - 1) / (T_k + sum_j (alpha_j - 1)), i.e.
  (c + alpha - 1) / (T + d (alpha - 1)) for a scalar alpha
- posterior: theta_k | data ~ Dirichlet(c_k + alpha)

Missing counts (NaN). The marginal of the observed counts x_O of a row is not the
multinomial with the missing terms dropped: the row total n is unknown once a count
is missing. Read the counts as independent x_j ~ Poisson(lambda theta_kj) with a
row-specific exposure lambda (Poisson splitting: given n this is Multinomial(n,
theta_k)); the observed counts are Poisson(lambda theta_kj), j in O, and integrating
lambda out under the scale-invariant prior d lambda / lambda (or conditioning on the
observed total n_O) leaves, up to a factor free of theta and k::

    p(x_O | y = k) = Multinomial(x_O; n_O, theta_kO / s_kO),   s_kO = sum_{j in O} theta_kj

i.e. theta renormalised over the observed words: :meth:`MultinomialFamily.log_lik`
adds ``-n_O log s_kO`` to the observed terms, and the conjugate predictive is the
Dirichlet-multinomial over the observed words (the renormalised sub-vector of a
Dirichlet is Dirichlet(a_O)). Predictions are exact for every method. Fitting on rows
with missing counts is exact too, but the factor ``s_kO^(-n_O)`` of each such row
couples the words, so the Dirichlet prior is no longer conjugate: the statistics keep,
per (class, missingness pattern), the summed observed totals, and
:mod:`bayesgen.families.multinomial.missing` fits them by EM (``mle``/``map``, with
``n_iter_`` and ``em_objective_``), by data augmentation with an exact
negative-binomial/multinomial augmentation of the missing counts (``conjugate``) and
by NUTS on the exact likelihood written on those statistics (``mcmc``).

Non-negative real values (tf-idf term weights) are accepted by every method, as in
scikit-learn: the Dirichlet posterior is defined for real counts (the likelihood
kernel prod_j theta_kj^x_nj), and the closed-form predictive writes the multinomial
coefficient with Gamma(x + 1) (for real x a kernel, not a probability of x; the same
kernel the posterior draws average, so they agree). Only the generative ``model_``
(whole-number counts drawn) needs integers. X may be scipy.sparse
(CSR): statistics, log-likelihoods and predictive densities then touch only the
non-zeros (see :mod:`bayesgen.data.sparse`).
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from scipy.special import gammaln, xlogy

from bayesgen.data import missing, sparse
from bayesgen.data.validation import check_counts
from bayesgen.families import conjugate, masked
from bayesgen.families import dirichlet as dr
from bayesgen.families.multinomial import missing as mm
from bayesgen.families.protocol import Capabilities
from bayesgen.families.semi_hooks import UnlabeledHooks
from bayesgen.utils.heavy import import_pymc

WHO = "MultinomialNB"


class MultinomialFamily(dr.FixedAlpha, conjugate.Hooks, UnlabeledHooks):
    """Multinomial likelihood over the feature counts with a Dirichlet prior per class.

    Parameters
    ----------
    alpha : float or array-like of shape (d,)
        Dirichlet concentration (> 0; >= 1 for MAP). 1 is the MLE, 2 Laplace smoothing.

    Notes
    -----
    :meth:`stats_attributes` reports ``feature_count_`` from the fit's statistics and
    :meth:`sample_inputs` gives :meth:`sample` the per-class mean row total
    ``T_k / N_k`` from them.
    """

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
    def check_X(self, X: np.ndarray, *, method: str, who: str) -> np.ndarray:
        """Non-negative values; whole numbers for posterior methods (sparse X: its
        stored values, duplicates summed first)."""
        return check_counts(sparse.canonical(X), method, who)

    def stats(self, X: np.ndarray, y: np.ndarray, w: np.ndarray, n_classes: int) -> dict:
        """Weighted class counts N_k (K,) and feature counts ``R^T X`` (K, d).

        Raises ``ValueError`` naming ``sample_weight`` if a weighted sum overflows.
        Missing counts (NaN): also ``observed`` (K, d) and the (class, pattern)
        ``groups`` of :func:`._multinomial_missing.stats`.
        """
        if missing.has_missing(X):
            return mm.stats(X, y, w, n_classes, WHO)
        return dr.class_sums(X, y, w, n_classes, WHO)

    def merge(self, a: dict, b: dict) -> dict:
        """Statistics of the union of two disjoint data sets (sums; groups by key)."""
        if "groups" in a or "groups" in b:
            return mm.merge(a, b)
        return dr.add_stats(a, b)

    # ----------------------------------------------------------------- prior
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
        """log p(theta) up to a constant under Dirichlet(alpha), whose mode with the
        likelihood :meth:`map` is: sum_kj (alpha_j - 1) log theta_kj."""
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
        need the negative-binomial augmentation (:mod:`.augment`) in that loop."""
        return not (self.needs_augmentation(stats) or missing.has_missing(Z_u))

    def augment(self, stats: dict, prior: dict, **kwargs):
        """Data-augmentation posterior draws (:func:`._multinomial_augment.augment`)."""
        from bayesgen.families.multinomial import augment as _multinomial_augment

        return _multinomial_augment.augment(self, stats, prior, **kwargs)

    def draw(self, post: dict, size: int, rng: np.random.Generator) -> dict:
        """``size`` i.i.d. posterior draws ``theta`` (size, K, d) (no exact zeros)."""
        return {"theta": np.exp(dr.log_dirichlet(post["concentration"], size, rng))}

    def log_predictive(self, X: np.ndarray, post: dict) -> np.ndarray:
        """Closed-form posterior predictive log p(x | y=k, data), (n, K): the
        Dirichlet-multinomial of :class:`DirichletMultinomial`; missing counts (NaN):
        over the observed words (module docstring). A data-augmentation stack
        (T, K, d): the mean of its T predictives."""
        if post["concentration"].ndim == 3:
            from bayesgen.families.multinomial.augment import log_predictive_stack

            return log_predictive_stack(self, X, post)
        return conjugate.log_predictive(ALGEBRA, X, post)

    def algebra(self, post: dict) -> conjugate.Entrywise:
        """:class:`DirichletMultinomial`: the closed-form hooks of
        :class:`.conjugate.Hooks` (the evidence reads the training rows for their
        multinomial coefficients, as ``predict_joint_log_proba``, so that it is the
        product of the rows' one-step-ahead predictive densities)."""
        return ALGEBRA

    def natural_prior(self, prior: dict) -> dict:
        """The Dirichlet(alpha) prior as a posterior ``{"concentration"}`` without data."""
        return {"concentration": prior["alpha"]}

    # ------------------------------------------------------------ likelihood
    def log_lik(self, X: np.ndarray, params: dict, *, full: bool = True) -> np.ndarray:
        """Multinomial log-pmf of every row under every class.

        Parameters
        ----------
        X : ndarray of shape (n, d), non-negative counts
        params : dict
            ``theta`` of shape (..., K, d); leading dims are posterior draws.
        full : bool
            True adds the multinomial coefficient
            ``log(n_total!) - sum_j log(x_j!)`` (via ``gammaln``), so the result equals
            ``scipy.stats.multinomial.logpmf``; False drops it (equal across classes).

        Returns
        -------
        ndarray of shape (..., n, K)
            ``X @ log(theta).T`` (+ coefficient): one matrix product (sparse x dense
            for sparse X). ``-inf`` where a row has x_j > 0 for a theta_kj = 0 (MLE);
            0 log 0 counts as 0. Raises ``ValueError`` if X is so large that a value
            overflows float64. Missing counts (NaN): ``- n_O log(O @ theta.T)`` is
            added (theta renormalised over the observed words; module docstring), and
            the coefficient is over the observed counts.
        """
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
        """One count vector per row given class ``y`` (n,) and per-row params: ``theta``
        (n, K, d) and ``total`` (n, K), the mean row totals of :meth:`sample_inputs`.

        The multinomial needs a row total, which the model does not describe: each
        row's total is Poisson(m_k) with m_k = T_k / N_k, the mean row total of its class
        in the training data, and the counts given it Multinomial(total, theta_k). The
        counts are drawn directly as independent Poisson(m_k theta_kj), which is the
        same distribution (Poisson splitting) and, through
        :func:`_dirichlet.poisson`, works for any mean (a normal approximation beyond
        numpy's limit of about 9.2e18).
        """
        rows = np.arange(y.shape[0])
        theta = params["theta"][rows, y]
        theta = theta / theta.sum(axis=1, keepdims=True)
        return dr.poisson(params["total"][rows, y][:, None] * theta, rng)

    def sample_inputs(self, stats: dict) -> dict:
        """``{"total": (K,)}``, the per-class mean row total T_k / N_k of the fit's
        statistics, which :meth:`sample` draws the row totals from (missing counts:
        from each feature's mean per row observing it)."""
        if "groups" in stats:
            return {"total": mm.mean_totals(stats)}
        n = stats["count"]
        return {"total": stats["feature_count"].sum(axis=1) / np.where(n > 0, n, 1.0)}

    def attributes(self, params: dict) -> dict:
        """``feature_log_prob_`` = log theta (K, d) (computed once and reused by sparse
        predictions, see ``_sparse.log_t``); after EM (missing counts, ``mle``/``map``)
        its record, ``n_iter_`` and ``em_objective_``."""
        out = {"feature_log_prob_": sparse.log_t(params["theta"])}
        if "n_iter" in params:
            out.update(n_iter_=int(params["n_iter"]), em_objective_=params["em_objective"])
        return out

    def stats_attributes(self, stats: dict) -> dict:
        """``feature_count_`` (K, d): the weighted feature counts of the fit."""
        return {"feature_count_": stats["feature_count"]}

    # ------------------------------------------------------------------ PyMC
    def pymc_params(self, prior: dict, *, prefix: str = "", dims: dict | None = None) -> dict:
        """Dirichlet prior in the current PyMC model: ``theta_k ~ Dirichlet(alpha)``.

        One variable ``prefix + "theta"`` with dims ``dims["theta"]`` (class, feature):
        a batch of K Dirichlets over the d features (alpha (d,) shared by the classes);
        returns ``{"theta": ...}``.
        """
        pm = import_pymc()

        dims = dims or self.param_dims
        theta = pm.Dirichlet(f"{prefix}theta", a=prior["alpha"], dims=dims["theta"])
        return {"theta": theta}

    def pymc_observed(self, params: dict, X, y, *, prefix: str = "", dims: dict | None = None):
        """Observed rows: ``x_n ~ Multinomial(sum_j x_nj, theta[y_n])``, dims (obs, feature).

        The row totals are taken as given (the model does not describe them). Missing
        counts: the multinomial of the observed counts over the observed features,
        ``p = theta[y_n] O_n / (O_n theta[y_n])``, with 0 (probability 0) at the missing
        entries (module docstring). Raises ``ValueError`` if X holds non-integer term
        weights (allowed for point methods).
        """
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
        """sum_kj c_kj log theta_kj: the multinomial log-likelihood of all (weighted) rows
        from the feature counts, without the multinomial coefficients (free of theta).
        Missing counts: minus sum_g M_g log p_g over the (class, pattern) groups
        (:func:`._multinomial_missing.stats_loglik`)."""
        import pytensor.tensor as pt

        if "groups" in stats:
            return mm.stats_loglik(params, stats)

        return pt.sum(stats["feature_count"] * pt.log(params["theta"]))


class DirichletMultinomial(conjugate.Entrywise):
    """The Dirichlet-multinomial algebra: t(x) = x added to the concentration a (K, d),
    log Z = sum_j lgamma(a_j) - lgamma(A) (A = sum_j a_j over the observed features:
    the coupling :attr:`total`), h = the multinomial coefficient, so that::

        log p(x | a) = log n! - sum_j log x_j! + sum_j R(a_j, x_j) - R(A, n)

    with R the log rising factorial (:func:`bayesgen.utils.logspace.log_rising`);
    R(a, 0) = 0, so sparse X visits only its non-zeros."""

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
    """log(n!) - sum_j log(x_j!) per row, (n,); sparse X via its non-zeros."""
    if sparse.is_sparse(X):
        return gammaln(total + 1.0) - sparse.row_sum_of(X, gammaln(X.data + 1.0))
    return gammaln(total + 1.0) - gammaln(X + 1.0).sum(axis=1)
