"""Naive Bayes classifiers: Gaussian, discrete features, durations, kernel densities
and mixed columns.

Thin scikit-learn classes over one family each; shared parameters as in
:mod:`bayesgen.estimators.discriminant`.
"""

from __future__ import annotations

from typing import Any, ClassVar

from sklearn.utils import Bunch
from sklearn.utils.validation import check_is_fitted

from bayesgen.data import tables
from bayesgen.estimators.discriminant import _SHARED_DOC, _Common
from bayesgen.estimators.params import constraints
from bayesgen.families import get_family
from bayesgen.families.mixed.spec import part_names


class GaussianNB(_Common):
    __doc__ = (
        """Gaussian naive Bayes: x_j | y=k ~ Normal(mu_kj, sigma2_kj), Normal-Inverse-Gamma prior.

    MLE: class means and variances (divisor N_k, or N_k - 1 with
    ``divisor="unbiased"``). MAP: joint mode under the prior
    mu | sigma2 ~ N(m0, sigma2/kappa0), sigma2 ~ InvGamma(nu0/2, (nu0-2) s0/2)."""
        + _SHARED_DOC
        + """    mean_prior : array-like (d,) or None
        Prior mean of the class means (default: overall data mean).
    mean_strength : float, default=0.01
        kappa0, pseudo-observations behind ``mean_prior``.
    var_prior : array-like (d,) or None
        Prior mean of each variance (default: pooled within-class variance).
    var_dof : float or "auto", default=3
        nu0 > 2, pseudo-observations behind ``var_prior``; "auto": chosen by type-II
        maximum likelihood of the exact marginal likelihood (closed form, O(K d) per
        evaluation on the statistics; ``bayesgen.families.gaussian_evidence``).
    var_scale : float, None or "auto", default=None
        s > 0: the prior mean of each variance is s var_prior (None: 1); "auto":
        chosen with ``var_dof`` by the evidence.
    divisor : {"n", "unbiased"}, default="n"
        MLE variance divisor.

    Attributes
    ----------
    classes_, class_count_, class_prior_, theta_ (K, d), var_ (K, d), all in the units
    of X; _frame: the per-feature frame of the internal computations (bayesgen.data.frame);
    prior_search_ (when ``var_dof`` or ``var_scale`` is "auto"): dict with the chosen
    ``var_dof`` and ``var_scale``, ``log_evidence`` and ``candidates`` (one dict per
    candidate prior: the fixed values, ``var_dof="auto"``, both "auto"; log evidences in
    the units of X, their differences log Bayes factors)
    """
    )
    _parameter_constraints: ClassVar[dict] = constraints("gaussian")

    def __init__(
        self,
        *,
        method: str = "map",
        class_alpha: Any = 1.0,
        class_prior: Any = None,
        mean_prior: Any = None,
        mean_strength: float = 0.01,
        var_prior: Any = None,
        var_dof: Any = 3.0,
        var_scale: Any = None,
        divisor: str = "n",
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
    ) -> None:
        self._store(locals())

    def _make_family(self, columns=None):
        return get_family("gaussian")(
            mean_prior=self.mean_prior,
            mean_strength=self.mean_strength,
            var_prior=self.var_prior,
            var_dof=self.var_dof,
            var_scale=self.var_scale,
            divisor=self.divisor,
        )


class _DiscreteClassifier(_Common):
    """Shared constructor of the count/binary/categorical naive Bayes classifiers."""

    _family_name: str

    def __init__(
        self,
        *,
        method: str = "map",
        class_alpha: Any = 1.0,
        class_prior: Any = None,
        alpha: Any = 2.0,
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
    ) -> None:
        self._store(locals())

    def _make_family(self, columns=None):
        return get_family(self._family_name)(alpha=self.alpha)


_ALPHA_DOC = """    alpha : float or array-like, default=2.0
        Dirichlet/Beta concentration of the feature probabilities. MAP rule
        ``(count + alpha - 1) / (total + m (alpha - 1))``: 1 is the MLE, 2 is Laplace
        smoothing; scikit-learn's additive ``alpha=a`` is ``alpha=a+1`` here.
"""


class MultinomialNB(_DiscreteClassifier):
    __doc__ = (
        """Multinomial naive Bayes: x | y=k ~ Multinomial(sum(x), theta_k), theta_k ~ Dirichlet."""
        + _SHARED_DOC
        + _ALPHA_DOC
        + """
    Attributes
    ----------
    classes_, class_count_, class_prior_, feature_count_ (K, d), feature_log_prob_ (K, d)
    """
    )
    _family_name = "multinomial"
    _parameter_constraints: ClassVar[dict] = constraints("multinomial")


