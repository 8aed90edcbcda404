"""NUTS started at the mode and whitened with the Laplace covariance (flat in N).

The mode and the covariance are checked against closed forms: a Gaussian log density
(exact for any Newton step), and GaussianNB's Normal-Inverse-Gamma posterior in PyMC's
unconstrained coordinates (mu, log var), whose mode and Hessian are known. The number
of leapfrog steps per draw is checked at two N a thousand-fold apart (no timing).
"""

import warnings

import numpy as np
import pytest

import bayesgen as bg
from bayesgen.inference import jax_nuts, laplace
from bayesgen.inference.model import build_stats_model

pytestmark = pytest.mark.slow


def _gaussian(mean, cov):
    """Batched (values, gradients) of log N(x; mean, cov) up to a constant."""
    prec = np.linalg.inv(cov)

    def values_and_grads(X):
        diff = X - mean
        return -0.5 * np.einsum("bi,ij,bj->b", diff, prec, diff), -diff @ prec

    return values_and_grads


def test_newton_finds_a_gaussians_mean_and_covariance():
    rng = np.random.default_rng(0)
    A = rng.normal(size=(5, 5))
    cov = A @ A.T + 0.1 * np.eye(5)
    cov[0] *= 1e-4  # scales four orders apart, as at large N
    cov[:, 0] *= 1e-4
    mean = rng.normal(size=5) * 10
    result = laplace.newton_mode(_gaussian(mean, cov), np.zeros(5))
    assert result.ok
    np.testing.assert_allclose(result.mode, mean, rtol=0, atol=1e-8)
    np.testing.assert_allclose(result.cov, cov, rtol=1e-6, atol=1e-14)
    assert result.iterations <= 2  # one Newton step solves a quadratic


def test_newton_climbs_a_non_concave_start():
    """From where the log density is convex (student-t tails) the step still goes up."""

    def values_and_grads(X):
        r2 = np.sum((X - 3.0) ** 2, axis=1)
        return -2.0 * np.log1p(r2), -4.0 * (X - 3.0) / (1.0 + r2)[:, None]

    result = laplace.newton_mode(values_and_grads, np.array([30.0, -20.0]))
    assert result.ok
    np.testing.assert_allclose(result.mode, [3.0, 3.0], atol=1e-8)
    np.testing.assert_allclose(result.cov, np.eye(2) / 4.0, rtol=1e-5)


def test_newton_without_a_finite_start_falls_back_to_the_identity():
    def values_and_grads(X):
        return np.full(len(X), -np.inf), np.zeros_like(X)

    result = laplace.newton_mode(values_and_grads, np.ones(3))
    assert not result.ok
    np.testing.assert_array_equal(result.mode, np.ones(3))
    np.testing.assert_array_equal(result.W, np.eye(3))


def test_mode_and_covariance_of_the_normal_inverse_gamma_posterior():
    """GaussianNB, one feature, fixed class prior: in (mu, u = log var) the posterior
    density (Jacobian e^u included) is exp(-(a_n + 1/2) u - (b_n + kappa_n (mu -
    m_n)^2 / 2) e^-u), so the mode is mu = m_n, var = b_n / (a_n + 1/2), and the
    negative Hessian there is diag(kappa_n / var, a_n + 1/2)."""
    rng = np.random.default_rng(3)
    y = np.repeat([0, 1], [40, 60])
    X = (rng.normal(size=100) * np.where(y == 0, 1.0, 2.5) + 3.0 * y)[:, None]
    est = bg.GaussianNB(method="map", class_prior=[0.5, 0.5]).fit(X, y)
    stats, prior = est._stats, est._prior
    n, xbar, S = stats["count"], stats["mean"][:, 0], stats["m2"][:, 0]
    m0, k0, a0, b0 = (np.broadcast_to(prior[name], (2, 1))[:, 0]
                      for name in ("m0", "kappa0", "a0", "b0"))
    kn = k0 + n
    mn = (k0 * m0 + n * xbar) / kn
    an = a0 + n / 2
    bn = b0 + S / 2 + k0 * n * (xbar - m0) ** 2 / (2 * kn)
    var = bn / (an + 0.5)

    model = build_stats_model(est)
    result = jax_nuts.laplace(model)
    assert result["ok"]
    assert set(result["mode"]) == {"var_log__", "mu"}
    expected = {"var_log__": 1.0 / (an + 0.5), "mu": var / kn}
    # Newton stops at a squared decrement of 1e-10: within 1e-4 posterior sds
    np.testing.assert_allclose(result["mode"]["mu"][:, 0], mn, rtol=0,
                               atol=1e-4 * np.sqrt(expected["mu"]).min())
    np.testing.assert_allclose(result["mode"]["var_log__"][:, 0], np.log(var), rtol=0,
                               atol=1e-4 * np.sqrt(expected["var_log__"]).min())
    order = [v.name for v in model.value_vars]
    np.testing.assert_allclose(np.diag(result["cov"]),
                               np.concatenate([expected[name] for name in order]),
                               rtol=1e-5)
    off = result["cov"] - np.diag(np.diag(result["cov"]))
    assert np.max(np.abs(off)) < 1e-8 * np.max(np.diag(result["cov"]))


