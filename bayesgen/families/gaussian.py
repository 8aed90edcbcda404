"""Independent Gaussian features (Gaussian naive Bayes) with a Normal-Inverse-Gamma prior.

Model, per class k and feature j::

    sigma2_kj ~ InvGamma(a0, b0)          a0 = nu0 / 2,  b0 = (nu0 - 2) s0_j / 2
    mu_kj | sigma2_kj ~ Normal(m0_j, sigma2_kj / kappa0)
    x_nj | y_n = k ~ Normal(mu_kj, sigma2_kj)

with nu0 = ``var_dof`` and s0_j = ``var_prior`` the prior mean of sigma2_kj (the d = 1
case of QDA's Normal-Inverse-Wishart). This is QDA's diagonal structure (VVI) with one
group per (class, feature): posterior, mode, draws, predictive, evidence and
leave-one-out are the functions of :mod:`bayesgen.families.mvn.diagonal`. Everything is
in the internal frame z = (x - c) / s (``frame``); ``mean_prior``/``var_prior`` are in
the units of X and :meth:`GaussianFamily.to_user` converts back."""

from __future__ import annotations

import copy
from typing import Any, ClassVar

import numpy as np

from bayesgen.data import missing
from bayesgen.families import far as _far
from bayesgen.families import gaussian_stats as gstats
from bayesgen.families import masked, pymc_gaps
from bayesgen.families.far import attach_frame, user_to_internal
from bayesgen.families.mvn import diagonal
from bayesgen.families.mvn.structures import entries
from bayesgen.families.protocol import Capabilities
from bayesgen.families.semi_hooks import UnlabeledHooks
from bayesgen.utils.heavy import import_pymc

LOG_2PI = np.log(2.0 * np.pi)


