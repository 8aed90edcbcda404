"""LDA's ``n_components`` and ``transform`` for every method (issue 13 item 4),
against scikit-learn's LinearDiscriminantAnalysis.transform (up to the sign of each
component) and against the projection computed from the posterior means."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import linalg
from sklearn.datasets import load_wine
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.pipeline import make_pipeline

import bayesgen as bg


@pytest.fixture(scope="module")
def wine():
    X, y = load_wine(return_X_y=True)
    return X[:, :6], y  # K = 3, d = 6: at most 2 components


def _match_signs(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    return got * np.sign((got * want).sum(axis=0))


@pytest.mark.parametrize("n_components", [None, 1, 2])
def test_transform_matches_sklearn(wine, n_components):
    X, y = wine
    ours = bg.LDA(method="mle", n_components=n_components).fit(X, y)
    ref = LinearDiscriminantAnalysis(n_components=n_components).fit(X, y)
    got, want = ours.transform(X), ref.transform(X)
    assert got.shape == want.shape == (X.shape[0], n_components or 2)
    np.testing.assert_allclose(_match_signs(got, want), want, atol=1e-9 * np.abs(want).max())
    np.testing.assert_allclose(ours.explained_variance_ratio_, ref.explained_variance_ratio_,
                               atol=1e-10)
    assert list(ours.get_feature_names_out()) == [f"lda{j}" for j in range(got.shape[1])]


def test_n_components_above_the_maximum_raises(wine):
    X, y = wine
    with pytest.raises(ValueError, match=r"n_components=3 cannot be larger than min\(n_features"):
        bg.LDA(n_components=3).fit(X, y)
    with pytest.raises(ValueError, match="n_components"):  # two features, two classes: 1
        bg.LDA(n_components=2).fit(X[y < 2, :2], y[y < 2])
    with pytest.raises(ValueError, match="n_components"):
        bg.LDA(n_components=0).fit(X, y)
    with pytest.raises(ValueError, match="n_components"):
        bg.LDA(n_components=1.5).fit(X, y)


def _projection_from(means: np.ndarray, cov: np.ndarray, weights: np.ndarray):
    """Fisher directions from means and covariance: S_b v = lambda Sigma v,
    v^T Sigma v = 1, decreasing lambda; xbar = weights @ means."""
    xbar = weights @ means
    centred = means - xbar
    between = (centred * weights[:, None]).T @ centred
    evals, evecs = linalg.eigh(between, cov)
    return xbar, evecs[:, np.argsort(evals)[::-1]]


@pytest.mark.parametrize("method", ["conjugate", pytest.param("mcmc", marks=pytest.mark.slow)])
def test_transform_of_posterior_methods_uses_the_posterior_mean(wine, method):
    X, y = wine
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    kw = {"draws": 100, "tune": 150, "chains": 2, "random_state": 0, "progressbar": False}
    clf = bg.LDA(method=method, n_components=2, **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bg.ConvergenceWarning)  # small MCMC runs
        clf.fit(X, y)
    xbar, V = _projection_from(clf.means_, clf.covariance_, clf.class_count_ / y.size)
    want = (X - xbar) @ V[:, :2]
    got = clf.transform(X)
    np.testing.assert_allclose(_match_signs(got, want), want, atol=1e-8 * np.abs(want).max())
    pipe = make_pipeline(bg.LDA(method=method, n_components=1, **kw), bg.GaussianNB())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bg.ConvergenceWarning)
        pipe.fit(X, y)
    assert pipe.predict(X).shape == y.shape
