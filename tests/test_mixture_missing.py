"""MixtureDA(method="map") with missing entries: EM over the component labels and the
missing coordinates. One component against QDA's EM with gaps, the densities of rows
with gaps against scipy.stats marginals of the observed coordinates, the monotone
observed-data objective, a fixed point of EM, and the methods that refuse gaps."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from scipy.special import logsumexp

import bayesgen as bg
from bayesgen.families.mixture import em
from tests.test_mixture_da import two_blob_class


def _with_gaps(X, rate, seed):
    rng = np.random.default_rng(seed)
    X = X.copy()
    X[rng.random(X.shape) < rate] = np.nan
    X[np.isnan(X).all(axis=1), 0] = 0.0  # keep one observed entry per row
    return X


@pytest.fixture(scope="module")
def gappy():
    X, y = two_blob_class(150, 0)
    X = np.column_stack([X, X[:, 0] + np.random.default_rng(1).normal(0, 1, X.shape[0])])
    return _with_gaps(X, 0.15, 2), y


@pytest.fixture(scope="module")
def gappy_fit(gappy):
    X, y = gappy
    return bg.MixtureDA(n_components=[2, 1], predictive="plugin", random_state=0, tol=1e-10,
                        max_iter=2000).fit(X, y)


def test_one_component_is_qda_with_missing_entries():
    """Full covariances: QDA's EM with gaps stops at 1e-10 of its objective, and its
    data-dependent prior (cov_dof="auto") is resolved on EM-completed statistics, so
    the two agree to about 1e-4 in the log-densities (1e-5 in the probabilities), not
    to rounding; the mixture's one-component fit is itself a fixed point of EM to 1e-9."""
    from sklearn.datasets import load_iris

    X, y = load_iris(return_X_y=True)
    X = _with_gaps(X, 0.1, 0)
    mix = bg.MixtureDA(n_components=1, predictive="plugin", tol=1e-14,
                       max_iter=5000).fit(X, y)
    qda = bg.QDA().fit(X, y)
    np.testing.assert_allclose(mix.predict_joint_log_proba(X), qda.predict_joint_log_proba(X),
                               atol=1e-3)
    np.testing.assert_allclose(mix.predict_proba(X), qda.predict_proba(X), atol=1e-5)
    # one more EM step from the fitted components moves them by < 1e-9
    fam = mix._family.component
    Z = (X - mix._frame.loc) / mix._frame.scale if mix._frame is not None else X
    for k in range(3):
        Zk = Z[y == k]
        params = {"mu": mix._params["mu"][k, :1], "cov": mix._params["cov"][k, :1]}
        prior = mix._class_priors[k]
        st = em.component_stats(fam, Zk, np.ones((Zk.shape[0], 1)), np.ones(Zk.shape[0]))
        step = em._m_step(fam, st, prior, params)
        np.testing.assert_allclose(step["mu"], params["mu"], atol=1e-9)
        np.testing.assert_allclose(step["cov"], params["cov"], atol=1e-9)


def test_one_diagonal_component_is_diagonal_qda_with_missing_entries():
    """Diagonal covariances: the MAP given the gaps is closed-form per feature, which
    EM reaches exactly, so one component equals QDA(cov_structure="diag") to 1e-10."""
    from sklearn.datasets import load_iris

    X, y = load_iris(return_X_y=True)
    X = _with_gaps(X, 0.1, 0)
    mix = bg.MixtureDA(n_components=1, cov_structure="diag", predictive="plugin",
                       tol=1e-14, max_iter=3000).fit(X, y)
    qda = bg.QDA(cov_structure="diag").fit(X, y)
    np.testing.assert_allclose(mix.predict_joint_log_proba(X), qda.predict_joint_log_proba(X),
                               atol=1e-10)


def test_densities_of_rows_with_gaps_match_scipy(gappy_fit, gappy):
    """log p(x, y = k) of a row with gaps = log pi_k + log sum_m w_km N(x_o | mu_km,o,
    Sigma_km,oo): the fitted mixture's marginal on the observed coordinates."""
    X, _ = gappy
    fit = gappy_fit
    got = fit.predict_joint_log_proba(X)
    pi = np.exp(fit.class_log_prior_)
    for i in np.flatnonzero(np.isnan(X).any(axis=1))[:25]:
        o = ~np.isnan(X[i])
        for k in range(2):
            terms = [np.log(fit.weights_[k, m]) + stats.multivariate_normal(
                fit.means_[k, m, o], fit.covariances_[k, m][np.ix_(o, o)]).logpdf(X[i, o])
                for m in range(fit.n_components_[k])]
            assert got[i, k] == pytest.approx(np.log(pi[k]) + logsumexp(terms), rel=1e-9)


