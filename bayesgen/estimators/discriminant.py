"""Discriminant analysis (LDA, QDA), and the constructor parameters that every public
classifier shares: thin scikit-learn classes over one family each (the naive Bayes ones
are in :mod:`bayesgen.estimators.naive_bayes`).

Every constructor only stores its keyword-only parameters; the shared ones are
documented once, in ``_SHARED_DOC`` (composed into every class docstring).
"""

from __future__ import annotations

from numbers import Integral
from typing import Any, ClassVar

import numpy as np
from sklearn.base import ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import check_is_fitted

from bayesgen.estimators import lda_projection
from bayesgen.estimators.base import GenerativeClassifier, predicting
from bayesgen.estimators.params import constraints
from bayesgen.families import get_family
from bayesgen.utils.deprecation import DEPRECATED, renamed

_SHARED_DOC = """

    Every parameter is checked when ``fit`` is called, whatever the method (a
    ``ValueError`` naming it); see ``bayesgen.estimators.params``.

    Parameters
    ----------
    method : {"mle", "map", "conjugate", "mcmc"}, default="map"
        Point estimate (closed-form MLE or posterior mode) or posterior inference.
    class_alpha : float or array-like of shape (K,), default=1.0
        Dirichlet concentration of the class prior (1 = MLE of pi, 2 = Laplace).
    class_prior : array-like of shape (K,) or None, default=None
        Fixed class probabilities pi, in the order of ``classes_``, summing to 1: not
        estimated, smoothed or sampled by any method; ``class_alpha`` is then unused.
        scikit-learn's ``priors=p`` / ``class_prior=p`` are ``class_prior=p``, its
        ``fit_prior=False`` is ``class_prior=np.full(K, 1 / K)``.
    draws, tune, chains : int, default=1000, 1000, 4
        Posterior size for ``"conjugate"`` and ``"mcmc"``.
    sampler : {"auto", "numpyro", "nutpie", "blackjax", "pymc"}, default="auto"
        NUTS implementation for ``"mcmc"``; "auto" takes the fastest installed
        (numpyro, then nutpie, blackjax, PyMC's own).
    chain_method : {"sequential", "vectorized", "parallel"}, default="sequential"
        How the ``"mcmc"`` chains run (numpyro's names; ``bayesgen.inference.mcmc``):
        one after the other in one compiled program; all at once in one batched
        program (slower to compile, faster refits of the same shapes); or one chain per
        XLA device, which needs as many JAX devices as chains
        (``XLA_FLAGS=--xla_force_host_platform_device_count=4`` before JAX starts),
        else ``ValueError``. Measured in ``benchmarks/README.md``.
    target_accept : float, default=0.8
        NUTS target acceptance rate (raise it, e.g. to 0.95, after divergences).
    progressbar : bool or "auto", default="auto"
        Progress bars of ``pm.sample`` (samplers "nutpie", "blackjax", "pymc"; numpyro
        draws none). "auto": only in an interactive terminal or a Jupyter notebook.
    random_state : int, Generator, RandomState or None, default=None
        Seed (an int in [0, 2**32 - 1]); the same seed and data give identical
        results. A Generator or RandomState is used (and advanced) as given.
    loss : array-like of shape (K, K) or None, default=None
        ``loss[i, j]`` >= 0: cost of predicting class j when the truth is i.
    unlabeled : label or None, default=None
        A label value that marks an unlabeled row of y, e.g. -1 for scikit-learn's
        ``semi_supervised`` convention. None, NaN and ``pd.NA`` in y always mark one.
        Unlabeled rows are learned from by EM (``"mle"``, ``"map"``), data
        augmentation (``"conjugate"``) or their mixture likelihood (``"mcmc"``); see
        ``bayesgen.semi.unlabeled``. ``classes_`` never contains the marker.
    unlabeled_weight : float in [0, 1], default=1.0
        lambda, the weight of the unlabeled rows' log-likelihood (Nigam et al. 2000):
        0 ignores them, 1 is the full semi-supervised likelihood; for ``"mcmc"`` a
        power (tempered) likelihood; ``"conjugate"`` accepts 0 or 1 only.
    n_jobs : int or None, default=None
        Threads that split the passes over large arrays (at least 2**21 entries) by
        rows (scikit-learn's semantics: None is 1 unless a ``joblib.parallel_config``
        says otherwise, -1 all cores). Point fits and predictions give the same results
        bit for bit whatever ``n_jobs``. See ``bayesgen.utils.threads``.
"""


class _Common(GenerativeClassifier):
    """Stores the constructor's keyword parameters (one level below the base class)."""

    def _store(self, params: dict) -> None:
        """Set every constructor argument in ``params`` (its ``locals()``) unchanged."""
        for name, value in params.items():
            if name != "self":
                setattr(self, name, value)


