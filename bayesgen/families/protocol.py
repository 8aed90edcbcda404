"""The family protocol: everything a capability of bayesgen asks of a likelihood family.

A family is one class, written as one module (or subpackage) of :mod:`bayesgen.families`
and registered once in :data:`bayesgen.families.REGISTRY`; the rest of the package reaches
it only through the members listed here, never through its name:

- :class:`Family`, the hooks every family has.
- :class:`Capabilities`, the ``capabilities`` attribute (a property when it depends on
  the configuration). Callers read a flag instead of probing with ``hasattr``.
- One small protocol per optional ability (:data:`HOOKS`, :data:`JOINT_HOOKS`), whose
  hooks a family has when it sets the matching flag (a statistical capability a model
  lacks in closed form, a conjugate posterior or exact LOO, is declared False and the
  caller refuses with the reason); without the flag a caller does what the hook would
  do trivially (identity frame, no fixed parameters, ...).

:func:`undeclared` lists the flags whose hooks are missing; ``tests/test_family_protocol.py``
runs it and exercises every capability of every registered family.

Shapes: n rows, d features, K classes; "(..., K, d)" means any leading dims of posterior
draws. ``stats``, ``prior`` and ``post`` are dicts of arrays with the family's own keys;
``params`` has the keys of ``param_dims`` (plus :class:`FixedParams`' entries).
Real-valued families compute in the internal frame z = (x - c) / s
(:mod:`bayesgen.data.frame`); ``to_user`` converts."""

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
        NaN in X is a missing entry, integrated out (else a ``ValueError``); ``allow_nan``.
    sparse : bool
        Every hook takes scipy.sparse CSR X without densifying it.
    poor_score : bool
        scikit-learn's ``poor_score`` tag.
    support_check_finds_nan : bool
        ``check_X`` already rejects NaN, so the estimator skips the finiteness pass.
    conjugate, exact_loo : bool
        The family has the hooks of :class:`Conjugate` and :class:`ExactLOO`.
    evidence : bool
        ``log_evidence`` is closed form (else it raises ``ValueError`` saying why).
    real_valued, far_rows, augmentation, fixed_params, train_log_lik : bool
        The family has the hooks of that protocol of :data:`HOOKS`.
    coords, levels, linear_discriminant, composite : bool
        Likewise.
    continuous : bool
        Predictive checks draw densities, not empirical CDFs.
    correlated : bool
        Correlated features (LDA, QDA): predictive checks add pairwise correlations.
    learns_categories : bool
        Categories are read from the training values: a semi-supervised fit's statistics
        also see the unlabeled rows' values at zero weight.
    kernel_density : bool
        Kernel density classes: EM re-chooses bandwidths (:mod:`bayesgen.semi.kernel`)."""

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

    A family holds its hyper-parameters as the user gave them; data-aware defaults are
    resolved in :meth:`prior`. Hooks are functions of their arguments: a family keeps
    nothing of the statistics or parameters it is given."""

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
        """Support checks and transformations of X (n, d); ``ValueError`` naming ``who``."""

    def stats(self, X: Any, y: np.ndarray, w: np.ndarray, n_classes: int) -> dict:
        """Weighted sufficient statistics per class of X (n, d), class indices ``y`` (n,)
        and weights ``w`` (n,); includes ``"count"`` N_k (K,)."""

    def merge(self, a: dict, b: dict) -> dict:
        """Statistics of the union of two disjoint data sets."""

    # ----------------------------------------------------------------- prior
    def prior(self, stats: dict, *, record: bool = True) -> dict:
        """The resolved prior hyper-parameters; ``record=False`` skips the search record
        (``search_``) for callers that need the prior only (leave-one-out)."""

    def prior_uses_data(self) -> bool:
        """Whether :meth:`prior` reads the statistics: then exact leave-one-out re-resolves
        it without each row (:mod:`bayesgen.inference.loo_refit`); else the family's downdates
        are the refit."""

    # -------------------------------------------------------------- estimates
    def mle(self, stats: dict) -> dict:
        """Closed-form maximum-likelihood ``params``."""

    def map(self, stats: dict, prior: dict) -> dict:
        """Closed-form posterior-mode ``params`` under ``prior``."""

    # ------------------------------------------------------------ likelihood
    def log_lik(self, X: Any, params: dict, *, full: bool = True) -> np.ndarray:
        """sum over features of log p(x_n | y = k, theta), (..., n, K); ``full=False`` may
        drop terms equal for every class."""

    def sample(self, params: dict, y: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """One x per row given class index ``y`` (n,), params batched as (n, K, ...), (n, d)."""

    def sample_inputs(self, stats: dict) -> dict:
        """What :meth:`sample` needs of the statistics beyond the parameters."""

    def attributes(self, params: dict) -> dict:
        """scikit-learn-named fitted attributes of the parameters."""

    def stats_attributes(self, stats: dict) -> dict:
        """scikit-learn-named fitted attributes of the statistics."""

    # ----------------------------------------------------- model comparison
    def log_evidence(self, stats: dict, prior: dict, rows: Callable[[], tuple], *,
                     method: str,
                     who: str) -> float:
        """sum_k log p(X_k | y), parameters integrated out, in the units of X.

        ``rows()`` returns the training ``(X, w)`` on demand (``ValueError`` saying how to pass
        them when the fit kept none); ``method`` is the fit's, ``who`` names the model."""

    # ------------------------------------------------------------------ PyMC
    def pymc_params(self, prior: dict, *, prefix: str = "",
                    dims: dict | None = None) -> dict:
        """The prior random variables in the current PyMC model (``prefix + key`` with
        ``dims[key]``), returned as ``params``."""

    def pymc_observed(self, params: dict, X: Any, y: Any, *, prefix: str = "",
                      dims: dict | None = None) -> None:
        """Observed features given the class index tensor ``y`` (n,); NaN entries dropped."""

    def pymc_stats_loglik(self, params: dict, stats: dict) -> Any:
        """sum_n w_n log p(x_n | y_n, theta) up to a constant, on the statistics (PyTensor)."""

    # ------------------------------------------------------ unlabeled rows
    # (defaults for weighted-sum statistics in
    # :class:`bayesgen.families.semi_hooks.UnlabeledHooks`, which every family extends;
    # the semi-supervised fits of :mod:`bayesgen.semi` reach a family only through these)
    def log_prior(self, params: dict, prior: dict) -> float:
        """log p(theta) up to a constant, in the parameterisation whose mode ``map``
        computes (the MAP objective of EM)."""

    def em_m_step(self, labeled: dict, completed: dict, Z_u: Any, A: np.ndarray,
                  prior: dict | None, params: dict) -> tuple[dict, dict]:
        """EM's M-step given the unlabeled rows' weights ``A`` (m, K), A_nk = lambda w_n
        r_nk: the parameters maximising the expected complete-data objective and the
        statistics they were estimated from. ``labeled``: the labeled rows' statistics;
        ``completed``: those plus every unlabeled row in every class k with weight A_nk;
        ``Z_u`` (m, d) the unlabeled rows (internal frame); ``prior`` None for the MLE;
        ``params`` the current estimate."""

    def conditional_posterior(self, stats: dict, params: dict, prior: dict,
                              rng: np.random.Generator) -> dict:
        """The conjugate posterior of theta given statistics whose missing entries, if the
        posterior needs them, are completed by one draw given ``params`` (data
        augmentation's conjugate step, :mod:`bayesgen.semi.augmentation`)."""

    def can_augment_labels(self, stats: dict, Z_u: Any) -> bool:
        """Whether that augmentation can take the labeled rows' ``stats`` and the
        unlabeled rows ``Z_u``."""

    def pymc_rows_loglik(self, params: dict, Z: np.ndarray, *, stats: dict, observed: Any,
                         prefix: str = "", dims: dict | None = None) -> Any:
        """log p(z_n | y = k, theta) of rows ``Z`` (m, d), a PyTensor (m, K) expression of
        the PyMC ``params`` (the unlabeled rows' mixture likelihood in the NUTS model,
        :mod:`bayesgen.semi.nuts`); ``stats`` the labeled statistics;
        ``observed(family, params, Z, prefix, dims)`` gives it from ``pymc_observed``
        row by row."""


# ------------------------------------------------------- optional abilities
@runtime_checkable
class Conjugate(Protocol):
    """A closed-form conjugate posterior (``conjugate``; ``method="conjugate"``)."""

    def posterior(self, stats: dict, prior: dict) -> dict:
        """Conjugate posterior hyper-parameters."""

    def draw(self, post: dict, size: int, rng: np.random.Generator) -> dict:
        """``size`` i.i.d. posterior draws (``params`` with leading dim ``size``)."""

    def log_predictive(self, X: Any, post: dict) -> np.ndarray:
        """Posterior predictive log p(x_n | y = k, data), (n, K)."""


@runtime_checkable
class ExactLOO(Protocol):
    """Closed-form leave-one-out predictives (``exact_loo``)."""

    def loo_log_predictive(self, Z: Any, y: np.ndarray, w: np.ndarray,
                           post: dict) -> np.ndarray:
        """log p(z_n | y_n, D without row n), (n,), internal frame: row n (weight w_n)
        removed from the posterior ``post`` of its class."""

    def loo_log_predictive_at(self, Z: Any, y: np.ndarray, w: np.ndarray, post: dict,
                              Z_test: Any = None) -> np.ndarray:
        """log p(z_test_j | y = k, D without training row i), (n, m, K); ``Z_test=None``:
        each training row at itself, (n, K). Every parameter that depends on row i changes,
        also those the classes share (LDA's covariance). Memory: the output plus
        :data:`bayesgen.families.conjugate.BLOCK` values."""


@runtime_checkable
class FarPredictive(Protocol):
    """The conjugate predictive of far rows (``conjugate`` and ``far_rows``)."""

    def far_log_predictive(self, far: Any, post: dict) -> np.ndarray:
        """Posterior predictive log-density of the far rows, (m, K)."""


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
        """The resolved prior in the units of X."""


@runtime_checkable
class FarRows(Protocol):
    """Rows beyond the float range of the frame, z = t u + z_N
    (:class:`bayesgen.data.frame.FarRows`)."""

    def far_terms(self, far: Any, params: dict) -> tuple:
        """(a2, a1, a0), each (..., m, K): log p(z | k) = t^2 a2 + t a1 + a0."""


@runtime_checkable
class Augmentation(Protocol):
    """``method="conjugate"`` by data augmentation (missing entries of LDA/QDA, MultinomialNB)."""

    def needs_augmentation(self, stats: dict) -> bool:
        """Whether these statistics need data augmentation."""

    def augment(self, stats: dict, prior: dict, *, chains: int, draws: int, tune: int,
                rng: np.random.Generator) -> tuple:
        """``(params, post, sample_stats)``: posterior draws, what ``log_predictive``
        accepts, and (chain, draw) arrays for ``idata_``."""


@runtime_checkable
class FixedParams(Protocol):
    """Non-random entries of ``params`` (KernelNB's training points)."""

    def fixed_params(self, stats: dict) -> dict:
        """The non-random ``params`` entries, as the point fits store them."""


@runtime_checkable
class TrainLogLik(Protocol):
    """The training rows' own log-likelihood (``train_log_lik``)."""

    def train_log_lik(self, X: np.ndarray, y: np.ndarray, params: dict) -> np.ndarray:
        """log p(x_n | y_n, theta) of the training rows, (..., n) (KernelNB: leave-one-out)."""


@runtime_checkable
class Coords(Protocol):
    """Named coordinates of dims beyond class and feature (``coords``)."""

    def coords(self, dims: dict | None = None) -> dict:
        """``{dim: coordinate values}`` (empty before fitting when data-dependent)."""


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
        """The point scores (n, K) as the documented discriminant in the units of X."""


@runtime_checkable
class Composite(Protocol):
    """Part families on disjoint column groups (``composite``)."""

    #: the resolved parts: dicts with ``name``, ``prefix``, ``family``, ``columns``
    parts_: list | None

    def column_families(self, names: list[str] | None, kinds: list[str]) -> list:
        """The part family modelling each column of a table."""

    def split(self, params: dict) -> list[dict]:
        """Each part's entries of ``params``, its prefix removed."""

    def namespaced(self, per_part: list[dict]) -> dict:
        """The parts' dicts merged, each key prefixed by its part's prefix."""


#: capability flag -> the protocol of the hooks a family declaring it has
HOOKS: dict[str, type] = {
    "conjugate": Conjugate,
    "exact_loo": ExactLOO,
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

#: flags that together ask for one more protocol
JOINT_HOOKS: dict[tuple[str, ...], type] = {("conjugate", "far_rows"): FarPredictive}


def undeclared(family: Any) -> list[str]:
    """``"Family"`` when a hook is missing, ``"capabilities"`` when none is declared,
    and every :data:`HOOKS` flag set without its protocol; empty for a conforming family."""
    problems = [] if isinstance(family, Family) else ["Family"]
    caps = getattr(family, "capabilities", None)
    if not isinstance(caps, Capabilities):
        return [*problems, "capabilities"]
    for flag in fields(Capabilities):
        hooks = HOOKS.get(flag.name)
        if hooks is not None and getattr(caps, flag.name) and not isinstance(family, hooks):
            problems.append(flag.name)
    for flags, hooks in JOINT_HOOKS.items():
        if all(getattr(caps, f) for f in flags) and not isinstance(family, hooks):
            problems.append("+".join(flags))
    return problems


class Configurable:
    """A family's construction settings given after its hyper-parameters.

    The estimator learns some configuration only from the data (``labels``, ``frame``,
    ``levels``, ``feature_names``, a maximiser copy's ``divisor``); :meth:`configured`
    returns a new family with them, so a family held by a fit never changes under it.
    Also the defaults of :meth:`Family.sample_inputs` and :meth:`Family.stats_attributes`."""

    #: the settings :meth:`configured` accepts
    SETTINGS = frozenset({"labels", "frame", "levels", "feature_names", "divisor"})

    def configured(self, **settings: Any):
        """A copy of this family with the given settings (any of :attr:`SETTINGS`)."""
        unknown = sorted(set(settings) - self.SETTINGS)
        if unknown:
            raise TypeError(f"{type(self).__name__}.configured: unknown setting(s) "
                            f"{unknown}; the settings are {sorted(self.SETTINGS)}.")
        new = copy.copy(self)
        new._settle(settings)
        return new

    def learned(self, stats: dict):
        """This family configured with what it reads from the fit's statistics (the
        categories of a categorical family, :meth:`configured`): ``self`` when nothing."""
        return self

    def sample_inputs(self, stats: dict) -> dict:
        """Nothing beyond the parameters."""
        return {}

    def stats_attributes(self, stats: dict) -> dict:
        """No attribute of the statistics."""
        return {}

    def _settle(self, settings: dict) -> None:
        """Set ``settings`` on this new copy (composites also configure their parts)."""
        for name, value in settings.items():
            setattr(self, name, value)
