"""The families' set-ups for simulation-based calibration (:mod:`validation.sbc`):
each :class:`FamilySpec` pairs an estimator with explicit, data-independent prior
settings, the prior they must resolve to, a draw of the true parameters from it, a
simulator of rows given the parameters, and the scalar summaries whose ranks are
tested. :data:`SPECS` maps the command line's family names to them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from scipy import stats

import bayesgen as bg

N_CLASSES = 3
N_FEATURES = 3
CLASS_ALPHA = 2.0


@dataclass(frozen=True)
class FamilySpec:
    """One family's SBC set-up.

    Attributes
    ----------
    name : str
    make_estimator : callable (n_draws, seed) -> estimator
        Unfitted ``method="conjugate"`` estimator with ``chains=1`` and explicit,
        data-independent prior settings.
    prior : dict
        The hyper-parameters those settings must resolve to (compared with the fitted
        ``est._prior`` in every replication) and from which ``draw_truth`` draws.
    draw_truth : callable (rng) -> dict
        Family parameters ~ prior, without leading draw dims.
    simulate : callable (truth, y, rng) -> X
        One row per class index in ``y`` (n,).
    summaries : dict of name -> callable
        Scalar summaries f(params) of a parameter dict whose arrays may carry leading
        draw dims (``pi`` is included).
    """

    name: str
    make_estimator: Callable[[int, int], Any]
    prior: dict
    draw_truth: Callable[[np.random.Generator], dict]
    simulate: Callable[[dict, np.ndarray, np.random.Generator], np.ndarray]
    summaries: dict


# ---------------------------------------------------------------- family specs
def _gaussian_spec(kappa0: float = 1.0, nu0: float = 5.0, scale: float | None = None,
                   name: str = "gaussian") -> FamilySpec:
    """GaussianNB with ``mean_strength=kappa0``, ``var_dof=nu0`` and ``var_scale=scale``
    (None: the estimator's default, 1)."""
    m0, s0 = np.array([0.0, 1.0, -2.0]), np.array([1.0, 0.5, 2.0])
    # Documented NIG: sigma2 ~ InvGamma(nu0/2, (nu0 - 2) s s0 / 2),
    # mu | sigma2 ~ N(m0, sigma2/kappa0)
    s = 1.0 if scale is None else scale
    prior = {"m0": m0, "kappa0": kappa0, "a0": np.full(3, nu0 / 2),
             "b0": (nu0 - 2) * s * s0 / 2}

    def draw_truth(rng):
        shape = (N_CLASSES, N_FEATURES)
        var = stats.invgamma(prior["a0"], scale=prior["b0"]).rvs(size=shape, random_state=rng)
        return {"mu": rng.normal(m0, np.sqrt(var / kappa0)), "var": var}

    return FamilySpec(
        name=name,
        make_estimator=lambda draws, seed: bg.GaussianNB(
            method="conjugate", class_alpha=CLASS_ALPHA, mean_prior=m0, mean_strength=kappa0,
            var_prior=s0, var_dof=nu0, var_scale=scale, draws=draws, chains=1,
            random_state=seed,
        ),
        prior=prior,
        draw_truth=draw_truth,
        simulate=lambda t, y, rng: rng.normal(t["mu"][y], np.sqrt(t["var"][y])),
        summaries={
            "pi_0": lambda p: p["pi"][..., 0],
            "mu_00": lambda p: p["mu"][..., 0, 0],
            "mu_12": lambda p: p["mu"][..., 1, 2],
            "log_var_00": lambda p: np.log(p["var"][..., 0, 0]),
            "log_var_21": lambda p: np.log(p["var"][..., 2, 1]),
        },
    )


def _mvn_spec(tied: bool, kappa0: float = 1.0, extra_dof: float = 3.0,
              scale: float | None = None, suffix: str = "") -> FamilySpec:
    """LDA (``tied``) or QDA with ``mean_strength=kappa0``, ``cov_dof=d + extra_dof`` and
    ``cov_scale=scale`` (None: the estimator's default, 1)."""
    d = N_FEATURES
    m0, nu0 = np.array([0.0, 1.0, -1.0]), d + extra_dof
    S0 = np.array([[1.0, 0.3, 0.0], [0.3, 2.0, -0.4], [0.0, -0.4, 0.5]])
    # Documented NIW: Sigma ~ IW(Psi0, nu0) with Psi0 = (nu0 - d - 1) s S0 (E[Sigma] = s S0)
    s = 1.0 if scale is None else scale
    prior = {"m0": m0, "kappa0": kappa0, "nu0": nu0, "Psi0": (nu0 - d - 1) * s * S0}
    iw = stats.invwishart(df=nu0, scale=prior["Psi0"])

    def draw_truth(rng):
        cov = iw.rvs(size=1 if tied else N_CLASSES, random_state=rng).reshape(-1, d, d)
        mu = np.stack([
            rng.multivariate_normal(m0, cov[0 if tied else k] / kappa0) for k in range(N_CLASSES)
        ])
        return {"mu": mu, "cov": cov[0] if tied else cov}

    def simulate(t, y, rng):
        cov = np.broadcast_to(t["cov"], (N_CLASSES, d, d))
        chol = np.linalg.cholesky(cov)[y]  # (n, d, d)
        z = rng.standard_normal((y.size, d, 1))
        return t["mu"][y] + (chol @ z)[..., 0]

    if tied:
        cov_summaries = {
            "log_cov_00": lambda p: np.log(p["cov"][..., 0, 0]),
            "cov_12": lambda p: p["cov"][..., 1, 2],
            "log_cov_22": lambda p: np.log(p["cov"][..., 2, 2]),
        }
    else:
        cov_summaries = {
            "log_cov_0_00": lambda p: np.log(p["cov"][..., 0, 0, 0]),
            "cov_1_12": lambda p: p["cov"][..., 1, 1, 2],
            "log_cov_2_22": lambda p: np.log(p["cov"][..., 2, 2, 2]),
        }
    cls = bg.LDA if tied else bg.QDA
    return FamilySpec(
        name=("mvn_lda" if tied else "mvn_qda") + suffix,
        make_estimator=lambda draws, seed: cls(
            method="conjugate", class_alpha=CLASS_ALPHA, mean_prior=m0, mean_strength=kappa0,
            cov_target=S0, cov_dof=nu0, cov_scale=scale, draws=draws, chains=1,
            random_state=seed,
        ),
        prior=prior,
        draw_truth=draw_truth,
        simulate=simulate,
        summaries={
            "pi_0": lambda p: p["pi"][..., 0],
            "mu_00": lambda p: p["mu"][..., 0, 0],
            "mu_12": lambda p: p["mu"][..., 1, 2],
            **cov_summaries,
        },
    )


def _diagonal_spec(tied: bool, spherical: bool, kappa0: float = 2.0, nu0: float = 6.0,
                   scale: float = 0.5, name: str | None = None) -> FamilySpec:
    """LDA (``tied``) or QDA with ``cov_structure="spherical"`` (``spherical``) or
    ``"diag"``, ``mean_strength=kappa0``, ``cov_dof=nu0`` and ``cov_scale=scale``.

    Documented prior (a0 = nu0 / 2, b0 = (nu0 - 2) s / 2, s0 the target ``cov_target``),
    per covariance group g (LDA: one; QDA: one per class)::

        diag       sigma2_gj ~ InvGamma(a0, b0 s0_j),  Sigma_g = diag(sigma2_g)
        spherical  v_g ~ InvGamma(a0, b0),             Sigma_g = v_g diag(s0)
        mu_kj ~ N(m0_j, Sigma_g,jj / kappa0)
    """
    d = N_FEATURES
    m0, s0 = np.array([0.0, 1.0, -1.0]), np.array([1.0, 2.0, 0.5])
    prior = {"m0": m0, "kappa0": kappa0, "nu0": nu0, "scale": scale, "s0": s0}
    a0, b0 = nu0 / 2.0, (nu0 - 2.0) * scale / 2.0
    n_groups = 1 if tied else N_CLASSES

    def draw_truth(rng):
        if spherical:
            volume = stats.invgamma(a0, scale=b0).rvs(size=(n_groups, 1), random_state=rng)
            var = volume * s0  # (G, d)
        else:
            var = stats.invgamma(a0, scale=b0 * s0).rvs(size=(n_groups, d), random_state=rng)
        per_class = np.broadcast_to(var, (N_CLASSES, d))
        mu = rng.normal(m0, np.sqrt(per_class / kappa0))
        cov = var[:, :, None] * np.eye(d)
        return {"mu": mu, "cov": cov[0] if tied else cov}

    def simulate(t, y, rng):
        var = np.diagonal(t["cov"], axis1=-2, axis2=-1)
        var = np.broadcast_to(var, (N_CLASSES, d))
        return rng.normal(t["mu"][y], np.sqrt(var[y]))

    if tied:  # every variance of the shared diagonal
        cov_summaries = {f"log_cov_{j}{j}": (lambda p, j=j: np.log(p["cov"][..., j, j]))
                         for j in range(d)}
    else:  # every variance of every class
        cov_summaries = {
            f"log_cov_{k}_{j}{j}": (lambda p, k=k, j=j: np.log(p["cov"][..., k, j, j]))
            for k in range(N_CLASSES) for j in range(d)
        }
    structure = "spherical" if spherical else "diag"
    cls = bg.LDA if tied else bg.QDA
    return FamilySpec(
        name=name or f"mvn_{'lda' if tied else 'qda'}_{structure}",
        make_estimator=lambda draws, seed: cls(
            method="conjugate", cov_structure=structure, class_alpha=CLASS_ALPHA,
            mean_prior=m0, mean_strength=kappa0, cov_target=s0, cov_dof=nu0,
            cov_scale=scale, draws=draws, chains=1, random_state=seed,
        ),
        prior=prior,
        draw_truth=draw_truth,
        simulate=simulate,
        summaries={
            "pi_0": lambda p: p["pi"][..., 0],
            "mu_00": lambda p: p["mu"][..., 0, 0],
            "mu_12": lambda p: p["mu"][..., 1, 2],
            "mu_21": lambda p: p["mu"][..., 2, 1],
            **cov_summaries,
        },
    )


def _bernoulli_spec() -> FamilySpec:
    alpha = 2.0
    return FamilySpec(
        name="bernoulli",
        make_estimator=lambda draws, seed: bg.BernoulliNB(
            method="conjugate", class_alpha=CLASS_ALPHA, alpha=alpha, draws=draws, chains=1,
            random_state=seed,
        ),
        prior={"alpha": np.full(N_FEATURES, alpha)},
        draw_truth=lambda rng: {"theta": rng.beta(alpha, alpha, (N_CLASSES, N_FEATURES))},
        simulate=lambda t, y, rng: (rng.random((y.size, N_FEATURES)) < t["theta"][y]) * 1.0,
        summaries={
            "pi_0": lambda p: p["pi"][..., 0],
            "theta_00": lambda p: p["theta"][..., 0, 0],
            "theta_12": lambda p: p["theta"][..., 1, 2],
        },
    )


def _multinomial_spec(n_trials: int = 10) -> FamilySpec:
    alpha = 2.0
    return FamilySpec(
        name="multinomial",
        make_estimator=lambda draws, seed: bg.MultinomialNB(
            method="conjugate", class_alpha=CLASS_ALPHA, alpha=alpha, draws=draws, chains=1,
            random_state=seed,
        ),
        prior={"alpha": np.full(N_FEATURES, alpha)},
        draw_truth=lambda rng: {
            "theta": rng.dirichlet(np.full(N_FEATURES, alpha), size=N_CLASSES)
        },
        simulate=lambda t, y, rng: rng.multinomial(n_trials, t["theta"][y]).astype(float),
        summaries={
            "pi_0": lambda p: p["pi"][..., 0],
            "theta_00": lambda p: p["theta"][..., 0, 0],
            "theta_12": lambda p: p["theta"][..., 1, 2],
        },
    )


def _categorical_spec(n_categories: int = 3) -> FamilySpec:
    alpha = 2.0

    def simulate(t, y, rng):
        cum = np.cumsum(t["theta"][y], axis=-1)  # (n, d, C)
        codes = (rng.random((y.size, N_FEATURES, 1)) > cum).sum(axis=-1)
        return np.minimum(codes, n_categories - 1).astype(float)

    return FamilySpec(
        name="categorical",
        make_estimator=lambda draws, seed: bg.CategoricalNB(
            method="conjugate", class_alpha=CLASS_ALPHA, alpha=alpha,
            min_categories=n_categories, draws=draws, chains=1, random_state=seed,
        ),
        prior={"alpha": np.full(N_FEATURES, alpha),
               "n_categories": np.full(N_FEATURES, n_categories)},
        draw_truth=lambda rng: {
            "theta": rng.dirichlet(np.full(n_categories, alpha), size=(N_CLASSES, N_FEATURES))
        },
        simulate=simulate,
        summaries={
            "pi_0": lambda p: p["pi"][..., 0],
            "theta_000": lambda p: p["theta"][..., 0, 0, 0],
            "theta_121": lambda p: p["theta"][..., 1, 2, 1],
        },
    )


def _poisson_spec() -> FamilySpec:
    alpha, rate_prior = 3.0, 2.0
    # Documented Gamma prior: shape alpha, rate beta = (alpha - 1) / rate_prior
    beta = (alpha - 1.0) / rate_prior
    return FamilySpec(
        name="poisson",
        make_estimator=lambda draws, seed: bg.PoissonNB(
            method="conjugate", class_alpha=CLASS_ALPHA, alpha=alpha, rate_prior=rate_prior,
            draws=draws, chains=1, random_state=seed,
        ),
        prior={"alpha": np.full(N_FEATURES, alpha), "beta": np.full(N_FEATURES, beta)},
        draw_truth=lambda rng: {
            "rate": rng.gamma(alpha, 1.0 / beta, size=(N_CLASSES, N_FEATURES))
        },
        simulate=lambda t, y, rng: rng.poisson(t["rate"][y]).astype(float),
        summaries={
            "pi_0": lambda p: p["pi"][..., 0],
            "log_rate_00": lambda p: np.log(p["rate"][..., 0, 0]),
            "log_rate_12": lambda p: np.log(p["rate"][..., 1, 2]),
        },
    )


def _exponential_spec() -> FamilySpec:
    alpha, mean_prior = 3.0, 2.0
    # Documented Gamma prior: shape alpha, rate beta = (alpha - 1) * mean_prior
    beta = (alpha - 1.0) * mean_prior
    return FamilySpec(
        name="exponential",
        make_estimator=lambda draws, seed: bg.ExponentialNB(
            method="conjugate", class_alpha=CLASS_ALPHA, alpha=alpha, mean_prior=mean_prior,
            draws=draws, chains=1, random_state=seed,
        ),
        prior={"alpha": np.full(N_FEATURES, alpha), "beta": np.full(N_FEATURES, beta)},
        draw_truth=lambda rng: {
            "rate": rng.gamma(alpha, 1.0 / beta, size=(N_CLASSES, N_FEATURES))
        },
        simulate=lambda t, y, rng: rng.exponential(1.0 / t["rate"][y]),
        summaries={
            "pi_0": lambda p: p["pi"][..., 0],
            "log_rate_00": lambda p: np.log(p["rate"][..., 0, 0]),
            "log_rate_12": lambda p: np.log(p["rate"][..., 1, 2]),
        },
    )


#: non-default values of the prior hyper-parameters that tune the Gaussian priors
#: (``cov_scale``, ``mean_strength``, ``cov_dof``; ``var_scale``, ``var_dof``); "auto"
#: chooses them from the data, which is no fixed prior, so SBC fixes them
SCALED = {"mvn": {"kappa0": 2.0, "extra_dof": 8.0, "scale": 5.0},
          "gaussian": {"kappa0": 2.0, "nu0": 6.0, "scale": 0.2},
          "diagonal": {"kappa0": 2.0, "nu0": 6.0, "scale": 0.5}}

SPECS: dict[str, Callable[[], FamilySpec]] = {
    "gaussian": _gaussian_spec,
    "mvn_qda": lambda: _mvn_spec(tied=False),
    "mvn_lda": lambda: _mvn_spec(tied=True),
    "bernoulli": _bernoulli_spec,
    "multinomial": _multinomial_spec,
    "categorical": _categorical_spec,
    "poisson": _poisson_spec,
    "exponential": _exponential_spec,
    "gaussian_scaled": lambda: _gaussian_spec(**SCALED["gaussian"], name="gaussian_scaled"),
    "mvn_qda_scaled": lambda: _mvn_spec(tied=False, **SCALED["mvn"], suffix="_scaled"),
    "mvn_lda_scaled": lambda: _mvn_spec(tied=True, **SCALED["mvn"], suffix="_scaled"),
    **{f"mvn_{'lda' if tied else 'qda'}_{structure}":
       (lambda tied=tied, structure=structure: _diagonal_spec(
           tied, structure == "spherical", **SCALED["diagonal"]))
       for tied in (True, False) for structure in ("diag", "spherical")},
}

#: the mis-specified controls (:func:`misspecified`): the estimator keeps the spec's
#: prior, the truth is drawn from the prior of the spec given here. The ``*_scaled``
#: ones from the default prior (E[Sigma] = S0 instead of 5 S0; E[sigma2] = s0 instead
#: of 0.2 s0); the diagonal and spherical ones from cov_scale=0.05 instead of 0.5 (prior
#: mean of every variance 10 times smaller) and mean_strength=1 instead of 2, same nu0.
#: (Variances larger than the prior expects hide behind the data: the posterior mean
#: (b0 + S / 2) / (a0 + N / 2 - 1) follows S; smaller ones cannot escape b0.)
MISSPECIFIED: dict[str, Callable[[], FamilySpec]] = {
    "gaussian_scaled": _gaussian_spec,
    "mvn_qda_scaled": lambda: _mvn_spec(tied=False),
    "mvn_lda_scaled": lambda: _mvn_spec(tied=True),
    **{f"mvn_{'lda' if tied else 'qda'}_{structure}":
       (lambda tied=tied, structure=structure: _diagonal_spec(
           tied, structure == "spherical", kappa0=1.0, nu0=6.0, scale=0.05))
       for tied in (True, False) for structure in ("diag", "spherical")},
}


def misspecified(name: str) -> FamilySpec:
    """``SPECS[name]`` with its truth drawn from ``MISSPECIFIED[name]``'s prior instead of
    the estimator's: a deliberately wrong SBC whose (co)variance ranks must fail."""
    if name not in MISSPECIFIED:
        raise ValueError(f"no mis-specified control for {name!r}; one of "
                         f"{sorted(MISSPECIFIED)}.")
    spec = SPECS[name]()
    return replace(spec, name=f"{spec.name}_misspecified",
                   draw_truth=MISSPECIFIED[name]().draw_truth)