class BernoulliNB(_DiscreteClassifier):
    __doc__ = (
        """Bernoulli naive Bayes: x_j | y=k ~ Bernoulli(theta_kj), theta_kj ~ Beta(alpha, alpha)."""
        + _SHARED_DOC
        + _ALPHA_DOC
        + """    binarize : float or None, default=0.0
        A number t: x > t becomes 1, else 0 (scikit-learn's default, 0.0, makes any
        positive value a presence; negative values are then allowed). None: X must
        hold only 0 and 1 (a ``ValueError`` otherwise), for data already binary that
        should be checked as such. MixedNB's Bernoulli parts have the same default
        (their options: ``("bernoulli", columns, {"binarize": None})``).

    Attributes
    ----------
    classes_, class_count_, class_prior_, feature_count_ (K, d), feature_log_prob_ (K, d)
    """
    )
    _family_name = "bernoulli"
    _parameter_constraints: ClassVar[dict] = constraints("bernoulli")

    def __init__(
        self,
        *,
        method: str = "map",
        class_alpha: Any = 1.0,
        class_prior: Any = None,
        alpha: Any = 2.0,
        binarize: Any = 0.0,
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
    ) -> None:
        self._store(locals())

    def _make_family(self, columns=None):
        return get_family("bernoulli")(alpha=self.alpha, binarize=self.binarize)


class CategoricalNB(_DiscreteClassifier):
    __doc__ = (
        """Categorical naive Bayes: x_j | y=k ~ Categorical(theta_kj), theta_kj ~ Dirichlet.

    X holds non-negative integer codes, or is a DataFrame (pandas or polars) whose
    columns may also be text (object, ``string``), ``category`` or boolean. The
    categories of feature j are the values observed in training (``categories_``:
    the sorted strings, booleans or codes; a code of 1e9 is one category, not a
    billion), plus 0..m_j - 1 for integer columns when ``min_categories`` declares
    them: declared categories never seen in training get the prior's share, and a
    value that is neither seen nor declared raises ``ValueError`` naming the column at
    predict time. ``idata_``, ``model_`` and the replicated data hold the codes of
    text columns (positions in ``categories_``); ``sample`` returns their values."""
        + _SHARED_DOC
        + _ALPHA_DOC
        + """    min_categories : int, array-like (d,) or None, default=None
        Declares the codes 0..m_j - 1 as categories of feature j (scalar: every
        feature), in addition to the observed codes; not used for text, boolean and
        ``category`` columns.

    Attributes
    ----------
    classes_, class_count_, class_prior_, categories_ (list of d sorted arrays),
    n_categories_ (d,), category_count_ (list of d arrays (K, C_j)),
    feature_log_prob_ (list of d arrays (K, C_j)), both over ``categories_``
    """
    )
    _family_name = "categorical"
    _parameter_constraints: ClassVar[dict] = constraints("categorical")

    def __init__(
        self,
        *,
        method: str = "map",
        class_alpha: Any = 1.0,
        class_prior: Any = None,
        alpha: Any = 2.0,
        min_categories: Any = None,
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
    ) -> None:
        self._store(locals())

    def _make_family(self, columns=None):
        family = get_family("categorical")(alpha=self.alpha, min_categories=self.min_categories)
        return family.configured(levels=tables.levels(columns))


class PoissonNB(_Common):
    __doc__ = (
        """Poisson naive Bayes: x_j | y=k ~ Poisson(lambda_kj), lambda_kj ~ Gamma(alpha, beta_j).

    beta_j = (alpha - 1) / r_j puts the prior mode at the rate r_j (``rate_prior``,
    default the overall mean of feature j), so the MAP rate is
    ``(S_kj + alpha - 1) / (N_k + (alpha - 1) / r_j)``: alpha = 1 is the MLE."""
        + _SHARED_DOC
        + """    alpha : float, default=2.0
        Gamma shape (>= 1): alpha - 1 pseudo-counts at the prior rate.
    rate_prior : array-like (d,) or None
        Prior mode of the rates (default: overall feature means).

    Attributes
    ----------
    classes_, class_count_, class_prior_, feature_count_ (K, d), rate_ (K, d)
    """
    )

    _parameter_constraints: ClassVar[dict] = constraints("poisson")

    def __init__(
        self,
        *,
        method: str = "map",
        class_alpha: Any = 1.0,
        class_prior: Any = None,
        alpha: float = 2.0,
        rate_prior: Any = None,
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
    ) -> None:
        self._store(locals())

    def _make_family(self, columns=None):
        return get_family("poisson")(alpha=self.alpha, rate_prior=self.rate_prior)