def test_models_above_the_whitening_limit_sample_unwhitened(monkeypatch):
    """Above MAX_WHITENED dimensions no Hessian is formed: NUTS samples the
    unconstrained coordinates from PyMC's initial point, and still the posterior."""
    monkeypatch.setattr(jax_nuts, "MAX_WHITENED", 1)
    rng = np.random.default_rng(5)
    y = np.repeat([0, 1], [30, 30])
    X = (rng.normal(size=60) + 4.0 * y)[:, None]
    kw = dict(class_prior=[0.5, 0.5], chains=2, draws=300, tune=300, progressbar=False)
    with warnings.catch_warnings():  # short chains: ESS below the 400 of the check
        warnings.simplefilter("ignore", bg.ConvergenceWarning)
        est = bg.GaussianNB(method="mcmc", random_state=0, **kw).fit(X, y)
    exact = bg.GaussianNB(method="conjugate", random_state=0, **kw).fit(X, y)
    mu = est.idata_.posterior["mu"]
    ref = exact.idata_.posterior["mu"]
    se = ref.std(("chain", "draw")) / np.sqrt(100)  # >= 100 effective draws
    assert np.all(np.abs(mu.mean(("chain", "draw")) - ref.mean(("chain", "draw")))
                  < 5 * se)
    model = build_stats_model(est)
    result = jax_nuts.laplace(model)
    assert not result["ok"] and result["iterations"] == 0
    np.testing.assert_array_equal(result["cov"], np.eye(4))
    for name, value in result["start"].items():
        np.testing.assert_array_equal(result["mode"][name], value)


def _qda_steps(n: int) -> tuple[float, float]:
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, size=n)
    X = np.array([[0.0, 0.0, 0.0], [2.0, -1.0, 1.0]])[y] + rng.normal(size=(n, 3)) * (
        1 + 0.5 * y[:, None])
    with warnings.catch_warnings():  # 2 x 300 draws: ESS below the 400 of the check
        warnings.simplefilter("ignore", bg.ConvergenceWarning)
        # at n = 300,000 fit says the log_likelihood group is left to add_log_likelihood()
        warnings.filterwarnings("ignore", message=".*add_log_likelihood",
                                category=bg.DataWarning)
        est = bg.QDA(method="mcmc", chains=2, draws=300, tune=300, random_state=1,
                     progressbar=False).fit(X, y)
    stats = est.idata_.sample_stats
    return float(stats["n_steps"].mean()), float(stats["step_size"].median())


def test_leapfrog_steps_per_draw_do_not_grow_with_n():
    """Unwhitened, the posterior's scale shrank like 1/sqrt(N) and NUTS took about
    twice the steps per draw at 1000 x the rows; whitened, the geometry is the same."""
    steps_small, size_small = _qda_steps(300)
    steps_large, size_large = _qda_steps(300_000)
    assert steps_large / steps_small < 1.25
    assert 0.75 < size_large / size_small < 1.33
