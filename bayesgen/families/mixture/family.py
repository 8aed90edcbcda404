"""The family of a mixture per class, over a conjugate component family.

Model, for class k with M_k components::

    p(x | y = k, theta) = sum_{m < M_k} w_km f(x | theta_km)

``params`` hold the components of every class padded to M = max_k M_k:

- ``weights`` (..., K, M): w_km, exactly 0 for the padding (m >= M_k),
- the component parameters in the component family's names, with (K, M) where the
  family has its class dim: Gaussian ``mu`` (..., K, M, d) and ``cov``
  (..., K, M, d, d); Bernoulli ``theta`` (..., K, M, d) (the probabilities of a 1);
  Poisson ``rate`` (..., K, M, d). A padding component repeats component 0 of its
  class; its weight 0 removes it from every density.

The leading dims are posterior draws. The mixture log-density is
``logsumexp_m(log w_km + log f(x | theta_km))``, computed by the component family's
``log_lik`` on the K * M components seen as classes (:func:`flat`), so it broadcasts
over draws as the component's does.

The class statistics (``stats``) and the resolved prior (``prior``) are the component
family's own, computed from the classes' rows exactly as QDA (or BernoulliNB,
PoissonNB) computes them: every component of every class gets that prior. Fitting
needs the rows (EM, data
augmentation: :mod:`.em`, :mod:`.gibbs`), so ``mle``, ``map``, ``posterior``, ``draw``
and ``log_predictive`` of the statistics alone raise ``ValueError`` saying so.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from scipy.special import logsumexp

from bayesgen.families.mixture import predictive
from bayesgen.families.protocol import Capabilities, Configurable


def component_keys(component: Any) -> dict[str, int]:
    """The component family's parameters and the number of dims each has after its
    class dim: Gaussian ``{"mu": 1, "cov": 2}``, Bernoulli ``{"theta": 1}``, Poisson
    ``{"rate": 1}``."""
    return {key: len(dims) - 1 for key, dims in component.param_dims.items()}


def flat(params: dict, keys: dict[str, int]) -> dict:
    """The component parameters ``keys`` (:func:`component_keys`) with (K, M) merged
    into K * M "classes": e.g. ``mu`` (..., K * M, d), ``cov`` (..., K * M, d, d)."""
    out = {}
    for key, trailing in keys.items():
        value = np.asarray(params[key])
        lead = value.ndim - trailing - 2
        shape = value.shape
        out[key] = value.reshape(*shape[:lead], shape[lead] * shape[lead + 1],
                                 *shape[lead + 2:])
    return out


def log_weights(weights: np.ndarray) -> np.ndarray:
    """log w with exact -inf for the padding (w = 0)."""
    with np.errstate(divide="ignore"):
        return np.log(weights)


class MixtureFamily(Configurable):
    """A finite mixture of ``component`` densities per class.

    Parameters
    ----------
    component : family
        The component family, unconfigured (:meth:`configured` passes the frame and
        labels on to it): QDA's full-covariance NIW family or its diagonal form
        (``tied=False``), BernoulliNB's Beta-Bernoulli family or PoissonNB's
        Gamma-Poisson family.

    Attributes
    ----------
    keys : dict
        The component parameters (:func:`component_keys`).
    location : str
        The component parameter that is the component's mean (``mu``, ``theta`` or
        ``rate``): ``means_``, and what the draws are relabeled by.
    param_dims : dict
        ``weights`` ("class", "component") and every component parameter with
        "component" after "class": ``mu`` ("class", "component", "feature"), ``cov``
        ("class", "component", "feature", "feature_bis"), ``theta`` or ``rate``
        ("class", "component", "feature").
    """

    name = "mixture"

    def __init__(self, component: Any) -> None:
        self.component = component
        self.labels: np.ndarray | None = None
        self.frame = None
        self.keys = component_keys(component)
        self.location = next(iter(self.keys))
        self.param_dims = {"weights": ("class", "component"),
                           **{key: (dims[0], "component", *dims[1:])
                              for key, dims in component.param_dims.items()}}

    @property
    def positive_only(self) -> bool:
        """As the component's (non-negative X for Poisson, and Bernoulli without
        ``binarize``)."""
        return bool(self.component.positive_only)

    @property
    def capabilities(self) -> Capabilities:
        """The component's frame (real-valued columns), missing entries and
        correlation; no closed-form posterior, evidence or exact leave-one-out (the
        component labels are latent); dense X only."""
        own = self.component.capabilities
        return Capabilities(conjugate=False, evidence=False, exact_loo=False,
                            real_valued=own.real_valued, continuous=own.continuous,
                            missing=own.missing, correlated=own.correlated,
                            poor_score=own.poor_score)

    def _settle(self, settings: dict) -> None:
        """Configure the component with the same settings (frame, labels)."""
        super()._settle(settings)
        self.component = self.component.configured(**settings)

    def real_columns(self, n_features: int) -> np.ndarray:
        """Every column is real-valued."""
        return self.component.real_columns(n_features)

    # ------------------------------------------------------------------ data
    def check_X(self, X: Any, *, method: str, who: str) -> Any:
        """The component's support checks."""
        return self.component.check_X(X, method="map", who=who)

    def stats(self, X: np.ndarray, y: np.ndarray, w: np.ndarray, n_classes: int) -> dict:
        """The component family's class statistics (of the whole classes): what the
        default prior is computed from, as for QDA."""
        return self.component.stats(X, y, w, n_classes)

    def merge(self, a: dict, b: dict) -> dict:
        """The component family's merge of class statistics."""
        return self.component.merge(a, b)

    # ----------------------------------------------------------------- prior
    def prior(self, stats: dict, *, record: bool = True) -> dict:
        """The component prior: QDA's resolved prior of these class statistics (its
        data-dependent defaults included), shared by every component of every class."""
        return self.component.prior(stats, record=record)

    def prior_uses_data(self) -> bool:
        """As the component's."""
        return self.component.prior_uses_data()

    def _rows_needed(self, what: str):
        raise ValueError(f"MixtureDA: {what} of a mixture needs the rows (EM or data "
                         "augmentation over the component labels), not the class "
                         "statistics alone.")

    def mle(self, stats: dict) -> dict:
        """Not available from statistics: ``ValueError``."""
        self._rows_needed("the maximum-likelihood estimate")

    def map(self, stats: dict, prior: dict) -> dict:
        """Not available from statistics: ``ValueError`` (EM: :mod:`.em`)."""
        self._rows_needed("the posterior mode")

    def posterior(self, stats: dict, prior: dict) -> dict:
        """No closed form: ``ValueError``."""
        self._rows_needed("the posterior")

    def draw(self, post: dict, size: int, rng: np.random.Generator) -> dict:
        """No closed form: ``ValueError``."""
        self._rows_needed("a posterior draw")

    def log_predictive(self, X: Any, post: dict) -> np.ndarray:
        """No closed form: ``ValueError``."""
        self._rows_needed("the closed-form predictive")

    def log_evidence(self, stats: dict, prior: dict, rows: Callable[[], tuple], *,
                     method: str, who: str) -> float:
        """No closed form: ``ValueError``."""
        raise ValueError(f"{who}: the marginal likelihood of a mixture has no closed form "
                         "(the component labels are latent); compare fits by LOO "
                         "(bayesgen.compare) instead.")

    def loo_log_predictive(self, Z, y, w, post) -> np.ndarray:
        """No exact leave-one-out: ``ValueError``."""
        raise ValueError("MixtureDA has no exact leave-one-out; use PSIS-LOO "
                         "(az.loo on idata_ of method='gibbs' or 'mcmc').")

    loo_log_predictive_at = loo_log_predictive

    # ------------------------------------------------------------------ PyMC
    def pymc_params(self, prior: dict, *, prefix: str = "", dims: dict | None = None) -> dict:
        """The weights' Dirichlet and the components' conjugate priors in the current
        PyMC model, from a mixture prior (``classes``, ``n_components``,
        ``weight_alpha``: :func:`.pymc.mixture_prior`); variables and dims in
        :mod:`.pymc`. ``dims`` is ignored (the mixture's dims are fixed)."""
        from bayesgen.families.mixture import pymc

        self._check_mixture_prior(prior)
        self._check_gaussian()
        return pymc.params(self.component, prior, prefix=prefix)

    def pymc_observed(self, params: dict, X, y, *, prefix: str = "", dims: dict | None = None):
        """Observed rows ``x ~ pm.Mixture(weights[y], component(theta[y]))``, dims
        (obs, feature): the component labels marginalised."""
        from bayesgen.families.mixture import pymc

        if np.isnan(np.asarray(X, dtype=np.float64)).any():
            raise ValueError("MixtureDA: the PyMC model takes no missing entries (NaN).")
        pymc.observed(params, X, y, prefix=prefix)

    def pymc_stats_loglik(self, params: dict, stats: dict) -> None:
        """None: a mixture's likelihood is not a function of the class statistics (the
        component label of every row is summed out); the caller adds the rows'
        log-likelihood (:func:`.pymc.rows_loglik`) itself."""
        return None

    def _check_gaussian(self) -> None:
        """``ValueError`` unless the components are Gaussian (the PyMC mixture model
        is written for them)."""
        if "cov" not in self.keys:
            raise ValueError(f"MixtureDA: the PyMC model (model_, build_model, "
                             f"method='mcmc') is built for Gaussian components only, not "
                             f"{self.component.name!r} ones.")

    @staticmethod
    def _check_mixture_prior(prior: dict) -> None:
        from bayesgen.families.mixture import pymc

        if not pymc.is_mixture_prior(prior):
            raise ValueError("MixtureDA: the PyMC model needs the fitted mixture prior "
                             "(classes, n_components, weight_alpha); refit the estimator.")

    # ------------------------------------------------------------ likelihood
    def component_log_lik(self, X: np.ndarray, params: dict) -> np.ndarray:
        """log w_km + log f(x_n | theta_km), shape (..., n, K, M)."""
        weights = np.asarray(params["weights"])
        K, M = weights.shape[-2:]
        values = self.component.log_lik(X, flat(params, self.keys), full=True)
        values = values.reshape(*values.shape[:-1], K, M)
        return values + log_weights(weights)[..., None, :, :]

    def log_lik(self, X: np.ndarray, params: dict, *, full: bool = True) -> np.ndarray:
        """log p(x_n | y = k, theta) = logsumexp_m(log w_km + log f(x_n | theta_km)),
        shape (..., n, K) (``full`` is ignored: the density is always complete).

        Point parameters with a ``predictive`` entry (a list of K per-class conditional
        posteriors, :func:`.predictive.class_predictive`: ``MixtureDA(method="map")``
        with ``predictive="posterior"``) give instead the conditional posterior
        predictive log sum_m E[w_km] p(x_n | data_km) of every class
        (:func:`.predictive.log_density`), shape (n, K)."""
        if params.get("predictive") is not None:
            return np.stack([predictive.log_density(self.component, X, pred)
                             for pred in params["predictive"]], axis=-1)
        return logsumexp(self.component_log_lik(X, params), axis=-1)

    def responsibilities(self, X: np.ndarray, params: dict, y: np.ndarray) -> np.ndarray:
        """p(component m | x_n, y_n, theta) of rows X (n, d) with class indices y (n,),
        shape (n, M) (point parameters)."""
        values = self.component_log_lik(X, params)[np.arange(X.shape[0]), y]
        return np.exp(values - logsumexp(values, axis=-1, keepdims=True))

    def log_prior(self, params: dict, prior: dict, alpha: float = 1.0) -> float:
        """log p(theta) up to a constant: the component prior of every used component
        (w > 0) plus the Dirichlet(alpha) density of each class's weights."""
        weights = np.asarray(params["weights"])
        total = 0.0
        for k in range(weights.shape[0]):
            used = weights[k] > 0
            comp = {key: np.asarray(params[key])[k][used] for key in self.keys}
            total += float(self.component.log_prior(comp, prior))
            total += float((alpha - 1.0) * np.sum(np.log(weights[k][used])))
        return total

    def sample(self, params: dict, y: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """One x per row given class index y (n,): a component m ~ Categorical(w_{y_n}),
        then x from it; ``params`` batched per row (n, K, M, ...)."""
        n = y.shape[0]
        rows = np.arange(n)
        w = np.asarray(params["weights"])[rows, y]  # (n, M)
        M = w.shape[-1]
        u = rng.uniform(size=(n, 1))
        m = np.minimum((np.cumsum(w, axis=1) / w.sum(axis=1, keepdims=True) < u).sum(axis=1),
                       M - 1)
        return self.component.sample(flat(params, self.keys), y * M + m, rng)

    def attributes(self, params: dict) -> dict:
        """``weights_`` (K, M) and ``means_`` (K, M, d), the components' means (Gaussian
        mu, Bernoulli theta, Poisson rate), as scikit-learn's ``GaussianMixture`` per
        class (padding: weight 0); Gaussian components also ``covariances_``
        (K, M, d, d)."""
        out = {"weights_": np.asarray(params["weights"]),
               "means_": np.asarray(params[self.location])}
        if "cov" in self.keys:
            out["covariances_"] = np.asarray(params["cov"])
        return out

    # ----------------------------------------------------------------- frame
    def to_user(self, params: dict) -> dict:
        """Component parameters in the units of X (weights unchanged; components
        without a frame: unchanged)."""
        if not self.component.capabilities.real_valued:
            return params
        user = self.component.to_user({key: params[key] for key in self.keys})
        return {**params, **user}

    def prior_to_user(self, prior: dict) -> dict:
        """The component prior in the units of X; of a mixture prior
        (:func:`.pymc.mixture_prior`), every class's component prior."""
        from bayesgen.families.mixture import pymc

        if not self.component.capabilities.real_valued:
            return prior
        if pymc.is_mixture_prior(prior):
            return {**prior, "classes": [self.component.prior_to_user(p)
                                         for p in prior["classes"]]}
        return self.component.prior_to_user(prior)