class _MVNClassifier(_Common):
    """Shared constructor of LDA and QDA (tied or per-class covariance)."""

    _tied: bool
    _parameter_constraints: ClassVar[dict] = constraints("mvn")

    def __init__(
        self,
        *,
        method: str = "map",
        class_alpha: Any = 1.0,
        class_prior: Any = None,
        mean_prior: Any = None,
        mean_strength: float = 0.01,
        cov_target: Any = None,
        cov_dof: Any = "auto",
        cov_scale: Any = None,
        divisor: str = "n",
        cov_prior_form: str = "niw",
        cov_structure: str = "full",
        draws: int = 1000,
        tune: int = 1000,
        chains: int = 4,
        sampler: str = "auto",
        chain_method: str = "sequential",
        target_accept: float = 0.8,
        progressbar: bool | str = "auto",
        random_state: Any = None,
        loss: Any = None,
        unlabeled: Any = None,
        unlabeled_weight: float = 1.0,
        n_jobs: int | None = None,
        cov_prior: Any = "deprecated",
        covariance_prior: Any = "deprecated",
    ) -> None:
        self._store(locals())

    #: the deprecated names (0.2, removed in 0.3): new name and its default, for each
    _RENAMED: ClassVar[dict] = {"cov_prior": ("cov_target", None),  # deprecated
                                "covariance_prior": ("cov_prior_form", "niw")}  # deprecated

    def _renamed_params(self, warn_now: bool = False) -> dict:
        """``cov_target`` and ``cov_prior_form`` in force: the old names' values when they
        are given (:func:`bayesgen.utils.deprecation.renamed`: a ``FutureWarning`` with
        ``warn_now``, a ``ValueError`` when both names are given)."""
        out = {}
        for old, (new, default) in self._RENAMED.items():
            value = getattr(self, new)
            is_default = value is default or (isinstance(value, str) and value == default)
            out[new] = renamed(type(self).__name__, old, getattr(self, old, DEPRECATED), new,
                               value, is_default, warn_now=warn_now)
        return out

    def _check_params(self) -> str:
        """The parameter check of every fit, and the deprecated names resolved (warned)."""
        method = super()._check_params()
        self._renamed_params(warn_now=True)
        return method

    def _make_family(self, columns=None):
        structure = self.cov_structure
        if structure in ("diag", "spherical"):
            name, extra = "mvn_diagonal", {"spherical": structure == "spherical"}
        elif structure in ("auto", "average"):
            name, extra = "mvn_choice", {"average": structure == "average"}
        else:  # "full"; other values are refused by the parameter check at fit
            name, extra = "mvn", {}
        return get_family(name)(
            tied=self._tied, **extra, **self._renamed_params(),
            mean_prior=self.mean_prior,
            mean_strength=self.mean_strength,
            cov_dof=self.cov_dof,
            cov_scale=self.cov_scale,
            divisor=self.divisor,
        )