class ExponentialNB(_Common):
    __doc__ = (
        """Exponential naive Bayes for positive durations and waiting times.

    x_j | y=k ~ Exponential(lambda_kj) (density lambda exp(-lambda x), x >= 0) with a
    conjugate prior lambda_kj ~ Gamma(alpha, beta_j), beta_j = (alpha - 1) m_j, where
    m_j (``mean_prior``, default the overall mean of feature j) is the prior mean
    duration: alpha - 1 pseudo-observations of duration m_j. Estimates, with n_kj the
    weighted number of observed entries and s_kj their weighted sum:

    - MLE ``n_kj / s_kj``; MAP ``(n_kj + alpha - 1) / (s_kj + beta_j)`` (alpha = 1 is
      the MLE);
    - posterior ``Gamma(alpha + n_kj, beta_j + s_kj)``, whose predictive density of a
      new x is Lomax (Pareto II).

    The default prior scales with the data: multiplying a feature by c > 0 divides
    its rates by c and leaves ``predict_proba`` unchanged. X must be >= 0 (a
    ``ValueError`` names the first negative column); NaN marks a missing value.
    See ``bayesgen.families.exponential``."""
        + _SHARED_DOC
        + """    alpha : float or array-like (d,), default=2.0
        Gamma shape (>= 1): alpha - 1 pseudo-observations at the prior mean duration.
    mean_prior : float, array-like (d,) or None, default=None
        Prior mean duration m_j > 0 per feature (default: the weighted mean of the
        observed entries of each feature, over all classes).

    Attributes
    ----------
    classes_, class_count_, class_prior_, rate_ (K, d): the rates lambda_kj (posterior
    mean for posterior methods)

    Examples
    --------
    >>> import numpy as np, bayesgen as bg
    >>> rng = np.random.default_rng(0)
    >>> y = np.repeat([0, 1], 50)
    >>> X = rng.exponential(np.where(y == 0, 1.0, 4.0)[:, None], size=(100, 2))
    >>> clf = bg.ExponentialNB().fit(X, y)
    >>> clf.rate_.shape
    (2, 2)
    """
    )

    _parameter_constraints: ClassVar[dict] = constraints("exponential")

    def __init__(
        self,
        *,
        method: str = "map",
        class_alpha: Any = 1.0,
        class_prior: Any = None,
        alpha: Any = 2.0,
        mean_prior: Any = None,
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
    ) -> None:
        self._store(locals())

    def _make_family(self, columns=None):
        family = get_family("exponential")(alpha=self.alpha, mean_prior=self.mean_prior)
        names = getattr(self, "feature_names_in_", None) if columns is not None else None
        return family.configured(feature_names=None if names is None
                                 else [str(n) for n in names])


class KernelNB(_Common):
    __doc__ = (
        """Kernel-density naive Bayes: x_j | y=k ~ Gaussian KDE of class k with bandwidth h_kj.

    The bandwidths are the parameters. MLE maximises the leave-one-out log-likelihood
    of each class and feature; MAP adds a log-normal prior centred on Silverman's
    rule-of-thumb bandwidth, log h ~ Normal(log h_silverman, bandwidth_sd).

    The training points are its statistics: the fitted model keeps every row (memory
    O(N d)), ``partial_fit`` appends each batch's points to them and refits the
    bandwidths on all points so far, ``bayesgen.merge`` concatenates the shards' points,
    and a Dask fit gathers every chunk's points on the client. Unlike the other
    estimators, its memory and refit cost grow with the number of rows streamed."""
        + _SHARED_DOC
        + """    bandwidth_sd : float, default=1.0
        Prior sd of log h around Silverman's bandwidth (MAP and MCMC).

    Attributes
    ----------
    classes_, class_count_, class_prior_, bandwidth_ (K, d)
    """
    )

    _methods = ("mle", "map", "mcmc")
    _parameter_constraints: ClassVar[dict] = constraints("kernel")

    def __init__(
        self,
        *,
        method: str = "map",
        class_alpha: Any = 1.0,
        class_prior: Any = None,
        bandwidth_sd: float = 1.0,
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
    ) -> None:
        self._store(locals())

    def _make_family(self, columns=None):
        return get_family("kernel")(bandwidth_sd=self.bandwidth_sd)


