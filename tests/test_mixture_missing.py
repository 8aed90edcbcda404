"""MixtureDA(method="map") with missing entries: EM over the component labels and the
missing coordinates. One component against QDA's EM with gaps, the densities of rows
with gaps against scipy.stats marginals of the observed coordinates, the monotone
observed-data objective, a fixed point of EM, the method that refuses gaps ("mcmc"),
and method="gibbs"'s data augmentation of the gaps against a closed-form marginal
posterior, the complete-data posterior and a small simulation-based calibration."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import stats
from scipy.special import logsumexp

import bayesgen as bg
from bayesgen.families.mixture import em
from tests.test_mixture_da import gibbs_rank, two_blob_class


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


@pytest.mark.parametrize("method", ["mcmc"])
def test_posterior_methods_refuse_gaps(gappy, method):
    X, y = gappy
    with pytest.raises(ValueError, match="missing entries"):
        bg.MixtureDA(n_components=1, method=method, draws=5, tune=5, chains=1).fit(X, y)


# ------------------------------------------------- data augmentation ("gibbs")
def test_gibbs_gaps_closed_form_marginal():
    """M = 1, full covariance, the second coordinate missing in a third of the rows and
    the first always observed. Under the NIW prior, (mu_1, Sigma_11) is a priori
    independent of the regression of x_2 on x_1, so its posterior is the
    one-dimensional NIW update of the first coordinate alone (all rows):
    E[mu_1] = (kappa0 m0_1 + n xbar_1) / (kappa0 + n) and
    E[Sigma_11] = Psi_n,11 / (nu0 + n - d - 1), Psi_n,11 = Psi0_11 + S_11
    + kappa0 n / (kappa0 + n) (xbar_1 - m0_1)^2. The Gibbs draws (missing
    coordinates drawn each sweep) must match within Monte Carlo error."""
    rng = np.random.default_rng(3)
    n, d = 60, 2
    cov = np.array([[1.0, 0.8], [0.8, 1.5]])
    X = np.vstack([rng.multivariate_normal([0.0, 1.0], cov, n),
                   rng.multivariate_normal([2.0, 0.0], cov, n)])
    y = np.repeat([0, 1], n)
    X[rng.random(2 * n) < 1 / 3, 1] = np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bg.ConvergenceWarning)
        fit = bg.MixtureDA(n_components=1, method="gibbs", draws=1500, tune=50, chains=2,
                           cov_dof=5.0, random_state=0).fit(X, y)
    post = fit.idata_.posterior
    mu1 = post["mu"].values[:, :, :, 0, 0].reshape(-1, 2)
    s11 = post["cov"].values[:, :, :, 0, 0, 0].reshape(-1, 2)
    for k in range(2):
        p = fit.component_prior_[k]
        x1 = X[y == k, 0]
        kappa0, m01, nu0, psi11 = p["kappa0"], p["m0"][0], p["nu0"], p["Psi0"][0, 0]
        xbar, S = x1.mean(), ((x1 - x1.mean()) ** 2).sum()
        m_n = (kappa0 * m01 + n * xbar) / (kappa0 + n)
        psi_n = psi11 + S + kappa0 * n / (kappa0 + n) * (xbar - m01) ** 2
        e_s11 = psi_n / (nu0 + n - d - 1)
        ess = 500  # conservative effective size of 3,000 correlated draws
        assert abs(mu1[:, k].mean() - m_n) < 5 * mu1[:, k].std() / np.sqrt(ess)
        assert abs(s11[:, k].mean() - e_s11) < 5 * s11[:, k].std() / np.sqrt(ess)


def test_gibbs_with_few_gaps_is_near_the_complete_data_posterior(gappy):
    """Two components in class 0, 2% of the entries removed: the relabeled posterior
    means and the predictive probabilities stay near those of the complete data (the
    gaps remove little information), and the rows with gaps get finite predictions."""

    X, y = two_blob_class(150, 0)
    X = np.column_stack([X, X[:, 0] + np.random.default_rng(1).normal(0, 1, X.shape[0])])
    Xg = _with_gaps(X, 0.02, 5)
    kw = {"n_components": [2, 1], "method": "gibbs", "draws": 300, "tune": 50, "chains": 2}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bg.ConvergenceWarning)
        full = bg.MixtureDA(random_state=0, **kw).fit(X, y)
        gaps = bg.MixtureDA(random_state=0, **kw).fit(Xg, y)
    np.testing.assert_allclose(gaps.means_, full.means_, atol=0.15)
    np.testing.assert_allclose(gaps.weights_, full.weights_, atol=0.03)
    np.testing.assert_allclose(gaps.covariances_, full.covariances_, atol=0.15)
    p_full, p_gaps = full.predict_proba(X), gaps.predict_proba(Xg)
    assert np.all(np.isfinite(p_gaps))
    rows = ~np.isnan(Xg).any(axis=1)
    assert np.abs(p_gaps[rows] - p_full[rows]).max() < 0.05
    assert gaps.score(Xg, y) == pytest.approx(full.score(X, y), abs=0.02)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bg.DataWarning)  # a Pareto k near 0.7
        loo = gaps.loo_log_joint(Xg, y)
    assert np.all(np.isfinite(loo.log_joint))


def test_gibbs_gaps_sbc_one_dimension_of_two():
    """Simulation-based calibration (Talts et al. 2018), small: theta from the prior
    (M = 2 components in 2-D, NIW), data from theta with 20% of the second coordinates
    missing, the rank of the true label-invariant mean of the second coordinate
    sum_m w_m mu_m2 (the coordinate the gaps touch) among the posterior draws: uniform
    ranks (chi-square over 4 bins at the 0.1% level: gross errors only).
    ``component_prior="qda"``: every component gets exactly the simulated prior."""

    d, M, n, draws = 2, 2, 30, 39
    nu0, kappa0 = 5.0, 0.5
    prior = {"mean_prior": [0.0, 0.0], "mean_strength": kappa0,
             "cov_target": [1.0 / (nu0 - d - 1)] * 2, "cov_dof": nu0, "cov_scale": 1.0}
    rng = np.random.default_rng(21)
    ranks = []
    for rep in range(40):
        w = rng.dirichlet(np.ones(M))
        covs = [stats.invwishart(nu0, np.eye(d)).rvs(random_state=rng) for _ in range(M)]
        mu = np.array([rng.multivariate_normal(np.zeros(d), c / kappa0) for c in covs])
        z = rng.choice(M, size=n, p=w)
        X0 = np.array([rng.multivariate_normal(mu[m], covs[m]) for m in z])
        X0[rng.random(n) < 0.2, 1] = np.nan
        ranks.append(gibbs_rank(X0, rng, M=M, draws=draws, prior=prior, seed=rep,
                                coord=1, truth=float(w @ mu[:, 1])))
    counts = np.bincount(np.asarray(ranks) * 4 // (draws + 1), minlength=4)
    assert stats.chisquare(counts).pvalue > 1e-3, counts
