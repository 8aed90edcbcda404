"""Evidence of the Normal-Inverse-Wishart model and cov_dof="auto" (empirical Bayes).

References: the chain rule p(x_1..x_N) = prod_n p(x_n | x_<n) with scipy's
multivariate_t as the conjugate predictive (independent of the closed-form evidence),
and a brute-force grid over nu0 for the maximiser.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import bayesgen as bg
from bayesgen.families.mvn.niw_evidence import C_BOUNDS, log_marginal_likelihood

D = 3


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    y = np.repeat([0, 1, 2], [7, 9, 6])
    X = rng.normal(size=(y.size, D)) @ np.array([[1.0, 0.3, 0], [0, 0.7, 0.2], [0, 0, 1.5]])
    X += np.array([[0, 0, 0], [1, -1, 0], [0, 2, 1]])[y]
    return X, y


def _chain_rule(X, y, prior, tied):
    """sum_n log p(x_n | y_n, rows before n): Student-t predictives, updated row by row."""
    m0, kappa0, nu0, Psi0 = prior["m0"], prior["kappa0"], prior["nu0"], prior["Psi0"]
    K = y.max() + 1
    seen = {k: [] for k in range(K)}
    total = 0.0
    for x, k in zip(X, y, strict=True):
        groups = range(K) if tied else [k]
        Psi, nu = Psi0.copy(), nu0
        for g in groups:  # shared Sigma: every class's rows update Psi and nu
            rows = np.array(seen[g]).reshape(-1, D)
            n = rows.shape[0]
            if n:
                xbar = rows.mean(0)
                diff = xbar - m0
                Psi += (rows - xbar).T @ (rows - xbar) + kappa0 * n / (kappa0 + n) * np.outer(
                    diff, diff)
                nu += n
        rows = np.array(seen[k]).reshape(-1, D)
        n = rows.shape[0]
        kappa_n = kappa0 + n
        m_n = (kappa0 * m0 + rows.sum(0)) / kappa_n
        dof = nu - D + 1
        shape = Psi * (kappa_n + 1) / (kappa_n * dof)
        total += stats.multivariate_t(loc=m_n, shape=shape, df=dof).logpdf(x)
        seen[k].append(x)
    return total


@pytest.mark.parametrize("tied", [False, True])
def test_log_evidence_equals_chain_rule_of_predictives(data, tied):
    X, y = data
    est = (bg.LDA if tied else bg.QDA)(cov_dof=D + 4.5, mean_strength=0.7).fit(X, y)
    got = log_marginal_likelihood(est._stats, est._prior, tied=tied)
    np.testing.assert_allclose(got, _chain_rule(X, y, est._prior, tied), rtol=1e-10)


@pytest.mark.parametrize("tied", [False, True])
def test_auto_dof_maximises_the_evidence_over_a_grid(data, tied):
    X, y = data
    est = (bg.LDA if tied else bg.QDA)(cov_dof="auto").fit(X, y)
    S0 = est._prior["Psi0"] / (est._prior["nu0"] - D - 1)

    def evidence(nu0):
        prior = dict(est._prior, nu0=nu0, Psi0=(nu0 - D - 1) * S0)
        return log_marginal_likelihood(est._stats, prior, tied=tied)

    grid = D + 1 + np.exp(np.linspace(*np.log(C_BOUNDS), 3001))
    values = np.array([evidence(nu) for nu in grid])
    best = grid[values.argmax()]
    nu_auto = est._prior["nu0"]
    assert evidence(nu_auto) >= values.max() - 1e-6
    np.testing.assert_allclose(np.log(nu_auto - D - 1), np.log(best - D - 1), atol=0.02)


def test_auto_dof_is_scale_equivariant(data):
    X, y = data
    scale = np.array([1e-3, 1.0, 250.0])
    a = bg.QDA().fit(X, y)
    b = bg.QDA().fit(X * scale, y)
    np.testing.assert_allclose(a._prior["nu0"], b._prior["nu0"], rtol=1e-6)
    np.testing.assert_allclose(a.predict_proba(X), b.predict_proba(X * scale), atol=1e-8)


def test_auto_dof_tracks_how_close_the_class_covariances_are():
    """Covariances drawn from IW with c = nu0 - d - 1 = 2 (spread) vs 200 (all ~ S0)."""
    rng = np.random.default_rng(1)
    S0 = np.diag([1.0, 2.0, 0.5])
    found = {}
    for c_true in (2.0, 200.0):
        nu = D + 1 + c_true
        covs = stats.invwishart(df=nu, scale=c_true * S0).rvs(size=20, random_state=rng)
        y = np.repeat(np.arange(20), 40)
        X = np.concatenate([rng.multivariate_normal(np.zeros(D), c, 40) for c in covs])
        est = bg.QDA(cov_target=S0).fit(X, y)
        found[c_true] = est._prior["nu0"] - D - 1
    assert 0.5 < found[2.0] < 8.0
    assert found[200.0] > 40.0


@pytest.mark.parametrize("bad", ["fast", "AUTO"])
def test_bad_cov_dof_string_is_rejected(data, bad):
    X, y = data
    with pytest.raises(ValueError, match="'cov_dof' parameter of QDA must be"):
        bg.QDA(cov_dof=bad).fit(X, y)


def _whitened(rng, n: int, d: int) -> np.ndarray:
    """n rows with mean exactly 0 and scatter Z^T Z = n I (sample covariance I)."""
    Z = rng.normal(size=(n, d))
    Z -= Z.mean(axis=0)
    L = np.linalg.cholesky(Z.T @ Z / n)
    return np.linalg.solve(L, Z.T).T


def test_auto_dof_is_the_bound_when_the_evidence_rises_to_it():
    """Every class's sample covariance is exactly S0: the evidence keeps rising with c, so
    cov_dof='auto' is the upper bound itself, not a point within the search tolerance
    of it (which would move with the rounding of the statistics)."""

    rng = np.random.default_rng(3)
    sizes = [30, 40, 25]
    y = np.repeat([0, 1, 2], sizes)
    X = np.vstack([_whitened(rng, n, 2) + 3.0 * k for k, n in enumerate(sizes)])
    for tied in (False, True):
        est = (bg.LDA if tied else bg.QDA)(method="map", cov_target=np.eye(2),
                                           cov_dof="auto").fit(X, y)
        assert est._prior["nu0"] == 2 + 1 + C_BOUNDS[1], tied


def test_auto_dof_weights_equal_repeated_rows(data):
    X, y = data
    w = np.random.default_rng(4).integers(1, 4, size=y.size)
    for cls in (bg.LDA, bg.QDA):
        weighted = cls(method="map").fit(X, y, sample_weight=w)
        repeated = cls(method="map").fit(np.repeat(X, w, axis=0), np.repeat(y, w))
        np.testing.assert_allclose(weighted._prior["nu0"], repeated._prior["nu0"], rtol=1e-12)


def test_auto_dof_does_not_depend_on_the_order_of_the_classes(data):
    X, y = data
    perm = np.array([2, 0, 1])
    a = bg.QDA(method="map").fit(X, y)
    b = bg.QDA(method="map").fit(X, perm[y])
    assert a._prior["nu0"] == b._prior["nu0"]
    np.testing.assert_allclose(a.predict_proba(X), b.predict_proba(X)[:, perm], rtol=1e-12)
