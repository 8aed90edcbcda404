"""Multivariate normal classes (LDA, QDA) with a Normal-Inverse-Wishart prior.

Model (QDA, ``tied=False``), independently per class k::

    Sigma_k ~ IW(Psi0, nu0),   mu_k | Sigma_k ~ N(m0, Sigma_k / kappa0)
    x_n | y_n = k ~ N(mu_k, Sigma_k)

LDA (``tied=True``) shares one Sigma ~ IW(Psi0, nu0), mu_k | Sigma ~ N(m0, Sigma / kappa0).

Defaults (of the family; the estimators default to ``cov_dof="auto"``): m0 = overall
mean, kappa0 = ``mean_strength`` = 0.01, nu0 = ``cov_dof`` = d + 2 and
Psi0 = (nu0 - d - 1) S0, so that E[Sigma] = S0 = ``cov_target`` (default: diagonal of the
pooled within-class variances), as mclust's default prior (Fraley & Raftery 2007); all
rescale with the features. Statistics: N_k, xbar_k and the centred scatter S_k (pooled
if tied). Posterior, predictive, evidence and leave-one-out: :mod:`.niw` on
:mod:`bayesgen.families.conjugate`. Joint modes: QDA Sigma_k = Psi_k / (nu_k + d + 2);
LDA Sigma = Psi / (nu + d + 1 + K); mu_k = m_k. Everything is in the internal frame
z = (x - c) / s (``frame``); ``mean_prior`` and ``cov_target`` are in the units of X."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import numpy as np

from bayesgen.data import missing
from bayesgen.families import conjugate
from bayesgen.families import far as _far
from bayesgen.families import gaussian_stats as gstats
from bayesgen.families.far import attach_frame, user_to_internal
from bayesgen.families.mvn import augment as _mvn_augment
from bayesgen.families.mvn import em, niw, pymc, pymc_missing, shrinkage
from bayesgen.families.mvn import missing as _mvn_missing
from bayesgen.families.mvn.checks import (
    complete_mle,
    draw_niw,
    isotropic_target,
    resolve_cov_target,
    sample_rows,
)
from bayesgen.families.mvn.linalg import (
    _cholesky,
    _scalar,
    linear_scores,
    mahalanobis,
)
from bayesgen.families.mvn.niw_evidence import pooled_target
from bayesgen.families.mvn.structures import structure_evidence
from bayesgen.families.protocol import Capabilities
from bayesgen.families.semi_hooks import UnlabeledHooks

LOG_2PI = np.log(2.0 * np.pi)
#: covariance priors of the PyMC models (model_ and method="mcmc")
COV_PRIOR_FORMS = ("niw", "lkj")


#: smallest eigenvalue of a posterior scale's correlation form accepted as definite
_DEGENERATE = 1e3 * np.finfo(np.float64).eps


def mean_strength_bound(d: int) -> float:
    """The largest kappa0 that ``mean_strength="auto"`` takes where its evidence plugs in
    the prior mean m0 (QDA; LDA with ``mean_prior`` given): d / 4.

    E[(mu_k - m0)^T Sigma^-1 (mu_k - m0)] = d / kappa0 under the prior, so kappa0 <= d / 4
    keeps a class mean free to lie two standard deviations from m0 in any dimension.
    The bound exists because the plug-in evidence charges for K free class means where
    data centred at their own mean leave K - 1, and so merges the class means when rows
    per class are fewer than features (``validation/small_n_cause.py``: LDA, 10 rows per
    class, 60 features, held-out log loss 1.29 at kappa0 = 0.01, 0.69 at the plug-in
    evidence's 1e4, 0.53 at d / 4). LDA with m0 from the data (``mean_prior=None``, the
    default) integrates m0 out instead (:mod:`.niw_evidence`, flat-m0), which removes
    that charge, so it needs no bound (``validation/small_n_mean_evidence.py``: 0.72 at
    the flat-m0 kappa0 in the same cell, 1.04 times the class frequencies)."""
    return d / 4.0


class MVNFamily(_far.RealColumns, conjugate.Hooks, UnlabeledHooks):
    """Multivariate normal likelihood with a Normal-Inverse-Wishart prior.

    Parameters
    ----------
    tied : bool
        True: one covariance shared by all classes (LDA); False: one per class (QDA).
    mean_prior : array-like of shape (d,) or None
        Prior mean m0 of the class means; None = the weighted overall data mean.
    mean_strength : float or "auto"
        kappa0 > 0, prior pseudo-observations for the means (default 0.01); "auto": chosen
        by type-II maximum likelihood of the exact evidence with the other "auto" values
        (:func:`bayesgen.families.mvn.niw_evidence.evidence_search_kappa`). LDA with
        ``mean_prior=None``: the evidence with m0 integrated out under a flat prior
        (flat-m0, REML-like; the fit then centres the prior on the overall mean as
        usual), unbounded. QDA, or a ``mean_prior`` given: m0 plugged in, at most
        :func:`mean_strength_bound` = d / 4 (beyond it the bound, the other values
        re-chosen there; ``search_["mean_strength_unbounded"]`` then holds the
        evidence's own choice). ``search_["mean_evidence"]``: "flat-m0" or "plug-in".
    cov_target : array-like of shape (d,) or (d, d), "pooled", "isotropic", or None
        Prior mean S0 = E[Sigma]: a vector is a diagonal matrix, a matrix must be
        symmetric positive definite. None = diagonal of the pooled within-class variances
        (:func:`bayesgen.families.gaussian_stats.default_scale`). "isotropic": v I in the
        units of X, v their mean (:func:`.checks.isotropic_target`; for features in one
        unit, e.g. pixels). "pooled" (QDA only):
        partial pooling towards the pooled covariance
        (:func:`bayesgen.families.mvn.niw_evidence.pooled_target`).
    cov_dof : float, None or "auto"
        nu0 > d + 1, prior pseudo-observations for the covariance (None = d + 2, the
        weakest prior with a finite mean, as mclust's default; "auto" = the empirical-Bayes
        value maximising the marginal likelihood of the data, see
        :mod:`bayesgen.families.mvn.niw_evidence`; with missing entries a fixed point over
        EM-completed statistics, :func:`bayesgen.families.mvn.em.auto_prior`).
    cov_scale : float, None or "auto"
        s > 0, the scale of the prior mean of the covariance relative to the target:
        E[Sigma] = s S0 and Psi0 = (nu0 - d - 1) s S0 (None = 1, S0 itself). "auto":
        chosen with ``cov_dof`` by type-II maximum likelihood of the exact evidence
        (:func:`bayesgen.families.mvn.niw_evidence.evidence_search`), so that both the
        strength and the scale of the shrinkage towards the structured target S0 come
        from the data.
    divisor : {"n", "unbiased"}
        MLE covariance divisor: N_k (QDA) / N (LDA), as scikit-learn, or the unbiased
        N_k - 1 / N - K.
    cov_prior_form : {"niw", "lkj"}
        Prior of the PyMC models (``model_``, ``method="mcmc"``): the conjugate NIW above
        (Bartlett decomposition) or PyMC's LKJ prior, which is not conjugate (see
        :mod:`bayesgen.families.mvn.pymc`). Checked in :meth:`prior`.
    """

    name = "mvn"
    positive_only = False
    units = {"mu": "loc", "cov": "cov", "m0": "loc", "Psi0": "cov"}

    def __init__(
        self,
        *,
        tied: bool,
        mean_prior: Any = None,
        mean_strength: float = 0.01,
        cov_target: Any = None,
        cov_dof: Any = None,
        cov_scale: Any = None,
        divisor: str = "n",
        cov_prior_form: str = "niw",
    ) -> None:
        self.tied = bool(tied)
        self.cov_prior_form = cov_prior_form
        self.mean_prior = mean_prior
        self.mean_strength = mean_strength
        self.cov_target = cov_target
        self.cov_dof = cov_dof
        self.cov_scale = cov_scale
        self.divisor = divisor
        self.labels: np.ndarray | None = None
        self.frame = None  # bayesgen.data.frame.Frame of the internal coordinates, set at fit
        cov_dims = ("feature", "feature_bis") if self.tied else ("class", "feature", "feature_bis")
        self.param_dims = {"mu": ("class", "feature"), "cov": cov_dims}

    @property
    def capabilities(self) -> Capabilities:
        """Missing entries integrated out (:mod:`.missing`); LDA's discriminant is linear."""
        return Capabilities(missing=True, real_valued=True, far_rows=True,
                            augmentation=True, linear_discriminant=self.tied,
                            continuous=True, correlated=True)

    @property
    def who(self) -> str:
        return "LDA" if self.tied else "QDA"

    # ------------------------------------------------------------------ data
    def check_X(self, X: np.ndarray, *, method: str, who: str) -> np.ndarray:
        """Real-valued features: nothing beyond finiteness (checked by the caller).
        ``cov_dof``/``cov_scale="sample"`` needs ``method="mcmc"`` and the NIW prior."""
        sampled = self._sampled_hyper()
        if sampled and (method != "mcmc" or self.cov_prior_form != "niw"):
            names = " and ".join(f"{name}='sample'" for name in sampled)
            raise ValueError(
                f"{who}: {names} samples the hyper-parameter with NUTS, so it needs "
                f"method='mcmc' and cov_prior_form='niw' (got method={method!r}, "
                f"cov_prior_form={self.cov_prior_form!r}); with other methods use "
                "'auto' (type-II maximum likelihood of the evidence).")
        return X

    def _sampled_hyper(self) -> list[str]:
        """The hyper-parameters given as "sample" (full Bayes under ``method="mcmc"``)."""
        return [name for name in ("cov_dof", "cov_scale")
                if isinstance(getattr(self, name), str) and getattr(self, name) == "sample"]

    def stats(self, X: np.ndarray, y: np.ndarray, w: np.ndarray, n_classes: int) -> dict:
        """count (K,), mean (K, d), scatter (K, d, d) ((d, d) when tied) and the frame;
        with NaN the pattern-grouped statistics of :func:`.missing.stats`."""
        if missing.has_missing(X):
            return _mvn_missing.stats(self, X, y, w, n_classes)
        return attach_frame(gstats.scatter_stats(X, y, w, n_classes, tied=self.tied),
                            self.frame)

    def merge(self, a: dict, b: dict) -> dict:
        """Combine the statistics of two disjoint data sets (Chan et al.'s update),
        whatever frames they were computed in (the result is in ``a``'s)."""
        if "groups" in a or "groups" in b:  # missing entries on either side
            return _mvn_missing.merge(self, a, b)
        return gstats.merge(a, b)

    # ----------------------------------------------------------------- prior
    def prior(self, stats: dict, *, record: bool = True, start: dict | None = None) -> dict:
        """Resolve the NIW hyper-parameters.

        ``start``: a prior this family resolved on nearby statistics (the fit's, for the
        statistics without one row): the evidence searches start at its ``nu0``, which
        changes their speed, not their answer (to rounding).

        Sets ``search_`` (surfaced as the estimator's ``prior_search_``): the chosen
        ``mean_strength`` (kappa0), ``cov_dof`` (nu0) and ``cov_scale`` (s), the exact
        ``log_evidence`` there, and ``candidates``, one dict per candidate prior (see
        :func:`.em.auto_prior`) with its hyper-parameters and log evidence, each at its
        own optimum (with missing entries: the chosen one only, on EM-completed
        statistics). With complete data and ``cov_scale`` or ``mean_strength`` "auto",
        ``structures`` lists the evidence of mclust's covariance structures (LDA: EII,
        EEI, EEE; QDA: also VII, VVI, VVV), each at its own type-II ML strength and
        scale (:mod:`.structures`; the fit itself is EEE / VVV, GaussianNB's is VVI), and
        ``structure`` the fitted one's mclust name ("EEE" or "VVV").
        Log evidences are in the units of X, as :meth:`log_evidence`'s.

        Returns
        -------
        dict
            ``m0`` (d,), ``kappa0`` float, ``nu0`` float, ``Psi0`` (d, d) with
            ``Psi0 = (nu0 - d - 1) s S0`` so that the prior mean of Sigma is s S0.
        """
        if self.cov_prior_form not in COV_PRIOR_FORMS:
            raise ValueError(
                f"cov_prior_form must be one of {COV_PRIOR_FORMS}; got "
                f"{self.cov_prior_form!r}."
            )
        d = stats["mean"].shape[1]
        kappa0 = self._kappa_option()
        auto = isinstance(self.cov_dof, str)
        if auto and self.cov_dof not in ("auto", "oas", "sample"):
            raise ValueError(f"cov_dof must be a number > d + 1, None, 'auto', 'oas' or "
                             f"'sample'; got {self.cov_dof!r}.")
        nu0 = d + 2.0 if self.cov_dof is None or auto else _scalar(self.cov_dof)
        if not nu0 > d + 1:
            raise ValueError(
                f"cov_dof must be > d + 1 = {d + 1} (finite prior mean of the covariance); "
                f"got {self.cov_dof!r}. Leave it None for d + 2, or 'auto'."
            )
        m0 = gstats.resolve_vector(self.mean_prior, d, "mean_prior", None)
        m0 = gstats.overall_mean(stats) if m0 is None else user_to_internal(self, "loc", m0)
        S0 = self._target(stats, m0, kappa0)
        scale = self._resolved_scale()
        oas = None
        if self.cov_dof == "oas":  # a fixed strength from the statistics, not a search
            auto = False
            completed = em.evidence_stats(self, stats, m0, em.DEFAULT_KAPPA0 if kappa0 is None
                                          else kappa0, S0)
            nu0, oas = shrinkage.oas_dof(completed, S0, tied=self.tied)
        flat = kappa0 is None and self.tied and self.mean_prior is None
        found = em.auto_prior(self, stats, m0, kappa0, S0, dof=None if auto else nu0,
                              scale=scale, record=record,
                              start=None if start is None else float(start["nu0"]),
                              flat=flat)
        unbounded = None
        if kappa0 is None and not flat and found["mean_strength"] > mean_strength_bound(d):
            unbounded = found["mean_strength"]
            found = self._bounded_kappa(found, stats, m0, S0, dof=None if auto else nu0,
                                        scale=scale, record=record, start=start)
        if not record:
            nu0, scale = found["cov_dof"], found["cov_scale"]
            return {"m0": m0, "kappa0": found["mean_strength"], "nu0": nu0,
                    "Psi0": (nu0 - d - 1) * scale * S0}
        self.search_ = found
        self.search_["structure"] = "EEE" if self.tied else "VVV"  # mclust's name
        if oas is not None:
            self.search_["oas_shrinkage"] = oas
        if unbounded is not None:
            self.search_["mean_strength_unbounded"] = unbounded
        if kappa0 is None:
            self.search_["mean_evidence"] = "flat-m0" if flat else "plug-in"
        searched = None in (kappa0, scale)  # more than cov_dof="auto" (the default)
        kappa_auto = kappa0 is None
        kappa0 = self.search_["mean_strength"]
        if "groups" not in stats:  # log evidences in the units of X, as log_evidence's
            jac = _far.log_jacobian(self.frame, np.full(d, stats["count"].sum()))
            if searched:
                both = self.search_["candidates"][2]  # cov_dof and cov_scale "auto"
                diagonal = not np.any(S0 - np.diag(np.diagonal(S0)))
                full = None if kappa_auto or not diagonal else {
                    "nu0": both["chosen_cov_dof"], "scale": both["chosen_cov_scale"],
                    "log_evidence": both["log_evidence"]}
                self.search_["structures"] = structure_evidence(
                    stats, m0, kappa0, np.diagonal(S0).copy(), tied=self.tied, full=full)
            self.search_["log_evidence"] -= jac
            for row in self.search_["candidates"] + self.search_.get("structures", []):
                row["log_evidence"] -= jac
        nu0, scale = self.search_["cov_dof"], self.search_["cov_scale"]
        prior = {"m0": m0, "kappa0": kappa0, "nu0": nu0, "Psi0": (nu0 - d - 1) * scale * S0}
        sampled = self._sampled_hyper()
        if sampled:  # NUTS samples them (pymc.niw_params); nu0, Psi0 above are the ML ones
            prior["hyper"] = {"S0": S0, "dof": "cov_dof" in sampled,
                              "scale": "cov_scale" in sampled, "fixed_scale": scale,
                              "names": sampled}
        return prior

    def _target(self, stats: dict, m0: np.ndarray | None, kappa0: float | None) -> np.ndarray:
        """S0 (d, d) in the internal frame: ``cov_target`` (a vector of variances or a
        positive definite matrix, in the units of X), "isotropic", "pooled" or the
        diagonal of the pooled within-class variances."""
        d = stats["mean"].shape[1]
        if isinstance(self.cov_target, str) and self.cov_target == "isotropic":
            return np.diag(isotropic_target(stats, self.frame))
        if isinstance(self.cov_target, str):
            return self._pooled_target(stats, m0, kappa0)
        S0 = resolve_cov_target(self.cov_target, stats, d)
        if self.cov_target is not None:
            S0 = user_to_internal(self, "cov", S0)
            diag = np.diagonal(S0)
            if not (np.all(np.isfinite(S0)) and np.all(diag > 0)):
                raise ValueError(
                    "cov_target is out of the float64 range once expressed in the scale of "
                    f"the data (features {np.flatnonzero(~(diag > 0)).tolist()}); give "
                    "prior variances of the order of the data's."
                )
            _cholesky(S0, "cov_target", "give a positive definite matrix or a vector of variances")
        return S0

    def _bounded_kappa(self, found: dict, stats: dict, m0: np.ndarray, S0: np.ndarray, *,
                       dof: float | None, scale: float | None, record: bool,
                       start: dict | None) -> dict:
        """The choice of :func:`.em.auto_prior` with kappa0 fixed at
        :func:`mean_strength_bound` (the evidence's own kappa0, in ``found``, lies beyond
        it): the other "auto" values re-chosen there. Recorded: ``found``'s candidates,
        its ``mean_strength="auto"`` row holding the bounded choice and its evidence."""
        bound = mean_strength_bound(S0.shape[0])
        bounded = em.auto_prior(self, stats, m0, bound, S0, dof=dof, scale=scale,
                                record=record,
                                start=None if start is None else float(start["nu0"]))
        if not record:
            return bounded
        chosen = {"chosen_mean_strength": bounded["mean_strength"],
                  "chosen_cov_dof": bounded["cov_dof"],
                  "chosen_cov_scale": bounded["cov_scale"],
                  "log_evidence": bounded["log_evidence"]}
        rows = [dict(row, **chosen) if isinstance(row.get("mean_strength"), str) else row
                for row in found["candidates"]]
        if not any(isinstance(row.get("mean_strength"), str) for row in rows):
            rows.append({"mean_strength": "auto", "cov_dof": dof if dof is not None
                         else "auto", "cov_scale": scale if scale is not None else "auto",
                         **chosen})
        return dict(bounded, candidates=rows)

    def _kappa_option(self) -> float | None:
        """``mean_strength`` as a float > 0, or None for "auto"; ``ValueError`` else."""
        text = isinstance(self.mean_strength, str)
        if text and self.mean_strength == "auto":
            return None
        kappa0 = np.nan if text else _scalar(self.mean_strength)
        if not kappa0 > 0:
            raise ValueError(f"mean_strength must be a number > 0 or 'auto'; got "
                             f"{self.mean_strength!r}.")
        return kappa0

    def prior_uses_data(self) -> bool:
        """Whether a default reads the data: ``mean_prior`` None (the grand mean),
        ``cov_target`` None or a string (pooled variances, isotropic or pooled targets),
        or ``cov_dof`` / ``cov_scale`` / ``mean_strength`` a string ("auto", "oas",
        "sample")."""
        return (self.mean_prior is None or self.cov_target is None
                or any(isinstance(v, str) for v in (self.cov_target, self.cov_dof,
                                                    self.cov_scale, self.mean_strength)))

    def _pooled_target(self, stats: dict, m0: np.ndarray, kappa0: float | None) -> np.ndarray:
        """S0 of ``cov_target="pooled"`` (QDA only): :func:`.niw_evidence.pooled_target` of
        the (EM-completed, :func:`.em.evidence_stats`) class statistics."""
        if self.cov_target != "pooled":
            raise ValueError(f"cov_target must be None, 'pooled', 'isotropic', a vector of "
                             f"variances or a covariance matrix; got {self.cov_target!r}.")
        if self.tied:
            raise ValueError("cov_target='pooled' centres each class covariance of QDA on the "
                             "pooled one; LDA has a single pooled covariance already (use "
                             "cov_dof and cov_scale to shrink it).")
        kappa0 = em.DEFAULT_KAPPA0 if kappa0 is None else kappa0
        D = np.diag(gstats.default_scale(stats))
        return pooled_target(em.evidence_stats(self, stats, m0, kappa0, D), m0, kappa0, D)

    def _resolved_scale(self) -> float | None:
        """``cov_scale`` as a float, or None for "auto"/"sample"; ``ValueError`` if invalid."""
        return gstats.resolve_scale(self.cov_scale, "cov_scale", ("auto", "sample"))

    # -------------------------------------------------------------- estimates
    def mle(self, stats: dict) -> dict:
        """Class means and S_k / N_k (QDA) or S / N (LDA) (or unbiased); ``ValueError``
        naming a class with too few rows; missing entries: EM (:mod:`.em`)."""
        if "groups" in stats:
            return em.fit(self, stats, None)
        return complete_mle(stats, tied=self.tied, divisor=self.divisor, labels=self.labels,
                            who=self.who)

    def posterior(self, stats: dict, prior: dict) -> dict:
        """Normal-Inverse-Wishart posterior ``m``, ``kappa``, ``Psi``, ``nu``
        (:func:`.niw.posterior`; the prior's entries may be per class)."""
        post = niw.posterior(stats, prior, tied=self.tied)
        self._check_float64_definite(post["Psi"])
        return post

    def algebra(self, post: dict) -> niw.NIW:
        """:class:`.niw.NIW`."""
        return niw.NIW(tied=self.tied, who=self.who)

    def natural_prior(self, prior: dict) -> dict:
        """The resolved prior as a posterior without data (:func:`.niw.natural_prior`)."""
        return niw.natural_prior(prior)

    def _check_float64_definite(self, Psi: np.ndarray) -> None:
        """``ValueError`` if a posterior scale Psi is singular to float64: the smallest
        eigenvalue of its correlation form below :data:`_DEGENERATE` (rows carrying all but a
        1e-12 share of the weight span fewer dimensions than the features)."""
        stack = Psi[None] if self.tied else Psi
        for k, P in enumerate(stack):
            root = np.sqrt(np.diagonal(P))
            if not (np.all(root > 0) and np.linalg.eigvalsh(P / np.outer(root, root))[0]
                    > _DEGENERATE):
                where = ("pooled over the classes" if self.tied
                         else f"of class {gstats.label(self.labels, k)}")
                raise ValueError(
                    f"{self.who}: the posterior scale matrix {where} is singular to "
                    "float64 precision although its prior is positive definite: the rows "
                    "carrying all but a 1e-12 share of the weight span fewer dimensions "
                    f"than the {P.shape[-1]} features (sample_weight spanning more than "
                    "12 orders of magnitude does this). Rescale sample_weight to a "
                    "narrower range, e.g. np.clip(w, w.max() * 1e-12, None)."
                )

    def map(self, stats: dict, prior: dict) -> dict:
        """Joint posterior mode (module docstring); missing entries: EM (:mod:`.em`)."""
        if "groups" in stats:
            return em.fit(self, stats, prior)
        post = self.posterior(stats, prior)
        n_classes, d = post["m"].shape
        if self.tied:
            cov = post["Psi"] / (post["nu"] + d + 1 + n_classes)
        else:
            cov = post["Psi"] / (post["nu"] + d + 2)[:, None, None]
        return {"mu": post["m"], "cov": cov}

    def log_prior(self, params: dict, prior: dict) -> float:
        """log p(mu, Sigma) up to a constant (:func:`.em.log_niw`)."""
        return em.log_niw(params["mu"], params["cov"], prior, self.tied)

    def conditional_posterior(self, stats: dict, params: dict, prior: dict,
                              rng: np.random.Generator) -> dict:
        """:func:`.augment.conditional_posterior`."""
        return _mvn_augment.conditional_posterior(self, stats, params, prior, rng)

    def needs_augmentation(self, stats: dict) -> bool:
        """Missing entries: ``method="conjugate"`` runs data augmentation."""
        return "groups" in stats

    def augment(self, stats: dict, prior: dict, **kwargs):
        """Data-augmentation posterior draws (:func:`.augment.sample`)."""
        return _mvn_augment.sample(self, stats, prior, **kwargs)

    def draw(self, post: dict, size: int, rng: np.random.Generator) -> dict:
        """Posterior draws by the Bartlett decomposition (:func:`.checks.draw_niw`)."""
        return draw_niw(post, size, rng, tied=self.tied)

    def log_predictive(self, X: np.ndarray, post: dict) -> np.ndarray:
        """The multivariate Student-t (:meth:`.niw.NIW.predict`); NaN in X or a
        data-augmentation stack: :func:`.missing.log_predictive`."""
        if post["m"].ndim == 3 or missing.has_missing(X):
            return _mvn_missing.log_predictive(self, X, post)
        return super().log_predictive(X, post)

    # ----------------------------------------------------- model comparison
    def log_evidence(self, stats: dict, prior: dict, rows: Callable[[], tuple], *,
                     method: str,
                     who: str) -> float:
        """log Z(posterior) - log Z(prior) of :class:`.niw.NIW` in the units of X;
        ``ValueError`` for sampled hyper-parameters, an LKJ prior or missing entries."""
        if method == "mcmc" and self._sampled_hyper():
            raise ValueError(
                f"{who} sampled its hyper-parameters ({', '.join(self._sampled_hyper())} = "
                "'sample'): its evidence would integrate over their hyper-prior, which has "
                "no closed form. Use 'auto' (the evidence at the type-II ML values), or "
                "compare by LOO.")
        if method == "mcmc" and self.cov_prior_form != "niw":
            raise ValueError(
                f"{who} was sampled with cov_prior_form={self.cov_prior_form!r}, "
                "which is not conjugate: no closed-form marginal likelihood. Use "
                "cov_prior_form='niw'."
            )
        if "groups" in stats:
            raise ValueError(
                f"{self.who} fitted with missing entries has no closed-form marginal "
                "likelihood (the Normal-Inverse-Wishart evidence of incomplete rows is not "
                "conjugate)."
            )
        d = stats["mean"].shape[1]
        observed = np.full(d, stats["count"].sum())
        return (super().log_evidence(stats, prior, rows, method=method, who=who)
                - _far.log_jacobian(self.frame, observed))

    # ------------------------------------------------------------ likelihood
    def log_lik(self, X: np.ndarray, params: dict, *, full: bool = True) -> np.ndarray:
        """log N(x_n; mu_k, Sigma_k), (..., n, K) for ``mu`` (..., K, d), ``cov``
        (..., K, d, d) or (..., d, d) (:func:`.linalg.mahalanobis`). ``full=False``: QDA
        drops -d/2 log 2pi; LDA gives the linear discriminant ``x^T Sigma^-1 mu_k -
        mu_k^T Sigma^-1 mu_k / 2`` (:func:`.linalg.linear_scores`). NaN in X: the marginal of
        the observed coordinates (:func:`.missing.log_lik`)."""
        if missing.has_missing(X):
            return _mvn_missing.log_lik(self, X, params, full)
        mu, cov = params["mu"], params["cov"]
        d = mu.shape[-1]
        if self.tied and not full:
            return linear_scores(X, mu, cov)
        out, logdet = mahalanobis(X, mu, cov, tied=self.tied)
        out += logdet[..., None, :]
        if full:
            out += d * LOG_2PI
        out *= -0.5
        return out

    def sample(self, params: dict, y: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """One x per row, mu + L z (:func:`.checks.sample_rows`)."""
        return sample_rows(params, y, rng, tied=self.tied)

    def attributes(self, params: dict) -> dict:
        """``means_`` (K, d), ``covariance_`` (list of K (d, d), or (d, d) for LDA),
        ``prior_search_``, and after EM ``n_iter_`` and ``em_objective_``."""
        cov = params["cov"]
        out = {"means_": params["mu"], "covariance_": cov if self.tied else list(cov)}
        if hasattr(self, "search_"):
            out["prior_search_"] = copy.deepcopy(self.search_)
        if "em_n_iter" in params:  # EM ran (missing entries, method "mle" or "map")
            out.update(n_iter_=params["em_n_iter"], em_objective_=params["em_objective"])
        return out

    # ----------------------------------------------------------------- frame
    def user_discriminant(self, scores: np.ndarray, Z: np.ndarray,
                          params: dict) -> np.ndarray:
        """LDA's point scores (n, K) in the units of X: the internal ones plus
        ``z^T P g + g^T P g / 2`` (g = c / s, P the internal precision), equal for every class
        (missing z_j count as 0)."""
        from scipy import linalg as sla

        if self.frame is None:
            return scores
        g = self.frame.loc / self.frame.scale
        if not np.any(g):
            return scores
        Pg = sla.cho_solve(sla.cho_factor(params["cov"], lower=True), g)
        Z = np.nan_to_num(Z, nan=0.0)  # missing: any row constant will do
        return scores + (Z @ Pg + 0.5 * g @ Pg)[:, None]

    def far_terms(self, far, params: dict):
        """(a2, a1, a0) of far rows, (..., m, K) each (:func:`._far.mvn_terms`)."""
        if np.isnan(far.ZN).any():
            return _mvn_missing.far_terms(self, far, params)
        return _far.mvn_terms(self, far, params)

    def far_log_predictive(self, far, post: dict) -> np.ndarray:
        """Closed-form posterior predictive log-density of far rows, (m, K)."""
        if post["m"].ndim == 3 or np.isnan(far.ZN).any():
            return _mvn_missing.far_log_predictive(self, far, post)
        return _far.mvn_predictive(self, far, post)

    # ------------------------------------------------------------------ PyMC
    def pymc_params(self, prior: dict, *, prefix: str = "", dims: dict | None = None) -> dict:
        """The NIW (Bartlett) or LKJ prior in the current PyMC model
        (:mod:`bayesgen.families.mvn.pymc`)."""
        dims = dims or self.param_dims
        build = pymc.lkj_params if self.cov_prior_form == "lkj" else pymc.niw_params
        return build(self, prior, prefix, dims)

    def pymc_observed(self, params: dict, X, y, *, prefix: str = "", dims: dict | None = None):
        """Observed rows ``x_n ~ MvNormal(mu[y_n], Sigma[y_n])``, dims (obs, feature)."""
        pymc.observed(self, params, X, y, prefix, dims or self.param_dims)

    def pymc_stats_loglik(self, params: dict, stats: dict):
        """sum_k [N_k log|U_k| - tr(U_k^T (S_k + N_k (xbar_k - mu_k)(xbar_k - mu_k)^T) U_k) / 2]
        with Sigma_k^-1 = U_k U_k^T (missing entries: :func:`.pymc_missing.stats_loglik`)."""
        if "groups" in stats:  # missing entries: per (pattern, class) group
            return pymc_missing.stats_loglik(self, params, stats)
        return pymc.stats_loglik(self, params, stats)

    def pymc_rows_loglik(self, params: dict, Z: np.ndarray, *, stats: dict, observed,
                         prefix: str = "", dims: dict | None = None):
        """log p(z_n | y=k, theta), (m, K): ``observed`` row by row, or with NaN
        :func:`.pymc_missing.rows_loglik`."""
        Z = np.asarray(Z, dtype=np.float64)
        if np.isnan(Z).any():
            return pymc_missing.rows_loglik(self, params, Z, stats["count"].size)
        return observed(self, params, Z, prefix, dims)