class GaussianFamily(diagonal.EntryHooks, _far.RealColumns, UnlabeledHooks):
    """Factorised Gaussian likelihood with a Normal-Inverse-Gamma prior per class/feature.

    Parameters
    ----------
    mean_prior : array-like of shape (d,) or None
        Prior mean m0 of the class means; None = the weighted overall data mean.
    mean_strength : float
        kappa0 > 0, prior pseudo-observations for the means (default 0.01: the prior
        sd of a class mean is 10 within-class sds).
    var_prior : array-like of shape (d,) or None
        Prior mean s0 of each variance; None = the pooled within-class variance.
    var_dof : float or "auto"
        nu0 > 2, prior pseudo-observations for the variances (default 3); "auto": chosen
        by type-II maximum likelihood of the exact evidence
        (:mod:`bayesgen.families.gaussian_evidence`).
    var_scale : float, None or "auto"
        s > 0: the prior mean of each variance is s s0_j and b0_j = (nu0 - 2) s s0_j / 2
        (None = 1); "auto": chosen with ``var_dof`` by the evidence.
    divisor : {"n", "unbiased"}
        MLE divisor of the variance: ``N_k`` (scikit-learn) or ``N_k - 1``.
    """

    name = "gaussian"
    tied = spherical = False  # QDA's diagonal structure, one variance per entry
    var_key = "var"
    units = {"mu": "loc", "var": "var", "m0": "loc", "b0": "var", "s0": "var"}
    param_dims: ClassVar[dict] = {"mu": ("class", "feature"), "var": ("class", "feature")}
    positive_only = False
    #: NaN in X is a missing value, integrated out (:mod:`bayesgen.families.masked`)
    capabilities = Capabilities(missing=True, real_valued=True, far_rows=True,
                                continuous=True)

    def __init__(
        self,
        *,
        mean_prior: Any = None,
        mean_strength: float = 0.01,
        var_prior: Any = None,
        var_dof: Any = 3.0,
        var_scale: Any = None,
        divisor: str = "n",
    ) -> None:
        self.mean_prior = mean_prior
        self.mean_strength = mean_strength
        self.var_prior = var_prior
        self.var_dof = var_dof
        self.var_scale = var_scale
        self.divisor = divisor
        self.labels: np.ndarray | None = None
        self.frame = None  # bayesgen.data.frame.Frame of the internal coordinates, set at fit

    # ------------------------------------------------------------------ data
    def stats(self, X: np.ndarray, y: np.ndarray, w: np.ndarray, n_classes: int) -> dict:
        """Weighted per-class count, mean and centred sum of squares ``m2``, each (K, d),
        and the frame; with NaN over the observed entries (``observed`` (K, d),
        :func:`.masked.gaussian_stats`)."""
        M = missing.mask(X)
        if M is not None:
            return attach_frame(masked.gaussian_stats(X, M, y, w, n_classes), self.frame)
        return attach_frame(gstats.diagonal_stats(X, y, w, n_classes), self.frame)

    def merge(self, a: dict, b: dict) -> dict:
        """Chan et al.'s pairwise update in ``a``'s frame (per entry with missing entries)."""
        if "observed" in a or "observed" in b:
            return masked.gaussian_merge(a, b)
        return gstats.merge(a, b)

    # ----------------------------------------------------------------- prior
    def prior(self, stats: dict, *, record: bool = True) -> dict:
        """Resolve the hyper-parameters (data-aware defaults are scale-equivariant).

        ``var_dof`` / ``var_scale`` "auto": type-II maximum likelihood of the exact
        evidence (:func:`bayesgen.families.gaussian_evidence.search`); then ``search_``
        (the estimator's ``prior_search_``) records the chosen ``var_dof`` and
        ``var_scale``, the log evidence (units of X) and the candidates' (the fixed or
        default values, ``var_dof="auto"``, both "auto"), each at its own optimum.
        """
        d = stats["mean"].shape[1]
        if not np.isfinite(self.mean_strength) or self.mean_strength <= 0:
            raise ValueError(f"mean_strength must be > 0; got {self.mean_strength!r}.")
        dof_auto = isinstance(self.var_dof, str)
        if dof_auto and self.var_dof != "auto":
            raise ValueError(f"var_dof must be a number > 2 or 'auto'; got {self.var_dof!r}.")
        if not dof_auto and (not np.isfinite(self.var_dof) or self.var_dof <= 2):
            raise ValueError(
                f"var_dof must be > 2 (finite prior mean of the variance); got {self.var_dof!r}."
            )
        scale = gstats.resolve_scale(self.var_scale, "var_scale")
        m0 = gstats.resolve_vector(self.mean_prior, d, "mean_prior", None)
        m0 = gstats.overall_mean(stats) if m0 is None else user_to_internal(self, "loc", m0)
        s0 = gstats.resolve_vector(self.var_prior, d, "var_prior", None)
        if s0 is not None and np.any(s0 <= 0):
            raise ValueError("var_prior must be > 0 for every feature.")
        s0 = gstats.default_scale(stats) if s0 is None else user_to_internal(self, "var", s0)
        if not np.all((s0 > 0) & np.isfinite(s0)):
            raise ValueError(
                "var_prior is out of the float64 range once expressed in the scale of the "
                f"data (features {np.flatnonzero(~((s0 > 0) & np.isfinite(s0))).tolist()}); "
                "give prior variances of the order of the data's."
            )
        dof = None if dof_auto else float(self.var_dof)
        ent = entries(stats)
        searched = record and (dof_auto or scale is None)
        chosen, candidates = diagonal.searched_prior(
            ent, m0, s0, _far.log_jacobian(self.frame, ent["n"].sum(axis=0)),
            (float(self.mean_strength), dof, scale), "var", tied=False, spherical=False,
            record=searched)
        if searched:
            self.search_ = {"var_dof": chosen["nu0"], "var_scale": chosen["scale"],
                            "log_evidence": chosen["log_evidence"],
                            "candidates": candidates}
        elif record:
            self.__dict__.pop("search_", None)
        nu0 = chosen["nu0"]
        return dict({k: chosen[k] for k in ("m0", "kappa0")}, a0=np.full(d, nu0 / 2.0),
                    b0=(nu0 - 2.0) * chosen["scale"] * s0 / 2.0, nu0=nu0,
                    scale=chosen["scale"], s0=s0)

    def prior_uses_data(self) -> bool:
        """Whether a default reads the data: ``mean_prior`` or ``var_prior`` None (the
        grand mean, the pooled within-class variances) or ``var_dof`` / ``var_scale``
        "auto" (the evidence)."""
        return (self.mean_prior is None or self.var_prior is None
                or isinstance(self.var_dof, str) or isinstance(self.var_scale, str))

    # -------------------------------------------------------------- estimates
    def mle(self, stats: dict) -> dict:
        """Per-class mean and variance with divisor N_kj (or N_kj - 1); ``ValueError`` for
        fewer than 2 rows, an unobserved pair or a zero variance."""
        ddof = gstats.check_divisor(self.divisor)
        gstats.require_samples(gstats.sample_rows(stats), 2, self.labels,
                               "GaussianNB method='mle'")
        if "observed_rows" in stats:
            missing.require_observed(stats["observed_rows"], self.labels, "GaussianNB")
        counts = missing.observed_count(stats)
        if ddof and np.any(counts <= ddof):
            raise ValueError(
                "GaussianNB divisor='unbiased' treats sample weights as replication "
                "counts and needs a weighted count above 1 in every class; use divisor='n'."
            )
        var = stats["m2"] / (counts - ddof)
        zero = stats["m2"] <= gstats.zero_tolerance(stats) * counts
        if zero.any():
            k, j = np.argwhere(zero)[0]
            raise ValueError(
                f"GaussianNB method='mle': feature {j} has zero variance in class "
                f"{gstats.label(self.labels, k)} (constant within the class), so the "
                "likelihood is unbounded. Use method='map', whose prior keeps variances > 0."
            )
        return {"mu": stats["mean"].copy(), "var": var}

    def posterior(self, stats: dict, prior: dict) -> dict:
        """:func:`.mvn.diagonal.posterior_entries`, untied: ``m``, ``kappa``, ``a``, ``b``."""
        return diagonal.entries_of(super().posterior(stats, prior))

    # ------------------------------------------------------------ likelihood
    def log_lik(self, X: np.ndarray, params: dict, *, full: bool = True) -> np.ndarray:
        """:func:`.mvn.diagonal.log_lik` (``full=False`` drops -d/2 log 2pi)."""
        return diagonal.log_lik(X, params["mu"], params["var"], full=full)

    def sample(self, params: dict, y: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """One x per row, mu + sqrt(var) z."""
        rows = np.arange(y.shape[0])
        mu = params["mu"][rows, y]
        sd = np.sqrt(params["var"][rows, y])
        return mu + sd * rng.standard_normal(mu.shape)

    def attributes(self, params: dict) -> dict:
        """``theta_`` (means), ``var_`` and ``prior_search_``."""
        out = {"theta_": params["mu"], "var_": params["var"]}
        if hasattr(self, "search_"):  # var_dof or var_scale "auto"
            out["prior_search_"] = copy.deepcopy(self.search_)
        return out

    def far_terms(self, far, params: dict):
        """:func:`.far.gaussian_terms`."""
        return _far.gaussian_terms(self, far, params)

    # ------------------------------------------------------------------ PyMC
    def pymc_params(self, prior: dict, *, prefix: str = "", dims: dict | None = None) -> dict:
        """``var ~ InverseGamma(a0, b0)``, ``mu | var ~ Normal(m0, sqrt(var / kappa0))``."""
        pm = import_pymc()
        import pytensor.tensor as pt

        dims = dims or self.param_dims
        var = pm.InverseGamma(f"{prefix}var", alpha=prior["a0"], beta=prior["b0"], dims=dims["var"])
        mu = pm.Normal(
            f"{prefix}mu", mu=prior["m0"], sigma=pt.sqrt(var / prior["kappa0"]), dims=dims["mu"]
        )
        return {"mu": mu, "var": var}

    def pymc_observed(self, params: dict, X, y, *, prefix: str = "", dims: dict | None = None):
        """``x_nj ~ Normal(mu[y_n, j], sqrt(var[y_n, j]))``, dims (obs, feature);
        missing entries integrated out."""
        pm = import_pymc()
        import pytensor.tensor as pt

        feature = (dims or self.param_dims)["mu"][1]
        if pymc_gaps.has_gaps(X):
            pymc_gaps.observed("normal", f"{prefix}x",
                                [params["mu"][y], pt.sqrt(params["var"][y])], X,
                                ("obs", feature))
            return
        pm.Normal(
            f"{prefix}x", mu=params["mu"][y], sigma=pt.sqrt(params["var"][y]),
            observed=X, dims=("obs", feature),
        )

    def pymc_stats_loglik(self, params: dict, stats: dict):
        """sum_kj [-N_kj/2 log var_kj - (S_kj + N_kj (xbar_kj - mu_kj)^2) / (2 var_kj)]."""
        import pytensor.tensor as pt

        n = missing.observed_count(stats)
        mu, var = params["mu"], params["var"]
        ss = stats["m2"] + n * (stats["mean"] - mu) ** 2
        return pt.sum(-0.5 * n * pt.log(var) - 0.5 * ss / var)

