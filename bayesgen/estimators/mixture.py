"""Mixture discriminant analysis: each class density a finite mixture.

:class:`MixtureDA` is QDA with M_k Gaussian components per class instead of one
(mclust's ``MclustDA``, Fraley and Raftery 2002; Hastie and Tibshirani 1996), with the
conjugate prior of QDA on every component and a Dirichlet prior on the weights; or,
with ``component="bernoulli"`` / ``"poisson"``, BernoulliNB / PoissonNB with M_k
components per class (latent class models for binary and count data). The family is
:class:`bayesgen.families.mixture.family.MixtureFamily` over the component family of
QDA, BernoulliNB or PoissonNB; EM and data augmentation are :mod:`bayesgen.families.mixture.em`
and :mod:`bayesgen.families.mixture.gibbs`, the optional posterior predictive of the EM
mode (``predictive="posterior"``) :mod:`bayesgen.families.mixture.predictive`, the PyMC
model that ``method="mcmc"`` samples with NUTS :mod:`bayesgen.families.mixture.pymc`.
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any, ClassVar

import numpy as np
from scipy.special import logsumexp
from sklearn.base import clone
from sklearn.model_selection import KFold, StratifiedKFold
from sklearn.utils import Bunch
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from bayesgen.data.validation import check_concentration, check_loss
from bayesgen.estimators import streaming
from bayesgen.estimators.base import GenerativeClassifier
from bayesgen.estimators.params import COMMON, FAMILIES
from bayesgen.families import get_family
from bayesgen.families.mixture import em, gibbs
from bayesgen.families.mixture import predictive as mixture_predictive
from bayesgen.families.mixture import pymc as mixture_pymc
from bayesgen.families.mixture.family import MixtureFamily
from bayesgen.inference import classprior, mcmc, posterior, rows, scoring, statistics
from bayesgen.utils.heavy import import_arviz
from bayesgen.utils.random import rng_from

_MVN = FAMILIES["mvn"]
#: the methods of MixtureDA
METHODS = ("map", "gibbs", "mcmc")
#: the component families of MixtureDA (``component``)
COMPONENTS = ("gaussian", "bernoulli", "poisson")
#: the error of method="mcmc" with Bernoulli or Poisson components
_NO_NUTS = ("MixtureDA(component={component!r}) supports method='map' and 'gibbs'; "
            "method='mcmc' (NUTS on the PyMC model) needs component='gaussian'.")
#: folds of the cross-validated predictive of ``method="map"`` (:meth:`MixtureDA.loo_log_joint`)
LOO_FOLDS = 10
#: the error of method="mcmc" on missing entries
_NO_GAPS = ("MixtureDA(method={method!r}) does not support missing entries (NaN in X) "
            "yet; use method='map' (EM over the missing entries) or 'gibbs' (data "
            "augmentation), or impute them.")
#: folds of the held-out check of ``n_components="auto"`` (:meth:`MixtureDA._check_by_log_loss`)
CV_FOLDS = 5
#: Pareto k above which a PSIS-LOO term is unreliable (Vehtari et al. 2024)
PARETO_K_WARN = 0.7


def _never(self) -> bool:
    return False


class MixtureDA(GenerativeClassifier):
    """Mixture discriminant analysis: x | y=k ~ sum_m w_km N(mu_km, Sigma_km).

    Model, for class k with M_k components::

        y ~ Categorical(pi),             pi ~ Dirichlet(class_alpha)
        w_k ~ Dirichlet(weight_alpha 1_{M_k})
        Sigma_km ~ IW(Psi0, nu0),        mu_km | Sigma_km ~ N(m0, Sigma_km / kappa0)
        x | y = k ~ sum_m w_km N(mu_km, Sigma_km)

    The prior of the components is QDA's conjugate prior, resolved from the classes'
    statistics (one Gaussian per class) by QDA's own code: m0 the overall mean,
    kappa0 = ``mean_strength``, E[Sigma] = s x ``cov_target`` (default: the diagonal of
    the pooled within-class variances), Psi0 = (nu0 - d - 1) E[Sigma]:

    - a class with one component gets exactly QDA's prior (nu0 = ``cov_dof``, default
      "auto": the value maximising QDA's evidence; s = ``cov_scale``), so
      ``n_components=1`` is ``bg.QDA`` with the same settings, to rounding;
    - the components of a class with M > 1 components (``component_prior="evidence"``,
      the default) get QDA's rule applied to the components themselves: EM first runs
      under mclust's default prior (Fraley and Raftery 2007: nu0 = d + 2, the weakest
      with a finite mean, unless ``cov_dof`` is a number; s = ``cov_scale`` (or 1) /
      M^(2/d), a 1/M share of the class's volume); the rows' most probable components
      are then treated as M classes, QDA's prior is resolved from their statistics by
      QDA's own code (``cov_dof="auto"``: nu0 maximising the evidence of those
      "classes"; target: their pooled diagonal variances; m0 the class mean), and EM
      runs again under it from that partition. ``component_prior="mclust"`` stops after
      the first step; ``"qda"`` gives every component the prior QDA resolves from the
      classes. QDA's prior of the classes does not suit components: it sees one
      Gaussian per class and, on classes made of several blobs, prefers nu0 = 1e6,
      forcing every component to the whole class's spread.

    ``cov_structure="diag"``: diagonal covariances, each variance with QDA's
    (``cov_structure="diag"``) Inverse-Gamma prior (nu0 = 3 for the mixtures).
    ``component_prior_`` holds each class's resolved prior in the units of X.

    Binary and count data (``component="bernoulli"`` / ``"poisson"``): every component
    is a product of independent features with the conjugate prior of ``bg.BernoulliNB``
    / ``bg.PoissonNB``, resolved from the classes' statistics by their own code and
    shared by every component of every class::

        bernoulli: theta_kmj ~ Beta(alpha, alpha),
                   x_j | y = k, component m ~ Bernoulli(theta_kmj)
        poisson:   lambda_kmj ~ Gamma(alpha, beta_j), beta_j = (alpha - 1) / r_j,
                   x_j | y = k, component m ~ Poisson(lambda_kmj)

    (r_j = ``rate_prior``, default the overall mean of feature j). The features are
    independent given the component, not given the class: a mixture captures the
    dependence between them. ``n_components=1`` is ``bg.BernoulliNB`` /
    ``bg.PoissonNB`` (``method="map"``) with the same ``alpha``, ``binarize``,
    ``rate_prior`` and ``class_alpha``, to rounding. The Gaussian settings
    (``cov_structure``, ``mean_prior``, ``mean_strength``, ``cov_target``, ``cov_dof``,
    ``cov_scale``, ``component_prior``) are ignored. Methods "map" and "gibbs" (EM and
    data augmentation work through the same conjugate hooks); "mcmc" raises
    ``ValueError`` (the PyMC mixture model, and so ``model_``, is written for Gaussian
    components). Missing entries (NaN) are taken by "map" and "gibbs" without any
    completion: a missing entry drops its factor from the component densities and its
    count from the conjugate statistics, exactly.

    Parameters
    ----------
    n_components : int, list of int or "auto", default="auto"
        Components per class: one number for every class, one per class (order of
        ``classes_``), or "auto": per class, BIC proposes the number in
        1..``max_components`` with the largest BIC = 2 log p(X_k | MAP) - p log N_k
        (mclust's criterion, p the free parameters; the log-likelihood at the posterior
        mode, as mclust with a prior); candidates above the number of distinct rows of a
        class are skipped. When some class gets more than one, 5-fold cross-validated
        log loss of the labels checks the proposal: a class keeps its components only
        if reverting it to one component would raise the cross-validated log loss by
        more than one standard error (``n_init`` more EM runs per class and fold,
        predicting as the fit does; see ``cv_log_loss_``). BIC scores each class's
        density alone, and on real data (digits, breast cancer) it adds components that
        sharpen p(x | y) but make p(y | x) overconfident: there the check keeps one
        component, i.e. QDA.
        BIC was chosen on held-out data against fixed numbers, a sparse Dirichlet prior
        on the weights and the closed-form ICL (``benchmarks/results_mixture.md``).
    max_components : int, default=5
        Largest candidate of "auto" (MclustDA's default range is 1..5).
    component : {"gaussian", "bernoulli", "poisson"}, default="gaussian"
        The component family: Gaussian (QDA's), Bernoulli (BernoulliNB's: binary
        features, after ``binarize``) or Poisson (PoissonNB's: non-negative counts).
    method : {"map", "gibbs", "mcmc"}, default="map"
        "map": EM for the posterior mode, ``n_init`` k-means++ starts per class
        (:mod:`bayesgen.families.mixture.em`); predictions plug the mode in (a
        mixture of Gaussians per class, the plug-in Bayes rule of every point method)
        or, with ``predictive="posterior"`` (below), are the conditional posterior
        predictive at the mode. "gibbs": posterior draws by data augmentation, ``chains``
        chains of ``tune`` + ``draws`` sweeps started at the MAP
        (:mod:`bayesgen.families.mixture.gibbs`); predictions average over the draws
        (the posterior predictive), and ``idata_`` holds the posterior. "mcmc": NUTS
        (``sampler``) on the PyMC model with the component labels summed out of the
        likelihood (:mod:`bayesgen.families.mixture.pymc`; the same prior and
        posterior as "gibbs"), ``chains`` chains of ``tune`` + ``draws`` iterations,
        each started near the MAP (numpyro: the mode found by Newton's method from
        the MAP, whitened by its Laplace covariance, as every bayesgen NUTS fit). Both
        posterior methods run EM first (``n_components="auto"`` chooses by BIC there).
    class_alpha, class_prior, loss, random_state :
        As for every bayesgen estimator (see ``bg.QDA``).
    n_jobs : int or None, default=None
        Threads for the passes over large arrays that the shared prediction code splits
        by rows (the normalisation of ``predict_proba``; ``bayesgen.utils.threads``).
        None means 1 unless a ``joblib.parallel_config(n_jobs=...)`` context says
        otherwise; -1 means all cores. EM and the Gibbs sweeps run in one thread.
    weight_alpha : float > 0, default=1.0
        Dirichlet concentration of each class's mixture weights. 1: uniform (the MAP
        weights are N_m / N_k, as the MLE); > 1 keeps components from emptying;
        < 1 (sparse) lets EM empty surplus components (their weight drops to 0).
    alpha : float or array-like of shape (d,), default=2.0
        Bernoulli and Poisson components: the prior's concentration, as ``alpha`` of
        ``bg.BernoulliNB`` (Beta(alpha, alpha); >= 1) and ``bg.PoissonNB`` (Gamma shape;
        >= 1, alpha - 1 pseudo-counts at ``rate_prior``). Ignored by Gaussian components.
    binarize : float or None, default=0.0
        Bernoulli components: x > binarize becomes 1, else 0; None: X must hold only 0
        and 1 (as ``bg.BernoulliNB``).
    rate_prior : float, array-like of shape (d,) or None, default=None
        Poisson components: the prior mode of the rates (None: the overall feature
        means), as ``bg.PoissonNB``.
    cov_structure : {"full", "diag"}, default="full"
        Covariance of each component (mclust's VVV, VVI).
    mean_prior, mean_strength, cov_target, cov_dof, cov_scale :
        QDA's prior hyper-parameters, with QDA's meanings and defaults (see above for
        the classes with several components).
    predictive : {"plugin", "posterior"}, default="plugin"
        What ``method="map"`` predicts with (``predict_proba``,
        ``predict_joint_log_proba``, ``score_samples``, ``decision_function``, and the
        check of ``n_components="auto"``). "plugin" (the default, as every point
        method of bayesgen): the Gaussian mixture at the mode and the MAP class prior
        (``n_components=1`` is ``bg.QDA()``). "posterior": the parameters integrated out
        given the responsibilities r_nm at the mode
        (:mod:`bayesgen.families.mixture.predictive`): each component's closed-form
        conjugate posterior of its r-weighted rows and its Student-t predictive, weights
        E[w_km] = (N_km + weight_alpha) / (N_k + M_k weight_alpha), class prior
        E[pi_k] = (N_k + a_k) / (N + sum a); one mean-field variational step from the
        EM mode, exact for one component: ``n_components=1`` is
        ``bg.QDA(method="conjugate")``'s closed-form predictive to rounding. It keeps
        what the plug-in drops, the uncertainty of parameters estimated from a share of
        a class's rows, and lowers the held-out log loss where classes are multimodal
        or have few rows per dimension (``benchmarks/results_mixture.md``); it omits
        only the labels' own uncertainty ("gibbs" keeps it). The fitted parameters
        (``weights_``, ``means_``, ``covariances_``) and the components ``sample``
        draws from are the mode's either way. Ignored by "gibbs" and "mcmc".
    component_prior : {"evidence", "mclust", "qda"}, default="evidence"
        The prior of the components of classes with several components (above).
        Measured on held-out data (``benchmarks/results_mixture.md``): "evidence" has the
        lowest log loss on digits and the interleaved blobs, "mclust" is as good on the
        generated 5-D mixtures, "qda" fails on the interleaved blobs.
    n_init : int, default=3
        EM starts per class and number of components (k-means++ seeds).
    max_iter : int, default=100
        Most EM iterations per start.
    tol : float, default=1e-5
        EM stops when an iteration changes the log-likelihood by at most
        tol x (1 + abs(log-likelihood)) (mclust's relative tolerance).
    draws, tune, chains : int, default=1000, 1000, 4
        Kept draws, warm-up iterations and chains of ``method="gibbs"`` (sweeps) and
        ``"mcmc"`` (NUTS iterations).
    sampler, chain_method, target_accept, progressbar :
        NUTS settings of ``method="mcmc"``, as for ``bg.QDA(method="mcmc")``
        (``sampler="auto"``: numpyro when installed).

    Attributes
    ----------
    classes_, class_count_, class_prior_, method_ :
        As every bayesgen estimator; ``class_prior_`` of ``method="map"`` is the
        MAP with ``predictive="plugin"`` (the default), the Dirichlet posterior mean
        E[pi | y] with "posterior".
    n_components_ : ndarray (K,) of int
        Components per class.
    weights_ : ndarray (K, M)
        Mixture weights (M = max ``n_components_``; 0 for the padding of classes with fewer
        components); posterior means for "gibbs" (after relabeling).
    means_ : ndarray (K, M, d)
        The components' means: Gaussian mu (in the units of X), Bernoulli theta (the
        probabilities of a 1), Poisson lambda (the rates).
    covariances_ : ndarray (K, M, d, d)
        Gaussian components only, in the units of X.
    component_prior_ : list of K dicts
        The resolved component prior of each class (``m0``, ``kappa0``, ``nu0``,
        ``Psi0`` for full covariances), in the units of X; QDA's for one-component
        classes. Bernoulli: ``alpha`` (d,); Poisson: ``alpha`` and ``beta`` (d,).
    bic_ : ndarray (K, max_components)
        With "auto": the BIC of each candidate per class (NaN where skipped).
    cv_log_loss_ : ndarray (2,)
        With "auto": the 5-fold cross-validated log loss per row of the labels with
        BIC's numbers of components, then with the numbers kept (NaN, NaN when BIC
        gives every class one component, or a class has fewer than 2 rows).
    n_iter_ : ndarray (K,) of int
        EM iterations of the chosen start per class.
    converged_ : ndarray (K,) of bool
    idata_ : arviz.InferenceData
        ``method="gibbs"`` and ``"mcmc"``: ``posterior`` (``pi``, ``weights``, ``mu``,
        ``cov`` with dims class, component, feature), ``log_likelihood``
        (log p(x_n, y_n | theta), components marginalised: PSIS-LOO with ``az.loo``
        and ``bg.compare``), ``observed_data``, ``sample_stats`` (``relabeled``, and
        ``log_lik_x`` = sum_n log p(x_n | y_n, theta) for "gibbs", NUTS's statistics
        ``diverging``, ``lp``, ``n_steps``, ... for "mcmc").
    model_ : pymc.Model
        Posterior fits (they keep their rows): the PyMC model, ``pi ~ Dirichlet``,
        observed ``y``, the weights ``weights_<k>`` ~ Dirichlet(``weight_alpha``) of
        every class k with several components, the components' conjugate priors
        batched over the dim ``class_component`` (``component_mu``,
        ``component_cov`` and their free variables), the padded Deterministics
        ``weights``, ``mu``, ``cov``, and observed ``x ~ pm.Mixture`` (the component
        labels summed out); see :mod:`bayesgen.families.mixture.pymc`. Point fits:
        ``build_model(X, y)``.

    Notes
    -----
    Label switching: the predictive quantities do not depend on the components'
    order; parameter summaries do, and the draws of "gibbs" and "mcmc" are relabeled
    to the MAP's order (:func:`bayesgen.families.mixture.gibbs.relabel`; NUTS started
    at the MAP rarely switches labels when the components are separated, and the
    ``relabeled`` sample statistic says when it did). Missing entries (NaN in X):
    ``method="map"`` runs EM over the component labels and the missing coordinates
    together (:mod:`bayesgen.families.mixture.em`), and every prediction integrates
    missing entries out (the Gaussian marginal of the observed coordinates);
    "gibbs" draws them with the component labels each sweep (data augmentation,
    :mod:`bayesgen.families.mixture.gibbs`); "mcmc" refuses them in fit and predict
    (``ValueError``). Unlabeled rows and ``partial_fit`` are not supported.

    ``bg.StackedClassifier`` takes MixtureDA members, weighed by estimated
    leave-one-out terms (:meth:`loo_log_joint`; a mixture has no exact one): PSIS-LOO
    from the draws of "gibbs" and "mcmc" (Pareto k reported, a warning above 0.7),
    10-fold cross-validated refits of the whole fit for "map" (10 more fits).
    """

    _methods: tuple[str, ...] = METHODS
    _parameter_constraints: ClassVar[dict] = {
        **{k: v for k, v in COMMON.items()
           if k not in ("method", "unlabeled", "unlabeled_weight")},
        "method": [StrOptions(set(METHODS))],
        "n_components": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"}),
                         "array-like"],
        "max_components": [Interval(Integral, 1, None, closed="left")],
        "weight_alpha": [Interval(Real, 0, None, closed="neither")],
        "component": [StrOptions(set(COMPONENTS))],
        "alpha": FAMILIES["bernoulli"]["alpha"],
        "binarize": FAMILIES["bernoulli"]["binarize"],
        "rate_prior": FAMILIES["poisson"]["rate_prior"],
        "cov_structure": [StrOptions({"full", "diag"})],
        "mean_prior": _MVN["mean_prior"],
        "mean_strength": _MVN["mean_strength"],
        "cov_target": _MVN["cov_target"],
        "cov_dof": [StrOptions({"auto", "oas"}), None, Interval(Real, 2, None, closed="neither")],
        "cov_scale": [StrOptions({"auto"}), None, Interval(Real, 0, None, closed="neither")],
        "component_prior": [StrOptions({"evidence", "mclust", "qda"})],
        "predictive": [StrOptions({"posterior", "plugin"})],
        "n_init": [Interval(Integral, 1, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
    }

    def __init__(
        self,
        *,
        n_components: Any = "auto",
        max_components: int = 5,
        method: str = "map",
        component: str = "gaussian",
        class_alpha: Any = 1.0,
        class_prior: Any = None,
        weight_alpha: float = 1.0,
        alpha: Any = 2.0,
        binarize: Any = 0.0,
        rate_prior: Any = None,
        cov_structure: str = "full",
        mean_prior: Any = None,
        mean_strength: Any = 0.01,
        cov_target: Any = None,
        cov_dof: Any = "auto",
        cov_scale: Any = None,
        component_prior: str = "evidence",
        predictive: str = "plugin",
        n_init: int = 3,
        max_iter: int = 100,
        tol: float = 1e-5,
        draws: int = 1000,
        tune: int = 1000,
        chains: int = 4,
        sampler: str = "auto",
        chain_method: str = "sequential",
        target_accept: float = 0.8,
        progressbar: Any = "auto",
        random_state: Any = None,
        loss: Any = None,
        n_jobs: int | None = None,
    ) -> None:
        self.n_components = n_components
        self.max_components = max_components
        self.method = method
        self.component = component
        self.class_alpha = class_alpha
        self.class_prior = class_prior
        self.weight_alpha = weight_alpha
        self.alpha = alpha
        self.binarize = binarize
        self.rate_prior = rate_prior
        self.cov_structure = cov_structure
        self.mean_prior = mean_prior
        self.mean_strength = mean_strength
        self.cov_target = cov_target
        self.cov_dof = cov_dof
        self.cov_scale = cov_scale
        self.component_prior = component_prior
        self.predictive = predictive
        self.n_init = n_init
        self.max_iter = max_iter
        self.tol = tol
        self.draws = draws
        self.tune = tune
        self.chains = chains
        self.sampler = sampler
        self.chain_method = chain_method
        self.target_accept = target_accept
        self.progressbar = progressbar
        self.random_state = random_state
        self.loss = loss
        self.n_jobs = n_jobs

    # ------------------------------------------------------------ the family
    def _component_family(self, n_mix: int = 1, d: int = 1):
        """The component family: ``component="gaussian"``: QDA's (full NIW, or diagonal
        Inverse-Gamma variances) with the prior of the components of a class of
        ``n_mix`` components in ``d`` dimensions (:meth:`_component_prior_options`);
        "bernoulli": BernoulliNB's (``alpha``, ``binarize``); "poisson": PoissonNB's
        (``alpha``, ``rate_prior``), the same prior for every number of components."""
        if self.component == "bernoulli":
            return get_family("bernoulli")(alpha=self.alpha, binarize=self.binarize)
        if self.component == "poisson":
            return get_family("poisson")(alpha=self.alpha, rate_prior=self.rate_prior)
        if self.cov_structure == "diag":
            name, extra = "mvn_diagonal", {"spherical": False}
        else:
            name, extra = "mvn", {}
        dof, scale = self._component_prior_options(n_mix, d)
        return get_family(name)(
            tied=False, **extra, mean_prior=self.mean_prior,
            mean_strength=self.mean_strength, cov_target=self.cov_target,
            cov_dof=dof, cov_scale=scale)

    def _component_prior_options(self, n_mix: int, d: int) -> tuple[Any, Any]:
        """``cov_dof`` and ``cov_scale`` of the components of a class with ``n_mix``
        components: QDA's own for one component (or ``component_prior="qda"``); else
        (mclust's default prior, Fraley and Raftery 2007) ``cov_dof`` "auto" becomes
        None (d + 2, the weakest prior with a finite mean; the diagonal family's 3) and
        the scale is divided by n_mix^(2/d)."""
        if n_mix == 1 or self.component_prior == "qda":
            return self.cov_dof, self.cov_scale
        dof = None if isinstance(self.cov_dof, str) else self.cov_dof
        base = 1.0 if self.cov_scale is None or isinstance(self.cov_scale, str) \
            else float(self.cov_scale)
        return dof, base * n_mix ** (-2.0 / d)

    def _make_family(self, columns=None) -> MixtureFamily:
        return MixtureFamily(self._component_family())

    def _gaussian(self) -> bool:
        return self.component == "gaussian"

    def _component_kind(self) -> str:
        """What BIC counts per component (:func:`bayesgen.families.mixture.em.component_size`):
        the covariance structure of Gaussian components, else the component family."""
        return self.cov_structure if self._gaussian() else self.component

    def __sklearn_tags__(self):
        """The base class's tags; ``allow_nan`` for ``method="map"`` and ``"gibbs"``
        (``"mcmc"`` refuses missing entries in fit and predict)."""
        from dataclasses import replace

        tags = super().__sklearn_tags__()
        allow = bool(tags.input_tags.allow_nan and self._allows_gaps(self.method))
        return replace(tags, input_tags=replace(tags.input_tags, allow_nan=allow))

    @staticmethod
    def _allows_gaps(method: str) -> bool:
        """Whether ``method`` takes missing entries: "map" (EM over them) and "gibbs"
        (data augmentation: :mod:`bayesgen.families.mixture.gibbs`); not "mcmc"."""
        return method in ("map", "gibbs")

    def _check_X_predict(self, X: Any) -> np.ndarray:
        X = super()._check_X_predict(X)
        if not self._allows_gaps(self.method_) and np.isnan(
                np.asarray(X, dtype=np.float64)).any():
            raise ValueError(_NO_GAPS.format(method=self.method_))
        return X

    def _check_params(self) -> str:
        self._validate_params()
        if self.method not in METHODS:  # unreachable after the constraints; kept explicit
            raise ValueError(f"MixtureDA: method must be one of {METHODS}; got "
                             f"{self.method!r}.")
        if self.method == "mcmc" and not self._gaussian():
            raise ValueError(_NO_NUTS.format(component=self.component))
        return self.method

    # partial_fit: EM needs every row of a class at once (not yet supported)
    @available_if(_never)
    def partial_fit(self, X: Any, y: Any, classes: Any = None, sample_weight: Any = None):
        """Not available for MixtureDA (``hasattr(est, "partial_fit")`` is False)."""
        raise ValueError("MixtureDA has no partial_fit: EM needs every row of a class at "
                         "once; call fit on all the rows.")

    # -------------------------------------------------------------------- fit
    def fit(self, X: Any, y: Any, sample_weight: Any = None):
        """Fit the mixture of every class (EM, then data augmentation for "gibbs" or
        NUTS for "mcmc", from the EM mode).

        Parameters
        ----------
        X : array-like or DataFrame of shape (n, d)
        y : array-like of shape (n,)
        sample_weight : array-like of shape (n,), optional
            Non-negative weights (a weight is a replication count).

        Returns
        -------
        self
        """
        method = self._check_params()
        family, batch = statistics.read_batch(self, X, y, sample_weight, method,
                                              make_family=streaming.make_family)
        self._columns = batch.columns
        if batch.unlabeled is not None:
            raise ValueError("MixtureDA does not support unlabeled rows (None/NaN in y) "
                             "yet; drop them or use a semi-supervised estimator such as "
                             "bg.QDA.")
        classes, K = batch.classes, batch.classes.size
        Z = scoring.to_internal(batch.frame, batch.X)
        if not self._allows_gaps(method) and np.isnan(Z).any():
            raise ValueError(_NO_GAPS.format(method=method))
        sizes = self._requested_components(K)
        prior = family.prior(batch.stats)  # QDA's: of the one-component classes
        priors = {1: prior}
        d = Z.shape[1]

        def prior_of(M: int) -> dict:
            """The components' prior of a class with M components (resolved once per M
            from the classes' statistics, as QDA's)."""
            if not self._gaussian():  # BernoulliNB's / PoissonNB's prior for every M
                return prior
            if M not in priors:
                fam = self._component_family(M, d).configured(labels=classes,
                                                              frame=batch.frame)
                priors[M] = fam.prior(batch.stats, record=False)
            return priors[M]

        rng = rng_from(self.random_state)
        component = family.component
        per_component = em.component_size(self._component_kind(), d)
        fits, bic, singles = [], np.full((K, self.max_components), np.nan), []
        for k in range(K):
            take = (batch.y_index == k) & (batch.weights > 0)
            Zk, vk = Z[take], batch.weights[take]
            if Zk.shape[0] == 0:
                raise ValueError(f"MixtureDA: class {classes[k]!r} has no row of positive "
                                 "weight.")
            distinct = np.unique(Zk, axis=0).shape[0]
            kw = {"alpha": float(self.weight_alpha), "n_init": self.n_init,
                  "max_iter": self.max_iter, "tol": float(self.tol), "rng": rng,
                  "per_component": per_component}
            if sizes is None:
                candidates = range(1, min(self.max_components, distinct) + 1)
                found = [self._fit_class(component, Zk, vk, M, prior_of, batch.frame, kw)
                         for M in candidates]
                for M, (f, _) in zip(candidates, found, strict=True):
                    bic[k, M - 1] = f.bic
                fits.append(max(found, key=lambda f: f[0].bic))
                singles.append(found[0])
            else:
                if sizes[k] > distinct:
                    raise ValueError(
                        f"MixtureDA: class {classes[k]!r} has {distinct} distinct rows, "
                        f"fewer than its n_components={sizes[k]}; lower n_components or "
                        "use n_components='auto'.")
                fits.append(self._fit_class(component, Zk, vk, sizes[k], prior_of, batch.frame,
                                            kw))
        cv_loss = None
        if sizes is None and any(f.weights.shape[0] > 1 for f, _ in fits):
            keep, cv_loss = self._check_by_log_loss(component, Z, batch, fits, prior_of(1),
                                                    rng)
            fits = [f if keep[k] else singles[k] for k, f in enumerate(fits)]
        fits, self._class_priors = [f for f, _ in fits], [p for _, p in fits]
        self._set_fit_state(method, family, batch, prior)
        self.n_components_ = np.array([f.weights.shape[0] for f in fits])
        self.n_iter_ = np.array([f.n_iter for f in fits])
        self.converged_ = np.array([f.converged for f in fits])
        self.component_prior_ = [family.prior_to_user(p) for p in self._class_priors]
        if sizes is None:
            self.bic_ = bic
            self.cv_log_loss_ = np.full(2, np.nan) if cv_loss is None else cv_loss
        else:
            self.__dict__.pop("bic_", None)
            self.__dict__.pop("cv_log_loss_", None)
        # the prior of model_ and of the NUTS model: every class's component prior
        self._prior = mixture_pymc.mixture_prior(self._class_priors, self.n_components_,
                                                 self.weight_alpha)
        weights, params = _pad([f.weights for f in fits], [f.params for f in fits])
        self._params = {"weights": weights, **params}
        log_pi = classprior.log_point("map", batch.counts, self.class_alpha_, self._fixed_pi)
        if method == "map" and self.predictive == "posterior":
            self._params["predictive"] = self._class_predictives(component, Z, batch, fits)
            log_pi = self._log_pi_mean(batch.counts)
        if method == "map":
            self._set_point_attributes(np.exp(log_pi), self._params, log_pi=log_pi)
        elif method == "gibbs":
            self._fit_gibbs(component, Z, batch, fits, rng)
        else:
            self._fit_mcmc(Z, batch, np.exp(log_pi))
        rows.keep_weights(self, batch.weights)
        return self

    def _class_predictives(self, component, Z: np.ndarray, batch, fits: list) -> list:
        """The conditional posterior predictive of every class at its mode
        (:func:`bayesgen.families.mixture.predictive.class_predictive`), a list of K."""
        out = []
        for k, f in enumerate(fits):
            take = (batch.y_index == k) & (batch.weights > 0)
            out.append(mixture_predictive.class_predictive(
                component, Z[take], batch.weights[take], f, self._class_priors[k],
                float(self.weight_alpha)))
        return out

    def _log_pi_mean(self, counts: np.ndarray) -> np.ndarray:
        """log E[pi | y] = log(N_k + a_k) - log(N + sum a) (the Dirichlet posterior mean,
        as QDA's ``method="conjugate"``), or log of a fixed ``class_prior``."""
        numer = (np.asarray(self._fixed_pi, dtype=np.float64) if self._fixed_pi is not None
                 else np.asarray(counts, dtype=np.float64) + self.class_alpha_)
        with np.errstate(divide="ignore"):
            return np.log(numer) - np.log(numer.sum())

    def _fit_class(self, component, Z: np.ndarray, v: np.ndarray, M: int, prior_of,
                   frame, kw: dict) -> tuple:
        """The MAP mixture of M components of one class's rows Z (n, d), weights v (n,),
        and its prior: EM under ``prior_of(M)`` (mclust's prior for M > 1); with
        ``component_prior="evidence"`` and M > 1 the prior then re-resolved by QDA's
        rule from the components found (their hard partition as classes), and EM again
        from that partition. Returns ``(ClassFit, prior)``."""
        first = em.run(component, Z, v, prior_of(M), M, **kw)
        if M == 1 or self.component_prior != "evidence" or not self._gaussian():
            return first, prior_of(M)
        labels = em.hard_labels(component, Z, first)
        own = self._component_family(1, Z.shape[1]).configured(labels=np.arange(M),
                                                                frame=frame)
        stats = component.stats(Z, labels, v, M)
        if "groups" in stats:  # missing entries: the partition's completed statistics
            stats = em.completed(component, stats, first.params)
        try:
            refined = own.prior(stats, record=False)
        except ValueError:  # e.g. a component without rows: keep the first prior
            return first, prior_of(M)
        return em.run(component, Z, v, refined, M, start=labels, **kw), refined

    def _check_by_log_loss(self, component, Z: np.ndarray, batch, fits: list,
                           prior_one: dict, rng) -> tuple[np.ndarray, np.ndarray]:
        """Which classes keep BIC's M > 1: the held-out log loss of the labels decides.

        ``CV_FOLDS``-fold stratified cross-validation over the rows of positive weight
        (shuffled with the fit's generator): in each fold every class is refitted on the
        other folds twice, with one component (QDA's closed-form MAP) and with BIC's M
        components (``n_init`` k-means++ EM starts under the class's resolved prior, as
        the full fit; not started from the full-data partition, which has seen the
        held-out rows and made the mixture look better than it predicts), giving the
        held-out log p(x_n | y = k) of every row under both, as the fit predicts
        (``predictive``: the plug-in by default, or the conditional posterior
        predictive). Greedy over the classes: the class whose reversion to one component
        raises the cross-validated log loss -sum_n w_n log p(y_n | x_n) of the labels
        least, in standard errors of that mean, reverts while that rise is below one
        standard error (the extra components must pay clearly). BIC scores each class's
        density alone and can prefer components that sharpen p(x | y) without helping,
        or while hurting, p(y | x) (a mixture of a few rows per component is
        overconfident). Returns ``keep`` (K,) of bool and the cross-validated log loss
        per row (BIC's choice, the kept choice). With a class of fewer than 2 rows the
        check is skipped (BIC's choice kept, NaN losses)."""
        K = batch.classes.size
        sizes = np.array([f.weights.shape[0] for f, _ in fits])
        keep = sizes > 1
        take = batch.weights > 0
        Zt, yt, vt = Z[take], batch.y_index[take], batch.weights[take]
        counts = np.bincount(yt, minlength=K)
        if counts.min() < 2:
            return keep, np.full(2, np.nan)
        seed = int(rng.integers(2**31 - 1))
        folds = StratifiedKFold(n_splits=min(CV_FOLDS, int(counts.min())), shuffle=True,
                                random_state=seed).split(Zt, yt)
        one, mix = np.empty((yt.size, K)), np.empty((yt.size, K))
        kw = {"alpha": float(self.weight_alpha), "n_init": self.n_init,
              "max_iter": self.max_iter,
              "tol": float(self.tol), "rng": rng,
              "per_component": em.component_size(self._component_kind(), Z.shape[1])}
        for train, test in folds:
            for k in range(K):
                rows = train[yt[train] == k]
                Zk, vk = Zt[rows], vt[rows]
                single = em.run(component, Zk, vk, prior_one, 1, **kw)
                one[test, k] = self._class_log_density(component, Zk, vk, single, prior_one,
                                                       Zt[test])
                if not keep[k]:
                    mix[test, k] = one[test, k]
                    continue
                _, prior = fits[k]
                refit = em.run(component, Zk, vk, prior, sizes[k], **kw)
                mix[test, k] = self._class_log_density(component, Zk, vk, refit, prior,
                                                       Zt[test])

        share = vt / vt.sum()

        def row_loss(choice: np.ndarray) -> np.ndarray:
            L = np.where(choice[None, :], mix, one)
            return logsumexp(L, axis=1) - L[np.arange(yt.size), yt]

        def excess(trial: np.ndarray, current: np.ndarray) -> float:
            """The mean loss a reversion adds, in standard errors of that mean."""
            diff = trial - current
            mean = float(share @ diff)
            se = float(np.sqrt(share @ (diff - mean) ** 2 / max(yt.size - 1, 1)))
            return mean / se if se > 0 else (0.0 if mean == 0 else np.sign(mean) * np.inf)

        current = row_loss(keep)
        start_loss = float(share @ current)
        while keep.any():
            trials = {k: row_loss(np.where(np.arange(K) == k, False, keep))
                      for k in np.flatnonzero(keep)}
            scores = {k: excess(t, current) for k, t in trials.items()}
            k_best = min(scores, key=scores.get)
            if not scores[k_best] < 1.0:  # the components pay by more than one se
                break
            keep[k_best], current = False, trials[k_best]
        return keep, np.array([start_loss, float(share @ current)])

    def _class_log_density(self, component, Z: np.ndarray, v: np.ndarray, fit, prior: dict,
                           Z_test: np.ndarray) -> np.ndarray:
        """log p(z | y = k) of rows Z_test under one class's fit to rows Z, weights v, as
        the fit predicts (``predictive``: the conditional posterior predictive, or the
        plug-in mixture), (n_test,)."""
        if self.predictive == "posterior":
            pred = mixture_predictive.class_predictive(component, Z, v, fit, prior,
                                                       float(self.weight_alpha))
            return mixture_predictive.log_density(component, Z_test, pred)
        return em.log_lik(component, Z_test, fit)

    def _requested_components(self, K: int) -> list[int] | None:
        """n_components as one int per class, or None for "auto"."""
        value = self.n_components
        if isinstance(value, str):
            return None
        if isinstance(value, Integral):
            return [int(value)] * K
        sizes = np.asarray(value)
        if sizes.shape != (K,) or not np.issubdtype(sizes.dtype, np.integer) or np.any(sizes < 1):
            raise ValueError(f"MixtureDA: n_components must be 'auto', a positive int or "
                             f"{K} positive ints (one per class); got {value!r}.")
        return [int(s) for s in sizes]

    def _set_fit_state(self, method: str, family, batch, prior: dict) -> None:
        """The fitted state every method shares (as the base class's fits set it)."""
        K = batch.classes.size
        for stale in ("idata_", "_posterior", "_log_pi_draws", "_train", "_train_weights"):
            self.__dict__.pop(stale, None)
        self.class_alpha_ = check_concentration(self.class_alpha, K, "class_alpha", "class")
        self._fixed_pi = classprior.check_fixed(self.class_prior, K)
        self._loss = check_loss(self.loss, K)
        self.method_ = method
        self.classes_ = batch.classes
        self.class_count_ = batch.counts
        self._model = None
        self._family = family
        self._frame = scoring.frame_of(family)
        self._stats = batch.stats
        self._prior = prior

    def _fit_gibbs(self, component, Z, batch, fits, rng) -> None:
        """Data augmentation per class from the MAP; the draws as ``_params``."""
        chains, draws, tune = int(self.chains), int(self.draws), int(self.tune)
        results = []
        for k, f in enumerate(fits):
            take = (batch.y_index == k) & (batch.weights > 0)
            results.append(gibbs.run(component, Z[take], batch.weights[take],
                                     self._class_priors[k],
                                     f.weights, f.params, alpha=float(self.weight_alpha),
                                     chains=chains, draws=draws, tune=tune, rng=rng))
        S = chains * draws
        weights, params = _pad([r.weights.reshape(S, -1) for r in results],
                               [{key: v.reshape(S, *v.shape[2:]) for key, v in r.params.items()}
                                for r in results], lead=1)
        self._params = {"weights": weights, **params}
        if self._fixed_pi is not None:
            log_pi = classprior.log_constant(self._fixed_pi, S)
        else:
            log_pi = classprior.log_dirichlet(
                classprior.posterior(batch.counts, self.class_alpha_), S, rng)
        self._log_pi_draws = log_pi
        sample_stats = {"log_lik_x": sum(r.log_lik for r in results),
                        "relabeled": np.any([r.relabeled for r in results], axis=0)}
        self._build_idata(sample_stats, (batch.X, batch.y_index))
        self._warn_if_not_converged()
        mean = posterior.posterior_mean(self._params, self._family.param_dims)
        self._set_point_attributes(classprior.mean(log_pi, self._fixed_pi), mean)

    def _fit_mcmc(self, Z: np.ndarray, batch, pi_map: np.ndarray) -> None:
        """NUTS on the PyMC model with the component labels marginalised
        (:mod:`bayesgen.families.mixture.pymc`), started at the MAP; the draws relabeled
        to the MAP's order, as ``_params``."""
        from bayesgen.inference.model import ExtraLikelihood

        point, sizes = self._params, self.n_components_
        take = batch.weights > 0
        Zt, yt, vt = Z[take], batch.y_index[take], batch.weights[take]

        def terms(fit, pi, params):
            return {"x_loglik": mixture_pymc.rows_loglik(params, Zt, yt, vt, sizes)}

        def start(fit, model):
            free = None if self._fixed_pi is not None else pi_map
            return mixture_pymc.start(model, point, fit.prior, free)

        self._model = None
        log_pi, params, sample_stats, _ = mcmc.sample_posterior(
            self, self._fitted(), ExtraLikelihood(terms, start))
        self._hyper_draws = {}
        relabeled = np.zeros(log_pi.shape[0], dtype=bool)
        W = np.array(params["weights"])
        comp = {key: np.array(params[key]) for key in self._family.keys}
        for k, M in enumerate(sizes):
            W[:, k, :M], found, moved = gibbs.relabel(
                W[:, k, :M], {key: value[:, k, :M] for key, value in comp.items()},
                point[self._family.location][k, :M])
            for key, value in found.items():
                comp[key][:, k, :M] = value
            relabeled |= moved
        self._params = {"weights": W, **comp}
        self._log_pi_draws = log_pi
        chains, draws = self._posterior_size()
        sample_stats = {**sample_stats, "relabeled": relabeled.reshape(chains, draws)}
        self._build_idata(sample_stats, (batch.X, batch.y_index))
        self._warn_if_not_converged()
        mean = posterior.posterior_mean(self._params, self._family.param_dims)
        self._set_point_attributes(classprior.mean(log_pi, self._fixed_pi), mean)

    # ------------------------------------------------------ leave-one-out
    def loo_log_joint(self, X: Any, y: Any, sample_weight: Any = None, *,
                      n_folds: int = LOO_FOLDS) -> Bunch:
        """Out-of-sample log p(x_n, y = k | D without row n) of every training row and
        class: what ``bg.StackedClassifier`` weighs a MixtureDA member by. Not exact (a
        mixture has no closed-form leave-one-out):

        - ``method="gibbs"`` / ``"mcmc"``: PSIS-LOO (Vehtari, Gelman and Gabry 2017;
          Vehtari et al. 2024). The draws theta_s (components, weights and pi) get the
          importance ratios 1 / p(x_n, y_n | theta_s)^u_n, u_n = min(w_n, 1) (one copy
          of row n leaves), Pareto-smoothed (``arviz.psislw``, relative efficiency
          from the posterior's mean ESS as ``az.loo``), and
          p(x_n, y = k | D without n) = sum_s w~_ns p(x_n, y = k | theta_s) for every
          class k. A Pareto k above 0.7 flags an unreliable term (one
          ``bg.DataWarning``): more draws, or ``method="map"``'s refits. The
          components' data-dependent prior is not re-resolved without the row.
        - ``method="map"``: cross-validated refits. The rows are split into
          ``n_folds`` stratified folds (shuffled with ``random_state``); the whole
          fit (``n_components="auto"`` included) is repeated on the other folds and
          each held-out row gets that refit's log p(x_n, y = k) (as its
          ``predictive`` says). The rows of a fold leave with all their weight.
          ``n_folds`` >= n is brute-force leave-one-out (n refits).

        Parameters
        ----------
        X : array-like of shape (n, d)
        y : array-like of shape (n,)
        sample_weight : array-like of shape (n,), optional
            The training rows and weights of this fit (checked against its statistics).
        n_folds : int, default=10
            Folds of ``method="map"`` (ignored by the posterior methods).

        Returns
        -------
        sklearn.utils.Bunch
            ``log_joint`` (n, K); ``y_index`` (n,), the class index of every row;
            ``class_log_prior`` (n, K), the class prior of the fit without row n (exact
            Dirichlet downdate for PSIS; the fold refit's for "map"); ``pareto_k``
            (n,), NaN for "map" and for rows of weight 0; ``kind``: "psis" or
            "{n_folds}-fold" ("loo" for brute-force leave-one-out).

        Raises
        ------
        ValueError
            When the rows are not the training rows, a class has a single row ("map":
            the refit without it has no such class), or ``n_folds`` < 2.
        """
        from bayesgen.inference import exact_loo

        check_is_fitted(self, "_params")
        found = exact_loo.training_rows(self, X, y, sample_weight)
        if self.method_ == "map":
            return self._cv_log_joint(found, int(n_folds))
        return self._psis_log_joint(found)

    def _cv_log_joint(self, found, n_folds: int) -> Bunch:
        """:meth:`loo_log_joint` of ``method="map"``: stratified K-fold refits."""
        if n_folds < 2:
            raise ValueError(f"MixtureDA.loo_log_joint: n_folds must be >= 2; got {n_folds}.")
        X, y_index, w = found.X, found.y, found.weights
        n, K = y_index.size, self.classes_.size
        counts = np.bincount(y_index, minlength=K)
        if counts.min() < 2:
            raise ValueError(
                f"MixtureDA: class {self.classes_[np.argmin(counts)]!r} has "
                f"{counts.min()} row(s); a cross-validated predictive needs at least 2 "
                "rows per class (the refit without a class's only row has no such class).")
        if n_folds >= n:
            folds, kind = KFold(n_splits=n).split(X), "loo"
        else:
            seed = int(rng_from(self.random_state).integers(2**31 - 1))
            folds = StratifiedKFold(n_splits=min(n_folds, int(counts.max())), shuffle=True,
                                    random_state=seed).split(X, y_index)
            kind = f"{n_folds}-fold"
        joint, log_prior = np.empty((n, K)), np.empty((n, K))
        labels = self.classes_[y_index]
        for train, test in folds:
            refit = clone(self).fit(X[train], labels[train], sample_weight=w[train])
            if not np.array_equal(refit.classes_, self.classes_):
                raise ValueError("MixtureDA.loo_log_joint: a fold's refit lacks a class; "
                                 "use fewer folds.")
            joint[test] = refit.predict_joint_log_proba(X[test])
            log_prior[test] = refit.class_log_prior_
        return Bunch(log_joint=joint, y_index=y_index, class_log_prior=log_prior,
                     pareto_k=np.full(n, np.nan), kind=kind)

    def _psis_log_joint(self, found) -> Bunch:
        """:meth:`loo_log_joint` of the posterior methods: PSIS-LOO."""
        from bayesgen.exceptions import DataWarning, warn
        from bayesgen.inference import exact_loo

        az = import_arviz()

        fit = self.fitted_
        X, y_index, w = found.X, found.y, found.weights
        n, K = y_index.size, self.classes_.size
        leave = np.minimum(w, 1.0)
        S = int(np.prod(self._posterior_size()))
        reff = 1.0
        if getattr(self, "idata_", None) is not None:
            ess = az.ess(self.idata_.posterior, method="mean")
            values = np.hstack([np.ravel(ess[v].values) for v in ess.data_vars])
            values = values[np.isfinite(values)]
            if values.size:
                reff = float(np.clip(values.mean() / S, 1e-3, 1.0))
        joint = np.empty((n, K))
        k_hat = np.full(n, np.nan)
        for index, lj in scoring.iter_log_joint_draws(fit, X):
            idx = np.arange(n)[index]
            lj = np.moveaxis(lj, 0, 1)  # (m, S, K)
            own = lj[np.arange(idx.size), :, y_index[idx]]  # (m, S)
            log_w = np.full(own.shape, -np.log(S))
            moved = leave[idx] > 0
            if moved.any():
                smoothed, k = az.psislw(-leave[idx][moved, None] * own[moved], reff)
                log_w[moved] = smoothed
                k_hat[idx[moved]] = k
            joint[idx] = logsumexp(log_w[:, :, None] + lj, axis=1)
        joint -= scoring.jacobian(fit, scoring.internal(fit, X))  # a float or (n, 1)
        bad = np.flatnonzero(k_hat > PARETO_K_WARN)
        if bad.size:
            warn(f"MixtureDA: {bad.size} of {n} PSIS-LOO terms have Pareto k > "
                 f"{PARETO_K_WARN} (largest {np.nanmax(k_hat):.2f}): their leave-one-out "
                 "estimates are unreliable; try more draws, or method='map' (whose "
                 "stack terms are refits).", DataWarning)
        return Bunch(log_joint=joint, y_index=y_index,
                     class_log_prior=exact_loo.label_log_prior(fit, y_index, leave),
                     pareto_k=k_hat, kind="psis")

    def _warn_if_not_converged(self) -> None:
        """One ``bg.ConvergenceWarning`` when R-hat or ESS of pi or the (relabeled)
        weights look poor, or NUTS diverged."""
        from bayesgen.exceptions import ConvergenceWarning, warn

        names = [*classprior.random_names(self._fitted()), "weights"]
        problems = mcmc.convergence_report(self.idata_, names)
        if problems:
            how = "Gibbs sampler" if self.method_ == "gibbs" else "NUTS (method='mcmc')"
            warn(f"MixtureDA {how} may not have converged: {'; '.join(problems)}. "
                 "Try more draws and tune, more chains, or fewer components.",
                 ConvergenceWarning)


def _pad(weights: list, params: list, lead: int = 0) -> tuple[np.ndarray, dict]:
    """Stack per-class mixtures of M_k components into (..., K, M, ...) arrays, M the
    largest M_k: padding components get weight 0 and repeat component 0. ``lead``: the
    number of leading draw dims of every entry."""
    M = max(w.shape[lead] for w in weights)

    def pad(value, width):
        missing = M - value.shape[lead]
        if missing == 0:
            return value
        first = np.take(value, [0] * missing, axis=lead)
        return np.concatenate([value, first], axis=lead)

    W = np.stack([np.concatenate([w, np.zeros((*w.shape[:lead], M - w.shape[lead]))],
                                 axis=lead) for w in weights], axis=lead)
    out = {key: np.stack([pad(p[key], M) for p in params], axis=lead) for key in params[0]}
    return W, out
