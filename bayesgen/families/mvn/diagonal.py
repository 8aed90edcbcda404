"""Diagonal and spherical class covariances (``cov_structure="diag"`` / ``"spherical"``
of LDA and QDA): mclust's EEI, VVI, EII and VII, each with its conjugate prior.

Model, with G covariance groups (LDA: one, shared by the classes; QDA: one per class)
and S0 = diag(s0) the prior's diagonal target (the pooled within-class variances by
default, so "spherical" is spherical in standardised coordinates)::

    diag (EEI / VVI)       sigma2_gj ~ InvGamma(a0, b0 s0_j)        Sigma_g = diag(sigma2_g)
    spherical (EII / VII)  sigma2_g  ~ InvGamma(a0, b0)             Sigma_g = sigma2_g S0
    mu_kj | Sigma ~ N(m0_j, Sigma_g,jj / kappa0)
    x_nj | y_n = k ~ N(mu_kj, Sigma_g,jj)          (independently over features)

with a0 = nu0 / 2, b0 = (nu0 - 2) s / 2 (nu0 = ``cov_dof`` > 2, s = ``cov_scale``).
Normal-Inverse-Gamma models whose variance is shared by several (class, feature)
entries: closed form, with missing entries too (a missing x_nj leaves the sums). Per
(class k, feature j) with N_kj weighted observed entries::

    kappa_kj = kappa0 + N_kj,    m_kj = (kappa0 m0_j + N_kj xbar_kj) / kappa_kj
    B_kj = S_kj + kappa0 N_kj / kappa_kj (xbar_kj - m0_j)^2
    diag:       a_gj = a0 + sum_{k in g} N_kj / 2,   b_gj = b0 s0_j + sum_{k in g} B_kj / 2
    spherical:  a_g  = a0 + sum_{k in g, j} N_kj / 2, b_g = b0 + sum_{k in g, j} B_kj / (2 s0_j)

The predictive is a product of Student-t densities (diag) or the joint multivariate t
of the observed entries (spherical); the evidence is :mod:`.structures`'. Joint mode:
mu = m, sigma2 = b / (a + 1 + M / 2), M the class means sharing the variance.

GaussianNB is VVI: the module-level functions serve
:class:`bayesgen.families.gaussian.GaussianFamily` and this family alike (``var``
(K, d) there, diagonal ``cov`` here); independent entries use the conjugate algebra
with :class:`NormalInverseGamma`. The likelihood, sampling, frame and LDA's projection
are the full family's (:class:`.family.MVNFamily`); NUTS samples ``cov_diag`` or
``cov_volume`` and ``cov`` is their deterministic embedding."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from scipy.special import gammaln

from bayesgen.data import missing
from bayesgen.families import conjugate, masked
from bayesgen.families import far as _far
from bayesgen.families import gaussian_evidence as gev
from bayesgen.families import gaussian_stats as gstats
from bayesgen.families.class_moments import diagonal_quadratic
from bayesgen.families.far import user_to_internal
from bayesgen.families.mvn import em, shrinkage
from bayesgen.families.mvn.family import MVNFamily
from bayesgen.families.mvn.structures import entries, group_entries, log_evidence_entries
from bayesgen.families.protocol import Capabilities
from bayesgen.utils.heavy import import_pymc
from bayesgen.utils.logspace import log_rising

LOG_2PI = np.log(2.0 * np.pi)
#: structures of this family and their mclust names (shared, per class)
MCLUST = {("diag", True): "EEI", ("diag", False): "VVI",
          ("spherical", True): "EII", ("spherical", False): "VII"}
#: search range of kappa0 for ``mean_strength="auto"``
KAPPA_BOUNDS = (1e-4, 1e4)


class EntryHooks:
    """The hooks of Normal-Inverse-Gamma entries with variance groups (module functions
    below), shared by GaussianNB (VVI, parameters ``mu`` and ``var`` (K, d)) and
    :class:`DiagonalMVNFamily` (``mu`` and a diagonal ``cov``): a family gives ``tied``,
    ``spherical``, ``frame``, :attr:`var_key` and :meth:`_embed` / :meth:`_group_variances`
    between group variances (..., G, d) and its variance parameter."""

    #: the name of the variance parameter
    var_key = "cov"

    def _embed(self, var: np.ndarray) -> np.ndarray:
        return var

    def _group_variances(self, var: np.ndarray) -> np.ndarray:
        return var

    def posterior(self, stats: dict, prior: dict) -> dict:
        """:func:`posterior_entries`: ``m``, ``kappa``, ``a``, ``b`` (K, d) and ``s0`` (d,)."""
        return posterior_entries(entries(stats), prior, tied=self.tied,
                                 spherical=self.spherical)

    def map(self, stats: dict, prior: dict) -> dict:
        """Joint posterior mode: mu = m, sigma2 = b / (a + 1 + M / 2), M the class means
        sharing the variance (G, d)."""
        post = self.posterior(stats, prior)
        K, d = post["m"].shape
        shared = (K if self.tied else 1) * (d if self.spherical else 1)
        var = post["b"] / (post["a"] + 1.0 + shared / 2.0)
        return {"mu": post["m"], self.var_key: self._embed(var[:1] if self.tied else var)}

    def log_prior(self, params: dict, prior: dict) -> float:
        """log p(mu, Sigma) up to a constant (the density whose mode :meth:`map` is):
        Inverse-Gamma variances and N(mu_kj; m0_j, sigma2_kj / kappa0)."""
        mu, var = params["mu"], self._group_variances(params[self.var_key])
        a0 = prior["nu0"] / 2.0
        b0 = (prior["nu0"] - 2.0) * prior["scale"] / 2.0
        if self.spherical:
            v = var[:, 0] / prior["s0"][0]
            inv_gamma = np.sum(-(a0 + 1.0) * np.log(v) - b0 / v)
        else:
            inv_gamma = np.sum(-(a0 + 1.0) * np.log(var) - b0 * prior["s0"] / var)
        per_class = _per_class(var, mu.shape[0], self.tied)
        normal = (-0.5 * np.log(per_class / prior["kappa0"])
                  - 0.5 * prior["kappa0"] * (mu - prior["m0"]) ** 2 / per_class)
        return float(inv_gamma + np.sum(normal))

    def conditional_posterior(self, stats: dict, params: dict, prior: dict,
                              rng: np.random.Generator) -> dict:
        """``posterior(stats, prior)``: conjugate whatever ``params`` are (missing entries
        drop out; no completion, unlike the full covariance's)."""
        return self.posterior(stats, prior)

    def draw(self, post: dict, size: int, rng: np.random.Generator) -> dict:
        """``size`` draws: means (size, K, d), group variances (size, G, d) embedded;
        sigma2 = b / Gamma(a), mu ~ N(m, sigma2 / kappa)."""
        K, d = post["m"].shape
        a, b = (post[key][:1] if self.tied else post[key] for key in ("a", "b"))
        G = a.shape[0]
        if self.spherical:
            gamma = rng.standard_gamma(a[:, 0], size=(size, G))[..., None]
        else:
            gamma = rng.standard_gamma(a, size=(size, G, d))
        var = b / gamma
        mu = post["m"] + np.sqrt(_per_class(var, K, self.tied) / post["kappa"]
                                 ) * rng.standard_normal((size, K, d))
        return {"mu": mu, self.var_key: self._embed(var)}

    def algebra(self, post: dict) -> conjugate.Entrywise | conjugate.Joint:
        """:data:`NIG` (independent entries), or :class:`SphericalNIG` of ``post["s0"]``."""
        return SphericalNIG(post["s0"]) if self.spherical else NIG

    def log_predictive(self, X: np.ndarray, post: dict) -> np.ndarray:
        """:func:`.conjugate.log_predictive` (a missing entry drops out)."""
        return conjugate.log_predictive(self.algebra(post), X, entries_of(post))

    def log_evidence(self, stats: dict, prior: dict, rows: Callable[[], tuple], *,
                     method: str, who: str) -> float:
        """:func:`log_evidence` in the units of X."""
        ent = entries(stats)
        return (log_evidence(ent, prior, tied=self.tied, spherical=self.spherical)
                - _far.log_jacobian(self.frame, ent["n"].sum(axis=0)))

    def loo_log_predictive(self, Z: np.ndarray, y: np.ndarray, w: np.ndarray,
                           post: dict) -> np.ndarray:
        """:func:`.conjugate.loo_log_predictive` (the row's class's (a, b) are its group's)."""
        return conjugate.loo_log_predictive(self.algebra(post), Z, y, w, entries_of(post))

    def loo_log_predictive_at(self, Z: np.ndarray, y: np.ndarray, w: np.ndarray, post: dict,
                              Z_test: np.ndarray | None = None) -> np.ndarray:
        """:func:`.conjugate.loo_log_predictive_at`; tied: :func:`tied_loo_at`."""
        if self.tied:
            return tied_loo_at(self.algebra(post), Z, y, w, entries_of(post), Z_test)
        return conjugate.loo_log_predictive_at(self.algebra(post), Z, y, w, entries_of(post),
                                               Z_test)

    def far_log_predictive(self, far, post: dict) -> np.ndarray:
        """Closed-form predictive of far rows, (m, K)."""
        return _far.gaussian_predictive(far, post, self.spherical)


class DiagonalMVNFamily(EntryHooks, MVNFamily):
    """LDA/QDA with a diagonal or spherical covariance (module docstring).

    Parameters
    ----------
    tied : bool
        True: one covariance shared by the classes (LDA: EEI, EII); False: one per
        class (QDA: VVI, VII).
    spherical : bool
        True: Sigma_g = sigma2_g S0; False: Sigma_g = diag(sigma2_g).
    mean_prior, mean_strength, cov_target, cov_scale, divisor
        As :class:`.family.MVNFamily`; ``cov_target`` is a vector of variances (the
        diagonal target s0) or None.
    cov_dof : float, None, "auto" or "oas"
        nu0 > 2 of the Inverse-Gamma prior(s) (None: 3, one pseudo-observation as the
        full family's d + 2); "auto": type-II maximum likelihood of the evidence;
        "oas": the prior strength c = nu0 - 2 equal to that of the full structure's
        ``"oas"`` (c = N delta / (1 - delta), :mod:`.shrinkage`), so the prior counts
        as the same number of pseudo-rows whatever the structure.
    """

    name = "mvn_diagonal"
    units = {"mu": "loc", "cov": "cov", "m0": "loc", "s0": "var"}

    def __init__(self, *, tied: bool, spherical: bool = False, mean_prior: Any = None,
                 mean_strength: Any = 0.01, cov_target: Any = None, cov_dof: Any = None,
                 cov_scale: Any = None, divisor: str = "n",
                 cov_prior_form: str = "niw") -> None:
        super().__init__(tied=tied, mean_prior=mean_prior, mean_strength=mean_strength,
                         cov_target=cov_target, cov_dof=cov_dof, cov_scale=cov_scale,
                         divisor=divisor, cov_prior_form=cov_prior_form)
        self.spherical = bool(spherical)

    @property
    def structure(self) -> str:
        """mclust's name of the structure: EEI, VVI, EII or VII."""
        return MCLUST["spherical" if self.spherical else "diag", self.tied]

    @property
    def capabilities(self) -> Capabilities:
        """As the full family, but conjugate with missing entries (no augmentation)."""
        return Capabilities(missing=True, real_valued=True, far_rows=True,
                            linear_discriminant=self.tied, continuous=True,
                            correlated=False)

    def check_X(self, X: np.ndarray, *, method: str, who: str) -> np.ndarray:
        """Options the full structure has and these do not: ``ValueError`` saying why."""
        bad = None
        if self.cov_prior_form != "niw":
            bad = (f"cov_prior_form={self.cov_prior_form!r} is a prior on correlations; "
                   "a diagonal or spherical covariance has none")
        elif isinstance(self.cov_dof, str) and self.cov_dof not in ("auto", "oas"):
            bad = f"cov_dof={self.cov_dof!r} (use a number > 2, None, 'auto' or 'oas')"
        elif isinstance(self.cov_scale, str) and self.cov_scale != "auto":
            bad = f"cov_scale={self.cov_scale!r} (use a number > 0, None or 'auto')"
        elif isinstance(self.cov_target, str) and self.cov_target != "isotropic":
            bad = (f"cov_target={self.cov_target!r}: partial pooling centres full class "
                   "covariances on the pooled one (cov_structure='full')")
        if bad is not None:
            raise ValueError(f"{who} with cov_structure="
                             f"{'spherical' if self.spherical else 'diag'!r}: {bad}.")
        return X

    # ----------------------------------------------------------------- prior
    def _target(self, stats: dict, m0: Any = None, kappa0: Any = None) -> np.ndarray:
        """s0 (d,) in the internal frame: the diagonal of the full family's target S0 (a
        ``cov_target`` matrix must be diagonal)."""
        d = stats["mean"].shape[1]
        value = self.cov_target
        value = None if value is None or isinstance(value, str) else np.asarray(value)
        if value is not None and value.ndim == 2 and (
                value.shape != (d, d) or np.any(value - np.diag(np.diagonal(value)))):
            raise ValueError(
                f"cov_target for a diagonal or spherical covariance is a vector of {d} "
                "variances (or a diagonal matrix); got a matrix with off-diagonal "
                "entries or of the wrong shape.")
        return np.diagonal(super()._target(stats, m0, kappa0)).copy()

    def prior(self, stats: dict, *, record: bool = True, start: dict | None = None) -> dict:
        """Resolve (m0, kappa0, nu0, s, s0) and record ``search_``.

        ``start``: a prior this family resolved on nearby statistics (the fit's, for the
        statistics without one row): the search of nu0 starts at its ``nu0``, which
        changes its speed, not its answer (to Brent's tolerance).

        ``search_`` (the estimator's ``prior_search_``): ``structure`` (mclust's name),
        ``mean_strength``, ``cov_dof``, ``cov_scale`` and the exact ``log_evidence`` (units
        of X) of the chosen prior; ``candidates`` as the full family's (the fixed values,
        ``cov_dof="auto"``, both "auto"); with ``cov_dof="oas"``, ``oas_shrinkage``.

        Returns
        -------
        dict
            ``m0`` (d,), ``kappa0``, ``nu0`` (> 2), ``scale`` (s) and ``s0`` (d,).
        """
        d = stats["mean"].shape[1]
        kappa0 = self._kappa_option()
        dof = self._dof_option()
        scale = self._resolved_scale()
        m0 = gstats.resolve_vector(self.mean_prior, d, "mean_prior", None)
        m0 = gstats.overall_mean(stats) if m0 is None else user_to_internal(self, "loc", m0)
        s0 = self._target(stats)
        oas = None
        if self.cov_dof == "oas":
            completed = em.evidence_stats(self._full(), stats, m0, em.DEFAULT_KAPPA0
                                          if kappa0 is None else kappa0, np.diag(s0))
            nu0_full, oas = shrinkage.oas_dof(completed, np.diag(s0), tied=self.tied)
            dof = 2.0 + (nu0_full - d - 1.0)
        ent = entries(stats)
        chosen, candidates = searched_prior(
            ent, m0, s0, _far.log_jacobian(self.frame, ent["n"].sum(axis=0)),
            (kappa0, dof, scale), "cov", tied=self.tied, spherical=self.spherical,
            record=record, start=None if start is None else float(start["nu0"]))
        if record:
            self.search_ = {"structure": self.structure, "mean_strength": chosen["kappa0"],
                            "cov_dof": chosen["nu0"], "cov_scale": chosen["scale"],
                            "log_evidence": chosen["log_evidence"], "candidates": candidates}
            if oas is not None:
                self.search_["oas_shrinkage"] = oas
        return {k: chosen[k] for k in ("m0", "kappa0", "nu0", "scale", "s0")}

    def _dof_option(self) -> float | None:
        if isinstance(self.cov_dof, str):
            if self.cov_dof not in ("auto", "oas"):
                raise ValueError(f"cov_dof must be a number > 2, None, 'auto' or 'oas' for a "
                                 f"diagonal or spherical covariance; got {self.cov_dof!r}.")
            return None
        if self.cov_dof is None:
            return 3.0
        value = float(self.cov_dof)
        if not (np.isfinite(value) and value > 2):
            raise ValueError(
                f"cov_dof of a diagonal or spherical covariance is the Inverse-Gamma's "
                f"nu0 and must be > 2 (finite prior mean); got {self.cov_dof!r}.")
        return value

    def _full(self) -> MVNFamily:
        """The full-covariance family of the same tying (for OAS's completed statistics)."""
        return MVNFamily(tied=self.tied).configured(frame=self.frame, labels=self.labels)

    # -------------------------------------------------------------- estimates
    def _embed(self, var: np.ndarray) -> np.ndarray:
        """Variances (..., G, d) as covariance matrices (..., d, d) or (..., K, d, d)."""
        cov = var[..., :, None] * np.eye(var.shape[-1])
        return cov[..., 0, :, :] if self.tied else cov

    def mle(self, stats: dict) -> dict:
        """Class means and maximum-likelihood variances (divisor N, or N - K / N_k - 1);
        ``ValueError`` naming a zero variance."""
        ddof = gstats.check_divisor(self.divisor)
        ent = entries(stats)
        K, d = ent["n"].shape
        gstats.require_samples(gstats.sample_rows(stats), 1 if self.tied else 2, self.labels,
                               f"{self.who} method='mle'")
        # sums of squares per group (and feature; spherical: summed in the target's
        # coordinates, times s0)
        s0 = self._target(stats) if self.spherical else np.ones(d)
        beta, count = group_entries(ent, 0.0, 0.0, s0, tied=self.tied,
                                    spherical=self.spherical)
        count = count - (K if self.tied else 1) * ddof * (d if self.spherical else 1)
        if np.any(count <= 0):
            raise ValueError(f"{self.who} method='mle' with divisor='unbiased' needs more "
                             "observed entries than class means per variance; use "
                             "divisor='n'.")
        var = beta * s0 / count
        if not np.all(var > 0):
            g, j = np.argwhere(~(var > 0))[0]
            where = "" if self.tied else f" in class {gstats.label(self.labels, g)}"
            raise ValueError(f"{self.who} method='mle': feature {j} has zero variance"
                             f"{where} (constant within the classes), so the likelihood "
                             "is unbounded. Use method='map', whose prior keeps variances "
                             "> 0.")
        return {"mu": ent["mean"].copy(), "cov": self._embed(var)}

    def _group_variances(self, cov: np.ndarray) -> np.ndarray:
        """The diagonals (..., G, d) of covariance matrices (..., d, d) or (..., K, d, d)."""
        diag = np.diagonal(cov, axis1=-2, axis2=-1)
        return diag[..., None, :] if self.tied else diag

    def needs_augmentation(self, stats: dict) -> bool:
        """Never: conjugate with missing entries too."""
        return False

    def log_lik(self, X: np.ndarray, params: dict, *, full: bool = True) -> np.ndarray:
        """The diagonal Gaussian's :func:`log_lik` (LDA's point scores with ``full`` False:
        the full family's linear discriminant)."""
        if self.tied and not full and not missing.has_missing(X):
            return super().log_lik(X, params, full=full)
        var = np.diagonal(params["cov"], axis1=-2, axis2=-1)
        if self.tied:
            var = np.broadcast_to(var[..., None, :], params["mu"].shape)
        return log_lik(X, params["mu"], var, full=full)

    # ------------------------------------------------------------------ PyMC
    def pymc_params(self, prior: dict, *, prefix: str = "", dims: dict | None = None) -> dict:
        """Inverse-Gamma variances (``cov_diag`` (group, feature) or ``cov_volume``
        (group)), non-centred means and ``cov`` their diagonal embedding."""
        pm = import_pymc()
        import pytensor.tensor as pt

        dims = dims or self.param_dims
        cls, feature = dims["mu"]
        a0 = prior["nu0"] / 2.0
        b0 = (prior["nu0"] - 2.0) * prior["scale"] / 2.0
        s0 = np.asarray(prior["s0"], dtype=np.float64)
        group = () if self.tied else (cls,)
        if self.spherical:
            volume = pm.InverseGamma(f"{prefix}cov_volume", alpha=a0, beta=b0, dims=group)
            var = (volume if self.tied else volume[:, None]) * s0
        else:
            var = pm.InverseGamma(f"{prefix}cov_diag", alpha=a0, beta=b0 * s0,
                                  dims=(*group, feature))
        eps = pm.Normal(f"{prefix}mu_raw", 0.0, 1.0, dims=(cls, feature))
        per_class = pt.broadcast_to(var, eps.shape) if self.tied else var
        mu = pm.Deterministic(f"{prefix}mu",
                              prior["m0"] + pt.sqrt(per_class / prior["kappa0"]) * eps,
                              dims=(cls, feature))
        eye = np.eye(s0.size)
        cov = pm.Deterministic(f"{prefix}cov", var[..., :, None] * eye, dims=dims["cov"])
        return {"mu": mu, "cov": cov}

    def pymc_stats_loglik(self, params: dict, stats: dict):
        """sum over entries of -N_kj log sigma2_kj / 2 - [S_kj + N_kj (xbar_kj - mu_kj)^2]
        / (2 sigma2_kj), without the constant."""
        import pytensor.tensor as pt

        ent = entries(stats)
        var = pt.diagonal(params["cov"], axis1=-2, axis2=-1)
        K = ent["n"].shape[0]
        per_class = pt.broadcast_to(var, (K, var.shape[-1])) if self.tied else var
        ss = ent["n"] * (ent["mean"] - params["mu"]) ** 2
        scatter = (ent["m2_pooled"] / var).sum() if self.tied else (ent["m2"] / var).sum()
        return (-0.5 * (ent["n"] * pt.log(per_class)).sum() - 0.5 * (ss / per_class).sum()
                - 0.5 * scatter)


# ------------------------------------------------------------------ the model
# Normal-Inverse-Gamma entries with variance groups: everything below is shared by
# GaussianNB (tied=False, spherical=False) and LDA/QDA's diagonal and spherical structures.
# ``ent`` are the per-entry statistics of :func:`.structures.entries`; ``prior`` has
# ``m0`` (d,), ``kappa0``, ``nu0`` (> 2), ``scale`` (s) and ``s0`` (d,).


def _per_class(values: np.ndarray, K: int, tied: bool) -> np.ndarray:
    """Group-level (..., G, d) values as (..., K, d)."""
    if not tied:
        return values
    return np.broadcast_to(values, (*values.shape[:-2], K, values.shape[-1]))


def posterior_entries(ent: dict, prior: dict, *, tied: bool, spherical: bool) -> dict:
    """kappa = kappa0 + N, m = (kappa0 m0 + N xbar) / kappa and the group's (a, b)
    (module docstring; spherical: b = b_g s0), each (K, d), and ``s0`` (d,)."""
    n, s0, kappa0 = ent["n"], prior["s0"], prior["kappa0"]
    kappa = kappa0 + n
    m = (kappa0 * prior["m0"] + n * ent["mean"]) / kappa
    dev = kappa0 * n / kappa * (ent["mean"] - prior["m0"]) ** 2
    a0, b0 = prior["nu0"] / 2.0, (prior["nu0"] - 2.0) * prior["scale"] / 2.0
    if tied:
        count = n.sum(axis=0, keepdims=True)
        ss = ent["m2_pooled"][None] + np.sum(dev, axis=0, keepdims=True)
    else:
        count, ss = n, ent["m2"] + dev
    if spherical:
        a = a0 + count.sum(axis=1, keepdims=True) / 2.0
        b = (b0 + (ss / s0).sum(axis=1, keepdims=True) / 2.0) * s0
    else:
        a, b = a0 + count / 2.0, b0 * s0 + ss / 2.0
    return {"m": m, "kappa": kappa, "a": np.broadcast_to(a, n.shape).copy(),
            "b": np.broadcast_to(b, n.shape).copy(), "s0": s0}


class NormalInverseGamma(conjugate.Entrywise):
    """The algebra of one Normal-Inverse-Gamma entry: ``post`` keys ``m``, ``kappa``,
    ``a``, ``b``, (..., d), with h(x) = (2 pi)^(-1/2) folded into log z::

        log z(m, kappa, a, b) = lgamma(a) - a log b - log(kappa) / 2 - a log(2 pi)"""

    who = "Gaussian model"

    def log_z(self, post: dict) -> np.ndarray:
        a = post["a"]
        return gammaln(a) - a * np.log(post["b"]) - 0.5 * np.log(post["kappa"]) - a * LOG_2PI

    def step(self, post: dict, x: np.ndarray) -> np.ndarray:
        """The Student-t log-density (2 a dof, location m, squared scale
        b (1 + 1/kappa) / a), the Gamma ratio by :func:`log_rising` (finite for huge a, b)."""
        nu_s2 = 2.0 * post["b"] * (1.0 + 1.0 / post["kappa"])
        return (log_rising(post["a"], 0.5) - 0.5 * np.log(np.pi * nu_s2)
                - (post["a"] + 0.5) * np.log1p((x - post["m"]) ** 2 / nu_s2))

    def downdate(self, post: dict, x: np.ndarray, w: np.ndarray) -> dict:
        """kappa' = kappa - w, m' = (kappa m - w x) / kappa', a' = a - w / 2,
        b' = b - w kappa (x - m)^2 / (2 kappa')."""
        kappa, m = post["kappa"], post["m"]
        kappa_r = kappa - w
        return {"m": (kappa * m - w * x) / kappa_r, "kappa": kappa_r, "a": post["a"] - w / 2.0,
                "b": post["b"] - w * kappa / (2.0 * kappa_r) * (x - m) ** 2}


#: the algebra of every diagonal-Gaussian entry
NIG = NormalInverseGamma()
_KEYS = ("m", "kappa", "a", "b")


def entries_of(post: dict) -> dict:
    """The algebra's keys of a posterior (without ``s0``)."""
    return {key: post[key] for key in _KEYS}


class SphericalNIG(conjugate.Joint):
    """The algebra of one class's Normal-Inverse-Gamma entries sharing the variance
    sigma2_g s0_j (spherical: EII, VII): ``post`` keys ``m``, ``kappa``, ``a``, ``b``,
    (..., d), with a the group's and b = b_g s0 along the last axis::

        log Z = lgamma(a) - a log b_g - a log(2 pi)
                - sum_j [log kappa_j + kappa_j log s0_j] / 2

    A row adds, over its p observed entries (a missing entry drops), kappa_j += 1,
    m_j += (x_j - m_j) / (kappa_j + 1), a += p / 2 and
    b_g += sum_j kappa_j (x_j - m_j)^2 / (2 (kappa_j + 1) s0_j)."""

    who = "Gaussian model"

    def __init__(self, s0: np.ndarray) -> None:
        self.s0 = np.asarray(s0, dtype=np.float64)

    def log_z(self, post: dict) -> np.ndarray:
        a, kappa = post["a"][..., 0], post["kappa"]
        return (gammaln(a) - a * np.log(post["b"][..., 0] / self.s0[0]) - a * LOG_2PI
                - 0.5 * np.sum(np.log(kappa) + kappa * np.log(self.s0), axis=-1))

    def update(self, post: dict, X: np.ndarray, w: Any = 1.0) -> dict:
        """:data:`NIG`'s entry updates, the group's (a, b) summed over the entries."""
        M = np.isnan(X)
        w = np.asarray(w, dtype=np.float64)
        w = np.where(M, 0.0, w[:, None] if w.ndim else w)
        one = NIG.downdate(post, np.where(M, 0.0, X), -w)
        da = (one["a"] - post["a"]).sum(axis=-1, keepdims=True)
        db = ((one["b"] - post["b"]) / self.s0).sum(axis=-1, keepdims=True) * self.s0
        return dict(one, a=post["a"] + da, b=post["b"] + db)

    def step(self, post: dict, X: np.ndarray) -> np.ndarray:
        """The multivariate Student-t of the observed entries (2 a dof, location m,
        squared scales b (1 + 1/kappa) / a), the Gamma ratio by :func:`log_rising`;
        ``post`` and X broadcast against each other."""
        M = np.isnan(X)
        gaps = M.any()
        nu_s2 = 2.0 * post["b"] * (1.0 + 1.0 / post["kappa"])
        q = ((np.where(M, 0.0, X) if gaps else X) - post["m"]) ** 2 / nu_s2
        log_norm = -0.5 * np.log(np.pi * nu_s2)
        if gaps:
            q, log_norm = np.where(M, 0.0, q), np.where(M, 0.0, log_norm)
        p, a = (~M).sum(axis=-1), post["a"][..., 0]
        return (log_rising(a, p / 2.0) + log_norm.sum(axis=-1)
                - (a + p / 2.0) * np.log1p(q.sum(axis=-1)))

    def predict(self, post: dict, X: np.ndarray) -> np.ndarray:
        """:meth:`step` of every row at every posterior, (n, L), by broadcasting."""
        return self.step({key: value[None] for key, value in post.items()}, X[:, None, :])

def log_evidence(ent: dict, prior: dict, *, tied: bool, spherical: bool) -> float:
    """Exact log p(Z | y), internal frame: :data:`NIG`'s for independent entries,
    :func:`.structures.log_evidence_entries` for shared variances."""
    if tied or spherical:
        return log_evidence_entries(ent, prior, tied=tied, spherical=spherical)
    tau0 = {"m": prior["m0"], "kappa": prior["kappa0"], "a": prior["nu0"] / 2.0,
            "b": (prior["nu0"] - 2.0) * prior["scale"] * prior["s0"] / 2.0}
    post = posterior_entries(ent, prior, tied=False, spherical=False)
    return conjugate.log_evidence(NIG, tau0, entries_of(post))


def tied_loo_at(alg: conjugate.Entrywise | conjugate.Joint, Z: np.ndarray, y: np.ndarray,
                w: np.ndarray, post: dict, Z_test: np.ndarray | None) -> np.ndarray:
    """log p(z_test_j | y = k, D without row i), (n, m, K) (``Z_test=None``: (n, K)) of a
    shared variance: the row leaves its class's (m, kappa) and every class's (a, b); the
    n_b K posteriors of a block of rows are scored as the "classes" of one call."""
    K, d = post["m"].shape
    pairs = Z_test is None  # each training row at its own downdated posteriors
    Z_test = Z if pairs else np.asarray(Z_test, dtype=np.float64)
    n, m = y.size, Z_test.shape[0]
    out = np.empty((n, K) if pairs else (n, m, K))
    n_b, m_b = conjugate.blocks(n, 1 if pairs else m, K * d)
    for i0 in range(0, n, n_b):
        rows, yb = slice(i0, i0 + n_b), y[i0:i0 + n_b]
        own = conjugate.downdate(alg, post, Z[rows], yb, w[rows])
        b = yb.size
        down = {key: np.repeat(post[key][None], b, axis=0) for key in _KEYS}
        for key in _KEYS:
            if key in ("a", "b"):  # every class's variances lose the row
                down[key] += (own[key] - post[key][yb])[:, None, :]
            else:
                down[key][np.arange(b), yb] = own[key]
        if pairs:  # (b, K, d) posteriors against their rows (b, 1, d)
            Zr = Z[rows][:, None, :]
            if isinstance(alg, conjugate.Joint):
                out[rows] = alg.step(down, Zr)
            else:
                M = np.isnan(Zr)
                out[rows] = np.where(M, 0.0, alg.step(down, np.where(M, 0.0, Zr))).sum(-1)
            continue
        flat = {key: value.reshape(b * K, d) for key, value in down.items()}
        for j0 in range(0, m, m_b):
            block = conjugate.log_predictive(alg, Z_test[j0:j0 + m_b], flat)
            out[rows, j0:j0 + m_b] = block.reshape(-1, b, K).transpose(1, 0, 2)
    return out


def log_lik(X: np.ndarray, mu: np.ndarray, var: np.ndarray, *, full: bool = True
            ) -> np.ndarray:
    """sum_j log N(x_nj; mu_kj, sigma2_kj), (..., n, K) for ``mu``, ``var`` (..., K, d),
    two products centred at the mean of the class means; ``full=False`` drops
    -d/2 log 2pi; a missing entry drops (:func:`.masked.gaussian_log_lik`)."""
    M = missing.mask(X)
    if M is not None:
        return masked.gaussian_log_lik(X, M, {"mu": mu, "var": var}, full)
    centre = mu.reshape(-1, mu.shape[-1]).mean(axis=0)
    mc = mu - centre
    prec = 1.0 / var
    if mu.ndim == 2:  # point estimates: one product per cached block of rows
        W = np.concatenate([prec.T, -2.0 * (mc * prec).T], axis=0)
        quad = diagonal_quadratic(X, centre, W)
    else:
        Xc = X - centre
        quad = (Xc * Xc) @ np.swapaxes(prec, -1, -2)
        quad -= 2.0 * (Xc @ np.swapaxes(mc * prec, -1, -2))
    const = (mc * mc * prec).sum(-1) + np.log(var).sum(-1)
    if full:
        const = const + X.shape[1] * LOG_2PI
    quad += const[..., None, :]
    quad *= -0.5
    return quad


def searched_prior(ent: dict, m0: np.ndarray, s0: np.ndarray, jac: float, option: tuple,
                   prefix: str, *, tied: bool, spherical: bool, record: bool = True,
                   start: float | None = None) -> tuple[dict, list[dict]]:
    """The prior at ``option`` = (kappa0, nu0, s), those None chosen by the evidence
    (nu0, s by :func:`.gaussian_evidence.search_entries` from ``start``, kappa0 by a
    bounded search of log kappa0 in :data:`KAPPA_BOUNDS`), with its exact
    ``log_evidence`` (:func:`log_evidence`) in the units of X (less
    ``jac``); with ``record`` also the candidates' rows (the fixed or default values,
    ``{prefix}_dof="auto"``, both "auto", and ``option``), each at its own optimum."""
    from scipy.optimize import minimize_scalar

    def at(k: float, dof: float | None, scale: float | None, warm: float | None,
           evidence: Callable = log_evidence_entries) -> dict:
        beta, count = group_entries(ent, m0, k, s0, tied=tied, spherical=spherical)
        nu0, s = gev.search_entries(beta, count, dof=dof, scale=scale, start=warm)
        prior = {"m0": m0, "kappa0": k, "nu0": nu0, "scale": s, "s0": s0}
        return dict(prior, log_evidence=evidence(ent, prior, tied=tied, spherical=spherical))

    def found(opt: tuple, warm: float | None = None) -> dict:
        kappa0, dof, scale = opt
        if kappa0 is None:
            result = minimize_scalar(
                lambda log_k: -at(float(np.exp(log_k)), dof, scale, warm)["log_evidence"],
                bounds=tuple(np.log(KAPPA_BOUNDS)), method="bounded",
                options={"xatol": 1e-6})
            kappa0 = float(np.exp(result.x))
        out = at(kappa0, dof, scale, warm, log_evidence)
        return dict(out, log_evidence=out["log_evidence"] - jac)

    chosen = found(option, start)
    if not record:
        return chosen, []
    kappa0, dof, scale = option
    fixed = (em.DEFAULT_KAPPA0 if kappa0 is None else kappa0,
             3.0 if dof is None else dof, 1.0 if scale is None else scale)
    options = [fixed, (fixed[0], None, fixed[2]), (fixed[0], None, None)]
    if option not in options:
        options.append(option)
    rows = []
    for opt in options:
        row = chosen if opt == option else found(opt)
        rows.append({**({"mean_strength": row["kappa0"]} if prefix == "cov" else {}),
                     f"{prefix}_dof": "auto" if opt[1] is None else row["nu0"],
                     f"{prefix}_scale": "auto" if opt[2] is None else row["scale"],
                     f"chosen_{prefix}_dof": row["nu0"],
                     f"chosen_{prefix}_scale": row["scale"],
                     "log_evidence": row["log_evidence"]})
    return chosen, rows

