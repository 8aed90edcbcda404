"""KernelNB method='mcmc' with missing training entries: the PyTensor LOO likelihood is
the sum over features of each feature's complete-case objective on its observed points
(the objective the MAP maximises), and the pointwise terms of idata_ sum per feature."""

import numpy as np
import pytest

import bayesgen as bg
from bayesgen.families.kernel import missing as km
from bayesgen.families.kernel import pymc

pytest.importorskip("numpyro")


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(4)
    y = np.repeat([0, 1, 2], 12)
    X = rng.normal(size=(y.size, 3)) + y[:, None]
    X[rng.random(X.shape) < 0.2] = np.nan
    X[0, :] = np.nan  # a row with nothing observed
    return X, y


def _stats(X, y):
    est = bg.KernelNB(method="map").fit(X, y)
    return est, est._family, est._stats


def test_loo_likelihood_is_the_sum_of_single_feature_fits(data):
    X, y = data
    est, family, stats = _stats(X, y)
    h = np.exp(np.random.default_rng(0).normal(size=(3, 3)) * 0.3) * 0.5
    total = km.stats_loglik(family, {"bandwidth": h}, stats).eval()
    by_feature = 0.0
    for j in range(3):
        keep = ~np.isnan(X[:, j])
        sub_est = bg.KernelNB(method="map").fit(X[keep][:, [j]], y[keep])
        by_feature += pymc.stats_loglik(
            sub_est._family, {"bandwidth": h[:, [j]]}, sub_est._stats).eval()
    np.testing.assert_allclose(total, by_feature, rtol=1e-12)


def test_pointwise_terms_sum_per_feature(data):
    X, y = data
    est, family, stats = _stats(X, y)
    params = {**family.fixed_params(stats), "bandwidth": est._params["bandwidth"]}
    terms = family.train_log_lik(X, y, params)
    expected = np.zeros(X.shape[0])
    for j in range(3):
        keep = ~np.isnan(X[:, j])
        sub = bg.KernelNB(method="map").fit(X[keep][:, [j]], y[keep])
        sub_params = {**sub._family.fixed_params(sub._stats),
                      "bandwidth": est._params["bandwidth"][:, [j]]}
        expected[keep] += sub._family.train_log_lik(X[keep][:, [j]], y[keep], sub_params)
    np.testing.assert_allclose(terms, expected, rtol=1e-12)
    assert terms[0] == 0.0  # nothing observed


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::bayesgen.ConvergenceWarning")  # short chains
def test_mcmc_fits_with_missing_training_entries(data):
    X, y = data
    clf = bg.KernelNB(method="mcmc", draws=200, tune=200, chains=2, random_state=0,
                      progressbar=False).fit(X, y)
    proba = clf.predict_proba(X)
    assert np.all(np.isfinite(proba))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert "log_likelihood" in clf.idata_.groups()
    assert np.all(np.isfinite(clf.idata_.log_likelihood.to_array().values))
    mapfit = bg.KernelNB(method="map").fit(X, y)
    assert np.mean(clf.predict(X[1:]) == mapfit.predict(X[1:])) > 0.8
