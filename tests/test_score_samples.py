"""score_samples (log p(x)) and the novelty helper (bayesgen.inference.density)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import stats
from scipy.special import logsumexp

import bayesgen as bg
from bayesgen.inference import density
from tests.test_exact_loo import _data

ESTIMATORS = {
    "gaussian": (bg.GaussianNB, "real", {}),
    "lda": (bg.LDA, "real", {}),
    "qda": (bg.QDA, "real", {}),
    "bernoulli": (bg.BernoulliNB, "binary", {}),
    "multinomial": (bg.MultinomialNB, "counts", {}),
    "poisson": (bg.PoissonNB, "counts", {}),
    "exponential": (bg.ExponentialNB, "durations", {}),
    "categorical": (bg.CategoricalNB, "categories", {}),
    "kernel": (bg.KernelNB, "real", {}),
    "mixed": (bg.MixedNB, "mixed", {"families": [("gaussian", [0, 1]), ("poisson", [2, 3]),
                                                 ("bernoulli", [4])]}),
}


@pytest.mark.parametrize("method", ["mle", "map", "conjugate"])
@pytest.mark.parametrize("name", sorted(ESTIMATORS))
def test_logsumexp_of_the_joint(name, method):
    cls, kind, kw = ESTIMATORS[name]
    if method not in cls._methods:
        pytest.skip(f"{cls.__name__} has no method {method!r}")
    X, y = _data(kind, np.random.default_rng(0), n=40)
    est = cls(method=method, draws=50, **kw).fit(X, y)
    Xt, _ = _data(kind, np.random.default_rng(1), n=10)
    expected = logsumexp(est.predict_joint_log_proba(Xt), axis=1)
    np.testing.assert_allclose(est.score_samples(Xt), expected, rtol=1e-12, atol=1e-12)


def test_gaussian_nb_hand_mixture():
    X, y = _data("real", np.random.default_rng(2), n=60)
    X = X * [1e3, 1e-2]  # a non-trivial frame: the density must be in user units
    est = bg.GaussianNB(method="map").fit(X, y)
    Xt = X[:5] + 0.3 * X.std(axis=0)
    dens = sum(p * stats.norm.pdf(Xt, mu, np.sqrt(var)).prod(axis=1)
               for p, mu, var in zip(est.class_prior_, est.theta_, est.var_, strict=True))
    np.testing.assert_allclose(est.score_samples(Xt), np.log(dens), rtol=1e-10)


def test_qda_and_lda_hand_mixture():
    X, y = _data("real", np.random.default_rng(3), n=60)
    Xt = X[:5] + 0.5 * X.std(axis=0)
    qda = bg.QDA(method="mle").fit(X, y)
    dens = sum(p * stats.multivariate_normal(mu, cov).pdf(Xt)
               for p, mu, cov in zip(qda.class_prior_, qda.means_, qda.covariance_,
                                     strict=True))
    np.testing.assert_allclose(qda.score_samples(Xt), np.log(dens), rtol=1e-9)
    lda = bg.LDA(method="map").fit(X, y)
    dens = sum(p * stats.multivariate_normal(mu, lda.covariance_).pdf(Xt)
               for p, mu in zip(lda.class_prior_, lda.means_, strict=True))
    np.testing.assert_allclose(lda.score_samples(Xt), np.log(dens), rtol=1e-9)


def test_bernoulli_hand_mixture():
    X, y = _data("binary", np.random.default_rng(4), n=40)
    est = bg.BernoulliNB(method="map").fit(X, y)
    theta = np.exp(est.feature_log_prob_)
    dens = sum(p * stats.bernoulli.pmf(X[:6], t).prod(axis=1)
               for p, t in zip(est.class_prior_, theta, strict=True))
    np.testing.assert_allclose(est.score_samples(X[:6]), np.log(dens), rtol=1e-12)


def test_missing_entries_are_integrated_out():
    X, y = _data("real", np.random.default_rng(5), n=60)
    est = bg.GaussianNB(method="map").fit(X, y)
    Xt = X[:4].copy()
    Xt[:, 1] = np.nan
    dens = sum(p * stats.norm.pdf(Xt[:, 0], mu[0], np.sqrt(var[0]))
               for p, mu, var in zip(est.class_prior_, est.theta_, est.var_, strict=True))
    np.testing.assert_allclose(est.score_samples(Xt), np.log(dens), rtol=1e-10)
    lda = bg.LDA(method="map").fit(X, y)  # the marginal normal of the observed feature
    dens = sum(p * stats.norm.pdf(Xt[:, 0], mu[0], np.sqrt(lda.covariance_[0, 0]))
               for p, mu in zip(lda.class_prior_, lda.means_, strict=True))
    np.testing.assert_allclose(lda.score_samples(Xt), np.log(dens), rtol=1e-9)


def test_conjugate_is_the_posterior_predictive_mixture():
    """score_samples of a conjugate fit integrates to ~1 over a 1-d grid (a density)."""
    X, y = _data("real", np.random.default_rng(6), n=30)
    est = bg.GaussianNB(method="conjugate").fit(X[:, :1], y)
    grid = np.linspace(X[:, 0].min() - 60, X[:, 0].max() + 60, 20001)[:, None]
    mass = np.trapezoid(np.exp(est.score_samples(grid)), grid[:, 0])
    assert mass == pytest.approx(1.0, abs=2e-3)  # Student-t tails beyond the grid


def test_rescaling_shifts_by_the_jacobian():
    X, y = _data("real", np.random.default_rng(7), n=40)
    a = np.array([512.0, 1e-3])
    base = bg.QDA(method="conjugate").fit(X, y).score_samples(X[:5])
    scaled = bg.QDA(method="conjugate").fit(X * a, y).score_samples(X[:5] * a)
    np.testing.assert_allclose(scaled - base, -np.log(a).sum(), rtol=1e-8)


def test_dask_is_lazy_and_equal():
    da = pytest.importorskip("dask.array")
    X, y = _data("real", np.random.default_rng(8), n=40)
    est = bg.GaussianNB(method="map").fit(X, y)
    lazy = est.score_samples(da.from_array(X, chunks=(15, 2)))
    assert type(lazy).__module__.startswith("dask") and lazy.shape == (40,)
    np.testing.assert_allclose(lazy.compute(), est.score_samples(X), rtol=1e-14)


def test_novelty_flags_far_rows():
    X, y = _data("real", np.random.default_rng(9), n=80)
    est = bg.LDA(method="map").fit(X, y)
    Xt = np.vstack([X[:3], X[:1] + np.array([40.0, 0.0])])
    with pytest.warns(bg.DataWarning, match="unlike the training data"):
        flags = density.novelty(est, Xt, quantile=0.01, X_train=X)
    threshold = np.quantile(est.score_samples(X), 0.01)
    np.testing.assert_array_equal(flags, est.score_samples(Xt) < threshold)
    assert flags[-1]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert not density.novelty(est, est.means_, quantile=0.01, X_train=X).any()  # typical
    with pytest.raises(ValueError, match="quantile"):
        density.novelty(est, Xt, quantile=1.5, X_train=X)
    with pytest.raises(ValueError, match=r"X_train=X_train"):  # a point fit keeps no rows
        density.novelty(est, Xt)


@pytest.mark.slow
def test_mcmc_logsumexp_of_the_joint():
    X, y = _data("real", np.random.default_rng(10), n=40)
    est = bg.GaussianNB(method="mcmc", draws=200, tune=200, chains=2, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bg.ConvergenceWarning)
        est.fit(X, y)
    expected = logsumexp(est.predict_joint_log_proba(X[:7]), axis=1)
    np.testing.assert_allclose(est.score_samples(X[:7]), expected, rtol=1e-12)
