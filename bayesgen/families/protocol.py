"""The family protocol: everything a capability of bayesgen asks of a likelihood family.

A family is one class, written as one module (or subpackage) of :mod:`bayesgen.families`
and registered once in :data:`bayesgen.families.REGISTRY`. The estimators, the
conjugate posterior, NUTS, ``idata_``, the pointwise log-likelihood, exact LOO, the
evidence, far rows, predictive checks and plots reach it only through the members
listed here, never through its name:

- :class:`Family`, the hooks every family has. Three of them are statistical
  capabilities that not every model has in closed form (``posterior``/``draw``/
  ``log_predictive``, ``log_evidence``, ``loo_log_predictive`` and
  ``loo_log_predictive_at``): a family without it
  declares so in its :class:`Capabilities` and its hook raises ``ValueError`` saying
  why (KernelNB's bandwidth prior is not conjugate), so that the user reads the reason.
- :class:`Capabilities`, declared by every family as its ``capabilities`` attribute (a
  class attribute, or a property when it depends on the configuration: LDA versus QDA,
  the parts of MixedNB). Callers read a flag instead of probing with ``hasattr``.
- One small protocol per optional structural ability (:data:`HOOKS`), whose hooks a
  family has exactly when it sets the matching flag: the affine frame of real-valued
  columns, far rows, data augmentation, non-random parameters, the training rows'
  own log-likelihood, extra coordinates, category levels,
  LDA's linear discriminant in user units, and the parts of a composite. Without the
  flag a caller does what the hook would do trivially (identity frame, no fixed
  parameters, ``log_lik`` at the row's class, ...).

:func:`undeclared` lists the flags whose hooks are missing; the registry-parametrised
test suite (``tests/test_family_protocol.py``) runs it and exercises every capability
through this interface, so a new family written as one module gets every method.

Shapes: n rows, d features, K classes; "(..., K, d)" means any leading dims of
posterior draws (chain and draw flattened into S, or per row). ``stats``, ``prior``
and ``post`` are dicts of arrays whose keys are the family's own; ``params`` is a dict
of arrays whose keys are those of ``param_dims`` (plus the fixed entries of
:class:`FixedParams`). Real-valued families compute in the internal frame z = (x - c) / s
(:mod:`bayesgen.data.frame`): statistics, priors, parameters and posteriors are
internal, ``to_user`` converts.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any, Protocol, runtime_checkable

import numpy as np


@dataclass(frozen=True)
class Capabilities:
    """The optional abilities of a family, declared, never discovered.

    Attributes
    ----------
    missing : bool
        NaN in X is a missing entry, integrated out at fit and predict (without it a
        NaN is a ``ValueError`` naming the estimator,
        :func:`bayesgen.data.missing.check_supported`); scikit-learn's ``allow_nan`` tag.
    sparse : bool
        Every hook takes scipy.sparse X (CSR) and never densifies it; the ``sparse`` tag.
    poor_score : bool
        scikit-learn's ``poor_score`` classifier tag (the discrete naive Bayes).
    support_check_finds_nan : bool
        ``check_X``'s support check already rejects NaN (count families scan X once with
        ``min``, through which NaN propagates), so the estimator skips scikit-learn's
        separate finiteness pass.
    conjugate : bool
        ``posterior``, ``draw`` and ``log_predictive`` are closed form
        (``method="conjugate"``); False: they raise ``ValueError`` naming the reason.
    evidence : bool
        ``log_evidence`` gives the exact marginal likelihood (for some fits it may still
        raise, e.g. LDA/QDA with missing entries or an LKJ prior).
    exact_loo : bool
        ``loo_log_predictive`` and ``loo_log_predictive_at`` give the exact
        leave-one-out predictive of the conjugate posterior (not after data
        augmentation).
    real_valued : bool
        :class:`RealValued`: columns in an affine frame z = (x - c) / s.
    far_rows : bool
        :class:`FarRows`: log-densities of rows beyond the float range of the frame.
    augmentation : bool
        :class:`Augmentation`: ``method="conjugate"`` may need data augmentation.
    fixed_params : bool
        :class:`FixedParams`: ``params`` hold non-random entries besides ``param_dims``.
    train_log_lik : bool
        :class:`TrainLogLik`: the training rows' pointwise log-likelihood is not
        ``log_lik`` at their class (KernelNB's leave-one-out terms).
    coords : bool
        :class:`Coords`: dims beyond ``class``, ``feature``, ``feature_bis`` need
        named coordinates.
    levels : bool
        :class:`Levels`: text, boolean and category columns enter as codes of their
        levels (the column's sorted distinct values), reported back as categories.
    linear_discriminant : bool
        :class:`LinearDiscriminant`: ``log_lik(..., full=False)`` is a linear
        discriminant whose user-unit form differs from the internal one by more than
        the frame's Jacobian (LDA).
    composite : bool
        :class:`Composite`: a sum of part families on column groups (MixedNB).
    continuous : bool
        The features are continuous: predictive checks draw densities (KDE), not
        empirical CDFs.
    correlated : bool
        The model has correlations between features (LDA, QDA): predictive checks add
        the pairwise correlations by default.
    learns_categories : bool
        The family reads its categories from the training values (CategoricalNB): a
        semi-supervised fit's starting statistics must also see the unlabeled rows'
        values, at zero weight (:mod:`bayesgen.families.semi_hooks`).
    kernel_density : bool
        Class densities (some of them, in a MixedNB) are kernel density estimates of the
        labeled points: EM re-chooses bandwidths (:mod:`bayesgen.semi.kernel`) and the
        labeled rows' likelihood is their leave-one-out ``train_log_lik``.
    """

    missing: bool = False
    sparse: bool = False
    poor_score: bool = False
    support_check_finds_nan: bool = False
    conjugate: bool = True
    evidence: bool = True
    exact_loo: bool = True
    real_valued: bool = False
    far_rows: bool = False
    augmentation: bool = False
    fixed_params: bool = False
    train_log_lik: bool = False
    coords: bool = False
    levels: bool = False
    linear_discriminant: bool = False
    composite: bool = False
    continuous: bool = False
    correlated: bool = False
    learns_categories: bool = False
    kernel_density: bool = False


@runtime_checkable
class Family(Protocol):
    """The hooks of every likelihood family p(x | y = k, theta_k).

    A family instance holds its prior hyper-parameters as the user gave them;
    data-aware defaults are resolved in :meth:`prior`. The hooks are functions of their
    arguments: a family keeps nothing of the statistics or parameters it is given, and
    what an attribute or a draw needs of the fit's statistics the caller passes
    (:meth:`stats_attributes`, :meth:`sample_inputs`).
    """

    #: registry name ("gaussian", "mvn", "bernoulli", ...), for messages and records
    name: str
    #: dims of every parameter after the leading draw dims, e.g.
    #: ``{"mu": ("class", "feature")}``; names the ``idata_`` variables
    param_dims: dict[str, tuple[str, ...]]
    #: X must be non-negative (scikit-learn's ``positive_only`` tag)
    positive_only: bool
    #: class labels (K,), set by the estimator before fitting, for error messages
    labels: np.ndarray | None
    capabilities: Capabilities

    # ------------------------------------------------------------------ data
    def check_X(self, X: Any, *, method: str, who: str) -> Any:
        """Support checks (counts, binary, categories) and transformations (``binarize``)
        of X (n, d); ``ValueError`` naming the problem and ``who``."""

    def stats(self, X: Any, y: np.ndarray, w: np.ndarray, n_classes: int) -> dict:
        """Weighted sufficient statistics per class of rows X (n, d) with class indices
        ``y`` (n,) and weights ``w`` (n,); includes ``"count"`` (K,), N_k = sum w_n."""

    def merge(self, a: dict, b: dict) -> dict:
        """Statistics of the union of two disjoint data sets (additive: Chan et al.'s
        pairwise update for centred moments, sums for counts)."""

    # ----------------------------------------------------------------- prior
    def prior(self, stats: dict, *, record: bool = True) -> dict:
        """The resolved conjugate prior hyper-parameters (scale-aware data defaults).

        ``record=False``: the same hyper-parameters without the record of the search
        (``search_``: the candidates' and structures' evidences), for callers that need
        the prior only (leave-one-out, :mod:`bayesgen.inference.loo_refit`)."""

    def prior_uses_data(self) -> bool:
        """Whether :meth:`prior` reads the statistics (a data-dependent default such as
        a prior mean at the grand mean, a pooled scatter target, a strength or structure
        chosen from the data). Exact leave-one-out then re-resolves the prior from the
        statistics without each row (:mod:`bayesgen.inference.loo_refit`); False: the
        prior is the same for every subset of the rows and the family's downdates
        (``loo_log_predictive``) are the refit."""

    # -------------------------------------------------------------- estimates
    def mle(self, stats: dict) -> dict:
        """Closed-form maximum-likelihood ``params`` (dims ``param_dims``)."""

    def map(self, stats: dict, prior: dict) -> dict:
        """Closed-form posterior-mode ``params`` under ``prior``."""

    def posterior(self, stats: dict, prior: dict) -> dict:
        """Conjugate posterior hyper-parameters (``capabilities.conjugate``)."""

    def draw(self, post: dict, size: int, rng: np.random.Generator) -> dict:
        """``size`` i.i.d. posterior draws, ``params`` with leading dim ``size``."""

    def log_predictive(self, X: Any, post: dict) -> np.ndarray:
        """Closed-form posterior predictive log p(x_n | y = k, data), (n, K)."""

    # ------------------------------------------------------------ likelihood
    def log_lik(self, X: Any, params: dict, *, full: bool = True) -> np.ndarray:
        """sum over features of log p(x_n | y = k, theta), (..., n, K), broadcasting over
        the leading draw dims of ``params``. ``full=False`` (point estimates only) may
        drop terms equal for every class: the discriminant of the plug-in Bayes rule."""

    def sample(self, params: dict, y: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """One x per row given class index ``y`` (n,), params batched as (n, K, ...)
        together with the entries of :meth:`sample_inputs`; (n, d)."""

    def sample_inputs(self, stats: dict) -> dict:
        """What :meth:`sample` needs of the fit's statistics beyond the parameters,
        entries the caller adds to ``params`` (MultinomialNB's mean row totals); empty
        by default (:class:`Configurable`)."""

    def attributes(self, params: dict) -> dict:
        """scikit-learn-named fitted attributes of the parameters (``theta_``,
        ``feature_log_prob_``, ...)."""

    def stats_attributes(self, stats: dict) -> dict:
        """scikit-learn-named fitted attributes of the fit's statistics
        (``feature_count_``, ``category_count_``); empty by default
        (:class:`Configurable`)."""

    # ----------------------------------------------------- model comparison
    def log_evidence(self, stats: dict, prior: dict, rows: Callable[[], tuple], *,
                     method: str,
                     who: str) -> float:
        """sum_k log p(X_k | y) with every parameter integrated out under ``prior``, as a
        density of X in the user's units (the frame's Jacobian sum_j W_j log s_j
        subtracted, W_j the weighted observed entries of feature j).

        ``rows()`` returns ``(X, w)``, the checked training rows (n, d) and weights (n,),
        read only when called: families whose evidence needs per-row terms (``log x!``,
        multinomial coefficients) call it, and it raises the ``ValueError`` that says how
        to pass the rows when the fit kept none (:mod:`bayesgen.inference.rows`).
        ``method`` is the fit's (an LKJ prior sampled by NUTS has no conjugate
        evidence); ``who`` names the model in messages. ``ValueError`` when there is no
        closed form (``capabilities.evidence``).
        """

    def loo_log_predictive(self, Z: Any, y: np.ndarray, w: np.ndarray,
                           post: dict) -> np.ndarray:
        """log p(z_n | y_n, D without row n), (n,), in the internal frame: the row's
        weight w_n (n,) removed from the conjugate posterior ``post`` of its class y_n
        (n,) (the update run backwards), then the closed-form predictive at z_n.
        ``ValueError`` without ``capabilities.exact_loo``."""

    def loo_log_predictive_at(self, Z: Any, y: np.ndarray, w: np.ndarray, post: dict,
                              Z_test: Any = None) -> np.ndarray:
        """The leave-one-out predictive at other rows: log p(z_test_j | y = k, D without
        training row i), (n, m, K), in the internal frame, for the training rows Z
        (n, d) with class indices ``y`` (n,) and weights ``w`` (n,) and the rows
        ``Z_test`` (m, d) (NaN: a missing entry, integrated out as ``log_predictive``
        does). ``Z_test=None``: each training row at itself, (n, K),
        log p(z_i | y = k, D without row i) for every class k (the exact leave-one-out
        predictive of every class, :func:`bayesgen.inference.exact_loo.loo_log_joint`).

        Row i (its whole weight w_i) leaves the conjugate posterior ``post``; every
        parameter that depends on it changes, also those the classes share (LDA's
        covariance), so the entries k != y_i are not the full-data predictive in
        general. Families whose classes have separate posteriors use
        :func:`bayesgen.families.conjugate.loo_log_predictive_at`. Memory: the output
        plus temporaries of at most :data:`bayesgen.families.conjugate.BLOCK` values.
        ``ValueError`` without ``capabilities.exact_loo``."""

    # ------------------------------------------------------------------ PyMC
    def pymc_params(self, prior: dict, *, prefix: str = "",
                    dims: dict | None = None) -> dict:
        """Create the prior random variables in the current PyMC model: every key of
        ``param_dims`` as the variable ``prefix + key`` with ``dims[key]`` (default
        ``param_dims``); returns them as ``params``."""

    def pymc_observed(self, params: dict, X: Any, y: Any, *, prefix: str = "",
                      dims: dict | None = None) -> None:
        """Observed features given the class index tensor ``y`` (n,); NaN marks a
        missing entry whose factor is dropped (never imputed)."""

    def pymc_stats_loglik(self, params: dict, stats: dict) -> Any:
        """sum_n w_n log p(x_n | y_n, theta) up to a constant free of theta, written on
        the statistics (a PyTensor scalar): the likelihood NUTS samples."""


    # ------------------------------------------------------ unlabeled rows
    # (defaults for weighted-sum statistics in
    # :class:`bayesgen.families.semi_hooks.UnlabeledHooks`, which every family extends;
    # the semi-supervised fits of :mod:`bayesgen.semi` reach a family only through these)
    def log_prior(self, params: dict, prior: dict) -> float:
        """log p(theta) up to a constant, in the parameterisation whose mode ``map``
        computes (the MAP objective of EM)."""

    def likelihood_maximiser(self) -> Any:
        """A family whose ``mle`` maximises the weighted likelihood (``self``, or a copy
        with divisor N_k)."""

    def em_m_step(self, labeled: dict, completed: dict, Z_u: Any, A: np.ndarray,
                  prior: dict | None, params: dict) -> tuple[dict, dict]:
        """EM's M-step given the unlabeled rows' weights ``A`` (m, K): the maximising
        parameters and the statistics they were estimated from."""

    def em_final(self, labeled: dict, used: dict, prior: dict | None,
                 params: dict) -> tuple[dict, dict]:
        """The fitted statistics and estimate once EM has converged."""

    def conditional_posterior(self, stats: dict, params: dict, prior: dict,
                              rng: np.random.Generator) -> dict:
        """The conjugate posterior given statistics completed by one draw given
        ``params`` (data augmentation's conjugate step)."""

    def can_augment_labels(self, stats: dict, Z_u: Any) -> bool:
        """Whether data augmentation can take these labeled statistics and the
        unlabeled rows ``Z_u``."""

    def pymc_rows_loglik(self, params: dict, Z: np.ndarray, *, stats: dict, observed: Any,
                         prefix: str = "", dims: dict | None = None) -> Any:
        """log p(z_n | y = k, theta) of rows ``Z`` (m, d) for every class, a PyTensor
        (m, K) expression of the PyMC parameters (the unlabeled rows' mixture
        likelihood in the NUTS model)."""


# ------------------------------------------------------- optional abilities
@runtime_checkable
class RealValued(Protocol):
    """Columns in the affine frame z = (x - c) / s chosen at fit (``real_valued``)."""

    #: :class:`bayesgen.data.frame.Frame` of the internal coordinates, set by the estimator
    frame: Any

    def real_columns(self, n_features: int) -> np.ndarray:
        """Boolean (d,): the columns the frame transforms."""

    def to_user(self, params: dict) -> dict:
        """The entries of ``params`` (any leading dims) in the units of X."""

    def prior_to_user(self, prior: dict) -> dict:
        """The resolved prior in the units of X (the prior of ``model_``)."""


@runtime_checkable
class FarRows(Protocol):
    """Rows beyond the float range of the frame, z = t u + z_N with t = 2^E
    (:class:`bayesgen.data.frame.FarRows`, ``far_rows``)."""

    def far_terms(self, far: Any, params: dict) -> tuple:
        """(a2, a1, a0), each (..., m, K): log p(z | k) = t^2 a2 + t a1 + a0."""

    def far_log_predictive(self, far: Any, post: dict) -> np.ndarray:
        """Closed-form posterior predictive log-density of the far rows, (m, K)
        (``ValueError`` without ``conjugate``)."""


@runtime_checkable
class Augmentation(Protocol):
    """``method="conjugate"`` by data augmentation when the statistics leave the
    conjugate family (missing entries of LDA/QDA and MultinomialNB; ``augmentation``)."""

    def needs_augmentation(self, stats: dict) -> bool:
        """Whether these statistics need data augmentation (no closed-form posterior,
        evidence or exact LOO then)."""

    def augment(self, stats: dict, prior: dict, *, chains: int, draws: int, tune: int,
                rng: np.random.Generator) -> tuple:
        """``(params, post, sample_stats)``: posterior draws (chains * draws leading),
        what ``log_predictive`` accepts, and (chain, draw) arrays for ``idata_``."""


@runtime_checkable
class FixedParams(Protocol):
    """Non-random entries of ``params`` (KernelNB's training points; ``fixed_params``):
    only the keys of ``param_dims`` carry leading draw dims."""

    def fixed_params(self, stats: dict) -> dict:
        """The non-random ``params`` entries, as the point fits store them."""


@runtime_checkable
class TrainLogLik(Protocol):
    """The training rows' own log-likelihood (``train_log_lik``)."""

    def train_log_lik(self, X: np.ndarray, y: np.ndarray, params: dict) -> np.ndarray:
        """log p(x_n | y_n, theta) of the training rows X (n, d), y (n,), (..., n): the
        likelihood the fit used (KernelNB: each row's leave-one-out term)."""


@runtime_checkable
class Coords(Protocol):
    """Named coordinates of dims beyond class and feature (``coords``)."""

    def coords(self, dims: dict | None = None) -> dict:
        """``{dim: coordinate values}``, the dims named as in ``dims`` (default
        ``param_dims``); empty before fitting when they depend on the data."""


@runtime_checkable
class Levels(Protocol):
    """Columns read as category values (``levels``)."""

    #: per column, the values behind the codes of a text, boolean or category column, or
    #: None (set by the estimator, :mod:`bayesgen.data.tables`)
    levels: list | None


@runtime_checkable
class LinearDiscriminant(Protocol):
    """A linear discriminant in the internal frame (``linear_discriminant``)."""

    def user_discriminant(self, scores: np.ndarray, Z: np.ndarray,
                          params: dict) -> np.ndarray:
        """``log_lik(Z, params, full=False)`` plus log pi (n, K) as the documented
        discriminant in the units of X (a row-wise shift equal for every class)."""


@runtime_checkable
class Composite(Protocol):
    """Part families on disjoint column groups (``composite``)."""

    #: the resolved parts: dicts with ``name``, ``prefix``, ``family``, ``columns``
    parts_: list | None

    def column_families(self, names: list[str] | None, kinds: list[str]) -> list:
        """The part family (a :class:`Family`) modelling each column of a table with
        these column ``names`` and ``kinds``."""


#: capability flag -> the protocol of the hooks a family declaring it has
HOOKS: dict[str, type] = {
    "real_valued": RealValued,
    "far_rows": FarRows,
    "augmentation": Augmentation,
    "fixed_params": FixedParams,
    "train_log_lik": TrainLogLik,
    "coords": Coords,
    "levels": Levels,
    "linear_discriminant": LinearDiscriminant,
    "composite": Composite,
}


def undeclared(family: Any) -> list[str]:
    """What ``family`` declares without providing it: ``"Family"`` when a required hook
    is missing, ``"capabilities"`` when it declares no :class:`Capabilities`, and every
    flag of :data:`HOOKS` that is set but whose protocol the family does not satisfy.
    Empty for a family that keeps the protocol."""
    problems = [] if isinstance(family, Family) else ["Family"]
    caps = getattr(family, "capabilities", None)
    if not isinstance(caps, Capabilities):
        return [*problems, "capabilities"]
    for flag in fields(Capabilities):
        hooks = HOOKS.get(flag.name)
        if hooks is not None and getattr(caps, flag.name) and not isinstance(family, hooks):
            problems.append(flag.name)
    return problems


class Configurable:
    """A family's construction settings given after its hyper-parameters.

    The estimator learns some of a family's configuration only from the data: the
    class ``labels`` (for messages), the ``frame`` of the internal coordinates
    (:mod:`bayesgen.data.frame`), the category ``levels`` of the columns, the
    ``feature_names``, and the likelihood's ``divisor`` of a maximiser copy.
    :meth:`configured` returns a new family with them; no code assigns to a family
    after it is built, so a family held by a fit never changes under it.

    Every family extends it, which also gives the defaults of the :class:`Family`
    hooks most families do not need (:meth:`sample_inputs`, :meth:`stats_attributes`).
    """

    #: the settings :meth:`configured` accepts
    SETTINGS = frozenset({"labels", "frame", "levels", "feature_names", "divisor"})

    def configured(self, **settings: Any):
        """A copy of this family with the given settings (the others kept).

        Parameters
        ----------
        **settings
            Any of :attr:`SETTINGS`, e.g. ``labels=classes`` (K,),
            ``frame=Frame(...)``, ``levels=[...]`` (one entry per column).

        Returns
        -------
        family
            A new instance of the same class; ``self`` is unchanged.
        """
        unknown = sorted(set(settings) - self.SETTINGS)
        if unknown:
            raise TypeError(f"{type(self).__name__}.configured: unknown setting(s) "
                            f"{unknown}; the settings are {sorted(self.SETTINGS)}.")
        new = copy.copy(self)
        new._settle(settings)
        return new

    def sample_inputs(self, stats: dict) -> dict:
        """Nothing beyond the parameters (:meth:`Family.sample_inputs`)."""
        return {}

    def stats_attributes(self, stats: dict) -> dict:
        """No attribute of the statistics (:meth:`Family.stats_attributes`)."""
        return {}

    def _settle(self, settings: dict) -> None:
        """Set ``settings`` on this new copy (:meth:`configured` only; composites also
        configure their parts)."""
        for name, value in settings.items():
            setattr(self, name, value)