class MixedNB(_Common):
    __doc__ = (
        """Naive Bayes over column groups with different families.

    ``families=[(name, columns), ...]`` or ``[(name, columns, options), ...]`` with
    ``name`` in {"gaussian", "bernoulli", "multinomial", "categorical", "poisson",
    "exponential", "kernel"}, ``columns`` integer positions or DataFrame column names,
    and an optional dict of that family's hyper-parameters. log p(x, y=k) = log pi_k +
    the sum of the parts; each part's defaults equal the standalone family's. Every
    column must be in exactly one part.

    ``families="auto"`` chooses each column's family from its dtype: float and
    integer columns Gaussian, booleans Bernoulli, text (object, ``string``) and
    ``category`` columns categorical (their categories are the values observed in
    training); ``overrides={"visits": "poisson"}`` replaces the choice for the columns
    it names (a column of counts, a kernel density...). ``families_`` shows the
    fitted choice.

    Example::

        clf = MixedNB(families="auto", overrides={"visits": "poisson"}).fit(df, y)
        clf.families_   # [('gaussian', ['age']), ('bernoulli', ['smoker']),
                        #  ('categorical', ['colour', 'size']), ('poisson', ['visits'])]"""
        + _SHARED_DOC
        + """    families : list of tuples, or "auto"
    overrides : dict or None, default=None
        With ``families="auto"`` only: ``{column: family name}``, columns by
        DataFrame name or integer position, family names as in ``families``.
    alpha : float, default=2.0
        Default concentration of the discrete parts (overridden by a part's options).

    Attributes
    ----------
    classes_, class_count_, class_prior_
    families_ : list of tuples
        The fitted specification ``[(name, columns), ...]``, columns by name or position.
    named_parts_ : sklearn.utils.Bunch
        The fitted parts by name, as scikit-learn's
        ``ColumnTransformer.named_transformers_``: a part's name is its family's
        (``"gaussian"``) for the family's first part and ``"gaussian_2"``,
        ``"gaussian_3"``, ... for the next ones, in the order of ``families``, so it does
        not change when parts of other families are added, removed or moved. Each entry
        is a Bunch of the part's fitted attributes under their standalone names
        (``theta_``, ``var_``, ``categories_``, ``feature_log_prob_``, ...) plus
        ``family`` (its family's name), ``columns`` (positions), ``features`` (column
        names) and ``prefix`` (the namespace of its variables in ``_params`` and
        ``idata_``, e.g. ``gaussian0_mu``)::

            clf.named_parts_["categorical"].categories_
            clf.named_parts_.gaussian.theta_

    parts_ : list of dict
        One dict per part: ``name`` (the family), ``part`` (the name above),
        ``prefix``, ``columns``, ``features``.

    Each part's attributes are also set with its prefix (family name and position in
    ``families``: ``gaussian0_theta_``, ``categorical2_categories_``), names that change
    when the specification is reordered; prefer ``named_parts_``.
    """
    )

    _parameter_constraints: ClassVar[dict] = constraints("mixed")

    def __init__(
        self,
        *,
        families: Any = None,
        overrides: Any = None,
        method: str = "map",
        class_alpha: Any = 1.0,
        class_prior: Any = None,
        alpha: Any = 2.0,
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
    ) -> None:
        self._store(locals())

    @property
    def named_parts_(self) -> Bunch:
        """The fitted parts by name (see the class docstring), a Bunch of Bunches."""
        check_is_fitted(self, "parts_")
        out = Bunch()
        for name, q in zip(part_names([q["name"] for q in self.parts_]), self.parts_,
                           strict=True):
            pre = f"{q['prefix']}_"
            attributes = {key[len(pre):]: value for key, value in vars(self).items()
                          if key.startswith(pre)}
            out[name] = Bunch(family=q["name"], columns=list(q["columns"]),
                              features=list(q["features"]), prefix=q["prefix"], **attributes)
        return out

    def _make_family(self, columns=None):
        from bayesgen.families.mixed.family import MixedFamily

        names = getattr(self, "feature_names_in_", None)
        n_features = getattr(self, "n_features_in_", None)
        return MixedFamily(  # columns None: those of an earlier fit may be stale
            self.families, alpha=self.alpha, feature_names=names, n_features=n_features,
            overrides=self.overrides, kinds=tables.kinds(columns, n_features),
            levels=tables.levels(columns),
        )