_MVN_DOC = """    mean_prior : array-like (d,) or None
        Prior mean m0 of the class means (default: overall data mean).
    mean_strength : float or "auto", default=0.01
        kappa0: mu_k | Sigma ~ N(m0, Sigma / kappa0). "auto": chosen with the other
        "auto" values by type-II maximum likelihood of the exact marginal likelihood
        (``bayesgen.families.mvn.niw_evidence.evidence_search_kappa``); it shrinks the
        class means towards m0 (see the user guide's priors page).
    cov_target : array-like (d,) or (d, d), "pooled", "isotropic" or None
        Prior mean of the covariance (default: diagonal of pooled within-class
        variances); the Inverse-Wishart scale is Psi0 = (nu0 - d - 1) cov_target.
        "isotropic": v I in the units of X, v the mean pooled within-class variance
        (for features in one unit, e.g. pixels).
        "pooled" (QDA only): partial pooling, each class covariance centred on the
        pooled covariance (LDA's posterior mean under its evidence-chosen prior), with
        ``cov_dof="auto"`` choosing the pooling strength by the evidence: nu0 near d + 1
        is QDA, a large nu0 is LDA's covariance with QDA's means (the Bayesian
        counterpart of RDA's lambda; see
        ``bayesgen.families.mvn.niw_evidence.pooled_target``).
    cov_dof : float, None, "auto", "oas" or "sample", default="{dof_default}"
        nu0 > d + 1. "auto": the empirical-Bayes nu0 maximising the marginal likelihood
        of the training data (closed form; see ``bayesgen.families.mvn.niw_evidence``);
        "oas": nu0 = d + 1 + N delta / (1 - delta), the strength whose posterior mean
        covariance is the Oracle Approximating Shrinkage estimate (delta its intensity,
        from the scatter matrix; see ``bayesgen.families.mvn.shrinkage``); "sample"
        (``method="mcmc"`` only): NUTS samples nu0 - d - 1 under a log-uniform
        hyper-prior on [0.01, 1e6] (full Bayes; posterior variable ``cov_dof``); None:
        d + 2, the weakest prior with a finite mean (mclust's default).
        {dof_why}
    cov_scale : float, None, "auto" or "sample", default=None
        s > 0 in E[Sigma] = s cov_target, i.e. Psi0 = (nu0 - d - 1) s cov_target (None:
        1). "auto": chosen together with ``cov_dof`` by type-II maximum likelihood of
        the exact marginal likelihood (``bayesgen.families.mvn.niw_evidence``).
        "sample" (``method="mcmc"`` only): sampled under a log-uniform hyper-prior on
        [0.001, 1000] (posterior variable ``cov_scale``).
    divisor : {{"n", "unbiased"}}, default="n"
        MLE covariance divisor: n (scikit-learn) or the unbiased one
        ({div_unbiased}, as R's MASS).
    cov_prior_form : {{"niw", "lkj"}}, default="niw"
        Covariance prior of ``model_`` and ``method="mcmc"``: "niw", the conjugate prior
        above (so MCMC and the conjugate posterior agree), or "lkj", PyMC's LKJ
        correlation prior (eta=2) with half-normal scales (sd = 2.5 prior sds) and
        mu_k ~ N(m0, 10 prior sds). MLE/MAP/conjugate always use the NIW prior.
    cov_structure : {{"full", "diag", "spherical", "auto", "average"}}, default="full"
        Form of the covariance (mclust's names: LDA EEE / EEI / EII, QDA VVV / VVI /
        VII): "full" Sigma with the NIW prior; "diag" diag(sigma2_1..d) and "spherical"
        sigma2 S0 (S0 = diag(cov_target)), each variance with a conjugate Inverse-Gamma
        prior whose nu0 is ``cov_dof`` (> 2; None: 3; "oas": the full structure's OAS
        strength) and mean s times the target's (``cov_scale``), exact with missing
        entries (``bayesgen.families.mvn.diagonal``). "auto": the three structures
        scored by their exact evidence (BIC for ``method="mle"``) and the best fitted;
        "average": Bayesian model averaging of their posterior predictives by their
        posterior probabilities (point methods use the most probable; not with
        ``method="mcmc"`` or missing entries; ``bayesgen.families.mvn.choice``).
    cov_prior : deprecated
        Deprecated name of ``cov_target`` (0.2; removed in 0.3): FutureWarning.
    covariance_prior : deprecated
        Deprecated name of ``cov_prior_form`` (0.2; removed in 0.3): FutureWarning.
"""


_SEARCH_DOC = """    prior_search_ : dict
        The empirical-Bayes choice of the covariance prior: ``cov_dof`` (nu0) and
        ``cov_scale`` (s) used by the fit, ``log_evidence`` (exact log p(X | y) there;
        None for a fit with missing entries and nothing "auto") and ``candidates``: a
        list of dicts (``cov_dof``, ``cov_scale`` as set, ``chosen_cov_dof``,
        ``chosen_cov_scale``, ``log_evidence``), one per candidate prior (the fixed
        values; with any value "auto" ``cov_dof="auto"``; with ``cov_scale`` or
        ``mean_strength`` "auto" also both ``cov_dof`` and ``cov_scale`` "auto", and the
        chosen one), ready for ``pandas.DataFrame``; ``log_evidence`` differences are log
        Bayes factors. Also ``mean_strength`` (kappa0) and, with complete data and
        ``cov_scale`` or ``mean_strength`` "auto", ``structures``: the log evidence of
        mclust's covariance structures (LDA: EII, EEI, EEE; QDA: also VII, VVI, VVV),
        each at its own type-II ML strength and scale
        (``bayesgen.families.mvn.structures``). With ``cov_dof="oas"``,
        ``oas_shrinkage``: the OAS intensity delta in [0, 1] (LDA: one; QDA: one per
        class). ``structure``: mclust's name of the fitted covariance structure; with
        ``cov_structure`` "auto" or "average", ``structures`` replaces the list above:
        one dict per candidate structure (``structure``, ``cov_structure``,
        ``mean_strength``, ``cov_dof``, ``cov_scale``, ``log_evidence``, ``weight``, and
        ``bic`` under ``method="mle"``), ``weight`` being its posterior probability.
"""


class QDA(_MVNClassifier):
    __doc__ = (
        """Quadratic discriminant analysis: x | y=k ~ MVN(mu_k, Sigma_k), NIW prior per class.

    MAP is the joint posterior mode: mu_k = m_k, Sigma_k = Psi_k / (nu_k + d + 2)."""
        + _SHARED_DOC
        + _MVN_DOC.format(div_unbiased="N_k - 1", dof_default="auto", dof_why=(
            "The default follows the validation study ``validation/prior_study.py``: "
            "for QDA\n        the evidence predicts better than OAS."))
        + """
    Attributes
    ----------
    classes_, class_count_, class_prior_, means_ (K, d), covariance_ (list of K (d, d)),
    all in the units of X; _frame: the per-feature frame of the internal computations;
    prior_search_: dict, see below
"""
        + "\n" + _SEARCH_DOC
    )
    _tied = False


