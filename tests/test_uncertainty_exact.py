"""The exact uncertainty decomposition of conjugate fits, and the effective sample size
of the weighted one (:mod:`bayesgen.decide.uncertainty`).

References are brute force and independent of the exact sampler: the aleatoric term
E_{theta | x, D} H[y | x, theta] by self-normalised importance sampling of many exact
posterior draws of p(theta | D) near the data (densities from scipy on ``idata_``), and
far from the data (where that collapses) by refits with a fully fixed prior on the data
plus the row (x, k) for each k, whose conjugate draws are p(theta | D, (x, y=k)).
Each comparison allows 4.5 standard errors of the two Monte Carlo estimates.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import sparse, stats
from scipy.special import logsumexp

import bayesgen as bg
from bayesgen.decide import uncertainty
from tests.conftest import make_data

Z_TOL = 4.5


def _entropy_rows(log_joint: np.ndarray) -> np.ndarray:
    """H(p(y | x, theta_s)) of per-draw joints (S, K)."""
    log_p = log_joint - logsumexp(log_joint, axis=1, keepdims=True)
    return -(np.exp(log_p) * log_p).sum(axis=1)


def _gaussian_joint(est, x: np.ndarray) -> np.ndarray:
    """log pi_k + sum_j log N(x_j; mu_kj, var_kj) per draw, (S, K), from ``idata_``."""
    post = est.idata_.posterior.stack(s=("chain", "draw"))
    pi = post["pi"].transpose("s", "class").values
    mu = post["mu"].transpose("s", "class", "feature").values
    sd = np.sqrt(post["var"].transpose("s", "class", "feature").values)
    return np.log(pi) + stats.norm.logpdf(x, mu, sd).sum(axis=-1)


def _weighted_reference(log_joint: np.ndarray) -> tuple[float, float, float]:
    """(aleatoric, its standard error, Kish ESS) by importance weights p(x | theta_s)."""
    log_w = logsumexp(log_joint, axis=1)
    w = np.exp(log_w - log_w.max())
    w /= w.sum()
    H = _entropy_rows(log_joint)
    value = float(w @ H)
    se = float(np.sqrt(np.sum((w * (H - value)) ** 2)))  # delta method, ratio estimator
    return value, se, float(1.0 / np.sum(w**2))


def _exact_se(est, X_row: np.ndarray, size: int) -> float:
    """A bound on the standard error of the exact estimate: sd(H) over the fit's draws
    (at most log K / 2), divided by sqrt(size)."""
    return float(np.log(est.classes_.size) / 2 / np.sqrt(size))


@pytest.fixture(scope="module")
def data():
    return make_data("real", n_per_class=15, seed=3)


def test_exact_equals_importance_sampling_of_many_exact_draws_near_the_data(data):
    """Overlapping, unbalanced classes (15, 5, 3 rows), so that every term matters
    (the label's Dirichlet count too); the exact estimate's standard error from 8
    independent runs."""
    rng = np.random.default_rng(8)
    y = np.repeat([0, 1, 2], [15, 5, 3])
    X = rng.normal(size=(y.size, 2)) + 0.8 * y[:, None]
    rows = np.array([[0.0, 0.0], [0.8, 0.8], [1.6, 1.2], [2.5, 2.5]])
    big = bg.GaussianNB(method="conjugate", draws=40_000, chains=1, random_state=1).fit(X, y)
    runs = []
    for seed in range(8):
        est = bg.GaussianNB(method="conjugate", draws=2000, chains=1,
                            random_state=seed).fit(X, y)
        got = est.predict_uncertainty(rows, as_dataset=False, max_draws=2000)
        assert np.all(got.ess == 2000)
        np.testing.assert_allclose(got.total, got.aleatoric + got.epistemic, rtol=0,
                                   atol=1e-12)
        runs.append(got.aleatoric)
    runs = np.array(runs)
    mean, se_exact = runs.mean(axis=0), runs.std(axis=0, ddof=1) / np.sqrt(len(runs))
    for i, x in enumerate(rows):
        ref, se, ess = _weighted_reference(_gaussian_joint(big, x))
        assert ess > 500  # the SE below accounts for it
        bound = np.hypot(se, se_exact[i])
        assert abs(mean[i] - ref) < Z_TOL * bound, (i, mean[i], ref, bound)
        assert bound < 0.01


def test_exact_lda_shared_covariance(data):
    """LDA: the row changes the shared covariance of every class."""
    X, y = data
    x = X[:1] + 0.5
    big = bg.LDA(method="conjugate", draws=40_000, chains=1, random_state=1).fit(X, y)
    est = bg.LDA(method="conjugate", draws=4000, chains=1, random_state=2).fit(X, y)
    post = big.idata_.posterior.stack(s=("chain", "draw"))
    pi = post["pi"].transpose("s", "class").values
    mu = post["mu"].transpose("s", "class", "feature").values
    cov = post["cov"].transpose("s", "feature", "feature_bis").values
    L = np.linalg.cholesky(cov)  # (S, d, d)
    diff = x[0][None, None, :] - mu  # (S, K, d)
    sol = np.linalg.solve(L[:, None], diff[..., None])[..., 0]
    logdet = 2 * np.log(np.diagonal(L, axis1=1, axis2=2)).sum(axis=1)
    joint = np.log(pi) - 0.5 * (sol**2).sum(-1) - 0.5 * logdet[:, None]
    ref, se, ess = _weighted_reference(joint)
    assert ess > 1_000
    got = est.predict_uncertainty(x, as_dataset=False, max_draws=4000)
    assert abs(got.aleatoric[0] - ref) < Z_TOL * np.hypot(se, _exact_se(est, x, 4000))


FIXED = {"mean_strength": 0.5, "var_dof": 4.0}


def _fixed_gnb(X, **kw):
    d = X.shape[1]
    return bg.GaussianNB(method="conjugate", mean_prior=np.zeros(d),
                         var_prior=np.full(d, 2.0), **FIXED, **kw)


@pytest.mark.parametrize("distance", [6.0, 12.0])
def test_far_rows_do_not_collapse(data, distance):
    """6 and 12 standard deviations from the data: the weights of 4,000 draws collapse
    (Kish ESS about 1), the exact decomposition matches refits on D + (x, k)."""
    X, y = data
    x = X.mean(axis=0) + distance * X.std(axis=0) * np.array([1.0, -1.0, 0.5, 0.0])
    est = _fixed_gnb(X, draws=4000, chains=1, random_state=0).fit(X, y)
    joint = _gaussian_joint(est, x)
    assert _weighted_reference(joint)[2] < 5  # the weights collapse here
    with warnings.catch_warnings():
        warnings.simplefilter("error", bg.DataWarning)  # no warning: nothing weighted
        got = est.predict_uncertainty(x[None], as_dataset=False)
    assert got.ess[0] == uncertainty.EXACT_DRAWS
    proba = est.predict_proba(x[None])[0]
    ref, var = 0.0, 0.0
    for k in range(est.classes_.size):
        refit = _fixed_gnb(X, draws=40_000, chains=1, random_state=10 + k).fit(
            np.vstack([X, x]), np.append(y, k))
        H = _entropy_rows(_gaussian_joint(refit, x))
        ref += proba[k] * H.mean()
        var += proba[k] ** 2 * H.var() / H.size
    bound = np.hypot(np.sqrt(var), _exact_se(est, x, uncertainty.EXACT_DRAWS))
    assert abs(got.aleatoric[0] - ref) < Z_TOL * bound, (got.aleatoric[0], ref, bound)


def test_exact_for_every_conjugate_family_is_deterministic_and_consistent():
    """Count, binary, categorical and mixed families; sparse counts; a row with a
    missing entry (factorised: exact too)."""
    from tests.conftest import CLASSIFIERS

    for name, (factory, kind) in sorted(CLASSIFIERS.items()):
        if name == "KernelNB":
            continue
        X, y = make_data(kind, n_per_class=10)
        est = factory(method="conjugate", draws=300, chains=1, random_state=0).fit(X, y)
        a = est.predict_uncertainty(X[:6], as_dataset=False)
        b = est.predict_uncertainty(X[[5, 0, 1]], as_dataset=False)
        np.testing.assert_allclose(b.aleatoric, a.aleatoric[[5, 0, 1]], rtol=0, atol=1e-12)
        assert np.all(a.ess == 300), name
        assert np.all((a.aleatoric >= 0) & (a.aleatoric <= np.log(3) + 1e-12)), name
    X, y = make_data("count", n_per_class=10)
    est = bg.MultinomialNB(method="conjugate", draws=300, chains=1, random_state=0).fit(X, y)
    dense = est.predict_uncertainty(X[:4], as_dataset=False)
    sp = est.predict_uncertainty(sparse.csr_array(X[:4]), as_dataset=False)
    np.testing.assert_allclose(sp.aleatoric, dense.aleatoric, rtol=1e-12)
    X, y = make_data("real", n_per_class=10)
    est = bg.GaussianNB(method="conjugate", draws=300, chains=1, random_state=0).fit(X, y)
    row = X[:1].copy()
    row[0, 1] = np.nan
    assert est.predict_uncertainty(row, as_dataset=False).ess[0] == 300


def test_rows_needing_augmentation_are_weighted_and_warn(data):
    """QDA: a test row with a missing entry has no conjugate update (data augmentation):
    its draws are weighted, its ESS reported; far from the data the warning fires."""
    X, y = data
    est = bg.QDA(method="conjugate", draws=2000, chains=1, random_state=0).fit(X, y)
    rows = np.vstack([X[:2], X[:1] + 8 * X.std(axis=0)])
    rows[:, 3] = np.nan
    with pytest.warns(bg.DataWarning, match=r"effective sample size is below 100"):
        got = est.predict_uncertainty(rows, as_dataset=True)
    ess = got["ess"].values
    assert np.all(ess < 2000) and ess[2] < 100 and ess[0] > 100
    np.testing.assert_allclose(got["total"], got["aleatoric"] + got["epistemic"], atol=1e-12)


@pytest.mark.slow
def test_mcmc_reports_ess_and_warns_far_from_the_data(data):
    X, y = data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = bg.GaussianNB(method="mcmc", draws=500, tune=300, chains=1,
                            random_state=0).fit(X, y)
    near = est.predict_uncertainty(X[:3], as_dataset=False)
    assert np.all(near.ess > 100) and np.all(near.ess <= 500)
    with pytest.warns(bg.DataWarning, match="effective sample size"):
        far = est.predict_uncertainty(X[:1] + 6 * X.std(axis=0), as_dataset=False)
    assert far.ess[0] < 10