def test_em_objective_never_decreases_with_gaps(gappy_fit, gappy):
    X, y = gappy
    fam = gappy_fit._family.component
    Z = X if gappy_fit._frame is None else (X - gappy_fit._frame.loc) / gappy_fit._frame.scale
    Z0 = Z[y == 0]
    v = np.ones(Z0.shape[0])
    R = np.eye(2)[em._kmeans_labels(Z0, v, 2, np.random.default_rng(0))]
    prior = gappy_fit._class_priors[0]
    values = [em._em(fam, Z0, v, prior, R, 1.0, t, 0.0)[3] for t in range(1, 25)]
    assert np.all(np.diff(values) >= -1e-9 * np.abs(values[1:]))
    assert values[-1] > values[0]


def test_map_with_gaps_finds_the_blobs(gappy_fit):
    order = np.argsort(gappy_fit.weights_[0, :2])
    np.testing.assert_allclose(gappy_fit.weights_[0, order], [0.3, 0.7], atol=0.06)
    np.testing.assert_allclose(gappy_fit.means_[0, order][:, :2], [[0, 0], [5, 5]], atol=0.3)


def test_fit_on_complete_rows_predicts_rows_with_gaps(gappy):
    """A fit on complete rows integrates the gaps of new rows out (scipy marginal)."""
    X, y = gappy
    keep = ~np.isnan(X).any(axis=1)
    fit = bg.MixtureDA(n_components=[2, 1], predictive="plugin",
                       random_state=0).fit(X[keep], y[keep])
    i = np.flatnonzero(~keep)[0]
    o = ~np.isnan(X[i])
    terms = [np.log(fit.weights_[0, m]) + stats.multivariate_normal(
        fit.means_[0, m, o], fit.covariances_[0, m][np.ix_(o, o)]).logpdf(X[i, o])
        for m in range(2)]
    got = fit.predict_joint_log_proba(X[i:i + 1])[0, 0]
    assert got == pytest.approx(fit.class_log_prior_[0] + logsumexp(terms), rel=1e-9)


@pytest.mark.parametrize("cov_structure", ["full", "diag"])
def test_posterior_predictive_integrates_gaps_out(gappy, cov_structure):
    """predictive="posterior" of rows with gaps: one component fitted on complete rows
    is QDA(method="conjugate")'s closed-form predictive, gaps integrated out (the
    Student-t marginal of the observed coordinates), to rounding."""
    X, y = gappy
    keep = ~np.isnan(X).any(axis=1)
    mix = bg.MixtureDA(n_components=1, cov_structure=cov_structure,
                       predictive="posterior").fit(X[keep], y[keep])
    qda = bg.QDA(method="conjugate", cov_structure=cov_structure, draws=5,
                 chains=1).fit(X[keep], y[keep])
    np.testing.assert_allclose(mix.predict_joint_log_proba(X[~keep]),
                               qda.predict_joint_log_proba(X[~keep]), rtol=1e-12, atol=1e-10)


def test_posterior_predictive_with_gaps_in_training(gappy, gappy_fit):
    """Gaps in the training rows: the soft statistics are completed at the mode before
    the conjugate update; the predictive has the plug-in's mode and agrees with it
    near the data (a few hundred rows per component)."""
    X, y = gappy
    fit = bg.MixtureDA(n_components=[2, 1], predictive="posterior", random_state=0,
                       tol=1e-10, max_iter=2000).fit(X, y)
    np.testing.assert_allclose(fit.means_, gappy_fit.means_, atol=1e-12)
    got, plug = fit.predict_proba(X), gappy_fit.predict_proba(X)
    assert np.all(np.isfinite(got))
    gaps = np.isnan(X).any(axis=1)
    # complete rows: as without gaps (max 0.007 there); rows missing the coordinate
    # that separates the classes sit where both classes are plausible: larger moves
    np.testing.assert_allclose(got[~gaps], plug[~gaps], atol=0.02)
    np.testing.assert_allclose(got[gaps], plug[gaps], atol=0.1)
    assert fit.score(X, y) == pytest.approx(gappy_fit.score(X, y), abs=0.01)


@pytest.mark.parametrize("method", ["gibbs", "mcmc"])
def test_posterior_methods_refuse_gaps(gappy, method):
    X, y = gappy
    with pytest.raises(ValueError, match="missing entries"):
        bg.MixtureDA(n_components=1, method=method, draws=5, tune=5, chains=1).fit(X, y)