class LDA(ClassNamePrefixFeaturesOutMixin, TransformerMixin, _MVNClassifier):
    __doc__ = (
        """Linear discriminant analysis: x | y=k ~ MVN(mu_k, Sigma), one shared covariance.

    Prior: Sigma ~ IW(Psi0, nu0), mu_k | Sigma ~ N(m0, Sigma / kappa0) independently.
    MAP is the joint posterior mode: mu_k = m_k, Sigma = Psi_n / (nu_n + d + 1 + K)."""
        + _SHARED_DOC
        + """    n_components : int or None, default=None
        Number of discriminant directions kept by ``transform``: at most
        min(K - 1, d) (as scikit-learn); None keeps that maximum. Larger values raise
        ``ValueError`` at fit.
"""
        + _MVN_DOC.format(div_unbiased="N - K", dof_default="oas", dof_why=(
            "The default follows the validation study ``validation/prior_study.py``: "
            "\"oas\"\n        predicts better on real data with few rows per feature "
            "(breast cancer, digits);\n        \"auto\" when the features are strongly "
            "correlated Gaussians."))
        + """
    Attributes
    ----------
    _frame (the per-feature frame of the internal computations; the others are in the
    units of X), classes_, class_count_, class_prior_, means_ (K, d), covariance_ (d, d),
    coef_ (K, d) or (1, d), intercept_ (K,) or (1,), scalings_ (d, d),
    explained_variance_ratio_ (n_components,), xbar_ (d,), prior_search_ (below)
"""
        + _SEARCH_DOC
    )
    _tied = True
    _parameter_constraints: ClassVar[dict] = {
        **constraints("mvn"),
        "n_components": [Interval(Integral, 1, None, closed="left"), None],
    }

    def __init__(
        self,
        *,
        method: str = "map",
        class_alpha: Any = 1.0,
        class_prior: Any = None,
        n_components: int | None = None,
        mean_prior: Any = None,
        mean_strength: float = 0.01,
        cov_target: Any = None,
        cov_dof: Any = "oas",
        cov_scale: Any = None,
        divisor: str = "n",
        cov_prior_form: str = "niw",
        cov_structure: str = "full",
        draws: int = 1000,
        tune: int = 1000,
        chains: int = 4,
        sampler: str = "auto",
        chain_method: str = "sequential",
        target_accept: float = 0.8,
        progressbar: bool | str = "auto",
        random_state: Any = None,
        loss: Any = None,
        unlabeled: Any = None,
        unlabeled_weight: float = 1.0,
        n_jobs: int | None = None,
        cov_prior: Any = "deprecated",
        covariance_prior: Any = "deprecated",
    ) -> None:
        self._store(locals())

    def _after_fit(self) -> None:
        """coef_, intercept_ and the Fisher projection (:mod:`.lda_projection`)."""
        lda_projection.fit(self)

    @property
    def _n_features_out(self) -> int:
        """Number of discriminant directions returned by ``transform`` (K - 1 at most)."""
        return self._n_components

    @predicting("transform", width=lambda self: self._n_features_out)
    def transform(self, X: Any) -> np.ndarray:
        """Project onto the first ``n_components`` Fisher discriminant directions.

        ``(X - xbar_) @ scalings_[:, :n_components]``, shape (n, n_components)
        (n_components = min(K - 1, d) by default): the directions maximise
        between-class over within-class variance and are scaled so that the
        within-class covariance of the projected data is the identity. Posterior
        methods project with the posterior mean of the means and covariance. A row with
        missing entries (NaN) is projected through its posterior mean
        E[x | x_o] = sum_k p(k | x_o) E[x | x_o, k] (the Gaussian conditional mean of
        the missing coordinates given the observed ones).
        """
        from bayesgen.inference import scoring

        check_is_fitted(self, "scalings_")
        X = self._check_X_predict(X)
        if not hasattr(self, "_scalings"):  # fitted before the frame existed
            return (X - self.xbar_) @ self.scalings_[:, : self._n_components]
        Z = scoring.internal(self._fitted(), X)  # exact and overflow-free in the fit's frame
        if np.isnan(Z).any():  # gaps: project the rows' posterior means
            from bayesgen.families.mvn.missing import expected_rows

            internal = scoring.point_params(self._fitted())
            Z = expected_rows(Z, internal["mu"], internal["cov"], self.predict_proba(X))
        return (Z - self._zbar) @ self._scalings[:, : self._n_components]

